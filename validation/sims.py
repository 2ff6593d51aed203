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

from aqmlab.analysis.intervals import mean_interval, welch_interval
from aqmlab.runs import runner
from validation import ns2

# Two cores: never more than two simulations at once (ns-2 and aqmlab alike).
WORKERS = int(os.environ.get("AQMLAB_E2E_WORKERS", "2"))

# Tolerances of the end-to-end comparisons (issue 16's brief): statistics of two different
# random streams, pooled over the seeds.
TOL_QUANTILE = 0.10  # response-time quantiles, relative
TOL_KS = 0.03  # two-sample KS statistic of the pooled response times
TOL_UTIL = 2.0  # utilisation, percentage points
TOL_LOSS = 0.20  # loss rate, relative
TOL_QUEUE = 0.15  # mean queue, relative

NOTE_UTIL = "bytes leaving the queue × 8 / (rate × measured time); aqmlab: transmitter busy time"
NOTE_LOSS = "queue drops / arrivals at the queue after the warm-up (ECN marks not counted)"
NOTE_QUEUE = (
    "packets waiting (not the one on the wire); ns-2: exact time average (QueueMonitor "
    "integrator); aqmlab: mean of samples every 3 ms"
)
DIRECTIONS = {
    "fwd": ("forward", "forward (left → right)"),
    "rev": ("reverse", "reverse (right → left)"),
}


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


def resumable_ns2(
    base: Path,
    seed: int,
    script: str,
    params: str,
    post: Callable[[Path], object] | None = None,
    result: str = "stats.txt",
) -> list:
    """The ns-2 run of one seed in `base/ns2_s<seed>`, as a job, unless its results exist
    from the same parameters and scripts (`ns2.stamped`). `post` runs on the run's directory
    after it, and writes `result`, the file whose presence says the run is complete."""
    wd, params = base / f"ns2_s{seed}", ns2.stamped(params, script)
    if unchanged(wd / "params.tcl", params, wd / result):
        return []

    def job() -> Path:
        (wd / result).unlink(missing_ok=True)
        ns2.run(script, params, wd, 3600)
        if post is not None:
            post(wd)
        return wd

    return [job]


def resumable_ours(base: Path, seed: int, doc: dict) -> list:
    """The aqmlab run of one seed in `base/aqmlab_s<seed>`, as a job, unless its results
    exist from the same scenario."""
    od, path = base / f"aqmlab_s{seed}", base / f"aqmlab_s{seed}.json"
    if unchanged(path, scenario_text(doc), od / "summary.json"):
        return []
    return [lambda: run_aqmlab(doc, path, od)]


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


def interval_of(
    ns_values, ours_values, kind: str, ns2_figure: float, paired: bool = False
) -> float:
    """Half-width of the 95 % interval of the difference between the two simulators, in the
    unit of `kind` ("rel": relative to `ns2_figure`, "points": percentage points), from the
    per-seed values of each side: Welch's interval of the difference of the means, the seeds
    being the independent replications (results.py: the verdict). For a pooled figure (a
    pooled quantile or loss rate) this is the interval of the per-seed means, which is what
    the seed-to-seed spread says of the pooled one. NaN with fewer than two seeds a side.
    `paired`: the two sides ran the same workload seed by seed (aqmlab replaying ns-2's), and
    the interval is that of the mean per-seed difference."""
    if paired:
        iv = mean_interval(o - n for o, n in zip(ours_values, ns_values, strict=True))
    else:
        iv = welch_interval(ours_values, ns_values)
    if iv.half_width is None:
        return float("nan")
    if kind == "rel":
        return iv.half_width / abs(ns2_figure) if ns2_figure else float("inf")
    if kind == "points":
        return iv.half_width * 100.0
    return iv.half_width


