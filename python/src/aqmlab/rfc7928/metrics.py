"""RFC 7928 §2's end-to-end metrics of one run, read from its tables, and the pure
functions they use (Jain's index, histogram quantiles, the delay-goodput ellipse).

All figures are of the forward bottleneck (left -> right), where every section sends its
measured data (uploads; the Web users' responses with clients on the right), after the
warm-up."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

__all__ = [
    "DIRECTION",
    "delay_quantiles",
    "drop_mark_probability",
    "ellipse",
    "first_hop",
    "hop_rows",
    "jain",
    "lbe_sources",
    "run_metrics",
]

DIRECTION = "forward"


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2) (Jain, Chiu, Hawe 1984; RFC 7928 §2.5's
    fairness among flows); NaN for no flows or all zero."""
    xs = [float(x) for x in xs]
    s, ss = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * ss) if xs and ss > 0 else math.nan


def delay_quantiles(
    hist: pl.DataFrame, qs: Sequence[float] = (0.5, 0.95, 0.99)
) -> dict[str, float]:
    """Mean and quantiles (ms) of a queue-delay histogram (`delay_ms` bin start, `width_ms`,
    `count`): the mean from bin midpoints; a quantile q is the upper edge of the first bin
    where the cumulative share reaches q (a bound, exact to one bin width)."""
    h = hist.filter(pl.col("width_ms").is_finite() & (pl.col("count") > 0)).sort("delay_ms")
    counts = h["count"].to_numpy().astype(float)
    total = counts.sum()
    out = {"delay_mean_ms": math.nan, **{f"delay_p{round(q * 100)}_ms": math.nan for q in qs}}
    if total == 0:
        return out
    lo, w = h["delay_ms"].to_numpy(), h["width_ms"].to_numpy()
    out["delay_mean_ms"] = float(((lo + w / 2) * counts).sum() / total)
    cum = np.cumsum(counts) / total
    for q in qs:
        i = min(int(np.searchsorted(cum, q - 1e-12)), len(cum) - 1)
        out[f"delay_p{round(q * 100)}_ms"] = float(lo[i] + w[i])
    return out


def drop_mark_probability(link: Mapping[str, Any]) -> tuple[float, float]:
    """(drop, mark) probability of the packets arriving at a bottleneck queue (RFC 7928 §2.3:
    the long-term loss probability): AQM drops, forced drops and overflows over arrivals;
    marks over arrivals."""
    arrivals = float(link.get("arrivals") or 0)
    if arrivals <= 0:
        return math.nan, math.nan
    drops = sum(float(link.get(k) or 0) for k in ("drops_early", "drops_forced", "drops_overflow"))
    return drops / arrivals, float(link.get("marks") or 0) / arrivals


def ellipse(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """The 1-sigma ellipse of a bivariate normal fitted to points (RFC 7928 §2.7's delay-
    goodput ellipses, after Winstein's Remy plots): centre = the means, semi-axes = the square
    roots of the eigenvalues of the sample covariance (n - 1), angle (degrees, from the x
    axis) of the major axis. It holds about 39 % of such a distribution's mass."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    out = {"cx": math.nan, "cy": math.nan, "major": math.nan, "minor": math.nan, "angle": 0.0}
    if x.size == 0:
        return out
    out["cx"], out["cy"] = float(x.mean()), float(y.mean())
    if x.size < 2:
        return out
    vals, vecs = np.linalg.eigh(np.cov(np.vstack([x, y]), ddof=1))
    major = int(np.argmax(vals))
    out["major"] = float(math.sqrt(max(vals[major], 0.0)))
    out["minor"] = float(math.sqrt(max(vals[1 - major], 0.0)))
    out["angle"] = float(math.degrees(math.atan2(vecs[1, major], vecs[0, major])))
    return out


def first_hop(table: pl.DataFrame) -> pl.DataFrame:
    """The rows of hop 0 (the scheme under test) of a chain's table (with a `hop` column,
    RFC 7928 §10); a dumbbell's table as it is."""
    return table.filter(pl.col("hop") == 0) if "hop" in table.columns else table


def hop_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per hop of a chain (`summary.json`'s `hops`; none for a dumbbell): its rate,
    queue kind, and its forward queue's utilization, mean and p99 delay, drop and mark
    probability."""
    rows = []
    for h in (summary.get("summary") or {}).get("hops") or []:
        fwd = h.get("forward") or {}
        drop, mark = drop_mark_probability(fwd)
        rows.append(
            {
                "hop": h.get("hop"),
                "queue": (h.get("queue_forward") or {}).get("kind"),
                "Mb/s": h.get("mbps"),
                "utilization": fwd.get("utilization"),
                "delay mean (ms)": fwd.get("delay_mean_ms"),
                "delay p99 (ms)": fwd.get("delay_p99_ms"),
                "drop prob": drop,
                "mark prob": mark,
            }
        )
    return rows


def lbe_sources(scenario: Mapping[str, Any]) -> list[int]:
    """The traffic sources whose connections run LEDBAT (RFC 7928 §5.4's less-than-best-effort
    sender): a source's own TCP configuration (`traffic_tcp`, as the core resolves a traffic
    entry's `tcp`; or the entry's `tcp`, a preset name or a table), else the scenario's."""

    def ledbat(tcp: Any) -> bool:
        if isinstance(tcp, str):
            return tcp == "linux-ledbat"
        if isinstance(tcp, Mapping):
            cc = tcp.get("congestion_control")
            return cc == "ledbat" or (cc is None and tcp.get("preset") == "linux-ledbat")
        return False

    own = list(scenario.get("traffic_tcp") or [])
    out = []
    for i, t in enumerate(scenario.get("traffic") or []):
        tcp = own[i] if i < len(own) and own[i] is not None else t.get("tcp")
        if ledbat(tcp if tcp is not None else scenario.get("tcp")):
            out.append(i)
    return out


