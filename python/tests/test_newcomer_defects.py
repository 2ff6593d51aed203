"""Defects a newcomer met (issue 36), each with the command that showed it: a `load =`
scenario is checked before its load is resolved, calibration with other entries' own TCP,
calibrations never written beside a scenario, and `run --out` never replacing an earlier
run's results silently."""

from __future__ import annotations

import json

import pytest
from conftest import cli

from aqmlab import scenario as sc
from aqmlab.runs import calibrate as making
from aqmlab.scenario import calibration as cal

# Web users at a load plus two bulk flows with their own TCP (the newcomer's scenario).
MIX = """\
name = "mix"
duration_s = 4.0
warmup_s = 1.0
[topology]
bottleneck_mbps = 10.0
left_hosts = 4
right_hosts = 4
[queue]
kind = "fq_codel"
[[traffic]]
kind = "packmime"
load = 0.5
[[traffic]]
kind = "bulk"
flows = 2
tcp = {preset = "linux-cubic", ecn = true}
"""


def _write(dir_, text=MIX, name="mix.toml"):
    dir_.mkdir(parents=True, exist_ok=True)
    p = dir_ / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("override", "must"),
    [
        ("topology.bottleneck_mbps=20Mbit", 'topology.bottleneck_mbps = "20Mbit"'),
        ("topology.bottlenek_mbps=20", "topology.bottlenek_mbps: unknown field"),
        ("topology.bottleneck_mbps=20000000", "topology.bottleneck_mbps = 20000000"),
    ],
)
def test_load_scenario_is_checked_before_its_load(tmp_path, override, must):
    """Before: a calibration error, a float conversion or a derived `traffic[0].rate`."""
    f = _write(tmp_path)
    with pytest.raises(sc.ScenarioError) as e:
        sc.load(f, overrides=[override])
    assert str(e.value).startswith(must), str(e.value)
    assert not isinstance(e.value, cal.CalibrationMissing)


def test_internal_lists_are_not_offered_as_keys(tmp_path):
    f = _write(tmp_path)
    with pytest.raises(sc.ScenarioError) as e:
        sc.load(f, overrides=["bogus=1"])
    assert "unknown field" in str(e.value) and "traffic_tcp" not in str(e.value)


def test_calibration_keeps_only_its_entrys_own_tcp(tmp_path):
    f = _write(tmp_path)
    resolved = sc.load(f, loads=False)
    assert len(resolved["traffic_tcp"]) == 2  # the bulk entry's own TCP, listed by the loader
    u = making.uncongested(resolved, 0, 10.0)
    assert len(u["traffic"]) == 1 and "traffic_tcp" not in u
    sc.validate(u)  # before: "traffic_tcp = 2 entries: expected at most one per entry (1)"
    # The Web entry with a TCP of its own: its calibration runs and key follow it.
    own = sc.load(
        _write(tmp_path / "own", MIX.replace("load = 0.5", 'load = 0.5\ntcp = "linux-reno"')),
        loads=False,
    )
    u = making.uncongested(own, 0, 10.0)
    assert u["traffic_tcp"] == [own["traffic_tcp"][0]] and own["traffic_tcp"][0] is not None
    assert cal.calibration_key(own, 0) != cal.calibration_key(resolved, 0)


def test_calibrate_writes_in_the_current_directory(tmp_path):
    f = _write(tmp_path / "examples")
    work = tmp_path / "work"
    work.mkdir()
    proc = cli("calibrate", f, "--points", "2", "--duration", "20", "--warmup", "2", "-q", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "examples").iterdir()) == ["mix.toml"]
    assert (work / "mix.calibration.json").is_file()
    # ... and `validate` from there finds it.
    assert cli("validate", f, cwd=work).returncode == 0


