"""Figures of a whole study, straight from a `Study` (docs/report.md). Every function returns a
matplotlib `Figure`; nothing is shown or written.

    from aqmlab.study import Study
    from aqmlab.report import study_plots
    study = Study.open("results/main")
    study_plots.response_time_cdf(study, where={"load": "0.9"})   # one curve per scheme
    study_plots.metrics_vs_load(study)                            # utilization, loss, ... by load
    study_plots.queue_traces(study)                               # one run per scheme

- `response_time_cdf` / `response_time_ccdf`: response times of completed exchanges started
  after the warm-up, pooled over the repetitions of each curve (CDF to 2 s; CCDF log–log).
- `queue_delay_cdf`: the bottleneck's queueing delay in the studied direction.
- `response_time_ranking`: the median and 90th percentile of the response times per curve,
  sorted by median, each a mean over the repetitions with its 95 % confidence interval (dot
  and whisker).
- `metrics_vs_load`: four metrics of the summary against the load axis, mean over repetitions
  with 95 % confidence intervals; `metrics_by_cell`: the same as bars without a load axis.
- `queue_traces`: the queue length over time of one representative run per curve.

`where` fixes axis labels ({"load": "0.9"}); `curves` names the axes whose combinations get
one curve each (default: every axis not in `where`). Long inputs are plotted on grids of about
a thousand points, exact at those points, so figures stay small whatever the run length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from aqmlab.analysis import metrics as mt
from aqmlab.analysis.directions import first_hop
from aqmlab.report import study_layout as lay
from aqmlab.report import study_summary as ss
from aqmlab.report.per_source import source_names

__all__ = [
    "metrics_by_cell",
    "metrics_vs_load",
    "queue_delay_cdf",
    "queue_delays",
    "queue_traces",
    "representative_runs",
    "response_time_ccdf",
    "response_time_cdf",
    "response_time_ranking",
    "response_times",
    "source_traces",
]

GROUP_FIGSIZE = (5.6, 3.5)  # at 100 dpi two side by side fit the report's width
_GRID_POINTS = 1000
_CURVE = "_curve"


# --- data ------------------------------------------------------------------------------------


def response_times(study) -> pl.DataFrame:
    """Completed exchanges that started after their run's warm-up: `run_id`, the axis labels,
    `rep` and `response_time_s`, every finished run (empty when no run has exchanges)."""
    keys = ["run_id", *study.axes]
    try:
        ex = study.table("exchanges", columns=["start_s", "completed", "response_time_s"])
    except KeyError:
        return _empty(study, {"response_time_s": pl.Float64})
    warmup = _warmups(study, ex["run_id"].unique(maintain_order=True).to_list())
    return (
        ex.join(warmup, on="run_id")
        .filter(
            pl.col("completed")
            & (pl.col("start_s") >= pl.col("_warmup_s"))
            & pl.col("response_time_s").is_not_nan()
        )
        .select([*keys, "response_time_s"])
    )


def queue_delays(study) -> pl.DataFrame:
    """The queueing-delay histograms of the finished runs in each run's studied direction:
    `run_id`, the axis labels, `rep`, `delay_ms` (bin lower edge), `width_ms`, `count`."""
    directions = study.runs().select("run_id", pl.col("direction").alias("_studied"))
    try:
        qd = study.table("queue_delay")
    except KeyError:
        qd = None
    if qd is None or qd.height == 0:
        return _empty(study, {"delay_ms": pl.Float64, "width_ms": pl.Float64, "count": pl.UInt64})
    return (
        qd.join(directions, on="run_id")
        .filter(pl.col("direction") == pl.col("_studied"))
        .drop("_studied", "direction")
    )


def _empty(study, columns: Mapping[str, Any]) -> pl.DataFrame:
    """No rows, with the key columns of `Study.table` and `columns`."""
    keys = {k: pl.Int64 if k == lay.REP else pl.String for k in ["run_id", *study.axes]}
    return pl.DataFrame(schema={**keys, **columns})


def _warmups(study, run_ids: Sequence[str]) -> pl.DataFrame:
    values = [float(study.scenario(r).get("warmup_s") or 0.0) for r in run_ids]
    return pl.DataFrame({"run_id": list(run_ids), "_warmup_s": values})


# --- selection -------------------------------------------------------------------------------


def _where(frame: pl.DataFrame, where: Mapping[str, Any] | None) -> pl.DataFrame:
    for k, v in (where or {}).items():
        frame = frame.filter(pl.col(k).cast(pl.String) == str(v))
    return frame


def _curve_axes(study, where, curves) -> tuple[str, ...]:
    if curves is not None:
        return tuple(curves)
    fixed = set(where or {})
    return tuple(a.name for a in lay.study_axes(study) if a.name not in fixed)


def _with_curve(frame: pl.DataFrame, curves: Sequence[str]) -> pl.DataFrame:
    if not curves:
        return frame.with_columns(pl.lit("all runs").alias(_CURVE))
    parts = [pl.col(c).cast(pl.String) for c in curves]
    return frame.with_columns(pl.concat_str(parts, separator=", ").alias(_CURVE))


def _split(study, data, where, curves) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """The rows of `data` matching `where`, one frame per curve label in plan order, and the
    study-wide color of each label."""
    axes = _curve_axes(study, where, curves)
    colors = lay.curve_colors(study.runs(), axes)
    parts = _with_curve(_where(data, where), axes).partition_by(_CURVE, as_dict=True)
    frames = {k[0]: v for k, v in parts.items()}
    return {lab: frames[lab] for lab in colors if lab in frames}, colors


def _curves_figure(study, data, where, curves, draw) -> tuple[Figure, Any]:
    """A figure of GROUP_FIGSIZE with `draw(ax, frame, color, label)` called per curve."""
    fig = Figure(figsize=GROUP_FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    frames, colors = _split(study, data, where, curves)
    for label, part in frames.items():
        draw(ax, part, colors[label], label)
    return fig, ax


def _finish(ax, what: str, where, xlabel: str, ylabel: str) -> None:
    """Labels, grid (minor lines too on log axes), title with the group, legend at the right."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both" if ax.get_xscale() == "log" else "major", alpha=0.3)
    ax.set_title(f"{what}: {lay.title(where)}" if where else what, fontsize="medium")
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


