"""`aqmlab sweep` end to end (real core, real worker processes): catalog and Python API,
failed cells, resume after kill -9 and after Ctrl-C, common random numbers."""

from __future__ import annotations

import json
import os
import signal
import time
import tomllib
from pathlib import Path

import polars as pl
import pytest
from conftest import BASE, cli
from sweep_support import (
    assert_same_study,
    done_ids,
    sweep_cli,
    temporary_dirs,
    wait_for,
    worker_pids,
    write_sweep,
)

from aqmlab.study import Study, catalog, execute, sweepfile

SMALL = """\
[sweep]
name = "small"
scenario = "base.toml"
repetitions = 2
seed = 11
set = { duration_s = 4.0 }

[[axis]]
name = "limit"
field = "queue.limit"
values = [15, 60]
labels = ["q15", "q60"]
"""

# Six runs long enough (tens of simulated seconds of 6 greedy flows) that a test can stop
# the sweep between two of them.
LONGER = """\
[sweep]
name = "longer"
scenario = "base.toml"
repetitions = 2
seed = 3
set = { duration_s = 60.0 }

[[axis]]
name = "limit"
field = "queue.limit"
values = [20, 40, 80]
"""


@pytest.fixture(scope="module")
def small_study(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("small")
    p = write_sweep(d, SMALL)
    r = cli("sweep", p, "--out", d / "study", "-j", "2")
    assert r.returncode == 0, r.stderr
    return d / "study"


def test_study_directory_layout(small_study):
    assert (small_study / "sweep.toml").read_text(encoding="utf-8") == SMALL
    plan = json.loads((small_study / "plan.json").read_text(encoding="utf-8"))
    assert plan["columns"] == ["limit", "rep"]
    assert len(plan["runs"]) == 4
    for run in plan["runs"]:
        d = catalog.run_dir(small_study, run["run_id"])
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        # Exactly what `aqmlab run` writes: the planned scenario, ran as planned.
        assert summary["scenario"] == run["scenario"]
        assert summary["seed"] == run["seed"] == 11 + run["rep"]
        assert run["run_id"] == sweepfile.run_id(summary["scenario"])
        assert {"connections", "queue", "bottleneck"} <= {p.stem for p in d.glob("*.parquet")}


def test_runs_table_holds_labels_seeds_and_metrics(small_study):
    study = Study.open(small_study)
    assert study.axes == ["limit", "rep"]
    runs = study.runs()
    assert runs.height == 4
    assert runs["status"].to_list() == ["done"] * 4
    assert runs.select("limit", "rep", "seed").rows() == [
        ("q15", 0, 11),
        ("q60", 0, 11),
        ("q15", 1, 12),
        ("q60", 1, 12),
    ]
    for row in runs.iter_rows(named=True):
        summary = study.results(row["run_id"]).summary
        core = summary["summary"]
        assert row["wall_time_s"] == summary["wall_time_s"]
        assert row["reverse.utilization"] == core["reverse"]["utilization"]
        assert row["forward.drops_overflow"] == core["forward"]["drops_overflow"]
        assert row["queue_forward.params.limit"] == int(row["limit"][1:])
        assert row["engine.events"] == summary["engine_stats"]["events"]
        # Study A's columns, for the studied direction (downloads: reverse).
        assert row["direction"] == "reverse"
        assert row["utilization"] == core["reverse"]["utilization"]
        assert row["scenario_hash"][:12] == row["run_id"]
    # A smaller buffer drops more, under the same users (common random numbers).
    by = {(r["limit"], r["rep"]): r for r in runs.iter_rows(named=True)}
    for rep in (0, 1):
        assert (
            by[("q15", rep)]["reverse.drops_overflow"] > by[("q60", rep)]["reverse.drops_overflow"]
        )


def test_table_concatenates_runs_with_labels(small_study):
    study = Study.open(small_study)
    q = study.table("queue", columns=["t_s", "direction", "max_pkts"])
    assert q.columns == ["run_id", "limit", "rep", "t_s", "direction", "max_pkts"]
    for row in study.runs().iter_rows(named=True):
        part = q.filter(pl.col("run_id") == row["run_id"])
        own = study.results(row["run_id"]).queue
        assert part.height == own.height > 0
        assert part["max_pkts"].to_list() == own["max_pkts"].to_list()
        assert set(part["limit"]) == {row["limit"]} and set(part["rep"]) == {row["rep"]}
        assert part["max_pkts"].max() <= int(row["limit"][1:])
    with pytest.raises(KeyError, match="no table 'nope'"):
        study.table("nope")


def test_sql_views_join_runs(small_study):
    study = Study.open(small_study)
    counts = study.sql(
        'SELECT "limit", rep, count(*) AS n FROM connections GROUP BY ALL ORDER BY ALL'
    )
    assert counts.rows() == [("q15", 0, 6), ("q15", 1, 6), ("q60", 0, 6), ("q60", 1, 6)]
    direct = study.table("bottleneck").select(pl.col("tx_bytes").sum()).item()
    assert study.sql("SELECT sum(tx_bytes) FROM bottleneck").item() == direct
    runs = study.sql('SELECT run_id, "reverse.utilization" AS u FROM runs ORDER BY run_id')
    assert runs.height == 4
    scen = study.scenario(runs["run_id"][0])
    assert scen["duration_s"] == 4.0 and scen["seed"] in (11, 12)


def test_a_finished_sweep_reruns_nothing(small_study, tmp_path):
    before = {
        rid: os.stat(catalog.run_dir(small_study, rid) / "summary.json")
        for rid in done_ids(small_study)
    }
    sweep_file = small_study.parent / "sweep.toml"
    r = cli("sweep", sweep_file, "--out", small_study)
    assert r.returncode == 0, r.stderr
    assert "0 run now, 4 already done" in r.stdout
    for rid, st in before.items():
        now = os.stat(catalog.run_dir(small_study, rid) / "summary.json")
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns)


