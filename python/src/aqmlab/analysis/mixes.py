"""Metrics of traffic mixes (Study D, docs/mixes.md): pure functions on summary dicts and
polars DataFrames.

- `tcp_goodput`: aggregate TCP goodput after warm-up (application bytes delivered in order,
  each byte once), total and per bottleneck direction.
- `udp_loss`: UDP CBR packets sent, delivered, lost and the loss probability.
- `loss_run_distribution`: runs of consecutive losses (of one flow, summed over the UDP flows
  or the TCP connections, or of the aggregate at a bottleneck queue) as counts and
  probabilities by run length.
- `queue_delay_distribution`: the bottleneck's queueing-delay histogram and CDF.
- `flow_throughputs`: per-flow throughput of TCP connections and UDP flows after warm-up.
- `jain_index`: Jain's fairness index of a set of throughputs.
- `mix_metrics` / `format_mix_metrics`: all of the above for one run, as a dict and as text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from aqmlab.analysis.directions import studied_direction

__all__ = [
    "LOSS_RUN_SCOPES",
    "flow_throughputs",
    "format_mix_metrics",
    "jain_index",
    "loss_run_distribution",
    "mix_metrics",
    "queue_delay_distribution",
    "tcp_goodput",
    "udp_loss",
]

LOSS_RUN_SCOPES = ("udp_flow", "udp_all", "tcp_flow", "tcp_all", "queue_forward", "queue_reverse")


def jain_index(values: Iterable[float]) -> float:
    """Jain, Chiu & Hawe (1984): (Σx)² / (n Σx²), in (0, 1]; 1 when all are equal, 1/n when
    one value takes everything. NaN for no values or all zero."""
    xs = [float(v) for v in values]
    if any(math.isnan(x) or x < 0 for x in xs):
        raise ValueError(f"jain_index: values must be ≥ 0 and not NaN, got {xs}")
    sq = sum(x * x for x in xs)
    if not xs or sq == 0.0:
        return math.nan
    return sum(xs) ** 2 / (len(xs) * sq)


def _core(summary: Mapping[str, Any]) -> Mapping[str, Any]:
    return summary.get("summary") or {}


def tcp_goodput(summary: Mapping[str, Any]) -> dict[str, float]:
    """`goodput_mbps` (all TCP connections, both directions), `goodput_forward_mbps`,
    `goodput_reverse_mbps` and `goodput_bytes`, over the measured time (after warm-up)."""
    c = _core(summary)
    nan = math.nan
    return {
        "goodput_mbps": c.get("tcp_goodput_mbps", nan),
        "goodput_forward_mbps": c.get("tcp_goodput_forward_mbps", nan),
        "goodput_reverse_mbps": c.get("tcp_goodput_reverse_mbps", nan),
        "goodput_bytes": c.get("tcp_goodput_bytes", 0),
    }


def udp_loss(summary: Mapping[str, Any]) -> dict[str, Any]:
    """UDP CBR totals after warm-up: `udp_flows`, `udp_sent`, `udp_delivered`, `udp_lost`,
    `udp_unresolved` (neither delivered nor seen lost when the run ended), `udp_loss`
    (lost / (delivered + lost); NaN without UDP packets), `udp_throughput_mbps` and the
    one-way delay `udp_delay_p50_ms` / `udp_delay_p99_ms`."""
    u = _core(summary).get("udp") or {}
    resolved = (u.get("delivered") or 0) + (u.get("lost") or 0)
    return {
        "udp_flows": u.get("flows", 0),
        "udp_sent": u.get("sent", 0),
        "udp_delivered": u.get("delivered", 0),
        "udp_lost": u.get("lost", 0),
        "udp_unresolved": u.get("unresolved", 0),
        "udp_loss": (u.get("lost") or 0) / resolved if resolved else math.nan,
        "udp_throughput_mbps": u.get("throughput_mbps", math.nan),
        "udp_delay_p50_ms": u.get("delay_p50_ms", math.nan) if resolved else math.nan,
        "udp_delay_p99_ms": u.get("delay_p99_ms", math.nan) if resolved else math.nan,
    }


def loss_run_distribution(
    loss_runs: pl.DataFrame, scope: str = "udp_all", flow: int | None = None
) -> pl.DataFrame:
    """Runs of consecutive losses of one scope (see `LOSS_RUN_SCOPES`; for "udp_flow" and
    "tcp_flow" all flows summed unless `flow` is given) as `run_length`, `count`,
    `probability` (share of runs) and `ccdf` (P(run ≥ length)). Run length 64 collects the
    longer runs."""
    if scope not in LOSS_RUN_SCOPES:
        raise ValueError(f"scope = {scope!r}: expected one of {', '.join(LOSS_RUN_SCOPES)}")
    df = loss_runs.filter(pl.col("scope") == scope)
    if flow is not None:
        df = df.filter(pl.col("flow") == flow)
    df = df.group_by("run_length").agg(pl.col("count").sum()).sort("run_length")
    total = df["count"].sum() if df.height else 0
    if not total:
        return pl.DataFrame(
            schema={
                "run_length": pl.UInt64,
                "count": pl.UInt64,
                "probability": pl.Float64,
                "ccdf": pl.Float64,
            }
        )
    return df.with_columns(
        (pl.col("count") / total).alias("probability"),
        ((total - pl.col("count").cum_sum() + pl.col("count")) / total).alias("ccdf"),
    )


def queue_delay_distribution(queue_delay: pl.DataFrame, direction: str) -> pl.DataFrame:
    """The bottleneck's post-warm-up queueing delays in `direction` ("forward"/"reverse"):
    `delay_ms` (bin lower edge), `width_ms`, `count`, `probability` and `cdf` (at the bin's
    upper edge)."""
    df = queue_delay.filter(pl.col("direction") == direction).sort("delay_ms")
    total = df["count"].sum() if df.height else 0
    if not total:
        return df.with_columns(
            pl.lit(None, pl.Float64).alias("probability"), pl.lit(None, pl.Float64).alias("cdf")
        )
    return df.with_columns(
        (pl.col("count") / total).alias("probability"),
        (pl.col("count").cum_sum() / total).alias("cdf"),
    )


def _measure_window(summary: Mapping[str, Any]) -> tuple[float, float]:
    scenario = summary.get("scenario") or {}
    warmup = float(scenario.get("warmup_s") or 0.0)
    return warmup, warmup + float(_core(summary).get("measured_s") or 0.0)


def flow_throughputs(
    summary: Mapping[str, Any],
    connections: pl.DataFrame | None,
    udp_flows: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per TCP connection and UDP flow: `transport`, `kind` (the traffic entry's
    kind), `source`, `flow`, `active_s` (time alive within the measurement window),
    `throughput_mbps` (application bytes delivered after warm-up / active_s; UDP: delivered
    packet bytes / the window) and `whole_window` (alive over all of it: the long-lived flows
    a fairness index compares)."""
    warmup, end = _measure_window(summary)
    kinds = [t.get("kind", "?") for t in (summary.get("scenario") or {}).get("traffic") or []]
    frames = []
    if connections is not None and connections.height:
        closed = pl.col("closed_s").fill_nan(end)
        lo = pl.max_horizontal(pl.col("start_s"), pl.lit(warmup))
        hi = pl.min_horizontal(closed, pl.lit(end))
        active = (hi - lo).clip(lower_bound=0.0)
        frames.append(
            connections.select(
                pl.lit("tcp").alias("transport"),
                pl.col("source")
                .map_elements(lambda s: kinds[s] if s < len(kinds) else "?", return_dtype=pl.Utf8)
                .alias("kind"),
                pl.col("source").cast(pl.Int64),
                pl.col("conn_id").cast(pl.Int64).alias("flow"),
                active.alias("active_s"),
                pl.when(active > 0)
                .then(pl.col("bytes_delivered_measured") * 8 / active / 1e6)
                .otherwise(None)
                .alias("throughput_mbps"),
                ((pl.col("start_s") <= warmup) & (closed >= end)).alias("whole_window"),
            )
        )
    if udp_flows is not None and udp_flows.height:
        span = end - warmup
        frames.append(
            udp_flows.select(
                pl.lit("udp").alias("transport"),
                pl.lit("udp_cbr").alias("kind"),
                pl.col("source").cast(pl.Int64),
                pl.col("flow").cast(pl.Int64),
                pl.lit(span).alias("active_s"),
                pl.col("throughput_mbps"),
                (pl.col("start_s") <= warmup).alias("whole_window"),
            )
        )
    if not frames:
        return pl.DataFrame(
            schema={
                "transport": pl.Utf8,
                "kind": pl.Utf8,
                "source": pl.Int64,
                "flow": pl.Int64,
                "active_s": pl.Float64,
                "throughput_mbps": pl.Float64,
                "whole_window": pl.Boolean,
            }
        )
    return pl.concat(frames, how="vertical_relaxed")


