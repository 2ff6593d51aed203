"""Paired comparisons of the study report (issue 36): every scheme of a study runs the same
seeds, so a scheme is compared with the baseline — and with its neighbour in the ranking —
by the differences of one metric repetition by repetition (`intervals.paired_interval`), not
by two separate intervals. A difference whose interval contains zero cannot be told apart at
the report's confidence level."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from aqmlab.analysis import intervals as iv

__all__ = ["paired_rows", "verdict"]


def verdict(i: iv.Interval, digits: int = 3) -> str:
    """`−0.120 [−0.150, −0.090]: lower`, or `… cannot be told apart` when 0 is inside."""
    if i.half_width is None:
        return f"{i.mean:+.{digits}f} (one repetition: no interval)"
    low, high = i.low, i.high
    shown = f"{i.mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"
    if low is not None and high is not None and low <= 0 <= high:
        return f"{shown}: cannot be told apart"
    return f"{shown}: {'lower' if i.mean < 0 else 'higher'}"


def _by_rep(per_run: pl.DataFrame, where: dict[str, Any], metric: str) -> dict[int, float]:
    cell = per_run.filter(*(pl.col(k) == v for k, v in where.items()))
    return dict(zip(cell["rep"].to_list(), cell[metric].to_list(), strict=True))


def paired_rows(
    per_run: pl.DataFrame,
    groups: Sequence[dict[str, Any]],
    ranked: Sequence[Sequence[dict[str, Any]]],
    metric: str,
    digits: int = 3,
) -> list[dict[str, Any]]:
    """Rows of the paired table: per group (`groups[g]`, the labels of the group-by axes), each
    curve of `ranked[g]` (its labels, best first) against the group's baseline — the first
    curve in plan order, `ranked[g]`'s smallest `plan` key — and against the curve ranked just
    above it. `per_run`: one row per run with the axis labels, `rep` and `metric`."""
    rows = []
    for where, curves in zip(groups, ranked, strict=True):
        if len(curves) < 2:
            continue
        baseline = min(curves, key=lambda c: c["plan"])
        name = _name(baseline)
        base = _by_rep(per_run, {**where, **baseline["labels"]}, metric)
        for k, c in enumerate(curves):
            if c is baseline:
                continue
            mine = _by_rep(per_run, {**where, **c["labels"]}, metric)
            row = {
                **where,
                "scheme": _name(c),
                "− baseline": f"{name}: {verdict(iv.paired_interval(mine, base), digits)}",
                "− the one ranked above": "(ranked first)",
            }
            if k > 0:
                above = curves[k - 1]
                theirs = _by_rep(per_run, {**where, **above["labels"]}, metric)
                row["− the one ranked above"] = (
                    f"{_name(above)}: {verdict(iv.paired_interval(mine, theirs), digits)}"
                )
            rows.append(row)
    return rows


def _name(curve: dict[str, Any]) -> str:
    return ", ".join(str(v) for v in curve["labels"].values()) or "(all)"
