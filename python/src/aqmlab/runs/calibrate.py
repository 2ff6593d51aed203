"""Calibrating a Web source's load by running it (docs/analysis.md, "Load calibration").

A Web source's population (`users` of a `mah` entry, `rate` of a `packmime` entry) is turned
into an offered load by measuring: the scenario is run with only that source active, on an
uncongested copy of its network (bottleneck capacity × 10, large drop-tail queues), at several
populations; the throughput of the source's response direction after the warm-up is the
offered load, and a least-squares line through the origin gives Mb/s per unit of population.
Each calibration also records the traffic the source puts on the *other* direction (its
requests and the ACKs of its responses) per unit of population.

The calibrations are stored, keyed and turned back into populations by
`aqmlab.scenario.calibration`; this module makes them (it runs scenarios, so it sits above
`aqmlab.runs.runner`).
"""

from __future__ import annotations

import copy
import datetime as _dt
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import aqmlab._core as _core
from aqmlab import scenario as sc
from aqmlab.runs import runner
from aqmlab.scenario.calibration import (
    BIG_QUEUE,
    CAPACITY_FACTOR,
    LOAD_KEYS,
    MAX_LOAD,
    PER_SOURCE_KEYS,
    POPULATION,
    USER_KINDS,
    Calibration,
    calibration_fields,
    calibration_key,
    direction_capacity,
    output_path,
    own_per_source,
    response_direction,
    save_file,
    web_entries,
)

__all__ = [
    "calibrate",
    "calibrate_entry",
    "fit_intercept",
    "fit_through_origin",
    "measure_load",
    "target_populations",
    "uncongested",
]

DEFAULT_PILOT = {"mah": 10, "browsers": 10, "unc": 10, "packmime": 10.0}
# The pilot population grows × 10 (at most PILOT_TRIES runs) until it offers at least this
# fraction of the capacity.
PILOT_MIN_FRACTION = 0.01
PILOT_TRIES = 4


# --- fits ----------------------------------------------------------------------------------


def _r2(y: Sequence[float], pred: Sequence[float]) -> float:
    mean = sum(y) / len(y)
    ss_tot = sum((v - mean) ** 2 for v in y)
    ss_res = sum((v - p) ** 2 for v, p in zip(y, pred, strict=True))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


