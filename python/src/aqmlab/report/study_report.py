"""The HTML report of a study: `aqmlab report DIR` (docs/report.md).

    from aqmlab.report import write_report
    write_report("results/main")                        # results/main/report.html + figures/
    write_report("results/main", group_by=["queue"])    # one figure per scheme, loads as curves

One self-contained HTML file (figures embedded as PNG, no script, nothing fetched) and every
figure as PNG and SVG in a figure folder (default DIR/figures, rewritten by each report). For
Web traffic the report opens with the schemes ranked by median response time (a table and a
dot-and-whisker figure per load), then the response-time CDFs and the summary table;
without exchanges (bulk, FTP, UDP mixes) it shows goodput, loss and queueing delay instead.
Means over repetitions come with 95 % Student t confidence intervals ("no interval (1
repetition)" with one).
The content depends only on the catalog and the run directories (no timestamp), so the same
study gives the same report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from aqmlab.analysis import intervals as iv
from aqmlab.report import paired, per_source
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
        _ranking(doc, study, layout, data)
        doc.heading("Response times")
        doc.paragraph(_CDF_NOTE, note=True)
        _grouped(doc, study, layout, sp.response_time_cdf, data, "response_time_cdf")
        _summary(doc, study, runs, layout)
        _per_source(doc, study, layout)
        doc.heading("Response-time tails")
        doc.paragraph(_CCDF_NOTE, note=True)
        _grouped(doc, study, layout, sp.response_time_ccdf, data, "response_time_ccdf")
        _metrics(doc, study, layout)
        _queues(doc, study, layout)
    else:
        _summary(doc, study, runs, layout)
        _per_source(doc, study, layout)
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
_RANKING_NOTE = (
    "Each run's median and 90th percentile of its response times (the exchanges that started "
    "after the warm-up and completed), averaged over the cell's repetitions. Every scheme "
    "runs with the same seeds (common random numbers), so a difference between two schemes "
    "is usually more certain than their overlapping intervals suggest."
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
        from aqmlab.scenario.direction_names import label

        first = study.scenario(runs["run_id"][0])
        direction = runs["direction"][0]
        versions = sorted(set(zip(runs["aqmlab_version"], runs["core_version"], strict=True)))
        shown = ", ".join(f"aqmlab {a} (core {c})" for a, c in versions)
        doc.paragraph(
            f"Metrics are those of the {label(direction)} bottleneck direction (the one "
            f"carrying the responses; `{direction}` in the tables), measured after a "
            f"{first.get('warmup_s', 0):g}-s warm-up of "
            f"{first.get('duration_s', 0):g}-s runs. Simulated with {shown}.",
            note=True,
        )
        _what_ran(doc, [study.scenario(r) for r in runs["run_id"]])


def _what_ran(doc: HtmlDocument, scenarios: Sequence[dict]) -> None:
    """Which TCP stacks and queue settings ran (`aqmlab.scenario.stack`), and a note where a
    marking queue met senders without ECN."""
    from aqmlab.scenario import stack

    stacks = dict.fromkeys(s for sc_ in scenarios for s in stack.describe_stacks(sc_))
    queues = dict.fromkeys(stack.describe_queue(sc_.get("queue") or {}) for sc_ in scenarios)
    doc.paragraph(
        f"TCP: {'; '.join(stacks)}. Queues: {'; '.join(queues)}.",
        note=True,
    )
    for note in dict.fromkeys(n for sc_ in scenarios if (n := stack.ecn_note(sc_))):
        doc.paragraph(f"Note: {note}.", note=True)


def _grouped(doc, study, layout, plot, data, name) -> None:
    """One figure per combination of the layout's group-by labels (titled by it)."""
    for where in lay.groups(study.runs(), layout.group_by):
        fig = plot(study, where, curves=layout.curves, data=data)
        doc.figure(fig, _figure_name(name, where), dpi=_GROUP_DPI)


def _figure_name(name: str, where: dict[str, str]) -> str:
    suffix = "_".join(f"{k}_{v}" for k, v in where.items())
    return f"{name}_{suffix}" if suffix else name


def _plan_order(study: Study, axes: Sequence[str]):
    """A sort key putting rows in the axes' label order (plan order), `axes` first to last."""
    rank = {a.name: {label: i for i, label in enumerate(a.labels)} for a in lay.study_axes(study)}
    return lambda row: [rank[a][row[a]] for a in axes if a in rank]


