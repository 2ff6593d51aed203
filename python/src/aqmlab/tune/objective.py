"""The metrics a tune can optimise or constrain, read from one run, and the objective: a
weighted sum of metrics, minimised (docs/tune.md, "Objective").

A run's metrics are Study A's per-run row (`aqmlab.analysis.metrics.run_metrics`: completed
exchanges started after the warm-up, the studied bottleneck direction) plus the 90th
percentile and the mean of the response times. The objective of a candidate is the mean over
seeds of the per-run objective; since it is linear in the metrics, that is also the weighted
sum of the mean metrics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from aqmlab import scenario as sc
from aqmlab.analysis import metrics as m
from aqmlab.errors import show_value

__all__ = ["METRICS", "Objective", "parse", "run_metrics"]

# name -> what it is (shown in errors, the report and docs/tune.md)
METRICS = {
    "p50_response_s": "median response time of completed exchanges after warm-up (s)",
    "p90_response_s": "90th percentile response time (s)",
    "mean_response_s": "mean response time (s)",
    "share_le_1s": "share of completed responses <= 1 s (0..1)",
    "share_gt_3s": "share of completed responses > 3 s (0..1)",
    "utilization": "bottleneck utilisation, studied direction (0..1)",
    "loss_rate": "queue drops and link losses / arrivals (0..1)",
    "mean_queue_pkts": "time-average queue length (packets)",
    "throughput_kBps": "bottleneck throughput, studied direction (kB/s)",
}


def run_metrics(summary: Mapping[str, Any], exchanges: pl.DataFrame | None) -> dict[str, float]:
    """The `METRICS` of one run (NaN where a run has none, e.g. no completed exchange)."""
    row = m.run_metrics(summary, exchanges)
    out = {
        "p50_response_s": row["median_response_s"],
        "share_le_1s": row["pct_le_1s"] / 100.0,
        "share_gt_3s": row["pct_gt_3s"] / 100.0,
        "utilization": row["utilization"],
        "loss_rate": row["loss_rate"],
        "mean_queue_pkts": row["mean_queue_pkts"],
        "throughput_kBps": row["throughput_kBps"],
        "p90_response_s": math.nan,
        "mean_response_s": math.nan,
    }
    if exchanges is not None:
        warmup = float((summary.get("scenario") or {}).get("warmup_s") or 0.0)
        ex = m.exchanges_after_warmup(exchanges, warmup)
        rt = ex.filter(pl.col("completed") & pl.col("response_time_s").is_not_nan())[
            "response_time_s"
        ]
        if rt.len():
            out["p90_response_s"] = float(rt.quantile(0.9, interpolation="linear"))
            out["mean_response_s"] = float(rt.mean())
    return {k: (math.nan if v is None else float(v)) for k, v in out.items()}


@dataclass
class Objective:
    """`sum(weight · metric)`, minimised; `constraints` on the candidate's mean metrics."""

    weights: dict[str, float]
    constraints: list[Any] = field(default_factory=list)  # tunefile.Comparison

    def value(self, metrics: Mapping[str, float]) -> float:
        return math.fsum(w * float(metrics[k]) for k, w in self.weights.items())

    def describe(self) -> str:
        if len(self.weights) == 1:
            ((k, w),) = self.weights.items()
            if w == 1:
                return f"minimize {k}"
            if w == -1:
                return f"maximize {k}"
        return "minimize " + " + ".join(f"{w:g}·{k}" for k, w in self.weights.items())

    def violation(self, metrics: Mapping[str, float]) -> float:
        """Sum of the constraints' misses (0: feasible)."""
        return math.fsum(c.violation(metrics) for c in self.constraints)


def _known(name: str, where: str) -> str:
    if name not in METRICS:
        raise sc.ScenarioError(
            f"{where} = {show_value(name)}: unknown metric, allowed: {', '.join(METRICS)}"
        )
    return name


def parse(minimize: str | dict[str, float] | None, maximize: str | None) -> Objective:
    """`minimize = "p90_response_s"`, `maximize = "share_le_1s"`, or `minimize = { metric =
    weight, ... }` (a negative weight rewards the metric)."""
    if (minimize is None) == (maximize is None):
        raise sc.ScenarioError(
            "objective: give exactly one of minimize = METRIC (or a table of weights) and "
            f"maximize = METRIC; metrics: {', '.join(METRICS)}"
        )
    if maximize is not None:
        return Objective({_known(maximize, "objective.maximize"): -1.0})
    if isinstance(minimize, str):
        return Objective({_known(minimize, "objective.minimize"): 1.0})
    if not minimize:
        raise sc.ScenarioError("objective.minimize = {}: expected at least one metric = weight")
    weights = {}
    for k, w in minimize.items():
        _known(k, f"objective.minimize.{k}")
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w):
            raise sc.ScenarioError(f"objective.minimize.{k} = {show_value(w)}: expected a number")
        weights[k] = float(w)
    return Objective(weights)
