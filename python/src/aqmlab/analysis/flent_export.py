"""A run's time series as a Flent data file (`aqmlab flent RUN`, docs/flent.md).

Flent (https://flent.org) keeps a test's results in a gzipped JSON document, format version 4:
`x_values` (a common time grid, seconds from the start, step `STEP_SIZE`), `results` (one list
of values per series, on that grid, `null` where undefined), `raw_values` (per series, records
with an absolute time `t`: Flent plots from these when they exist, and plots nothing at all
when there are none) and `metadata` (read back by Flent as its settings: `NAME` picks the test
definition whose plots apply).

The file claims Flent's `rrul_be_nflows` test (N upload and M download TCP flows and a ping),
the one test whose series hold any number of flows in both directions:

- Flent's client is the left side of the dumbbell: upload = forward (left -> right), download
  = reverse (right -> left).
- With a `tcp_state` table (`[trace.tcp]`): one series per traced connection, in the direction
  its data travel, `TCP upload BE::i` / `TCP download BE::j` (Mbit/s: the data sender's
  acknowledged bytes per grid step); their raw records carry Flent's socket-statistics keys
  `tcp_rtt` (srtt, ms), `tcp_rtt_var` (ms) and `tcp_cwnd` (segments), so Flent's `tcp_rtt` and
  `tcp_cwnd` plots work.
- Without one: `TCP upload BE::1` / `TCP download BE::1` are aggregates, the bottleneck's IP
  throughput per direction (every packet: data, ACKs, UDP), not one flow.
- `Ping (ms) ICMP` (and `Ping (ms) UDP BE`, ...): with probe flows (`kind = "ping"`, the
  `ping_probes` table), each flow's probes as Flent's ping runner records them (one raw record
  per answered probe, at its send time; on the grid the mean of the probes sent in each step):
  what a sparse flow meets, which through FQ-CoDel or CAKE is far less than the backlog. The
  first probe flow is the ICMP ping, the second the UDP probe. Without probe flows, a virtual
  ping: a base RTT plus the queueing delay of both bottleneck queues, each the mean backlog
  over its queue window divided by the link rate (what a FIFO would give any packet).
- Flent's computed series (`TCP upload sum`, `... avg`, `TCP totals`, `Ping (ms) avg`) are
  written as Flent would compute them (sum / mean of the defined values at each x).
- `qdisc_stats_forward` / `_reverse`: the bottleneck queues as raw records of Flent's `tc`
  runner (backlog, delay, drops, marks) at the tables' own times, for its qdisc plots.

Every grid value is the time average of its source over the grid step ending at that x
(Flent's own throughput values are the rate over the interval before their time). Nothing
here reads the clock: `TIME` is when the run was written (its `summary.json`), and the gzip
header carries no time, so the same run directory always gives the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aqmlab.analysis.directions import first_hop, studied_direction
from aqmlab.scenario.direction_names import rate_mbps

FLENT_TEST = "rrul_be_nflows"
FLENT_FORMAT_VERSION = 4
FLENT_SUFFIX = ".flent.gz"
DEFAULT_STEP_S = 0.2  # Flent's own default STEP_SIZE
DEFAULT_MAX_FLOWS = 100  # per-flow series at most (Flent draws one line each)

UPLOAD = "TCP upload BE"  # forward: left -> right
DOWNLOAD = "TCP download BE"  # reverse: right -> left
PING = "Ping (ms) ICMP"
QDISC = "qdisc_stats_"  # + forward / reverse: Flent's qdisc_stats.inc series
COMPUTED = {
    "TCP upload sum": ("sum", f"{UPLOAD}::"),
    "TCP upload avg": ("mean", f"{UPLOAD}::"),
    "TCP download sum": ("sum", f"{DOWNLOAD}::"),
    "TCP download avg": ("mean", f"{DOWNLOAD}::"),
    "TCP totals": ("sum", None),  # both directions' flows
    "Ping (ms) avg": ("mean", "Ping (ms) "),
}
DIRECTION_NAME = {"forward": UPLOAD, "reverse": DOWNLOAD}
DIGITS = 6  # values are rounded to 1e-6 of their unit (Mbit/s, ms, segments)


@dataclass(frozen=True)
class Exported:
    path: Path
    mode: str  # "per_flow" or "aggregate"
    upload_streams: int
    download_streams: int
    points: int
    notes: list[str]


# --- the grid and resampling ---------------------------------------------------------------


def grid(length_s: float, step_s: float) -> np.ndarray:
    """`0, step, 2·step, ...` up to the first multiple of step at or past `length_s`."""
    if not step_s > 0:
        raise ValueError(f"step {step_s}: expected a positive number of seconds")
    n = math.ceil(length_s / step_s - 1e-9)
    if n > 10**6:
        raise ValueError(
            f"step {step_s} s over {length_s} s makes {n} points; Flent refuses more than 10^6"
        )
    return np.round(np.arange(n + 1) * step_s, 9)


def window_means(
    t_end: np.ndarray, values: np.ndarray, window_s: float, x: np.ndarray, step_s: float
) -> list[float | None]:
    """Time average over each grid cell `(x - step, x]` of a series whose sample `i` holds
    over `(max(t_end[i-1], t_end[i] - window_s), t_end[i]]` (the record tables' windows end
    at `t_s`); `None` where no sample covers the cell. NaN samples count as gaps."""
    order = np.argsort(t_end, kind="stable")
    t_end = np.asarray(t_end, dtype=float)[order]
    values = np.asarray(values, dtype=float)[order]
    prev = np.concatenate(([0.0], t_end[:-1]))
    start = np.maximum(prev, t_end - window_s)
    ok = np.isfinite(values) & (t_end > start)
    start, end, v = start[ok], t_end[ok], values[ok]
    if len(v) == 0:
        return [None] * len(x)
    # The integral of the value and of the coverage, both continuous and piecewise linear,
    # known at every window edge: interpolation between edges is exact.
    pts = np.empty(2 * len(v))
    pts[0::2], pts[1::2] = start, end
    area = np.zeros(2 * len(v))
    cover = np.zeros(2 * len(v))
    widths = end - start
    cum_area = np.cumsum(v * widths)
    cum_cover = np.cumsum(widths)
    area[1::2] = cum_area
    area[2::2] = cum_area[:-1]
    cover[1::2] = cum_cover
    cover[2::2] = cum_cover[:-1]
    lo = x - step_s
    d_area = np.interp(x, pts, area) - np.interp(lo, pts, area)
    d_cover = np.interp(x, pts, cover) - np.interp(lo, pts, cover)
    return [float(a / c) if c > 1e-12 else None for a, c in zip(d_area, d_cover, strict=True)]


def cumulative_rate_mbps(
    t: np.ndarray, cum_bytes: np.ndarray, x: np.ndarray, step_s: float
) -> list[float | None]:
    """Mbit/s over each grid cell `(x - step, x]` from a cumulative byte count sampled at
    times `t` (linear between samples): the bytes counted in the part of the cell the samples
    span, over that part's length; `None` outside the samples' span."""
    order = np.argsort(t, kind="stable")
    t = np.asarray(t, dtype=float)[order]
    b = np.asarray(cum_bytes, dtype=float)[order]
    if len(t) < 2 or t[-1] <= t[0]:
        return [None] * len(x)
    lo = np.clip(x - step_s, t[0], t[-1])
    hi = np.clip(x, t[0], t[-1])
    span = hi - lo
    delta = np.interp(hi, t, b) - np.interp(lo, t, b)
    return [float(d * 8 / s / 1e6) if s > 1e-12 else None for d, s in zip(delta, span, strict=True)]


def _at_or_before(t: np.ndarray, values: np.ndarray, when: np.ndarray) -> np.ndarray:
    """The sample at or before each time (the first sample before it starts)."""
    i = np.searchsorted(t, when, side="right") - 1
    return values[np.clip(i, 0, len(values) - 1)]


def _r(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else round(v, DIGITS)


# --- the run -------------------------------------------------------------------------------


# The columns each table must keep (`measure.columns` may drop others) for its series.
NEEDED = {
    "bottleneck": ("t_s", "direction", "throughput_mbps"),
    "queue": ("t_s", "direction", "mean_bytes", "mean_pkts"),
    "tcp_state": ("t_s", "conn_id", "side", "snd_una"),
}


def _table(run: Path, name: str, notes: list[str]) -> pl.DataFrame | None:
    """A run's table, or None when it is absent or lacks a column its series need (noted)."""
    p = run / f"{name}.parquet"
    if not p.is_file():
        return None
    table = pl.read_parquet(p)
    missing = [c for c in NEEDED.get(name, ()) if c not in table.columns]
    if missing:
        notes.append(f"{name}.parquet lacks {', '.join(missing)}: not used")
        return None
    return table


