"""Study C: Weigle, Jeffay, Smith, "Quantifying the effects of recent protocol improvements to
standards-track TCP" (extended version, 2005). The design is in `aqmlab/studies/C/*.toml`;
this module regenerates the paper's figures (2-21: request/response sizes, burstiness, the
summary statistics by load, and the response-time CDFs of every pairing) from our runs, with
the same panels and curves. Figure numbers are the paper's. The paper measures the "forward"
path: the responses of the cloud whose clients are on the right (traffic[0])."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from aqmlab.report import plots
from aqmlab.report.html import HtmlDocument
from aqmlab.reproduce import figures
from aqmlab.reproduce.report_common import Curve, curve, describe_runs, show_calibration
from aqmlab.reproduce.runs import Part
from aqmlab.study import Study

TITLE = "Quantifying the effects of recent protocol improvements to standards-track TCP"
CITATION = (
    "M. C. Weigle, K. Jeffay, F. D. Smith, “Quantifying the effects of recent protocol "
    "improvements to standards-track TCP” (extended version), UNC Chapel Hill, 2005 "
    "(MASCOTS 2003)"
)
PARTS = {
    "main": "main.toml",
    "red": "red.toml",
    "one_way": "one_way.toml",
    "uncongested": "uncongested.toml",
}

XMAX_S = 1.5  # §V.E: "CDFs of response times for responses that complete in 1,500 ms or less"
DIRECTION = "forward"  # §V.A: "measurements of the traffic on the 'forward' path"
FORWARD = pl.col("client_side") == "right"  # traffic[0]'s responses cross it
DT = ("DT-111q", "DT-148q")
ARED = ("ARED-5ms", "ARED-60ms")
ECN = ("ARED+ECN-5ms", "ARED+ECN-60ms")
RED_LOADS = ("80%", "90%", "100%")  # Figure 11
# §V.B: 150 intervals per time scale, from 500 s into the simulation.
BURST_SCALES_S = (0.01, 0.1, 1.0, 10.0)
BURST_POINTS = 150
BURST_START_S = 500.0
# §V.D: "at least one 10 MB response has started a transfer before 1,000 s after the warm-up".
BIG_RESPONSE_BYTES = 10_000_000
BIG_RESPONSE_BY_S = 1000.0
UNCONGESTED = "uncongested"
BASE_STYLE = {UNCONGESTED: "k--"}
# The summary statistics of Figures 5-6: column -> axis label.
SUMMARY = (
    ("utilization_pct", "link utilization (%)"),
    ("throughput_mbps", "throughput in (Mb/s)"),
    ("loss_pct", "loss rate (%)"),
    ("flows_with_loss_pct", "flows with loss (%)"),
    ("mean_queue_pkts", "average queue (packets)"),
    ("median_response_ms", "median response time (ms)"),
)


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    p = {name: Part(s, exchange_filter=FORWARD) for name, s in parts.items()}
    _intro(doc, p, scale)
    main = p.get("main")
    if main is None or main.runs.height == 0:
        return
    _traffic(doc, main)
    _baseline(doc, p.get(UNCONGESTED))
    for tcp, num in (("Reno", "5"), ("SACK", "6")):
        _summary(doc, main, tcp, num)
    _figures(doc, p)
    _big_responses(doc, main)


# --- sections --------------------------------------------------------------------------------


def _intro(doc: HtmlDocument, p: Mapping[str, Part], scale: str) -> None:
    doc.heading("Design")
    doc.bullets(
        [
            "Topology (§V.A): 10 Mb/s bottleneck; each side's clouds behind a 20 Mb/s link; "
            "two-way traffic, the forward path measured.",
            "Per-connection RTT (§V.A): PackMime's server-side RTT law, cut at 3.5 s "
            "(the study's own table is not public; see docs/studies.md).",
            "End systems (Table 2): ns-2 Full-TCP, Reno or SACK, IW 2, no delayed ACK, "
            "1,420-byte segments, window 74 segments; ECN-capable in the ECN experiments.",
            "Traffic (§V.B): PackMime-HTTP 1.0 both ways; loads 50-105 % of 10 Mb/s per "
            "direction from a calibration on the 100 Mb/s link (§V.D).",
            "Queues (Table 1): drop-tail 111 and 148 packets; Adaptive RED (packet mode, 5 and "
            "60 ms targets, 370 packets) with and without ECN; original RED for Figure 11.",
            "Runs (§V.D): 120 s warm-up, then until 250,000 exchanges (40 min at most) at full "
            "scale; fewer exchanges at other scales.",
        ]
    )
    part = next((s for s in p.values() if s.runs.height), None)
    if part is not None:
        s = part.scenario(part.runs["run_id"][0])
        doc.paragraph(
            f"Scale '{scale}': warm-up {s['warmup_s']:g} s, then until "
            f"{s.get('max_exchanges', '-')} exchanges or {s['duration_s']:g} s."
        )
    describe_runs(doc, p, scale)
    show_calibration(
        doc,
        p,
        "Mb/s per connection/s of each PackMime cloud in its response direction, measured on "
        "the uncongested network (bottleneck at 100 Mb/s) with that cloud alone; the rates of "
        "a two-way run make each direction carry the load with both clouds' traffic counted "
        "(§V.D; docs/studies.md). Each run's rates are in its summary.json.",
    )


def _traffic(doc: HtmlDocument, main: Part) -> None:
    rid = main.find(tcp="Reno", queue="DT-148q", load="80%") or main.runs["run_id"][0]
    what = _what(main, rid)
    doc.heading("Traffic (§V.A-B)")
    conns = pl.read_parquet(main.path(rid, "connections"), columns=["base_rtt_ms", "start_s"])
    rtt = conns["base_rtt_ms"].to_numpy()
    doc.table(
        [
            {
                "": f"this run ({what})",
                "min (ms)": float(rtt.min()),
                "median (ms)": float(np.median(rtt)),
                "mean (ms)": float(rtt.mean()),
                "90th pct (ms)": float(np.percentile(rtt, 90)),
                "max (ms)": float(rtt.max()),
            },
            {
                "": "paper's design (§V.A)",
                "min (ms)": 1.0,
                "median (ms)": 54.0,
                "mean (ms)": 74.0,
                "90th pct (ms)": 117.0,
                "max (ms)": 3500.0,
            },
        ],
        caption="Per-connection minimum RTT",
        digits=1,
    )
    ex = pl.read_parquet(main.path(rid, "exchanges"), columns=["request_bytes", "response_bytes"])
    doc.figure(
        _size_ccdf(ex),
        "C_fig02_sizes",
        f"Figure 2: request and response sizes, both directions ({what}).",
    )
    arr = pl.read_parquet(main.path(rid, "arrivals"))
    bin_s = plots.burst_bin_s({"scenario": main.scenario(rid)})
    end = float(main.value(rid, "engine.sim_time_s") or main.scenario(rid)["duration_s"])
    start = BURST_START_S if end - BURST_START_S >= BURST_POINTS * BURST_SCALES_S[-1] else 0.0
    pk, by = plots.arrival_counts(arr, DIRECTION, bin_s, start, end)
    for counts, unit, num, what_in in (
        (by / 1e3, "KB", "3", "Bytes"),
        (pk, "packets", "4", "Packets"),
    ):
        series = []
        for scale in BURST_SCALES_S:
            m = round(scale / bin_s)
            agg = counts[: counts.size // m * m].reshape(-1, m).sum(axis=1)[:BURST_POINTS]
            if agg.size:
                series.append((f"{scale:g} s intervals", agg))
        doc.figure(
            figures.intervals(
                series, f"{unit} per interval", f"Figure {num}: {unit} arriving at the router"
            ),
            f"C_fig0{num}_burstiness",
            f"{what_in} arriving at the forward bottleneck queue per interval, "
            f"{BURST_POINTS} intervals from {start:g} s ({what}).",
        )
    from_warmup = plots.arrival_counts(arr, DIRECTION, bin_s, main.warmup(rid), end)
    doc.figure(
        plots.burstiness_cov(from_warmup, bin_s),
        "C_burstiness_cov",
        f"Coefficient of variation per interval length, after the warm-up ({what}).",
    )


def _baseline(doc: HtmlDocument, u: Part | None) -> None:
    """The load each direction carries on the uncongested network, against the nominal load
    (§V.D defines the load as this utilization)."""
    if u is None or u.runs.height == 0:
        return
    rows = []
    for load in u.labels("load"):
        rid = u.find(load=load)
        rates = [t.get("rate") for t in u.scenario(rid)["traffic"]]
        rows.append(
            {
                "nominal load": load,
                "connections/s per cloud": rates[0],
                "forward (Mb/s)": u.value(rid, "forward.throughput_mbps"),
                "reverse (Mb/s)": u.value(rid, "reverse.throughput_mbps"),
            }
        )
    doc.table(
        rows,
        caption="Uncongested network (100 Mb/s), two-way: the load on each direction",
        digits=2,
    )


def _summary(doc: HtmlDocument, main: Part, tcp: str, num: str) -> None:
    rows = []
    for load in main.labels("load"):
        for q in main.labels("queue"):
            rid = main.find(tcp=tcp, queue=q, load=load)
            if rid is not None:
                rows.append({"load": load, "queue": q, **_c_metrics(main, rid)})
    if not rows:
        return
    doc.heading(f"Summary statistics, {tcp} (Figure {num})")
    table = pl.DataFrame(rows)
    doc.figure(
        figures.metric_panels(
            table,
            "load",
            "queue",
            SUMMARY,
            main.labels("load"),
            main.labels("queue"),
            f"Figure {num}: summary statistics for {tcp} at the congested 10 Mb/s link",
        ),
        f"C_fig0{num}_summary_{tcp.lower()}",
    )
    doc.table(_headed(rows), caption=f"{tcp}: forward path, after the warm-up", digits=2)


def _figures(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    main, red, one, u = p["main"], p.get("red"), p.get("one_way"), p.get(UNCONGESTED)
    doc.heading("Response times (Figures 7-21)")
    all_q = tuple(main.labels("queue"))
    specs: list[tuple[str, str, Sequence[tuple[str, str]]]] = [
        ("7", "Reno, all queue managers", [("Reno", q) for q in all_q]),
        ("8", "SACK, all queue managers", [("SACK", q) for q in all_q]),
        ("9", "Reno drop-tail", [("Reno", q) for q in DT]),
        ("10", "Reno drop-tail and Adaptive RED", [("Reno", q) for q in DT + ARED]),
        ("12", "Reno Adaptive RED and Adaptive RED + ECN", [("Reno", q) for q in ARED + ECN]),
        ("13", "Reno drop-tail and Adaptive RED + ECN", [("Reno", q) for q in DT + ECN]),
        ("15", "SACK drop-tail and Adaptive RED", [("SACK", q) for q in DT + ARED]),
        ("16", "SACK Adaptive RED and Adaptive RED + ECN", [("SACK", q) for q in ARED + ECN]),
        ("17", "SACK drop-tail and Adaptive RED + ECN", [("SACK", q) for q in DT + ECN]),
        ("18", "drop-tail, Reno vs SACK", [(t, q) for q in DT for t in ("Reno", "SACK")]),
        ("19", "Adaptive RED, Reno vs SACK", [(t, q) for q in ARED for t in ("Reno", "SACK")]),
        ("20", "Adaptive RED + ECN, Reno vs SACK", [(t, q) for q in ECN for t in ("Reno", "SACK")]),
        (
            "21",
            "Reno DT-148q and Reno ARED+ECN-5ms",
            [("Reno", "DT-148q"), ("Reno", "ARED+ECN-5ms")],
        ),
    ]
    for num, title, cells in sorted(specs, key=lambda s: int(s[0])):
        if num == "12":
            _fig11(doc, main, red, u)
        if num == "15":
            _fig14(doc, main, one, u)
        mixed = len({t for t, _ in cells}) > 1
        panels = []
        for load in main.labels("load"):
            curves: list[Curve] = []
            for tcp, q in cells:
                label = f"{tcp} {q}" if mixed else q
                curves += curve(main, label, XMAX_S, tcp=tcp, queue=q, load=load)
            if curves:
                panels.append(
                    (f"{load} load", [*curves, *curve(u, UNCONGESTED, XMAX_S, load=load)])
                )
        if panels:
            doc.figure(
                figures.cdf_panels(panels, XMAX_S, f"Figure {num}: {title}", styles=BASE_STYLE),
                f"C_fig{int(num):02d}",
            )


def _fig11(doc: HtmlDocument, main: Part, red: Part | None, u: Part | None) -> None:
    if red is None or red.runs.height == 0:
        return
    panels = []
    for load in RED_LOADS:
        curves = [c for q in red.labels("queue") for c in curve(red, q, XMAX_S, queue=q, load=load)]
        curves += [c for q in ARED for c in curve(main, q, XMAX_S, tcp="Reno", queue=q, load=load)]
        if curves:
            panels.append((f"{load} load", [*curves, *curve(u, UNCONGESTED, XMAX_S, load=load)]))
    if panels:
        doc.figure(
            figures.cdf_panels(
                panels, XMAX_S, "Figure 11: RED and Adaptive RED (Reno)", styles=BASE_STYLE
            ),
            "C_fig11",
            "Original RED (w_q = 1/512, max_p = 0.1, not gentle) against Adaptive RED.",
        )


def _fig14(doc: HtmlDocument, main: Part, one: Part | None, u: Part | None) -> None:
    if one is None or one.runs.height == 0:
        return
    panels, rows = [], []
    for load in main.labels("load"):
        two_rid = main.find(tcp="Reno", queue="ARED+ECN-5ms", load=load)
        one_rid = one.find(load=load)
        curves = [
            *curve(one, "1-way", XMAX_S, load=load),
            *curve(main, "2-way", XMAX_S, tcp="Reno", queue="ARED+ECN-5ms", load=load),
        ]
        if curves:
            panels.append((f"{load} load", [*curves, *curve(u, UNCONGESTED, XMAX_S, load=load)]))
        for name, part, rid in (("1-way", one, one_rid), ("2-way", main, two_rid)):
            if rid is not None:
                rows.append({"load": load, "traffic": name, **_c_metrics(part, rid)})
    if panels:
        doc.figure(
            figures.cdf_panels(
                panels, XMAX_S, "Figure 14: Reno ARED+ECN-5ms, 1-way and 2-way", styles=BASE_STYLE
            ),
            "C_fig14",
        )
        doc.table(_headed(rows), caption="Reno ARED+ECN-5ms: one-way and two-way traffic", digits=2)


def _big_responses(doc: HtmlDocument, main: Part) -> None:
    """§V.D's requirement on each run: a response of 10 MB or more started within 1,000 s of
    the end of the warm-up. We do not pick seeds for it; we report whether it holds."""
    rows = []
    for rid in main.runs["run_id"]:
        w = main.warmup(rid)
        ex = pl.scan_parquet(main.path(rid, "exchanges")).filter(
            pl.col("start_s") < w + BIG_RESPONSE_BY_S
        )
        big = ex.select(pl.col("response_bytes").max()).collect().item()
        row = main.runs.filter(pl.col("run_id") == rid).row(0, named=True)
        rows.append(
            {
                "tcp": row["tcp"],
                "queue": row["queue"],
                "load": row["load"],
                "largest response started by then (MB)": (big or 0) / 1e6,
                "≥ 10 MB": "yes" if (big or 0) >= BIG_RESPONSE_BYTES else "no",
            }
        )
    doc.heading("Check: a 10 MB response within 1,000 s after the warm-up (§V.D)")
    doc.paragraph(
        "The paper required each run to start a response of at least 10 MB within 1,000 s "
        "after the warm-up; our runs use fixed seeds, so this reports whether that holds.",
        note=True,
    )
    doc.table(rows, digits=2)


# --- per-run metrics -------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _c_metrics_cached(part: Part, rid: str) -> tuple[tuple[str, Any], ...]:
    w = part.warmup(rid)
    measured = float(part.value(rid, "measured_s") or math.nan)
    arr = (
        pl.scan_parquet(part.path(rid, "arrivals"))
        .filter((pl.col("direction") == DIRECTION) & (pl.col("t_s") >= w))
        .select(pl.col("bytes").sum())
        .collect()
        .item()
    )
    conns = (
        pl.scan_parquet(part.path(rid, "connections"))
        .filter(FORWARD & (pl.col("start_s") >= w))
        .select((pl.col("bottleneck_drops") > 0).mean())
        .collect()
        .item()
    )
    rt = part.response_times(rid)
    out = {
        "utilization_pct": 100 * (part.value(rid, "utilization") or math.nan),
        "throughput_mbps": (arr or 0) * 8 / measured / 1e6,
        "loss_pct": 100 * (part.value(rid, "loss_rate") or 0.0),
        "flows_with_loss_pct": 100 * (conns if conns is not None else math.nan),
        "mean_queue_pkts": part.value(rid, "mean_queue_pkts"),
        "median_response_ms": 1000 * float(np.median(rt)) if rt.size else math.nan,
        "responses": int(rt.size),
    }
    return tuple(out.items())


def _c_metrics(part: Part, rid: str) -> dict[str, Any]:
    return dict(_c_metrics_cached(part, rid))


def _headed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Metric keys replaced by the headers of SUMMARY."""
    names = {**dict(SUMMARY), "responses": "responses measured"}
    return [{names.get(k, k): v for k, v in r.items()} for r in rows]


def _what(part: Part, rid: str) -> str:
    row = part.runs.filter(pl.col("run_id") == rid).to_dicts()[0]
    return ", ".join(str(row[a]) for a in part.axis_labels)


def _size_ccdf(ex: pl.DataFrame):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    for col, label in (("request_bytes", "requests"), ("response_bytes", "responses")):
        v = np.sort(ex[col].to_numpy().astype(float))
        v = v[v > 0]
        if v.size:
            ax.step(v, 1.0 - np.arange(v.size) / v.size, where="post", label=label)
    ax.set(xscale="log", yscale="log", xlabel="size (bytes)", ylabel="P(size ≥ x)")
    ax.set_title("Request and response sizes (CCDF)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fig