def test_run_calibrate_keeps_its_calibration_in_the_run(tmp_path):
    f = _write(tmp_path / "examples")
    work = tmp_path / "work"
    work.mkdir()
    proc = cli("run", f, "--calibrate", "--out", "res", "-q", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "examples").iterdir()) == ["mix.toml"]
    assert sorted(p.name for p in work.iterdir()) == ["res"]
    stored = cal.load_file(work / "res" / "calibration.json")
    summary = json.loads((work / "res" / "summary.json").read_text())
    (used,) = summary["calibration"]
    assert used["key"] in stored and used["file"] == "calibration.json"


def test_run_refuses_to_replace_an_earlier_run(tmp_path):
    f = _write(tmp_path, MIX.replace("load = 0.5", "rate = 1.0"))
    out = tmp_path / "res"
    assert cli("run", f, "--out", out, "-q").returncode == 0
    before = (out / "summary.json").read_bytes()
    proc = cli("run", f, "--out", out, "-q", "--seed", "2")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: --out {out}: holds the results of an earlier run; give --force to replace "
        "them, or another --out"
    ]
    assert (out / "summary.json").read_bytes() == before
    assert cli("run", f, "--out", out, "-q", "--seed", "2", "--force").returncode == 0
    assert (out / "summary.json").read_bytes() != before


def test_run_takes_overrides_as_a_dict(tmp_path):
    """`aqmlab.run(overrides=...)` wanted CLI strings; a dict of Python values is taken too,
    with the same outcome as the strings."""
    import aqmlab

    f = _write(tmp_path, MIX.replace("load = 0.5", "rate = 1.0"))
    as_dict = aqmlab.run(f, overrides={"duration_s": 2.0, "queue": {"kind": "pie"}})
    as_text = aqmlab.run(f, overrides=["duration_s=2.0", 'queue={kind="pie"}'])
    assert as_dict.summary["scenario"] == as_text.summary["scenario"]
    assert as_dict.summary["scenario"]["queue"]["kind"] == "pie"
    assert as_dict.summary["summary"] == as_text.summary["summary"]
    with pytest.raises(sc.ScenarioError, match=r"overrides\['seed'\] = None"):
        aqmlab.run(f, overrides={"seed": None})