def direction_rows(
    row, ns_stats: list[dict], ours: list[dict], rate_bps: float, d: str, paired: bool = False
) -> list:
    """Utilisation, loss and mean queue of bottleneck direction `d` ("fwd" or "rev"), pooled
    over the seeds (the per-seed values go into the note: they show the seed-to-seed spread).
    `ns_stats` are the Tcl scripts' stats.txt, `ours` aqmlab's summary.json, one per seed."""
    ad, name = DIRECTIONS[d]
    span = sum(s["measured_s"] for s in ns_stats)
    util_ns = [s[f"{d}.bdepartures_"] * 8 / (rate_bps * s["measured_s"]) for s in ns_stats]
    loss_ns = [s[f"{d}.pdrops_"] / max(s[f"{d}.parrivals_"], 1) for s in ns_stats]
    queue_ns = [s[f"{d}.qint"] / s["measured_s"] for s in ns_stats]
    summ = [o["summary"][ad] for o in ours]
    util_ours = [s["utilization"] for s in summ]
    loss_ours = [s["loss_rate"] for s in summ]
    queue_ours = [s["mean_queue_pkts"] for s in summ]
    pooled_loss_ns = sum(s[f"{d}.pdrops_"] for s in ns_stats) / max(
        sum(s[f"{d}.parrivals_"] for s in ns_stats), 1
    )
    drops = sum(s["drops_early"] + s["drops_forced"] + s["drops_overflow"] for s in summ)
    pooled_loss_ours = drops / max(sum(s["arrivals"] for s in summ), 1)
    util_pooled_ns = sum(u * s["measured_s"] for u, s in zip(util_ns, ns_stats, strict=True))
    mean_queue_ns = float(np.mean(queue_ns))
    return [
        row(
            f"utilisation, {name}",
            util_pooled_ns / span,
            float(np.mean(util_ours)),
            kind="points",
            tol=TOL_UTIL,
            note=NOTE_UTIL + per_seed(util_ns, util_ours, ".3f"),
            interval=interval_of(util_ns, util_ours, "points", util_pooled_ns / span, paired),
        ),
        row(
            f"loss rate, {name}",
            pooled_loss_ns,
            pooled_loss_ours,
            kind="rel",
            tol=TOL_LOSS,
            note=NOTE_LOSS + per_seed(loss_ns, loss_ours, ".4f"),
            interval=interval_of(loss_ns, loss_ours, "rel", pooled_loss_ns, paired),
        ),
        row(
            f"mean queue (packets), {name}",
            mean_queue_ns,
            float(np.mean(queue_ours)),
            kind="rel",
            tol=TOL_QUEUE,
            note=NOTE_QUEUE + per_seed(queue_ns, queue_ours, ".1f"),
            interval=interval_of(queue_ns, queue_ours, "rel", mean_queue_ns, paired),
        ),
    ]


def response_rows(
    row,
    per_ns: list[np.ndarray],
    per_ours: list[np.ndarray],
    quantiles,
    note: str,
    paired: bool = False,
) -> list:
    """Response-time rows from per-seed samples: the pooled quantiles `quantiles` (each with
    the per-seed values in its note), and the completed responses per seed."""
    rt_ns, rt_ours = np.concatenate(per_ns), np.concatenate(per_ours)
    rows = []
    for q in quantiles:
        q_ns = [float(np.percentile(x, q)) for x in per_ns]
        q_ours = [float(np.percentile(x, q)) for x in per_ours]
        pooled_ns = float(np.percentile(rt_ns, q))
        rows.append(
            row(
                f"response time p{q} (s)",
                pooled_ns,
                np.percentile(rt_ours, q),
                kind="rel",
                tol=TOL_QUANTILE,
                note=note + per_seed(q_ns, q_ours, ".3f"),
                interval=interval_of(q_ns, q_ours, "rel", pooled_ns, paired),
            )
        )
    n_ns, n_ours = [len(x) for x in per_ns], [len(x) for x in per_ours]
    rows.append(
        row(
            "responses completed per seed",
            len(rt_ns) / len(per_ns),
            len(rt_ours) / len(per_ours),
            kind="rel",
            tol=TOL_QUANTILE,
            note="completed responses counted as above",
            interval=interval_of(n_ns, n_ours, "rel", len(rt_ns) / len(per_ns)),
        )
    )
    return rows
