"""Study B: Le, Aikat, Jeffay, Smith (2003), AQM and ECN effects on Web response times.

Parts: `main` (every queue manager and ECN setting × load × RTT distribution, 100 Mb/s) and
`uncongested` (the same user populations on the 1 Gb/s link). The report regenerates the
paper's response-time CDFs (to 2 s) and CCDFs, grouped as its figures, and its tables of loss
ratio, completed exchanges and link utilization (means over repetitions; utilization as a
share of the congested network's 100 Mb/s link, the paper's basis, for the uncongested
network's 1 Gb/s link too, beside the throughput in Mb/s); response-time distributions pool
the repetitions, as the paper's plots do (§3.3).

"Best" setting of a scheme (§4.4: a CDF is better when it is "clearly above the other's
(closer to that of the uncongested network)"): the setting whose pooled CDF has the smallest
area above it on [0, 2 s], i.e. the smallest E[min(T, 2 s)] (`rthist.ResponseTimeHist.
mean_capped`), chosen per load among the candidates of the figure (without ECN, with ECN, or
all settings). The general-RTT figures (§6) use the settings that were best with the uniform
RTTs at the same load ("the settings of algorithm parameters that previously resulted in the
best performance").
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aqmlab.analysis import rthist
from aqmlab.report import plots
from aqmlab.report.html import HtmlDocument
from aqmlab.study import Study

__all__ = [
    "CITATION",
    "PARTS",
    "TITLE",
    "Cell",
    "best",
    "collect",
    "describe",
    "report",
    "summary_table",
]

TITLE = "The effects of AQM and ECN on Web performance"
CITATION = (
    "L. Le, J. Aikat, K. Jeffay, F. D. Smith, 'The effects of active queue management and "
    "explicit congestion notification on Web performance', 2003 (SIGCOMM 2003; IEEE/ACM ToN "
    "2007)"
)
PARTS = {"main": "main.toml", "uncongested": "uncongested.toml"}

UNCONGESTED = "uncongested"
DROPTAIL = "drop-tail"
BASELINE = "DT-240"  # §4.4: "we use a drop-tail queue of 240 packets as a baseline"
SCHEMES = ("PI", "REM", "ARED-pkt", "ARED-byte")
OFF, ECN, NEW_GENTLE = "off", "ECN", "ECN new gentle"
UNIFORM, CAMPUS = "uniform", "campus"
# §3.2: users per side for an offered load of 100 Mb/s on each direction.
PAPER_USERS_PER_SIDE = {UNIFORM: 9_520.0, CAMPUS: 10_570.0}


def _load_fraction(label: str) -> float:
    """0.9 from a load label such as "90%"."""
    try:
        return float(str(label).rstrip("%")) / 100
    except ValueError:
        return math.nan


_ARED_ECN = {"off": OFF, "rfc3168": ECN, "new_gentle": NEW_GENTLE}
_REFERENCE_STYLE = {
    UNCONGESTED: {"color": "black", "linewidth": 1.6},
    BASELINE: {"color": "0.45", "linestyle": "--"},
}


def describe(scenario: Mapping[str, Any]) -> tuple[str, str, str]:
    """(scheme, setting, ECN) of a run from its resolved scenario: scheme one of drop-tail,
    PI, REM, ARED-pkt, ARED-byte; ECN one of off, ECN (RFC 3168), ECN new gentle."""
    q = scenario["queue"]
    kind = q["kind"]
    if kind == "droptail":
        return DROPTAIL, f"{q['limit']}", OFF
    if kind == "pi":
        return "PI", f"q_ref {q.get('q_ref', 50):g}", ECN if q.get("ecn") else OFF
    if kind == "rem":
        return "REM", f"b* {q.get('b_ref', 20):g}", ECN if q.get("mark") else OFF
    if kind == "ared":
        mode = "ARED-byte" if q.get("queue_in_bytes", True) else "ARED-pkt"
        th = f"({q.get('min_th', 0):g}, {q.get('max_th', 0):g})"
        return mode, th, _ARED_ECN[q.get("ecn", "off")]
    return kind, "", OFF


@dataclass
class Cell:
    """One configuration (all its repetitions): the pooled response-time histogram and the
    per-repetition link figures."""

    rtt: str
    load: str
    aqm: str
    scheme: str
    setting: str
    ecn: str
    users: tuple[int, ...] = ()
    capacity_mbps: float = math.nan  # the bottleneck's (1,000 Mb/s for the uncongested network)
    hist: rthist.ResponseTimeHist = field(default_factory=rthist.ResponseTimeHist)
    reps: list[dict[str, float]] = field(default_factory=list)
    exchanges: list[Path] = field(default_factory=list)  # one file per repetition

    def mean(self, key: str) -> float:
        vals = [r[key] for r in self.reps if not math.isnan(r[key])]
        return sum(vals) / len(vals) if vals else math.nan


def _link_figures(row: Mapping[str, Any]) -> dict[str, float]:
    """Both directions of the bottleneck: loss ratio (queue drops / arrivals), utilization
    (mean of the two), ECN marks and buffer-overflow drops."""

    def total(name: str) -> float:
        return sum(float(row.get(f"{d}.{name}") or 0) for d in ("forward", "reverse"))

    drops = total("drops_early") + total("drops_forced") + total("drops_overflow")
    arrivals = total("arrivals")
    util = [row.get(f"{d}.utilization") for d in ("forward", "reverse")]
    return {
        "loss": drops / arrivals if arrivals else math.nan,
        "utilization": float(np.mean([u for u in util if u is not None]))
        if any(util)
        else math.nan,
        "marks": total("marks"),
        "overflow": total("drops_overflow"),
    }


def collect(study: Study, aqm_of: Callable[[Mapping[str, str]], str] | None = None) -> dict:
    """Every finished run of a part, pooled by (rtt, load, aqm) into `Cell`s. Exchanges count
    when they started in [warm-up, duration − warm-up] (base.toml: the kept interval)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    for row in study.runs().iter_rows(named=True):
        scenario = study.scenario(row["run_id"])
        aqm = aqm_of(row) if aqm_of else row["aqm"]
        key = (row["rtt"], row["load"], aqm)
        if key not in cells:
            scheme, setting, ecn = describe(scenario)
            if aqm == UNCONGESTED:
                scheme, setting = UNCONGESTED, f"{scenario['topology']['bottleneck_mbps']:g} Mb/s"
            users = tuple(int(t.get("users", 0)) for t in scenario["traffic"])
            capacity = float(scenario["topology"]["bottleneck_mbps"])
            cells[key] = Cell(*key, scheme, setting, ecn, users, capacity)
        warm, end = float(scenario["warmup_s"]), float(scenario["duration_s"])
        path = study.run_dir(row["run_id"]) / "exchanges.parquet"
        h = rthist.read_run(path, warm, end - warm)
        c = cells[key]
        c.hist = c.hist + h
        c.reps.append({**_link_figures(row), "completed": float(h.n)})
        c.exchanges.append(path)
    return cells