def _measure(scenario: Mapping[str, Any]) -> tuple[float, float]:
    m = scenario.get("measure") or {}
    return float(m.get("interval_s", 1.0)), float(m.get("queue_window_ms", 100.0)) / 1000


def _overhead_bytes(framing: Any) -> float:
    """Link-layer bytes per packet beyond the IP packet (docs/network.md, framing); the
    Ethernet minimum frame is not applied (the queue table has no packet sizes)."""
    if framing == "ethernet":
        return 38.0
    if isinstance(framing, Mapping):
        return float(framing.get("overhead_bytes", 0))
    return 0.0


def _rate_mbps(topology: Mapping[str, Any], direction: str, t: np.ndarray) -> np.ndarray:
    """The bottleneck's rate in `direction` at each time, capacity steps applied."""
    return np.array([rate_mbps(topology, direction, float(x)) for x in t], dtype=float)


def propagation_rtt_ms(topology: Mapping[str, Any]) -> float:
    """Client access link + bottleneck + server access link, there and back."""
    return 2 * (
        2 * float(topology.get("access_delay_ms", 0)) + float(topology["bottleneck_delay_ms"])
    )


def ping_base_rtt_ms(
    scenario: Mapping[str, Any], connections: pl.DataFrame | None
) -> tuple[float, str]:
    """The base RTT of the virtual ping, and how it was found: the median of the
    connections' base RTTs (propagation + their delay-box RTT) when the run has connections;
    else the propagation RTT, plus the `[rtt]` delay when it is constant."""
    if connections is not None and connections.height and "base_rtt_ms" in connections.columns:
        return float(connections["base_rtt_ms"].median()), "median base_rtt_ms of the connections"
    base = propagation_rtt_ms(scenario["topology"])
    rtt = scenario.get("rtt") or {}
    if rtt.get("kind") == "constant" and "rtt_ms" in rtt:
        return base + float(rtt["rtt_ms"]), "propagation RTT + the constant [rtt] delay"
    return base, "propagation RTT of the topology (no connections recorded)"


