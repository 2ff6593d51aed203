"""A self-contained HTML document: headings, text, tables and matplotlib figures, readable
offline. Figures are embedded as base64 PNG (no external file, no script, no network) and,
when the document is given a figure folder, also written there as PNG and SVG for papers.

Both the study report (`aqmlab report`) and the reproductions of the papers
(`aqmlab reproduce`) are assembled with this one class, so they look and behave alike.

The markup lives in Jinja templates (`templates/`: the page in document.html.j2, one macro
per kind of part in parts.html.j2, the style sheet in report.css, inlined); this class keeps
the parts as plain data (texts, formatted cells, encoded images) and renders them at the end,
with autoescaping: every text given here is escaped.
"""

from __future__ import annotations

import base64
import io
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure

from aqmlab.errors import ScenarioError, make_dirs, os_problem

__all__ = ["TEMPLATES", "HtmlDocument", "format_cell"]

# The report's templates, read from the installed package (a wheel carries them too).
TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("aqmlab.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)

_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def _slug(name: str) -> str:
    s = _SLUG.sub("_", name).strip("_.")
    return s or "figure"


def format_cell(value: Any, digits: int = 3) -> str:
    """A table cell as text: floats to `digits` significant decimals, None/NaN as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 10 ** (-digits)):
            return f"{value:.{digits}g}"
        return f"{value:.{digits}f}"
    return str(value)


class HtmlDocument:
    """Build a report part by part, then `write` it to one HTML file."""

    def __init__(self, title: str, figure_dir: str | os.PathLike | None = None) -> None:
        self.title = title
        self.figure_dir = Path(figure_dir) if figure_dir is not None else None
        self._parts: list[dict[str, Any]] = []  # one per call, `kind` names its macro
        self._names: set[str] = set()
        self.figure_files: list[Path] = []

    # -- text -------------------------------------------------------------------------
    def heading(self, text: str, level: int = 2) -> None:
        level = min(max(level, 1), 6)
        self._add("heading", text=text, level=level, anchor=_slug(text).lower())

    def paragraph(self, text: str, note: bool = False) -> None:
        self._add("paragraph", text=text, note=note)

    def bullets(self, items: Iterable[str]) -> None:
        self._add("bullets", items=list(items))

    def code(self, text: str, summary: str | None = None) -> None:
        """Preformatted text (a scenario, a sweep file); folded under `summary` if given."""
        self._add("code", text=text, summary=summary)

    # -- tables -----------------------------------------------------------------------
    def table(
        self,
        rows: Any,
        caption: str | None = None,
        columns: Sequence[str] | None = None,
        digits: int = 3,
        align: Mapping[str, str] | None = None,
    ) -> None:
        """A table from a polars DataFrame or a list of dicts (columns in first-seen order).
        Columns holding strings are left-aligned, numbers right-aligned; `align` maps a column
        to "text" or "num" to choose (numbers already formatted as text, "0.46 ± 0.03")."""
        if hasattr(rows, "to_dicts"):
            cols = list(columns or rows.columns)
            records = rows.to_dicts()
        else:
            records = list(rows)
            cols = list(columns) if columns else []
            if not columns:
                for r in records:
                    cols.extend(k for k in r if k not in cols)
        given = dict(align or {})
        header = [{"text": c, "align": given.get(c) or self._align(records, c)} for c in cols]
        body = [
            [
                {
                    "text": format_cell(r.get(c), digits),
                    "align": given.get(c) or ("text" if isinstance(r.get(c), str) else "num"),
                }
                for c in cols
            ]
            for r in records
        ]
        self._add("table", caption=caption, header=header, rows=body)

    @staticmethod
    def _align(records: list[dict], col: str) -> str:
        return "text" if any(isinstance(r.get(col), str) for r in records) else "num"

    # -- figures ----------------------------------------------------------------------
    def figure(self, fig: Figure, name: str, caption: str | None = None, dpi: int = 110) -> str:
        """Embed `fig` as a PNG; with a figure folder, also save NAME.png and NAME.svg there.
        Returns the (unique) file stem used."""
        stem = _slug(name)
        base, i = stem, 2
        while stem in self._names:
            stem = f"{base}_{i}"
            i += 1
        self._names.add(stem)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        png = buf.getvalue()
        if self.figure_dir is not None:
            make_dirs(self.figure_dir, f"figures {self.figure_dir}")
            (self.figure_dir / f"{stem}.png").write_bytes(png)
            # No date, and element ids salted by the name instead of a random uuid: the same
            # figure gives the same SVG file, so a report is reproducible byte for byte.
            with matplotlib.rc_context({"svg.hashsalt": stem}):
                fig.savefig(self.figure_dir / f"{stem}.svg", format="svg", metadata={"Date": None})
            self.figure_files += [self.figure_dir / f"{stem}.png", self.figure_dir / f"{stem}.svg"]
        png64 = base64.b64encode(png).decode("ascii")
        self._add("figure", stem=stem, alt=caption or name, png=png64, caption=caption)
        return stem

    # -- output -----------------------------------------------------------------------
    def _add(self, kind: str, **part: Any) -> None:
        self._parts.append({"kind": kind, **part})

    def render(self) -> str:
        page = TEMPLATES.get_template("document.html.j2")
        return page.render(title=self.title, parts=self._parts)

    def write(self, path: str | os.PathLike) -> Path:
        """Write the document atomically (a temporary file renamed into place)."""
        path = Path(path)
        make_dirs(path.parent, f"{path}")
        if path.is_dir():  # else the rename below fails with "Is a directory: '.x.tmp' -> 'x'"
            raise ScenarioError(f"{path}: is a directory; give the HTML file's path")
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            tmp.write_text(self.render(), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise ScenarioError(f"{path}: cannot write ({os_problem(e, path)})") from None
        return path
