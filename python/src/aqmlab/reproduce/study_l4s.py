"""The L4S pack (`aqmlab reproduce l4s`): the public scenarios of the L4S test suite
github.com/heistp/l4s-tests (`l4s.batch`) and the main job's Web population, through DualPI2,
FQ-CoDel and plain FIFOs with TCP Prague and CUBIC users.

Parts: `rttfair_10` and `rttfair_50` (Scenario 1, RTT fairness: two uploads with their own RTT
and congestion control, at 10 and 50 Mbit/s), `ratestep` (Scenario 2: one upload through a
capacity step down at 30 s), `varrate` (Scenario 3: five capacities in 60 s), `bidir_asym`
(Scenario 4: Flent's rrul_be at asymmetric rates) and `web`
(two-way PackMime users, half Prague, half CUBIC). The report shows what the suite's own
analyses show: each flow's steady-state delivery rate and Jain's index for Scenario 1
(`s1_steady_state.go`), throughput and delay over time for Scenarios 2 and 3; and for every
part the queueing delay per class of sender, from the `source_delay` table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from aqmlab.analysis.source_delays import class_delays
from aqmlab.report import plots
from aqmlab.report.html import HtmlDocument
from aqmlab.study import Study

__all__ = [
    "CITATION",
    "HEADING",
    "PARTS",
    "TITLE",
    "class_delays",
    "delay_over_time",
    "report",
    "rttfair_table",
]

TITLE = "L4S and today's queues"
HEADING = "The L4S pack: DualPI2, FQ-CoDel and FIFOs with TCP Prague and CUBIC"
CITATION = (
    "the L4S test scenarios of P. Heist, github.com/heistp/l4s-tests (l4s.batch: Scenario 1 "
    "RTT fairness, Scenario 2 rate step, Scenario 3 variable rates), and aqmlab's main Web job "
    "with Prague and CUBIC users mixed"
)
PARTS = {
    "rttfair_10": "rttfair_10.toml",
    "rttfair_50": "rttfair_50.toml",
    "ratestep": "ratestep.toml",
    "varrate": "varrate.toml",
    "bidir_asym": "bidir_asym.toml",
    "web": "web.toml",
}

UPLOAD = "forward"  # the suite's uploads cross left -> right
RESPONSES = "reverse"  # the Web clients on the left receive their responses right -> left
# The rate-step table: time from the step's peak delay until the queue is back under this
# (FQ-CoDel's target).
DRAIN_MS = 5.0


def _measured_s(study: Study) -> float:
    runs = study.runs()
    if runs.height == 0:
        return math.nan
    sc = study.scenario(runs["run_id"][0])
    return float(sc["duration_s"]) - float(sc.get("warmup_s", 0.0))


def _table(study: Study, name: str) -> pl.DataFrame:
    try:
        return study.table(name)
    except KeyError:
        return pl.DataFrame()


def _jain(xs: Sequence[float]) -> float:
    s, ss = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * ss) if ss > 0 else math.nan


def rttfair_table(study: Study) -> pl.DataFrame:
    """Scenario 1's published table (`s1_steady_state.go`: Rate, qdisc, CC1 (RTT), D1, CC2
    (RTT), D2, Jain's): each flow's goodput over the measured window, Jain's index of the
    two, and each flow's mean queueing delay."""
    conns = _table(study, "connections")
    if conns.height == 0:
        return pl.DataFrame()
    span = _measured_s(study)
    rate = conns.group_by(["qdisc", "vs", "rtt", "rep", "source"], maintain_order=True).agg(
        (pl.col("bytes_delivered_measured").sum() * 8 / span / 1e6).alias("mbps")
    )
    delays = class_delays(
        _table(study, "source_delay").filter(pl.col("direction") == UPLOAD),
        ["qdisc", "vs", "rtt", "rep", "source"],
    )
    rows = []
    for (qdisc, vs, rtt, rep), g in rate.group_by(
        ["qdisc", "vs", "rtt", "rep"], maintain_order=True
    ):
        by_source = {r["source"]: r["mbps"] for r in g.iter_rows(named=True)}
        d1, d2 = by_source.get(0, 0.0), by_source.get(1, 0.0)
        cc1, cc2 = vs.split("-vs-")
        rtt1, rtt2 = rtt.split("/")
        row = {
            "qdisc": qdisc,
            "flow 1": f"{cc1} ({rtt1} ms)",
            "D1 (Mb/s)": d1,
            "flow 2": f"{cc2} ({rtt2} ms)",
            "D2 (Mb/s)": d2,
            "D1/D2": d1 / d2 if d2 > 0 else math.nan,
            "Jain's": _jain([d1, d2]),
        }
        if delays.height:
            for s in (0, 1):
                m = delays.filter(
                    (pl.col("qdisc") == qdisc)
                    & (pl.col("vs") == vs)
                    & (pl.col("rtt") == rtt)
                    & (pl.col("rep") == rep)
                    & (pl.col("source") == s)
                )
                row[f"delay {s + 1} (ms)"] = m["mean delay (ms)"][0] if m.height else math.nan
        rows.append(row)
    return pl.DataFrame(rows)


