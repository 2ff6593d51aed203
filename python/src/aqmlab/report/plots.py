"""Plots of a run (matplotlib, Agg backend). Every function returns a `Figure`; nothing is
shown. `write_plots` saves the standard set of a results directory as PNG files.

- `response_time_cdf`: CDF of response times up to 2 s.
- `response_time_ccdf`: complementary CDF on log–log axes.
- `response_time_vs_size`: response time against response size, marked by retransmission
  class.
- `burstiness_cov`: coefficient of variation of bytes and packets per interval against the
  interval (10 ms to 10 s).
- `variance_time`: the variance–time plot of the packet counts with Hurst estimates.
- `consecutive_losses`: probability of each run length of consecutive losses (per UDP flow,
  per TCP connection, and of the aggregate at the queue), log scale.
- `queue_delay_cdf`: CDF of the bottleneck's queueing delay.

Inputs are polars DataFrames (the `exchanges`, `arrivals`, `loss_runs` and `queue_delay`
tables), or mappings
label → DataFrame to compare runs on one figure.

Building blocks for study reports, on data already reduced: `cdf_curves` and `ccdf_curves`
((x, probability) pairs per label), `loss_run_curves` (loss-run distributions per label),
`errorbar_lines` and `grouped_bars` (means ± standard deviations), `queue_over_time`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from aqmlab.analysis import hurst
from aqmlab.analysis import metrics as mt
from aqmlab.analysis.directions import first_hop
from aqmlab.errors import make_dirs

__all__ = [
    "DEFAULT_SCALES_S",
    "arrival_counts",
    "burstiness_cov",
    "ccdf_curves",
    "cdf_curves",
    "consecutive_losses",
    "cov_by_scale",
    "errorbar_lines",
    "grouped_bars",
    "loss_run_curves",
    "queue_delay_cdf",
    "queue_over_time",
    "response_time_ccdf",
    "response_time_cdf",
    "response_time_vs_size",
    "variance_time",
    "write_plots",
]

# 10 ms to 10 s in a 1-2-5 sequence.
DEFAULT_SCALES_S = tuple(
    round(m * 10.0**e, 6) for e in range(-2, 2) for m in (1, 2, 5) if m * 10.0**e <= 10
)

_CLASS_STYLE = {
    "none": ("o", "tab:gray"),
    "SYN": ("s", "tab:red"),
    "FIN": ("^", "tab:green"),
    "data": ("x", "tab:blue"),
    "combined": ("D", "tab:purple"),
}


def _series(data: pl.DataFrame | Mapping[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    if isinstance(data, pl.DataFrame):
        return {"": data}
    return dict(data)


def _response_times(ex: pl.DataFrame) -> np.ndarray:
    done = ex.filter(pl.col("completed") & pl.col("response_time_s").is_not_nan())
    return np.sort(done["response_time_s"].cast(pl.Float64).to_numpy())


# The axes a caller passed as `ax=` (`_drawable`), taken by the next `_new_figure`.
_TARGET: ContextVar[Any] = ContextVar("_TARGET", default=None)


def _drawable(fn):
    """Gives a plot function `ax=`: it draws into the caller's Matplotlib axes (and returns
    their figure) instead of a figure of its own, so figures compose (issue 36). Nested
    plot functions draw into the outermost caller's axes."""

    @functools.wraps(fn)
    def with_ax(*args: Any, ax: Any = None, **kwargs: Any) -> Any:
        if ax is None:
            return fn(*args, **kwargs)
        token = _TARGET.set(ax)
        try:
            return fn(*args, **kwargs)
        finally:
            _TARGET.reset(token)

    return with_ax


def _new_figure(size=(6.4, 4.4)) -> tuple[Figure, Any]:
    ax = _TARGET.get()
    if ax is not None:
        _TARGET.set(None)  # taken: a second figure of the same call is its own
        return ax.figure, ax
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def _legend(ax, loc: str = "best") -> None:
    _handles, labels = ax.get_legend_handles_labels()
    if any(labels):
        ax.legend(fontsize="small", loc=loc)


