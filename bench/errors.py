"""The one error `make bench` reports: a sentence for the user, printed on one line."""


class BenchError(Exception):
    """A step that cannot go on (a build, a child process, a marker); the message names it."""
