"""Reading a reproduction's report.html back in tests: its tables by caption, its figures."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.figures: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"caption": "", "rows": []})
        elif tag == "caption":
            self._caption = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "figure":
            self.figures.append(dict(attrs).get("id", ""))

    def handle_endtag(self, tag):
        if tag == "caption" and self._caption is not None:
            self.tables[-1]["caption"] = "".join(self._caption).strip()
            self._caption = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        for buf in (self._cell, self._caption):
            if buf is not None:
                buf.append(data)


def read_report(path: Path) -> tuple[dict[str, list[dict[str, str]]], list[str]]:
    """({caption: [row as {header: cell}]}, [figure ids]) of a report.html."""
    p = _Tables()
    p.feed(path.read_text(encoding="utf-8"))
    tables = {}
    for t in p.tables:
        header, *body = t["rows"]
        tables[t["caption"]] = [dict(zip(header, r, strict=True)) for r in body]
    return tables, p.figures


def table(tables: dict, starts: str) -> list[dict[str, str]]:
    """The one table whose caption starts with `starts`."""
    found = [rows for cap, rows in tables.items() if cap.startswith(starts)]
    assert len(found) == 1, f"{len(found)} tables start with {starts!r}: {sorted(tables)}"
    return found[0]


def axis(sweep_doc: dict, name: str) -> dict:
    """The [[axis]] table of a sweep file named `name`."""
    return next(a for a in sweep_doc["axis"] if a["name"] == name)


def smoke_reproduction(study: str, tmp_path_factory):
    """`aqmlab reproduce STUDY --scale smoke` into a fresh folder: (outcome, tables by
    caption, figure ids)."""
    from aqmlab.reproduce import reproduce

    out = tmp_path_factory.mktemp(f"study-{study}")
    outcome = reproduce(study, "smoke", out, jobs=2, quiet=True)
    tables, figs = read_report(outcome.report)
    return outcome, tables, figs
