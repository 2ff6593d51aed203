"""Pieces shared by the study reports: the paper's metric columns, rows of a metrics table
from a part's runs, CDF curves by labels, and the account of what was run."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from aqmlab.report.html import HtmlDocument
from aqmlab.reproduce.runs import Part, calibration_rows

__all__ = [
    "STUDY_A_COLUMNS",
    "Curve",
    "curve",
    "describe_runs",
    "metric_rows",
    "show_calibration",
]

Curve = tuple[str, np.ndarray, np.ndarray]

# Study A's table columns (Christiansen et al., App. B): catalog column -> header; the median
# is shown in milliseconds as in the paper.
STUDY_A_COLUMNS: tuple[tuple[str, str], ...] = (
    ("throughput_kBps", "KB/s"),
    ("pct_dropped", "% drops"),
    ("mean_queue_pkts", "mean queue"),
    ("median_response_ms", "median resp. (ms)"),
    ("pct_le_1s", "% ≤ 1 s"),
    ("pct_1_2s", "1 < % ≤ 2 s"),
    ("pct_2_3s", "2 < % ≤ 3 s"),
    ("pct_gt_3s", "% > 3 s"),
)


def metric_rows(
    part: Part,
    keys: Sequence[tuple[str, str]],
    columns: Sequence[tuple[str, str]] = STUDY_A_COLUMNS,
    where: Mapping[str, Sequence[str]] | None = None,
    extra: Callable[[str], Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per finished run of `part` (repetition 0): the axis labels named in `keys`
    ((axis, header) pairs, rows sorted by them in file order), then `columns`. `where` keeps
    only the given labels of some axes; `extra(run_id)` adds columns."""
    df = part.runs.filter(pl.col("rep") == 0)
    for axis, allowed in (where or {}).items():
        df = df.filter(pl.col(axis).is_in(list(allowed)))
    if "median_response_s" in df.columns:
        df = df.with_columns((pl.col("median_response_s") * 1000).alias("median_response_ms"))
    ranks = []
    for axis, _ in keys:
        order = {v: i for i, v in enumerate(part.axis_labels.get(axis, []))}
        ranks.append(pl.col(axis).replace_strict(order, default=len(order)).alias(f"_r_{axis}"))
    if ranks:
        df = df.with_columns(ranks).sort([f"_r_{a}" for a, _ in keys])
    rows = []
    for r in df.to_dicts():
        row: dict[str, Any] = {header: r.get(axis) for axis, header in keys}
        for col, header in columns:
            row[header] = r.get(col)
        if extra is not None:
            row.update(extra(r["run_id"]))
        rows.append(row)
    return rows


def curve(part: Part | None, label: str, xmax_s: float, **labels: str) -> list[Curve]:
    """[(label, x, F)] for the run of `part` with these axis labels, [] when there is none."""
    if part is None:
        return []
    rid = part.find(**labels)
    if rid is None:
        return []
    x, y = part.cdf(rid, xmax_s)
    return [(label, x, y)]


def show_calibration(
    doc: HtmlDocument,
    parts: Mapping[str, Part],
    note: str,
    paper: Mapping[str, float] | None = None,
    basis: str = "for 100 % (responses)",
) -> None:
    """The calibrations used (from the part that measured them, else any part). `paper` gives
    the paper's population for 100 % of the capacity by RTT kind (`[rtt] kind`), on the
    calibration row's `basis` column: the rows then show it and our ratio to it."""
    rows: dict[str, dict[str, Any]] = {}
    for p in parts.values():
        for r in calibration_rows(p.study.directory):
            if paper is not None and r["rtt"] in paper:
                r["paper: for 100 %"] = paper[r["rtt"]]
                r["ours / paper"] = r[basis] / paper[r["rtt"]]
            rows.setdefault(r["key"], r)
    doc.heading("Load calibration", 3)
    doc.paragraph(note)
    if rows:
        doc.table(list(rows.values()), caption="Calibrations (uncongested network)", digits=4)
    else:
        doc.paragraph("No calibration file found.", note=True)


def describe_runs(doc: HtmlDocument, parts: Mapping[str, Part], scale: str) -> None:
    """What was run: per part the runs, the simulated and the wall time."""
    rows = []
    for name, p in parts.items():
        df = p.runs
        sim = df["engine.sim_time_s"].sum() if "engine.sim_time_s" in df.columns else math.nan
        rows.append(
            {
                "part": name,
                "runs done": df.height,
                "failed": p.study.runs(status="failed").height,
                "simulated (s)": float(sim) if sim is not None else math.nan,
                "wall, summed over runs (s)": float(df["wall_time_s"].sum() or 0.0),
            }
        )
    doc.table(rows, caption=f"Runs at scale '{scale}'", digits=1)
