"""Study D: May, Diot, Lyles, Bolot (2000), the influence of AQM parameters on aggregate
traffic performance.

Parts: `flows` (Exp1-Exp5: 16 to 256 TCP sources, 80 % FTP file transfers and 20 % small HTTP
transfers, back to back, no UDP), `greedy` (the
simulations: 200 greedy NewReno flows + 10 % UDP CBR, RED's averaging weight w swept up to
the instantaneous queue) and `mix` (Exp6-Exp8: FTP, HTTP and UDP CBR sources), each under tail
drop (TD), RED, gentle RED (GRED) and GRED-I. The report regenerates the paper's figures
(aggregate TCP goodput and UDP loss probability per queue manager and parameter, the queue
over 15 s, the distributions of consecutive losses per flow and in the aggregate, the queueing
delay) and tables of the same figures; means and standard deviations over the repetitions, as
the paper plots "the average of all runs" (§II-B). Loss-run and delay distributions pool the
repetitions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aqmlab.analysis import mixes
from aqmlab.report import plots
from aqmlab.report.html import HtmlDocument
from aqmlab.study import Study

__all__ = ["CITATION", "PARTS", "TITLE", "Cell", "collect", "report", "summary_table"]

TITLE = "Influence of AQM parameters on aggregate traffic performance"
CITATION = (
    "M. May, C. Diot, B. Lyles, J. Bolot, 'Influence of active queue management parameters on "
    "aggregate traffic performance', INRIA research report RR-3995, 2000"
)
PARTS = {"flows": "flows.toml", "greedy": "greedy.toml", "mix": "mix.toml"}

DIRECTION = "reverse"  # downloads and UDP flows (clients on the left) cross right -> left
QUEUES = ("TD", "RED", "GRED", "GRED-I")
QUEUE_WINDOW_S = 15.0  # Figure 6: "we only plot 15 seconds"
# Per-run figures kept in the tables: catalog column -> table column.
_FIGURES = {
    "tcp_goodput_mbps": "TCP goodput (Mb/s)",
    "udp.loss_probability": "UDP loss probability",
    f"{DIRECTION}.loss_rate": "queue loss rate",
    f"{DIRECTION}.mean_queue_pkts": "mean queue (packets)",
    f"{DIRECTION}.delay_mean_ms": "mean queueing delay (ms)",
    f"{DIRECTION}.delay_p99_ms": "queueing delay p99 (ms)",
}


@dataclass
class Cell:
    """One configuration of a part (all its repetitions)."""

    labels: tuple[str, ...]
    scenario: dict[str, Any] = field(default_factory=dict)  # of the first repetition
    values: dict[str, list[float]] = field(default_factory=dict)
    runs: list[Path] = field(default_factory=list)  # run directories, repetition order

    def mean(self, key: str) -> float:
        v = [x for x in self.values.get(key, []) if not math.isnan(x)]
        return float(np.mean(v)) if v else math.nan

    def sd(self, key: str) -> float:
        v = [x for x in self.values.get(key, []) if not math.isnan(x)]
        return float(np.std(v, ddof=1)) if len(v) > 1 else 0.0

    def table(self, name: str) -> pl.DataFrame:
        """Record table `name` of every repetition, stacked (empty frame when none has it)."""
        frames = [pl.read_parquet(p) for r in self.runs if (p := r / f"{name}.parquet").is_file()]
        return pl.concat(frames) if frames else pl.DataFrame()


def _number(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and v is not None else math.nan


def collect(study: Study, axes: Iterable[str]) -> dict[tuple[str, ...], Cell]:
    """The finished runs of a part grouped by the labels of `axes` (in plan order)."""
    names = list(axes)
    cells: dict[tuple[str, ...], Cell] = {}
    for row in study.runs().iter_rows(named=True):
        key = tuple(row[a] for a in names)
        c = cells.setdefault(key, Cell(key, study.scenario(row["run_id"])))
        for col in _FIGURES:
            c.values.setdefault(col, []).append(_number(row.get(col)))
        c.runs.append(study.run_dir(row["run_id"]))
    return cells


def summary_table(cells: Mapping[tuple[str, ...], Cell], axes: list[str]) -> pl.DataFrame:
    """One row per configuration: mean (and standard deviation of goodput and UDP loss) over
    the repetitions of each figure in `_FIGURES`."""
    rows = []
    for key, c in cells.items():
        row: dict[str, Any] = dict(zip(axes, key, strict=True))
        for col, name in _FIGURES.items():
            row[name] = c.mean(col)
            if col in ("tcp_goodput_mbps", "udp.loss_probability"):
                row[f"sd {name}"] = c.sd(col)
        row["repetitions"] = len(c.runs)
        rows.append(row)
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def _queue_trace(c: Cell) -> tuple[np.ndarray, np.ndarray]:
    """The first repetition's queue samples over `QUEUE_WINDOW_S` right after the warm-up."""
    if not c.runs:
        return np.array([]), np.array([])
    q = pl.read_parquet(c.runs[0] / "queue.parquet").filter(pl.col("direction") == DIRECTION)
    warm = float(c.scenario.get("warmup_s", 0.0))
    q = q.filter((pl.col("t_s") >= warm) & (pl.col("t_s") < warm + QUEUE_WINDOW_S))
    return q["t_s"].to_numpy(), q["mean_pkts"].to_numpy()


