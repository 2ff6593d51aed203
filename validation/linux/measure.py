"""The testbed's metrics from its raw samples, the comparison with aqmlab's, the bed's own
noise over repeated runs, and the checks of the bed itself (delay line timing, drops outside
the bottleneck, the agents' readings against `tc -s` and `ss -ti`).

Every metric is taken over the measured window [warm-up, end) of the scenario's time, the same
window on both sides:

- goodput of a flow: application bytes received in the window / its length (Mb/s)
- Jain's index of the flows' goodputs, (Σx)² / (n Σx²)
- drop rate: bottleneck drops / packets offered to the bottleneck queue in the window
  (offered = sent + dropped + growth of the backlog)
- mean queue: time average of the pfifo's packet count (packets waiting; htb's dequeue is the
  transmission: there is no packet "on the wire" in a veth)
- cwnd of a flow over time: the sender's snd_cwnd (segments), sample-and-hold on a grid
- mark rate (ECN): packets the qdisc marked CE / packets offered, in the window (Linux: the
  qdisc's own mark counters, agents.MARK_OFFSETS; aqmlab: the bottleneck's `marks`)
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

# Tolerances (the issue): relative for drop rate, mean queue and per-flow goodput; the cwnd
# correlation is a floor, required for 1 and 4 flows.
TOL_DROP = 0.10
TOL_QUEUE = 0.10
TOL_GOODPUT = 0.05
MIN_CWND_CORR = 0.95
CWND_CORR_FLOWS = (1, 4)
GRID_S = 0.01  # cwnd grid
MAX_LAG_S = 5.0  # the time-series correlation takes the best shift within ± this

CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


# --- the Linux side -----------------------------------------------------------------------------


def _at(ts: np.ndarray, values: np.ndarray, t: float) -> float:
    """A counter's value at `t`, interpolated between the samples around it."""
    return float(np.interp(t, ts, values))


def linux_metrics(run_dir: Path, warmup: float, seconds: float, rate_mbit: float) -> dict:
    """The metrics of one testbed run (its raw files in `run_dir`)."""
    b = pl.read_csv(run_dir / "bytes.csv")
    flows = sorted(b["flow"].unique().to_list())
    goodput = []
    for f in flows:
        x = b.filter(pl.col("flow") == f).sort("t_s")
        ts, by = x["t_s"].to_numpy(), x["bytes"].to_numpy().astype(float)
        t_end = min(seconds, float(ts[-1]))
        got = _at(ts, by, t_end) - _at(ts, by, warmup)
        goodput.append(got * 8 / (t_end - warmup) / 1e6)
    q = pl.read_csv(run_dir / "qdisc.csv").sort("t_s")
    ts = q["t_s"].to_numpy()
    inside = (ts >= warmup) & (ts <= seconds)
    qs = q.filter(pl.Series(inside))
    t_a, t_b = float(qs["t_s"][0]), float(qs["t_s"][-1])

    def delta(col: str) -> float:
        return float(qs[col][-1] - qs[col][0])

    sent, drops = delta("packets"), delta("drops")
    arrivals = sent + drops + delta("qlen")
    marks = delta("marks") if "marks" in qs.columns else 0.0
    tq = qs["t_s"].to_numpy()
    ql = qs["qlen"].to_numpy().astype(float)
    mean_queue = float(np.sum(ql[:-1] * np.diff(tq)) / (tq[-1] - tq[0]))
    info = pl.read_csv(run_dir / "tcp_info.csv")
    last = info.sort("t_s").group_by("flow").last().sort("flow")
    first = info.filter(pl.col("t_s") >= warmup).sort("t_s").group_by("flow").first().sort("flow")
    retrans = (last["total_retrans"] - first["total_retrans"]).to_list()
    return {
        "goodput_mbps": goodput,
        "aggregate_goodput_mbps": float(np.sum(goodput)),
        "jain": jain(goodput),
        "drop_rate": drops / arrivals if arrivals else math.nan,
        "drops": drops,
        "arrivals": arrivals,
        "mean_queue_pkts": mean_queue,
        "utilization": delta("bytes") * 8 / (rate_mbit * 1e6 * (t_b - t_a)),
        "marks": marks,
        "mark_rate": marks / arrivals if arrivals else math.nan,
        "retransmits": retrans,
        "rate_mbit": rate_mbit,
    }