def _ranking(doc: HtmlDocument, study: Study, layout: lay.Layout, data: pl.DataFrame) -> None:
    """Per group of the figures, the curves ranked by their mean median response time: a table
    (with the intervals) and a dot-and-whisker figure per group."""
    table = ss.response_time_quantiles(study, data)
    if table.height == 0:
        return
    groups = [a for a in layout.group_by if a in table.columns]
    curves = [a for a in layout.curves if a in table.columns]
    median = ss.QUANTILES[0][0]
    rows = []
    group_list, ranked = [], []
    for where in lay.groups(table, groups):
        cells = table.filter(*(pl.col(k) == v for k, v in where.items())).to_dicts()
        cells.sort(key=lambda r: (r[median], _plan_order(study, curves)(r)))
        group_list.append(where)
        ranked.append(
            [
                {"labels": {a: r[a] for a in curves}, "plan": _plan_order(study, curves)(r)}
                for r in cells
            ]
        )
        for rank, r in enumerate(cells, 1):
            row = {**where, "rank": rank, **{a: r[a] for a in curves}, "runs": r["runs"]}
            for column, header, _ in ss.QUANTILES:
                row[header] = ss.format_interval(r[column], r[f"{column}_ci"], 3)
            rows.append(row)
    doc.heading("Response times at a glance")
    per = f", per {' and '.join(groups)}" if groups else ""
    doc.table(
        rows,
        caption=f"Ranked by median response time{per}: mean over the repetitions; "
        + ss.interval_caption(table["runs"], "in brackets"),
        align={header: "num" for _, header, _ in ss.QUANTILES},
    )
    doc.paragraph(_RANKING_NOTE, note=True)
    for where in lay.groups(table, groups):
        fig = sp.response_time_ranking(study, where, curves=layout.curves, table=table)
        doc.figure(fig, _figure_name("response_time_ranking", where), dpi=_GROUP_DPI)
    _paired(doc, study, data, group_list, ranked)


def _paired(doc: HtmlDocument, study: Study, data: pl.DataFrame, groups, ranked) -> None:
    """The ranking's paired differences (`report.paired`): every scheme ran the same seeds."""
    axes = [a.name for a in lay.study_axes(study)]
    per_run = (
        data.group_by(["run_id", *axes], maintain_order=True)
        .agg(pl.col("response_time_s").median().alias("median_s"))
        .join(study.runs().select("run_id", "rep"), on="run_id")
    )
    rows = paired.paired_rows(per_run, groups, ranked, "median_s")
    if not rows:
        return
    doc.table(
        rows,
        caption="Paired differences of the median response time (s), this scheme minus the "
        "other, repetition by repetition (the same seed: common random numbers), with the "
        f"{iv.LEVEL * 100:.0f} % Student interval of the differences; where the interval "
        "contains 0 the two cannot be told apart",
    )


def _per_source(doc: HtmlDocument, study: Study, layout: lay.Layout) -> None:
    """Per cell and traffic source: goodput and queueing delay (`report.per_source`)."""
    order = [*layout.group_by, *layout.curves]
    table = per_source.per_source(study, order)
    if table.height == 0:
        return
    doc.heading("Per source: what each queue gives and costs")
    plan = _plan_order(study, order)
    rows = []
    for r in sorted(table.to_dicts(), key=lambda r: (plan(r), r["source"])):
        row = {**{a: r[a] for a in order}, "source": r["source"], "runs": r.get("runs")}
        for col in ("goodput (Mb/s)", "p50 delay (ms)", "p99 delay (ms)"):
            if col in r:
                v = r[col]
                row[col] = "–" if v is None else f"{v:,.3f}" if "Mb/s" in col else f"{v:,.1f}"
        rows.append(row)
    fig = sp.source_traces(study)
    if fig is not None:
        doc.figure(fig, "source_traces")
    doc.table(
        rows,
        caption="Per traffic source, means over the repetitions: TCP goodput delivered in "
        "order after the warm-up, and the queueing delay of the source's packets at the "
        "bottleneck in the direction that carries its data (its download or upload)",
        align={c: "num" for c in ("goodput (Mb/s)", "p50 delay (ms)", "p99 delay (ms)")},
    )


