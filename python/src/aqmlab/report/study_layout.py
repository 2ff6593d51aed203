"""How a study's axes map onto figures (docs/report.md, "Grouping").

- `study_axes`: the sweep's axes (name, fields, labels), in file order.
- `scheme_axis` / `load_axis`: the axis that varies the queue manager and the one that varies
  the offered load, recognised by the fields they set (then by name).
- `layout`: which axes split the figures (`group_by`: one figure per combination of their
  labels) and which become curves (the others); by default one figure per value of the
  non-scheme axes, one curve per queue scheme.
- `groups`, `curve_label`, `curve_colors`, `title`: the figures' combinations, legends and
  colors, one color per curve across every figure of a report.

Labels are the catalog's axis labels (strings); `rep` may be used like an axis.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")

import polars as pl
from matplotlib import colormaps

from aqmlab.scenario import ScenarioError

__all__ = [
    "REP",
    "Axis",
    "Layout",
    "curve_colors",
    "curve_label",
    "groups",
    "layout",
    "load_axis",
    "numeric_labels",
    "scheme_axis",
    "study_axes",
    "title",
]

REP = "rep"
# Axis names that say "this is the queue scheme" when no field does.
_SCHEME_NAMES = ("queue", "scheme", "aqm", "qm", "discipline")


@dataclass(frozen=True)
class Axis:
    name: str
    fields: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    """`group_by`: one figure per combination of these axes' labels; `curves`: one curve per
    combination of these (repetitions are pooled unless `rep` is in `group_by`)."""

    group_by: tuple[str, ...]
    curves: tuple[str, ...]


def study_axes(study) -> list[Axis]:
    """The study's axes in file order (from the catalog's `axes` table)."""
    rows = study.sql("SELECT name, fields, labels FROM axes ORDER BY position").to_dicts()
    return [
        Axis(r["name"], tuple(json.loads(r["fields"])), tuple(json.loads(r["labels"])))
        for r in rows
    ]


def _queue_field(field: str) -> tuple[bool, bool]:
    """(sets the bottleneck's queue, chooses the discipline: the whole table or its kind)."""
    parts = field.split(".")
    if parts[0] not in ("queue", "queue_reverse"):
        return False, False
    return True, len(parts) == 1 or parts[1:] == ["kind"]


def scheme_axis(axes: Sequence[Axis]) -> str | None:
    """The axis that varies the queue manager: one that sets whole `[queue]` tables or their
    `kind`, else one over other `[queue]` parameters (a buffer size), else one named
    queue/scheme/aqm; None if none is."""
    for pick in (lambda f: _queue_field(f)[1], lambda f: _queue_field(f)[0]):
        for a in axes:
            if a.fields and all(pick(f) for f in a.fields):
                return a.name
    for a in axes:
        if a.name.lower() in _SCHEME_NAMES:
            return a.name
    return None


def load_axis(axes: Sequence[Axis]) -> str | None:
    """The axis that varies the offered load: one whose fields all end in `load` (a Web
    source's `load =`), else one named `load`; None if neither."""
    for a in axes:
        if a.fields and all(f.rsplit(".", 1)[-1] == "load" for f in a.fields):
            return a.name
    for a in axes:
        if a.name.lower() == "load":
            return a.name
    return None


def numeric_labels(labels: Iterable[str]) -> list[float] | None:
    """The labels as numbers when they all are ("0.9", "0.98"), else None."""
    try:
        return [float(x) for x in labels]
    except ValueError:
        return None


def layout(study, group_by: Sequence[str] | None = None) -> Layout:
    """The figures' layout. Default: curves along the scheme axis (else the first axis), one
    figure per combination of the other axes. `group_by` names the axes that split figures
    (`rep` allowed); the remaining axes become curves. An unknown name is a one-line error."""
    names = [a.name for a in study_axes(study)]
    if group_by is None:
        scheme = scheme_axis(study_axes(study)) or (names[0] if names else None)
        chosen = tuple(n for n in names if n != scheme)
    else:
        allowed = [*names, REP]
        for g in group_by:
            if g not in allowed:
                raise ScenarioError(
                    f"--group-by {g}: not an axis of the study (axes: {', '.join(allowed)})"
                )
        chosen = tuple(dict.fromkeys(group_by))
    curves = tuple(n for n in names if n not in chosen)
    return Layout(group_by=chosen, curves=curves)


def _label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(str(row[k]) for k in keys)


def curve_label(row: Mapping[str, Any], curves: Sequence[str]) -> str:
    """A curve's legend entry: its labels along the curve axes, joined ("DropTail")."""
    return _label(row, curves) or "all runs"


def title(where: Mapping[str, Any]) -> str:
    """`load = 0.9, rep = 0`; empty for no constraint."""
    return ", ".join(f"{k} = {v}" for k, v in where.items())


def groups(runs: pl.DataFrame, group_by: Sequence[str]) -> list[dict[str, str]]:
    """The combinations of the `group_by` labels present in `runs`, in plan order."""
    if not group_by:
        return [{}]
    seen: dict[str, dict[str, str]] = {}
    for row in runs.select(list(group_by)).iter_rows(named=True):
        where = {k: str(v) for k, v in row.items()}
        seen.setdefault(_label(where, group_by), where)
    return list(seen.values())


def curve_colors(runs: pl.DataFrame, curves: Sequence[str]) -> dict[str, Any]:
    """One color per curve label, in plan order (tab10, tab20 beyond ten curves), so that a
    scheme keeps its color in every figure whatever the figure leaves out."""
    labels = list(dict.fromkeys(curve_label(r, curves) for r in runs.iter_rows(named=True)))
    cmap = colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {lab: cmap(i % cmap.N) for i, lab in enumerate(labels)}