def jain(xs) -> float:
    xs = [float(x) for x in xs]
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if xs and sq > 0 else math.nan


def linux_cwnd(run_dir: Path) -> pl.DataFrame:
    """t_s, flow, cwnd, ssthresh (segments; Linux's "infinite" ssthresh as NaN), rtt_ms,
    ca_state: the sender's tcp_info samples."""
    info = pl.read_csv(run_dir / "tcp_info.csv")
    return info.select(
        "t_s",
        "flow",
        pl.col("snd_cwnd").cast(pl.Float64).alias("cwnd"),
        pl.when(pl.col("snd_ssthresh") >= 0x7FFFFFFF)
        .then(None)
        .otherwise(pl.col("snd_ssthresh"))
        .cast(pl.Float64)
        .alias("ssthresh"),
        (pl.col("rtt_us") / 1000.0).alias("rtt_ms"),
        pl.col("ca_state").replace_strict(
            dict(enumerate(CA_STATES)), default="other", return_dtype=pl.String
        ),
    ).sort("flow", "t_s")


# --- cwnd series --------------------------------------------------------------------------------


def on_grid(t: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Sample-and-hold of the series (t, v) at the times `grid` (NaN before its first
    sample)."""
    i = np.searchsorted(t, grid, side="right") - 1
    out = np.where(i >= 0, v[np.clip(i, 0, None)], np.nan)
    return out.astype(float)


def best_lag_correlation(a: np.ndarray, b: np.ndarray, max_lag: int) -> tuple[float, int]:
    """The largest Pearson correlation of `a` and `b` shifted against each other by at most
    `max_lag` samples (the overlap only), and that shift (b's lead, in samples). Two
    sawtooths of the same shape and period correlate near 1 at the right shift; a different
    period or shape lowers it whatever the shift."""
    best, lag = -math.inf, 0
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    for k in range(-max_lag, max_lag + 1):
        x = a[max(k, 0) : n + min(k, 0)]
        y = b[max(-k, 0) : n - max(k, 0)]
        if len(x) < 10 or np.std(x) == 0 or np.std(y) == 0:
            continue
        r = float(np.corrcoef(x, y)[0, 1])
        if r > best:
            best, lag = r, k
    return (best if best > -math.inf else math.nan), lag


def quantile_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the two series' quantile functions (1st to 99th percentile):
    the shape of the cwnd distribution, blind to time and to a common scale."""
    qa = np.percentile(a, np.arange(1, 100))
    qb = np.percentile(b, np.arange(1, 100))
    if np.std(qa) == 0 or np.std(qb) == 0:
        return math.nan
    return float(np.corrcoef(qa, qb)[0, 1])


def cwnd_comparison(linux: pl.DataFrame, ours: pl.DataFrame, warmup: float, seconds: float):
    """Per flow: both cwnd series on the measured window's grid, their best-lag and quantile
    correlations and means. Returns (rows of per-flow numbers, the grid table)."""
    grid = np.arange(warmup, seconds, GRID_S)
    max_lag = int(min(MAX_LAG_S, (seconds - warmup) / 4) / GRID_S)
    per_flow, tables = [], []
    for f in sorted(set(linux["flow"].to_list()) & set(ours["flow"].to_list())):
        lx = linux.filter(pl.col("flow") == f)
        ox = ours.filter(pl.col("flow") == f)
        a = on_grid(lx["t_s"].to_numpy(), lx["cwnd"].to_numpy(), grid)
        b = on_grid(ox["t_s"].to_numpy(), ox["cwnd"].to_numpy(), grid)
        ok = ~(np.isnan(a) | np.isnan(b))
        corr, lag = best_lag_correlation(a[ok], b[ok], max_lag)
        per_flow.append(
            {
                "flow": f,
                "corr": corr,
                "lag_s": lag * GRID_S,
                "quantile_corr": quantile_correlation(a[ok], b[ok]),
                "mean_linux": float(np.mean(a[ok])),
                "mean_aqmlab": float(np.mean(b[ok])),
            }
        )
        tables.append(pl.DataFrame({"t_s": grid, "flow": f, "linux": a, "aqmlab": b}))
    if len(tables) > 1:  # the flows' windows added up: the path's total window
        a = np.sum([t["linux"].to_numpy() for t in tables], axis=0)
        b = np.sum([t["aqmlab"].to_numpy() for t in tables], axis=0)
        ok = ~(np.isnan(a) | np.isnan(b))
        corr, lag = best_lag_correlation(a[ok], b[ok], max_lag)
        per_flow.append(
            {
                "flow": "sum",
                "corr": corr,
                "lag_s": lag * GRID_S,
                "quantile_corr": quantile_correlation(a[ok], b[ok]),
                "mean_linux": float(np.mean(a[ok])),
                "mean_aqmlab": float(np.mean(b[ok])),
            }
        )
    return per_flow, (pl.concat(tables) if tables else pl.DataFrame())


# --- rows ---------------------------------------------------------------------------------------


@dataclass
class Row:
    config: str
    model: str  # the aqmlab TCP model compared: preset and overrides
    metric: str
    linux: float
    aqmlab: float
    difference: float
    tolerance: float
    kind: str  # rel: |aqmlab − linux| / |linux| ≤ tolerance; min: aqmlab ≥ tolerance; info
    passed: bool | None  # None: not held to a tolerance
    note: str = ""


def row(config, metric, linux, ours, *, kind, tol=math.nan, note="", model="") -> Row:
    linux, ours = float(linux), float(ours)
    if kind == "rel":
        diff = abs(ours - linux) / abs(linux) if linux else (0.0 if ours == 0 else math.inf)
        passed = bool(diff <= tol)
    elif kind == "min":  # a figure of the pair itself (a correlation), in the aqmlab column
        diff = ours
        passed = bool(ours >= tol)
    else:
        diff = ours - linux
        passed = None
    if math.isnan(diff):
        passed = False if kind != "info" else None
    return Row(config, model, metric, linux, ours, diff, tol, kind, passed, note)


def comparison_rows(
    config: str, lin: dict, ours: dict, cwnd: list[dict], n: int, model: str = ""
) -> list[Row]:
    """The rows of one Linux run against aqmlab's (`model` names aqmlab's TCP model)."""
    rows = []
    for f, (a, b) in enumerate(zip(lin["goodput_mbps"], ours["goodput_mbps"], strict=True)):
        rows.append(
            row(config, f"goodput flow {f} (Mb/s)", a, b, kind="rel", tol=TOL_GOODPUT,
                note="application bytes in the window / window"))  # fmt: skip
    rows += [
        row(config, "aggregate goodput (Mb/s)", lin["aggregate_goodput_mbps"],
            ours["aggregate_goodput_mbps"], kind="info"),
        row(config, "Jain's index", lin["jain"], ours["jain"], kind="info"),
        row(config, "drop rate", lin["drop_rate"], ours["drop_rate"], kind="rel", tol=TOL_DROP,
            note=f"drops {lin['drops']:.0f} / {lin['arrivals']:.0f} offered (Linux), "
            f"{ours['drops']:.0f} / {ours['arrivals']:.0f} (aqmlab)"),
        row(config, "mean queue (packets)", lin["mean_queue_pkts"], ours["mean_queue_pkts"],
            kind="rel", tol=TOL_QUEUE, note="time average of the packets waiting"),
    ]  # fmt: skip
    if lin.get("marks", 0) or ours.get("marks", 0):
        rows.append(
            row(config, "mark rate", lin["mark_rate"], ours["mark_rate"], kind="rel",
                tol=TOL_DROP, note=f"CE marks {lin['marks']:.0f} (Linux), "
                f"{ours['marks']:.0f} (aqmlab), per packet offered")
        )  # fmt: skip
    rows += [
        row(config, "utilisation (wire)", lin["utilization"], ours["utilization"], kind="info",
            note="bytes leaving the queue incl. the 14-byte Ethernet header × 8 / (rate × T)"),
        row(config, "retransmitted segments (all flows)", np.sum(lin["retransmits"]),
            np.sum(ours["retransmits"]), kind="info",
            note="data segments sent again in the window (Linux: tcpi_total_retrans)"),
    ]  # fmt: skip
    for c in cwnd:
        f = c["flow"]
        held = n in CWND_CORR_FLOWS and f != "sum"
        f = "(sum of flows)" if f == "sum" else f
        rows += [
            row(config, f"cwnd correlation flow {f}", math.nan, c["corr"],
                kind="min" if held else "info", tol=MIN_CWND_CORR if held else math.nan,
                note=f"Pearson, 10 ms grid, best shift within ±{MAX_LAG_S:g} s "
                f"(here {c['lag_s']:+.2f} s)"),
            row(config, f"cwnd quantile correlation flow {f}", math.nan, c["quantile_corr"],
                kind="info", note="percentiles 1–99 of the two cwnd series"),
            row(config, f"mean cwnd flow {f} (segments)", c["mean_linux"], c["mean_aqmlab"],
                kind="info"),
        ]  # fmt: skip
    for r in rows:
        r.model = model
    return rows


def frame(rows: list[Row]) -> pl.DataFrame:
    return pl.DataFrame([asdict(r) for r in rows], infer_schema_length=None)


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    if isinstance(x, float):
        if math.isnan(x):
            return "—"
        if x == 0:
            return "0"
        return f"{x:.3g}" if abs(x) >= 1e4 or abs(x) < 1e-3 else f"{x:.4g}"
    return str(x).replace("|", "\\|")


def markdown(df: pl.DataFrame) -> str:
    cols = df.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for r in df.iter_rows():
        lines.append("| " + " | ".join(_fmt(x) for x in r) + " |")
    return "\n".join(lines) + "\n"


def write_table(df: pl.DataFrame, path: Path) -> None:
    """`path`.csv, .parquet and .md."""
    path.parent.mkdir(parents=True, exist_ok=True)
    df.write_csv(path.with_suffix(".csv"))
    df.write_parquet(path.with_suffix(".parquet"))
    path.with_suffix(".md").write_text(markdown(df))


def summary(df: pl.DataFrame) -> pl.DataFrame:
    """One line per configuration of a comparison table: the aggregate metrics side by side
    (Linux / aqmlab), the relative differences of drop rate and mean queue, how many flows'
    goodputs are within their tolerance, and the smallest cwnd correlation (1-4 flows)."""

    def pair(sub: pl.DataFrame, metric: str, digits: int = 3) -> str:
        r = sub.filter(pl.col("metric") == metric)
        if r.is_empty():
            return ""
        lin, ours = r["linux"][0], r["aqmlab"][0]
        return f"{lin:.{digits}g} / {ours:.{digits}g}"

    def diff(sub: pl.DataFrame, metric: str) -> str:
        r = sub.filter(pl.col("metric") == metric)
        if r.is_empty():
            return ""
        lin, ours = r["linux"][0], r["aqmlab"][0]
        if lin == 0:
            return "—" if ours == 0 else "+∞"
        mark = "" if r["passed"][0] else " ✗"
        return f"{(ours - lin) / lin:+.0%}{mark}"

    out = []
    for (config, model), sub in df.group_by(["config", "model"], maintain_order=True):
        flows = sub.filter(pl.col("metric").str.starts_with("goodput flow"))
        corr = sub.filter(pl.col("metric").str.starts_with("cwnd correlation flow"))
        n = flows.height
        out.append(
            {
                "config": config,
                "model": model,
                "goodput Mb/s": pair(sub, "aggregate goodput (Mb/s)", 4),
                "Jain": pair(sub, "Jain's index"),
                "drop rate": pair(sub, "drop rate"),
                "Δ drop": diff(sub, "drop rate"),
                "mark rate": pair(sub, "mark rate"),
                "Δ mark": diff(sub, "mark rate"),
                "mean queue": pair(sub, "mean queue (packets)"),
                "Δ queue": diff(sub, "mean queue (packets)"),
                "flows within 5 %": f"{int(flows['passed'].sum())} of {n}",
                "cwnd corr (min)": (
                    f"{corr['aqmlab'].min():.2f}" if corr.height and n <= 4 else "—"
                ),
            }
        )
    return pl.DataFrame(out)


# --- the bed's noise over repeats ---------------------------------------------------------------


def noise(config: str, runs: list[dict]) -> pl.DataFrame:
    """Spread of the Linux metrics over repeated runs of one configuration: mean, standard
    deviation, min, max, and the largest relative deviation from the mean (to set beside the
    tolerances: a bed whose own runs differ by more cannot check them)."""
    names = {
        "aggregate goodput (Mb/s)": lambda m: [m["aggregate_goodput_mbps"]],
        "drop rate": lambda m: [m["drop_rate"]],
        "mean queue (packets)": lambda m: [m["mean_queue_pkts"]],
        "Jain's index": lambda m: [m["jain"]],
        "utilisation (wire)": lambda m: [m["utilization"]],
    }
    if any(m.get("marks") for m in runs):
        names["mark rate"] = lambda m: [m["mark_rate"]]
    for cls in runs[0].get("fct", {}):  # short flows: their FCT quantiles per size class
        for q in ("median", "p99"):
            names[f"FCT {cls} {q} (ms)"] = lambda m, c=cls, q=q: [m["fct"][c][f"{q}_ms"]]
    n = len(runs[0]["goodput_mbps"])
    for f in range(n):
        names[f"goodput flow {f} (Mb/s)"] = lambda m, f=f: [m["goodput_mbps"][f]]
    tol = {"drop rate": TOL_DROP, "mean queue (packets)": TOL_QUEUE}
    out = []
    for name, get in names.items():
        xs = np.array([get(m)[0] for m in runs], dtype=float)
        mean = float(np.mean(xs))
        out.append(
            {
                "config": config,
                "metric": name,
                "runs": len(xs),
                "values": ", ".join(f"{x:.4g}" for x in xs),
                "mean": mean,
                "std": float(np.std(xs, ddof=1)) if len(xs) > 1 else math.nan,
                "max_rel_dev": float(np.max(np.abs(xs - mean)) / abs(mean)) if mean else math.nan,
                "tolerance": tol.get(name, TOL_GOODPUT if "goodput flow" in name else math.nan),
            }
        )
    return pl.DataFrame(out)


def cwnd_noise(config: str, cwnds: list[pl.DataFrame], warmup: float, seconds: float):
    """The cwnd correlation between repeated Linux runs (each pair, each flow): what the
    metric gives for the bed against itself."""
    rows = []
    for i in range(len(cwnds)):
        for j in range(i + 1, len(cwnds)):
            per_flow, _ = cwnd_comparison(cwnds[i], cwnds[j], warmup, seconds)
            rows += [
                {"config": config, "pair": f"{i + 1}-{j + 1}", "flow": str(c["flow"]),
                 "corr": c["corr"], "lag_s": c["lag_s"], "quantile_corr": c["quantile_corr"]}
                for c in per_flow
            ]  # fmt: skip
    return pl.DataFrame(rows)


# --- checks of the bed itself -------------------------------------------------------------------


def _ss_windows(text: str) -> dict[int, tuple[int, int | None]]:
    """Peer port → (cwnd, ssthresh) from `ss -tin` output."""
    out, port = {}, None
    for line in text.splitlines():
        m = re.search(r":(\d+)\s*$", line.strip())
        if m and not line.startswith("\t") and not line.startswith(" "):
            port = int(m.group(1))
            continue
        c = re.search(r"\bcwnd:(\d+)", line)
        if c and port is not None:
            s = re.search(r"\bssthresh:(\d+)", line)
            out[port] = (int(c.group(1)), int(s.group(1)) if s else None)
    return out


def _forwarder_checks(fwd: dict) -> dict:
    """The user-space delay line's own timing and drops (forward.json)."""
    out: dict = {"forwarder_realtime": fwd["realtime"]}
    for dev, d in fwd["lateness"].items():
        label = "to senders (ACKs)" if dev == "d0" else "to router (data)"
        for k in ("mean_us", "p50_us", "p99_us", "p999_us", "max_us"):
            out[f"release lateness {label} {k}"] = d[k]
    out["frames read → kernel stamp lag mean_us"] = fwd["read_lag"]["mean_us"]
    out["frames without kernel stamp"] = fwd["frames_without_kernel_stamp"]
    out["delay line socket drops"] = sum(fwd["socket_drops"].values())
    out["delay line max frames held"] = fwd["max_held"]
    return out


def _netem_checks(tc_json: str) -> dict:
    """The netem delay line's drops and most packets held (`tc -s -j qdisc` at the end)."""
    try:
        qs = [q for q in json.loads(tc_json) if q.get("kind") == "netem"]
    except (ValueError, TypeError):
        return {"delay line": "netem (no counters)"}
    return {
        "delay line": "netem",
        "delay line drops": sum(int(q.get("drops", 0)) for q in qs),
        "delay line packets": sum(int(q.get("packets", 0)) for q in qs),
    }


def bed_checks(run_dir: Path, port_base: int) -> dict:
    """The bed's own figures: the delay line's lateness and drops, the probes' RTTs against
    the configured ones, the senders' min RTT, the agents' CPU time, and the agents' readings
    against the tools' (`ss -ti`, `tc -s`) at the mid-run snapshot."""
    meta = json.loads((run_dir / "meta.json").read_text())
    cfg = meta["config"]
    out: dict = {"kernel": meta.get("kernel", "")}
    if (run_dir / "forward.json").exists():
        out.update(_forwarder_checks(json.loads((run_dir / "forward.json").read_text())))
    else:
        out.update(_netem_checks(meta.get("tc_delay_end", "")))
    probe = pl.read_csv(run_dir / "probe.csv")
    for port, rtt in meta["probe_ports_rtt_ms"].items():
        x = probe.filter(pl.col("sport") == int(port))["rtt_ms"].drop_nans().to_numpy() - rtt
        if len(x):
            out[f"probe RTT − configured ({rtt:g} ms) mean_ms"] = float(np.mean(x))
            out[f"probe RTT − configured ({rtt:g} ms) p50_ms"] = float(np.median(x))
            out[f"probe RTT − configured ({rtt:g} ms) max_ms"] = float(np.max(x))
            out[f"probe RTT − configured ({rtt:g} ms) min_ms"] = float(np.min(x))
        out[f"probes lost ({rtt:g} ms)"] = int(
            probe.filter(pl.col("sport") == int(port))["rtt_ms"].is_nan().sum()
        )
    info = pl.read_csv(run_dir / "tcp_info.csv")
    # A flow that starts behind a standing queue never sees the bare path: the smallest
    # excess over the flows is the bed's own.
    mins = info.group_by("flow").agg(pl.col("min_rtt_us").min()).sort("flow")
    excess = [m / 1000 - cfg["rtts_ms"][f] for f, m in zip(mins["flow"], mins["min_rtt_us"],
                                                           strict=True)]  # fmt: skip
    out["TCP min RTT − configured, smallest over flows (ms)"] = min(excess)
    cpu = 0.0
    for name in ("forward.json", "tcp_info.csv.json", "bytes.csv.json", "qdisc.csv.json"):
        p = run_dir / name
        if p.exists():
            cpu += json.loads(p.read_text()).get("cpu_s", 0.0)
    sender = json.loads((run_dir / "tcp_info.csv.json").read_text())
    out["congestion control in use"] = ",".join(sender["congestion_control"])
    out["connections accepted"] = f"{len(sender['accepted_s'])}/{cfg['flows']}"
    recv = json.loads((run_dir / "bytes.csv.json").read_text())
    late = [e - s for e, s in zip(recv["established_s"], cfg["starts_s"], strict=True)]
    out["handshake done − scheduled start, max (ms)"] = 1000 * max(late)
    out["agents CPU s"] = cpu
    out["agents CPU share of one core"] = cpu / meta["wall_s"]
    # The tools' own readings at the mid-run snapshot must lie within the range of the
    # agents' samples over the snapshot's interval.
    t_a, t_b = meta["snapshot_t_s"], meta["snapshot_t_end_s"]
    near = info.filter((pl.col("t_s") >= t_a - 0.011) & (pl.col("t_s") <= t_b + 0.011))
    agree, total = 0, 0
    for port, (cw, _) in _ss_windows(meta.get("ss_ti", "")).items():
        seen = near.filter(pl.col("flow") == port - port_base)["snd_cwnd"]
        total += 1
        agree += len(seen) > 0 and seen.min() <= cw <= seen.max()
    out["ss -ti cwnd within tcp_info samples (flows)"] = f"{agree}/{total}"
    q = pl.read_csv(run_dir / "qdisc.csv")
    # Stalls of the whole bed (the machine, or a user-mode Linux guest, losing the CPU) show as
    # gaps between the qdisc sampler's readings, due every sample_ms.
    gaps = np.diff(q.sort("t_s")["t_s"].to_numpy()) * 1000
    if len(gaps):
        out["qdisc sampler gap p99_ms"] = float(np.percentile(gaps, 99))
        out["qdisc sampler gap max_ms"] = float(np.max(gaps))
        out["qdisc sampler gaps > 50 ms"] = int(np.sum(gaps > 50))
    qn = q.filter((pl.col("t_s") >= t_a - 0.011) & (pl.col("t_s") <= t_b + 0.011))
    try:
        tc = next(x for x in json.loads(meta["tc_s"]) if x.get("handle") == "10:")
        out["tc -s sent/drops within sampler readings"] = bool(
            qn["packets"].min() <= tc["packets"] <= qn["packets"].max()
            and qn["drops"].min() <= tc["drops"] <= qn["drops"].max()
        )
    except (StopIteration, ValueError, KeyError, TypeError):
        out["tc -s sent/drops within sampler readings"] = "n/a"
    if "marks" in q.columns:
        out.update(_mark_check(meta.get("tc_s_end", ""), int(q.sort("t_s")["marks"][-1])))
    if (run_dir / "fct.csv").exists():
        out.update(_web_checks(run_dir))
    return out


def _mark_check(tc_json: str, sampled: int) -> dict:
    """The sampler's last mark count (from the qdisc's xstats) beside `tc -s`'s at the end
    (which is read a little later: at least as many)."""
    try:
        tc = next(x for x in json.loads(tc_json) if x.get("handle") == "10:")
    except (StopIteration, ValueError, TypeError):
        return {"marks: sampler last / tc -s end": "n/a"}
    told = sum(int(tc.get(k, 0)) for k in ("ecn_mark", "ce_mark", "marked"))
    return {"marks: sampler last / tc -s end": f"{sampled} / {told}"}


def _web_checks(run_dir: Path) -> dict:
    """The short flows' agents: how many connections opened and finished, and how late the
    clients opened them against the schedule."""
    f = pl.read_csv(run_dir / "fct.csv")
    late = (f["opened_s"] - f["start_s"]).to_numpy() * 1000
    served = json.loads((run_dir / "web_serve.json").read_text())
    return {
        "short flows opened / finished": f"{f.height} / {int(f['last_byte_s'].is_not_nan().sum())}",
        "short flows served (server)": served.get("served", "n/a"),
        "short-flow open − scheduled p50_ms": float(np.percentile(late, 50)) if len(late) else 0,
        "short-flow open − scheduled p99_ms": float(np.percentile(late, 99)) if len(late) else 0,
    }
