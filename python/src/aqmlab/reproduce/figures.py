"""Figures of the study reports (matplotlib, Agg): the seed papers plot response-time CDFs in
panels (one per load), curves per queue manager; CDFs by retransmission class; response time
against reply size; counts per interval at several time scales; summary metrics against load;
time series. Every function returns a `Figure`; curves come as already computed arrays (see
`runs.Part.cdf`), so nothing here reads files."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from aqmlab.analysis import metrics as mt

__all__ = [
    "cdf_panels",
    "class_cdfs",
    "class_contribution",
    "intervals",
    "metric_panels",
    "size_scatter",
    "time_series",
]

Curve = tuple[str, np.ndarray, np.ndarray]  # label, x, y

_CLASS_COLORS = {
    "all": "black",
    "none": "tab:gray",
    "SYN": "tab:red",
    "FIN": "tab:green",
    "data": "tab:blue",
    "combined": "tab:purple",
}


def _grid(n: int, ncols: int, panel=(4.2, 3.2), title: str | None = None, bottom_in: float = 0.55):
    """A figure of `n` panels on `ncols` columns, `bottom_in` inches under each panel for its
    tick labels and axis label. Margins are fixed in inches: a constrained layout would
    double the time to save the report's many multi-panel figures."""
    ncols = max(1, min(ncols, n))
    nrows = max(1, math.ceil(n / ncols))
    top_in = 0.6 if title else 0.3  # suptitle, then each panel's title
    w, h = panel[0] * ncols, panel[1] * nrows + top_in
    gap = bottom_in + 0.3
    fig = Figure(figsize=(w, h))
    fig.subplots_adjust(
        left=0.9 / w,
        right=1 - 0.15 / w,
        bottom=bottom_in / h,
        top=1 - top_in / h,
        wspace=0.95 / (panel[0] - 0.95),
        hspace=gap / (panel[1] - gap),
    )
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, y=1 - 0.15 / h, va="top")
    return fig, axes


def cdf_panels(
    panels: Sequence[tuple[str, Sequence[Curve]]],
    xmax_s: float,
    title: str | None = None,
    ncols: int = 3,
    styles: Mapping[str, str] | None = None,
) -> Figure:
    """Response-time CDFs, one panel per (panel title, curves); x from 0 to `xmax_s` seconds.
    `styles` maps a curve label to a matplotlib line style (e.g. the uncongested baseline
    dashed)."""
    fig, axes = _grid(len(panels), ncols, title=title)
    styles = styles or {}
    for ax, (name, curves) in zip(axes, panels, strict=False):
        for label, x, y in curves:
            ax.plot(x, y, styles.get(label, "-"), drawstyle="steps-post", label=label, lw=1.2)
        ax.set_xlim(0, xmax_s)
        ax.set_ylim(0, 1)
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("response time (s)")
        ax.set_ylabel("cumulative probability")
        ax.grid(True, alpha=0.3)
        if curves:
            ax.legend(fontsize="x-small", loc="lower right")
    return fig


def class_cdfs(exchanges: pl.DataFrame, xmax_s: float, title: str) -> Figure:
    """CDF of response times of all completed exchanges and of each retransmission class
    (`metrics.retransmission_class`), each normalised by its own count (Study A Figures
    17-18)."""
    ex = _completed_with_class(exchanges)
    x = np.linspace(0, xmax_s, 801)
    fig = Figure(figsize=(6.6, 4.6), layout="constrained")
    ax = fig.add_subplot()
    groups = [("all", ex), *((c, ex.filter(pl.col("retx_class") == c)) for c in mt.RETX_CLASSES)]
    for name, part in groups:
        if part.height == 0:
            continue
        y = mt.ecdf_at(part["response_time_s"].to_numpy(), x)
        ax.plot(
            x, y, drawstyle="steps-post", color=_CLASS_COLORS[name], label=f"{name} ({part.height})"
        )
    ax.set(xlim=(0, xmax_s), ylim=(0, 1), xlabel="response time (s)", title=title)
    ax.set_ylabel("cumulative probability")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def class_contribution(exchanges: pl.DataFrame, xmax_s: float, title: str) -> Figure:
    """Cumulative share of all completed exchanges that are in a set of classes and done by t:
    no retransmission; none or SYN only; none or FIN only; none or data only (Study A
    Figures 19-20), above the median (y from 0.5)."""
    ex = _completed_with_class(exchanges)
    x = np.linspace(0, xmax_s, 801)
    fig = Figure(figsize=(6.6, 4.6), layout="constrained")
    ax = fig.add_subplot()
    total = ex.height
    for name, kinds in (
        ("all", None),
        ("none", ("none",)),
        ("none or SYN only", ("none", "SYN")),
        ("none or FIN only", ("none", "FIN")),
        ("none or data only", ("none", "data")),
    ):
        part = ex if kinds is None else ex.filter(pl.col("retx_class").is_in(kinds))
        y = mt.ecdf_at(part["response_time_s"].to_numpy(), x, total)
        color = _CLASS_COLORS.get(name.split()[-2] if " only" in name else name, "black")
        ax.plot(x, y, drawstyle="steps-post", color=color, label=name)
    ax.set(xlim=(0, xmax_s), ylim=(0.5, 1), xlabel="response time (s)", title=title)
    ax.set_ylabel("cumulative share of all responses")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def _completed_with_class(exchanges: pl.DataFrame) -> pl.DataFrame:
    ex = exchanges.filter(pl.col("completed") & pl.col("response_time_s").is_not_nan())
    return mt.with_retransmission_class(ex)