def test_opening_a_missing_study_is_file_not_found(tmp_path):
    from aqmlab import Study

    with pytest.raises(FileNotFoundError):
        Study.open(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(sc.ScenarioError, match="not an aqmlab study directory"):
        Study.open(tmp_path / "empty")


def test_queues_lists_every_kind_with_its_defaults():
    """`aqmlab queues`, as `presets` lists TCP (issue 36)."""
    proc = cli("queues")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    kinds = [x for x in lines if x and not x.startswith(" ")]
    assert {"droptail", "red", "codel", "pie", "fq_codel", "fq_pie", "cake", "dualpi2"} <= set(
        kinds
    )
    fq = lines[lines.index("fq_codel") + 1 :]
    fq = fq[: next(i for i, x in enumerate(fq) if not x.startswith(" "))]
    assert any(x.split() == ["limit", "10240"] for x in fq), fq
    dt = lines[lines.index("droptail") + 1 : lines.index("droptail") + 3]
    assert any(x.split()[:2] == ["limit", "(required)"] for x in dt), dt


@pytest.mark.parametrize("command", ["sweep", "reproduce", "rfc7928", "tune", "calibrate"])
def test_parallelism_is_spelled_one_way_with_the_old_names_as_aliases(command):
    """`--workers`, `-j/--jobs`, `--scheduler` or `--dask` depending on the command (issue
    36): every command takes -j/--jobs (and --workers); those that run studies --scheduler
    (and --dask)."""
    import argparse

    from aqmlab import cli as aqcli

    subparsers = aqcli._parser()._subparsers._group_actions[0]
    assert isinstance(subparsers, argparse._SubParsersAction)
    sub = subparsers.choices[command]
    flags = {o for a in sub._actions for o in a.option_strings}
    assert {"-j", "--jobs", "--workers"} <= flags, flags
    if command != "calibrate":
        assert {"--scheduler", "--dask"} <= flags, flags


def test_directions_are_download_and_upload_where_a_user_reads_them(tmp_path):
    """Every download was `reverse`, and the README's `--pcap forward` captured ACKs (issue
    36): the summary says download/upload, and --pcap takes them."""
    f = tmp_path / "s.toml"
    f.write_text("duration_s = 2.0\n", encoding="utf-8")
    out = tmp_path / "r"
    proc = cli("run", f, "--out", out, "--pcap", "download")
    assert proc.returncode == 0, proc.stderr
    assert "  download (right → left)" in proc.stdout and "  upload (left → right)" in proc.stdout
    # The goodput line splits the directions (their sum read as one link's goodput).
    assert (
        "TCP goodput (after warm-up): download " in proc.stdout and " Mb/s, upload " in proc.stdout
    )
    assert (out / "capture-reverse.pcap").is_file()
    from aqmlab.scenario import direction_names as directions

    assert directions.canonical("Download") == "reverse"
    with pytest.raises(sc.ScenarioError, match="expected download, upload"):
        directions.canonical("sideways")


def test_the_newcomers_study_plans():
    """examples/sweeps/access_link.toml: FQ-CoDel, CAKE, PIE and DualPI2 against a bloated
    FIFO for Web users at `load =` beside two bulk downloads, written as the docs say."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = cli("validate", root / "examples" / "sweeps" / "access_link.toml")
    assert proc.returncode == 0, proc.stderr
    assert "5 cells × 3 repetitions = 15 runs, 0 failures planned" in proc.stdout


def test_a_misspelt_columns_table_is_refused(tmp_path):
    """`measure.columns = { exchange = [...] }` was silently ignored (issue 36, fuzzer)."""
    f = tmp_path / "s.toml"
    f.write_text("duration_s = 2.0\n", encoding="utf-8")
    out = tmp_path / "r"
    proc = cli("run", f, "--out", out, "--set", 'measure.columns={exchange=["start_s"]}')
    assert proc.returncode == 2
    assert proc.stderr.startswith('error: measure.columns.exchange: no table "exchange"')
    assert "exchanges" in proc.stderr and not out.exists()


def test_another_sweep_file_cannot_take_over_a_study(tmp_path):
    """A different sweep file pointed at an existing study replaced its plan and catalog
    silently (issue 36)."""
    from sweep_support import write_sweep

    from aqmlab.study import sweep

    one = write_sweep(tmp_path, '[sweep]\nname = "one"\nscenario = "base.toml"\n', name="a.toml")
    two = write_sweep(tmp_path, '[sweep]\nname = "two"\nscenario = "base.toml"\n', name="b.toml")
    out = tmp_path / "study"
    sweep.run_sweep(one, out, jobs=1, quiet=True)
    plan = (out / "plan.json").read_bytes()
    with pytest.raises(sc.ScenarioError, match="holds the study 'one', not 'two'"):
        sweep.run_sweep(two, out, jobs=1, quiet=True)
    assert (out / "plan.json").read_bytes() == plan


def test_out_may_be_a_directory_for_the_one_file_commands(tmp_path):
    """`--out` was a directory for six commands and a file for five (issue 36): those five
    take a directory too and write their default file name in it."""
    f = tmp_path / "quick.toml"
    f.write_text("duration_s = 2.0\n", encoding="utf-8")
    run = tmp_path / "run"
    assert cli("run", f, "--out", run, "-q", "--set", "trace.qdisc=true").returncode == 0
    there = tmp_path / "there"
    there.mkdir()
    assert cli("flent", run, "--out", there).returncode == 0
    assert [p.name for p in there.iterdir()] == ["run.flent.gz"]  # the run's name
    stats = cli("stats", run, "--over-time", "--out", there)
    assert stats.returncode == 0, stats.stderr
    assert (there / "qdisc_over_time.csv").is_file()