def fit_through_origin(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least squares y = slope·x: slope = Σxy / Σx². Returns (slope, R²), R² = 1 − SS_res /
    SS_tot with SS_tot about the mean of y (the usual, stricter, centred R²)."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError("need at least 2 (population, load) points")
    sxx = sum(v * v for v in x)
    if sxx <= 0:
        raise ValueError("all populations are zero")
    slope = sum(a * b for a, b in zip(x, y, strict=True)) / sxx
    return slope, _r2(y, [slope * v for v in x])


def fit_intercept(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Ordinary least squares y = slope·x + intercept. Returns (slope, intercept, R²)."""
    n = len(x)
    if n != len(y) or n < 2:
        raise ValueError("need at least 2 (population, load) points")
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((v - mx) ** 2 for v in x)
    if sxx <= 0:
        raise ValueError("need at least 2 distinct populations")
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
    icpt = my - slope * mx
    return slope, icpt, _r2(y, [slope * v + icpt for v in x])


# --- the calibration runs ------------------------------------------------------------------


def uncongested(
    scenario: Mapping[str, Any],
    index: int,
    population: float,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    factor: float = CAPACITY_FACTOR,
) -> dict[str, Any]:
    """The scenario with only traffic entry `index` (at `population`), the bottleneck
    `factor` times faster, drop-tail queues of 100 000 packets both ways and no exchange
    limit: everything else (TCP, RTTs, access links, seed) unchanged."""
    s = copy.deepcopy(dict(scenario))
    entry = dict(s["traffic"][index])
    kind = entry["kind"]
    for k in LOAD_KEYS:
        entry.pop(k, None)
    entry[POPULATION[kind]] = round(population) if kind in USER_KINDS else float(population)
    s["traffic"] = [entry]
    # The entry's own TCP, RTT law and hop go with it; the other entries' are dropped.
    own = own_per_source(scenario, index)
    for listed, field in PER_SOURCE_KEYS.items():
        s.pop(listed, None)
        if field in own:
            s[listed] = [own[field]]
    topo = dict(s["topology"])
    for key in ("bottleneck_mbps", "bottleneck_reverse_mbps"):
        if topo.get(key) is not None:
            topo[key] = float(topo[key]) * factor
    topo["access_queue_packets"] = max(int(topo.get("access_queue_packets", 0)), BIG_QUEUE)
    s["topology"] = topo
    s["queue"] = {"kind": "droptail", "limit": BIG_QUEUE}
    s.pop("queue_reverse", None)
    s.pop("max_exchanges", None)
    if duration_s is not None:
        s["duration_s"] = float(duration_s)
    if warmup_s is not None:
        s["warmup_s"] = float(warmup_s)
    if s.get("warmup_s", 0) >= s["duration_s"]:
        s["warmup_s"] = s["duration_s"] / 5
    measure = dict(s.get("measure") or {})
    measure["connections"] = False
    s["measure"] = measure
    return s


def measure_load(scenario: Mapping[str, Any], direction: str) -> tuple[float, float]:
    """Runs `scenario` in memory; returns (throughput Mb/s, utilization) of `direction` after
    the warm-up. (Top level so that worker processes can run it.)"""
    return measure_loads(scenario, direction)[:2]


def measure_loads(scenario: Mapping[str, Any], direction: str) -> tuple[float, float, float]:
    """`measure_load`, plus the throughput (Mb/s) of the other direction."""
    res = runner.run(scenario)
    core = res.summary.get("summary") or {}
    block = core.get(direction) or {}
    other = core.get(_OTHER[direction]) or {}
    return (
        float(block.get("throughput_mbps", 0.0)),
        float(block.get("utilization", 0.0)),
        float(other.get("throughput_mbps", 0.0)),
    )


_OTHER = {"forward": "reverse", "reverse": "forward"}


def target_populations(
    kind: str, slope_guess: float, capacity_mbps: float, points: int, max_load: float = MAX_LOAD
) -> list[float]:
    """`points` populations whose loads, at `slope_guess` Mb/s per unit, are evenly spread up
    to `max_load` × capacity (users rounded, at least 1 and distinct)."""
    if points < 2:
        raise ValueError(f"points = {points}: expected at least 2")
    if not slope_guess > 0:
        raise ValueError("the pilot run measured no load")
    out: list[float] = []
    for i in range(1, points + 1):
        p = max_load * capacity_mbps * i / points / slope_guess
        if kind in USER_KINDS:
            p = max(round(p), (int(out[-1]) + 1) if out else 1)
        out.append(p)
    return out


def _run_all(jobs: list[dict[str, Any]], direction: str, workers: int) -> list[tuple]:
    if workers <= 1 or len(jobs) <= 1:
        return [measure_loads(j, direction) for j in jobs]
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as ex:
        return list(ex.map(measure_loads, jobs, [direction] * len(jobs)))


def calibrate_entry(
    scenario: Mapping[str, Any],
    index: int,
    points: int = 5,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    workers: int = 2,
    scenario_file: str | None = None,
    log: Callable[[str], None] | None = None,
) -> Calibration:
    """Calibrates traffic entry `index` of a resolved scenario (see the module doc). A pilot
    run at the entry's own population (else 10 users / 10 connections/s; × 10 until it
    offers 1 % of the capacity) sets the populations of the `points` runs, which span loads up to
    1.1 × the real bottleneck capacity; the pilot is a point of the fit too."""
    entry = scenario["traffic"][index]
    kind = entry["kind"]
    pop_key = POPULATION[kind]
    direction = response_direction(entry)
    capacity = direction_capacity(scenario["topology"], direction)
    say = log or (lambda _m: None)

    def job(p: float) -> dict[str, Any]:
        return uncongested(scenario, index, p, duration_s, warmup_s)

    pilot = float(entry.get(pop_key) or DEFAULT_PILOT[kind])
    results: list[tuple[float, float, float, float]] = []
    for attempt in range(PILOT_TRIES):
        load, util, other = measure_loads(job(pilot), direction)
        say(f"traffic[{index}] {kind}: pilot {pop_key} = {pilot:g}: {load:.4g} Mb/s")
        # A pilot that carries almost nothing (a few pages of a few users) gives a slope
        # guess off by orders of magnitude, and the points would miss the load range.
        if load >= PILOT_MIN_FRACTION * capacity or (load > 0 and attempt == PILOT_TRIES - 1):
            results.append((pilot, load, util, other))
            break
        pilot *= 10
    if not results:
        raise RuntimeError(f"traffic[{index}]: the pilot runs measured no load in {direction}")
    pops = target_populations(kind, results[0][1] / results[0][0], capacity, points)
    measured = _run_all([job(p) for p in pops], direction, workers)
    for p, (load, util, other) in zip(pops, measured, strict=True):
        say(f"traffic[{index}] {kind}: {pop_key} = {p:g}: {load:.4g} Mb/s")
        results.append((float(p), load, util, other))
    results.sort()
    xs, ys = [r[0] for r in results], [r[1] for r in results]
    slope, r2 = fit_through_origin(xs, ys)
    other_slope, _ = fit_through_origin(xs, [r[3] for r in results])
    s2, icpt, r2i = fit_intercept(xs, ys)
    ref = uncongested(scenario, index, pops[0], duration_s, warmup_s)
    return Calibration(
        key=calibration_key(scenario, index),
        kind=kind,
        population=pop_key,
        direction=direction,
        slope_mbps=slope,
        r2=r2,
        intercept_fit={"slope_mbps": s2, "intercept_mbps": icpt, "r2": r2i},
        points=[
            {
                "population": p,
                "load_mbps": y,
                "load_fraction": y / capacity,
                "utilization": u,
                "other_load_mbps": o,
            }
            for p, y, u, o in results
        ],
        capacity_mbps=capacity,
        calibration_bottleneck_mbps=ref["topology"]["bottleneck_mbps"],
        duration_s=ref["duration_s"],
        warmup_s=ref["warmup_s"],
        seed=int(scenario.get("seed", sc.DEFAULT_SEED)),
        traffic_index=index,
        scenario_file=scenario_file,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        aqmlab=_core.version(),
        fields=calibration_fields(scenario, index),
        other_slope_mbps=other_slope,
    )


def calibrate(
    scenario: str | os.PathLike | Mapping[str, Any],
    points: int = 5,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    out: str | os.PathLike | None = None,
    *,
    overrides: Iterable[str] = (),
    seed: int | None = None,
    workers: int = 2,
    only: Iterable[int] | None = None,
    log: Callable[[str], None] | None = None,
    save: bool = True,
) -> tuple[Path | None, list[Calibration]]:
    """Calibrates every Web traffic entry of a scenario (or the entries in `only`) and stores
    the results in `out` (default: `output_path(scenario file)`, in the current directory; a
    scenario given as a dict without `out`, or `save` false, stores nothing). Returns (file,
    calibrations)."""
    if isinstance(scenario, str | os.PathLike):
        source: str | None = os.fspath(scenario)
        resolved = sc.load(scenario, overrides=overrides, seed=seed, loads=False)
    else:
        source = None
        resolved = sc.resolve(scenario, overrides=overrides, seed=seed, loads=False)
    indices = web_entries(resolved) if only is None else list(only)
    if not indices:
        raise sc.ScenarioError("traffic: no mah or packmime entry to calibrate")
    done = [
        calibrate_entry(resolved, i, points, duration_s, warmup_s, workers, source, log)
        for i in indices
    ]
    path = Path(out) if out is not None else (output_path(source) if source else None)
    if path is not None and save:
        save_file(path, done)
    return path, done