# Flent's names of the probe series of rrul_be_nflows, in the order of the probe flows: the
# first `ping` flow is its ICMP ping, the second its UDP probe, any further one numbered on.
PROBE_NAMES = (PING, "Ping (ms) UDP BE")


def probe_name(i: int) -> str:
    return PROBE_NAMES[i] if i < len(PROBE_NAMES) else f"Ping (ms) UDP BE{i}"


def probe_series(probes: pl.DataFrame, x: np.ndarray, step_s: float, t0_epoch: float):
    """One Flent series per probe flow of the `ping_probes` table (source, then flow order):
    on the grid, the mean round trip of the probes answered in each step `(x - step, x]` by
    their send time (None where none was); raw records, one per answered probe at its send
    time, as Flent's ping runner writes them. Yields (name, values, raw records, description)."""
    answered = probes.filter(pl.col("rtt_ms").is_not_nan())
    flows = probes.select("source", "flow").unique().sort("source", "flow").rows()
    for i, (source, flow) in enumerate(flows):
        mine = answered.filter((pl.col("source") == source) & (pl.col("flow") == flow)).sort("t_s")
        t = mine["t_s"].to_numpy().astype(float)
        rtt = mine["rtt_ms"].to_numpy().astype(float)
        cell = np.ceil(np.round(t / step_s, 9)).astype(np.int64)  # the step (x - step, x] holding t
        values: list[float | None] = []
        for k in range(len(x)):
            inside = rtt[cell == k]
            values.append(float(inside.mean()) if len(inside) else None)
        raw = [
            {"t": round(t0_epoch + float(a), 6), "val": round(float(b), DIGITS)}
            for a, b in zip(t, rtt, strict=True)
        ]
        sent = probes.filter((pl.col("source") == source) & (pl.col("flow") == flow)).height
        what = (
            f"probe flow {flow} of traffic[{source}] (kind = ping): {len(raw)} of {sent} probes "
            "answered; each grid value the mean round trip of the probes sent in its step"
        )
        yield probe_name(i), values, raw, what


def queue_windows(queue: pl.DataFrame, scenario: Mapping[str, Any], direction: str) -> pl.DataFrame:
    """One bottleneck direction's queue windows in time order, with `delay_ms`: the mean
    backlog (IP bytes + framing bytes per packet) over the link rate at the window's middle,
    the queueing delay of a FIFO."""
    topo = scenario["topology"]
    _, window_s = _measure(scenario)
    q = queue.filter(pl.col("direction") == direction).sort("t_s")
    t = q["t_s"].to_numpy().astype(float)
    wire = q["mean_bytes"].to_numpy().astype(float) + q["mean_pkts"].to_numpy().astype(
        float
    ) * _overhead_bytes(topo.get("bottleneck_framing"))
    delay = wire * 8 / (_rate_mbps(topo, direction, t - window_s / 2) * 1e6) * 1e3
    return q.with_columns(pl.Series("delay_ms", delay, dtype=pl.Float64))


