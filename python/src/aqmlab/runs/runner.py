"""Running a scenario: drive the core in chunks and stream its record tables to Parquet.

Output layout of a run directory::

    OUT/
      summary.json        # scenario as resolved, seed, versions, wall time, engine stats,
                          # core summary, row counts; written last
      <table>.parquet     # one file per table the core emits (connections, bottleneck, queue...)

The Parquet files are encoded by the core's extension (`_core.ParquetSink`), on a thread of
its own, straight from the core's columns: no Python object per value, and no pyarrow (whose
import alone is about 100 MB of resident memory). This module decides where and what: the
directory, the tables and columns kept, the row-group size. A run without OUT keeps its
tables in memory as Arrow tables (`memory_sink`).

The files are written into a hidden temporary directory beside OUT, which is renamed to OUT
only when the run succeeded: an interrupted or failed run leaves nothing that looks complete
(the writer is stopped and the directory removed).
A run holds a lock on its temporary directory; one left by a killed run (unlocked) is removed
by the next run into the same OUT (`remove_stale`).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import aqmlab._core as _core
from aqmlab import scenario as sc
from aqmlab.errors import make_dirs, os_problem, show_value
from aqmlab.runs import budget
from aqmlab.runs.captures import CaptureFiles, check_room, describe
from aqmlab.runs.results import SUMMARY_FILE, Results, read_summary
from aqmlab.scenario.calibration import IN_RUN_FILE, Calibration, save_file

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: stale directories are told by name only
    fcntl = None  # type: ignore[assignment]

__all__ = ["ROW_GROUP", "Progress", "Results", "read_summary", "remove_stale", "run"]

# Rows per Parquet row group (the last one of a table shorter), whatever the chunking of the
# run: files do not depend on how the run was cut into chunks, readers get reasonably sized
# row groups, and the writer holds at most one row group per table.
ROW_GROUP = 65536
# The default chunk of simulated time between two drains: a tenth of the run, within [1, 5]
# s (the core's memory estimate assumes the same: `sim/estimate.rs`). Each chunk costs a
# drain and a hand-over to the writer's thread, ≈18 µs; 50 chunks per run (before) were
# ≈0.7 ms of a 26-ms run of the RFC 7928 pack, for a finer progress line only
# (docs/performance.md, "The whole command").
CHUNKS = 10.0
MAX_CHUNK_S = 5.0


def default_chunk_s(end_s: float) -> float:
    """The chunk of simulated time of a run of `end_s` seconds without `chunk_s`."""
    return min(MAX_CHUNK_S, max(1.0, end_s / CHUNKS))


@dataclass(frozen=True)
class Progress:
    """Passed to the `progress` callback after each chunk."""

    sim_time_s: float
    end_time_s: float
    wall_time_s: float
    events: int

    @property
    def fraction(self) -> float:
        return self.sim_time_s / self.end_time_s if self.end_time_s > 0 else 1.0


def _version() -> str:
    return _core.version()


@functools.cache
def _platform() -> str:
    # platform.platform() reads the interpreter's binary to find the C library's version:
    # milliseconds, once per process rather than once per run of a sweep's worker.
    return platform.platform()


class _FileSink:
    """The run's tables written to Parquet files in `directory` (OUT's temporary twin) by the
    core's extension (`_core.ParquetSink`: from the core's columns to the encoder, on a thread
    of its own, no Python objects per value). `skip`: tables not kept; `columns`: the columns
    kept per table (`measure.columns`). A failed write (disk full) is one line naming OUT."""

    def __init__(
        self,
        directory: Path,
        out: Path,
        skip: Iterable[str],
        columns: Mapping[str, Sequence[str]],
    ) -> None:
        self._out = out
        self._sink = _core.ParquetSink(
            str(directory), ROW_GROUP, list(skip), {k: list(v) for k, v in columns.items()}
        )

    def drain(self, sim: _core.Simulation) -> None:
        with self._worded():
            sim.drain_into(self._sink)

    def finish(self, sim: _core.Simulation) -> None:
        with self._worded():
            sim.finish_into(self._sink)

    def close(self) -> None:
        """Waits for the writer; the files are complete when it returns."""
        with self._worded():
            self._sink.close()

    @contextlib.contextmanager
    def _worded(self):
        try:
            yield
        except OSError as e:  # only the writer raises it here
            what = f"cannot write {Path(e.filename).name}" if e.filename else "cannot write"
            raise sc.ScenarioError(f"--out {self._out}: {what} ({os_problem(e)})") from None

    def abort(self) -> None:
        self._sink.abort()

    @property
    def rows(self) -> dict[str, int]:
        return dict(self._sink.rows())

    @property
    def columns(self) -> dict[str, list[tuple[str, str]]]:
        """Each file's columns and their kinds, in order (`Results.file_columns`)."""
        return {t: [tuple(c) for c in cols] for t, cols in self._sink.columns().items()}


def _unknown_column(table: str, column: str, columns: Sequence[str]) -> sc.ScenarioError:
    return sc.ScenarioError(
        f"measure.columns.{table}: no column {show_value(column)} in the {table} "
        f"table (its columns: {', '.join(columns)})"
    )


