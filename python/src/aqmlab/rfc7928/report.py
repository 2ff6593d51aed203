"""The pack's report: per section a summary table (scenario x scheme, each cell a verdict with
its numbers), the delay-goodput ellipses over repetitions (RFC 7928 §2.7), the CDFs of the
queueing delay, and the section's own views (the LEDBAT flow's share for §5.4, goodput per
RTT class for §6, delay and goodput over time for §8.2.5-8.2.6); an overall table like
RFC 7928 §13's, scheme x section."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.patches import Ellipse

from aqmlab.report.html import HtmlDocument
from aqmlab.rfc7928 import metrics as mt
from aqmlab.rfc7928 import verdicts as vd
from aqmlab.rfc7928.queues import BASELINE
from aqmlab.rfc7928.sections import NOT_EXPRESSIBLE, Section
from aqmlab.study import Study

__all__ = ["section_metrics", "write"]

TITLE = "RFC 7928 characterization pack"
ALL = "all"  # the scenario label of a section with one scenario


def section_metrics(study: Study, section: Section) -> pl.DataFrame:
    """One row per finished run: `scenario`, `aqm`, `rep`, `run_id` and its metrics."""
    rows = []
    for r in study.runs().iter_rows(named=True):
        m = mt.run_metrics(study.results(r["run_id"]), study.scenario(r["run_id"]))
        scen = r[section.scenario_axis] if section.scenario_axis else ALL
        rows.append(
            {"scenario": scen, "aqm": r["aqm"], "rep": r["rep"], "run_id": r["run_id"], **m}
        )
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def _values(df: pl.DataFrame, scen: str, aqm: str, col: str) -> list[float]:
    if col not in df.columns:
        return []
    sel = df.filter((pl.col("scenario") == scen) & (pl.col("aqm") == aqm))[col]
    return [float(x) for x in sel.to_list() if x is not None]


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if math.isfinite(x)]
    return float(np.mean(xs)) if xs else math.nan


METRIC_NAMES = {
    "goodput_mbps": "goodput",
    "jain": "Jain's index",
    "short_completion_s": "short-transfer completion (median)",
    "lbe_share": "LEDBAT's share",
    "video_frame_delay_p95_ms": "video frame delay p95 (ms)",
}


def _cell(df: pl.DataFrame, section: Section, scen: str, aqm: str, baseline: str | None) -> str:
    delay = _values(df, scen, aqm, "delay_mean_ms")
    if not delay:
        return "no runs"
    metric = _values(df, scen, aqm, section.metric)
    if aqm == baseline:
        word = "baseline"
    elif baseline is None:
        word = "n/a"
    else:
        word = vd.verdict(
            _values(df, scen, baseline, "delay_mean_ms"),
            delay,
            _values(df, scen, baseline, section.metric),
            metric,
            section.higher_is_better,
        )
    p99 = _mean(_values(df, scen, aqm, "delay_p99_ms"))
    text = (
        f"{word}: delay {_mean(delay):.1f} ms (p99 {p99:.0f}),"
        f" {_mean(_values(df, scen, aqm, 'goodput_mbps')):.2f} Mb/s,"
        f" drop {100 * _mean(_values(df, scen, aqm, 'drop_prob')):.2f} %"
    )
    marks = _mean(_values(df, scen, aqm, "mark_prob"))
    if marks > 0:
        text += f", mark {100 * marks:.2f} %"
    if section.metric != "goodput_mbps":
        unit = " s" if section.metric.endswith("_s") else ""
        text += f", {METRIC_NAMES.get(section.metric, section.metric)} {_mean(metric):.3f}{unit}"
    return text


def _scenarios(df: pl.DataFrame, study: Study, section: Section) -> list[str]:
    if section.scenario_axis is None:
        return [ALL]
    plan = [a for a in _axis_labels(study).get(section.scenario_axis, [])]
    have = set(df["scenario"].to_list())
    return [s for s in plan if s in have]


def _axis_labels(study: Study) -> dict[str, list[str]]:
    import json

    plan = json.loads((study.directory / "plan.json").read_text(encoding="utf-8"))
    return {a["name"]: a["labels"] for a in plan["axes"]}


def _ellipses(df: pl.DataFrame, scens: Sequence[str], schemes: Sequence[str], title: str):
    n = len(scens)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, scen in enumerate(scens):
        ax = axes[k // cols][k % cols]
        for i, aqm in enumerate(schemes):
            x = _values(df, scen, aqm, "delay_mean_ms")
            y = _values(df, scen, aqm, "goodput_mbps")
            if not x:
                continue
            c = colors[i % len(colors)]
            ax.scatter(x, y, s=10, color=c, label=aqm)
            e = mt.ellipse(x, y)
            if math.isfinite(e["major"]):
                ax.add_patch(
                    Ellipse(
                        (e["cx"], e["cy"]),
                        2 * e["major"],
                        2 * e["minor"],
                        angle=e["angle"],
                        fill=False,
                        color=c,
                    )
                )
        ax.set_title(scen, fontsize=9)
        ax.set_xlabel("mean queueing delay (ms)")
        ax.set_ylabel("goodput (Mb/s)")
        ax.invert_xaxis()  # RFC 7928 §2.7 / Remy: better is up and to the right
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.set_layout_engine("tight")
    return fig


def _delay_cdfs(study: Study, df: pl.DataFrame, scens: Sequence[str], schemes: Sequence[str]):
    n = len(scens)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for k, scen in enumerate(scens):
        ax = axes[k // cols][k % cols]
        for aqm in schemes:
            ids = df.filter((pl.col("scenario") == scen) & (pl.col("aqm") == aqm))["run_id"]
            hists = []
            for rid in ids:
                try:
                    h = study.results(rid)["queue_delay"]
                except KeyError:
                    continue
                hists.append(mt.first_hop(h).filter(pl.col("direction") == mt.DIRECTION))
            if not hists:
                continue
            h = (
                pl.concat(hists)
                .filter(pl.col("width_ms").is_finite())
                .group_by(["delay_ms", "width_ms"])
                .agg(pl.col("count").sum())
                .sort("delay_ms")
            )
            c = h["count"].to_numpy().astype(float)
            if c.sum() == 0:
                continue
            x = (h["delay_ms"] + h["width_ms"]).to_numpy()
            ax.step(x, np.cumsum(c) / c.sum(), where="post", label=aqm)
        # Linear to 1 ms (one packet at 10 Mb/s is 1.2 ms), logarithmic beyond: the body and
        # the tail of the delays both readable.
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_title(scen, fontsize=9)
        ax.set_xlabel("queueing delay (ms)")
        ax.set_ylabel("CDF")
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    axes[0][0].legend(fontsize=7)
    fig.set_layout_engine("tight")
    return fig


def _rtt_classes(doc: HtmlDocument, df: pl.DataFrame, scens: Sequence[str], schemes: Sequence[str]):
    """RFC 7928 §6.3: the goodput of each RTT class and the ratio of the two flows."""
    rows = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for aqm in schemes:
        xs, ys = [], []
        for scen in scens:
            g0 = _mean(_values(df, scen, aqm, "source0_mbps"))
            g1 = _mean(_values(df, scen, aqm, "source1_mbps"))
            rows.append(
                {
                    "aqm": aqm,
                    "RTT of flow 2": scen,
                    "flow 1 (100 ms), Mb/s": g0,
                    "flow 2, Mb/s": g1,
                    "ratio 2/1": g1 / g0 if g0 > 0 else math.nan,
                    "Jain's": _mean(_values(df, scen, aqm, "jain")),
                }
            )
            xs.append(float(scen.removesuffix("ms")))
            ys.append(g1 / g0 if g0 > 0 else math.nan)
        ax.plot(xs, ys, marker="o", label=aqm)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("base RTT of flow 2 (ms); flow 1: 100 ms")
    ax.set_ylabel("goodput ratio flow 2 / flow 1")
    ax.legend(fontsize=7)
    fig.set_layout_engine("tight")
    doc.figure(
        fig,
        "s6_goodput_ratio",
        "§6.3: goodput ratio of the two flows per RTT (mean over repetitions)",
    )
    plt.close(fig)
    doc.table(rows, "§6.3: goodput per RTT class (mean over repetitions)")


def _lbe_shares(doc: HtmlDocument, df: pl.DataFrame, scens: Sequence[str], schemes: Sequence[str]):
    """RFC 7928 §5.4: the LEDBAT flow's goodput, the others', and LEDBAT's share."""
    rows = []
    for scen in scens:
        for aqm in schemes:
            lbe = _mean(_values(df, scen, aqm, "lbe_mbps"))
            total = _mean(_values(df, scen, aqm, "tcp_goodput_mbps"))
            rows.append(
                {
                    "case": scen,
                    "aqm": aqm,
                    "LEDBAT, Mb/s": lbe,
                    "others, Mb/s": total - lbe,
                    "LEDBAT share": _mean(_values(df, scen, aqm, "lbe_share")),
                    "delay mean (ms)": _mean(_values(df, scen, aqm, "delay_mean_ms")),
                }
            )
    doc.table(
        rows,
        "§5.4: the less-than-best-effort (LEDBAT, TARGET 100 ms) flow: its goodput and share "
        "(mean over repetitions)",
    )


