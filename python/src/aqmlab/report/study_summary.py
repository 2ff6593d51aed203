"""A study's numbers per cell (docs/report.md, "Summary table").

- `has_exchanges`: whether the finished runs measured Web request/response exchanges.
- `summary_metrics`: the metrics a report shows: Study A's columns, link utilization, loss rate
  and completed exchanges for Web traffic; goodput, loss and queueing delay otherwise.
- `cell_summary`: one row per cell (combination of axis labels), in plan order: the number of
  finished runs, and per metric the mean over the repetitions, its standard deviation
  (`<metric>_sd`) and the half-width of its 95 % Student t confidence interval
  (`<metric>_ci`), both null with a single repetition.
- `response_time_quantiles`: per cell, the median and 90th percentile of each run's response
  times, as a mean over the repetitions with its interval: the report's ranking.
- `failed_runs`: the failed runs with their errors.
- `format_mean` / `format_interval` / `interval_caption`: how the report prints them.

Every metric of `cell_summary` comes from the catalog's `runs` table (docs/sweeps.md); nothing
is recomputed. Intervals: `aqmlab.analysis.intervals`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from aqmlab.analysis import intervals
from aqmlab.report import study_layout

__all__ = [
    "QUANTILES",
    "Metric",
    "cell_summary",
    "failed_runs",
    "format_interval",
    "format_mean",
    "has_exchanges",
    "interval_caption",
    "response_time_quantiles",
    "summary_metrics",
]


@dataclass(frozen=True)
class Metric:
    column: str  # in `Study.runs()`, or one of the per-direction columns added below
    header: str  # table header, with its unit
    digits: int  # decimals shown
    scale: float = 1.0  # the column's unit to the header's (a mean and its interval alike)


# Link-level metrics every study has, in one convention (issue 36): rates in Mb/s, shares in
# %, delays in ms. The catalog keeps Study A's columns (`throughput_kBps`: 10³ bytes/s;
# fractions), which Study A's paper-facing table shows as they are.
_THROUGHPUT = Metric("throughput_kBps", "throughput (Mb/s)", 3, scale=8e-3)
_UTILIZATION = Metric("utilization", "utilization (%)", 1, scale=100.0)
_LOSS = Metric("loss_rate", "loss rate (%)", 2, scale=100.0)
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
    repetitions), then per metric its mean over the repetitions, `<column>_sd` (the sample
    standard deviation) and `<column>_ci` (the half-width of the 95 % Student t interval of
    the mean), both null with one repetition. NaN metrics (no exchange completed) stay NaN."""
    runs = _with_directional(study.runs())
    metrics = summary_metrics(runs) if metrics is None else metrics
    axes = [a.name for a in study_layout.study_axes(study)]
    aggs = [pl.len().alias("runs")]
    for m in metrics:
        x = pl.col(m.column).cast(pl.Float64) * m.scale
        aggs += [x.mean().alias(m.column), x.std().alias(f"{m.column}_sd")]
        aggs.append(x.count().alias(f"{m.column}_n"))
    table = runs.group_by(axes, maintain_order=True).agg(aggs) if axes else runs.select(aggs)
    return _with_intervals(table, [m.column for m in metrics])


def _with_intervals(table: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """`<column>_ci` from `<column>_sd` and the count `<column>_n` (dropped)."""
    cis = [
        pl.Series(
            f"{c}_ci",
            [
                intervals.half_width(sd, n)
                for sd, n in zip(table[f"{c}_sd"], table[f"{c}_n"], strict=True)
            ],
            dtype=pl.Float64,
        )
        for c in columns
    ]
    return table.with_columns(cis).drop([f"{c}_n" for c in columns])


# The ranking's columns: (column, header, quantile of a run's response times).
QUANTILES = (
    ("median_response_s", "median response (s)", 0.5),
    ("p90_response_s", "p90 response (s)", 0.9),
)


def response_time_quantiles(study, data: pl.DataFrame) -> pl.DataFrame:
    """One row per cell with response times, in plan order: the axis labels, `runs`, and per
    `QUANTILES` entry the mean over the repetitions of each run's quantile (linear
    interpolation; the median is Study A's `median_response_s`), `_sd` and `_ci` as in
    `cell_summary`. `data`: `study_plots.response_times(study)` (completed exchanges started
    after the warm-up)."""
    axes = [a.name for a in study_layout.study_axes(study)]
    rt = pl.col("response_time_s")
    per_run = data.group_by(["run_id", *axes], maintain_order=True).agg(
        rt.median().alias(QUANTILES[0][0]),
        *(rt.quantile(q, interpolation="linear").alias(c) for c, _, q in QUANTILES[1:]),
    )
    aggs = [pl.len().alias("runs")]
    for c, _, _ in QUANTILES:
        aggs += [
            pl.col(c).mean(),
            pl.col(c).std().alias(f"{c}_sd"),
            pl.col(c).count().alias(f"{c}_n"),
        ]
    table = per_run.group_by(axes, maintain_order=True).agg(aggs) if axes else per_run.select(aggs)
    return _with_intervals(table, [c for c, _, _ in QUANTILES])


def failed_runs(study) -> pl.DataFrame:
    """The failed runs: `run_id`, the axis labels, `rep` and `error`, in plan order."""
    cols = ["run_id", *study.axes, "error"]
    return study.runs(status="failed").select(cols)


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_mean(mean: float | None, half: float | None, digits: int) -> str:
    """`0.462 ± 0.031` (mean ± the interval's half-width), `0.462` without one, `–` for a
    missing value."""
    if _missing(mean):
        return "–"
    text = f"{mean:,.{digits}f}"
    if not _missing(half):
        text += f" ± {half:,.{digits}f}"
    return text


def format_interval(mean: float | None, half: float | None, digits: int) -> str:
    """`0.462 [0.431, 0.493]` (mean [low, high]), `0.462` without an interval, `–`."""
    if _missing(mean):
        return "–"
    if _missing(half):
        return f"{mean:,.{digits}f}"
    return f"{mean:,.{digits}f} [{mean - half:,.{digits}f}, {mean + half:,.{digits}f}]"


def interval_caption(runs: pl.Series, shown: str) -> str:
    """What a table's intervals are, given each row's number of repetitions `runs`: `shown`
    (how they are printed) and what they mean, or "no interval (1 repetition)" when no row
    has more than one."""
    if runs.len() == 0 or int(runs.max()) <= 1:
        return "no interval (1 repetition)"
    text = f"{shown} the 95 % confidence interval of the mean (Student t over the repetitions)"
    if int(runs.min()) <= 1:
        text += "; rows of a single repetition have none"
    return text
