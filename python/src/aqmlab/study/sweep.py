"""`aqmlab sweep`: expand a sweep file, run what is not finished yet, keep the catalog.

Study directory::

    DIR/sweep.toml        the sweep file as given
    DIR/plan.json         every run: id, rep, seed, axis labels, resolved scenario
    DIR/calibration.json  calibrations of the `load =` entries (when there are any)
    DIR/catalog.duckdb    runs table and views (aqmlab.study.catalog)
    DIR/runs/<run_id>/    what `aqmlab run --out` writes: summary.json + <table>.parquet

Resuming is running the same command again: a run whose directory holds summary.json is
finished (the runner renames its directory into place only after writing everything) and is
skipped (one whose summary.json cannot be read is run again, with a warning naming the file);
hidden temporary directories left by killed runs are removed; failed runs are tried again; the
catalog is rebuilt from the run directories, so nothing depends on whether the previous
invocation got to write it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aqmlab._core as _core
from aqmlab import scenario as sc
from aqmlab.errors import check_plain_name, make_dirs
from aqmlab.runs import runner
from aqmlab.runs.captures import check_room, describe
from aqmlab.scenario.overrides import parse_key_path, parse_override, show_path
from aqmlab.study import catalog, execute, sweepfile
from aqmlab.study.progress import SweepProgress, format_duration

__all__ = [
    "PLAN_FILE",
    "SWEEP_FILE",
    "Backends",
    "SweepInterrupted",
    "SweepOutcome",
    "execute_planned",
    "remove_leftovers",
    "run_sweep",
]

PLAN_FILE = "plan.json"
SWEEP_FILE = "sweep.toml"
CALIBRATION_FILE = "calibration.json"
# A run lost with its worker process (killed, out of memory) is submitted once more.
MAX_ATTEMPTS = 2
# The catalog (DuckDB) is rewritten whole, which costs about a second for a hundred runs on
# a loaded machine: after a finished run only when this much time has passed since the last
# write, and always at the end or on an interrupt. Resuming does not depend on it (a run is
# done when its directory holds a complete summary, `catalog.is_done`).
CATALOG_EVERY_S = 10.0


@dataclass
class SweepOutcome:
    directory: Path
    total: int = 0
    done: int = 0
    failed: int = 0
    ran: int = 0
    skipped: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (id, where, error)

    @property
    def pending(self) -> int:
        return self.total - self.done - self.failed


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a sweep; `outcome` says how far it got."""

    def __init__(self, outcome: SweepOutcome) -> None:
        super().__init__("interrupted")
        self.outcome = outcome


