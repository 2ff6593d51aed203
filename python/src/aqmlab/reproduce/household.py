"""The household pack (`aqmlab reproduce household`, issue 37): one home's access link shared
by the applications its people run at once — two adaptive video streams, a video call, a voice
call, an online game, a browsing user and a bulk download and upload — at 20, 100 and 1,000
Mb/s down (each with a tenth of that up), through the queue managers an operator chooses
between: a bloated FIFO, FQ-CoDel, CAKE, PIE and DualPI2 (classic senders, and L4S-capable
senders where the application has an L4S mode). A second part runs Flent's RRUL test (four TCP
flows each way beside latency probes) through the same links and queues, with Flent's metrics
and a `.flent.gz` file per run.

The report says, per application and link rate, what each queue gives or costs relative to the
FIFO: each metric's mean over the seeds and the paired difference (every queue runs the same
seeds: common random numbers) with its 95 % Student interval; a difference whose interval holds
zero is reported as one that cannot be told apart. Measured, not judged: which metric matters
is the reader's choice, and the report names each one's source (docs/studies.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from aqmlab.analysis import intervals as iv
from aqmlab.report.html import HtmlDocument
from aqmlab.study import Study

__all__ = [
    "APPLICATIONS",
    "BASELINE",
    "CITATION",
    "HEADING",
    "PARTS",
    "RRUL_METRICS",
    "TITLE",
    "AppMetric",
    "comparison_rows",
    "gains_and_costs",
    "report",
]

TITLE = "Today's household on one access link"
HEADING = "The household pack: video, calls, games, pages and bulk through today's queues"
CITATION = (
    "issue 37's household: one access link shared by DASH video (dash.js rules), a video call, "
    "a voice call (ITU-T G.107 E-model), an online game, HTTP/2 page loads and bulk transfers, "
    "and Flent's RRUL test (flent/tests/rrul.conf: four TCP flows each way and latency probes)"
)
PARTS = {"household": "household.toml", "rrul": "rrul.toml"}
# The queue every other is compared with: the bloated FIFO most home links still have.
BASELINE = "fifo"


@dataclass(frozen=True)
class AppMetric:
    """One application's measure of experience: the catalog column (`runs` table) it is read
    from, how it reads in the report, and which way is better."""

    application: str
    column: str
    label: str
    better: str  # "lower" or "higher"
    digits: int = 2


APPLICATIONS: tuple[AppMetric, ...] = (
    AppMetric("video stream (DASH)", "dash.qoe_per_segment_mean", "QoE per segment", "higher", 0),
    AppMetric("video stream (DASH)", "dash.mean_bitrate_kbps", "bitrate (kb/s)", "higher", 0),
    AppMetric("video stream (DASH)", "dash.rebuffer_ratio_mean", "rebuffering ratio", "lower", 4),
    AppMetric("video stream (DASH)", "dash.startup_s_mean", "startup (s)", "lower", 2),
    AppMetric("video call", "video_call.frame_delay_p95_ms", "frame delay p95 (ms)", "lower", 1),
    AppMetric("video call", "video_call.freeze_ratio", "frozen frames (ratio)", "lower", 4),
    AppMetric("video call", "video_call.receive_mbps", "video rate (Mb/s)", "higher", 3),
    AppMetric("voice call", "voice.mos", "MOS (G.107 E-model)", "higher", 2),
    AppMetric("voice call", "voice.delay_p95_ms", "one-way delay p95 (ms)", "lower", 1),
    AppMetric("voice call", "voice.late_fraction", "late for playout (ratio)", "lower", 4),
    AppMetric("online game", "game.rtt_p50_ms", "RTT p50 (ms)", "lower", 1),
    AppMetric("online game", "game.rtt_p99_ms", "RTT p99 (ms)", "lower", 1),
    AppMetric("browsing (HTTP/2)", "pages.plt_p50_s", "page load p50 (s)", "lower", 3),
    AppMetric("browsing (HTTP/2)", "pages.plt_p95_s", "page load p95 (s)", "lower", 3),
    AppMetric("bulk download", "bulk_download_mbps", "goodput (Mb/s)", "higher", 2),
    AppMetric("bulk upload", "bulk_upload_mbps", "goodput (Mb/s)", "higher", 2),
    AppMetric("ping", "ping.rtt_p50_ms", "RTT p50 (ms)", "lower", 1),
    AppMetric("ping", "ping.rtt_p95_ms", "RTT p95 (ms)", "lower", 1),
)

# Flent's RRUL figures: the TCP sums each way (Mb/s) and the probes' round trips.
RRUL_METRICS: tuple[AppMetric, ...] = (
    AppMetric("RRUL", "tcp_goodput_reverse_mbps", "TCP download sum (Mb/s)", "higher", 2),
    AppMetric("RRUL", "tcp_goodput_forward_mbps", "TCP upload sum (Mb/s)", "higher", 2),
    AppMetric("RRUL", "ping.rtt_p50_ms", "ping p50 (ms)", "lower", 1),
    AppMetric("RRUL", "ping.rtt_p95_ms", "ping p95 (ms)", "lower", 1),
)


def _by_rep(runs: pl.DataFrame, column: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for rep, v in zip(runs["rep"].to_list(), runs[column].to_list(), strict=True):
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out[int(rep)] = float(v)
    return out


def _mean(values: Mapping[int, float]) -> float:
    return math.fsum(values.values()) / len(values) if values else math.nan


def _verdict(i: iv.Interval, better: str, digits: int) -> tuple[str, str]:
    """The paired difference as shown, and `gain`, `cost`, `same` (interval holds zero) or
    `one seed` (no interval)."""
    if i.n == 0 or math.isnan(i.mean):
        return "—", "none"
    if i.half_width is None:
        return f"{i.mean:+.{digits}f} (one seed)", "one seed"
    shown = f"{i.mean:+.{digits}f} ± {i.half_width:.{digits}f}"
    if i.low is not None and i.high is not None and i.low <= 0 <= i.high:
        return shown, "same"
    up = i.mean > 0
    return shown, "gain" if up == (better == "higher") else "cost"


def comparison_rows(
    runs: pl.DataFrame,
    metrics: Sequence[AppMetric],
    queues: Sequence[str],
    baseline: str = BASELINE,
    queue_axis: str = "qdisc",
) -> list[dict[str, object]]:
    """One row per metric present in `runs` (the finished runs of one link rate, one row per
    queue and seed): the application, the metric, then per queue its mean over the seeds and,
    for every queue but the baseline, the paired difference from the baseline (± the 95 %
    half-width) marked ▲ (better), ▼ (worse) or = (cannot be told apart)."""
    rows: list[dict[str, object]] = []
    marks = {"gain": " ▲", "cost": " ▼", "same": " =", "one seed": "", "none": ""}
    for m in metrics:
        if m.column not in runs.columns:
            continue
        per_queue = {q: _by_rep(runs.filter(pl.col(queue_axis) == q), m.column) for q in queues}
        if not any(per_queue.values()):
            continue
        row: dict[str, object] = {"application": m.application, "metric": m.label}
        base = per_queue.get(baseline, {})
        for q in queues:
            mean = _mean(per_queue[q])
            if q == baseline or not base:
                row[q] = f"{mean:.{m.digits}f}" if not math.isnan(mean) else "—"
                continue
            shown, kind = _verdict(iv.paired_interval(per_queue[q], base), m.better, m.digits)
            row[q] = f"{mean:.{m.digits}f} ({shown}){marks[kind]}"
        rows.append(row)
    return rows


def gains_and_costs(
    runs: pl.DataFrame,
    metrics: Sequence[AppMetric],
    queue: str,
    baseline: str = BASELINE,
    queue_axis: str = "qdisc",
) -> dict[str, list[str]]:
    """What `queue` gives and costs against the baseline, by the paired intervals: the metrics
    it improves (`gain`), worsens (`cost`) and those that cannot be told apart (`same`)."""
    out: dict[str, list[str]] = {"gain": [], "cost": [], "same": []}
    for m in metrics:
        if m.column not in runs.columns:
            continue
        mine = _by_rep(runs.filter(pl.col(queue_axis) == queue), m.column)
        base = _by_rep(runs.filter(pl.col(queue_axis) == baseline), m.column)
        if not mine or not base:
            continue
        _, kind = _verdict(iv.paired_interval(mine, base), m.better, m.digits)
        if kind in out:
            out[kind].append(f"{m.application}: {m.label}")
    return out


def _labels(study: Study, axis: str) -> list[str]:
    runs = study.runs()
    return list(dict.fromkeys(runs[axis].to_list())) if axis in runs.columns else []


def _with_bulk_goodput(study: Study, runs: pl.DataFrame) -> pl.DataFrame:
    """`runs` plus each run's bulk goodput per direction (Mb/s over the measured time), from the
    `connections` table's sources of kind `bulk`."""
    if runs.height == 0:
        return runs
    try:
        conns = study.table("connections")
    except KeyError:
        return runs
    scenario = study.scenario(runs["run_id"][0])
    measured = float(scenario["duration_s"]) - float(scenario.get("warmup_s", 0.0))
    traffic = scenario.get("traffic") or []
    for name, direction in (("bulk_download_mbps", "download"), ("bulk_upload_mbps", "upload")):
        sources = [
            i
            for i, t in enumerate(traffic)
            if t.get("kind") == "bulk" and t.get("direction", "download") == direction
        ]
        if not sources or measured <= 0:
            continue
        g = (
            conns.filter(pl.col("source").is_in(sources))
            .group_by("run_id")
            .agg((pl.col("bytes_delivered_measured").sum() * 8 / measured / 1e6).alias(name))
        )
        runs = runs.join(g, on="run_id", how="left")
    return runs


