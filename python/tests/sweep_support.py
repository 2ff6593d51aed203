"""Helpers of the sweep tests: writing sweep files, comparing two study directories."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import BASE

from aqmlab.runs import runner
from aqmlab.study import Study, catalog

BASE_FILE = "base.toml"


# Two 2-s runs of the base scenario (`write_sweep` writes it beside), by queue limit.
TINY = """\
[sweep]
name = "tiny"
scenario = "base.toml"
seed = 5
set = { duration_s = 2.0 }

[[axis]]
name = "limit"
field = "queue.limit"
values = [15, 60]
"""


def write_sweep(directory: Path, body: str, base: str = BASE, name: str = "sweep.toml") -> Path:
    """Writes `base` as base.toml and a sweep file `[sweep] scenario = "base.toml"` + body."""
    (directory / BASE_FILE).write_text(base, encoding="utf-8")
    p = directory / name
    p.write_text(body, encoding="utf-8")
    return p


def sweep_cli(*args: str | os.PathLike, **popen) -> subprocess.Popen:
    """`python -m aqmlab sweep ARGS` started in its own session (so that a test can signal
    it, or its whole process group)."""
    env = {k: v for k, v in os.environ.items() if k != "AQMLAB_DEBUG"}
    return subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "sweep", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        **popen,
    )


def done_ids(study_dir: Path) -> set[str]:
    runs = study_dir / catalog.RUNS_DIR
    if not runs.is_dir():
        return set()
    # A hidden directory is a run being written (renamed into place when complete).
    return {
        p.name
        for p in runs.iterdir()
        if not p.name.startswith(".") and (p / runner.SUMMARY_FILE).is_file()
    }


def temporary_dirs(study_dir: Path) -> list[str]:
    runs = study_dir / catalog.RUNS_DIR
    return [p.name for p in runs.iterdir() if p.name.startswith(".")] if runs.is_dir() else []


def comparable_runs(study_dir: Path) -> pl.DataFrame:
    """The catalog's runs table without the columns that legitimately differ between two
    executions of the same plan (`catalog.RUN_SPECIFIC`)."""
    return catalog.read_runs(study_dir).drop(list(catalog.RUN_SPECIFIC))


def comparable_summary(path: Path) -> bytes:
    """summary.json without its run-specific field (wall_time_s), re-serialised."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    for key in catalog.RUN_SPECIFIC:
        doc.pop(key)
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def assert_same_study(a: Path, b: Path) -> None:
    """Same runs table (but wall times), same summaries (but wall times), byte-identical
    Parquet files, same view contents."""
    ra, rb = comparable_runs(a), comparable_runs(b)
    assert ra.columns == rb.columns
    assert ra.equals(rb), "runs tables differ"
    ids = done_ids(a)
    assert ids == done_ids(b) and ids
    for rid in sorted(ids):
        da, db = catalog.run_dir(a, rid), catalog.run_dir(b, rid)
        files = sorted(p.name for p in da.iterdir())
        assert files == sorted(p.name for p in db.iterdir())
        for name in files:
            if name == runner.SUMMARY_FILE:
                assert comparable_summary(da / name) == comparable_summary(db / name), rid
            else:
                assert (da / name).read_bytes() == (db / name).read_bytes(), f"{rid}/{name}"
    sa, sb = Study.open(a), Study.open(b)
    for table in sa.tables():
        va, vb = (s.sql(f"SELECT * FROM {table}") for s in (sa, sb))
        assert va.sort(va.columns).equals(vb.sort(vb.columns)), table


def worker_pids(driver: int) -> list[int]:
    """The driver's pool workers (spawned multiprocessing children, not its resource
    tracker)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == driver and "spawn_main" in cmdline and "resource_tracker" not in cmdline:
            pids.append(int(entry.name))
    return pids


def wait_for(predicate, proc, timeout_s: float = 120) -> None:
    """Polls `predicate` until true; fails the test if the sweep `proc` ends first or the
    wait exceeds `timeout_s` (then the sweep's process group is killed)."""
    t = time.monotonic()
    while not predicate():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the sweep ended before the test could stop it: {out} {err}")
        if time.monotonic() - t > timeout_s:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("timed out waiting for the sweep")
        time.sleep(0.005)