# --- response times --------------------------------------------------------------------------


def response_time_cdf(
    study,
    where: Mapping[str, Any] | None = None,
    *,
    curves: Sequence[str] | None = None,
    data: pl.DataFrame | None = None,
    xmax_s: float = 2.0,
) -> Figure:
    """CDF of response times on [0, `xmax_s`] s, one curve per combination of the `curves`
    axes (the share above `xmax_s` is the gap below 1 at the right edge). `data`: the frame
    of `response_times(study)`, to read it once for many figures."""
    grid = np.linspace(0.0, xmax_s, _GRID_POINTS + 1)

    def draw(ax, part: pl.DataFrame, color, label: str) -> None:
        cdf = mt.ecdf_at(part["response_time_s"].to_numpy(), grid)
        ax.plot(grid, cdf, drawstyle="steps-post", color=color, label=label)

    data = response_times(study) if data is None else data
    fig, ax = _curves_figure(study, data, where, curves, draw)
    ax.set_xlim(0, xmax_s)
    ax.set_ylim(0, 1)
    _finish(ax, "Response time CDF", where, "response time (s)", "cumulative probability")
    return fig


def response_time_ccdf(
    study,
    where: Mapping[str, Any] | None = None,
    *,
    curves: Sequence[str] | None = None,
    data: pl.DataFrame | None = None,
) -> Figure:
    """P(response time > t) against t, log–log, one curve per combination of the `curves`
    axes, down to one exchange in the pooled sample (the tail)."""

    def draw(ax, part: pl.DataFrame, color, label: str) -> None:
        rt = np.sort(part["response_time_s"].to_numpy())
        rt = rt[rt > 0]
        if rt.size == 0:
            return
        grid = np.geomspace(rt[0], rt[-1], _GRID_POINTS) if rt[-1] > rt[0] else rt[:1]
        p = 1.0 - mt.ecdf_at(rt, grid, presorted=True)
        keep = p > 0
        ax.plot(grid[keep], p[keep], drawstyle="steps-post", color=color, label=label)

    data = response_times(study) if data is None else data
    fig, ax = _curves_figure(study, data, where, curves, draw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _finish(ax, "Response time CCDF", where, "response time t (s)", "P(response time > t)")
    return fig


def response_time_ranking(
    study,
    where: Mapping[str, Any] | None = None,
    *,
    curves: Sequence[str] | None = None,
    table: pl.DataFrame | None = None,
) -> Figure:
    """Two panels, the median and the 90th percentile of the response times, one dot per
    curve, best median at the top: means over the repetitions of each run's quantile,
    whiskers the 95 % Student t interval (none with one repetition). `table`:
    `study_summary.response_time_quantiles(study, response_times(study))`, to compute it
    once for many figures."""
    if table is None:
        table = ss.response_time_quantiles(study, response_times(study))
    frames, colors = _split(study, table, where, curves)
    order = sorted(frames, key=lambda lab: frames[lab][ss.QUANTILES[0][0]].mean())
    fig = Figure(figsize=GROUP_FIGSIZE, layout="constrained")
    panels = fig.subplots(1, len(ss.QUANTILES), sharey=True)
    for ax, (column, header, _) in zip(panels, ss.QUANTILES, strict=True):
        for y, label in enumerate(order):
            part = frames[label]
            half = part[f"{column}_ci"][0] if part.height == 1 else None
            ax.errorbar(
                [part[column].mean()],
                [y],
                xerr=None if half is None else [[half], [half]],
                marker="o",
                ms=6,
                capsize=3,
                color=colors[label],
            )
        ax.margins(x=0.1)
        ax.set_xlim(left=0)
        ax.set_xlabel(header)
        ax.grid(True, axis="x", alpha=0.3)
    panels[0].set_yticks(range(len(order)), order)
    panels[0].set_ylim(len(order) - 0.5, -0.5)
    what = "Response time, ranked by median"
    fig.suptitle(f"{what}: {lay.title(where)}" if where else what, fontsize="medium")
    return fig


# --- queueing delay --------------------------------------------------------------------------


def queue_delay_cdf(
    study,
    where: Mapping[str, Any] | None = None,
    *,
    curves: Sequence[str] | None = None,
    data: pl.DataFrame | None = None,
) -> Figure:
    """CDF of the queueing delay at the bottleneck in each run's studied direction (after the
    warm-up, every packet that left the queue), pooled over repetitions, shown up to the
    largest 99.9th percentile of the curves. `data`: `queue_delays(study)`."""
    p999: list[float] = []

    def draw(ax, part: pl.DataFrame, color, label: str) -> None:
        bins = (
            part.filter(pl.col("width_ms").is_finite())
            .group_by("delay_ms", "width_ms")
            .agg(pl.col("count").sum())
            .sort("delay_ms")
        )
        total = bins["count"].sum()
        if not total:
            return
        edge = (bins["delay_ms"] + bins["width_ms"]).to_numpy()
        cdf = np.cumsum(bins["count"].to_numpy()) / total
        ax.step(edge, cdf, where="post", color=color, label=label)
        p999.append(float(edge[min(np.searchsorted(cdf, 0.999), edge.size - 1)]))

    data = queue_delays(study) if data is None else data
    fig, ax = _curves_figure(study, data, where, curves, draw)
    if p999 and max(p999) > 0:
        ax.set_xlim(0, max(p999))
    ax.set_ylim(0, 1)
    _finish(ax, "Queueing delay CDF", where, "queueing delay (ms)", "cumulative probability")
    return fig


# --- metrics ---------------------------------------------------------------------------------

_WEB_PANELS = ("utilization", "loss_rate", "mean_queue_pkts", "median_response_s")
_OTHER_PANELS = ("tcp_goodput_mbps", "loss_rate", "mean_queue_pkts", "queue_delay_p99_ms")


def _panels(study, metrics: Sequence[str] | None) -> list[ss.Metric]:
    shown = {m.column: m for m in ss.summary_metrics(study.runs())}
    if metrics is None:
        web = ss.has_exchanges(study.runs())
        metrics = [m for m in (_WEB_PANELS if web else _OTHER_PANELS) if m in shown]
    unknown = [m for m in metrics if m not in shown]
    if unknown:
        raise ValueError(f"metrics {unknown}: expected some of {', '.join(shown)}")
    return [shown[m] for m in metrics]


def _panel_grid(
    n: int, width: float = 10.0, height: float = 2.9, sharex: bool = False
) -> tuple[Figure, list[Any]]:
    ncols = 2 if n > 1 else 1
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(width, height * nrows + 0.5), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=sharex).ravel().tolist()
    for extra in axes[n:]:
        extra.set_visible(False)
    return fig, axes[:n]


