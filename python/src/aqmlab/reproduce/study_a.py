"""Study A: Christiansen, Jeffay, Ott, Smith, "Tuning RED for Web Traffic" (IEEE/ACM ToN 9(3),
2001). The design is in `aqmlab/studies/A/*.toml`; this module regenerates the paper's tables
(App. B Tables 1-4, §5 Tables 3-5, Table 2 of §3) and figures (8-22) from our runs, with the
same rows, columns and groupings. Figure and table numbers are the paper's."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl

from aqmlab.analysis import metrics as mt
from aqmlab.report.html import HtmlDocument
from aqmlab.reproduce import figures
from aqmlab.reproduce.report_common import curve, describe_runs, metric_rows, show_calibration
from aqmlab.reproduce.runs import Part
from aqmlab.study import Study

TITLE = "Tuning RED for Web Traffic"
CITATION = (
    "M. Christiansen, K. Jeffay, D. Ott, F. D. Smith, “Tuning RED for Web Traffic”, "
    "IEEE/ACM Transactions on Networking 9(3), June 2001 (SIGCOMM 2000)"
)
PARTS = {
    "fifo": "fifo.toml",
    "red_thresholds": "red_thresholds.toml",
    "red_ratio": "red_ratio.toml",
    "red_wq_maxp": "red_wq_maxp.toml",
    "red_qlen": "red_qlen.toml",
    "uncongested": "uncongested.toml",
}

XMAX_S = 2.0  # §3.4: CDFs "usually showing only times less than or equal to 2 seconds"
HEAVY = ("90%", "98%", "110%")  # §5: the loads where RED parameters matter
FIG9_LOADS = ("80%", "90%", "98%", "110%")  # Figures 9a-d
RETX_LOAD = "98%"  # §6: the retransmission analysis at 98 % load
RETX_SETTINGS = ("(5,15)", "(60,180)")
SCATTER_BYTES = 16_000  # Figure 21: replies below 16,000 bytes
UNCONGESTED = "uncongested"
BASE_STYLE = {UNCONGESTED: "k--"}


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    p = {name: Part(s) for name, s in parts.items()}
    _intro(doc, p, scale)
    _uncongested(doc, p)
    _fifo(doc, p)
    _red(doc, p)
    _best_and_bad(doc, p)
    _retransmissions(doc, p)
    _compare(doc, p)


# --- sections --------------------------------------------------------------------------------


def _intro(doc: HtmlDocument, p: Mapping[str, Part], scale: str) -> None:
    doc.heading("Design")
    doc.bullets(
        [
            "Topology (§3.1): 7 browser and 7 server hosts on 10 Mb/s links; a 10 Mb/s "
            "bottleneck, one direction per segment; the server-to-browser direction is studied.",
            "Per-connection RTT (App. A Table 1): the 7×7 browser/server matrix, 7-147 ms.",
            "End systems (App. A): FreeBSD 2.2.8 Reno, 16 KB window, delayed ACKs, 500 ms timer.",
            "Traffic (§3.2): Mah's HTTP/1.0 users, started in their stationary regime; loads "
            "50-110 % of 10 Mb/s from a calibration on the 100 Mb/s network (§3.3).",
            "Queues (§4-5): FIFO 30-240 packets; ALTQ RED (packet mode, not gentle), "
            "qlen 480 unless stated; max_p as the paper states it (see docs/studies.md).",
            "Runs (§3.4): 90 min, first 20 min discarded, at full scale; shorter at other scales.",
        ]
    )
    rid = next((s.runs["run_id"][0] for s in p.values() if s.runs.height), None)
    if rid is not None:
        part = next(s for s in p.values() if s.runs.height)
        sc = part.scenario(rid)
        doc.paragraph(
            f"Scale '{scale}': runs of {sc['duration_s']:g} s with the first "
            f"{sc['warmup_s']:g} s discarded."
        )
    describe_runs(doc, p, scale)
    show_calibration(
        doc,
        p,
        "Users per unit of load, measured on the uncongested network (bottleneck at 100 Mb/s) "
        "with the run length of this scale, beside the paper's calibration (§3.3, Figure 4: "
        "about 3,400 users for 10 Mb/s, 3,750 for 11 Mb/s). Each run's population is in its "
        "summary.json.",
        paper={"matrix": 3_400.0},
    )


def _uncongested(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    u = p.get(UNCONGESTED)
    if u is None or u.runs.height == 0:
        return
    doc.heading("Uncongested network (§3.3-3.4)")
    loads = u.labels("load")

    def extra(rid: str) -> dict[str, Any]:
        measured = u.value(rid, "measured_s") or math.nan
        n = u.exchanges(rid, ["start_s"]).height
        users = u.scenario(rid)["traffic"][0].get("users")
        return {"users": users, "requests per 70 min": n * 4200.0 / measured}

    doc.table(
        metric_rows(u, [("load", "load")], columns=(), extra=extra),
        caption="Table 2: requests per 70 minutes on the uncongested network",
        digits=0,
    )
    panels = [(f"{load} load", curve(u, UNCONGESTED, XMAX_S, load=load)) for load in loads]
    doc.figure(
        figures.cdf_panels(panels, XMAX_S, "Figure 8: uncongested (100 Mb/s) network"),
        "A_fig08_uncongested",
        "Response-time CDF on the uncongested network, per load.",
    )
    rid = u.find(load=loads[-1])
    ex = u.exchanges(rid, ["start_s", "response_bytes"], after_warmup=False)
    sec = (
        ex.with_columns(pl.col("start_s").floor().alias("t"))
        .group_by("t")
        .agg(pl.len().alias("requests"), pl.col("response_bytes").sum().alias("bytes"))
    )
    sec = sec.sort("t")
    t = sec["t"].to_numpy()
    doc.figure(
        figures.time_series(
            [("requests", t, sec["requests"].to_numpy())],
            "time (s)",
            "requests started per second",
            f"Figure 5: requests per second ({loads[-1]} load, uncongested)",
        ),
        "A_fig05_requests",
    )
    doc.figure(
        figures.time_series(
            [("bytes", t, sec["bytes"].to_numpy() / 1e3)],
            "time (s)",
            "KB requested per second",
            f"Figure 6: bytes requested per second ({loads[-1]} load, uncongested)",
        ),
        "A_fig06_bytes",
    )


def _fifo(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    f = p.get("fifo")
    if f is None or f.runs.height == 0:
        return
    doc.heading("FIFO (§4)")
    doc.table(
        metric_rows(f, [("load", "Load %"), ("queue", "Queue length")]),
        caption="Table B.1: FIFO results",
    )
    panels = [
        (
            f"{load} load",
            [c for q in f.labels("queue") for c in curve(f, q, XMAX_S, queue=q, load=load)],
        )
        for load in f.labels("load")
        if load in FIG9_LOADS
    ]
    if panels:
        doc.figure(
            figures.cdf_panels(panels, XMAX_S, "Figure 9: FIFO queue lengths", ncols=2),
            "A_fig09_fifo",
            "Response-time CDF per FIFO length (packets) at 80, 90, 98 and 110 % load.",
        )
    q = "120" if "120" in f.labels("queue") else f.labels("queue")[0]
    curves = [c for load in f.labels("load") for c in curve(f, load, XMAX_S, queue=q, load=load)]
    doc.figure(
        figures.cdf_panels([(f"FIFO {q} packets", curves)], XMAX_S, "Figure 10: FIFO by load"),
        "A_fig10_fifo_loads",
    )
    rid = f.find(queue=q, load="98%") or f.runs["run_id"][0]
    ex = f.exchanges(rid, ["start_s", "response_time_s", "completed"], after_warmup=False)
    sec = (
        ex.filter(pl.col("completed"))
        .with_columns(pl.col("start_s").floor().alias("t"))
        .group_by("t")
        .agg(pl.col("response_time_s").mean().alias("mean"))
        .sort("t")
    )
    doc.figure(
        figures.time_series(
            [("mean response time", sec["t"].to_numpy(), sec["mean"].to_numpy())],
            "time (s)",
            "mean response time (s)",
            f"Figure 7: mean response time per second, warm-up included ({_what(f, rid)})",
            marks=[(f.warmup(rid), "end of warm-up")],
        ),
        "A_fig07_startup",
    )


def _red(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    t = p.get("red_thresholds")
    if t is not None and t.runs.height:
        doc.heading("RED: thresholds with max_th = 3·min_th (§5)")
        curves = [
            c for load in t.labels("load") for c in curve(t, load, XMAX_S, red="(30,90)", load=load)
        ]
        doc.figure(
            figures.cdf_panels([("RED (30, 90)", curves)], XMAX_S, "Figure 11: RED by load"),
            "A_fig11_red_loads",
            "w_q = 1/512, max_p = 1/10, min_th = 30, max_th = 90, qlen = 480.",
        )
        panels = [
            (
                f"{load} load",
                [c for r in t.labels("red") for c in curve(t, r, XMAX_S, red=r, load=load)],
            )
            for load in ("90%", "98%")
            if load in t.labels("load")
        ]
        if panels:
            doc.figure(
                figures.cdf_panels(panels, XMAX_S, "Figure 12: RED (min_th, max_th)", ncols=2),
                "A_fig12_red_thresholds",
                "w_q = 1/512, max_p = 1/10, qlen = 480.",
            )
        doc.table(
            metric_rows(t, [("load", "Load %"), ("red", "(min_th, max_th)")]),
            caption="Table B.2: RED results with max_th = 3 × min_th",
        )
        doc.figure(_queue_figure(t, "(30,90)", "98%"), "A_fig01_queue")
    r = p.get("red_ratio")
    if r is not None and r.runs.height:
        doc.heading("RED: the ratio of min_th to max_th (§5)")
        for num, fixed, members in (
            ("3", "max_th fixed at 90", ("(5,90)", "(15,90)", "(30,90)", "(60,90)")),
            ("4", "min_th fixed at 30", ("(30,45)", "(30,60)", "(30,90)", "(30,180)")),
        ):
            rows = _ratio_rows(r, t, members)
            doc.table(rows, caption=f"Table B.{num}: RED results with {fixed}")
            if "90%" in r.labels("load"):
                curves = [c for m in members for c in _ratio_curve(r, t, m, "90%")]
                doc.figure(
                    figures.cdf_panels([("90 % load", curves)], XMAX_S, f"RED, {fixed}"),
                    f"A_fig13_ratio_{num}",
                    ("Figure 13: " if num == "3" else "")
                    + f"{fixed}, w_q = 1/512, max_p = 1/10, qlen = 480.",
                )
    w = p.get("red_wq_maxp")
    if w is not None and w.runs.height:
        doc.heading("RED: w_q and max_p (§5)")
        load = "90%" if "90%" in w.labels("load") else w.labels("load")[0]
        curves = [
            c
            for wq in w.labels("w_q")
            for mp in w.labels("max_p")
            for c in curve(w, f"w_q {wq}, max_p {mp}", XMAX_S, w_q=wq, max_p=mp, load=load)
        ]
        doc.figure(
            figures.cdf_panels([(f"{load} load", curves)], XMAX_S, "Figure 14: w_q and max_p"),
            "A_fig14_wq_maxp",
            "min_th = 30, max_th = 90, qlen = 480.",
        )
        doc.table(
            metric_rows(w, [("load", "Load %"), ("w_q", "w_q"), ("max_p", "max_p")]),
            caption="RED results for w_q and max_p ((30, 90), qlen 480)",
        )
    q = p.get("red_qlen")
    if q is not None and q.runs.height:
        doc.heading("RED: the physical queue (§5)")
        rows = []
        for load in _union_labels(q, t, "load"):
            for qlen in ("480", "160", "120"):
                src, lab = (t, {"red": "(30,90)"}) if qlen == "480" else (q, {"qlen": qlen})
                rows += _one_row(src, {"Load %": load, "Queue length": qlen}, load=load, **lab)
        doc.table(
            rows, caption="Table 3: RED performance with recommended parameters and queue lengths"
        )


def _best_and_bad(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    """Table 4 and Figures 15-16: over every RED run at 90 and 98 %, the settings with the best
    response times (most responses within 1 s), the best link utilization (throughput) and the
    lowest drop rate; and the worst response times."""
    red = _all_red_runs(p)
    if red.height == 0:
        return
    doc.heading("RED: best and bad settings (§5, Table 4, Figures 15-16)")
    doc.paragraph(
        "Chosen by rule over all RED runs of a load: 'best response times' = most responses "
        "within 1 s (the paper's choice was subjective), 'best utilization' = highest "
        "throughput, 'lowest drops' = lowest % drops, 'bad' = fewest responses within 1 s."
    )
    rows, good_panels, bad_panels = [], [], []
    u = p.get(UNCONGESTED)
    for load in ("90%", "98%"):
        at = red.filter(pl.col("load") == load)
        if at.height == 0:
            continue
        picks = {
            "best response times": at.sort(
                ["pct_le_1s", "median_response_s"], descending=[True, False]
            ),
            "best utilization": at.sort("throughput_kBps", descending=True),
            "lowest drops": at.sort("pct_dropped"),
        }
        good = []
        for note, ordered in picks.items():
            r = ordered.row(0, named=True)
            rows.append({"Load": load, "setting": r["setting"], "Notes": note, **_a_metrics(r)})
            good.append((f"{note}: {r['setting']}", r))
        bad_row = at.sort(["pct_le_1s", "median_response_s"], descending=[False, True]).row(
            0, named=True
        )
        bad = [(f"bad: {bad_row['setting']}", bad_row)]
        base = curve(u, UNCONGESTED, XMAX_S, load=load)
        good_panels.append((f"{load} load", [*_red_curves(p, good), *base]))
        bad_panels.append(
            (f"{load} load", [*_red_curves(p, bad), *_red_curves(p, _recommended(at)), *base])
        )
    doc.table(rows, caption="Table 4: empirically determined 'best' RED parameter values")
    doc.figure(
        figures.cdf_panels(
            good_panels, XMAX_S, "Figure 15: 'good' RED settings", ncols=2, styles=BASE_STYLE
        ),
        "A_fig15_good",
    )
    doc.figure(
        figures.cdf_panels(
            bad_panels, XMAX_S, "Figure 16: 'bad' RED settings", ncols=2, styles=BASE_STYLE
        ),
        "A_fig16_bad",
    )


def _retransmissions(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    t = p.get("red_thresholds")
    if t is None:
        return
    found = [(s, t.find(red=s, load=RETX_LOAD)) for s in RETX_SETTINGS]
    found = [(s, rid) for s, rid in found if rid is not None]
    if not found:
        return
    doc.heading(f"Analysis of RED response times (§6), {RETX_LOAD} load")
    rows = []
    for s, rid in found:
        ex = mt.with_retransmission_class(t.exchanges(rid))
        n = ex.height
        row: dict[str, Any] = {"(min_th, max_th)": s, "connections": n}
        for c in mt.RETX_CLASSES:
            row[f"% {c}"] = (
                100.0 * ex.filter(pl.col("retx_class") == c).height / n if n else math.nan
            )
        rows.append(row)
    doc.table(rows, caption="Table 5: connections by retransmission class (%)")
    for s, rid in found:
        ex = t.exchanges(rid)
        num = "17" if s == RETX_SETTINGS[0] else "18"
        doc.figure(
            figures.class_cdfs(ex, 10.0, f"Figure {num}: by retransmission class, {s}"),
            f"A_fig{num}_classes",
        )
    for s, rid in found:
        num = "19" if s == RETX_SETTINGS[0] else "20"
        doc.figure(
            figures.class_contribution(t.exchanges(rid), 10.0, f"Figure {num}: contribution, {s}"),
            f"A_fig{num}_contribution",
        )
    s, rid = found[0]
    doc.figure(
        figures.size_scatter(
            t.exchanges(rid), SCATTER_BYTES, 10.0, f"Figure 21: response time vs reply size, {s}"
        ),
        "A_fig21_scatter",
        "Replies below 16,000 bytes; dark: connections with any retransmission.",
    )


def _compare(doc: HtmlDocument, p: Mapping[str, Part]) -> None:
    f, t, u = p.get("fifo"), p.get("red_thresholds"), p.get(UNCONGESTED)
    if f is None or t is None:
        return
    doc.heading("Comparing FIFO and RED (§7)")
    panels = []
    for load in HEAVY:
        curves = [
            *curve(f, "FIFO 120", XMAX_S, queue="120", load=load),
            *curve(f, "FIFO 190", XMAX_S, queue="190", load=load),
            *curve(t, "RED (30, 90)", XMAX_S, red="(30,90)", load=load),
            *curve(t, "RED (60, 180)", XMAX_S, red="(60,180)", load=load),
            *curve(u, UNCONGESTED, XMAX_S, load=load),
        ]
        if curves:
            panels.append((f"{load} load", curves))
    if panels:
        doc.figure(
            figures.cdf_panels(panels, XMAX_S, "Figure 22: FIFO and RED", styles=BASE_STYLE),
            "A_fig22_fifo_red",
            "The settings the paper recommends: FIFO of 120-190 packets, RED (30, 90) (and "
            "(60, 180)), w_q = 1/512, max_p = 1/10, qlen = 480.",
        )


# --- helpers ---------------------------------------------------------------------------------


def _what(part: Part, rid: str) -> str:
    row = part.runs.filter(pl.col("run_id") == rid).to_dicts()[0]
    return ", ".join(f"{a} {row[a]}" for a in part.axis_labels)


def _a_metrics(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "KB/s": r.get("throughput_kBps"),
        "% drops": r.get("pct_dropped"),
        "mean queue": r.get("mean_queue_pkts"),
        "median resp. (ms)": (r.get("median_response_s") or math.nan) * 1000,
        "% ≤ 1 s": r.get("pct_le_1s"),
        "1 < % ≤ 2 s": r.get("pct_1_2s"),
        "2 < % ≤ 3 s": r.get("pct_2_3s"),
        "% > 3 s": r.get("pct_gt_3s"),
    }


def _one_row(part: Part | None, head: dict[str, Any], **labels: str) -> list[dict[str, Any]]:
    if part is None:
        return []
    rid = part.find(**labels)
    if rid is None:
        return []
    r = part.runs.filter(pl.col("run_id") == rid).row(0, named=True)
    return [{**head, **_a_metrics(r)}]


def _union_labels(a: Part | None, b: Part | None, axis: str) -> list[str]:
    seen = [*(a.labels(axis) if a else []), *(b.labels(axis) if b else [])]
    order = (a.axis_labels.get(axis) if a else None) or []
    return sorted(set(seen), key=lambda v: order.index(v) if v in order else len(order))


def _ratio_rows(r: Part, t: Part | None, members: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = []
    for load in r.labels("load"):
        for m in members:
            src = t if m == "(30,90)" else r
            rows += _one_row(src, {"Load %": load, "(min_th, max_th)": m}, red=m, load=load)
    return rows


def _ratio_curve(r: Part, t: Part | None, m: str, load: str):
    return curve(t if m == "(30,90)" else r, m, XMAX_S, red=m, load=load)


def _queue_figure(t: Part, red: str, load: str):
    rid = t.find(red=red, load=load) or t.runs["run_id"][0]
    q = pl.read_parquet(t.path(rid, "queue")).filter(pl.col("direction") == "reverse")
    start = t.warmup(rid)
    q = q.filter((pl.col("t_s") >= start) & (pl.col("t_s") < start + 120.0))
    return figures.time_series(
        [
            (
                "instantaneous (100 ms means of 3 ms samples)",
                q["t_s"].to_numpy(),
                q["mean_pkts"].to_numpy(),
            ),
            ("weighted average (RED avg)", q["t_s"].to_numpy(), q["aqm_state"].to_numpy()),
        ],
        "time (s)",
        "queue (packets)",
        f"Figure 1: queue length, {_what(t, rid)}, 120 s after the warm-up",
    )


def _setting(s: Mapping[str, Any]) -> str:
    q = s["queue"]
    return (
        f"({q['min_th']:g},{q['max_th']:g}) w_q 1/{round(1 / q['w_q'])} "
        f"max_p {2 * q['max_p']:.2f} qlen {q['limit']}"
    )


def _all_red_runs(p: Mapping[str, Part]) -> pl.DataFrame:
    """Every RED run of every part: load label, setting (the paper's terms: ALTQ max_p),
    part, run id and the metrics."""
    frames = []
    for name in ("red_thresholds", "red_ratio", "red_wq_maxp", "red_qlen"):
        part = p.get(name)
        if part is None or part.runs.height == 0:
            continue
        df = part.runs.filter(pl.col("rep") == 0).select(
            "run_id",
            "load",
            "throughput_kBps",
            "pct_dropped",
            "mean_queue_pkts",
            "median_response_s",
            "pct_le_1s",
            "pct_1_2s",
            "pct_2_3s",
            "pct_gt_3s",
        )
        settings = [_setting(part.scenario(rid)) for rid in df["run_id"]]
        frames.append(df.with_columns(pl.Series("setting", settings), pl.lit(name).alias("part")))
    if not frames:
        return pl.DataFrame()
    # A setting run in two parts (none by design) is counted once.
    return pl.concat(frames, how="diagonal_relaxed").unique(
        ["load", "setting"], keep="first", maintain_order=True
    )


def _recommended(at: pl.DataFrame) -> list[tuple[str, dict[str, Any]]]:
    rec = at.filter(pl.col("setting") == "(30,90) w_q 1/512 max_p 0.10 qlen 480")
    return [("recommended: (30, 90)", rec.row(0, named=True))] if rec.height else []


def _red_curves(p: Mapping[str, Part], picks) -> list:
    out = []
    for label, r in picks:
        x, y = p[r["part"]].cdf(r["run_id"], XMAX_S)
        out.append((label, x, y))
    return out