# The delays each application feels, drawn per plan (one cluster per application, one bar per
# queue): the figure's log axis shows the FIFO's seconds beside the AQMs' milliseconds.
DELAYS = (
    "ping.rtt_p95_ms",
    "game.rtt_p99_ms",
    "voice.delay_p95_ms",
    "video_call.frame_delay_p95_ms",
)


def delay_figure(
    runs: pl.DataFrame, queues: Sequence[str], metrics: Sequence[AppMetric], title: str
):
    """Grouped bars: per application delay metric (`DELAYS`, those present), each queue's mean
    over the seeds ± one standard deviation, on a log axis."""
    from aqmlab.report import plots

    names = {m.column: f"{m.application}\n{m.label}" for m in metrics}
    present = [
        c for c in DELAYS if c in names and c in runs.columns and runs[c].drop_nulls().len() > 0
    ]
    if not present:
        return None
    series = {}
    for q in queues:
        sub = runs.filter(pl.col("qdisc") == q)
        means = [float(sub[c].mean() or math.nan) for c in present]
        sds = [float(sub[c].std() or 0.0) if sub.height > 1 else 0.0 for c in present]
        series[q] = (means, sds)
    fig = plots.grouped_bars([names[c] for c in present], series, "ms (log scale)", title)
    fig.axes[0].set_yscale("log")
    fig.set_size_inches(8.0, 4.2)
    return fig