def metrics_vs_load(
    study,
    metrics: Sequence[str] | None = None,
    where: Mapping[str, Any] | None = None,
    *,
    curves: Sequence[str] | None = None,
) -> Figure:
    """Summary metrics (default: utilization, loss rate, mean queue and median response time;
    without exchanges, TCP goodput and the 99th percentile of the queueing delay instead of
    utilization and response time) against the study's load axis, one line per combination
    of the `curves` axes (default: all other axes not in `where`), mean over repetitions with
    the 95 % Student t interval as error bars (none with one repetition)."""
    axes = lay.study_axes(study)
    load = lay.load_axis(axes)
    if load is None:
        raise ValueError("the study has no load axis (an axis over a Web source's `load`)")
    labels = next(a.labels for a in axes if a.name == load)
    xs = lay.numeric_labels(labels) or list(range(len(labels)))
    x_of = dict(zip(labels, xs, strict=True))
    panels = _panels(study, metrics)
    curve_axes = _curve_axes(study, {**(where or {}), load: None}, curves)
    table = _where(ss.cell_summary(study, panels), where)
    frames, colors = _split(study, table, None, curve_axes)
    fig, subplots = _panel_grid(len(panels))
    for ax, m in zip(subplots, panels, strict=True):
        for label, part in frames.items():
            part = part.with_columns(pl.col(load).replace_strict(x_of).alias("_x")).sort("_x")
            ci = part[f"{m.column}_ci"].fill_null(0.0).to_numpy()
            ax.errorbar(
                part["_x"].to_numpy(),
                part[m.column].to_numpy(),
                yerr=ci if ci.any() else None,
                marker="o",
                ms=4,
                capsize=3,
                color=colors[label],
                label=label,
            )
        ax.set_xlabel(load)
        ax.set_ylabel(m.header)
        ax.set_xticks(xs, labels)
        ax.grid(True, alpha=0.3)
    if subplots and subplots[0].get_legend_handles_labels()[1]:
        fig.legend(*subplots[0].get_legend_handles_labels(), loc="outside right upper")
    suffix = f" ({lay.title(where)})" if where else ""
    fig.suptitle(f"Metrics against {load}{suffix}", fontsize="medium")
    return fig