def test_an_extended_sweep_runs_only_the_new_cells(tmp_path):
    p = write_sweep(tmp_path, SMALL.replace("repetitions = 2", "repetitions = 1"))
    out = tmp_path / "study"
    assert cli("sweep", p, "--out", out, "-j", "1").returncode == 0
    first = done_ids(out)
    p.write_text(
        SMALL.replace("repetitions = 2", "repetitions = 1").replace(
            'values = [15, 60]\nlabels = ["q15", "q60"]',
            'values = [15, 30]\nlabels = ["q15", "q30"]',
        ),
        encoding="utf-8",
    )
    r = cli("sweep", p, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "1 run now, 1 already done" in r.stdout
    assert "1 run(s) of the previous plan are not in this one" in r.stderr
    runs = Study.open(out).runs()
    assert runs["limit"].to_list() == ["q15", "q30"]
    assert len(first & set(runs["run_id"])) == 1 and len(done_ids(out)) == 3


def test_sweeps_in_a_row_share_one_pool_of_workers(tmp_path):
    """`aqmlab rfc7928` and `aqmlab reproduce` run one sweep per section on one `Backends`:
    its workers start once (an interpreter and an import of aqmlab each), not once per
    sweep, and each sweep still counts and catalogues only its own runs."""
    from aqmlab.study import sweep

    first = write_sweep(tmp_path, SMALL)
    second = write_sweep(
        tmp_path, SMALL.replace("values = [15, 60]", "values = [20, 40]"), name="other.toml"
    )
    with sweep.Backends(jobs=2) as backends:
        a = sweep.run_sweep(first, tmp_path / "a", quiet=True, backends=backends)
        pool = backends.get()
        before = sorted(worker_pids(os.getpid()))
        b = sweep.run_sweep(second, tmp_path / "b", quiet=True, backends=backends)
        assert backends.get() is pool
        assert sorted(worker_pids(os.getpid())) == before and len(before) == 2
    assert worker_pids(os.getpid()) == []  # closed with the block
    assert (a.total, a.ran, a.done, b.total, b.ran, b.done) == (4, 4, 4, 4, 4, 4)
    assert set(Study.open(tmp_path / "b").runs()["run_id"]) == done_ids(tmp_path / "b")
    assert not done_ids(tmp_path / "a") & done_ids(tmp_path / "b")


def test_a_failing_cell_is_recorded_and_the_others_run(tmp_path):
    body = SMALL.replace("values = [15, 60]", "values = [15, -3]").replace(
        "repetitions = 2", "repetitions = 1"
    )
    p = write_sweep(tmp_path, body)
    r = cli("sweep", p, "--out", tmp_path / "study", "-j", "1")
    assert r.returncode == 1, r.stderr
    failed_line = next(x for x in r.stdout.splitlines() if x.startswith("failed:"))
    assert "limit=q60" in failed_line and "queue.limit" in failed_line and "-3" in failed_line
    study = Study.open(tmp_path / "study")
    everything = study.runs(status=None)
    assert everything["status"].to_list() == ["done", "failed"]
    failed = study.runs(status="failed").row(0, named=True)
    assert "queue.limit" in failed["error"] and failed["limit"] == "q60"
    assert failed["wall_time_s"] is None and failed["utilization"] is None
    assert not catalog.run_dir(tmp_path / "study", failed["run_id"]).exists()


def test_a_run_failing_in_the_worker_reports_its_error(tmp_path):
    messages = []
    bad = tomllib.loads(BASE)
    bad["topology"]["bottleneck_mbps"] = -1.0
    res = execute.execute_run("abc", bad, str(tmp_path / "abc"), messages.append)
    assert res["ok"] is False and "bottleneck_mbps" in res["error"]
    assert messages[0]["run_id"] == "abc" and messages[0]["end_s"] == bad["duration_s"]
    assert not (tmp_path / "abc").exists()


def _group_gone(pgid: int, timeout_s: float) -> bool:
    t = time.monotonic()
    while time.monotonic() - t < timeout_s:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("uninterrupted")
    p = write_sweep(d, LONGER)
    r = cli("sweep", p, "--out", d / "study", "-j", "1")
    assert r.returncode == 0, r.stderr
    return d / "study"


def test_kill_9_mid_sweep_then_resume(tmp_path, uninterrupted):
    p = write_sweep(tmp_path, LONGER)
    out = tmp_path / "study"
    proc = sweep_cli(p, "--out", out, "-j", "1")
    # Stop it when some runs are finished and another one is being written.
    wait_for(lambda: len(done_ids(out)) >= 2 and temporary_dirs(out), proc, 300)
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must die with it
    proc.communicate()
    assert _group_gone(proc.pid, 10), "worker processes outlived the killed driver"
    finished = {rid: os.stat(catalog.run_dir(out, rid) / "summary.json") for rid in done_ids(out)}
    assert 2 <= len(finished) < 6
    # Whatever the catalog says at this point, it never lists an unfinished run as done.
    if (out / "catalog.duckdb").exists():
        listed = set(catalog.read_runs(out).filter(pl.col("status") == "done")["run_id"])
        assert listed <= set(finished)

    r = cli("sweep", p, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert f"{6 - len(finished)} run now, {len(finished)} already done" in r.stdout
    for rid, st in finished.items():  # not redone
        now = os.stat(catalog.run_dir(out, rid) / "summary.json")
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    assert temporary_dirs(out) == []
    assert_same_study(out, uninterrupted)


def test_ctrl_c_stops_cleanly_and_tells_how_to_resume(tmp_path, uninterrupted):
    p = write_sweep(tmp_path, LONGER)
    out = tmp_path / "study"
    proc = sweep_cli(p, "--out", out, "-j", "1")
    wait_for(lambda: len(done_ids(out)) >= 1 and temporary_dirs(out), proc, 300)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert f"resume with: aqmlab sweep {p} --out {out}" in err
    assert temporary_dirs(out) == []  # the run in progress left nothing behind
    done = done_ids(out)
    runs = catalog.read_runs(out)
    assert set(runs.filter(pl.col("status") == "done")["run_id"]) == done
    assert set(runs.filter(pl.col("status") == "pending")["run_id"]) == set(runs["run_id"]) - done
    r = cli("sweep", p, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert_same_study(out, uninterrupted)


def test_a_worker_killed_mid_run_is_replaced_and_its_run_redone(tmp_path, uninterrupted):
    p = write_sweep(tmp_path, LONGER)
    out = tmp_path / "study"
    proc = sweep_cli(p, "--out", out, "-j", "1")
    wait_for(lambda: len(done_ids(out)) >= 1 and temporary_dirs(out), proc, 300)
    (worker,) = worker_pids(proc.pid)
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "6 done (6 run now, 0 already done), 0 failed" in stdout
    assert temporary_dirs(out) == []
    assert_same_study(out, uninterrupted)


WEB = """\
name = "crn"
seed = 1
duration_s = 20.0
warmup_s = 2.0

[topology]
bottleneck_mbps = 2.0
bottleneck_delay_ms = 1.0
access_mbps = 100.0
access_delay_ms = 0.0
access_queue_packets = 10000
left_hosts = 2
right_hosts = 2

[queue]
kind = "droptail"
limit = 30

[tcp]
preset = "ns2-weigle2005"

[[traffic]]
kind = "packmime"
rate = 15.0
client_side = "left"
http11 = true
packmime_rtt = true
"""

CRN = """\
[sweep]
scenario = "base.toml"
repetitions = 2
seed = 5

[[axis]]
name = "queue"
field = "queue"
values = [{ kind = "droptail", limit = 8 }, { kind = "pie", limit = 200 }]
labels = ["DT-8", "PIE"]
"""


def test_common_random_numbers_across_queue_managers(tmp_path):
    p = write_sweep(tmp_path, CRN, base=WEB)
    r = cli("sweep", p, "--out", tmp_path / "study", "-j", "2")
    assert r.returncode == 0, r.stderr
    study = Study.open(tmp_path / "study")
    ex = study.table("exchanges")
    keys = ["source", "user", "index"]
    # The users' draws: who arrives when (first exchange of each connection), with which
    # request and response sizes and which RTT.
    drawn = ["request_bytes", "response_bytes", "base_rtt_ms"]

    def schedule(queue, rep):
        part = ex.filter((pl.col("queue") == queue) & (pl.col("rep") == rep)).sort(keys)
        return part

    for rep in (0, 1):
        a, b = schedule("DT-8", rep), schedule("PIE", rep)
        assert a.height > 100
        both = a.join(b, on=keys, suffix="_b")
        assert both.height >= 0.95 * min(a.height, b.height)
        for col in drawn:
            assert (both[col] == both[f"{col}_b"]).all(), col
        first = both.filter(pl.col("index") == 0)
        assert (first["start_s"] == first["start_s_b"]).all()
        # ... while the network treated them differently (the comparison is not vacuous).
        assert (both["response_time_s"] != both["response_time_s_b"]).sum() > 10
    # Another repetition draws other users.
    a0, a1 = schedule("DT-8", 0), schedule("DT-8", 1)
    j = a0.join(a1, on=keys, suffix="_1")
    assert (j["response_bytes"] != j["response_bytes_1"]).sum() > 0.5 * j.height
    conns = study.table("connections")
    for rep in (0, 1):
        per = [
            conns.filter((pl.col("queue") == q) & (pl.col("rep") == rep)).sort("conn_id")
            for q in ("DT-8", "PIE")
        ]
        n = min(per[0].height, per[1].height)
        assert per[0]["base_rtt_ms"][:n].equals(per[1]["base_rtt_ms"][:n])


LOADS = """\
[sweep]
scenario = "base.toml"
seed = 9
set = { duration_s = 8.0, warmup_s = 2.0 }

[[axis]]
name = "load"
field = "traffic.0.load"
values = [0.3, 0.6]

[[axis]]
name = "capacity"
field = "topology.bottleneck_mbps"
values = [2.0, 4.0]
"""


def test_load_axes_are_calibrated_once_per_traffic_model(tmp_path):
    base = WEB.replace("rate = 15.0\n", "")
    p = write_sweep(tmp_path, LOADS, base=base)
    out = tmp_path / "study"
    r = cli("sweep", p, "--out", out, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("measuring traffic[0]") == 1
    stored = json.loads((out / "calibration.json").read_text(encoding="utf-8"))["entries"]
    assert len(stored) == 1  # the key ignores capacity and population: one for the grid
    (slope,) = [c["slope_mbps"] for c in stored.values()]
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    for run in plan["runs"]:
        load, capacity = float(run["labels"]["load"]), float(run["labels"]["capacity"])
        entry = run["scenario"]["traffic"][0]
        assert "load" not in entry
        assert entry["rate"] == pytest.approx(load * capacity / slope, rel=1e-12)
        assert run["calibration"][0]["file"] == "calibration.json"
    runs = Study.open(out).runs()
    assert runs.height == 4
    # Resuming reuses the stored calibration (same plan, nothing measured or rerun).
    again = cli("sweep", p, "--out", out)
    assert again.returncode == 0 and "measuring" not in again.stderr
    assert "0 run now, 4 already done" in again.stdout
    # Another study takes it from a given calibration file instead of measuring.
    other = cli("sweep", p, "--out", tmp_path / "other", "--calibration", out / "calibration.json")
    assert other.returncode == 0, other.stderr
    assert "measuring" not in other.stderr and "taken from" in other.stderr
    assert set(Study.open(tmp_path / "other").runs()["run_id"]) == set(runs["run_id"])


def test_sweep_set_is_recorded_and_a_resume_must_give_the_same(tmp_path):
    p = write_sweep(tmp_path, SMALL)
    out = tmp_path / "study"
    given = ["--set", "duration_s=2.0", "--set", "queue.kind=red"]
    r = cli("sweep", p, "--out", out, "-q", "-j", "1", *given)
    assert r.returncode == 0, r.stderr
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["cli_set"] == ["duration_s=2.0", "queue.kind=red"]
    # After the file's `set` (duration 4.0), before the axis (the limit); the old kind's
    # keys dropped.
    assert [(r["scenario"]["duration_s"], r["scenario"]["queue"]) for r in plan["runs"]] == [
        (2.0, {"kind": "red", "limit": limit}) for limit in (15, 60, 15, 60)
    ]
    done = {d.name: (d / "summary.json").stat().st_mtime_ns for d in (out / "runs").iterdir()}
    r = cli("sweep", p, "--out", out, "-q", "-j", "1", "--set", "duration_s=2.0")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"error: --set: {out} was planned with --set duration_s=2.0 --set queue.kind=red, "
        "this command gives --set duration_s=2.0; resume with the same --set, or give "
        "another --out"
    ]
    r = cli("sweep", p, "--out", out, "-j", "1", "--set", "duration_s = 2.0", *given[2:])
    assert r.returncode == 0, r.stderr
    assert "4 done (0 run now, 4 already done)" in r.stdout
    assert done == {
        d.name: (d / "summary.json").stat().st_mtime_ns for d in (out / "runs").iterdir()
    }