def size_scatter(
    exchanges: pl.DataFrame, max_bytes: int, ymax_s: float, title: str, max_points: int = 200_000
) -> Figure:
    """Response time against reply size (linear axes, replies below `max_bytes`), exchanges
    with any retransmission dark, the others grey (Study A Figure 21). At most `max_points`
    dots (an evenly spaced subsample), drawn as a raster inside vector output."""
    ex = _completed_with_class(exchanges).filter(pl.col("response_bytes") < max_bytes)
    if ex.height > max_points:
        ex = ex.gather_every(math.ceil(ex.height / max_points))
    fig = Figure(figsize=(7.0, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for retx, color, size, name in (
        (False, "0.65", 2, "no retransmission"),
        (True, "black", 3, "retransmission"),
    ):
        part = ex.filter((pl.col("retx_class") != "none") == retx)
        ax.scatter(
            part["response_bytes"].to_numpy(),
            part["response_time_s"].to_numpy(),
            s=size,
            color=color,
            linewidths=0,
            rasterized=True,
            label=f"{name} ({part.height})",
        )
    ax.set(xlim=(0, max_bytes), ylim=(0, ymax_s), title=title)
    ax.set_xlabel("reply size (bytes)")
    ax.set_ylabel("response time (s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", markerscale=4)
    return fig


def intervals(
    series: Sequence[tuple[str, np.ndarray]], ylabel: str, title: str, ncols: int = 2
) -> Figure:
    """Counts per interval, one panel per time scale (name, counts), plotted against the
    interval index (Study C Figures 3-4)."""
    fig, axes = _grid(len(series), ncols, panel=(5.0, 2.8), title=title)
    for ax, (name, counts) in zip(axes, series, strict=False):
        ax.plot(np.arange(counts.size), counts, lw=0.9)
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("interval")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    return fig


def metric_panels(
    table: pl.DataFrame,
    x: str,
    group: str,
    metrics: Sequence[tuple[str, str]],
    x_order: Sequence[str],
    group_order: Sequence[str],
    title: str,
) -> Figure:
    """One panel per (column, axis label) of `metrics`, the column against `x` (a label axis
    in `x_order`), one line per `group` (Study C Figures 5-6)."""
    fig, axes = _grid(len(metrics), 3, panel=(4.4, 3.6), title=title, bottom_in=0.95)
    pos = {v: i for i, v in enumerate(x_order)}
    for ax, (col, label) in zip(axes, metrics, strict=False):
        for g in group_order:
            part = table.filter(pl.col(group) == g)
            if part.height == 0 or col not in part.columns:
                continue
            part = part.with_columns(pl.col(x).replace_strict(pos, default=None).alias("_x"))
            part = part.sort("_x")
            ax.plot(part["_x"].to_numpy(), part[col].to_numpy(), "-o", ms=3, label=g)
        ax.set_xticks(range(len(x_order)), x_order, rotation=45, fontsize="small")
        ax.set_xlabel("offered load")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="x-small")
    return fig


def time_series(
    series: Sequence[tuple[str, np.ndarray, np.ndarray]],
    xlabel: str,
    ylabel: str,
    title: str,
    marks: Sequence[tuple[float, str]] = (),
) -> Figure:
    """Lines (label, t, y) on one axis; `marks` draws vertical lines (t, label), e.g. the end of
    the warm-up."""
    fig = Figure(figsize=(7.6, 3.8), layout="constrained")
    ax = fig.add_subplot()
    for label, t, y in series:
        ax.plot(t, y, lw=0.8, label=label)
    for t, label in marks:
        ax.axvline(t, color="black", ls=":", lw=1, label=label)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if len(series) > 1 or marks:
        ax.legend(fontsize="small")
    return fig
