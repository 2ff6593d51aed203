"""The study catalog: `DIR/catalog.duckdb`, an embedded DuckDB database (docs/sweeps.md).

Tables:

- `runs`: one row per planned run, in plan order: `run_id`, `status` (done, failed or
  pending), `rep`, `seed`, one column per axis (its label), `wall_time_s`, `error`,
  `scenario_hash`, `aqmlab_version`, `core_version`, `scenario` (the resolved scenario as
  JSON), then the run's metrics: Study A's columns of `aqmlab.analysis.metrics.run_metrics`
  (unprefixed: `median_response_s`, `utilization`, ... of the studied direction), the core
  summary flattened with dots (`forward.utilization`, `reverse.mean_queue_pkts`,
  `queue_forward.params.limit`, ...) and the engine counters (`engine.events`, ...).
- `axes`: the axes (name, position, fields and labels as JSON); `study`: name, repetitions,
  seed and seed rule.
- One view per record table (`exchanges`, `queue`, `bottleneck`, `connections`, ...): the
  Parquet files of the finished runs, with `run_id`, the axis labels and `rep` joined from
  `runs`. Paths are relative to the study directory: open the catalog from there, or
  ``SET file_search_path = 'DIR'`` (`aqmlab.study.Study.sql` does).

Everything in the catalog is derived from `plan.json` and the run directories, so it is
rebuilt whole and swapped in with a rename: a reader never sees a half-written catalog, and
a sweep killed between a run's rename and the catalog write converges on resume.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

import aqmlab._core as _core
from aqmlab.analysis import metrics as mt
from aqmlab.analysis import voice as voice_model
from aqmlab.errors import ScenarioError
from aqmlab.runs import runner
from aqmlab.study.sweepfile import PlannedRun, Sweep

__all__ = [
    "CATALOG_FILE",
    "RUN_SPECIFIC",
    "base_row",
    "done_row",
    "done_summary",
    "is_done",
    "read_runs",
    "run_dir",
    "write",
]

CATALOG_FILE = "catalog.duckdb"
RUNS_DIR = "runs"
# Columns that legitimately differ between two executions of the same plan.
RUN_SPECIFIC = ("wall_time_s",)
_EXCHANGE_COLUMNS = ["start_s", "completed", "response_time_s"]
# What `sweepfile.run_id` makes: anything else (`../x`) would name a path outside runs/.
_RUN_ID = re.compile(r"[0-9a-f]{12}")


def run_dir(study_dir: Path, run_id: str) -> Path:
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ScenarioError(f"run_id = {run_id!r}: expected 12 hex digits (a run of the plan)")
    return study_dir / RUNS_DIR / run_id


def is_done(study_dir: Path, run_id: str) -> bool:
    """A run is finished when its directory holds a readable summary.json: the runner writes
    it last, into a hidden temporary directory that is renamed only on success. A damaged
    run (`run_problem`) is unfinished: it is run again."""
    return done_summary(study_dir, run_id) is not None


def done_summary(study_dir: Path, run_id: str) -> dict[str, Any] | None:
    """The summary of a finished run (`is_done`), None when the run is not finished: what
    `done_row` reads, read once."""
    if not (run_dir(study_dir, run_id) / runner.SUMMARY_FILE).is_file():
        return None
    summary, problem = _checked_summary(study_dir, run_id)
    return summary if problem is None else None


# Parquet files begin and end with these four bytes (the format's magic number).
_PARQUET_MAGIC = b"PAR1"


def run_problem(study_dir: Path, run_id: str) -> str | None:
    """Why a finished run's files cannot be read (one line naming the file and the run), or
    None when they can or when the run has no summary.json: the summary must parse, and each
    table it lists must be a Parquet file with its magic number at both ends (a file cut
    short or overwritten fails here, before DuckDB meets it)."""
    if not (run_dir(study_dir, run_id) / runner.SUMMARY_FILE).is_file():
        return None
    return _checked_summary(study_dir, run_id)[1]


def _checked_summary(study_dir: Path, run_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """The run's summary and `run_problem`'s answer (the summary None when it cannot be
    read)."""
    d = run_dir(study_dir, run_id)
    try:
        summary = runner.read_summary(d)
    except ScenarioError as e:
        return None, str(e)
    for name in summary.get("tables") or {}:
        p = d / f"{name}.parquet"
        try:
            with p.open("rb") as f:
                head = f.read(4)
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - 4))
                tail = f.read(4)
        except OSError as e:
            return summary, f"{p}: cannot read a table of run {run_id} ({e.strerror or e})"
        if size < 12 or head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
            return summary, f"{p}: a table of run {run_id} is damaged (not a whole Parquet file)"
    return summary, None


def base_row(run: PlannedRun, status: str, error: str | None = None) -> dict[str, Any]:
    """The columns every run has, whatever its status."""
    return {
        "run_id": run.run_id,
        "status": status,
        "rep": run.rep,
        "seed": run.seed,
        **run.labels,
        "wall_time_s": None,
        "error": error,
        "scenario_hash": run.scenario_hash,
        "aqmlab_version": _core.version(),
        "core_version": _core.version(),
        "scenario": json.dumps(run.scenario, ensure_ascii=False),
    }


def _flatten(prefix: str, value: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Scalars of nested tables as `a.b.c` keys; lists (drop runs) are left out."""
    for k, v in value.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            _flatten(f"{key}.", v, out)
        elif v is None or isinstance(v, bool | int | float | str):
            out[key] = v