def metrics_by_cell(study, metrics: Sequence[str] | None = None) -> Figure:
    """The summary metrics of every cell as horizontal bars (mean over repetitions, error bars
    the 95 % Student t interval), for studies without a load axis. Bars are colored by the
    scheme axis."""
    panels = _panels(study, metrics)
    axes = [a.name for a in lay.study_axes(study)]
    scheme = lay.scheme_axis(lay.study_axes(study))
    colors = lay.curve_colors(study.runs(), [scheme] if scheme else [])
    table = _with_curve(ss.cell_summary(study, panels), axes)
    names = table[_CURVE].to_list()
    bar_colors = [colors[lay.curve_label(r, [scheme] if scheme else [])] for r in table.to_dicts()]
    fig, subplots = _panel_grid(len(panels))
    for ax, m in zip(subplots, panels, strict=True):
        y = np.arange(len(names))
        ci = table[f"{m.column}_ci"].fill_null(0.0).to_numpy()
        ax.barh(y, table[m.column].to_numpy(), xerr=ci if ci.any() else None, color=bar_colors)
        ax.set_yticks(y, names, fontsize="small")
        ax.invert_yaxis()
        ax.set_xlabel(m.header)
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle("Metrics per cell", fontsize="medium")
    return fig


# --- queue length ----------------------------------------------------------------------------


def representative_runs(study, curves: Sequence[str] | None = None) -> dict[str, str]:
    """One finished run per curve label (default curves: the layout's), in plan order: the
    one at the highest load when there is a load axis, at the first label of every other axis,
    lowest repetition."""
    axes = lay.study_axes(study)
    curves = tuple(curves) if curves is not None else lay.layout(study).curves
    load = lay.load_axis(axes)
    rank = {a.name: {lab: i for i, lab in enumerate(a.labels)} for a in axes}

    def order(row: Mapping[str, Any]) -> tuple:
        key = []
        for a in axes:
            if a.name in curves:
                continue
            i = rank[a.name][row[a.name]]
            key.append(-i if a.name == load else i)
        return (*key, row["rep"])

    best: dict[str, dict[str, Any]] = {}
    for row in study.runs().iter_rows(named=True):
        label = lay.curve_label(row, curves)
        if label not in best or order(row) < order(best[label]):
            best[label] = row
    return {label: row["run_id"] for label, row in best.items()}


