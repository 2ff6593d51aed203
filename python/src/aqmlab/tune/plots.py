"""The tune report's figures, drawn from tune.json's content: the objective against each
parameter (one point per trial and rung reached, coloured by rung), pairwise heat maps of the
first rung's objective (binned means), the search history, and the winner against the
baselines with their intervals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = ["comparison", "heatmap", "history", "objective_vs_param"]

RUNG_COLORS = ["tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
# Bins per axis of a heat map: about three trials per bin on average at 40 trials and 2-D
# (a first-principles choice: enough bins to show a valley, few enough to fill them).
HEAT_BINS = 6


def _points(doc: dict[str, Any], field: str) -> list[tuple[float, float, int, bool]]:
    """(parameter value, objective, rung, feasible) for every trial and rung it ran at."""
    out = []
    for t in doc["trials"]:
        for r, ev in t["rungs"].items():
            if ev["value"] is not None:
                feasible = ev["violation"] == 0
                out.append((float(t["settings"][field]), float(ev["value"]), int(r), feasible))
    return out


def objective_vs_param(doc: dict[str, Any], param: dict[str, Any]) -> Figure:
    fig = Figure(figsize=(5.6, 3.9), layout="constrained")
    ax = fig.subplots()
    pts = _points(doc, param["field"])
    durations = doc["rungs"]["duration_s"]
    for r in sorted({p[2] for p in pts}):
        color = RUNG_COLORS[r % len(RUNG_COLORS)]
        for feasible in (True, False):
            sel = [p for p in pts if p[2] == r and p[3] == feasible]
            if not sel:
                continue
            ax.scatter(
                [p[0] for p in sel],
                [p[1] for p in sel],
                s=18 if feasible else 22,
                color=color,
                marker="o" if feasible else "x",
                label=f"rung {r} ({durations[r]:g} s)" + ("" if feasible else ", infeasible"),
                alpha=0.8,
            )
    w = doc.get("winner")
    if w is not None and w.get("final_interval"):
        ax.axvline(
            float(w["settings"][param["field"]]), color="black", lw=0.8, ls="--", label="winner"
        )
    if param["log"]:
        ax.set_xscale("log")
    ax.set_xlim(float(param["low"]), float(param["high"]))  # the whole searched range
    ys = [p[1] for p in pts]
    if ys and min(ys) > 0 and max(ys) > 5 * min(ys):
        ax.set_yscale("log")  # a few very bad candidates would flatten the rest
    ax.set_xlabel(param["field"])
    ax.set_ylabel("objective (mean over training seeds)")
    ax.set_title(f"objective against {param['field']}", fontsize=10)
    ax.grid(True, alpha=0.3)
    if pts:
        ax.legend(fontsize=8)
    return fig


def _edges(param: dict[str, Any]) -> np.ndarray:
    lo, hi = float(param["low"]), float(param["high"])
    if param["log"]:
        return np.geomspace(lo, hi, HEAT_BINS + 1)
    return np.linspace(lo, hi, HEAT_BINS + 1)


def heatmap(doc: dict[str, Any], px: dict[str, Any], py: dict[str, Any]) -> Figure:
    """Mean first-rung objective of the trials in each bin (blank: no trial there; the
    infeasible count too, drawn as crosses)."""
    fig = Figure(figsize=(5.2, 4.2), layout="constrained")
    ax = fig.subplots()
    ex, ey = _edges(px), _edges(py)
    total = np.zeros((HEAT_BINS, HEAT_BINS))
    count = np.zeros((HEAT_BINS, HEAT_BINS))
    xs, ys, feasible = [], [], []
    for t in doc["trials"]:
        ev = t["rungs"].get("0")
        if ev is None or ev["value"] is None:
            continue
        feasible.append(ev["violation"] == 0)
        x, y = float(t["settings"][px["field"]]), float(t["settings"][py["field"]])
        i = min(max(int(np.searchsorted(ex, x, side="right")) - 1, 0), HEAT_BINS - 1)
        j = min(max(int(np.searchsorted(ey, y, side="right")) - 1, 0), HEAT_BINS - 1)
        total[j, i] += ev["value"]
        count[j, i] += 1
        xs.append(x)
        ys.append(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    mesh = ax.pcolormesh(ex, ey, np.ma.masked_invalid(mean), cmap="viridis_r", shading="flat")
    fig.colorbar(mesh, ax=ax, label="mean objective, rung 0")
    ok = [k for k, f in enumerate(feasible) if f]
    bad = [k for k, f in enumerate(feasible) if not f]
    ax.scatter(
        [xs[k] for k in ok],
        [ys[k] for k in ok],
        s=8,
        color="white",
        edgecolors="black",
        linewidths=0.4,
    )
    ax.scatter(
        [xs[k] for k in bad], [ys[k] for k in bad], s=14, color="black", marker="x", linewidths=0.6
    )
    w = doc.get("winner")
    if w is not None:
        ax.scatter(
            [float(w["settings"][px["field"]])],
            [float(w["settings"][py["field"]])],
            marker="*",
            s=160,
            color="red",
            edgecolors="black",
            label="winner",
        )
        ax.legend(fontsize=8, loc="upper right")
    if px["log"]:
        ax.set_xscale("log")
    if py["log"]:
        ax.set_yscale("log")
    ax.set_xlabel(px["field"])
    ax.set_ylabel(py["field"])
    ax.set_title(f"{py['field']} × {px['field']}", fontsize=10)
    return fig


def history(doc: dict[str, Any]) -> Figure:
    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    ax = fig.subplots()
    xs, ys, best, bx, ix, iy = [], [], [], [], [], []
    low = math.inf
    for t in sorted(doc["trials"], key=lambda t: t["trial"]):
        ev = t["rungs"].get("0")
        if ev is None or ev["value"] is None:
            continue
        if ev["violation"] == 0:
            xs.append(t["trial"])
            ys.append(ev["value"])
            low = min(low, ev["value"])
        else:
            ix.append(t["trial"])
            iy.append(ev["value"])
        if math.isfinite(low):
            bx.append(t["trial"])
            best.append(low)
    ax.scatter(xs, ys, s=14, color="tab:blue", label="feasible trial (rung 0)")
    if ix:
        ax.scatter(ix, iy, s=16, color="tab:gray", marker="x", label="infeasible trial")
    ax.step(bx, best, where="post", color="black", label="best so far")
    ax.set_xlabel("trial (order asked)")
    ax.set_ylabel("objective, rung 0")
    ax.set_title("search history", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def comparison(doc: dict[str, Any]) -> Figure:
    """Mean objective ± 95 % interval of the winner and each baseline, on the finalist seeds
    and on the held-out seeds."""
    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.subplots()
    cands = [c for c in [doc.get("winner"), *doc["baselines"]] if c is not None]
    names = [c["name"] if c is not doc.get("winner") else f"winner ({c['name']})" for c in cands]
    for k, (part, color) in enumerate((("final", "tab:blue"), ("heldout", "tab:orange"))):
        xs, ys, es = [], [], []
        for i, c in enumerate(cands):
            iv = c.get(f"{part}_interval")
            if iv and iv["mean"] is not None:
                xs.append(i + (k - 0.5) * 0.3)
                ys.append(iv["mean"])
                es.append(iv["half_width"] or 0.0)
        label = "finalist seeds" if part == "final" else "held-out seeds"
        ax.errorbar(xs, ys, yerr=es, fmt="o", color=color, capsize=4, label=label)
    ax.set_xticks(range(len(cands)), names, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel("objective (95 % interval)")
    ax.set_title("winner and baselines", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