def _rows(summary: Mapping[str, Any], table: str, path: Path) -> int:
    """A table's rows as the run's summary counts them (`tables`, what the writer wrote),
    else from the file's footer (opening it costs a quarter of a millisecond of the driver's
    time per run in a pack of short runs)."""
    counted = (summary.get("tables") or {}).get(table)
    if isinstance(counted, int) and not isinstance(counted, bool):
        return counted
    return pq.read_metadata(path).num_rows


def done_row(
    study_dir: Path, run: PlannedRun, summary: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The row of a finished run, from its directory alone (`summary`: its summary.json, when
    the caller has read it: `done_summary`)."""
    d = run_dir(study_dir, run.run_id)
    if summary is None:
        summary = runner.read_summary(d)
    row = base_row(run, "done")
    row["wall_time_s"] = summary.get("wall_time_s")
    row["aqmlab_version"] = summary.get("version", {}).get("aqmlab")
    row["core_version"] = summary.get("version", {}).get("core")
    flat: dict[str, Any] = {}
    _flatten("", summary.get("summary") or {}, flat)
    _flatten("engine.", summary.get("engine_stats") or {}, flat)
    ex_file = d / "exchanges.parquet"
    exchanges = None
    if ex_file.is_file() and _rows(summary, "exchanges", ex_file) > 0:
        exchanges = pl.read_parquet(ex_file, columns=_EXCHANGE_COLUMNS)
    # Study A's columns win over the core's totals of the same name (exchanges_completed):
    # they count what the paper counts (exchanges started after the warm-up).
    flat.update(mt.run_metrics(summary, exchanges))
    flat.update(voice_model.summary_metrics(summary, d))  # E-model of voice calls, if any
    for k, v in flat.items():
        if k not in row:
            row[k] = v
    return row


def _column_kind(values: Iterable[Any]) -> str:
    kinds = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, int):
            kinds.add("int")
        elif isinstance(v, float):
            kinds.add("float")
        else:
            kinds.add("str")
    if kinds <= {"int"}:
        return "int"
    if kinds <= {"int", "float"}:
        return "float"
    if kinds == {"bool"}:
        return "bool"
    return "str"


_DTYPES = {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean, "str": pl.String}
_FIXED = {
    "run_id": pl.String,
    "status": pl.String,
    "rep": pl.Int64,
    "seed": pl.UInt64,
    "wall_time_s": pl.Float64,
    "error": pl.String,
    "scenario_hash": pl.String,
    "aqmlab_version": pl.String,
    "core_version": pl.String,
    "scenario": pl.String,
}


def runs_frame(rows: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> pl.DataFrame:
    """The rows as one DataFrame: fixed columns, axis labels (strings), then every metric
    column in first-seen order, typed from all its values (int, float, bool, else string;
    an integer too large for Int64 becomes a float)."""
    names: list[str] = list(_FIXED)
    names[4:4] = list(axes)
    for r in rows:
        names.extend(k for k in r if k not in names)
    columns: dict[str, pl.Series] = {}
    for name in names:
        values = [r.get(name) for r in rows]
        if name in _FIXED:
            dtype = _FIXED[name]
        elif name in axes:
            dtype = pl.String
        else:
            kind = _column_kind(values)
            if kind == "int" and any(v is not None and abs(v) >= 2**63 for v in values):
                kind = "float"
            if kind == "float":
                values = [None if v is None else float(v) for v in values]
            elif kind == "str":
                values = [None if v is None else str(v) for v in values]
            dtype = _DTYPES[kind]
        columns[name] = pl.Series(name, values, dtype=dtype)
    return pl.DataFrame(list(columns.values()))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _shared_columns(
    table: str, run_ids: Sequence[str], file_columns: Mapping[str, Mapping[str, Any]]
) -> list[str] | None:
    """The column names of `table`'s files when the runs that wrote them (this process's
    workers: `file_columns`) told the same columns and kinds for each; None when any run's
    are unknown (finished before this sweep started) or differ (`measure.columns` on an
    axis, a newer version's runs beside older ones)."""
    known = [file_columns.get(rid, {}).get(table) for rid in run_ids]
    if not known or any(k is None for k in known):
        return None
    first = [tuple(c) for c in known[0]]
    if any([tuple(c) for c in k] != first for k in known[1:]):
        return None
    return [name for name, _ in first]


def _views(
    study_dir: Path,
    done: Sequence[str],
    axes: Sequence[str],
    file_columns: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """CREATE VIEW statements, one per record table found in the finished runs. A table
    whose files differ in columns is read by name (`union_by_name`), which makes DuckDB read
    every file's schema when it creates the view (≈50 µs a file, half of a catalog write);
    one whose files are known to share their columns is read with the first file's schema
    (docs/performance.md, "The whole command")."""
    files: dict[str, list[str]] = {}
    writers: dict[str, list[str]] = {}
    for rid in done:
        for p in sorted(run_dir(study_dir, rid).glob("*.parquet")):
            files.setdefault(p.stem, []).append(f"{RUNS_DIR}/{rid}/{p.name}")
            writers.setdefault(p.stem, []).append(rid)
    out = []
    for table, paths in sorted(files.items()):
        shared = _shared_columns(table, writers[table], file_columns)
        own = set(shared if shared is not None else pq.read_schema(study_dir / paths[0]).names)
        union = "false" if shared is not None else "true"
        joined = [c for c in ("run_id", *axes, "rep") if c not in own]
        cols = ", ".join(f"r.{_quote(c)}" for c in joined)
        listing = ", ".join(_sql_str(p) for p in paths)
        out.append(
            f"CREATE VIEW {_quote(table)} AS SELECT {cols}, t.* EXCLUDE (filename) "
            f"FROM read_parquet([{listing}], filename = true, union_by_name = {union}) AS t "
            f"JOIN runs AS r ON r.run_id = regexp_extract(t.filename, "
            f"'{RUNS_DIR}/([0-9a-f]+)/[^/]+$', 1)"
        )
    return out


# The catalog's builder: one in-memory DuckDB database per process, into which each write
# ATTACHes its new file. A database of its own per write (`duckdb.connect(file)`) costs
# 20 ms of CPU to start and close (DuckDB sets up its built-in functions per database),
# more than all the rest of a short section's write (docs/performance.md, "The whole
# command"); ATTACH and DETACH cost 3 ms. Only this module's writes use it, one at a time
# (`_BUILDING`). A process forked from this one (the calibrations' pool) never uses the
# parent's: it is set aside there, unclosed (its threads did not survive the fork).
_BUILDER: Any = None
_BUILDING = threading.Lock()
_FORKED_AWAY: list[Any] = []
_ATTACHED = "aqmlab_catalog_build"


def _builder() -> Any:
    global _BUILDER
    if _BUILDER is None:
        import duckdb

        _BUILDER = duckdb.connect(":memory:")
    return _BUILDER


def _set_aside_in_child() -> None:
    global _BUILDER
    if _BUILDER is not None:
        _FORKED_AWAY.append(_BUILDER)
        _BUILDER = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_set_aside_in_child)


def write(
    study_dir: Path,
    sweep: Sweep,
    rows: Sequence[Mapping[str, Any]],
    file_columns: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Builds the catalog from `rows` (plan order) into a temporary file, then renames it
    over `DIR/catalog.duckdb`. `file_columns`: by run id, the columns of each of its files
    (`Results.file_columns`), where the run's worker told them."""
    axes = [a.name for a in sweep.axes]
    frame = runs_frame(rows, axes)
    final = study_dir / CATALOG_FILE
    tmp = study_dir / f".{final.name}.tmp-{os.getpid()}"
    for stale in (tmp, tmp.with_name(tmp.name + ".wal")):
        stale.unlink(missing_ok=True)
    with _BUILDING:
        _build(_builder(), study_dir, sweep, frame, rows, axes, tmp, file_columns or {})
    os.replace(tmp, final)
    return final


def _build(
    con: Any,
    study_dir: Path,
    sweep: Sweep,
    frame: pl.DataFrame,
    rows: Sequence[Mapping[str, Any]],
    axes: Sequence[str],
    tmp: Path,
    file_columns: Mapping[str, Mapping[str, Any]],
) -> None:
    """The catalog's tables and views, into the new file `tmp` (complete when it returns)."""
    con.execute(f"ATTACH {_sql_str(str(tmp))} AS {_ATTACHED}")
    try:
        # Unqualified names below go to the new file: the views' text names `runs` as is, and
        # a reader opening the file resolves it in its own database.
        con.execute(f"USE {_ATTACHED}")
        con.execute(f"SET file_search_path = {_sql_str(str(study_dir.resolve()))}")
        arrow_runs = frame.to_arrow()
        con.register("runs_frame", arrow_runs)
        try:
            con.execute("CREATE TABLE runs AS SELECT * FROM runs_frame")
        finally:
            con.unregister("runs_frame")
        axes_frame = pl.DataFrame(
            {
                "name": [a.name for a in sweep.axes],
                "position": list(range(len(sweep.axes))),
                "fields": [json.dumps(list(a.fields)) for a in sweep.axes],
                "labels": [json.dumps(list(a.labels)) for a in sweep.axes],
            },
            schema={
                "name": pl.String,
                "position": pl.Int64,
                "fields": pl.String,
                "labels": pl.String,
            },
        ).to_arrow()
        con.register("axes_frame", axes_frame)
        try:
            con.execute("CREATE TABLE axes AS SELECT * FROM axes_frame")
        finally:
            con.unregister("axes_frame")
        con.execute(
            "CREATE TABLE study AS SELECT ? AS name, ? AS repetitions, ? AS seed, "
            "'run seed = sweep seed + rep' AS seed_rule",
            [sweep.name, sweep.repetitions, sweep.seed],
        )
        done = [r["run_id"] for r in rows if r["status"] == "done"]
        for statement in _views(study_dir, done, axes, file_columns):
            con.execute(statement)
        con.execute(f"CHECKPOINT {_ATTACHED}")
    except BaseException:
        # A catalog that could not be built leaves nothing behind (its last good one stays).
        with contextlib.suppress(Exception):
            _detach(con)
        for part in (tmp, tmp.with_name(tmp.name + ".wal")):
            part.unlink(missing_ok=True)
        raise
    _detach(con)


def _detach(con: Any) -> None:
    """Closes the file being built (the builder stays, on its own in-memory database). A
    builder that cannot detach (interrupted) is dropped, and with it the file it held."""
    global _BUILDER
    try:
        con.execute("USE memory")
        con.execute(f"DETACH DATABASE IF EXISTS {_ATTACHED}")
    except BaseException:
        _BUILDER = None
        with contextlib.suppress(Exception):
            con.close()
        raise


def read_runs(study_dir: Path) -> pl.DataFrame:
    """The `runs` table of `DIR/catalog.duckdb`."""
    import duckdb

    con = duckdb.connect(str(study_dir / CATALOG_FILE), read_only=True)
    try:
        return con.sql("SELECT * FROM runs").pl()
    finally:
        con.close()
