"""Metrics of a run: pure functions on polars DataFrames and summary dicts (docs/analysis.md).

- `studied_direction`: the bottleneck direction that carries a Web source's responses.
- `retransmission_class`: none / SYN / FIN / data / combined, per exchange.
- `exchanges_after_warmup`: the exchanges the metrics count.
- `response_time_shares`: % of responses in ≤ 1 s, 1–2 s, 2–3 s, > 3 s.
- `run_metrics` / `metrics`: Study A's table row for one run; `metrics_table` for several.
- `format_metrics`: the row as aligned text.

The metrics of traffic mixes (TCP goodput, UDP loss, runs of consecutive losses, queueing
delay distribution, per-flow throughput, Jain's index) live in `aqmlab.analysis.mixes` and are
re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import polars as pl

from aqmlab.analysis.directions import studied_direction
from aqmlab.analysis.kinds import MIX_KINDS, WEB_KINDS
from aqmlab.analysis.mixes import (
    LOSS_RUN_SCOPES,
    flow_throughputs,
    format_mix_metrics,
    jain_index,
    loss_run_distribution,
    mix_metrics,
    queue_delay_distribution,
    tcp_goodput,
    udp_loss,
)

__all__ = [
    "LOSS_RUN_SCOPES",
    "MIX_KINDS",
    "RESPONSE_BINS",
    "RETX_CLASSES",
    "WEB_KINDS",
    "ecdf_at",
    "exchanges_after_warmup",
    "flow_throughputs",
    "format_metrics",
    "format_mix_metrics",
    "jain_index",
    "loss_run_distribution",
    "metrics",
    "metrics_table",
    "mix_metrics",
    "queue_delay_distribution",
    "response_time_shares",
    "retransmission_class",
    "run_metrics",
    "studied_direction",
    "tcp_goodput",
    "udp_loss",
    "with_retransmission_class",
]

RETX_CLASSES = ("none", "SYN", "FIN", "data", "combined")
# (label, lower bound exclusive, upper bound inclusive), seconds.
RESPONSE_BINS = (
    ("le_1s", -math.inf, 1.0),
    ("1_2s", 1.0, 2.0),
    ("2_3s", 2.0, 3.0),
    ("gt_3s", 3.0, math.inf),
)


def ecdf_at(values, x, total: int | None = None, presorted: bool = False) -> np.ndarray:
    """Empirical CDF of `values` evaluated at the points `x`: the share of values <= x, out of
    `total` when given (a class's share of all exchanges) or of the sample; NaN for an empty
    sample. Every response-time CDF and CCDF of the plots and reports comes from here."""
    v = np.asarray(values, dtype=float)
    v = v if presorted else np.sort(v)
    x = np.asarray(x, dtype=float)
    n = v.size if total is None else total
    if n == 0:
        return np.full_like(x, np.nan)
    return np.searchsorted(v, x, side="right") / n


def retransmission_class(exchanges: pl.DataFrame) -> pl.Series:
    """Per exchange, from its connection's retransmission totals: "none" when nothing was
    retransmitted, "SYN", "FIN" or "data" when exactly one kind was, "combined" when more
    than one kind was."""
    syn = pl.col("syn_retransmits") > 0
    fin = pl.col("fin_retransmits") > 0
    data = pl.col("data_retransmits") > 0
    kinds = syn.cast(pl.Int32) + fin.cast(pl.Int32) + data.cast(pl.Int32)
    expr = (
        pl.when(kinds == 0)
        .then(pl.lit("none"))
        .when(kinds > 1)
        .then(pl.lit("combined"))
        .when(syn)
        .then(pl.lit("SYN"))
        .when(fin)
        .then(pl.lit("FIN"))
        .otherwise(pl.lit("data"))
    )
    return exchanges.select(expr.alias("retx_class")).to_series()


def with_retransmission_class(exchanges: pl.DataFrame) -> pl.DataFrame:
    """`exchanges` with a `retx_class` column (see `retransmission_class`)."""
    return exchanges.with_columns(retransmission_class(exchanges))


def exchanges_after_warmup(exchanges: pl.DataFrame, warmup_s: float) -> pl.DataFrame:
    """The exchanges that started at or after the end of the warm-up."""
    return exchanges.filter(pl.col("start_s") >= warmup_s)


def _completed(exchanges: pl.DataFrame) -> pl.DataFrame:
    return exchanges.filter(pl.col("completed") & pl.col("response_time_s").is_not_nan())


def response_time_shares(response_times: Iterable[float] | pl.Series) -> dict[str, float]:
    """Percentages of the given (completed) response times in each of `RESPONSE_BINS`:
    ≤ 1 s, (1, 2] s, (2, 3] s, > 3 s. NaN for every bin when there are none."""
    s = response_times
    if not isinstance(s, pl.Series):
        s = pl.Series(list(s), dtype=pl.Float64)
    s = s.cast(pl.Float64).drop_nans().drop_nulls()
    n = s.len()
    out = {}
    for label, lo, hi in RESPONSE_BINS:
        k = int(((s > lo) & (s <= hi)).sum()) if n else 0
        out[f"pct_{label}"] = 100.0 * k / n if n else math.nan
    return out


def run_metrics(
    summary: Mapping[str, Any],
    exchanges: pl.DataFrame | None = None,
    direction: str | None = None,
) -> dict[str, Any]:
    """Study A's row for one run.

    `summary` is the content of summary.json (with `scenario` and the core's `summary`);
    `exchanges` the exchanges table (None: the response-time columns are NaN); `direction`
    the studied bottleneck direction (default: `studied_direction`).

    Columns: `direction`; `throughput_kBps` (10³ bytes/s transmitted on the bottleneck in the
    studied direction, after warm-up); `pct_dropped` (queue drops / packets arriving at the
    queue, %); `mean_queue_pkts`; `median_response_s`; `pct_le_1s`, `pct_1_2s`, `pct_2_3s`,
    `pct_gt_3s` (completed exchanges started after warm-up); `exchanges_completed`,
    `exchanges_unfinished` (started after warm-up); `utilization` (fraction of time the
    bottleneck transmitter was busy: on the wire, link-layer framing included);
    `utilization_ip` (IP bits sent / link rate: equal to `utilization` without framing);
    `loss_rate` (queue drops plus random link losses / packets arriving, a fraction).
    """
    scenario = summary.get("scenario") or {}
    core = summary.get("summary") or {}
    d = direction or studied_direction(scenario)
    if d not in ("forward", "reverse"):
        raise ValueError(f"direction = {d!r}: expected 'forward' or 'reverse'")
    block = core.get(d) or {}
    nan = math.nan
    measured = core.get("measured_s")
    if "throughput_mbps" in block:
        kBps = block["throughput_mbps"] * 1e6 / 8 / 1e3
    elif block.get("tx_bytes") is not None and measured:
        kBps = block["tx_bytes"] / measured / 1e3
    else:
        kBps = nan
    arrivals = block.get("arrivals") or 0
    drops = sum(block.get(k) or 0 for k in ("drops_early", "drops_forced", "drops_overflow"))
    pct_dropped = 100.0 * drops / arrivals if arrivals else nan
    loss = (drops + (block.get("link_losses") or 0)) / arrivals if arrivals else nan
    row: dict[str, Any] = {
        "direction": d,
        "throughput_kBps": kBps,
        "pct_dropped": pct_dropped,
        "mean_queue_pkts": block.get("mean_queue_pkts", nan),
        "median_response_s": nan,
        **{f"pct_{label}": nan for label, _, _ in RESPONSE_BINS},
        "exchanges_completed": None,
        "exchanges_unfinished": None,
        "utilization": block.get("utilization", nan),
        "utilization_ip": block.get("utilization_ip", block.get("utilization", nan)),
        "loss_rate": loss,
    }
    if exchanges is not None:
        ex = exchanges_after_warmup(exchanges, float(scenario.get("warmup_s") or 0.0))
        done = _completed(ex)
        rt = done["response_time_s"]
        row["median_response_s"] = float(rt.median()) if rt.len() else nan
        row.update(response_time_shares(rt))
        row["exchanges_completed"] = done.height
        row["exchanges_unfinished"] = ex.height - done.height
    return row


def metrics(results, direction: str | None = None) -> dict[str, Any]:
    """`run_metrics` of a `Results` (its summary and, when present, its exchanges table)."""
    try:
        ex = results["exchanges"]
    except KeyError:
        ex = None
    return run_metrics(results.summary, ex, direction)


def metrics_table(rows: Iterable[Mapping[str, Any]], labels: Iterable[str] | None = None):
    """Several `run_metrics` rows as one DataFrame (a `run` column first when `labels`)."""
    rows = [dict(r) for r in rows]
    if labels is not None:
        rows = [{"run": lab, **r} for lab, r in zip(labels, rows, strict=True)]
    return pl.DataFrame(rows, infer_schema_length=None)


_SHOWN = (
    ("throughput", "throughput_kBps", "{:.1f} KB/s"),
    ("dropped", "pct_dropped", "{:.2f} %"),
    ("mean queue", "mean_queue_pkts", "{:.1f} pkt"),
    ("median response", "median_response_s", "{:.3f} s"),
    ("responses <= 1 s", "pct_le_1s", "{:.1f} %"),
    ("1-2 s", "pct_1_2s", "{:.1f} %"),
    ("2-3 s", "pct_2_3s", "{:.1f} %"),
    ("> 3 s", "pct_gt_3s", "{:.1f} %"),
    ("exchanges completed", "exchanges_completed", "{:,}"),
    ("exchanges unfinished", "exchanges_unfinished", "{:,}"),
    ("utilization", "utilization", "{:.3f}"),
    ("utilization (IP)", "utilization_ip", "{:.3f}"),
    ("loss rate", "loss_rate", "{:.4f}"),
)


def format_metrics(row: Mapping[str, Any]) -> str:
    """The row as `label  value` lines (studied direction first)."""
    lines = [f"studied direction: {row.get('direction', '?')}"]
    width = max(len(label) for label, _, _ in _SHOWN)
    for label, key, fmt in _SHOWN:
        v = row.get(key)
        text = "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
        lines.append(f"  {label.ljust(width)}  {text}")
    return "\n".join(lines)