def _summary(doc: HtmlDocument, study: Study, runs: pl.DataFrame, layout: lay.Layout) -> None:
    """The cells' table, ordered like the figures: by the group-by axes, then the curves; the
    load basis explained beside it."""
    metrics = ss.summary_metrics(runs)
    table = ss.cell_summary(study, metrics)
    order = [*layout.group_by, *layout.curves]
    rows = []
    for r in sorted(table.to_dicts(), key=_plan_order(study, order)):
        row = {a: r[a] for a in order if a in r}
        row["runs"] = r["runs"]
        for m in metrics:
            row[m.header] = ss.format_mean(r[m.column], r[f"{m.column}_ci"], m.digits)
        rows.append(row)
    doc.heading("Summary")
    doc.table(
        rows,
        caption="Per cell: mean over its finished repetitions; "
        + ss.interval_caption(table["runs"], "± the half-width of"),
        align={m.header: "num" for m in metrics},
    )
    doc.paragraph(_explain(metrics), note=True)
    basis = _load_basis(study, table)
    if basis:
        doc.paragraph(basis, note=True)


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


def _load_basis(study: Study, table: pl.DataFrame) -> str | None:
    """Why utilization reads below `load`, with this study's numbers; None when no run had its
    population calibrated from a `load` (plan.json names the calibrations used)."""
    try:
        plan = json.loads((study.directory / "plan.json").read_text(encoding="utf-8"))
        used = [c for r in plan.get("runs", []) for c in r.get("calibration") or []]
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    if not used:
        return None
    two_way = any(c.get("load_basis") == "two_way" for c in used)
    counted = (
        "one side's responses plus the other side's requests and ACKs (load_basis = \"two_way\")"
        if two_way
        else "the responses alone"
    )
    text = (
        "Load and utilization. A Web source's `load` is the offered load the cell aims at, as "
        "a fraction of the bottleneck capacity in the responses' direction, counting "
        f"{counted}. It is not measured in these runs: the load calibration (docs/analysis.md, "
        '"Load calibration") measured the throughput the traffic offers on an uncongested '
        "copy of the network (bottleneck ten times faster, no loss) at a few populations and "
        "fitted a line through the origin; each cell runs the population at which that line "
        "reaches the load. Utilization is measured on the congested bottleneck: the share of "
        "time it was busy sending, retransmissions included. The two differ because the line "
        "is a fit: Web traffic's heavy-tailed response sizes make the load a run offers vary"
    )
    off = _calibration_spread(study, {c.get("key") for c in used})
    if off is not None:
        text += f" (this calibration's points lie {off[0]:+.1f} % to {off[1]:+.1f} % of the "
        text += "capacity off its line)"
    text += (
        "; because on the congested link losses and queueing slow the transfers down, and "
        "what is still unsent when the run ends is not counted"
    )
    text += "." if two_way else "; and because utilization also counts the requests and ACKs."
    load = lay.load_axis(lay.study_axes(study))
    if load is not None and "utilization" in table.columns:
        ranges = []
        for (label,), part in table.partition_by(load, as_dict=True, maintain_order=True).items():
            u = part["utilization"]
            ranges.append(f"load {label}: {u.min():.1f}–{u.max():.1f} %")
        text += " Mean utilization over the cells, " + "; ".join(ranges) + "."
    return text


def _calibration_spread(study: Study, keys: set) -> tuple[float, float] | None:
    """(lowest, highest) distance of the calibration points of `keys` from their fitted line,
    in per cent of the capacity; None without calibration.json."""
    try:
        doc = json.loads((study.directory / "calibration.json").read_text(encoding="utf-8"))
        off = [
            100 * (p["load_mbps"] - e["slope_mbps"] * p["population"]) / e["capacity_mbps"]
            for k, e in doc["entries"].items()
            if k in keys
            for p in e["points"]
        ]
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None
    return (min(off), max(off)) if off else None


def _metrics(doc: HtmlDocument, study: Study, layout: lay.Layout) -> None:
    load = lay.load_axis(lay.study_axes(study))
    if load is None:
        if lay.study_axes(study):
            doc.heading("Metrics per cell")
            doc.paragraph(_bars_note(study, "error bars"), note=True)
            doc.figure(sp.metrics_by_cell(study), "metrics_by_cell")
        return
    doc.heading(f"Metrics against {load}")
    split = [g for g in layout.group_by if g not in (load, lay.REP)]
    curves = [c for c in layout.curves if c != load]
    doc.paragraph(_bars_note(study, "error bars"), note=True)
    for where in lay.groups(study.runs(), split):
        fig = sp.metrics_vs_load(study, where=where, curves=curves)
        doc.figure(fig, _figure_name(f"metrics_vs_{load}", where))


def _bars_note(study: Study, what: str) -> str:
    cells = ss.cell_summary(study, [])
    return "Mean over repetitions; " + ss.interval_caption(cells["runs"], f"{what}:") + "."


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
