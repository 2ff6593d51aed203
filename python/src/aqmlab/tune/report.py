"""report.html of a tune: the best settings with intervals, the comparison with the baselines
(finalist seeds and held-out seeds, paired and unpaired), the response surface, the history
and the method and its limits. Built from tune.json's content alone (`write(doc, path)`), with
the HtmlDocument of the study reports (self-contained, images inline)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from aqmlab.report.html import HtmlDocument
from aqmlab.tune import plots

__all__ = ["write"]

# More pairs than this are not drawn (a 5-parameter space has 10): the first ones in file order.
MAX_HEATMAPS = 6


def _pm(iv: dict[str, Any] | None, digits: int = 4) -> str:
    if not iv or iv.get("mean") is None:
        return "–"
    if iv.get("half_width") is None:
        return f"{iv['mean']:.{digits}g} (n = {iv['n']})"
    return f"{iv['mean']:.{digits}g} ± {iv['half_width']:.2g} (n = {iv['n']})"


def _settings(s: dict[str, Any]) -> str:
    if not s:
        return "(the tune's set only)"
    return ", ".join(
        f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}" for k, v in s.items()
    )


def _method(doc: dict[str, Any]) -> list[str]:
    r = doc["rungs"]
    seeds = doc["seeds"]
    return [
        f"Search: optuna's multivariate TPE, {len(doc['trials'])} trials, each on the "
        f"{len(seeds['training'])} training seeds {seeds['training']} (common random numbers: "
        "every candidate sees the same workloads).",
        f"Successive halving on run length: rungs {r['duration_s']} s (warm-up "
        f"{r['warmup_s']:g} s discarded), η = {r['eta']}; trials per rung {r['sizes']}.",
        f"Finalists {doc['finalists']} re-run at the longest length on the training and "
        f"finalist seeds {seeds['training'] + seeds['finalist']}; the winner is the best "
        "feasible mean. Its value there is optimistic (it was chosen on these seeds).",
        f"Held-out check: the winner and the baselines on seeds {seeds['heldout']}, used in "
        "no choice. Intervals: 95 % Student t over seeds; differences paired by seed "
        "(CRN) and, for comparison, unpaired (Welch).",
        "Limits: a tune finds the best settings for this scenario, load and objective at this "
        "run length, not a general recommendation; with few seeds the intervals are wide and "
        "a winner can fit its seeds (the held-out row says whether it holds); the response "
        "surface is seen through noisy, short runs. docs/tune.md explains the method.",
    ]


def write(doc: dict[str, Any], path: Path) -> Path:
    title = f"aqmlab tune: {doc['name']}" + (f" ({doc['scale']})" if doc.get("scale") else "")
    d = HtmlDocument(title)
    d.paragraph(
        f"Scenario {doc['scenario']}; objective: {doc['objective']}"
        + (f", subject to {', '.join(doc['constraints'])}" if doc["constraints"] else "")
        + (
            f"; parameter constraints {', '.join(doc['param_constraints'])}"
            if doc["param_constraints"]
            else ""
        )
        + ". Lower objective is better."
    )
    w = doc.get("winner")
    d.heading("Best settings")
    if w is None:
        d.paragraph("No trial reached the finalists (every run failed or was infeasible).")
    else:
        d.table(
            [{"parameter": k, "value": v} for k, v in w["settings"].items()],
            caption=f"winner: {w['name']}",
        )
        d.paragraph(
            f"Objective on the finalist seeds: {_pm(w['final_interval'])}; on the held-out "
            f"seeds: {_pm(w['heldout_interval'])}."
        )
        if (w.get("final") or {}).get("violation"):
            d.paragraph(
                "No finalist met the objective's constraints on the finalist seeds: this is "
                "the one that missed them least, not a feasible optimum.",
                note=True,
            )
    d.heading("Against the baselines")
    rows = []
    for c in [w, *doc["baselines"]] if w else doc["baselines"]:
        rows.append(
            {
                "candidate": "winner" if c is w else c["name"],
                "settings": _settings(c["settings"]),
                "finalist seeds": _pm(c.get("final_interval")),
                "held-out seeds": _pm(c.get("heldout_interval")),
                "source": c.get("source") or "",
            }
        )
    d.table(
        rows,
        caption="objective, mean ± 95 % half-width over seeds",
        align={"finalist seeds": "num", "held-out seeds": "num"},
    )
    diffs = []
    for comp in doc["comparisons"]:
        row = {"winner − baseline": comp["baseline"]}
        for part, label in (("final", "finalist seeds"), ("heldout", "held-out seeds")):
            p = comp.get(part) or {}
            row[f"{label}, paired"] = _pm(p.get("paired"))
            row[f"{label}, unpaired"] = _pm(p.get("unpaired"))
        diffs.append(row)
    if diffs:
        d.table(diffs, caption="difference of the objective (negative: the winner is better)")
    d.figure(plots.comparison(doc), "comparison", "winner and baselines, 95 % intervals")
    d.heading("Response surface")
    for p in doc["params"]:
        d.figure(
            plots.objective_vs_param(doc, p),
            f"objective_{p['field']}",
            f"objective against {p['field']}, every trial at every rung it reached",
        )
    for px, py in list(itertools.combinations(doc["params"], 2))[:MAX_HEATMAPS]:
        d.figure(
            plots.heatmap(doc, px, py),
            f"heat_{px['field']}_{py['field']}",
            f"mean first-rung objective, binned: {py['field']} against {px['field']}",
        )
    d.heading("Search history")
    d.figure(plots.history(doc), "history", "first-rung objective of each trial, in order")
    trows = []
    for t in sorted(doc["trials"], key=lambda t: t["trial"]):
        row: dict[str, Any] = {"trial": t["trial"], **t["settings"]}
        for r, ev in t["rungs"].items():
            row[f"rung {r}"] = ev["value"]
        if t["space_violation"]:
            row["note"] = "outside the parameter constraints (not run)"
        elif any(ev["violation"] for ev in t["rungs"].values()):
            row["note"] = "infeasible"
        trows.append(row)
    d.table(trows, caption="every trial: objective (mean over training seeds) at each rung")
    d.heading("Method and limits")
    d.bullets(_method(doc))
    d.code(
        json.dumps({k: doc[k] for k in ("seeds", "rungs", "params")}, indent=1),
        summary="the tune's settings",
    )
    return d.write(path)