def _over_time(doc: HtmlDocument, study: Study, df: pl.DataFrame, schemes: Sequence[str], key: str):
    """Queueing delay (backlog / capacity) and goodput over time, repetition 0 of each scheme."""
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for aqm in schemes:
        ids = df.filter((pl.col("aqm") == aqm) & (pl.col("rep") == 0))["run_id"]
        if ids.is_empty():
            continue
        rid = ids[0]
        res, scen = study.results(rid), study.scenario(rid)
        q = mt.first_hop(res["queue"]).filter(pl.col("direction") == mt.DIRECTION)
        t = q["t_s"].to_numpy()
        cap = np.full(len(t), float(scen["topology"]["bottleneck_mbps"]))
        for step in scen["topology"].get("bottleneck_steps", []):
            cap[t >= step["at_s"]] = step["mbps"]
        a1.plot(t, q["mean_bytes"].to_numpy() * 8 / (cap * 1e6) * 1e3, label=aqm, lw=0.9)
        b = mt.first_hop(res["bottleneck"]).filter(pl.col("direction") == mt.DIRECTION)
        a2.plot(b["t_s"].to_numpy(), b["throughput_mbps"].to_numpy(), label=aqm, lw=0.9)
    a1.set_ylabel("queueing delay (ms)")
    a2.set_ylabel("throughput (Mb/s)")
    a2.set_xlabel("time (s)")
    a1.legend(fontsize=7)
    fig.set_layout_engine("tight")
    doc.figure(fig, f"{key}_over_time", "Queueing delay and throughput over time (repetition 0)")
    plt.close(fig)


