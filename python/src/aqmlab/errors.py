"""The one-line error every user mistake becomes (`aqmlab.scenario.ScenarioError`), and the
words for the file-system problems behind them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = [
    "ScenarioError",
    "check_plain_name",
    "make_dirs",
    "one_line",
    "os_problem",
    "show_value",
]


class ScenarioError(ValueError):
    """A scenario problem, described in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def _file_in_the_way(path: Path) -> Path | None:
    """The first of `path`'s parents that exists and is not a directory."""
    for p in reversed(path.parents):
        if p.exists() and not p.is_dir():
            return p
    return None


def os_problem(error: OSError, path: str | os.PathLike | None = None) -> str:
    """What went wrong, in words, without the errno text ("[Errno 20] Not a directory: 'x'"),
    which names neither the argument nor what to do. With `path` (the file the operation
    was on), a parent of it that is a file is named: nothing can be under it."""
    if path is not None:
        blocker = _file_in_the_way(Path(path))
        if blocker is not None:
            return f"{blocker} is a file, not a directory"
    text = error.strerror or type(error).__name__
    return text[:1].lower() + text[1:]


def make_dirs(path: str | os.PathLike, field: str) -> Path:
    """`mkdir -p path`; a failure is one line naming `field` (e.g. ``--out DIR``) and the
    path in the way."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = p if p.exists() and not p.is_dir() else _file_in_the_way(p)
        if blocker is not None:
            raise ScenarioError(f"{field}: {blocker} is a file, not a directory") from None
        raise ScenarioError(f"{field}: cannot create directory {p} ({os_problem(e)})") from None
    return p


# A name that becomes one path component under a directory the program chooses (the study
# directory `results/<sweep name>`): no separator, no `..`, not hidden (hidden names are the
# temporary directories of runs in progress).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]*")


def check_plain_name(name: str, field: str, hint: str = "") -> str:
    """`name` if it is a plain file name (letters, digits, `-`, `_` and `.`, not starting
    with `.`); else a `ScenarioError` naming `field` (and ending with `hint`)."""
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
        raise ScenarioError(
            f"{field} = {json.dumps(name, ensure_ascii=False)}: expected a plain file name "
            f"(letters, digits, -, _ and ., not starting with .){' ' + hint if hint else ''}"
        )
    return name


def one_line(error: BaseException) -> str:
    """An exception as one line: its message with whitespace collapsed, prefixed by its type
    unless it is a plain value/runtime/OS error (a core panic arrives as RuntimeError). An
    OS error is "PATH: problem", not Python's "[Errno N] Problem: 'PATH'"."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        where = os.fsdecode(error.filename)
        if error.filename2 is not None:
            where += f" -> {os.fsdecode(error.filename2)}"
        return f"{where}: {os_problem(error)}"
    msg = " ".join(str(error).split()) or type(error).__name__
    if not isinstance(error, ValueError | RuntimeError | OSError):
        msg = f"{type(error).__name__}: {msg}"
    return msg


def show_value(value: Any) -> str:
    """A value as the user wrote it in TOML (strings quoted, booleans lower case)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