def _finish(ax, xlabel: str, ylabel: str, title: str, loc: str = "best") -> None:
    """Axis labels, title, a light grid and the legend (when something is labelled; a fixed
    `loc` spares matplotlib the search over every plotted point)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    _legend(ax, loc)


@_drawable
def cdf_curves(
    curves: Mapping[str, tuple[Any, Any]],
    xmax: float = 2.0,
    title: str = "Response time CDF",
    xlabel: str = "response time (s)",
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> Figure:
    """Step CDFs on [0, `xmax`] from (x, P(X ≤ x)) pairs, one per label; `styles` gives
    matplotlib keywords per label (reference curves in grey, say)."""
    fig, ax = _new_figure()
    for label, (x, y) in curves.items():
        if len(x):
            ax.step(x, y, where="post", label=label or None, **dict((styles or {}).get(label, {})))
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, 1)
    _finish(ax, xlabel, "cumulative probability", title, loc="lower right")
    return fig


@_drawable
def ccdf_curves(
    curves: Mapping[str, tuple[Any, Any]],
    title: str = "Response time CCDF",
    xlabel: str = "response time (s)",
    ylabel: str = "P(response time > t)",
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    xlim: tuple[float, float] | None = None,
) -> Figure:
    """Complementary CDFs from (x, P(X ≥ x)) pairs, both axes logarithmic (zeros dropped)."""
    fig, ax = _new_figure()
    for label, (x, p) in curves.items():
        x, p = np.asarray(x, dtype=float), np.asarray(p, dtype=float)
        keep = (x > 0) & (p > 0)
        if keep.any():
            ax.step(
                x[keep],
                p[keep],
                where="post",
                label=label or None,
                **dict((styles or {}).get(label, {})),
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    if xlim is not None:
        ax.set_xlim(*xlim)
    _finish(ax, xlabel, ylabel, title, loc="lower left")
    return fig


@_drawable
def response_time_cdf(
    exchanges: pl.DataFrame | Mapping[str, pl.DataFrame], xmax_s: float = 2.0
) -> Figure:
    """Empirical CDF of completed exchanges' response times on [0, `xmax_s`] seconds (the
    share above `xmax_s` shows as the gap below 1 at the right edge)."""
    curves = {}
    for label, ex in _series(exchanges).items():
        rt = _response_times(ex)
        curves[label] = (rt, np.arange(1, rt.size + 1) / max(rt.size, 1))
    return cdf_curves(curves, xmax_s)


@_drawable
def response_time_ccdf(exchanges: pl.DataFrame | Mapping[str, pl.DataFrame]) -> Figure:
    """P(response time > t) against t, both axes logarithmic."""
    curves = {}
    for label, ex in _series(exchanges).items():
        rt = _response_times(ex)
        rt = rt[rt > 0]
        curves[label] = (rt, 1.0 - np.arange(rt.size) / max(rt.size, 1))  # P(X >= x_i) > 0
    return ccdf_curves(curves)


@_drawable
def response_time_vs_size(exchanges: pl.DataFrame) -> Figure:
    """Completed exchanges: response time (s) against response size (bytes), log–log, one
    marker per retransmission class (`metrics.retransmission_class`)."""
    fig, ax = _new_figure()
    ex = mt.with_retransmission_class(exchanges).filter(
        pl.col("completed") & pl.col("response_time_s").is_not_nan()
    )
    ex = ex.filter((pl.col("response_bytes") > 0) & (pl.col("response_time_s") > 0))
    for cls in mt.RETX_CLASSES:
        part = ex.filter(pl.col("retx_class") == cls)
        if part.height == 0:
            continue
        marker, color = _CLASS_STYLE[cls]
        ax.scatter(
            part["response_bytes"].to_numpy(),
            part["response_time_s"].to_numpy(),
            s=6 if cls == "none" else 12,
            marker=marker,
            color=color,
            alpha=0.5 if cls == "none" else 0.8,
            linewidths=0.8,
            label=f"{cls} ({part.height})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("response size (bytes)")
    ax.set_ylabel("response time (s)")
    ax.set_title("Response time vs size, by retransmission class")
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax)
    return fig


# --- burstiness ----------------------------------------------------------------------------


def arrival_counts(
    arrivals: pl.DataFrame,
    direction: str,
    bin_s: float,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Packets and bytes arriving at the bottleneck queue in `direction` per bin of `bin_s`
    seconds, on the full grid of bins in [start_s, end_s) (bins absent from the table count
    zero). Returns (packets, bytes) as float arrays."""
    a = arrivals.filter(pl.col("direction") == direction)
    if end_s is None:
        end_s = float(a["t_s"].max()) + bin_s if a.height else start_s
    n = math.floor((end_s - start_s) / bin_s + 1e-9)
    pk = np.zeros(max(n, 0))
    by = np.zeros(max(n, 0))
    if n <= 0 or a.height == 0:
        return pk, by
    idx = np.floor((a["t_s"].to_numpy() - start_s) / bin_s + 1e-6).astype(np.int64)
    ok = (idx >= 0) & (idx < n)
    np.add.at(pk, idx[ok], a["packets"].to_numpy()[ok].astype(float))
    np.add.at(by, idx[ok], a["bytes"].to_numpy()[ok].astype(float))
    return pk, by