def _hops(doc: HtmlDocument, study: Study, df: pl.DataFrame) -> None:
    """RFC 7928 §10: each hop of the chain (`summary.json`'s `hops`), repetition 0: the
    second AQM's delay and drops beside the first's."""
    rows = []
    for r in df.filter(pl.col("rep") == 0).iter_rows(named=True):
        for h in mt.hop_rows(study.results(r["run_id"]).summary):
            rows.append({"scenario": r["scenario"], "aqm": r["aqm"], **h})
    if rows:
        doc.table(rows, "§10: each hop's forward queue (repetition 0), from summary.json's hops")


def _rule_lines() -> list[str]:
    """The verdict rules as the verdicts module states them: its first paragraph, then one
    line per rule."""
    head, _, rules = vd.RULES.strip().partition("\n\n")
    return [" ".join(head.split())] + [
        "Verdict: " + " ".join(r.split()) for r in rules.split("* ") if r.strip()
    ]


def write(
    out_dir: Path,
    sections: Sequence[Section],
    studies: Mapping[str, Study],
    schemes: Sequence[str],
    scale: str,
    skipped: Sequence[tuple[str, str]],
    sweep_texts: Mapping[str, str],
) -> Path:
    doc = HtmlDocument(TITLE, figure_dir=out_dir / "figures")
    doc.paragraph(
        "The scenarios of RFC 7928 (Kuhn, Natarajan, Khademi, Ros, 'Characterization "
        "Guidelines for Active Queue Management (AQM)', July 2016) that a packet-level "
        f"simulation can express, run by aqmlab at scale '{scale}' for: {', '.join(schemes)}. "
        "Setups: each section's sweep file (at the end), citing the RFC and the ns-3 AQM "
        "evaluation suite (aqm-eval-suite, NITK) for its numbers; docs/rfc7928.md."
    )
    doc.heading("Metrics and verdict rules")
    doc.bullets(
        [
            "Measured on the forward bottleneck (the data direction of every section), after the "
            "warm-up. Goodput (§2.5): TCP bytes delivered to the receivers plus UDP bytes "
            "delivered, in Mb/s. Queueing delay (§2.6): mean, p50, p95 and p99 of the time "
            "packets spent in the bottleneck queue (0.1-ms histogram of every packet). Drop and "
            "mark probability (§2.3): drops (AQM, forced and overflow) and marks over arrivals. "
            "Short-transfer completion time (§2.1) and start-up time (§2.2, connection start to "
            "first data byte): medians over the transfers started after the warm-up. Fairness: "
            "Jain's index of the long-lived TCP flows' goodputs.",
            "Ellipses (§2.7): per scheme, one point per repetition (mean delay, goodput) and the "
            "1-sigma contour of a bivariate normal fitted to the points (semi-axes: square roots "
            "of the eigenvalues of the sample covariance; about 39 % of such a distribution's "
            "mass). The delay axis is reversed: better is up and to the right.",
            *_rule_lines(),
        ]
    )
    if BASELINE not in schemes:
        doc.paragraph(
            "Drop-tail is not among the compared schemes: no verdicts (RFC 7928 §4.3.1 compares "
            "with drop-tail).",
            note=True,
        )
    baseline = BASELINE if BASELINE in schemes else None
    overview: dict[str, dict[str, str]] = {}
    body: list[tuple[Section, Study, pl.DataFrame, list[str]]] = []
    for s in sections:
        study = studies.get(s.key)
        if study is None:
            continue
        df = section_metrics(study, s)
        if df.height == 0:
            continue
        scens = _scenarios(df, study, s)
        body.append((s, study, df, scens))
        row = {"section": f"§{s.rfc} {s.title}"}
        for aqm in schemes:
            words = [_cell(df, s, sc_, aqm, baseline).split(":")[0] for sc_ in scens]
            row[aqm] = ", ".join(f"{words.count(w)} {w}" for w in vd.VERDICTS if words.count(w))
        overview[s.key] = row
    doc.heading("Summary (as RFC 7928 §13): verdicts per section, scheme by scheme")
    doc.table(
        list(overview.values()),
        "Verdicts against drop-tail, counted over the scenarios of each section",
    )
    for s, study, df, scens in body:
        doc.heading(f"§{s.rfc} {s.title}")
        doc.table(
            [
                {"scenario": sc_, **{a: _cell(df, s, sc_, a, baseline) for a in schemes}}
                for sc_ in scens
            ],
            f"§{s.rfc}: verdict and numbers per scenario and scheme (means over repetitions)",
        )
        fig = _ellipses(
            df, scens, schemes, f"§{s.rfc}: delay-goodput per repetition, 1-sigma ellipses"
        )
        doc.figure(
            fig,
            f"{s.key}_ellipses",
            f"§{s.rfc}: delay vs goodput, 1-sigma ellipses over repetitions",
        )
        plt.close(fig)
        fig = _delay_cdfs(study, df, scens, schemes)
        doc.figure(
            fig, f"{s.key}_delay_cdf", f"§{s.rfc}: CDF of the queueing delay (all repetitions)"
        )
        plt.close(fig)
        if s.key == "rtt_fairness":
            _rtt_classes(doc, df, scens, schemes)
        if s.key == "lbe":
            _lbe_shares(doc, df, scens, schemes)
        if s.needs_hops:
            _hops(doc, study, df)
        if s.key in ("varying_congestion", "varying_capacity"):
            _over_time(doc, study, df, schemes, s.key)
        cols = [
            c
            for c in (
                "scenario",
                "aqm",
                "rep",
                "goodput_mbps",
                "delay_mean_ms",
                "delay_p50_ms",
                "delay_p95_ms",
                "delay_p99_ms",
                "drop_prob",
                "mark_prob",
                "jain",
                "lbe_share",
                "short_completion_s",
                "short_startup_s",
                "web_response_s",
            )
            if c in df.columns
        ]
        cols += sorted(c for c in df.columns if c.startswith("source") and c.endswith("_mbps"))
        doc.table(df.select(cols), f"§{s.rfc}: every run", digits=4)
    doc.heading("Not run")
    rows = [{"section": k, "why": why} for k, why in skipped]
    rows += [{"section": f"§{k}", "why": why} for k, why in NOT_EXPRESSIBLE]
    doc.table(rows, "RFC 7928 sections not run, and why")
    for key, text in sweep_texts.items():
        doc.code(text, summary=f"sweep file of section {key!r}")
    return doc.write(out_dir / "report.html")