def _lock(directory: Path, wait: bool = False) -> int | None:
    """An open descriptor of `directory` holding an exclusive lock on it (None when the lock
    is held elsewhere). The kernel drops the lock when its process dies, however it dies:
    an unlocked temporary directory is one no live run is writing."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return None
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:  # held by a live run
            os.close(fd)
            return None
        except OSError:  # a file system without locks: the name alone tells (as before locks)
            pass
    return fd


def remove_stale(parent: Path, name: str | None = None) -> None:
    """Removes, inside `parent` only, the temporary directories that runs into OUT =
    `parent/name` (any OUT: `name` None) leave when they are killed: `.NAME.tmp-*` (the
    run's files) and `.NAME.old-*` (the results it was replacing). A directory that a live
    run holds locked is left alone."""
    stem = "*" if name is None else glob.escape(name)
    for kind in ("tmp", "old"):
        for p in parent.glob(f".{stem}.{kind}-*"):
            if p.is_symlink() or not p.is_dir():
                continue
            fd = _lock(p)
            if fd is None:
                continue
            try:
                shutil.rmtree(p, ignore_errors=True)
            finally:
                os.close(fd)


def _prepare_out(out: Path, replace: bool = True) -> tuple[Path, int | None]:
    """Checks that OUT may be (re)placed (an earlier run's results only with `replace`),
    removes what killed runs into OUT left beside it, and makes (and locks) a temporary
    directory beside it."""
    if out.exists():
        if not out.is_dir():
            raise sc.ScenarioError(f"--out {out}: exists and is not a directory")
        if not replace and (out / SUMMARY_FILE).is_file():
            raise sc.ScenarioError(
                f"--out {out}: holds the results of an earlier run; give --force to replace "
                "them, or another --out"
            )
        if any(out.iterdir()) and not (out / SUMMARY_FILE).is_file():
            raise sc.ScenarioError(
                f"--out {out}: exists, is not empty and is not an aqmlab results directory"
            )
    make_dirs(out.parent, f"--out {out}")
    remove_stale(out.parent, out.name)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as e:
        raise sc.ScenarioError(
            f"--out {out}: cannot write in {out.parent} ({os_problem(e)})"
        ) from None
    lock = _lock(tmp, wait=True)
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; results are ordinary files
    return tmp, lock


def _publish(tmp: Path, out: Path) -> None:
    """Replaces OUT by TMP (as atomically as the file system allows)."""
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        old.rmdir()
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


# Tables a run writes only in some configurations (docs/scenario.md, `[measure]` and
# `[trace]`): naming one that this run did not write is not a mistake.
CONDITIONAL_TABLES = frozenset(
    {
        "source_delay",
        "source_intervals",
        "qdisc",
        "tcp_state",
        "segments",
        "connections",
        "dash_sessions",
        "dash_segments",
    }
)


def _check_column_tables(
    columns: Mapping[str, Sequence[str]], written: Mapping[str, int], skipped: Sequence[str]
) -> None:
    """`measure.columns` naming a table the run never wrote (a misspelt `exchange`) was
    silently ignored (issue 36): refused, naming the field and the run's tables. Checked when
    the run ends, as only then is every table it writes known; the run's results are not
    kept."""
    for name in columns:
        if name not in written and name not in skipped and name not in CONDITIONAL_TABLES:
            raise sc.ScenarioError(
                f"measure.columns.{name}: no table {show_value(name)} in this run (its tables: "
                f"{', '.join(sorted(written))})"
            )


def _scenario_from(
    scenario: str | os.PathLike | Mapping[str, Any],
    seed: int | None,
    overrides: Iterable[str],
    calibration: str | os.PathLike | Mapping[str, Calibration] | None = None,
) -> tuple[dict[str, Any], str | None, list[dict[str, Any]]]:
    if isinstance(scenario, str | os.PathLike):
        resolved, used = sc.load_with_calibration(
            scenario, overrides=overrides, seed=seed, calibration=calibration
        )
        return resolved, os.fspath(scenario), used
    resolved, used = sc.resolve_with_calibration(
        scenario, overrides=overrides, seed=seed, calibration=calibration
    )
    return resolved, None, used


def run(
    scenario: str | os.PathLike | Mapping[str, Any],
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    progress: Callable[[Progress], None] | None = None,
    *,
    overrides: Iterable[str] | Mapping[str, Any] = (),
    chunk_s: float | None = None,
    calibration: str | os.PathLike | Mapping[str, Calibration] | None = None,
    max_memory_gb: float | None = None,
    announce: Callable[[str], None] | None = None,
    replace: bool = True,
) -> Results:
    """Runs a scenario and returns its results.

    `scenario` is a TOML file path or a scenario document (a dict as in the TOML file, or as
    resolved). `seed` overrides the scenario's. `overrides`: ``["key.path=value", ...]`` as
    on the command line, or a dict ``{"key.path": value}`` of Python values. With `out`,
    tables are streamed to Parquet files in that directory (memory stays bounded) and
    `summary.json` is written; without, they are kept in memory. `progress` is called after
    each chunk of simulated time. A traffic entry's `load` is resolved with the calibration
    file `calibration` (default: `calibration.lookup_path`), or with calibrations kept in
    memory (a mapping by key, as `aqmlab run --calibrate` measures them), which the run then
    stores in OUT as `calibration.json`; the calibrations used are recorded in the summary
    (`calibration`).
    With `replace` false, an OUT that holds an earlier run's results is refused.
    A run whose estimated peak memory exceeds `max_memory_gb` (default: `AQMLAB_MAX_MEMORY_GB`,
    else the machine's available memory) is refused before it starts (`aqmlab.runs.budget`).
    """
    overrides = sc.override_list(overrides)  # a dict of Python values is taken too
    resolved, source, used = _scenario_from(scenario, seed, overrides, calibration)
    sc.check_python_keys(resolved)
    text = sc.to_json(resolved)
    est = budget.check(text, max_memory_gb, chunk_s)
    trace_bytes = float(est.get("trace_bytes", 0.0))
    if trace_bytes > 0 and announce is not None:
        announce(describe(trace_bytes))
    sim = _make_simulation(text)
    end = sim.end_time()
    step = chunk_s if chunk_s is not None else default_chunk_s(end)
    # Each chunk drains the core's records into Python: a chunk shorter than 1 ms of
    # simulated time (or more than a million chunks) would spend the run in the drains.
    if not (step >= max(1e-3, end / 1e6) and step <= 1e7):
        raise sc.ScenarioError(
            f"chunk_s = {step}: expected simulated seconds in "
            f"[{max(1e-3, end / 1e6):g}, 1e7] (at most a million chunks)"
        )

    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        check_room(trace_bytes, next((p for p in [out_dir, *out_dir.parents] if p.exists()), None))
    tmp, lock = _prepare_out(out_dir, replace) if out_dir is not None else (None, None)
    if tmp is not None and isinstance(calibration, Mapping) and used:
        save_file(tmp / IN_RUN_FILE, calibration.values())
    captures = CaptureFiles(tmp)
    measure = resolved.get("measure") or {}
    skip = () if measure.get("connections", True) else ("connections",)
    columns = measure.get(sc.PYTHON_MEASURE_KEY) or {}
    ok = False
    sink: Any = None
    t0 = time.perf_counter()
    try:
        if tmp is not None and out_dir is not None:
            sink = _FileSink(tmp, out_dir, skip, columns)
        else:
            # Only a run kept in memory needs pyarrow (its tables are Arrow tables).
            from aqmlab.runs.memory_sink import MemorySink

            sink = MemorySink(skip, columns)
        # Chunk boundaries are i·step (no accumulated rounding), so they depend on the scenario
        # and `chunk_s` only.
        i, t = 0, 0.0
        while t < end and not sim.finished():
            i += 1
            t = min(i * step, end)
            sim.run_until(t)
            sink.drain(sim)
            captures.add(sim.drain_captures())
            if progress is not None:
                progress(Progress(sim.now(), end, time.perf_counter() - t0, sim.events()))
        sink.finish(sim)
        captures.add(sim.drain_captures())
        wall = time.perf_counter() - t0
        sink.close()
        _check_column_tables(columns, sink.rows, skip)
        summary = {
            "scenario": resolved,
            "scenario_file": source,
            "overrides": list(overrides),
            "seed": resolved["seed"],
            "version": {"aqmlab": _version(), "core": _core.version()},
            "python": platform.python_version(),
            "platform": _platform(),
            "wall_time_s": wall,
            "engine_stats": sim.engine_stats(),
            "summary": sim.summary(),
            "tables": sink.rows,
        }
        if trace_bytes > 0:
            summary["traces"] = {
                "estimate_bytes": trace_bytes,
                "captures": dict(captures.sizes),
            }
        if used:
            summary["calibration"] = used
        if tmp is not None and out_dir is not None:
            (tmp / SUMMARY_FILE).write_text(
                json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            _publish(tmp, out_dir)
            ok = True
            return Results(summary, directory=out_dir, file_columns=sink.columns)
        ok = True
        return Results(
            summary,
            memory=sink.tables(),
            captures={k: bytes(v) for k, v in captures.memory.items()},
        )
    except _core.UnknownColumn as e:
        raise _unknown_column(*e.args) from None
    finally:
        if not ok:
            if sink is not None:
                with contextlib.suppress(Exception):
                    sink.abort()
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        if lock is not None:
            os.close(lock)


def _make_simulation(scenario_json: str) -> _core.Simulation:
    try:
        return _core.Simulation(scenario_json)
    except ValueError as e:
        raise sc.ScenarioError(str(e)) from None


def _default_progress(stream: IO[str] = sys.stderr) -> Callable[[Progress], None]:
    """`progress_bar.default_progress` (tqdm is imported only when a terminal is there)."""
    from aqmlab.runs.progress_bar import default_progress

    return default_progress(stream)
