"""When and how the sweep writes its catalog (issue 34: the catalog's cost in a pack of short
sections): a new study once, at its end; an existing one corrected before anything runs; one
in-memory builder per process that a failed write leaves usable, and files that another
connection reads whole."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest
from sweep_support import TINY, done_ids, write_sweep

from aqmlab.errors import ScenarioError
from aqmlab.study import Study, catalog, sweep, sweepfile


@pytest.fixture
def writes(monkeypatch) -> list[list[str]]:
    """Every catalog write of the test, as the statuses it wrote (plan order)."""
    seen: list[list[str]] = []
    real = catalog.write

    def recording(study_dir, sweep_, rows, *more):
        seen.append([r["status"] for r in rows])
        return real(study_dir, sweep_, rows, *more)

    monkeypatch.setattr(catalog, "write", recording)
    return seen


def test_a_new_study_writes_its_catalog_once_at_its_end(tmp_path: Path, writes):
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    outcome = sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert outcome.done == 2
    # No write of an all-pending catalog before the runs: the end's write is the only one.
    assert writes == [["done", "done"]]
    assert catalog.read_runs(out)["status"].to_list() == ["done", "done"]


def test_a_finished_study_resumed_writes_its_catalog_once(tmp_path: Path, writes):
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    writes.clear()
    (out / catalog.CATALOG_FILE).unlink()  # lost (killed before its end's write)
    outcome = sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert (outcome.ran, outcome.skipped) == (0, 2)
    assert writes == [["done", "done"]]  # nothing to run: written at once
    assert set(catalog.read_runs(out)["status"]) == {"done"}


def test_a_study_opened_before_its_first_catalog_says_so(tmp_path: Path):
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    (out / catalog.CATALOG_FILE).unlink()  # as in a new study's first seconds
    with pytest.raises(ScenarioError, match="has not written its catalog yet"):
        Study.open(out)


def test_an_existing_catalog_is_corrected_before_a_damaged_run_runs_again(tmp_path: Path, writes):
    """The catalog claims only finished runs: a study whose catalog lists a run that is now
    damaged is rewritten (that run pending) before the run is done again."""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    ids = [r.run_id for r in _planned(p, out)]
    (catalog.run_dir(out, ids[1]) / "summary.json").write_text("{", encoding="utf-8")
    writes.clear()
    outcome = sweep.run_sweep(p, out, jobs=1, quiet=True, stream=_Null())
    assert (outcome.ran, outcome.done) == (1, 2)
    assert writes == [["done", "pending"], ["done", "done"]]
    assert set(catalog.read_runs(out)["status"]) == {"done"}


def test_an_interrupted_new_study_catalogues_what_finished(tmp_path: Path, monkeypatch):
    """Ctrl-C after the first of two runs of a new study (no catalog yet): the interrupt's
    write lists the finished run as done and the other as pending, and a resume ends it."""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    real = catalog.done_row

    def interrupt_after_the_first(study_dir, run, summary=None):
        row = real(study_dir, run, summary)
        raise_now = not (out / catalog.CATALOG_FILE).exists()
        if raise_now:
            monkeypatch.setattr(catalog, "done_row", real)
            raise KeyboardInterrupt
        return row

    monkeypatch.setattr(catalog, "done_row", interrupt_after_the_first)
    with pytest.raises(sweep.SweepInterrupted):
        sweep.run_sweep(p, out, jobs=1, quiet=True)
    runs = catalog.read_runs(out)
    finished = done_ids(out)
    listed = set(runs.filter(pl.col("status") == "done")["run_id"])
    assert listed <= finished  # never a run that did not finish
    assert "pending" in set(runs["status"]) or listed == finished
    outcome = sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert outcome.done == 2
    assert set(catalog.read_runs(out)["status"]) == {"done"}


def test_a_failed_write_leaves_the_builder_usable_and_no_file(tmp_path: Path):
    p = write_sweep(tmp_path, TINY)
    good = tmp_path / "good"
    sweep.run_sweep(p, good, jobs=1, quiet=True)
    sw = sweepfile.read(p)
    runs = _planned(p, good)
    rows = [catalog.done_row(good, r) for r in runs]
    # A table file that is not Parquet: building its view fails inside the write.
    table = sorted(catalog.run_dir(good, runs[0].run_id).glob("*.parquet"))[0]
    saved = table.read_bytes()
    table.write_bytes(b"not parquet")
    before = (good / catalog.CATALOG_FILE).read_bytes()
    with pytest.raises(Exception):  # noqa: B017 - pyarrow's or DuckDB's, as it comes
        catalog.write(good, sw, rows)
    assert sorted(x.name for x in good.iterdir() if x.name.startswith(".catalog")) == []
    assert (good / catalog.CATALOG_FILE).read_bytes() == before  # its last good one stays
    table.write_bytes(saved)
    # The next write, with the same builder, is whole and readable by another connection.
    catalog.write(good, sw, rows)
    attached = catalog._builder().sql("SELECT database_name FROM duckdb_databases()").fetchall()
    assert {name for (name,) in attached} <= {"memory", "system", "temp"}
    study = Study.open(good)
    per_run = study.sql("SELECT run_id, count(*) AS n FROM queue GROUP BY run_id")
    assert set(per_run["run_id"]) == {r.run_id for r in runs}


def test_the_views_read_from_another_process_directory(tmp_path: Path):
    """The views name `runs` and the files as written (relative to the study): a reader
    opening the catalog by itself, from the study directory, resolves both."""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    con = duckdb.connect(str(out / catalog.CATALOG_FILE), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{out.resolve()}'")
        n = con.execute("SELECT count(DISTINCT run_id) FROM bottleneck").fetchall()[0][0]
        labels = {r[0] for r in con.sql('SELECT DISTINCT "limit" FROM bottleneck').fetchall()}
        names = {r[0] for r in con.sql("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()
    assert n == 2 and labels == {"15", "60"}
    assert names == {"runs", "axes", "study"}


def _planned(sweep_file: Path, out: Path) -> list[sweepfile.PlannedRun]:
    sw = sweepfile.read(sweep_file)
    return sweepfile.plan(sw, out / "calibration.json", workers=1, log=lambda m: None)


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def test_a_forked_child_does_not_inherit_the_builder(tmp_path: Path):
    """The calibrations' pool forks the driver: a child must not use the parent's builder
    (its DuckDB threads stayed behind), and finds none; the parent's keeps working."""
    import os

    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    parents = catalog._builder()
    pid = os.fork()
    if pid == 0:  # the child: nothing but the check (polars' pool did not survive either)
        os._exit(0 if catalog._BUILDER is None and catalog._FORKED_AWAY else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    sw = sweepfile.read(p)
    catalog.write(out, sw, [catalog.done_row(out, r) for r in _planned(p, out)])
    assert catalog._builder() is parents
    assert set(catalog.read_runs(out)["status"]) == {"done"}


def _view_sql(study_dir: Path) -> dict[str, str]:
    con = duckdb.connect(str(study_dir / catalog.CATALOG_FILE), read_only=True)
    try:
        return dict(
            con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()
        )
    finally:
        con.close()


def _view_rows(study_dir: Path, table: str, union: str | None = None) -> pl.DataFrame:
    """A view's rows, ordered; with `union`, its statement rewritten to read by name or not."""
    con = duckdb.connect(str(study_dir / catalog.CATALOG_FILE), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{study_dir.resolve()}'")
        query = f'SELECT * FROM "{table}"'
        if union is not None:
            sql = _view_sql(study_dir)[table]
            body = sql.split(" AS ", 1)[1].rstrip(";")
            query = body.replace("union_by_name = false", f"union_by_name = {union}").replace(
                "union_by_name = true", f"union_by_name = {union}"
            )
        frame = con.sql(query).pl()
    finally:
        con.close()
    return frame.sort(frame.columns)


def test_views_of_files_the_workers_described_skip_their_schemas(tmp_path: Path):
    """The runs' workers tell the driver each file's columns: a table whose files all have
    the same columns gets a view that reads the first file's schema only (`union_by_name =
    false`), with the same rows as one reading every file's by name; a run finished before
    (resumed study: its columns unknown) brings reading by name back."""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    views = _view_sql(out)
    assert {"queue", "bottleneck", "connections"} <= set(views)
    for table, sql in views.items():
        assert "union_by_name = false" in sql, table
    for table in ("queue", "connections", "bottleneck"):
        rows = _view_rows(out, table)
        assert rows.height > 0 and rows["run_id"].n_unique() == 2
        assert rows.equals(_view_rows(out, table, union="true")), table
    # Resumed with nothing to run: the columns of the earlier runs are not known here.
    sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert all("union_by_name = true" in sql for sql in _view_sql(out).values())
    assert _view_rows(out, "queue").equals(_view_rows(out, "queue", union="false"))


def test_files_of_other_columns_are_read_by_name(tmp_path: Path):
    """An axis that changes a table's columns (`measure.columns`): that table's files differ,
    its view reads them by name (every column, the missing ones null); the others' do not."""
    body = TINY.replace(
        'field = "queue.limit"\nvalues = [15, 60]',
        'zip = { "queue.limit" = [15, 60], "measure.columns" = [\n'
        '  { queue = ["t_s", "direction"] },\n'
        '  { queue = ["t_s", "direction", "samples"] },\n'
        "] }\n"
        'labels = ["15", "60"]',
    )
    assert body != TINY
    p = write_sweep(tmp_path, body)
    out = tmp_path / "study"
    outcome = sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert outcome.done == 2, outcome.failures
    views = _view_sql(out)
    assert "union_by_name = true" in views["queue"]
    assert "union_by_name = false" in views["bottleneck"]
    queue = _view_rows(out, "queue")
    assert queue["run_id"].n_unique() == 2 and queue["samples"].null_count() > 0
