"""Reliability review (issue 17): bad inputs are one line naming the file or field (never
errno text, never a file's content), names stay inside their output root, killed runs leave
nothing that later runs keep, and an interrupted sweep ends cleanly."""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import re
import signal
import time
import tomllib
from multiprocessing import resource_tracker
from pathlib import Path

import polars as pl
import pytest
from conftest import BASE, cli, edit, looks_complete, write_scenario
from sweep_support import TINY, done_ids, sweep_cli, wait_for, worker_pids, write_sweep

from aqmlab import scenario as sc
from aqmlab.scenario import calibration as cal
from aqmlab.study import catalog, execute, sweep

REPO = Path(__file__).resolve().parents[2]

# Runs of tens of seconds each (a 600-s run takes only 0.4 s): every test stops the sweep
# long before one ends, so none may finish while a test is still signalling.
SLOW = """\
[sweep]
name = "slow"
scenario = "base.toml"
repetitions = 2
seed = 3
set = { duration_s = 30000.0 }

[[axis]]
name = "limit"
field = "queue.limit"
values = [20, 40]
"""


def _check_error(proc, must_contain, must_not=()):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: "), err
    assert "[Errno" not in err, err
    for s in must_contain:
        assert s in err, f"{s!r} not in {err!r}"
    for s in must_not:
        assert s not in err, f"{s!r} in {err!r}"
    return err


# --- 5a: calibration files of another shape --------------------------------------------------

WEB = edit(
    BASE,
    '[[traffic]]\nkind = "bulk"\nflows = 6\nstart_jitter_s = 0.5\n',
    '[[traffic]]\nkind = "packmime"\nload = 0.5\n',
)


def _calibration_entry(scenario_file: Path) -> tuple[str, dict]:
    """A well-formed entry for the scenario's `load` entry (its real key), values made up."""
    resolved = sc.load(scenario_file, loads=False)
    key = cal.calibration_key(resolved, 0)
    entry = cal.Calibration(
        key=key,
        kind="packmime",
        population="rate",
        direction="reverse",
        slope_mbps=0.5,
        r2=0.99,
        intercept_fit={"slope_mbps": 0.5, "intercept_mbps": 0.0, "r2": 0.99},
        points=[],
        capacity_mbps=10.0,
        calibration_bottleneck_mbps=100.0,
        duration_s=5.0,
        warmup_s=1.0,
        seed=7,
        traffic_index=0,
    ).to_json()
    return key, entry


def _file(entries) -> dict:
    return {"format": cal.FORMAT, "version": 1, "entries": entries}


@pytest.mark.parametrize(
    ("make", "must"),
    [
        (lambda key, e: [e], ["not an aqmlab calibration file", '"format"']),
        (lambda key, e: _file([e]), ["entries: expected an object", "got a list"]),
        (lambda key, e: _file({key: [1, 2]}), ['entries."KEY"', "expected an object"]),
        (
            lambda key, e: _file({key: {k: v for k, v in e.items() if k != "slope_mbps"}}),
            ['entries."KEY"', "missing slope_mbps"],
        ),
        (
            lambda key, e: _file({key: {**e, "slope_mbps": "fast"}}),
            ['entries."KEY".slope_mbps', "expected a number, got a string"],
        ),
        (
            lambda key, e: _file({key: {**e, "seed": 1.5}}),
            ['entries."KEY".seed', "expected an integer"],
        ),
        (
            lambda key, e: _file({"x" * 500: {**e, "r2": None}}),
            ["entry 1.r2", "expected a number, got null"],
        ),
    ],
    ids=[
        "a-list",
        "entries-a-list",
        "entry-a-list",
        "missing-key",
        "wrong-type",
        "float-seed",
        "long-key",
    ],
)
def test_calibration_file_of_another_shape(tmp_path: Path, make, must):
    key, entry = _calibration_entry(write_scenario(tmp_path, WEB))
    calib = tmp_path / "my.calibration.json"
    calib.write_text(json.dumps(make(key, entry)), encoding="utf-8")
    must = [m.replace("KEY", key) for m in must]
    scen = tmp_path / "scenario.toml"
    err = _check_error(cli("validate", scen, "--calibration", calib), [str(calib), *must])
    assert "x" * 50 not in err  # the file's content is not echoed
    out = tmp_path / "out"
    _check_error(cli("run", scen, "--calibration", calib, "--out", out), [str(calib), *must])
    assert not out.exists()