def delay_over_time(
    study: Study, where: Mapping[str, str], direction: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time, queueing delay (backlog / capacity, ms) and throughput (Mb/s) of the first run
    matching the axis labels `where`."""
    runs = study.runs()
    for axis, label in where.items():
        runs = runs.filter(pl.col(axis) == label)
    if runs.height == 0:
        return np.array([]), np.array([]), np.array([])
    rid = runs["run_id"][0]
    res = study.results(rid)
    sc = study.scenario(rid)
    q = res["queue"].filter(pl.col("direction") == direction)
    t = q["t_s"].to_numpy()
    cap = np.full(len(t), float(sc["topology"]["bottleneck_mbps"]))
    for step in sc["topology"].get("bottleneck_steps", []):
        cap[t >= step["at_s"]] = step["mbps"]
    delay = q["mean_bytes"].to_numpy() * 8 / (cap * 1e6) * 1e3
    b = res["bottleneck"].filter(pl.col("direction") == direction)
    return t, delay, np.interp(t, b["t_s"].to_numpy(), b["throughput_mbps"].to_numpy())


class _Report:
    def __init__(self, parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
        self.parts, self.doc, self.scale = parts, doc, scale

    def intro(self) -> None:
        self.doc.paragraph(
            f"Scale: {self.scale}. Senders of the suite's scenarios as its testbed ran them: "
            "TCP Prague of the testbed's kernel (preset linux-prague-2020, L4STeam/linux "
            "b256dae: Accurate ECN, ECT(1), pacing, no RTT independence) and Linux CUBIC with "
            "Accurate ECN (the suite sets net.ipv4.tcp_ecn = 3); the Web part's: linux-prague "
            "and linux-cubic without ECN. Queues at their Linux defaults: DualPI2 (RFC 9332; "
            "target 15 ms, 1 ms "
            "step threshold in the L queue, coupling factor 2), FQ-CoDel (RFC 8290, ECN on) and "
            "pfifo. Every scenario cites its source in its sweep file (shown at the end). Not "
            "modelled: the suite's bursty (netem-slotted) variants and the out-of-tree "
            "cnq_codel_af qdisc. docs/studies.md, 'The L4S pack', gives the mapping."
        )

    def rttfair(self) -> None:
        d = self.doc
        d.heading("Scenario 1: RTT fairness (two flows, each with its RTT and congestion control)")
        for part, rate in (("rttfair_10", "10 Mbit/s"), ("rttfair_50", "50 Mbit/s")):
            t = rttfair_table(self.parts[part])
            if t.height == 0:
                continue
            series: dict[str, tuple[list[str], list[float]]] = {}
            groups = list(dict.fromkeys(t["flow 1"] + " | " + t["flow 2"]))
            for qdisc in dict.fromkeys(t["qdisc"]):
                sub = t.filter(pl.col("qdisc") == qdisc)
                pairs = dict(zip(sub["flow 1"] + " | " + sub["flow 2"], sub["Jain's"], strict=True))
                series[qdisc] = ([pairs.get(g, math.nan) for g in groups], [0.0] * len(groups))
            fig = plots.grouped_bars(
                [g.replace(" | ", "\n") for g in groups], series, "Jain's index", rate
            )
            fig.set_size_inches(max(7.2, 0.45 * len(groups)), 4.6)
            for label in fig.axes[0].get_xticklabels():
                label.set_rotation(90)
                label.set_fontsize(6)
            fig.set_layout_engine("tight")
            d.figure(
                fig,
                f"s1_jain_{part}",
                f"Scenario 1 at {rate}: Jain's index of the two flows' steady-state goodputs",
            )
            d.table(
                t,
                f"Scenario 1 at {rate}: steady-state goodput of each flow (the measured window "
                "at the end of the run), Jain's index, and each flow's mean queueing delay",
            )

    def steps(self) -> None:
        d = self.doc
        study = self.parts["ratestep"]
        runs = study.runs()
        if runs.height:
            d.heading("Scenario 2: a capacity step down at 30 s")
            rows = []
            for r in runs.iter_rows(named=True):
                where = {a: r[a] for a in ("cc", "qdisc", "step", "rtt")}
                t, delay, thr = delay_over_time(study, where, UPLOAD)
                before = delay[(t >= 20) & (t < 30)]
                after_t, after = t[t >= 30], delay[t >= 30]
                peak = int(np.argmax(after)) if after.size else 0
                # The first sample after the peak back under the threshold.
                drained = after_t[peak:][after[peak:] < DRAIN_MS]
                rows.append(
                    {
                        **where,
                        "delay 20-30 s (ms)": float(before.mean()) if before.size else math.nan,
                        "peak after step (ms)": float(after.max()) if after.size else math.nan,
                        f"back < {DRAIN_MS:g} ms after (s)": (
                            round(float(drained[0]) - 30, 3) if drained.size else math.nan
                        ),
                        "throughput 40-60 s (Mb/s)": float(thr[t >= 40].mean())
                        if (t >= 40).any()
                        else math.nan,
                    }
                )
            series = {}
            for cc in dict.fromkeys(runs["cc"]):
                for qdisc in dict.fromkeys(runs["qdisc"]):
                    step = "50->5" if "50->5" in set(runs["step"]) else runs["step"][0]
                    where = {"cc": cc, "qdisc": qdisc, "step": step, "rtt": runs["rtt"][0]}
                    t, delay, _ = delay_over_time(study, where, UPLOAD)
                    series[f"{cc} / {qdisc}"] = (t, delay)
            fig = plots.queue_over_time(
                series, f"Scenario 2: {step}, {where['rtt']}", "queueing delay (ms)"
            )
            d.figure(fig, "s2_delay", "Scenario 2: queueing delay over time (backlog / capacity)")
            d.table(pl.DataFrame(rows), "Scenario 2: per cell")
        study = self.parts["varrate"]
        runs = study.runs()
        if runs.height:
            d.heading("Scenario 3: variable rates (100, 50, 10, 90, 5 Mbit/s)")
            for metric, ylabel, idx in (("delay", "queueing delay (ms)", 1), ("thr", "Mb/s", 2)):
                series = {}
                for r in runs.filter(pl.col("rtt") == runs["rtt"][0]).iter_rows(named=True):
                    out = delay_over_time(study, {"cc": r["cc"], "qdisc": r["qdisc"]}, UPLOAD)
                    series[f"{r['cc']} / {r['qdisc']}"] = (out[0], out[idx])
                d.figure(
                    plots.queue_over_time(series, f"Scenario 3 ({runs['rtt'][0]})", ylabel),
                    f"s3_{metric}",
                    f"Scenario 3: {ylabel} over time",
                )
            delays = class_delays(
                _table(study, "source_delay").filter(pl.col("direction") == UPLOAD),
                ["cc", "qdisc", "rtt"],
            )
            if delays.height:
                d.table(delays, "Scenario 3: the flow's queueing delay over the whole run")

    def web(self) -> None:
        d = self.doc
        study = self.parts["web"]
        if study.runs().height == 0:
            return
        d.heading("Web users: Prague and CUBIC users mixed")
        span = _measured_s(study)
        ex = _table(study, "exchanges")
        scen = study.scenario(study.runs()["run_id"][0])
        classes = {
            (users, i): ("CUBIC" if i in (0, 2) or users == "classic" else "Prague")
            for users in ("classic", "mixed")
            for i in range(len(scen["traffic"]))
        }
        if ex.height:
            warm = float(scen.get("warmup_s", 0.0))
            ex = ex.filter((pl.col("start_s") >= warm) & pl.col("completed"))
            ex = ex.with_columns(
                pl.struct(["users", "source"])
                .map_elements(lambda s: classes[(s["users"], s["source"])], return_dtype=pl.Utf8)
                .alias("class")
            )
            rt = (
                ex.group_by(["qdisc", "users", "class"], maintain_order=True)
                .agg(
                    pl.len().alias("responses"),
                    pl.col("response_time_s").median().alias("median (s)"),
                    pl.col("response_time_s").quantile(0.9).alias("p90 (s)"),
                    pl.col("response_time_s").quantile(0.99).alias("p99 (s)"),
                    (
                        pl.col("response_bytes").sum() * 8 / span / 1e6 / pl.col("rep").n_unique()
                    ).alias("response Mb/s"),
                )
                .sort(["qdisc", "users", "class"])
            )
            d.table(
                rt,
                "Response times of completed responses per class of user (pooled over the "
                "repetitions) and the response bytes each class received per second (both "
                "directions together, mean over the repetitions)",
            )
            curves = {}
            for r in rt.iter_rows(named=True):
                sub = ex.filter(
                    (pl.col("qdisc") == r["qdisc"])
                    & (pl.col("users") == r["users"])
                    & (pl.col("class") == r["class"])
                )
                x = np.sort(sub["response_time_s"].to_numpy())
                curves[f"{r['qdisc']} {r['users']}: {r['class']}"] = (
                    x,
                    np.arange(1, len(x) + 1) / max(len(x), 1),
                )
            d.figure(
                plots.cdf_curves(curves, title="Response times per class"),
                "web_response_cdf",
                "Response time CDF per queue, population and class of user",
            )
        sd = _table(study, "source_delay").filter(pl.col("direction") == RESPONSES)
        if sd.height:
            sd = sd.with_columns(
                pl.struct(["users", "source"])
                .map_elements(lambda s: classes[(s["users"], s["source"])], return_dtype=pl.Utf8)
                .alias("class")
            )
            d.table(
                class_delays(sd, ["qdisc", "users", "class"]).sort(["qdisc", "users", "class"]),
                "Queueing delay of each class's packets at the responses' bottleneck",
            )
        stats = []
        for r in study.runs().iter_rows(named=True):
            core = study.results(r["run_id"]).summary.get("summary") or {}
            q = core.get(f"qdisc_{RESPONSES}") or {}
            if q:
                stats.append({"qdisc": r["qdisc"], "users": r["users"], "rep": r["rep"], **q})
        if stats:
            d.table(
                pl.DataFrame(stats),
                "tc -s qdisc statistics of the responses' bottleneck (cumulative over the run)",
            )


# Scenario 4's columns: the catalog's run metrics and how they read (Flent's rrul_be figures).
BIDIR_COLUMNS = {
    "tcp_goodput_forward_mbps": "TCP upload sum (Mb/s)",
    "tcp_goodput_reverse_mbps": "TCP download sum (Mb/s)",
    "ping.rtt_p50_ms": "ping p50 (ms)",
    "ping.rtt_p95_ms": "ping p95 (ms)",
    "ping.loss_fraction": "ping loss",
}


def bidir_table(study: Study) -> pl.DataFrame:
    """Scenario 4 (rrul_be at asymmetric rates): per congestion control, bandwidth, qdisc and
    RTT, the TCP goodput summed each way over the measured 60 s and the probes' round trips."""
    runs = study.runs()
    if runs.height == 0:
        return pl.DataFrame()
    cols = [c for c in BIDIR_COLUMNS if c in runs.columns]
    out = runs.select(
        "cc",
        pl.col("setup").str.split(" ").list.get(0).alias("up/down (Mbit/s)"),
        pl.col("setup").str.split(" ").list.get(1).alias("qdisc"),
        "rtt",
        *[pl.col(c).alias(BIDIR_COLUMNS[c]) for c in cols],
    )
    return out


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    r = _Report(parts, doc, scale)
    r.intro()
    r.rttfair()
    r.steps()
    if "bidir_asym" in parts:
        t = bidir_table(parts["bidir_asym"])
        if t.height:
            doc.heading("Scenario 4: bi-directional traffic at asymmetric rates (rrul_be)")
            doc.table(
                t,
                "Scenario 4: four TCP flows each way (Flent's rrul_be) and four probes, per "
                "congestion control, uplink/downlink rate, qdisc and RTT: each direction's TCP "
                "goodput summed over the 60 s after Flent's 5-s delay, and the probes' RTT",
            )
    r.web()
