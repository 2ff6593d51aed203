"""Which stack and queue ran, as the run summary and the study report say it (issue 36): a
resolved `[tcp]` named by its preset and the keys that differ, read back from the
parameters alone; the default stack of a new scenario is Linux CUBIC."""

from __future__ import annotations

import aqmlab._core as _core
from conftest import cli

from aqmlab import scenario as sc
from aqmlab.scenario import stack


def test_every_preset_reads_back_as_itself():
    for name in _core.tcp_presets():
        if name == "linux":  # an alias of linux-cubic: the same parameters
            continue
        assert stack.describe_stack(_core.tcp_preset(name)) == name


def test_changed_keys_are_named():
    tcp = {**_core.tcp_preset("freebsd-4.x"), "rwnd": 65535, "ecn": True}
    assert stack.describe_stack(tcp) == "freebsd-4.x with rwnd = 65535, ecn = true"


def test_a_minimal_scenario_runs_linux_cubic():
    s = sc.resolve({"duration_s": 5.0})
    assert stack.describe_stacks(s) == ["linux-cubic"]
    assert s["tcp"]["initial_window"] == 10


def test_ecn_note_when_a_marking_queue_meets_senders_without_ecn():
    s = sc.resolve({"duration_s": 5.0, "queue": {"kind": "dualpi2"}})
    assert "plain PI2" in stack.ecn_note(s)
    s = sc.resolve({"duration_s": 5.0, "queue": {"kind": "dualpi2"}, "tcp": {"ecn": True}})
    assert stack.ecn_note(s) is None
    s = sc.resolve({"duration_s": 5.0, "queue": {"kind": "fq_codel"}})
    assert stack.ecn_note(s) is None  # FQ-CoDel without `ecn` drops: nothing to say


def test_the_run_summary_says_what_ran(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('duration_s = 2.0\n[queue]\nkind = "dualpi2"\n', encoding="utf-8")
    proc = cli("run", f, "--out", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "TCP: linux-cubic"
    assert lines[2] == "queue: dualpi2"
    assert lines[3].startswith("note: dualpi2 marks ECN-capable packets")