def test_a_well_formed_calibration_file_is_used(tmp_path: Path):
    key, entry = _calibration_entry(write_scenario(tmp_path, WEB))
    calib = tmp_path / "my.calibration.json"
    calib.write_text(json.dumps(_file({key: entry})), encoding="utf-8")
    resolved = sc.load(tmp_path / "scenario.toml", calibration=calib)
    assert resolved["traffic"][0]["rate"] == pytest.approx(0.5 * 10.0 / 0.5)


def test_calibration_file_that_is_not_json_names_the_line(tmp_path: Path):
    write_scenario(tmp_path, WEB)
    calib = tmp_path / "my.calibration.json"
    calib.write_text('{\n  "format": "aqmlab-calibration",\n  SECRET\n}\n', encoding="utf-8")
    _check_error(
        cli("validate", tmp_path / "scenario.toml", "--calibration", calib),
        [str(calib), "line 3", "not valid JSON"],
        must_not=["SECRET"],
    )


# --- 5b: a damaged summary.json in a study ----------------------------------------------------


def test_a_damaged_summary_is_reported_and_its_run_done_again(tmp_path: Path):
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    first = cli("sweep", p, "--out", out, "-j", "1")
    assert first.returncode == 0, first.stderr
    ids = sorted(done_ids(out))
    assert len(ids) == 2
    damaged = catalog.run_dir(out, ids[0]) / "summary.json"
    damaged.write_text('{\n  "scenario": {"name": "SECRET', encoding="utf-8")  # cut short
    r = cli("sweep", p, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    warning = next(x for x in r.stderr.splitlines() if "warning" in x)
    assert str(damaged) in warning and "line 2" in warning and "again" in warning, warning
    assert "SECRET" not in r.stderr
    assert "1 run now, 1 already done" in r.stdout
    json.loads(damaged.read_text(encoding="utf-8"))  # replaced by the new run's
    # The catalog lists both runs as done again.
    done = catalog.read_runs(out).filter(pl.col("status") == "done")
    assert set(done["run_id"]) == set(ids)


def test_a_damaged_table_is_reported_and_its_run_done_again(tmp_path: Path):
    """The fuzzer's resume with one damaged Parquet file (issue 36): DuckDB's 'magic bytes'
    text naming neither file nor run, and a catalog temporary file left behind."""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    assert cli("sweep", p, "--out", out, "-j", "1").returncode == 0
    ids = sorted(done_ids(out))
    damaged = sorted(catalog.run_dir(out, ids[1]).glob("*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:-100])  # cut short
    r = cli("sweep", p, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    warning = next(x for x in r.stderr.splitlines() if "warning" in x)
    assert str(damaged) in warning and ids[1] in warning and "again" in warning, warning
    assert "magic" not in r.stderr
    assert "1 run now, 1 already done" in r.stdout
    assert list(out.glob(".catalog.duckdb.tmp-*")) == []
    assert set(catalog.read_runs(out)["status"]) == {"done"}


def test_plots_of_a_damaged_results_directory(tmp_path: Path, scenario_file: Path):
    res = tmp_path / "res"
    assert cli("run", scenario_file, "--out", res, "-q").returncode == 0
    (res / "summary.json").write_text("[1, 2,\nSECRET", encoding="utf-8")
    _check_error(
        cli("plots", res),
        [str(res / "summary.json"), "line 2", "not valid JSON"],
        must_not=["SECRET"],
    )


# --- 5c: file-system problems, in words ---------------------------------------------------------


@pytest.fixture
def places(tmp_path: Path) -> Path:
    """tmp_path with a file `afile`, a directory `adir`, a scenario and a sweep file."""
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    write_scenario(tmp_path)
    write_sweep(tmp_path, TINY)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "must"),
    [
        (["run", "adir"], ["adir", "is a directory"]),
        (["validate", "adir"], ["adir", "is a directory"]),
        (["sweep", "adir"], ["adir", "is a directory"]),
        (["run", "scenario.toml", "--out", "afile/sub"], ["--out afile/sub", "afile is a file"]),
        (["sweep", "sweep.toml", "--out", "afile/sub"], ["--out afile/sub", "afile is a file"]),
        (["plots", "afile"], ["afile", "not a directory"]),
        (["plots", "afile/x"], ["afile/x", "not an aqmlab results directory"]),
    ],
    ids=["run-dir", "validate-dir", "sweep-dir", "run-out", "sweep-out", "plots-file", "plots-sub"],
)
def test_file_system_problems_are_one_line_in_words(places: Path, args, must):
    _check_error(cli(*args, cwd=places), must)
    assert not any(looks_complete(p) for p in places.rglob("*"))


def test_output_paths_blocked_by_a_file(places: Path, tmp_path_factory):
    res = places / "res"
    assert cli("run", "scenario.toml", "--out", res, "-q", cwd=places).returncode == 0
    _check_error(cli("plots", res, "--out", "afile", cwd=places), ["afile is a file"])
    _check_error(cli("plots", res, "--out", "afile/x", cwd=places), ["afile is a file"])
    study = places / "study"
    assert cli("sweep", "sweep.toml", "--out", study, "-q", "-j", "1", cwd=places).returncode == 0
    _check_error(
        cli("report", study, "--out", "afile/r.html", cwd=places), ["afile/r.html", "afile is"]
    )
    # A directory as --out gets the command's own file name (issue 36's one convention).
    assert cli("report", study, "--out", "adir", cwd=places).returncode == 0
    assert (places / "adir" / "report.html").is_file()
    _check_error(cli("report", study, "--figures", "afile", cwd=places), ["afile is a file"])
    assert (places / "afile").read_text(encoding="utf-8") == "x"


def test_one_line_of_an_os_error_names_the_path():
    e = FileNotFoundError(2, "No such file or directory", "/x/y.toml")
    assert sc.one_line(e) == "/x/y.toml: no such file or directory"
    e = IsADirectoryError(21, "Is a directory", ".r.tmp", None, "r")
    assert sc.one_line(e) == ".r.tmp -> r: is a directory"


# --- 5d: RTT (and other CDF) files: the line, not its text --------------------------------------

EMPIRICAL = edit(
    BASE,
    'kind = "uniform"\nmin_ms = 10.0\nmax_ms = 100.0',
    'kind = "empirical"\nfile = "rtt.csv"',
)


@pytest.mark.parametrize(
    ("content", "must"),
    [
        (b"rtt_ms,cdf\n10,0.1\nSECRET-TOKEN\n100,1\n", ["line 3", "found 1 field"]),
        (b"10 0.1\n20 0.5 SECRET\n100 1\n", ["line 2", "found 3 fields"]),
        (b"10 0.1\n20 SECRET\n100 1\n", ["line 2", "not a number"]),
        (b"10 0.1\n20 inf\n100 1\n", ["line 2", "finite"]),
        (b"10 0.1\n20 0.5\n\xff\xfeSECRET 1\n", ["line 3", "not UTF-8"]),
    ],
    ids=["one-field", "three-fields", "not-a-number", "infinite", "not-utf8"],
)
def test_bad_rtt_file_names_the_line_not_its_text(tmp_path: Path, content: bytes, must):
    (tmp_path / "rtt.csv").write_bytes(content)
    err = _check_error(
        cli("validate", write_scenario(tmp_path, EMPIRICAL)),
        ['rtt.file = "rtt.csv"', *must],
        must_not=["SECRET", "inf'", "\\x"],
    )
    assert "'" not in err.split("line", 1)[1], err  # no quoted text after the line number


# --- 6: names stay inside their output root ---------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["../../x", "ABS", ".hidden", "a/b", "..", "a b"],
    ids=["up", "abs", "dot", "sub", "dotdot", "space"],
)
def test_sweep_name_must_be_a_plain_file_name(tmp_path: Path, name: str):
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    if name == "ABS":
        name = str(tmp_path / "abs")
    p = write_sweep(cwd, TINY.replace('name = "tiny"', f"name = {json.dumps(name)}"))
    before = sorted(tmp_path.rglob("*"))
    proc = cli("sweep", p, "-j", "1", cwd=cwd)
    _check_error(proc, ["sweep.name", "plain file name"])
    assert sorted(tmp_path.rglob("*")) == before  # nothing written anywhere


def test_a_sweep_file_stem_that_is_not_a_plain_name_needs_out(tmp_path: Path):
    p = write_sweep(tmp_path, TINY.replace('name = "tiny"\n', ""), name=".odd.toml")
    _check_error(cli("sweep", p, "-j", "1", cwd=tmp_path), ["sweep.name", "--out"])
    assert not (tmp_path / "results").exists()
    r = cli("sweep", p, "-j", "1", "-q", "--out", tmp_path / "study", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_run_default_out_stays_a_child_of_results(tmp_path: Path):
    write_scenario(tmp_path, name="..toml")  # stem "."
    proc = cli("run", "..toml", "-q", cwd=tmp_path)
    _check_error(proc, ["..toml", "--out"])
    assert not (tmp_path / "results").exists()


def test_run_ids_name_directories_in_runs_only(tmp_path: Path):
    assert catalog.run_dir(tmp_path, "0123456789ab") == tmp_path / "runs" / "0123456789ab"
    for bad in ("../../etc", "/etc", "..", "0123456789ab/..", "ABCDEF012345"):
        with pytest.raises(sc.ScenarioError, match="run_id"):
            catalog.run_dir(tmp_path, bad)


# --- 7: leftovers of killed runs; interrupted sweeps ---------------------------------------------


def test_a_run_removes_what_killed_runs_into_its_out_left(tmp_path: Path, scenario_file: Path):
    root = tmp_path / "results"
    root.mkdir()
    stale = [root / ".r.tmp-dead1", root / ".r.old-dead2"]
    for d in stale:
        d.mkdir()
        (d / "summary.json").write_text("{}", encoding="utf-8")
    others = [root / ".other.tmp-x", root / "r.tmp-x", root / ".r.tmpx"]
    for d in others:
        d.mkdir()
    live = root / ".r.tmp-live"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY)  # what a run in progress holds
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = cli("run", scenario_file, "--out", root / "r", "-q")
        assert r.returncode == 0, r.stderr
    finally:
        os.close(fd)
    assert looks_complete(root / "r")
    assert not any(d.exists() for d in stale)
    assert all(d.is_dir() for d in [*others, live])


def test_a_sweep_removes_its_stale_temporary_files(tmp_path: Path):
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    assert cli("sweep", p, "--out", out, "-j", "1", "-q").returncode == 0
    stale = [out / ".plan.json.tmp-99999", out / ".sweep.toml.tmp-99999"]
    stale += [out / ".catalog.duckdb.tmp-99999", out / ".calibration.json.tmp"]
    for f in stale:
        f.write_text("partial", encoding="utf-8")
    (out / "runs" / ".0123456789ab.tmp-abcd").mkdir()
    kept = [out / "notes.txt", out / ".plan.json.bak", out / "runs" / "README"]
    for f in kept:
        f.write_text("mine", encoding="utf-8")
    r = cli("sweep", p, "--out", out, "-j", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert not any(f.exists() for f in stale)
    assert not (out / "runs" / ".0123456789ab.tmp-abcd").exists()
    assert all(f.read_text(encoding="utf-8") == "mine" for f in kept)


def _check_interrupted(proc, p: Path, out: Path) -> None:
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert "leaked semaphore" not in err, err
    assert "resource_tracker" not in err, err
    assert f"resume with: aqmlab sweep {p} --out {out}" in err, err


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_while_the_workers_start(tmp_path: Path):
    """Ctrl-C in a terminal signals the whole process group: the workers too, which must not
    die of it with a traceback from the middle of their imports (nor break the pool)."""
    p = write_sweep(tmp_path, SLOW)
    out = tmp_path / "study"
    proc = sweep_cli(p, "--out", out, "-j", "1")
    wait_for(lambda: worker_pids(proc.pid), proc)
    (worker,) = worker_pids(proc.pid)
    time.sleep(0.1)  # its interpreter is up (and imports aqmlab for a second or so)
    deadline = time.monotonic() + 2.0
    with contextlib.suppress(ProcessLookupError):
        while time.monotonic() < deadline:  # the Ctrl-C as the worker gets it, at any time
            os.kill(worker, signal.SIGINT)
            time.sleep(0.02)
    assert worker_pids(proc.pid) == [worker]  # alive, the same one
    os.killpg(proc.pid, signal.SIGINT)
    _check_interrupted(proc, p, out)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_mid_run_ends_the_sweep_cleanly(tmp_path: Path, sig):
    p = write_sweep(tmp_path, SLOW)
    out = tmp_path / "study"
    proc = sweep_cli(p, "--out", out, "-j", "1")
    runs = out / "runs"
    wait_for(lambda: runs.is_dir() and any(x.name.startswith(".") for x in runs.iterdir()), proc)
    os.kill(proc.pid, sig)
    _check_interrupted(proc, p, out)
    assert not [x for x in runs.iterdir() if x.name.startswith(".")]


@pytest.fixture
def named_semaphores(monkeypatch) -> set[str]:
    """The named semaphores registered with the resource tracker and not yet released
    (what it would report as leaked if this process died now)."""
    live: set[str] = set()
    monkeypatch.setattr(resource_tracker, "register", lambda name, rtype: live.add(name))
    monkeypatch.setattr(resource_tracker, "unregister", lambda name, rtype: live.discard(name))
    return live


def test_a_closed_local_backend_holds_no_named_semaphore(named_semaphores: set[str]):
    backend = execute.LocalBackend(1)
    assert named_semaphores  # spawn-context queues use named semaphores
    backend.stop()
    backend.close()
    gc.collect()
    assert named_semaphores == set()
    assert backend.messages() == []


def test_an_interrupt_during_the_catalog_write_waits_for_it(tmp_path: Path, monkeypatch):
    """DuckDB turns a KeyboardInterrupt inside a statement into its own error: the signal
    must wait for the catalog write, and then end the sweep as an interrupt. (A new study's
    first write is its end's, issue 34: the runs are done, and catalogued as such.)"""
    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    real = catalog.write

    def write_with_a_signal(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # arrives in the middle of the write
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog, "write", write_with_a_signal)
    try:
        with pytest.raises(sweep.SweepInterrupted) as info:
            sweep.run_sweep(p, out, jobs=1, quiet=True)
    except KeyboardInterrupt:  # not the sweep's: it broke out of the catalog write
        pytest.fail("the interrupt did not wait for the catalog write")
    assert info.value.outcome.done == 2
    assert catalog.read_runs(out)["status"].to_list() == ["done", "done"]


@pytest.mark.parametrize("where", ["plan", "backend"])
def test_an_interrupt_before_any_run_is_the_sweeps_own(tmp_path: Path, monkeypatch, where):
    """Ctrl-C while the sweep plans (calibrates) or starts its workers (issue 36: the single
    run's "no results written" line, no resume line, leftovers): the sweep's interrupt, with
    nothing run and nothing left in the study directory."""
    from aqmlab.study import sweepfile

    p = write_sweep(tmp_path, TINY)
    out = tmp_path / "study"
    target, name = (sweepfile, "plan") if where == "plan" else (sweep.Backends, "get")
    real = getattr(target, name)

    def with_a_signal(*args, **kwargs):
        result = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the signal arrives here
        return result

    monkeypatch.setattr(target, name, with_a_signal)
    with pytest.raises(sweep.SweepInterrupted) as info:
        sweep.run_sweep(p, out, jobs=1, quiet=True)
    assert info.value.outcome.done == 0
    leftovers = [q for q in out.rglob(".*")] if out.exists() else []
    assert leftovers == []
    # And it resumes to the end.
    monkeypatch.undo()
    assert sweep.run_sweep(p, out, jobs=1, quiet=True).done == 2


# --- 8: docs and help say what the code does -----------------------------------------------------


def test_documented_initial_timer_values_are_accepted():
    doc = (REPO / "docs" / "scenario.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `initial_timer`"))
    values = re.findall(r'`"([a-z0-9_]+)"`', row)
    assert len(values) >= 2, row
    for v in values:
        sc.validate(sc.resolve(tomllib.loads(BASE), [f"tcp.initial_timer={v}"]))


def test_run_help_names_the_default_out_as_the_code_does(tmp_path: Path):
    proc = cli("run", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "results/<scenario file name without .toml>" in text
    assert "<scenario name>" not in text
    # ... which is what run does: the file's stem, not its `name = "test"`.
    write_scenario(tmp_path, name="stem-here.toml")
    assert cli("run", "stem-here.toml", "-q", cwd=tmp_path).returncode == 0
    assert looks_complete(tmp_path / "results" / "stem-here")
