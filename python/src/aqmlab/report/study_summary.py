"""A study's numbers per cell (docs/report.md, "Summary table").

- `has_exchanges`: whether the finished runs measured Web request/response exchanges.
- `summary_metrics`: the metrics a report shows: Study A's columns, link utilization, loss rate
  and completed exchanges for Web traffic; goodput, loss and queueing delay otherwise.
- `cell_summary`: one row per cell (combination of axis labels), in plan order: the number of
  finished runs, and per metric the mean over the repetitions and its standard deviation
  (`<metric>_sd`, null with a single repetition).
- `failed_runs`: the failed runs with their errors.

Every metric comes from the catalog's `runs` table (docs/sweeps.md); nothing is recomputed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from aqmlab.report import study_layout

__all__ = [
    "Metric",
    "cell_summary",
    "failed_runs",
    "format_mean",
    "has_exchanges",
    "summary_metrics",
]


@dataclass(frozen=True)
class Metric:
    column: str  # in `Study.runs()`, or one of the per-direction columns added below
    header: str  # table header, with its unit
    digits: int  # decimals shown


# Link-level metrics every study has.
_THROUGHPUT = Metric("throughput_kBps", "throughput (KB/s)", 1)
_UTILIZATION = Metric("utilization", "utilization", 3)
_LOSS = Metric("loss_rate", "loss rate", 4)
_MEAN_QUEUE = Metric("mean_queue_pkts", "mean queue (pkt)", 1)

WEB_METRICS = (
    _THROUGHPUT,
    _UTILIZATION,
    Metric("pct_dropped", "dropped (%)", 2),
    _LOSS,
    _MEAN_QUEUE,
    Metric("median_response_s", "median response (s)", 3),
    Metric("pct_le_1s", "≤ 1 s (%)", 1),
    Metric("pct_1_2s", "1–2 s (%)", 1),
    Metric("pct_2_3s", "2–3 s (%)", 1),
    Metric("pct_gt_3s", "> 3 s (%)", 1),
    Metric("exchanges_completed", "completed exchanges", 0),
)

OTHER_METRICS = (
    _THROUGHPUT,
    _UTILIZATION,
    Metric("tcp_goodput_mbps", "TCP goodput (Mb/s)", 3),
    _LOSS,
    _MEAN_QUEUE,
    Metric("queue_delay_p50_ms", "queueing delay p50 (ms)", 1),
    Metric("queue_delay_p99_ms", "queueing delay p99 (ms)", 1),
    Metric("udp.loss_probability", "UDP loss probability", 4),
)

# The core reports the queueing delay per bottleneck direction; these name the studied one.
_DIRECTIONAL = {"queue_delay_p50_ms": "delay_p50_ms", "queue_delay_p99_ms": "delay_p99_ms"}


def _with_directional(runs: pl.DataFrame) -> pl.DataFrame:
    """`runs` plus the per-direction columns of `_DIRECTIONAL`, taken from the run's studied
    direction (`direction` column)."""
    extra = []
    for name, suffix in _DIRECTIONAL.items():
        cols = {d: f"{d}.{suffix}" for d in ("forward", "reverse") if f"{d}.{suffix}" in runs}
        if not cols or "direction" not in runs.columns:
            continue
        expr = pl.lit(None, pl.Float64)
        for d, col in cols.items():
            expr = pl.when(pl.col("direction") == d).then(pl.col(col)).otherwise(expr)
        extra.append(expr.alias(name))
    return runs.with_columns(extra) if extra else runs


def has_exchanges(runs: pl.DataFrame) -> bool:
    """Whether some finished run completed Web request/response exchanges."""
    if "exchanges_completed" not in runs.columns:
        return False
    return bool((runs["exchanges_completed"].fill_null(0) > 0).any())


def summary_metrics(runs: pl.DataFrame) -> list[Metric]:
    """The metrics shown for these runs: the Web set when they have exchanges, else the
    goodput/loss/delay set; metrics no run has (UDP loss without UDP flows) are left out."""
    chosen = WEB_METRICS if has_exchanges(runs) else OTHER_METRICS
    runs = _with_directional(runs)
    return [
        m
        for m in chosen
        if m.column in runs.columns and runs[m.column].cast(pl.Float64).fill_nan(None).count()
    ]


def cell_summary(study, metrics: list[Metric] | None = None) -> pl.DataFrame:
    """One row per cell of the finished runs, in plan order: the axis labels, `runs` (finished
    repetitions), then per metric its mean over the repetitions and `<column>_sd`, the sample
    standard deviation (null with one repetition). NaN metrics (no exchange completed) stay
    NaN."""
    runs = _with_directional(study.runs())
    metrics = summary_metrics(runs) if metrics is None else metrics
    axes = [a.name for a in study_layout.study_axes(study)]
    aggs = [pl.len().alias("runs")]
    for m in metrics:
        x = pl.col(m.column).cast(pl.Float64)
        aggs += [x.mean().alias(m.column), x.std().alias(f"{m.column}_sd")]
    if not axes:
        return runs.select(aggs)
    return runs.group_by(axes, maintain_order=True).agg(aggs)


def failed_runs(study) -> pl.DataFrame:
    """The failed runs: `run_id`, the axis labels, `rep` and `error`, in plan order."""
    cols = ["run_id", *study.axes, "error"]
    return study.runs(status="failed").select(cols)


def format_mean(mean: float | None, sd: float | None, digits: int) -> str:
    """`0.462 ± 0.031`, `0.462` without a spread, `–` for a missing value."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    text = f"{mean:,.{digits}f}"
    if sd is not None and not math.isnan(sd):
        text += f" ± {sd:,.{digits}f}"
    return text