def queue_traces(
    study,
    runs: Mapping[str, str] | None = None,
    window_s: float = 60.0,
) -> Figure:
    """Queue length at the bottleneck in each run's studied direction during the first
    `window_s` seconds after the warm-up: mean per window of the queue table (line) and the
    window's min–max (band), one panel per run (default: `representative_runs`)."""
    runs = representative_runs(study) if runs is None else dict(runs)
    rows = study.runs().rows_by_key("run_id", named=True, unique=True)
    curves = lay.layout(study).curves
    colors = lay.curve_colors(study.runs(), curves)
    width = 10.0 if len(runs) > 1 else 6.0
    fig, subplots = _panel_grid(len(runs), width=width, height=2.1, sharex=True)
    for ax, (label, rid) in zip(subplots, runs.items(), strict=True):
        row = rows[rid]
        warmup = float(study.scenario(rid).get("warmup_s") or 0.0)
        q = first_hop(study.results(rid)["queue"]).filter(
            (pl.col("direction") == row["direction"])
            & (pl.col("t_s") >= warmup)
            & (pl.col("t_s") <= warmup + window_s)
        )
        # t_s ends each window, so the window's values hold over the step before it.
        t = q["t_s"].to_numpy()
        color = colors.get(label, "tab:blue")
        low, high = q["min_pkts"].to_numpy(), q["max_pkts"].to_numpy()
        ax.fill_between(t, low, high, color=color, alpha=0.25, lw=0, step="pre")
        ax.plot(t, q["mean_pkts"].to_numpy(), color=color, lw=0.9, drawstyle="steps-pre")
        where = {a: row[a] for a in study.axes if a not in curves}
        ax.set_title(f"{label} ({lay.title(where)}; run {rid})", fontsize="small")
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("queue (packets)")
        ax.grid(True, alpha=0.3)
    if subplots:
        top = max((ax.get_ylim()[1] for ax in subplots), default=1.0)
        for ax in subplots:
            ax.set_ylim(0, top)
    fig.suptitle(
        f"Queue length, {window_s:g} s after the warm-up (mean per window, min–max band)",
        fontsize="medium",
    )
    return fig


# --- each source over time -------------------------------------------------------------------


def source_traces(study, runs: Mapping[str, str] | None = None) -> Figure | None:
    """Each traffic source over time in one representative run per curve (Flent's
    `all_scaled`, per source): its goodput (top row) and the mean queueing delay of its
    packets (bottom row) per reporting interval, in the direction that carries its data,
    from the `source_intervals` table. None when no run has that table."""
    runs = representative_runs(study) if runs is None else dict(runs)
    traces = {}
    for label, rid in runs.items():
        try:
            t = study.results(rid)["source_intervals"]
        except KeyError:
            continue
        if t.height:
            traces[label] = (rid, t)
    if not traces:
        return None
    fig = Figure(figsize=(max(6.0, 3.4 * len(traces)), 5.0), layout="constrained")
    axes = fig.subplots(2, len(traces), sharex=True, sharey="row", squeeze=False)
    for col, (label, (rid, t)) in enumerate(traces.items()):
        names = source_names(study.scenario(rid))
        top, bottom = axes[0][col], axes[1][col]
        for source, (name, direction) in names.items():
            s = t.filter((pl.col("source") == source) & (pl.col("direction") == direction))
            if s.height == 0:
                continue
            s = s.sort("t_s")
            x = s["t_s"].to_numpy()
            line = top.plot(x, s["goodput_mbps"].to_numpy(), lw=0.9, drawstyle="steps-pre")[0]
            bottom.plot(
                x,
                s["delay_mean_ms"].to_numpy(),
                lw=0.9,
                drawstyle="steps-pre",
                color=line.get_color(),
                label=name,
            )
        top.set_title(f"{label} (run {rid})", fontsize="small")
        top.set_ylabel("goodput (Mb/s)")
        bottom.set_ylabel("queueing delay (ms)")
        bottom.set_xlabel("time (s)")
        for ax in (top, bottom):
            ax.grid(True, alpha=0.3)
    axes[1][0].legend(fontsize="x-small")
    fig.suptitle("Each source over time, in the direction of its data", fontsize="medium")
    return fig
