"""Whole simulations on both sides, for the end-to-end suites (`e2e`, `study_c_ared`): running
them two at a time, aqmlab in-process, and reading what both write.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from aqmlab import runner

# Two cores: never more than two simulations at once (ns-2 and aqmlab alike).
WORKERS = int(os.environ.get("AQMLAB_E2E_WORKERS", "2"))


def parallel(jobs: list[Callable[[], object]]) -> list:
    """Runs the thunks `jobs` on at most WORKERS threads (each one a simulation: an ns-2
    process, or aqmlab's core, which releases the GIL while it simulates)."""
    with ThreadPoolExecutor(max_workers=WORKERS) as ex:
        futures = [ex.submit(j) for j in jobs]
        return [f.result() for f in futures]


def scenario_text(doc: dict) -> str:
    return json.dumps(doc, indent=1)


def run_aqmlab(doc: dict, json_path: Path, outdir: Path) -> Path:
    """Runs the scenario `doc` in aqmlab (results in `outdir`; the document itself, as given,
    beside them in `json_path`)."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(scenario_text(doc))
    runner.run(doc, out=outdir)
    return outdir


def unchanged(inputs: Path, text: str, result: Path) -> bool:
    """Whether a run's results exist and its recorded inputs are `text`: it need not run."""
    return result.exists() and inputs.exists() and inputs.read_text() == text


def read_stats(path: Path) -> dict[str, float]:
    """The `name value` lines an end-to-end Tcl script writes (stats.txt)."""
    out = {}
    for line in path.read_text().splitlines():
        k, v = line.split()
        out[k] = float(v)
    return out


def response_times_ns2(workdir: Path, clouds: tuple[int, ...] = (0, 1)) -> np.ndarray:
    """Response times (s) of PackMime's `set-outfile` files pm<i>.dat (column 4, ms)."""
    parts = []
    for i in clouds:
        f = workdir / f"pm{i}.dat"
        if f.stat().st_size == 0:
            continue
        parts.append(np.loadtxt(f, usecols=(3,), ndmin=1) / 1000.0)
    return np.concatenate(parts) if parts else np.array([])


def response_times_ours(outdir: Path, warmup: float, client_side: str | None = None):
    """Response times (s) of the exchanges started at or after `warmup` and completed (only
    those of clients on `client_side`, if given)."""
    ex = pl.read_parquet(outdir / "exchanges.parquet")
    ex = ex.filter(pl.col("completed") & (pl.col("start_s") >= warmup))
    if client_side is not None:
        ex = ex.filter(pl.col("client_side") == client_side)
    return ex["response_time_s"].to_numpy()


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov statistic sup |F_a − F_b|."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def per_seed(ns_values, ours_values, fmt: str) -> str:
    """A note's "; per seed ns-2 a, b, c / aqmlab x, y, z"."""
    ns_txt = ", ".join(format(x, fmt) for x in ns_values)
    ours_txt = ", ".join(format(x, fmt) for x in ours_values)
    return f"; per seed ns-2 {ns_txt} / aqmlab {ours_txt}"