def cov_by_scale(
    counts, bin_s: float, scales_s: Iterable[float] = DEFAULT_SCALES_S, min_blocks: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """Coefficient of variation (std / mean) of the counts summed over intervals of each
    scale (a multiple of `bin_s`; scales with fewer than `min_blocks` intervals are left out).
    Returns (scales in s, CoV)."""
    x = np.asarray(counts, dtype=float)
    out_s, out_c = [], []
    for s in scales_s:
        m = round(s / bin_s)
        if m < 1 or x.size // m < min_blocks:
            continue
        agg = hurst.aggregate(x, m)
        mean = agg.mean()
        if mean > 0:
            out_s.append(m * bin_s)
            out_c.append(agg.std(ddof=1) / mean)
    return np.array(out_s), np.array(out_c)


@_drawable
def burstiness_cov(
    counts: Mapping[str, tuple[np.ndarray, np.ndarray]] | tuple[np.ndarray, np.ndarray],
    bin_s: float,
    scales_s: Iterable[float] = DEFAULT_SCALES_S,
) -> Figure:
    """Coefficient of variation of packets and of bytes per interval against the interval
    length (log–log), from (packets, bytes) per base bin (`arrival_counts`), or a mapping
    label → (packets, bytes). A Poisson process would fall with slope −1/2 (dotted guide)."""
    fig, ax = _new_figure()
    data = {"": counts} if isinstance(counts, tuple) else dict(counts)
    scales_s = tuple(scales_s)
    ref = None
    for label, (pk, by) in data.items():
        for what, x, style in (("packets", pk, "-o"), ("bytes", by, "--s")):
            s, c = cov_by_scale(x, bin_s, scales_s)
            if s.size == 0:
                continue
            name = f"{label} {what}".strip()
            ax.plot(s, c, style, markersize=4, label=name)
            if ref is None:
                ref = (s, c[0] * np.sqrt(s[0] / s))
    if ref is not None:
        ax.plot(*ref, ":", color="black", alpha=0.6, label="slope -1/2 (Poisson)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("interval (s)")
    ax.set_ylabel("coefficient of variation")
    ax.set_title("Burstiness across time scales")
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax)
    return fig


@_drawable
def variance_time(counts, bin_s: float, label: str = "packets") -> Figure:
    """Variance–time plot: log10 of the normalised variance of the mean count over blocks of
    m bins against log10 of the block duration, with the fitted line and Hurst estimates
    (aggregated variance, R/S and, when the series is long enough, Abry–Veitch wavelet) in the
    legend. A slope of −1 (H = 0.5) is drawn for reference."""
    fig, ax = _new_figure()
    x = np.asarray(counts, dtype=float)
    av = hurst.aggregated_variance(x)
    var0 = np.var(x, ddof=1) if x.size > 1 else 1.0
    xs = av.x + math.log10(bin_s)
    ys = av.y - math.log10(var0) if var0 > 0 else av.y
    ax.plot(xs, ys, "o", markersize=4, label=f"{label}")
    fit = av.slope * av.x + av.intercept - (math.log10(var0) if var0 > 0 else 0)
    ax.plot(xs, fit, "-", label=f"aggregated variance: H = {av.H:.3f}")
    ax.plot(xs, ys[0] - (av.x - av.x[0]), ":", color="black", alpha=0.6, label="H = 0.5")
    extra = []
    with contextlib.suppress(ValueError):
        extra.append(f"R/S: H = {hurst.rescaled_range(x).H:.3f}")
    try:
        w = hurst.wavelet(x)
        lo, hi = w.ci95 or (math.nan, math.nan)
        extra.append(f"wavelet (db2): H = {w.H:.3f} [{lo:.2f}, {hi:.2f}]")
    except ValueError:
        pass
    for e in extra:
        ax.plot([], [], " ", label=e)
    ax.set_xlabel("log10 block duration (s)")
    ax.set_ylabel("log10 normalised variance")
    ax.set_title("Variance-time plot")
    ax.grid(True, alpha=0.3)
    _legend(ax)
    return fig


# --- a results directory -------------------------------------------------------------------


@_drawable
def loss_run_curves(
    curves: Mapping[str, pl.DataFrame], title: str = "Runs of consecutive losses"
) -> Figure:
    """P(run length = k) against k, log scale, one curve per label, from
    `mix_metrics.loss_run_distribution` frames (`run_length`, `probability`); empty ones are
    left out."""
    fig, ax = _new_figure()
    for label, d in curves.items():
        if d.height:
            ax.plot(d["run_length"], d["probability"], marker="o", markersize=3, label=label)
    ax.set_yscale("log")
    _finish(ax, "consecutive losses (packets; 64 = 64 or more)", "probability", title)
    return fig


@_drawable
def consecutive_losses(loss_runs: pl.DataFrame, direction: str = "reverse") -> Figure:
    """P(run length = k) of runs of consecutive losses: summed over the UDP flows, over the
    TCP connections, and of the aggregate at the `direction` queue (Study D's per-flow and
    aggregate distributions). Scopes without runs are left out."""
    scopes = (
        ("udp_all", "per UDP flow"),
        ("tcp_all", "per TCP connection"),
        (f"queue_{direction}", f"aggregate at the {direction} queue"),
    )
    return loss_run_curves(
        {label: mt.loss_run_distribution(loss_runs, scope) for scope, label in scopes}
    )


@_drawable
def errorbar_lines(
    series: Mapping[str, tuple[Any, Any, Any]],
    xlabel: str,
    ylabel: str,
    title: str,
    logx: bool = False,
) -> Figure:
    """Mean ± one standard deviation against x, one line per label: (x, mean, sd); sd None
    draws the line alone."""
    fig, ax = _new_figure()
    for label, (x, mean, sd) in series.items():
        ax.errorbar(x, mean, yerr=sd, marker="o", markersize=4, capsize=3, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    _finish(ax, xlabel, ylabel, title)
    return fig


@_drawable
def grouped_bars(
    groups: list[str],
    series: Mapping[str, tuple[Any, Any]],
    ylabel: str,
    title: str,
) -> Figure:
    """Bars of mean ± one standard deviation: one cluster per group, one bar per label
    (means and sds listed in group order)."""
    fig, ax = _new_figure()
    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(groups))
    for i, (label, (mean, sd)) in enumerate(series.items()):
        ax.bar(x + (i - (n - 1) / 2) * width, mean, width, yerr=sd, capsize=3, label=label)
    ax.set_xticks(x, groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    _legend(ax)
    return fig


@_drawable
def queue_over_time(
    series: Mapping[str, tuple[Any, Any]], title: str, ylabel: str = "queue (packets)"
) -> Figure:
    """A quantity against time (s), one line per label: (t, y); by default the queue length
    in packets (the L4S pack draws queueing delay and throughput with it)."""
    fig, ax = _new_figure((7.2, 4.0))
    for label, (t, q) in series.items():
        ax.plot(t, q, linewidth=0.9, label=label)
    _finish(ax, "time (s)", ylabel, title)
    return fig


@_drawable
def queue_delay_cdf(
    queue_delay: pl.DataFrame | Mapping[str, pl.DataFrame], direction: str = "reverse"
) -> Figure:
    """CDF of the queueing delay at the `direction` bottleneck queue (at bin upper edges)."""
    fig, ax = _new_figure()
    for label, qd in _series(queue_delay).items():
        d = mt.queue_delay_distribution(qd, direction).filter(pl.col("width_ms").is_finite())
        if d.height == 0:
            continue
        ax.step(d["delay_ms"] + d["width_ms"], d["cdf"], where="post", label=label or None)
    ax.set_ylim(0, 1)
    ax.set_xlabel("queueing delay (ms)")
    ax.set_ylabel("cumulative probability")
    ax.set_title(f"Queueing delay CDF ({direction})")
    ax.grid(True, alpha=0.3)
    _legend(ax)
    return fig


def burst_bin_s(summary: Mapping[str, Any]) -> float:
    """The arrivals bin of a run, seconds (scenario measure.burst_bin_ms, default 10 ms)."""
    ms = ((summary.get("scenario") or {}).get("measure") or {}).get("burst_bin_ms", 10)
    return float(ms) / 1e3


def write_plots(results, out: str | os.PathLike, direction: str | None = None) -> list[Path]:
    """Saves the plots of a `Results` into `out` (created) as PNG files, the response-time
    ones when the run has an `exchanges` table, the burstiness ones when it has an `arrivals`
    table (after the warm-up, in the studied direction), the consecutive-loss and
    queueing-delay ones when it has those tables with rows. Returns the files written."""
    out_dir = make_dirs(out, f"plots directory {out}")
    scenario = results.summary.get("scenario") or {}
    d = direction or mt.studied_direction(scenario)
    warmup = float(scenario.get("warmup_s") or 0.0)
    written: list[Path] = []

    def save(fig: Figure, name: str) -> None:
        p = out_dir / name
        fig.savefig(p, dpi=110)
        written.append(p)

    tables = set(results.tables)
    if "exchanges" in tables:
        ex = mt.exchanges_after_warmup(results["exchanges"], warmup)
        save(response_time_cdf(ex), "response_time_cdf.png")
        save(response_time_ccdf(ex), "response_time_ccdf.png")
        save(response_time_vs_size(ex), "response_time_vs_size.png")
    if "arrivals" in tables:
        bin_s = burst_bin_s(results.summary)
        core = results.summary.get("summary") or {}
        measured = float(core.get("measured_s") or 0.0)
        end = warmup + measured if measured > 0 else float(scenario.get("duration_s") or 0.0)
        pk, by = arrival_counts(results["arrivals"], d, bin_s, warmup, end)
        if pk.size >= 32:
            save(burstiness_cov((pk, by), bin_s), "burstiness_cov.png")
            with contextlib.suppress(ValueError):
                save(variance_time(pk, bin_s), "variance_time.png")
    if "loss_runs" in tables and results["loss_runs"].height:
        save(consecutive_losses(results["loss_runs"], d), "consecutive_losses.png")
    if "queue_delay" in tables and results["queue_delay"].height:
        save(queue_delay_cdf(first_hop(results["queue_delay"]), d), "queue_delay_cdf.png")
    return written
