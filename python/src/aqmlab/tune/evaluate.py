"""Evaluating candidates: a batch of (settings, seed, run length) requests in, one metrics
dict per request out.

`StudyEvaluator` runs them through the study machinery (`aqmlab.study`): each request is a
planned run of a one-axis sweep (the axis sets the candidate's fields and the run length),
resolved, calibrated and run as `aqmlab sweep` does, on local processes or a Dask cluster,
into `DIR/runs/<run_id>/`. A run's id is the hash of its resolved scenario, so a request
already run (this tune, an interrupted one, a baseline shared by two tunes in one directory)
is read back instead of run again; the catalog (`DIR/catalog.duckdb`) lists every run of the
tune. Any other object with `evaluate(requests) -> list[dict]` can replace it (the tests use
a function with a known optimum).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from aqmlab import scenario as sc
from aqmlab.runs import runner
from aqmlab.study import catalog, sweepfile
from aqmlab.study import sweep as sweep_mod
from aqmlab.tune import objective as obj
from aqmlab.tune.tunefile import Tune

__all__ = ["Evaluator", "Request", "StudyEvaluator"]

AXIS = "candidate"
CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Request:
    """Run the scenario with `settings` (dotted path -> value, after the tune's `set`) on
    `seed` for `duration_s` simulated seconds. `label` names it in the catalog."""

    label: str
    settings: tuple[tuple[str, Any], ...]
    seed: int
    duration_s: float

    @property
    def key(self) -> str:
        return json.dumps([self.settings, self.seed, self.duration_s], sort_keys=True)


class Evaluator(Protocol):
    def evaluate(self, requests: Sequence[Request]) -> list[dict[str, Any]]:
        """One dict per request: the `objective.METRICS` (NaN when missing), or `{"error":
        message}` for a run that failed."""


class RunsFailed(RuntimeError):
    pass


class StudyEvaluator:
    """Runs requests as catalogued study runs in `out` (see the module's docstring)."""

    def __init__(
        self,
        tune: Tune,
        out: Path,
        backend: Any,
        *,
        stream: IO[str] | None = None,
        quiet: bool = False,
        interval_s: float = 10.0,
        workers: int = 1,
    ) -> None:
        self.tune = tune
        self.out = out
        self.backend = backend
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.interval_s = interval_s
        self.workers = workers
        self.base = sc_read(tune.scenario_file)
        self.runs: dict[str, sweepfile.PlannedRun] = {}  # every run planned so far, by id
        self.ran = 0  # runs executed by this process (not read back)
        self._metrics: dict[str, dict[str, float]] = {}
        self.errors: dict[str, str] = {}  # run id -> why it failed (this process's runs)

    def note(self, msg: str) -> None:
        if not self.quiet:
            self.stream.write(f"  {msg}\n")
            self.stream.flush()

    def _sweep(self, fields: tuple[str, ...], points, labels, seed: int) -> sweepfile.Sweep:
        t = self.tune
        return sweepfile.Sweep(
            name=t.name,
            path=t.path,
            base=self.base,
            base_dir=t.scenario_file.parent,
            base_file=t.scenario_file,
            repetitions=1,
            seed=seed,
            overrides={**t.set, "warmup_s": t.rungs.warmup_s},
            axes=[sweepfile.Axis(AXIS, fields, tuple(points), tuple(labels))],
        )

    def plan(self, requests: Sequence[Request]) -> dict[str, str]:
        """Plans the requests (calibrating `load` entries first, once); returns request key
        -> run id. Requests with the same fields and seed are planned as one sweep."""
        groups: dict[tuple[tuple[str, ...], int], dict[str, Request]] = {}
        for r in requests:
            fields = (*(k for k, _ in r.settings), "duration_s")
            groups.setdefault((fields, r.seed), {}).setdefault(r.key, r)
        ids: dict[str, str] = {}
        for (fields, seed), unique in groups.items():
            reqs = list(unique.values())
            points = [(*(v for _, v in r.settings), r.duration_s) for r in reqs]
            labels = [f"{r.label} {r.duration_s:g}s seed {seed}" for r in reqs]
            sweep = self._sweep(fields, points, labels, seed)
            runs = sweepfile.plan(
                sweep, self.out / CALIBRATION_FILE, workers=self.workers, log=self.note
            )
            for r, run in zip(reqs, runs, strict=True):
                ids[r.key] = run.run_id
                run.rep = 0
                self.runs.setdefault(run.run_id, run)
        return ids

    def check(self, requests: Sequence[Request]) -> None:
        """Plans `requests` without running or measuring anything (`sweepfile.check`) and
        raises the first problem as one line: a misspelt field, a value the core refuses."""
        for r in requests:
            fields = (*(k for k, _ in r.settings), "duration_s")
            point = (*(v for _, v in r.settings), r.duration_s)
            sweep = self._sweep(fields, [point], [r.label], r.seed)
            try:
                failures = sweepfile.check(sweep).failures
            except sc.ScenarioError as e:
                raise sc.ScenarioError(f"{r.label}: {_after_where(str(e))}") from None
            if failures:
                raise sc.ScenarioError(f"{r.label}: {_after_where(failures[0].error or '')}")

    def _catalog_sweep(self) -> sweepfile.Sweep:
        labels = tuple(r.labels[AXIS] for r in self.runs.values())
        return self._sweep((), [()] * len(labels), labels, self.tune.seeds[0])

    def evaluate(self, requests: Sequence[Request]) -> list[dict[str, Any]]:
        ids = self.plan(requests)
        wanted = set(ids.values())
        todo = [r for r in self.runs.values() if r.run_id in wanted]
        todo_ids = {r.run_id for r in todo if not catalog.is_done(self.out, r.run_id)}
        if todo_ids:
            outcome = sweep_mod.execute_planned(
                self._catalog_sweep(),
                todo,
                self.out,
                self.backend(),
                self.stream,
                self.quiet,
                self.interval_s,
                self.note,
            )
            self.ran += outcome.ran
            for run_id, _where, error in outcome.failures:
                self.errors[run_id] = error
        out = []
        for r in requests:
            rid = ids[r.key]
            out.append(self._read(rid))
        return out

    def write_catalog(self) -> None:
        rows = []
        for r in self.runs.values():
            if catalog.is_done(self.out, r.run_id):
                rows.append(catalog.done_row(self.out, r))
            else:
                error = r.error or self.errors.get(r.run_id)
                rows.append(catalog.base_row(r, "failed" if error else "pending", error))
        if rows:
            catalog.write(self.out, self._catalog_sweep(), rows)

    def _read(self, run_id: str) -> dict[str, Any]:
        if run_id in self._metrics:
            return self._metrics[run_id]
        run = self.runs[run_id]
        if run.error is not None:
            return {"error": run.error, "run_id": run_id}
        if not catalog.is_done(self.out, run_id):
            error = self.errors.get(run_id, "the run did not finish")
            return {"error": error, "run_id": run_id}
        results = runner.Results.open(catalog.run_dir(self.out, run_id))
        try:
            ex = results["exchanges"]
        except KeyError:
            ex = None
        metrics: dict[str, Any] = obj.run_metrics(results.summary, ex)
        metrics["run_id"] = run_id
        self._metrics[run_id] = metrics
        return metrics


def _after_where(message: str) -> str:
    """The core's message without the sweep's "run (candidate=..., rep=0): " prefix."""
    return message.split("): ", 1)[1] if message.startswith("run (") else message


def sc_read(path: Path) -> dict[str, Any]:
    return sc.read_toml(path)