def _table(results, name: str) -> pl.DataFrame | None:
    try:
        return results[name]
    except KeyError:
        return None


def _run_shares(dist: pl.DataFrame) -> dict[str, float]:
    """Share of runs of length 1, 2 and ≥ 3, and the mean run length."""
    if not dist.height:
        return {"p1": math.nan, "p2": math.nan, "p3plus": math.nan, "mean": math.nan}
    n = dict(zip(dist["run_length"].to_list(), dist["count"].to_list(), strict=True))
    total = sum(n.values())
    mean = float((dist["run_length"] * dist["count"]).sum()) / total
    return {
        "p1": n.get(1, 0) / total,
        "p2": n.get(2, 0) / total,
        "p3plus": sum(c for length, c in n.items() if length >= 3) / total,
        "mean": mean,
    }


def mix_metrics(results, direction: str | None = None) -> dict[str, Any]:
    """The mix metrics of a `Results`: TCP goodput, UDP loss, consecutive-loss summaries
    (`runs_udp_*` over the UDP flows' own losses, `runs_tcp_*` over the TCP connections'
    drops at the bottleneck queues, `runs_queue_*` of the aggregate at the studied
    direction's queue: share of runs of length 1, 2, ≥ 3 and the mean), queueing
    delay percentiles, and Jain's index over the long-lived TCP flows (`jain_tcp`) and over
    the UDP flows (`jain_udp`)."""
    summary = results.summary
    d = direction or studied_direction(summary.get("scenario") or {})
    block = _core(summary).get(d) or {}
    row: dict[str, Any] = {"direction": d, **tcp_goodput(summary), **udp_loss(summary)}
    runs = _table(results, "loss_runs")
    for name, scope in (("udp", "udp_all"), ("tcp", "tcp_all"), ("queue", f"queue_{d}")):
        dist = loss_run_distribution(runs, scope) if runs is not None else pl.DataFrame()
        for k, v in _run_shares(dist).items():
            row[f"runs_{name}_{k}"] = v
    for q in ("mean", "p50", "p90", "p99", "max"):
        row[f"delay_{q}_ms"] = block.get(f"delay_{q}_ms", math.nan)
    flows = flow_throughputs(summary, _table(results, "connections"), _table(results, "udp_flows"))
    for transport in ("tcp", "udp"):
        x = flows.filter(
            (pl.col("transport") == transport)
            & pl.col("whole_window")
            & pl.col("throughput_mbps").is_not_null()
        )["throughput_mbps"]
        row[f"jain_{transport}"] = jain_index(x.to_list()) if x.len() else math.nan
        row[f"flows_{transport}"] = x.len()
    return row