def queue_delay_ms(
    queue: pl.DataFrame, scenario: Mapping[str, Any], direction: str, x: np.ndarray, step_s: float
) -> list[float | None]:
    """Queueing delay of one bottleneck direction on the grid (`queue_windows`' delay,
    averaged over each step)."""
    _, window_s = _measure(scenario)
    q = queue_windows(queue, scenario, direction)
    if q.height == 0:
        return [None] * len(x)
    return window_means(q["t_s"].to_numpy(), q["delay_ms"].to_numpy(), window_s, x, step_s)


def qdisc_records(
    queue: pl.DataFrame | None,
    bottleneck: pl.DataFrame | None,
    scenario: Mapping[str, Any],
    direction: str,
    t0_epoch: float,
) -> list[dict[str, Any]]:
    """Flent's `tc` raw records for one bottleneck queue, at the tables' own times: per queue
    window `backlog_bytes`, `backlog_pkts` (window means) and `delay` (ms, `queue_windows`);
    per bottleneck interval `dropped` (all causes) and `ecn_mark` (events in the interval)."""
    records: list[tuple[float, int, dict[str, Any]]] = []
    if queue is not None:
        q = queue_windows(queue, scenario, direction)
        for t, b, p, d in zip(
            q["t_s"], q["mean_bytes"], q["mean_pkts"], q["delay_ms"], strict=True
        ):
            rec = {"backlog_bytes": _r(b), "backlog_pkts": _r(p), "delay": _r(d)}
            records.append((float(t), 0, rec))
    if bottleneck is not None:
        b = bottleneck.filter(pl.col("direction") == direction).sort("t_s")
        drop_cols = [c for c in ("drops_early", "drops_forced", "drops_overflow") if c in b.columns]
        if drop_cols:
            b = b.with_columns(pl.sum_horizontal(drop_cols).alias("_dropped"))
            marks = b["marks"] if "marks" in b.columns else pl.Series([0] * b.height)
            for t, dr, mk in zip(b["t_s"], b["_dropped"], marks, strict=True):
                records.append((float(t), 1, {"dropped": float(dr), "ecn_mark": float(mk)}))
    records.sort(key=lambda r: (r[0], r[1]))
    return [{"t": round(t0_epoch + t, 6), **rec} for t, _, rec in records]


@dataclass
class _Flow:
    conn_id: int
    direction: str
    side: str
    mss: float
    base_rtt_ms: float | None
    bytes_sent: float
    t: np.ndarray
    rows: pl.DataFrame


def _mss(scenario: Mapping[str, Any], source: int | None) -> float:
    tcp = scenario.get("tcp") or {}
    traffic = scenario.get("traffic") or []
    if source is not None and 0 <= source < len(traffic):
        own = traffic[source].get("tcp")
        if isinstance(own, Mapping) and "mss" in own:
            return float(own["mss"])
    return float(tcp.get("mss", 1460))


def tcp_flows(
    tcp_state: pl.DataFrame, connections: pl.DataFrame | None, scenario: Mapping[str, Any]
) -> tuple[list[_Flow], list[str]]:
    """One flow per traced connection: its data sender (the side whose `snd_una` grew the
    most), the direction its data travel, its rows in time order. Also notes on guesses."""
    notes: list[str] = []
    left_hosts = int(scenario["topology"].get("left_hosts", 0))
    conns: dict[int, dict[str, Any]] = {}
    if connections is not None:
        for row in connections.iter_rows(named=True):
            conns[int(row["conn_id"])] = row
    fallback = studied_direction(scenario)
    flows: list[_Flow] = []
    unknown: list[int] = []
    for (cid,), rows in sorted(
        tcp_state.sort("t_s").partition_by("conn_id", as_dict=True, maintain_order=True).items()
    ):
        grown = {
            side: float(part["snd_una"].max() - part["snd_una"].min())
            for (side,), part in rows.partition_by("side", as_dict=True).items()
        }
        sender = max(sorted(grown), key=lambda s: grown[s])
        part = rows.filter(pl.col("side") == sender).sort("t_s")
        conn = conns.get(int(cid))
        if conn is not None and conn.get("client_side") in ("left", "right"):
            sender_left = (sender == "client") == (conn["client_side"] == "left")
            direction = "forward" if sender_left else "reverse"
        elif conn is not None and conn.get("client_host") is not None:
            host = conn["client_host"] if sender == "client" else conn["server_host"]
            direction = "forward" if int(host) < left_hosts else "reverse"
        else:
            direction = fallback
            unknown.append(int(cid))
        base = conn.get("base_rtt_ms") if conn else None
        source = conn.get("source") if conn else None
        t = part["t_s"].to_numpy().astype(float)
        una = part["snd_una"].to_numpy().astype(float)
        start = conn.get("start_s") if conn else None
        if start is not None and una[0] > 0 and float(start) < t[0]:
            # The rows start after the connection opened (a trace window starting later):
            # snd_una counts from 0 at the connection's start.
            first = part.head(1).with_columns(
                pl.lit(float(start)).alias("t_s"),
                pl.lit(0, dtype=part["snd_una"].dtype).alias("snd_una"),
            )
            part = pl.concat([first, part])
            t = part["t_s"].to_numpy().astype(float)
        flows.append(
            _Flow(
                conn_id=int(cid),
                direction=direction,
                side=sender,
                mss=_mss(scenario, None if source is None else int(source)),
                base_rtt_ms=None if base is None else float(base),
                bytes_sent=grown[sender],
                t=t,
                rows=part,
            )
        )
    if unknown:
        shown = ", ".join(map(str, unknown[:10])) + (", ..." if len(unknown) > 10 else "")
        notes.append(
            f"{len(unknown)} connection(s) not in connections.parquet ({shown}): their data "
            f"taken to go {fallback} (the studied direction)"
        )
    return flows, notes


