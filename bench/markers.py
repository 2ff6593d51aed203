"""The generated section of docs/performance.md: everything between its two marker comments,
and nothing else on the page, is `make bench`'s to rewrite."""

from __future__ import annotations

from pathlib import Path

from bench.errors import BenchError

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"


def replace(text: str, body: str) -> str:
    """`text` with what lies between the markers replaced by `body` (one newline after the
    begin marker and before the end marker; the markers and all outside them as they were).
    Refused, with a one-line reason, unless there is exactly one of each, in order."""
    nb, ne = text.count(BEGIN), text.count(END)
    if nb != 1 or ne != 1:
        raise BenchError(
            f"expected one {BEGIN} and one {END} marker, found {nb} and {ne}: "
            "put the pair where the generated section goes"
        )
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    if end < start:
        raise BenchError(f"{END} comes before {BEGIN}")
    return text[:start] + "\n" + body.strip("\n") + "\n" + text[end:]


def _replaced(path: Path, body: str) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    try:
        return text, replace(text, body)
    except BenchError as e:
        raise BenchError(f"{path}: {e}") from None


def check(path: Path) -> None:
    """Refuses, as `write` would, a file without its pair of markers; writes nothing."""
    _replaced(path, "")


def write(path: Path, body: str) -> bool:
    """Rewrites the section of the file at `path`; False when it already said exactly that."""
    text, new = _replaced(path, body)
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True