class Backends:
    """Where the runs of one or more sweeps execute, started on first need and kept for the
    next sweep: `aqmlab rfc7928` and `aqmlab reproduce` run a sweep per section or part, and
    a pool of local processes started per sweep cost each sweep an interpreter start and an
    import of aqmlab per worker (more than the runs of a short section). `close` at the end."""

    def __init__(self, scheduler: str | None = None, jobs: int | None = None) -> None:
        if jobs is not None and jobs < 1:
            raise sc.ScenarioError(f"--jobs {jobs}: expected at least 1")
        if scheduler is not None:
            execute.check_address(scheduler)
        self.scheduler = scheduler
        self.jobs = jobs
        self._backend: Any = None

    def get(self) -> Any:
        if self._backend is None:
            self._backend = (
                execute.DaskBackend(self.scheduler)
                if self.scheduler is not None
                else execute.LocalBackend(self.jobs)
            )
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def __enter__(self) -> Backends:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_study_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise sc.ScenarioError(f"--out {out}: exists and is not a directory")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise sc.ScenarioError(f"--out {out}: {parent} is a file, not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / PLAN_FILE).is_file():
        raise sc.ScenarioError(
            f"--out {out}: exists, is not empty and is not an aqmlab study directory "
            f"(no {PLAN_FILE})"
        )


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _remove_leftovers(out: Path) -> None:
    """What killed processes left in the study directory, by the names only they use: the
    runs' hidden temporary directories (runner: `.<id>.tmp-*`, `.<id>.old-*`; not those a
    live run holds) and the temporary files of the catalog, the plan, the sweep file and the
    calibration file. The sweep owns its directory: nothing else is touched."""
    runs = out / catalog.RUNS_DIR
    if runs.is_dir():
        runner.remove_stale(runs)
    for name in (catalog.CATALOG_FILE, PLAN_FILE, SWEEP_FILE):
        for p in out.glob(f".{name}.tmp-*"):
            if p.is_file() and not p.is_symlink():
                p.unlink(missing_ok=True)
    (out / f".{CALIBRATION_FILE}.tmp").unlink(missing_ok=True)  # calibration.save_file's


@contextlib.contextmanager
def _interrupts_deferred():
    """Ctrl-C and SIGTERM wait for the end of the block (the catalog write, under a second).
    DuckDB turns a KeyboardInterrupt raised in the middle of a statement into an error of its
    own ("Query interrupted"): the sweep would end with status 2, without its "resume with"
    line. The signal's own handler runs at the end of the block. Only the main thread has
    signal handlers; elsewhere the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is not None:  # None: set outside Python, left alone
            saved[sig] = handler
            signal.signal(sig, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _runs_no_longer_planned(out: Path, runs: list[sweepfile.PlannedRun]) -> int:
    try:
        previous = json.loads((out / PLAN_FILE).read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    now = {r.run_id for r in runs}
    return sum(1 for r in previous if isinstance(r, dict) and r.get("run_id") not in now)


def _check_same_study(out: Path, sweep: sweepfile.Sweep) -> None:
    """A study directory belongs to one sweep (its `[sweep] name`): another sweep file pointed
    at it replaced its plan and catalog silently (issue 36). Editing the study's own sweep
    file (the same name) resumes and replans it, as before."""
    try:
        before = json.loads((out / PLAN_FILE).read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return  # no previous plan (a damaged one is rewritten)
    if isinstance(before, str) and before != sweep.name:
        raise sc.ScenarioError(
            f"--out {out}: holds the study {before!r}, not {sweep.name!r}; give another --out "
            "(or remove the directory to start it again)"
        )


def _check_same_cli_set(out: Path, sweep: sweepfile.Sweep) -> None:
    """A study resumes with the `--set` it was planned with (plan.json's `cli_set`): another
    one would replan every run under a new id, and the finished runs would drop out of the
    catalog. Changing the study is editing its sweep file (or another --out)."""
    try:
        before = json.loads((out / PLAN_FILE).read_text(encoding="utf-8")).get("cli_set", [])
    except (OSError, ValueError, AttributeError):
        return  # no previous plan (a damaged one is rewritten)
    if not isinstance(before, list) or not all(isinstance(i, str) for i in before):
        return

    def normal(items: list[str]) -> list[tuple[str, Any]] | None:
        try:
            pairs = [parse_override(i) for i in items]
        except sc.ScenarioError:
            return None
        return [(show_path(parse_key_path(k)), v) for k, v in pairs]

    if normal(before) != normal(sweep.cli_overrides):

        def shown(items: list[str]) -> str:
            return " ".join(f"--set {i}" for i in items) if items else "no --set"

        raise sc.ScenarioError(
            f"--set: {out} was planned with {shown(before)}, this command gives "
            f"{shown(sweep.cli_overrides)}; resume with the same --set, or give another --out"
        )


def _where(run: sweepfile.PlannedRun) -> str:
    return " ".join([*(f"{k}={v}" for k, v in run.labels.items()), f"rep={run.rep}"])


def run_sweep(
    sweep_file: str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    scheduler: str | None = None,
    jobs: int | None = None,
    calibration: str | os.PathLike | None = None,
    stream: IO[str] | None = None,
    quiet: bool = False,
    interval_s: float = 10.0,
    overrides: Sequence[str] = (),
    backends: Backends | None = None,
) -> SweepOutcome:
    """Runs (or resumes) the sweep in `sweep_file` into the study directory `out` (default
    `results/<sweep name>`), on `jobs` local processes (default: one per core) or on the Dask
    cluster whose scheduler is at `scheduler`. `overrides` (``--set key.path=value``) change
    the base scenario after the file's `set`, before the axes; a study resumes only with the
    ones it was planned with. Progress goes to `stream` (default stderr). Raises
    `SweepInterrupted` on Ctrl-C; failed runs are in the outcome (and the catalog).
    `backends`: where the runs execute, kept open for the caller's next sweeps (then
    `scheduler` and `jobs` are the ones it was made with); by default, started and closed
    here."""
    stream = stream if stream is not None else sys.stderr
    sweep = sweepfile.read(sweep_file, overrides=overrides)
    if out is None:
        # The study directory is made of the name: it must stay one directory in results/
        # (a name like "../x" or "/x" would write, and later remove, elsewhere).
        name = check_plain_name(sweep.name, "sweep.name", "or give --out DIR")
        out_dir = Path("results") / name
    else:
        out_dir = Path(out)
    _check_study_dir(out_dir)
    _check_same_study(out_dir, sweep)
    _check_same_cli_set(out_dir, sweep)
    own = backends is None
    if backends is None:
        backends = Backends(scheduler, jobs)
    scheduler, jobs = backends.scheduler, backends.jobs

    def note(msg: str) -> None:
        if not quiet:
            stream.write(f"  {msg}\n")
            stream.flush()

    backend: Any = None
    interrupted = False
    if scheduler is not None:  # before calibrating: a bad address fails in seconds
        backend = backends.get()
    try:
        runs = sweepfile.plan(
            sweep,
            out_dir / CALIBRATION_FILE,
            calibration_source=Path(calibration) if calibration is not None else None,
            workers=jobs or execute.default_jobs(),
            log=note,
        )
        dropped = _runs_no_longer_planned(out_dir, runs)
        if dropped:
            note(
                f"the sweep changed: {dropped} run(s) of the previous plan are not in this one "
                "(their directories stay in runs/, outside the catalog)"
            )
        make_dirs(out_dir, f"--out {out_dir}")
        _write_atomic(out_dir / SWEEP_FILE, Path(sweep_file).read_bytes())
        doc = sweepfile.plan_document(sweep, runs)
        _write_atomic(
            out_dir / PLAN_FILE, (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode()
        )
        (out_dir / catalog.RUNS_DIR).mkdir(exist_ok=True)
        _remove_leftovers(out_dir)
        if backend is None:
            todo_count = sum(
                1 for r in runs if r.error is None and not catalog.is_done(out_dir, r.run_id)
            )
            if todo_count:
                backend = backends.get()
        return _execute(sweep, runs, out_dir, backend, stream, quiet, interval_s, note)
    except SweepInterrupted:
        interrupted = True
        raise
    except KeyboardInterrupt:
        # Before any run started (planning, calibrating, starting the workers): nothing of
        # the study is lost, and it resumes like any other interrupted sweep.
        interrupted = True
        raise SweepInterrupted(SweepOutcome(out_dir)) from None
    finally:
        if own:
            backends.close()
        if interrupted and out_dir.is_dir():
            # The workers are stopped now: what their runs left (held while they lived) goes.
            with contextlib.suppress(KeyboardInterrupt):
                _remove_leftovers(out_dir)


def remove_leftovers(out: Path) -> None:
    """`_remove_leftovers` for other drivers of planned runs (`aqmlab tune`)."""
    _remove_leftovers(out)


def execute_planned(
    sweep: sweepfile.Sweep,
    runs: list[sweepfile.PlannedRun],
    out_dir: Path,
    backend: Any,
    stream: IO[str],
    quiet: bool,
    interval_s: float,
    note: Callable[[str], None],
) -> SweepOutcome:
    """Runs the unfinished ones of `runs` (already planned) on `backend` with the sweep's
    progress display: what `run_sweep` does after planning, except that the catalog is not
    written (the caller writes it, once: `aqmlab tune` runs many small batches, and a
    catalog write per finished run would cost more than the runs)."""
    return _execute(
        sweep, runs, out_dir, backend, stream, quiet, interval_s, note, catalog_writes=False
    )


def _announce_traces(
    todo: list[sweepfile.PlannedRun], out_dir: Path, note: Callable[[str], None]
) -> None:
    """States what the runs' `[trace]` sections will write (the core's upper-side estimate)
    before any runs, and refuses a sweep whose traces cannot fit on the study's disk."""
    sizes = [
        float(_core.estimate(sc.to_json(r.scenario)).get("trace_bytes", 0.0))
        for r in todo
        if (r.scenario.get("trace") or {})
    ]
    total = sum(sizes)
    if total > 0:
        note(f"{describe(total)}, over {len(sizes)} traced run(s)")
        check_room(total, out_dir)