def best(
    cells: Iterable[Cell], scheme: str, allowed: Iterable[str], rtt: str, load: str
) -> Cell | None:
    """The setting of `scheme` with the smallest E[min(T, 2 s)] among those whose ECN mode is
    in `allowed`, at `rtt` and `load` (None when there is none)."""
    ok = set(allowed)
    cand = [
        c
        for c in cells
        if c.scheme == scheme and c.ecn in ok and c.rtt == rtt and c.load == load and c.hist.n
    ]
    return min(cand, key=lambda c: c.hist.mean_capped()) if cand else None


def _whole(x: float) -> int | None:
    return None if math.isnan(x) else round(x)


def summary_table(
    cells: Iterable[Cell], schemes: Iterable[str], basis_mbps: float = 100.0
) -> pl.DataFrame:
    """The paper's Tables 2-4: one row per configuration and load, means over repetitions.
    Link utilization is on the paper's basis, a share of `basis_mbps` (the 100 Mb/s link),
    also for the uncongested network's 1 Gb/s link, beside the throughput it stands for
    (utilization × the cell's own capacity: Mb/s on the wire, mean of both directions)."""
    wanted = set(schemes)
    rows = [
        {
            "RTT": c.rtt,
            "load": c.load,
            "scheme": c.scheme,
            "setting": c.setting,
            "ECN": c.ecn,
            "loss ratio (%)": 100 * c.mean("loss"),
            "completed exchanges": _whole(c.mean("completed")),
            "throughput (Mb/s)": c.mean("utilization") * c.capacity_mbps,
            f"link utilization (% of {basis_mbps:g} Mb/s)": 100
            * c.mean("utilization")
            * c.capacity_mbps
            / basis_mbps,
            "median response (s)": c.hist.quantile(0.5),
            "ECN marks": _whole(c.mean("marks")),
            "overflow drops": _whole(c.mean("overflow")),
            "repetitions": len(c.reps),
        }
        for c in cells
        if c.scheme in wanted
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame()


# --- the report ------------------------------------------------------------------------------


def _tag(load: str) -> str:
    """A load label in a file name: "90%" -> "90"."""
    return load.rstrip("%")


def _cdf(hist: rthist.ResponseTimeHist) -> tuple[np.ndarray, np.ndarray]:
    t, f = hist.cdf()
    keep = t <= rthist.CAP_S * 1.1
    return t[keep], f[keep]


class _Report:
    def __init__(self, parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
        self.doc = doc
        self.scale = scale
        self.main = collect(parts["main"])
        self.unc = collect(parts["uncongested"], aqm_of=lambda _row: UNCONGESTED)
        self.cells = list(self.main.values())
        self.calibration = parts["main"].directory / "calibration.json"
        self.loads = sorted({c.load for c in self.cells})
        self.rtts = [r for r in (UNIFORM, CAMPUS) if any(c.rtt == r for c in self.cells)]

    def get(self, rtt: str, load: str, aqm: str) -> Cell | None:
        if aqm == UNCONGESTED:
            return self.unc.get((rtt, load, UNCONGESTED))
        return self.main.get((rtt, load, aqm))

    def curves(self, chosen: Iterable[Cell], rtt: str, load: str, ccdf: bool = False):
        """label -> curve for `chosen`, then drop-tail 240 and the uncongested network."""
        out = {}
        for c in [*chosen, self.get(rtt, load, BASELINE), self.get(rtt, load, UNCONGESTED)]:
            if c is not None and c.hist.n and c.aqm not in out:
                label = "uncongested network" if c.aqm == UNCONGESTED else c.aqm
                out[label] = c.hist.ccdf() if ccdf else _cdf(c.hist)
        return out

    def styles(self) -> dict[str, dict]:
        return {
            "uncongested network": _REFERENCE_STYLE[UNCONGESTED],
            BASELINE: _REFERENCE_STYLE[BASELINE],
        }

    def cdf_figure(
        self, chosen: list[Cell], rtt: str, load: str, name: str, caption: str, title: str = ""
    ):
        if not chosen:
            return
        curves = self.curves(chosen, rtt, load)
        fig = plots.cdf_curves(curves, rthist.CAP_S, title or caption, styles=self.styles())
        self.doc.figure(fig, name, caption)

    def ccdf_figure(self, chosen: list[Cell], rtt: str, load: str, name: str, caption: str):
        if not chosen:
            return
        curves = self.curves(chosen, rtt, load, ccdf=True)
        fig = plots.ccdf_curves(curves, caption, styles=self.styles(), xlim=(0.01, 1e3))
        self.doc.figure(fig, name, caption)

    def settings(self, scheme: str, ecns: Iterable[str], rtt: str, load: str) -> list[Cell]:
        ok = set(ecns)
        return [
            c
            for c in self.cells
            if c.scheme == scheme and c.ecn in ok and c.rtt == rtt and c.load == load
        ]

    # -- sections ---------------------------------------------------------------------------
    def design(self) -> None:
        d = self.doc
        d.heading("Design as run")
        d.paragraph(
            f"Scale: {self.scale}. Runs per configuration: "
            f"{max((len(c.reps) for c in self.cells), default=0)} (pooled in the response-time "
            "distributions, averaged in the tables). Exchanges count when they started in "
            "[warm-up, duration − warm-up] and completed. Deviations from the paper and their "
            "reasons: docs/studies.md, Study B."
        )
        rows = []
        for rtt in self.rtts:
            for load in self.loads:
                c = self.get(rtt, load, BASELINE) or next(
                    (x for x in self.cells if x.rtt == rtt and x.load == load), None
                )
                if c is not None:
                    paper = PAPER_USERS_PER_SIDE.get(rtt, math.nan) * _load_fraction(load)
                    rows.append(
                        {
                            "RTT": rtt,
                            "load": load,
                            "users (left clients)": c.users[0],
                            "users (right clients)": c.users[-1],
                            "paper (§3.2)": paper,
                            "ours / paper": c.users[0] / paper if paper else math.nan,
                        }
                    )
        d.table(
            rows,
            "Users per side (§3.2, from the calibration on the uncongested link), beside the "
            "paper's: 9,520 per side for 100 % with uniform RTTs and 10,570 with the general "
            "distribution, scaled to the load",
        )
        self.calibration_figure()

    def calibration_figure(self) -> None:
        if not self.calibration.is_file():
            return
        doc = json.loads(self.calibration.read_text(encoding="utf-8"))
        series = {}
        for e in doc.get("entries", {}).values():
            fields = e.get("fields", {})
            rtt = UNIFORM if (fields.get("rtt") or {}).get("kind") == "uniform" else CAMPUS
            side = fields.get("traffic", {}).get("client_side", "?")
            pts = sorted(e.get("points", []), key=lambda p: p["population"])
            x = [p["population"] for p in pts]
            y = [p["load_mbps"] + p.get("other_load_mbps", 0.0) for p in pts]
            series[f"{rtt} RTT, clients {side}"] = (x, y, None)
        fig = plots.errorbar_lines(
            series, "users per side", "load on one direction (Mb/s)", "Figure 4: calibration"
        )
        self.doc.figure(
            fig,
            "fig04_calibration",
            "Figure 4: offered load on one direction of the uncongested link against users per "
            "side (responses to one side plus the other side's requests and ACKs, each side "
            "measured alone and added).",
        )

    def rtt_figures(self) -> None:
        curves_cdf, curves_ccdf = {}, {}
        for rtt in self.rtts:
            c = self.get(rtt, self.loads[0], BASELINE) if self.loads else None
            c = c or next((x for x in self.cells if x.rtt == rtt), None)
            if c is None:
                continue
            # The first repetition's connections (the law is the same in every repetition).
            frame = pl.read_parquet(c.exchanges[0], columns=["conn_id", "base_rtt_ms"])
            frame = frame.unique("conn_id")
            x = np.sort(frame["base_rtt_ms"].to_numpy())
            if x.size == 0:
                continue
            curves_cdf[f"{rtt}"] = (x, np.arange(1, x.size + 1) / x.size)
            curves_ccdf[f"{rtt}"] = (x, 1.0 - np.arange(x.size) / x.size)
        if not curves_cdf:
            return
        self.doc.heading("Minimum RTT distributions (Figures 2-3)")
        self.doc.figure(
            plots.cdf_curves(curves_cdf, 1000.0, "Per-connection minimum RTT", "RTT (ms)"),
            "fig02_rtt_cdf",
            "Figure 2: CDF of the per-connection minimum RTT as drawn in a run (uniform "
            "[10, 150] ms; campus: the PackMime-HTTP substitute, docs/studies.md).",
        )
        self.doc.figure(
            plots.ccdf_curves(curves_ccdf, "Per-connection minimum RTT", "RTT (ms)", "P(RTT > x)"),
            "fig03_rtt_ccdf",
            "Figure 3: CCDF of the per-connection minimum RTT.",
        )

    def per_scheme(self) -> None:
        d = self.doc
        d.heading("AQM with packet drops (§4): Figures 5-8")
        figure = {"PI": 5, "REM": 6, "ARED-pkt": 7, "ARED-byte": 8}
        for scheme in SCHEMES:
            for load in self.loads:
                chosen = self.settings(scheme, [OFF], UNIFORM, load)
                self.cdf_figure(
                    chosen,
                    UNIFORM,
                    load,
                    f"fig{figure[scheme]:02d}_{scheme}_{_tag(load)}",
                    f"Figure {figure[scheme]}: {scheme} without ECN, {load} load",
                )
        d.heading("AQM with and without ECN (§5): Figures 12-19")
        first = {"PI": 12, "REM": 14, "ARED-pkt": 16, "ARED-byte": 18}
        for scheme in SCHEMES:
            for i, load in enumerate(self.loads):
                chosen = self.settings(scheme, [OFF, ECN], UNIFORM, load)
                n = first[scheme] + min(i, 1)
                self.cdf_figure(
                    chosen,
                    UNIFORM,
                    load,
                    f"fig{n:02d}_{scheme}_ecn_{_tag(load)}",
                    f"Figure {n}: {scheme} with and without ECN (RFC 3168), {load} load",
                )
        d.heading("ARED with 'new gentle' ECN forwarding (§5.2): Figures 20-21")
        for i, load in enumerate(self.loads):
            chosen = [
                c
                for scheme in ("ARED-pkt", "ARED-byte")
                for c in self.settings(scheme, [ECN, NEW_GENTLE], UNIFORM, load)
                if c.setting == "(12, 36)"
            ]
            self.cdf_figure(
                chosen,
                UNIFORM,
                load,
                f"fig{20 + min(i, 1)}_ared_new_gentle_{_tag(load)}",
                f"Figure {20 + min(i, 1)}: ARED (12, 36) with ECN, RFC 3168 vs new gentle "
                f"forwarding, {load} load",
                f"Figure {20 + min(i, 1)}: ARED (12, 36), RFC 3168 vs new gentle, {load}",
            )

    def best_figures(self, groups: list[tuple[str, list[str], int, int]], schemes) -> None:
        """Best-of-each-scheme CDF and CCDF figures at each load, with a selection table."""
        picks = []
        for title, ecns, fig_cdf, fig_ccdf in groups:
            for i, load in enumerate(self.loads):
                chosen = []
                for scheme in schemes:
                    b = best(self._candidates(scheme), scheme, ecns, UNIFORM, load)
                    if b is not None:
                        chosen.append(b)
                        picks.append(
                            {
                                "figures": title,
                                "load": load,
                                "scheme": scheme,
                                "best setting": b.aqm,
                                "E[min(T, 2 s)] (s)": b.hist.mean_capped(),
                            }
                        )
                n = fig_cdf + min(i, 1)
                self.cdf_figure(
                    chosen,
                    UNIFORM,
                    load,
                    f"fig{n:02d}_best_{_tag(load)}",
                    f"Figure {n}: {title}, {load}",
                )
                self.ccdf_figure(
                    chosen,
                    UNIFORM,
                    load,
                    f"fig{fig_ccdf:02d}_best_ccdf_{_tag(load)}",
                    f"Figure {fig_ccdf} (CCDF): {title}, {load}",
                )
        self.doc.table(picks, "Best setting of each scheme (smallest E[min(T, 2 s)])")

    def _candidates(self, scheme: str) -> list[Cell]:
        """ARED as one scheme (packet or byte mode) in the best-of figures (Figures 9-11,
        22-24), as the paper picks its best ARED across modes."""
        if scheme != "ARED":
            return self.cells
        return [
            dataclasses.replace(c, scheme="ARED") for c in self.cells if c.scheme.startswith("ARED")
        ]

    def tables(self, rtt: str, titles: list[tuple[str, list[str]]]) -> None:
        cells = [c for c in self.cells if c.rtt == rtt]
        unc = [c for c in self.unc.values() if c.rtt == rtt]
        # The paper's basis: the congested network's link (100 Mb/s), also for the uncongested
        # network's 1 Gb/s link, whose own busy share (≈ 9 %) compares with nothing.
        basis = max((c.capacity_mbps for c in cells), default=100.0)
        for caption, schemes in titles:
            t = summary_table([*cells, *unc], [*schemes, DROPTAIL, UNCONGESTED], basis)
            if t.height:
                self.doc.table(t.drop("RTT"), f"{caption} ({rtt} RTTs)")
        if unc:
            self.doc.paragraph(
                f"Link utilization is a share of the {basis:g} Mb/s link, the paper's basis, for "
                f"every row: the uncongested network's row gives the throughput its "
                f"{unc[0].capacity_mbps:g} Mb/s link carried (Mb/s on the wire, mean of both "
                f"directions) over {basis:g} Mb/s, not the share of time its own link was "
                "busy.",
                note=True,
            )

    def campus(self) -> None:
        if CAMPUS not in self.rtts:
            return
        d = self.doc
        d.heading("The general (campus) RTT distribution (§6): Figures 25-28, Table 4")
        d.paragraph(
            "Settings: those best with the uniform RTTs at the same load (without ECN: among "
            "the non-ECN settings; with ECN: among the ECN settings)."
        )
        for g, (title, ecns) in enumerate(
            (("without ECN", [OFF]), ("with ECN", [ECN, NEW_GENTLE]))
        ):
            for i, load in enumerate(self.loads):
                n = 25 + 2 * g + min(i, 1)
                chosen = []
                for scheme in SCHEMES:
                    b = best(self.cells, scheme, ecns, UNIFORM, load)
                    c = self.get(CAMPUS, load, b.aqm) if b is not None else None
                    if c is not None:
                        chosen.append(c)
                self.cdf_figure(
                    chosen,
                    CAMPUS,
                    load,
                    f"fig{n:02d}_campus_{_tag(load)}",
                    f"Figure {n}: campus RTTs {title}, {load} load",
                )
        self.tables(CAMPUS, [("Table 4: all queue management schemes", list(SCHEMES))])

    def write(self) -> None:
        self.design()
        self.rtt_figures()
        if UNIFORM in self.rtts:
            self.per_scheme()
            self.doc.heading("Best settings without ECN (§4.4): Figures 9-11")
            self.best_figures([("best of each scheme without ECN", [OFF], 9, 11)], _BEST)
            self.doc.heading("Loss, completed exchanges and link utilization: Tables 2-3")
            self.tables(
                UNIFORM,
                [
                    ("Table 2: PI and REM", ["PI", "REM"]),
                    ("Table 3: ARED", ["ARED-pkt", "ARED-byte"]),
                ],
            )
            self.doc.heading("Best of all schemes (§5.3): Figures 22-24")
            self.best_figures(
                [("best of each scheme, with or without ECN", [OFF, ECN, NEW_GENTLE], 22, 24)],
                _BEST,
            )
        self.campus()


_BEST = ("PI", "REM", "ARED")


def report(parts: Mapping[str, Study], doc: HtmlDocument, scale: str) -> None:
    _Report(parts, doc, scale).write()