def _section(
    doc: HtmlDocument,
    study: Study,
    metrics: Sequence[AppMetric],
    title: str,
) -> None:
    runs = _with_bulk_goodput(study, study.runs())
    if runs.height == 0:
        doc.paragraph(f"{title}: no finished runs.", note=True)
        return
    queues = _labels(study, "qdisc")
    for rate in _labels(study, "rate"):
        at = runs.filter(pl.col("rate") == rate)
        doc.heading(f"{title} at {rate}", 3)
        fig = delay_figure(
            at, queues, metrics, f"{title}, {rate}: the delays each application meets"
        )
        if fig is not None:
            slug = "".join(ch if ch.isalnum() else "_" for ch in f"{title}_{rate}").lower()
            doc.figure(fig, f"delays_{slug}")
        rows = comparison_rows(at, metrics, queues)
        seeds = at["rep"].n_unique()
        doc.table(
            rows,
            caption=(
                f"{title}, {rate}: mean over {seeds} seed(s) per queue; beside each queue's "
                f"mean its paired difference from {BASELINE} (± the 95 % half-width): ▲ better, "
                "▼ worse, = cannot be told apart"
            ),
        )
        lines = []
        for q in queues:
            if q == BASELINE:
                continue
            gc = gains_and_costs(at, metrics, q)
            gain = "; ".join(gc["gain"]) or "nothing measured"
            cost = "; ".join(gc["cost"]) or "nothing measured"
            lines.append(f"{q} against {BASELINE}: better for {gain}. Worse for {cost}.")
        if lines:
            doc.bullets(lines)


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    doc.paragraph(
        f"Scale: {scale}. Every queue runs the same seeds, so each is compared with the "
        f"{BASELINE} by paired differences over the seeds (Law & Kelton, paired-t). The "
        "stacks, queue settings and applications of each part are in its sweep file (at the "
        "end); docs/studies.md, 'The household pack', gives the sources of every default."
    )
    if "household" in parts:
        doc.heading("Who gains and who pays, per application", 2)
        _section(doc, parts["household"], APPLICATIONS, "Household")
    if "rrul" in parts:
        doc.heading("Flent's RRUL test through the same links and queues", 2)
        _section(doc, parts["rrul"], RRUL_METRICS, "RRUL")
        files = export_flent(parts["rrul"])
        if files:
            doc.paragraph(
                f"Each RRUL run as a Flent data file ({len(files)} files in "
                f"{files[0].parent}): open them with `flent -i FILE -p all_scaled` beside a "
                "testbed's. Upload and download are each TCP flow's own series (the flows are "
                "traced every 0.2 s); the pings are the run's probe flows."
            )


def export_flent(study: Study) -> list[Path]:
    """Every finished RRUL run written as a `.flent.gz` file in STUDY/flent/, named by its
    labels and repetition (`20_2_Mb_s-fq_codel-rep0.flent.gz`)."""
    from aqmlab.analysis import flent_export

    out = study.directory / "flent"
    files = []
    for row in study.runs().iter_rows(named=True):
        name = "-".join(str(row[a]) for a in study.axes) + f"-rep{row['rep']}"
        path = out / flent_export.default_file_name(name)
        flent_export.export(study.run_dir(row["run_id"]), path)
        files.append(path)
    return files
