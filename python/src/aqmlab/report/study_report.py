"""The HTML report of a study: `aqmlab report DIR` (docs/report.md).

    from aqmlab.report import write_report
    write_report("results/main")                        # results/main/report.html + figures/
    write_report("results/main", group_by=["queue"])    # one figure per scheme, loads as curves

One self-contained HTML file (figures embedded as PNG, no script, nothing fetched) and every
figure as PNG and SVG in a figure folder (default DIR/figures, rewritten by each report). For
Web traffic the report opens with the response-time CDFs per scheme and the summary table;
without exchanges (bulk, FTP, UDP mixes) it shows goodput, loss and queueing delay instead.
The content depends only on the catalog and the run directories (no timestamp), so the same
study gives the same report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from aqmlab.report import study_layout as lay
from aqmlab.report import study_plots as sp
from aqmlab.report import study_summary as ss
from aqmlab.report.html import HtmlDocument
from aqmlab.study import Study

__all__ = ["FIGURE_DIR", "REPORT_FILE", "build_report", "write_report"]

REPORT_FILE = "report.html"
FIGURE_DIR = "figures"
_FIGURE_SUFFIXES = (".png", ".svg")


def write_report(
    study_dir: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    group_by: Sequence[str] | None = None,
    figure_dir: str | os.PathLike | None = None,
) -> Path:
    """Writes the report of the study in `study_dir` to `out` (default DIR/report.html) and its
    figures to `figure_dir` (default DIR/figures, where PNG and SVG files the report did not
    write are removed). `group_by`: the axes whose labels get one figure each (default: all
    but the queue scheme). Returns the report's path."""
    study = Study.open(study_dir)
    figures = Path(figure_dir) if figure_dir is not None else study.directory / FIGURE_DIR
    doc = build_report(study, group_by=group_by, figure_dir=figures)
    written = set(doc.figure_files)
    for old in figures.iterdir() if figures.is_dir() else ():
        if old.suffix in _FIGURE_SUFFIXES and old not in written:
            old.unlink()
    return doc.write(Path(out) if out is not None else study.directory / REPORT_FILE)


def build_report(
    study: Study,
    *,
    group_by: Sequence[str] | None = None,
    figure_dir: str | os.PathLike | None = None,
) -> HtmlDocument:
    """The report as an `HtmlDocument` (not written; figures go to `figure_dir` if given)."""
    layout = lay.layout(study, group_by)
    doc = HtmlDocument(f"Study report: {study.name}", figure_dir=figure_dir)
    runs = study.runs()
    _overview(doc, study, runs)
    if runs.height == 0:
        doc.paragraph("No run has finished: there is nothing to plot yet.")
    elif ss.has_exchanges(runs):
        data = sp.response_times(study)
        doc.heading("Response times")
        doc.paragraph(_CDF_NOTE, note=True)
        _grouped(doc, study, layout, sp.response_time_cdf, data, "response_time_cdf")
        _summary(doc, study, runs, layout)
        doc.heading("Response-time tails")
        doc.paragraph(_CCDF_NOTE, note=True)
        _grouped(doc, study, layout, sp.response_time_ccdf, data, "response_time_ccdf")
        _metrics(doc, study, layout)
        _queues(doc, study, layout)
    else:
        _summary(doc, study, runs, layout)
        _metrics(doc, study, layout)
        _queues(doc, study, layout)
    _failures(doc, study)
    _inputs(doc, study)
    return doc


# --- sections --------------------------------------------------------------------------------

_CDF_NOTE = (
    "Response times of the exchanges that started after the warm-up and completed, pooled over "
    "the repetitions of each curve. The CDF is cut at 2 s: the share of slower responses is "
    "the gap below 1 at the right edge."
)
_CCDF_NOTE = (
    "The same response times as P(response time > t) on log–log axes: the tail of slow "
    "responses. Steps mark retransmission timeouts (a lost SYN waits out the initial timeout)."
)
_QDELAY_NOTE = (
    "Queueing delay of every packet that left the bottleneck queue in the studied direction "
    "after the warm-up, pooled over repetitions."
)
# Grouped figures are drawn at this resolution so that two fit side by side.
_GROUP_DPI = 100


def _overview(doc: HtmlDocument, study: Study, runs: pl.DataFrame) -> None:
    everything = study.runs(status=None)
    counts = {s: everything.filter(pl.col("status") == s).height for s in ("failed", "pending")}
    axes = lay.study_axes(study)
    shape = "; ".join(f"{a.name}: {', '.join(a.labels)}" for a in axes) or "no axis"
    reps = int(everything["rep"].max()) + 1 if everything.height else 0
    text = (
        f"{runs.height} of {everything.height} runs finished"
        + "".join(f", {n} {s}" for s, n in counts.items() if n)
        + f". Axes — {shape}; {reps} repetition{'s' if reps != 1 else ''} per cell "
        "(repetition r of every cell runs with the same seed: common random numbers)."
    )
    doc.paragraph(text)
    if runs.height:
        first = study.scenario(runs["run_id"][0])
        direction = runs["direction"][0]
        versions = sorted(set(zip(runs["aqmlab_version"], runs["core_version"], strict=True)))
        shown = ", ".join(f"aqmlab {a} (core {c})" for a, c in versions)
        doc.paragraph(
            f"Metrics are those of the {direction} bottleneck direction (the one carrying the "
            f"responses), measured after a {first.get('warmup_s', 0):g}-s warm-up of "
            f"{first.get('duration_s', 0):g}-s runs. Simulated with {shown}.",
            note=True,
        )


