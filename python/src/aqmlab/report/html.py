"""A self-contained HTML document: headings, text, tables and matplotlib figures, readable
offline. Figures are embedded as base64 PNG (no external file, no script, no network) and,
when the document is given a figure folder, also written there as PNG and SVG for papers.

Both the study report (`aqmlab report`) and the reproductions of the papers
(`aqmlab reproduce`) are assembled with this one class, so they look and behave alike.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure

from aqmlab.errors import ScenarioError, make_dirs, os_problem

__all__ = ["HtmlDocument", "format_cell"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 1240px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #446; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #bbc; }
table { border-collapse: collapse; margin: .8em 0 1.2em; font-size: 0.88em;
        display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ccd; padding: .25em .45em; text-align: right; }
th { background: #eef; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
td.num { white-space: nowrap; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: .3em; }
figure { display: inline-table; margin: .6em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #dde; }
figcaption { display: table-caption; caption-side: bottom; font-size: 0.86em; color: #444; }
pre { background: #f6f6fa; border: 1px solid #dde; padding: .6em; overflow-x: auto;
      font-size: 0.82em; }
p.note { color: #555; font-size: 0.9em; }
details summary { cursor: pointer; font-weight: 600; }
"""

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
        self._parts: list[str] = []
        self._names: set[str] = set()
        self.figure_files: list[Path] = []

    # -- text -------------------------------------------------------------------------
    def heading(self, text: str, level: int = 2) -> None:
        level = min(max(level, 1), 6)
        anchor = _slug(text).lower()
        self._parts.append(f'<h{level} id="{anchor}">{html.escape(text)}</h{level}>')

    def paragraph(self, text: str, note: bool = False) -> None:
        cls = ' class="note"' if note else ""
        self._parts.append(f"<p{cls}>{html.escape(text)}</p>")

    def bullets(self, items: Iterable[str]) -> None:
        li = "".join(f"<li>{html.escape(i)}</li>" for i in items)
        self._parts.append(f"<ul>{li}</ul>")

    def code(self, text: str, summary: str | None = None) -> None:
        """Preformatted text (a scenario, a sweep file); folded under `summary` if given."""
        block = f"<pre>{html.escape(text)}</pre>"
        if summary is not None:
            block = f"<details><summary>{html.escape(summary)}</summary>{block}</details>"
        self._parts.append(block)

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
        out = ["<table>"]
        if caption:
            out.append(f"<caption>{html.escape(caption)}</caption>")
        given = dict(align or {})
        out.append(
            "<tr>"
            + "".join(
                f'<th class="{given.get(c) or self._align(records, c)}">{html.escape(c)}</th>'
                for c in cols
            )
            + "</tr>"
        )
        for r in records:
            cells = []
            for c in cols:
                v = r.get(c)
                cls = given.get(c) or ("text" if isinstance(v, str) else "num")
                cells.append(f'<td class="{cls}">{html.escape(format_cell(v, digits))}</td>')
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</table>")
        self._parts.append("".join(out))

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
        data = base64.b64encode(png).decode("ascii")
        alt = html.escape(caption or name, quote=True)
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self._parts.append(
            f'<figure id="fig-{stem}"><img alt="{alt}" src="data:image/png;base64,{data}">'
            f"{cap}</figure>"
        )
        return stem

    # -- output -----------------------------------------------------------------------
    def render(self) -> str:
        body = "\n".join(self._parts)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head>\n"
            f"<body>\n<h1>{html.escape(self.title)}</h1>\n{body}\n</body></html>\n"
        )

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
