"""Reading a reproduction's runs for its report: one `Part` per sweep (a `Study`), runs found by
their axis labels, per-run record tables cut to the measured period, and response-time CDFs
kept small (evaluated on a grid) so that reports over hundreds of long runs fit in memory."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aqmlab.analysis import metrics as mt
from aqmlab.study import Study

__all__ = ["Part", "calibration_rows", "label_order", "pct"]

# Points of the response-time grid on which CDFs are kept (per run).
GRID_POINTS = 301


def label_order(values: Iterable[str], axis_labels: Sequence[str]) -> list[str]:
    """`values` in the order of the sweep file's labels."""
    rank = {v: i for i, v in enumerate(axis_labels)}
    return sorted(set(values), key=lambda v: rank.get(v, len(rank)))


def pct(x: float | None) -> float:
    return math.nan if x is None else 100.0 * x


class Part:
    """One part of a reproduction (a finished sweep) for its report. `exchange_filter` keeps
    the exchanges a study measures (Study C: the responses on the forward path)."""

    def __init__(self, study: Study, exchange_filter: pl.Expr | None = None) -> None:
        self.study = study
        self.exchange_filter = exchange_filter
        self.runs = study.runs()
        plan = json.loads((study.directory / "plan.json").read_text(encoding="utf-8"))
        self.axis_labels: dict[str, list[str]] = {a["name"]: a["labels"] for a in plan["axes"]}
        self._scenarios = {r["run_id"]: r["scenario"] for r in plan["runs"]}

    def labels(self, axis: str) -> list[str]:
        """The labels of `axis` that have finished runs, in file order."""
        if axis not in self.runs.columns:
            return []
        return label_order(self.runs[axis].to_list(), self.axis_labels.get(axis, []))

    def find(self, **labels: str) -> str | None:
        """The run id of the finished run with these labels (repetition 0), or None."""
        df = self.runs.filter(pl.col("rep") == 0)
        for k, v in labels.items():
            if k not in df.columns:
                return None
            df = df.filter(pl.col(k) == v)
        return df["run_id"][0] if df.height else None

    def scenario(self, run_id: str) -> dict[str, Any]:
        return self._scenarios[run_id]

    def warmup(self, run_id: str) -> float:
        return float(self.scenario(run_id).get("warmup_s") or 0.0)

    def path(self, run_id: str, table: str) -> Path:
        return self.study.run_dir(run_id) / f"{table}.parquet"

    def exchanges(
        self, run_id: str, columns: Sequence[str] | None = None, after_warmup: bool = True
    ) -> pl.DataFrame:
        """The measured exchanges (`exchange_filter`) started after the warm-up, completed or
        not; with `after_warmup` false, from the start of the run."""
        frame = pl.scan_parquet(self.path(run_id, "exchanges"))
        if self.exchange_filter is not None:
            frame = frame.filter(self.exchange_filter)
        if after_warmup:
            frame = frame.filter(pl.col("start_s") >= self.warmup(run_id))
        return (frame.select(columns) if columns else frame).collect()

    def response_times(self, run_id: str) -> np.ndarray:
        """Sorted response times (s) of the completed exchanges started after the warm-up."""
        ex = self.exchanges(run_id, ["response_time_s", "completed"])
        done = ex.filter(pl.col("completed") & pl.col("response_time_s").is_not_nan())
        return np.sort(done["response_time_s"].to_numpy())

    @lru_cache(maxsize=4096)  # noqa: B019 (parts live as long as their report)
    def cdf(self, run_id: str, xmax_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(x, F(x)) of the run's response times on GRID_POINTS points of [0, xmax_s]."""
        rt = self.response_times(run_id)
        x = np.linspace(0.0, xmax_s, GRID_POINTS)
        return x, mt.ecdf_at(rt, x)

    def value(self, run_id: str, column: str) -> Any:
        row = self.runs.filter(pl.col("run_id") == run_id)
        if row.height == 0 or column not in row.columns:
            return None
        return row[column][0]


def calibration_rows(directory: Path) -> list[dict[str, Any]]:
    """One row per stored calibration of a part (its calibration.json), for the report."""
    p = directory / "calibration.json"
    if not p.is_file():
        return []
    entries: Mapping[str, Any] = json.loads(p.read_text(encoding="utf-8")).get("entries") or {}
    rows = []
    for key, c in entries.items():
        pts = c.get("points") or []
        rows.append(
            {
                "key": key,
                "source": c.get("kind"),
                "clients": (c.get("fields") or {}).get("traffic", {}).get("client_side"),
                "tcp": _tcp_label((c.get("fields") or {}).get("tcp") or {}),
                "rtt": ((c.get("fields") or {}).get("rtt") or {}).get("kind", "none"),
                "Mb/s per unit": c.get("slope_mbps"),
                "unit": c.get("population"),
                "for 100 % (responses)": _per_capacity(c, False),
                "for 100 % (two-way, per side)": _per_capacity(c, True),
                "R²": c.get("r2"),
                "points": len(pts),
                "highest load measured (% of 10 Mb/s)": max(
                    (100 * p.get("load_fraction", 0) for p in pts), default=math.nan
                ),
                "run length (s)": c.get("duration_s"),
                "warm-up (s)": c.get("warmup_s"),
            }
        )
    return rows


def _per_capacity(c: Mapping[str, Any], two_way: bool) -> float:
    """Population for 100 % of the capacity (`Calibration.population_for`)."""
    slope = (c.get("slope_mbps") or 0.0) + ((c.get("other_slope_mbps") or 0.0) if two_way else 0.0)
    return (c.get("capacity_mbps") or math.nan) / slope if slope > 0 else math.nan


def _tcp_label(tcp: Mapping[str, Any]) -> str:
    return f"{tcp.get('recovery', '?')}{' + ECN' if tcp.get('ecn') else ''}"