def _grouped(doc, study, layout, plot, data, name) -> None:
    """One figure per combination of the layout's group-by labels (titled by it)."""
    for where in lay.groups(study.runs(), layout.group_by):
        fig = plot(study, where, curves=layout.curves, data=data)
        doc.figure(fig, _figure_name(name, where), dpi=_GROUP_DPI)


def _figure_name(name: str, where: dict[str, str]) -> str:
    suffix = "_".join(f"{k}_{v}" for k, v in where.items())
    return f"{name}_{suffix}" if suffix else name


def _summary(doc: HtmlDocument, study: Study, runs: pl.DataFrame, layout: lay.Layout) -> None:
    """The cells' table, ordered like the figures: by the group-by axes, then the curves."""
    metrics = ss.summary_metrics(runs)
    table = ss.cell_summary(study, metrics)
    axes = lay.study_axes(study)
    rank = {a.name: {label: i for i, label in enumerate(a.labels)} for a in axes}
    order = [a for a in (*layout.group_by, *layout.curves) if a in rank]
    rows = []
    for r in sorted(table.to_dicts(), key=lambda r: [rank[a][r[a]] for a in order]):
        row = {a: r[a] for a in order}
        row["runs"] = r["runs"]
        for m in metrics:
            row[m.header] = ss.format_mean(r[m.column], r[f"{m.column}_sd"], m.digits)
        rows.append(row)
    spread = bool((table["runs"] > 1).any())
    doc.heading("Summary")
    doc.table(
        rows,
        caption="Per cell: mean over its finished repetitions"
        + (" ± sample standard deviation" if spread else ""),
        align={m.header: "num" for m in metrics},
    )
    doc.paragraph(_explain(metrics), note=True)


def _explain(metrics: list[ss.Metric]) -> str:
    have = {m.column for m in metrics}
    parts = [
        "Throughput: bytes sent on the bottleneck in the studied direction (headers included)"
        "; utilization: fraction of time its transmitter was busy; dropped and loss rate: "
        "queue drops (loss rate: plus link losses) over packets arriving at the queue; mean "
        "queue: the instantaneous queue sampled periodically."
    ]
    if "median_response_s" in have:
        parts.append(
            "Response times and completed exchanges count the exchanges started after the "
            "warm-up (Study A's columns, docs/analysis.md)."
        )
    if "tcp_goodput_mbps" in have:
        parts.append(
            "TCP goodput: application bytes delivered in order after the warm-up; queueing "
            "delay: sojourn time in the bottleneck queue (docs/mixes.md)."
        )
    return " ".join(parts)


def _metrics(doc: HtmlDocument, study: Study, layout: lay.Layout) -> None:
    load = lay.load_axis(lay.study_axes(study))
    if load is None:
        if lay.study_axes(study):
            doc.heading("Metrics per cell")
            doc.paragraph("Mean over repetitions (± standard deviation).", note=True)
            doc.figure(sp.metrics_by_cell(study), "metrics_by_cell")
        return
    doc.heading(f"Metrics against {load}")
    split = [g for g in layout.group_by if g not in (load, lay.REP)]
    curves = [c for c in layout.curves if c != load]
    doc.paragraph("Mean over repetitions (error bars: ± standard deviation).", note=True)
    for where in lay.groups(study.runs(), split):
        fig = sp.metrics_vs_load(study, where=where, curves=curves)
        doc.figure(fig, _figure_name(f"metrics_vs_{load}", where))


def _queues(doc: HtmlDocument, study: Study, layout: lay.Layout) -> None:
    doc.heading("Queue length and queueing delay")
    if "queue" in study.tables():
        doc.paragraph(
            "One representative run per curve: at the highest load, the first label of the "
            "other axes, the first repetition.",
            note=True,
        )
        doc.figure(sp.queue_traces(study), "queue_traces")
    data = sp.queue_delays(study)
    if data.height:
        doc.paragraph(_QDELAY_NOTE, note=True)
        _grouped(doc, study, layout, sp.queue_delay_cdf, data, "queue_delay_cdf")


def _failures(doc: HtmlDocument, study: Study) -> None:
    failed = ss.failed_runs(study)
    pending = study.runs(status="pending").height
    if failed.height == 0 and pending == 0:
        return
    doc.heading("Failed and missing runs")
    if failed.height:
        doc.table(failed, caption="Failed runs (rerun the sweep command to retry them)")
    if pending:
        doc.paragraph(
            f"{pending} planned run{'s have' if pending != 1 else ' has'} not run yet: the "
            "sweep was interrupted; run the same `aqmlab sweep` command to resume."
        )


def _inputs(doc: HtmlDocument, study: Study) -> None:
    doc.heading("Inputs")
    sweep_file = study.directory / "sweep.toml"
    if sweep_file.is_file():
        doc.paragraph("The sweep file as given to `aqmlab sweep`:")
        doc.code(sweep_file.read_text(encoding="utf-8"))
    doc.paragraph(
        "The resolved scenario of each cell (TCP preset expanded, `load` turned into a "
        "population), shown for its first repetition; the others differ only in the seed."
    )
    everything = study.runs(status=None)
    axes = [a.name for a in lay.study_axes(study)]
    cells = (
        everything.group_by(axes, maintain_order=True).agg(pl.col("run_id"))
        if axes
        else (everything.select(pl.col("run_id").implode()))
    )
    for row in cells.iter_rows(named=True):
        ids = row["run_id"]
        scenario = study.scenario(ids[0])
        label = lay.title({a: row[a] for a in axes}) or "the study"
        doc.code(
            json.dumps(scenario, indent=2, ensure_ascii=False),
            summary=f"{label} (runs {', '.join(ids)})",
        )
    calibration = study.directory / "calibration.json"
    if calibration.is_file():
        doc.code(
            calibration.read_text(encoding="utf-8"),
            summary="calibration.json: the load calibrations the sweep used",
        )
