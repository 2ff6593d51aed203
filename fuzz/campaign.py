"""Running generated scenarios in isolated worker processes and classifying what happened.

Each worker runs one scenario at a time through `aqmlab.runs.runner.run`, under a time bound
(SIGALRM: the core checks for signals between slices of events, so even a run deep in the
core stops within a fraction of a second) and an address-space limit (a run that allocates
past it aborts its worker, which the parent sees as a crash). The resource guard runs with a
memory budget of BUDGET_GB, so a scenario beyond it must be refused, not attempted.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import random
import resource
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz import generate, properties

BUDGET_GB = 2.0  # the guard's budget in the workers (AQMLAB_MAX_MEMORY_GB)
ADDRESS_SPACE_GB = 8.0  # RLIMIT_AS of a worker: the interpreter, libraries and the run
TIME_BOUND_S = 60.0  # a run that neither finishes nor is refused by then is a hang
LONG_S = 20.0  # runs estimated longer are not attempted (counted as "long")
RERUN_EVERY = 10  # every 10th finished run is run again: same seed, same digest

# What may happen to a scenario, and whether it is acceptable.
GOOD = ("finished", "refused", "long")
BAD = ("violation", "panic", "error", "hang", "crash", "nondeterministic", "multiline")


@dataclass
class Outcome:
    index: int
    kind: str
    detail: str = ""
    wall_s: float = 0.0
    scenario: dict[str, Any] = field(default_factory=dict)
    # The worker's peak resident memory so far (MB, `getrusage`): workers are reused, so the
    # largest value of a campaign bounds the peak of every run in it.
    peak_rss_mb: float = 0.0


def _init_worker() -> None:
    lim = int(ADDRESS_SPACE_GB * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    os.environ["AQMLAB_MAX_MEMORY_GB"] = str(BUDGET_GB)

    def on_alarm(signum, frame):
        raise TimeoutError("time bound reached")

    signal.signal(signal.SIGALRM, on_alarm)


def run_scenario(index: int, doc: dict[str, Any], rerun: bool) -> Outcome:
    """In a worker: runs `doc` (again, if `rerun`, comparing digests) and classifies it."""
    o = _classify(index, doc, rerun)
    o.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return o


def _classify(index: int, doc: dict[str, Any], rerun: bool) -> Outcome:
    from aqmlab import _core
    from aqmlab import scenario as sc
    from aqmlab.errors import ScenarioError
    from aqmlab.runs import runner

    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="aqmlab-fuzz-"))
    try:
        try:
            resolved, _ = sc.resolve_with_calibration(
                doc, overrides=(), seed=None, calibration=None
            )
            est = _core.estimate(sc.to_json(resolved))
        except (ScenarioError, ValueError) as e:
            return _refused(index, str(e), t0)
        if est["wall_s"] > LONG_S:
            return Outcome(
                index,
                "long",
                f"estimated {est['wall_s']:.3g} s",
                time.perf_counter() - t0,
            )
        signal.alarm(int(TIME_BOUND_S))
        try:
            runner.run(doc, out=tmp / "a")
            digest_b = None
            if rerun:
                runner.run(doc, out=tmp / "b")
                digest_b = properties.digest(tmp / "b")
        except ScenarioError as e:
            return _refused(index, str(e), t0)
        except TimeoutError:
            return Outcome(
                index,
                "hang",
                f"no end within {TIME_BOUND_S:g} s",
                time.perf_counter() - t0,
            )
        except Exception as e:  # anything else is a defect: say what it was
            kind = "panic" if "internal error" in str(e) else "error"
            return Outcome(index, kind, f"{type(e).__name__}: {e}"[:500], time.perf_counter() - t0)
        finally:
            signal.alarm(0)
        try:
            bad = properties.check_run(tmp / "a")
        except Exception as e:  # results that cannot even be read are a defect too
            bad = [f"results unreadable: {type(e).__name__}: {e}"]
        if bad:
            return Outcome(index, "violation", "; ".join(bad)[:500], time.perf_counter() - t0)
        if digest_b is not None and digest_b != properties.digest(tmp / "a"):
            return Outcome(
                index,
                "nondeterministic",
                "two runs, same seed, different results",
                time.perf_counter() - t0,
            )
        return Outcome(index, "finished", "", time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _refused(index: int, message: str, t0: float) -> Outcome:
    wall = time.perf_counter() - t0
    if "internal error" in message:
        return Outcome(index, "panic", message[:500], wall)
    if "\n" in message.strip():
        return Outcome(index, "multiline", message[:500], wall)
    return Outcome(index, "refused", message[:200], wall)


def scenario_for(seed: int, index: int) -> dict[str, Any]:
    """Scenario `index` of the campaign `seed` (reproducible on its own)."""
    return generate.scenario(random.Random(f"{seed}:{index}"))


def campaign(seed: int, count: int, workers: int = 2, progress=None) -> list[Outcome]:
    """Runs scenarios 0..count-1 of campaign `seed` on `workers` processes."""
    todo = list(range(count))
    out: list[Outcome] = []

    def record(o: Outcome) -> None:
        if o.kind in BAD and not o.scenario:
            o.scenario = scenario_for(seed, o.index)
        out.append(o)
        if progress:
            progress(len(out), count, o)

    while todo:
        pool = cf.ProcessPoolExecutor(max_workers=workers, initializer=_init_worker)
        pending = {
            pool.submit(run_scenario, i, scenario_for(seed, i), i % RERUN_EVERY == 0): i
            for i in todo
        }
        done_idx: set[int] = set()
        broken = False
        while pending and not broken:
            # Every run answers within its time bound (the alarm); silence beyond it means a
            # worker is stuck where signals are not seen.
            done, _ = cf.wait(pending, timeout=TIME_BOUND_S + 60, return_when=cf.FIRST_COMPLETED)
            if not done:
                broken = True
            for f in done:
                i = pending.pop(f)
                try:
                    record(f.result())
                    done_idx.add(i)
                except cf.process.BrokenProcessPool:
                    broken = True
        for p in list(pool._processes.values()) if broken else []:
            p.kill()
        pool.shutdown(wait=not broken, cancel_futures=True)
        todo = [i for i in todo if i not in done_idx]
        if broken and todo:
            # A worker died or hung: which scenario did it is not known, so the first
            # unfinished one runs alone (and is charged if it fails again); the rest retry.
            record(_alone(seed, todo[0]))
            todo = todo[1:]
    return sorted(out, key=lambda o: o.index)


def _alone(seed: int, index: int) -> Outcome:
    with cf.ProcessPoolExecutor(max_workers=1, initializer=_init_worker) as pool:
        f = pool.submit(run_scenario, index, scenario_for(seed, index), False)
        try:
            o = f.result(timeout=TIME_BOUND_S + 60)
        except cf.process.BrokenProcessPool:
            o = Outcome(index, "crash", "the worker process died (abort or memory limit)")
        except cf.TimeoutError:
            for p in list(pool._processes.values()):
                p.kill()
            o = Outcome(index, "hang", "the worker did not answer")
    if o.kind in BAD:
        o.scenario = scenario_for(seed, index)
    return o