def _flow_series(f: _Flow, x: np.ndarray, step_s: float):
    """One traced connection's Flent series: its throughput on the grid, its SERIES_META,
    the extra keys of its raw records (by grid index) and its description."""
    una = f.rows["snd_una"].to_numpy().astype(float)
    rate = cumulative_rate_mbps(f.t, una, x, step_s)
    # Flent's socket-statistics keys (ss: rtt and rttvar in ms, cwnd in segments), the
    # sender's state at each grid time.
    stats: dict[str, np.ndarray] = {}
    for col, key, scale in (
        ("srtt_ms", "tcp_rtt", 1.0),
        ("rttvar_ms", "tcp_rtt_var", 1.0),
        ("cwnd", "tcp_cwnd", 1.0 / f.mss),
    ):
        if col in f.rows.columns:
            vals = f.rows[col].to_numpy().astype(float) * scale
            stats[key] = _at_or_before(f.t, vals, x)
    # SRTT and RTTVAR are 0 before the first RTT sample: no value then.
    known = stats["tcp_rtt"] > 0 if "tcp_rtt" in stats else np.ones(len(x), dtype=bool)

    def extra(i: int) -> dict[str, Any]:
        return {k: _r(float(v[i])) for k, v in stats.items() if k == "tcp_cwnd" or known[i]}

    meta: dict[str, Any] = {
        "UNITS": "Mbits/s",
        "AQMLAB_CONN_ID": f.conn_id,
        "AQMLAB_SENDER": f.side,
        "AQMLAB_DIRECTION": f.direction,
        "AQMLAB_MSS": f.mss,
    }
    if f.base_rtt_ms is not None:
        meta["AQMLAB_BASE_RTT_MS"] = round(f.base_rtt_ms, DIGITS)
    what = (
        f"connection {f.conn_id} ({f.side} sends, {f.direction}): delta snd_una / delta t of "
        "the sender, tcp_state.parquet"
    )
    return rate, meta, extra, what


# --- the document --------------------------------------------------------------------------


def parse_time(text: str) -> _dt.datetime:
    """An ISO 8601 time (`2026-01-31T12:00:00`, `...Z`, `...+01:00`); without a zone, UTC."""
    try:
        t = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"time {text!r}: expected ISO 8601, e.g. 2026-01-31T12:00:00Z") from None
    return t if t.tzinfo else t.replace(tzinfo=_dt.UTC)


def _run_time(run: Path, summary: Mapping[str, Any]) -> _dt.datetime:
    """When the run started: its summary's modification time less its wall time, to the
    second (no clock is read, so exporting the same run twice gives the same file)."""
    written = (run / "summary.json").stat().st_mtime
    start = math.floor(written - float(summary.get("wall_time_s") or 0.0))
    return _dt.datetime.fromtimestamp(start, _dt.UTC)


def _flent_time(t: _dt.datetime) -> str:
    return t.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _computed(results: Mapping[str, list[float | None]], how: str, prefix: str | None, n: int):
    if prefix is None:
        keys = [k for k in results if k.startswith((f"{UPLOAD}::", f"{DOWNLOAD}::"))]
    else:
        keys = [k for k in results if k.startswith(prefix) and k not in COMPUTED]
    out: list[float | None] = []
    for i in range(n):
        vals = [results[k][i] for k in keys if results[k][i] is not None]
        if not vals:
            out.append(None)
        elif how == "sum":
            out.append(_r(math.fsum(vals)))
        else:
            out.append(_r(math.fsum(vals) / len(vals)))
    return out, keys