def _loss_runs(c: Cell, scope: str) -> pl.DataFrame:
    runs = c.table("loss_runs")
    return mixes.loss_run_distribution(runs, scope) if runs.height else runs


class _Report:
    def __init__(self, parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
        self.doc, self.scale = doc, scale
        self.flows = collect(parts["flows"], ["flows", "queue"])
        self.greedy = collect(parts["greedy"], ["queue"])
        self.mix = collect(parts["mix"], ["exp", "queue"])

    def intro(self) -> None:
        n = max((len(c.runs) for c in self.greedy.values()), default=0)
        self.doc.paragraph(
            f"Scale: {self.scale}; {n} repetitions per configuration (error bars: one standard "
            "deviation). Metrics after the warm-up, at the bottleneck queue of the data "
            "direction. Deviations from the paper and their reasons: docs/studies.md, Study D."
        )

    def flow_count(self) -> None:
        d = self.doc
        d.heading("Number of flows (Exp1-Exp5): Figure 4")
        queues = [q for q in QUEUES if any(k[1] == q for k in self.flows)]
        series = {}
        for q in queues:
            pts = sorted((int(k[0]), c) for k, c in self.flows.items() if k[1] == q)
            series[q] = (
                [n for n, _ in pts],
                [c.mean("tcp_goodput_mbps") for _, c in pts],
                [c.sd("tcp_goodput_mbps") for _, c in pts],
            )
        if series:
            fig = plots.errorbar_lines(
                series, "TCP flows", "aggregate TCP goodput (Mb/s)", "Figure 4", logx=True
            )
            d.figure(
                fig,
                "fig04_goodput_vs_flows",
                "Figure 4: aggregate TCP goodput against the number of TCP sources (no UDP)",
            )
        t = summary_table(self.flows, ["flows", "queue"])
        if t.height:
            d.table(t.drop([c for c in t.columns if "UDP" in c]), "Exp1-Exp5: TCP sources")

    def averaging(self) -> None:
        d = self.doc
        d.heading("Averaging weight w (simulations): Figure 7")
        red = []
        for (q,), c in self.greedy.items():
            w = _red_weight(c)
            if w is not None and q.startswith("RED"):
                red.append((w, c))
        red.sort(key=lambda p: p[0])
        if red:
            x = [w for w, _ in red]
            for col, ylabel, name in (
                ("tcp_goodput_mbps", "aggregate TCP goodput (Mb/s)", "fig07_goodput_vs_w"),
                ("udp.loss_probability", "UDP loss probability", "fig07_udp_loss_vs_w"),
            ):
                series = {"RED": (x, [c.mean(col) for _, c in red], [c.sd(col) for _, c in red])}
                td = self.greedy.get(("TD",))
                if td is not None:
                    series["TD"] = (x, [td.mean(col)] * len(x), [td.sd(col)] * len(x))
                fig = plots.errorbar_lines(
                    series, "w (RED averaging weight)", ylabel, "Figure 7", logx=True
                )
                d.figure(
                    fig,
                    name,
                    f"Figure 7: {ylabel} against w; w = 1 is the "
                    "instantaneous queue (TD for reference)",
                )
        t = summary_table(self.greedy, ["queue"])
        if t.height:
            d.table(t, "Simulations: 200 greedy NewReno flows + 10 % UDP CBR")

    def mixes(self) -> None:
        d = self.doc
        d.heading("Traffic mixes (Exp6-Exp8): Figures 5, 8, 10")
        exps = sorted({k[0] for k in self.mix})
        queues = [q for q in QUEUES if any(k[1] == q for k in self.mix)]
        for col, ylabel, name in (
            ("tcp_goodput_mbps", "aggregate TCP goodput (Mb/s)", "fig05_08_10_goodput"),
            ("udp.loss_probability", "UDP loss probability", "fig05_08_10_udp_loss"),
        ):
            series = {}
            for q in queues:
                cells = [self.mix.get((e, q)) for e in exps]
                series[q] = (
                    [c.mean(col) if c else math.nan for c in cells],
                    [c.sd(col) if c else 0.0 for c in cells],
                )
            if series:
                fig = plots.grouped_bars(exps, series, ylabel, "Figures 5, 8, 10")
                d.figure(
                    fig,
                    name,
                    f"Figures 5, 8, 10: {ylabel} per experiment and queue "
                    "manager (TD vs RED: Fig. 5; + GRED: Fig. 8; + GRED-I: Fig. 10)",
                )
        t = summary_table(self.mix, ["exp", "queue"])
        if t.height:
            d.table(t, "Exp6-Exp8: 400/200 sources, 10 %/5 % UDP")

    def queue_and_losses(self, cells: Mapping[str, Cell], where: str) -> None:
        """Figures 6, 9, 11: the queue over 15 s and the loss-run distributions, each AQM
        against TD; and the queueing-delay CDF of all four."""
        d = self.doc
        td = cells.get("TD")
        for q, fig_no in (("RED", 6), ("GRED", 9), ("GRED-I", 11)):
            c = cells.get(q)
            if c is None:
                continue
            series = {name: _queue_trace(x) for name, x in (("TD", td), (q, c)) if x is not None}
            d.figure(
                plots.queue_over_time(series, f"Figure {fig_no} (left): {where}"),
                f"fig{fig_no:02d}_queue_{where}",
                f"Figure {fig_no} (left): queue length over {QUEUE_WINDOW_S:g} s after the "
                f"warm-up, {q} and TD ({where}; first repetition)",
            )
        for scope, what in (
            ("udp_all", "per UDP flow"),
            ("tcp_all", "per TCP connection"),
            (f"queue_{DIRECTION}", "aggregate at the queue"),
        ):
            curves = {q: _loss_runs(c, scope) for q, c in cells.items() if q in QUEUES}
            if any(v.height for v in curves.values()):
                d.figure(
                    plots.loss_run_curves(curves, f"Consecutive losses, {what} ({where})"),
                    f"fig06_09_11_loss_runs_{scope}_{where}",
                    f"Figures 6, 9, 11 (right): distribution of the number of consecutive "
                    f"losses, {what} ({where}; repetitions pooled)",
                )
        delays = {q: c.table("queue_delay") for q, c in cells.items() if q in QUEUES}
        delays = {q: v for q, v in delays.items() if v.height}
        if delays:
            d.figure(
                plots.queue_delay_cdf(delays, DIRECTION),
                f"queue_delay_{where}",
                f"Queueing delay distribution ({where}; repetitions pooled)",
            )

    def write(self) -> None:
        self.intro()
        if self.flows:
            self.flow_count()
        if self.greedy:
            self.averaging()
            self.doc.heading("Queue and consecutive losses, simulations: Figures 6, 9, 11")
            self.queue_and_losses({k[0]: c for k, c in self.greedy.items()}, "greedy")
        if self.mix:
            self.mixes()
            first = sorted({k[0] for k in self.mix})[0]
            self.doc.heading(f"Queue and consecutive losses, {first}: Figure 6 (right)")
            self.queue_and_losses({k[1]: c for k, c in self.mix.items() if k[0] == first}, first)


def _red_weight(c: Cell) -> float | None:
    """RED's w of a configuration (None for other queue managers or gentle RED)."""
    q = c.scenario.get("queue") or {}
    if q.get("kind") != "red" or q.get("gentle", True):
        return None
    w = q.get("w_q")
    return float(w) if isinstance(w, int | float) else None


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    _Report(parts, doc, scale).write()