def _table(res: Any, name: str) -> pl.DataFrame:
    try:
        return res[name]
    except KeyError:
        return pl.DataFrame()


def run_metrics(res: Any, scenario: Mapping[str, Any]) -> dict[str, float]:
    """One run's §2 metrics: goodput (TCP and UDP delivered, Mb/s), queueing delay (mean,
    p50, p95, p99), drop and mark probability, utilization, Jain's index of the long-lived
    TCP flows, the goodput of each traffic source, the short transfers' completion and
    start-up times (median, s), the Web responses' median time; with LEDBAT sources (§5.4)
    their goodput (`lbe_mbps`) and share of the long-lived flows' goodput (`lbe_share`)."""
    core = res.summary.get("summary") or {}
    link = core.get(DIRECTION) or {}
    span = float(core.get("measured_s") or 0.0) or math.nan
    warm = float(scenario.get("warmup_s") or 0.0)
    drop, mark = drop_mark_probability(link)
    udp = core.get("udp") or {}
    m: dict[str, float] = {
        "tcp_goodput_mbps": float(core.get(f"tcp_goodput_{DIRECTION}_mbps") or 0.0),
        "udp_mbps": float(udp.get("throughput_mbps") or 0.0),
        "utilization": float(link.get("utilization") or math.nan),
        "drop_prob": drop,
        "mark_prob": mark,
    }
    video = core.get("video_call") or {}
    if video:
        # RFC 7928 §7.2's bursty video frames (docs/workload.md, "Video calls"): the frames'
        # delay and losses, the calls' delivered rate as goodput.
        m["video_mbps"] = float(video.get("receive_mbps") or 0.0) * float(video.get("calls") or 0)
        m["video_frame_delay_p95_ms"] = float(video.get("frame_delay_p95_ms") or math.nan)
        m["video_frame_delay_p99_ms"] = float(video.get("frame_delay_p99_ms") or math.nan)
        frames = float(video.get("frames_delivered") or 0) + float(video.get("frames_lost") or 0)
        m["video_frame_loss"] = (
            float(video.get("frames_lost") or 0) / frames if frames > 0 else math.nan
        )
        m["video_freeze_ratio"] = float(video.get("freeze_ratio") or math.nan)
    m["goodput_mbps"] = m["tcp_goodput_mbps"] + m["udp_mbps"] + m.get("video_mbps", 0.0)
    qd = first_hop(_table(res, "queue_delay"))
    if qd.height:
        m.update(delay_quantiles(qd.filter(pl.col("direction") == DIRECTION)))
    traffic = scenario.get("traffic") or []
    conns = _table(res, "connections")
    long_lived = [i for i, t in enumerate(traffic) if t.get("kind") == "bulk" and "bytes" not in t]
    m["jain"] = math.nan
    if conns.height:
        per_flow = conns.filter(pl.col("source").is_in(long_lived))
        rates = (per_flow["bytes_delivered_measured"].to_numpy() * 8 / span / 1e6).tolist()
        m["jain"] = jain(rates) if len(rates) > 1 else math.nan
        for i in range(len(traffic)):
            got = conns.filter(pl.col("source") == i)["bytes_delivered_measured"].sum()
            m[f"source{i}_mbps"] = float(got or 0) * 8 / span / 1e6
        short = [i for i, t in enumerate(traffic) if t.get("kind") == "ftp"]
        done = conns.filter(
            pl.col("source").is_in(short) & pl.col("completed") & (pl.col("start_s") >= warm)
        )
        if done.height:
            m["short_completion_s"] = float((done["last_byte_s"] - done["start_s"]).median())
            m["short_startup_s"] = float((done["first_byte_s"] - done["start_s"]).median())
            m["short_flows"] = float(done.height)
        lbe = lbe_sources(scenario)
        if lbe:
            # §5.4: the less-than-best-effort flows' goodput and their share of the TCP goodput.
            m["lbe_mbps"] = sum(m[f"source{i}_mbps"] for i in lbe)
            tcp_total = sum(
                m[f"source{i}_mbps"] for i, t in enumerate(traffic) if t.get("kind") == "bulk"
            )
            m["lbe_share"] = m["lbe_mbps"] / tcp_total if tcp_total > 0 else math.nan
    ex = _table(res, "exchanges")
    if ex.height:
        ok = ex.filter(pl.col("completed") & (pl.col("start_s") >= warm))
        if ok.height:
            m["web_response_s"] = float(ok["response_time_s"].median())
            if "short_completion_s" not in m:
                m["short_completion_s"] = m["web_response_s"]
    for i, t in enumerate(traffic):
        if t.get("kind") == "udp_cbr":
            flows = _table(res, "udp_flows")
            if flows.height and "source" in flows.columns:
                sel = flows.filter(pl.col("source") == i)
                m[f"source{i}_mbps"] = float(sel["throughput_mbps"].sum())
    return m