def _sum_series(series: list[list[float | None]], n: int) -> list[float | None]:
    """The sum at each grid point of the series defined there (None where none is)."""
    out: list[float | None] = []
    for i in range(n):
        vals = [v[i] for v in series if v[i] is not None]
        out.append(_r(math.fsum(vals)) if vals else None)
    return out


def _sum_full(full: Mapping[str, list[float | None]], prefix: str | None, n: int):
    """A computed sum over every flow (`full`: per direction): one direction's, or both."""
    if prefix is not None:
        return full["forward" if prefix.startswith(UPLOAD) else "reverse"]
    return _sum_series([full["forward"], full["reverse"]], n)


def read_summary(run: Path) -> dict[str, Any]:
    """A run directory's summary.json, checked for what the export reads."""
    summary_path = run / "summary.json"
    if not summary_path.is_file():
        raise ValueError(f"{run}: not a results directory of `aqmlab run` (no summary.json)")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        scenario = summary["scenario"]
        float(scenario["duration_s"])
        float(scenario["topology"]["bottleneck_mbps"])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{summary_path}: not the summary of an `aqmlab run` ({e!r})") from None
    return summary


def build(
    run_dir: str | os.PathLike,
    *,
    step_s: float = DEFAULT_STEP_S,
    time: _dt.datetime | None = None,
    data_filename: str | None = None,
    max_flows: int | None = DEFAULT_MAX_FLOWS,
    aggregate: bool = False,
) -> tuple[dict[str, Any], str]:
    """The Flent document of a run directory, and its mode (`per_flow` or `aggregate`).

    `max_flows`: with more traced connections than this, the ones that sent the most bytes
    (None: all). `aggregate`: ignore a `tcp_state` table."""
    if max_flows is not None and max_flows < 1:
        raise ValueError(f"max_flows {max_flows}: expected at least 1")
    run = Path(run_dir)
    summary = read_summary(run)
    scenario = summary["scenario"]
    duration = float(scenario["duration_s"])
    warmup = float(scenario.get("warmup_s", 0.0))
    interval_s, _ = _measure(scenario)
    x = grid(duration, step_s)
    n = len(x)
    t0 = time or _run_time(run, summary)
    t0_epoch = t0.timestamp()

    notes: list[str] = []
    bottleneck = _table(run, "bottleneck", notes)
    queue = _table(run, "queue", notes)
    # A chain's tables hold every hop: the export shows the bottleneck, hop 0.
    bottleneck = None if bottleneck is None else first_hop(bottleneck)
    queue = None if queue is None else first_hop(queue)
    connections = _table(run, "connections", notes)
    tcp_state = _table(run, "tcp_state", notes)

    results: dict[str, list[float | None]] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    series_meta: dict[str, dict[str, Any]] = {}
    described: dict[str, str] = {}

    def add(name: str, values: list[float | None], meta: dict[str, Any], extra=None) -> None:
        results[name] = [_r(v) for v in values]
        series_meta[name] = meta
        records = []
        for i, v in enumerate(results[name]):
            if v is None:
                continue
            rec: dict[str, Any] = {"t": round(t0_epoch + float(x[i]), 6), "val": v}
            if extra is not None:
                rec.update(extra(i))
            records.append(rec)
        raw[name] = records

    full_sums: dict[str, list[float | None]] | None = None
    per_flow = not aggregate and tcp_state is not None and tcp_state.height > 0
    if aggregate and tcp_state is not None:
        notes.append("tcp_state.parquet present but not used (aggregate export asked for)")
    streams = {"forward": 0, "reverse": 0}
    if per_flow:
        mode = "per_flow"
        flows, flow_notes = tcp_flows(tcp_state, connections, scenario)
        notes += flow_notes
        if max_flows is not None and len(flows) > max_flows:
            kept = sorted(flows, key=lambda f: (-f.bytes_sent, f.conn_id))[:max_flows]
            notes.append(
                f"{max_flows} of the {len(flows)} traced connections: those that sent the most "
                "bytes (max_flows); the sums and totals still add every traced connection"
            )
            # The sums are of every flow, not of the series kept (issue 36: with 100 of 5,313
            # Web connections kept, "TCP download sum" read a fifth of the link).
            every: dict[str, list[list[float | None]]] = {"forward": [], "reverse": []}
            for f in flows:
                every[f.direction].append(_flow_series(f, x, step_s)[0])
            full_sums = {d: _sum_series(v, n) for d, v in every.items()}
            flows = sorted(kept, key=lambda f: f.conn_id)
        for f in flows:
            streams[f.direction] += 1
            name = f"{DIRECTION_NAME[f.direction]}::{streams[f.direction]}"
            rate, meta, extra, what = _flow_series(f, x, step_s)
            add(name, rate, meta, extra)
            described[name] = what
    else:
        mode = "aggregate"
        if bottleneck is None:
            raise ValueError(f"{run}: no bottleneck.parquet and no tcp_state.parquet to export")
        for direction, flent in DIRECTION_NAME.items():
            b = bottleneck.filter(pl.col("direction") == direction).sort("t_s")
            values = window_means(
                b["t_s"].to_numpy().astype(float),
                b["throughput_mbps"].to_numpy().astype(float),
                interval_s,
                x,
                step_s,
            )
            name = f"{flent}::1"
            streams[direction] = 1
            add(
                name,
                values,
                {"UNITS": "Mbits/s", "AQMLAB_AGGREGATE": True, "AQMLAB_DIRECTION": direction},
            )
            described[name] = (
                f"AGGREGATE: the bottleneck's {direction} IP throughput (all packets: data, ACKs, "
                "UDP), bottleneck.parquet throughput_mbps, not one flow"
            )

    base_ms, base_how = ping_base_rtt_ms(scenario, connections)
    probes = _table(run, "ping_probes", notes)
    if probes is not None and probes.height:
        # Probe flows (`kind = "ping"`): each probe is a sample, as Flent's ping records are.
        for name, values, extra, what in probe_series(probes, x, step_s, t0_epoch):
            add(name, values, {"UNITS": "ms"})
            raw[name] = extra
            described[name] = what
    elif queue is not None and queue.height:
        fwd = queue_delay_ms(queue, scenario, "forward", x, step_s)
        rev = queue_delay_ms(queue, scenario, "reverse", x, step_s)
        ping = [
            None if a is None or b is None else base_ms + a + b
            for a, b in zip(fwd, rev, strict=True)
        ]
        add(PING, ping, {"UNITS": "ms", "AQMLAB_AGGREGATE": True, "AQMLAB_BASE_RTT_MS": base_ms})
        described[PING] = (
            f"AGGREGATE: virtual ping = base RTT {base_ms:.3f} ms ({base_how}) + forward + reverse "
            "bottleneck queueing delay, each mean_bytes (+ framing per packet) x 8 / link rate "
            "per queue window (queue.parquet); with a fair queue a sparse ping would see less"
        )
    else:
        notes.append("no queue.parquet: no ping series")

    # The bottleneck queues as Flent's qdisc statistics (its `backlog`, `drops` and `delay`
    # plots read these raw records; `qdisc_stats_hosts` in TEST_PARAMETERS names them).
    qdisc_hosts: list[str] = []
    for direction in ("forward", "reverse"):
        records = qdisc_records(queue, bottleneck, scenario, direction, t0_epoch)
        if not records:
            continue
        qdisc_hosts.append(direction)
        name = f"{QDISC}{direction}"
        raw[name] = records
        series_meta[name] = {"UNITS": "misc", "AQMLAB_DIRECTION": direction}
        described[name] = (
            f"the {direction} bottleneck queue, raw records only: backlog_bytes / backlog_pkts "
            "(queue window means, not instants as tc's), delay (ms, backlog / link rate, not "
            "the AQM's own estimate), dropped / ecn_mark (per bottleneck interval)"
        )

    for name, (how, prefix) in COMPUTED.items():
        values, keys = _computed(results, how, prefix, n)
        if full_sums is not None and how == "sum":
            values = _sum_full(full_sums, prefix, n)
        if keys:
            results[name] = values
            series_meta[name] = {
                "UNITS": "ms" if name.startswith("Ping") else "Mbits/s",
                "COMPUTED_LATE": False,
                "AQMLAB_COMPUTED": f"{how} of {', '.join(keys)}",
            }
            described[name] = f"{how} of the {len(keys)} series {prefix or 'TCP * BE::'}*"

    version = summary.get("version") or {}
    aqmlab_version = version.get("aqmlab", "?")
    ping_what = (
        "Ping = the run's probe flows (kind = ping), each probe a sample"
        if probes is not None and probes.height
        else "Ping = base RTT + both bottleneck queues' queueing delay (no probe flow ran)"
    )
    title = str(scenario.get("name") or run.name)
    what = (
        "one series per traced TCP connection (tcp_state.parquet)"
        if mode == "per_flow"
        else "aggregate series: the TCP series are each direction's bottleneck throughput"
    )
    note = (
        f"Simulated by aqmlab {aqmlab_version} (core {version.get('core', '?')}), seed "
        f"{summary.get('seed')}, not measured. {what}. Upload = forward (left -> right), "
        f"download = reverse (right -> left). {ping_what}. See AQMLAB in the metadata and "
        "aqmlab's docs/flent.md."
    )
    time_s = _flent_time(t0)
    name_file = data_filename or default_file_name(title)
    metadata: dict[str, Any] = {
        "NAME": FLENT_TEST,
        "TITLE": title,
        "NOTE": note,
        "TIME": time_s,
        "T0": time_s,
        "HOST": "aqmlab-right",
        "HOSTS": ["aqmlab-right"],
        "LOCAL_HOST": "aqmlab-left",
        "LENGTH": round(duration - warmup, 9),
        "TOTAL_LENGTH": duration,
        "STEP_SIZE": step_s,
        # Flent reads metadata back as settings: its plots' cutoff (DELAY, -DELAY) then drops
        # the warm-up (and as long at the end) instead of its default 5 s.
        "DELAY": warmup,
        "TEST_PARAMETERS": {
            "upload_streams": streams["forward"],
            "download_streams": streams["reverse"],
            **(
                {
                    "qdisc_stats_hosts": ",".join(qdisc_hosts),
                    "qdisc_stats_interfaces": ",".join(["bottleneck"] * len(qdisc_hosts)),
                }
                if qdisc_hosts
                else {}
            ),
        },
        "FLENT_VERSION": None,
        "IP_VERSION": None,
        "BATCH_NAME": None,
        "BATCH_TIME": None,
        "BATCH_TITLE": None,
        "BATCH_UUID": None,
        "DATA_FILENAME": name_file,
        "HTTP_GETTER_URLLIST": None,
        "HTTP_GETTER_DNS": None,
        "HTTP_GETTER_WORKERS": None,
        "FAILED_RUNNERS": 0,
        "SERIES_META": series_meta,
        "AQMLAB": {
            "version": version,
            "seed": summary.get("seed"),
            "scenario_file": summary.get("scenario_file"),
            "overrides": summary.get("overrides", []),
            "mode": mode,
            "series": described,
            "ping_base_rtt_ms": round(base_ms, DIGITS),
            "ping_base_rtt": base_how,
            "warmup_s": warmup,
            "grid": "each value is the time average over the step ending at its x",
            "notes": notes,
        },
    }
    doc = {
        "metadata": metadata,
        "version": FLENT_FORMAT_VERSION,
        "x_values": [float(v) for v in x],
        "results": results,
        "raw_values": raw,
    }
    return doc, mode