_SHOWN = (
    ("TCP goodput", "goodput_mbps", "{:.3f} Mb/s"),
    ("UDP loss probability", "udp_loss", "{:.4f}"),
    ("UDP packets sent", "udp_sent", "{:,}"),
    ("UDP runs of 1 / 2 / >=3", ("runs_udp_p1", "runs_udp_p2", "runs_udp_p3plus"), "{:.3f}"),
    ("UDP mean run", "runs_udp_mean", "{:.2f} pkt"),
    ("TCP runs of 1 / 2 / >=3", ("runs_tcp_p1", "runs_tcp_p2", "runs_tcp_p3plus"), "{:.3f}"),
    ("TCP mean run", "runs_tcp_mean", "{:.2f} pkt"),
    (
        "queue runs of 1 / 2 / >=3",
        ("runs_queue_p1", "runs_queue_p2", "runs_queue_p3plus"),
        "{:.3f}",
    ),
    ("queue mean run", "runs_queue_mean", "{:.2f} pkt"),
    ("queueing delay p50/p99", ("delay_p50_ms", "delay_p99_ms"), "{:.1f} ms"),
    ("Jain index, long TCP flows", "jain_tcp", "{:.3f}"),
)


def _fmt(fmt: str, v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)


def format_mix_metrics(row: Mapping[str, Any]) -> str:
    """The row as `label  value` lines."""
    lines = [f"mix metrics (queue direction: {row.get('direction', '?')}, after warm-up)"]
    width = max(len(label) for label, _, _ in _SHOWN)
    for label, key, fmt in _SHOWN:
        keys = key if isinstance(key, tuple) else (key,)
        text = " / ".join(_fmt(fmt, row.get(k)) for k in keys)
        lines.append(f"  {label.ljust(width)}  {text}")
    return "\n".join(lines)