def _execute(
    sweep: sweepfile.Sweep,
    runs: list[sweepfile.PlannedRun],
    out_dir: Path,
    backend: Any,
    stream: IO[str],
    quiet: bool,
    interval_s: float,
    note: Callable[[str], None],
    catalog_writes: bool = True,
) -> SweepOutcome:
    outcome = SweepOutcome(out_dir, total=len(runs))
    rows: dict[str, dict[str, Any]] = {}
    # The columns of the files of the runs finished here, as their workers tell them: the
    # catalog's views need not read those files' schemas (`catalog.write`).
    file_columns: dict[str, Any] = {}
    todo: list[sweepfile.PlannedRun] = []
    for r in runs:
        summary = catalog.done_summary(out_dir, r.run_id)  # read once: done_row's too
        damaged = catalog.run_problem(out_dir, r.run_id) if summary is None else None
        if damaged is not None and r.error is None:
            # Not finished after all: run again (the runner replaces the directory).
            stream.write(f"  warning: {damaged}; running {r.run_id} again\n")
            stream.flush()
        if summary is not None:
            rows[r.run_id] = catalog.done_row(out_dir, r, summary)
            outcome.done += 1
            outcome.skipped += 1
        elif r.error is not None:
            rows[r.run_id] = catalog.base_row(r, "failed", r.error)
            outcome.failed += 1
            outcome.failures.append((r.run_id, _where(r), r.error))
        else:
            rows[r.run_id] = catalog.base_row(r, "pending")
            todo.append(r)

    last_write = [0.0]

    def write_catalog() -> None:
        if not catalog_writes:
            return
        with _interrupts_deferred():
            catalog.write(out_dir, sweep, [rows[r.run_id] for r in runs], file_columns)
        last_write[0] = time.monotonic()

    # A study's existing catalog is brought up to date before anything runs (a damaged run
    # about to run again, runs no longer planned). A new study has none to correct: its
    # first catalog is written after its first runs (`CATALOG_EVERY_S`), or at its end, a
    # short section's only write (each costs tens of ms: docs/performance.md).
    if todo and not (out_dir / catalog.CATALOG_FILE).is_file():
        last_write[0] = time.monotonic()
    else:
        try:
            write_catalog()
        except KeyboardInterrupt:  # the catalog is written; nothing runs yet
            raise SweepInterrupted(outcome) from None
    where_ = backend.description if backend is not None else "nothing to run"
    note(
        f"sweep {sweep.name}: {len(runs)} runs, {outcome.skipped} already done, "
        f"{len(todo)} to run on {where_} -> {out_dir}"
    )
    if not todo:
        return outcome
    _announce_traces(todo, out_dir, note)
    progress = SweepProgress(
        total=len(runs),
        done=outcome.done,
        failed=outcome.failed,
        durations={r.run_id: float(r.scenario.get("duration_s") or 0.0) for r in todo},
        stream=stream,
        interval_s=interval_s,
        enabled=not quiet,
    )
    root = out_dir.resolve()
    pending: dict[Any, sweepfile.PlannedRun] = {}
    attempts: dict[str, int] = {}
    resubmits = 0  # bounded, in case workers die before running anything
    try:
        for r in todo:
            fut = backend.submit(r.run_id, r.scenario, str(catalog.run_dir(root, r.run_id)))
            pending[fut] = r
        while pending:
            finished = backend.wait(pending.keys(), 0.25)
            for msg in backend.messages():
                # A backend kept between sweeps may still hold a late message of the last
                # sweep's runs: only this sweep's runs are shown.
                if msg.get("run_id") in progress.durations:
                    progress.update(msg)
            for fut in finished:
                r = pending.pop(fut)
                res = backend.result(fut)
                retry = attempts.get(r.run_id, 1) < MAX_ATTEMPTS and resubmits < len(todo) * 2
                if res.get("lost") and retry:
                    resubmits += 1
                    # Only a run that had started counts the attempt: the others were
                    # merely queued in the pool that went down.
                    if progress.running.pop(r.run_id, None) is not None:
                        attempts[r.run_id] = attempts.get(r.run_id, 1) + 1
                        progress.say(f"  again  {r.run_id}  {_where(r)}: {res.get('error')}")
                    again = backend.submit(
                        r.run_id, r.scenario, str(catalog.run_dir(root, r.run_id))
                    )
                    pending[again] = r
                    continue
                outcome.ran += 1
                summary = catalog.done_summary(out_dir, r.run_id) if res.get("ok") else None
                if summary is not None:
                    rows[r.run_id] = catalog.done_row(out_dir, r, summary)
                    if res.get("columns") is not None:
                        file_columns[r.run_id] = res["columns"]
                    outcome.done += 1
                    wall = rows[r.run_id].get("wall_time_s") or 0.0
                    line = f"  done   {r.run_id}  {_where(r)}  ({format_duration(wall)})"
                    progress.finished(r.run_id, True, line)
                else:
                    error = res.get("error") or "the run left no results"
                    rows[r.run_id] = catalog.base_row(r, "failed", error)
                    outcome.failed += 1
                    outcome.failures.append((r.run_id, _where(r), error))
                    progress.finished(r.run_id, False, f"  FAILED {r.run_id}  {_where(r)}: {error}")
                if time.monotonic() - last_write[0] >= CATALOG_EVERY_S:
                    write_catalog()
            progress.draw()
        write_catalog()
    except KeyboardInterrupt:
        progress.close()
        backend.stop()
        _remove_leftovers(out_dir)
        for r in todo:  # runs that landed while stopping are finished results too
            if rows[r.run_id]["status"] == "pending" and catalog.is_done(out_dir, r.run_id):
                rows[r.run_id] = catalog.done_row(out_dir, r)
                outcome.done += 1
        with contextlib.suppress(KeyboardInterrupt):
            write_catalog()
        raise SweepInterrupted(outcome) from None
    progress.close()
    _remove_leftovers(out_dir)  # of runs whose worker died (nothing is running now)
    return outcome