def default_file_name(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", title) + FLENT_SUFFIX


def dumps(doc: Mapping[str, Any]) -> bytes:
    """The gzipped JSON of a document: keys sorted, no time or file name in the gzip header."""
    text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def export(
    run_dir: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    step_s: float = DEFAULT_STEP_S,
    time: _dt.datetime | None = None,
    max_flows: int | None = DEFAULT_MAX_FLOWS,
    aggregate: bool = False,
) -> Exported:
    """Write the run's Flent file (default: RUN/<scenario name>.flent.gz) and say what it
    holds."""
    run = Path(run_dir)
    if out is not None and not Path(out).is_dir():
        path = Path(out)
    else:  # the default name, in RUN or in the directory given as --out
        title = read_summary(run)["scenario"].get("name") or run.name
        path = (run if out is None else Path(out)) / default_file_name(str(title))
    doc, mode = build(
        run,
        step_s=step_s,
        time=time,
        data_filename=path.name,
        max_flows=max_flows,
        aggregate=aggregate,
    )
    data = dumps(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    params = doc["metadata"]["TEST_PARAMETERS"]
    return Exported(
        path=path,
        mode=mode,
        upload_streams=params["upload_streams"],
        download_streams=params["download_streams"],
        points=len(doc["x_values"]),
        notes=list(doc["metadata"]["AQMLAB"]["notes"]),
    )


def read(path: str | os.PathLike) -> dict[str, Any]:
    """A Flent file's document (gzipped or not)."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


__all__ = [
    "DEFAULT_STEP_S",
    "FLENT_TEST",
    "Exported",
    "build",
    "cumulative_rate_mbps",
    "dumps",
    "export",
    "grid",
    "parse_time",
    "qdisc_records",
    "queue_delay_ms",
    "read",
    "window_means",
]
