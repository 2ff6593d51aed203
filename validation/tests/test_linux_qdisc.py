"""The linux_qdisc suite's parts: schedules, the log comparison, and one kernel harness run
by hand (skipped, with its reason, where Debian's linux-source package is missing)."""

from __future__ import annotations

import json

import pytest

from aqmlab import _core
from validation.linux_qdisc import compare, kernel, schedule


def test_schedules_are_deterministic_and_ordered():
    a = schedule.generate("web", seed=3, seconds=1.0)
    b = schedule.generate("web", seed=3, seconds=1.0)
    assert a.kinds == b.kinds and a.times_ns == b.times_ns and a.words == b.words
    assert a.times_ns == sorted(a.times_ns)
    assert set(a.kinds) == {"E", "D"}
    c = schedule.generate("web", seed=4, seconds=1.0)
    assert c.times_ns != a.times_ns


def test_ticks_follow_the_given_instants():
    s = schedule.generate(
        "cbr", seed=1, seconds=0.6, tick_first_ns=500_000_000, tick_period_ns=15_000_000
    )
    ticks = [t for k, t in zip(s.kinds, s.times_ns, strict=True) if k == "T"]
    assert ticks == [500_000_000 + 15_000_000 * i for i in range(7)]


def test_every_pattern_has_arrivals_of_each_codepoint():
    for p in schedule.PATTERNS:
        s = schedule.generate(p, seed=1, seconds=3.0)
        ds = {d for k, d in zip(s.kinds, s.ds, strict=True) if k == "E"}
        assert {0, 1, 2} <= ds, (p, ds)


def test_harness_text_format():
    s = schedule.Schedule("x", ["E", "D", "T"], [5, 6, 7], [100, 0, 0], [2, 0, 0], [9, 0, 0])
    assert s.harness_text({"limit": 3}) == "A limit 3\nE 5 100 2 9\nD 6\nT 7\n"


def test_compare_logs_counts_decisions_and_state_keys():
    case = compare.Case("c", "codel", "cbr", {}, {})
    kern = ["e 0 ok | qlen=1 a=1 k=5", "d 0 | qlen=0 a=2 k=5", "d - | qlen=0 a=2 k=6"]
    ours = ["e 0 ok | qlen=1 a=1", "d 0 ce | qlen=0 a=3", "d - | qlen=0 a=2"]
    r = compare.compare_logs(case, kern, ours)
    assert (r.events, r.decision_diffs, r.state_lines_differing) == (3, 1, 1)
    assert r.first_decision_diff == "event 1: kernel `d 0`, ours `d 0 ce`"
    assert r.state_keys == ["a", "qlen"] and r.kernel_only == ["k"]
    assert r.key_diffs == {"a": 1}


def _kernel_or_skip():
    try:
        kernel.tarball()
    except kernel.KernelSourceMissing as e:
        pytest.skip(str(e))


def test_kernel_codel_by_hand(tmp_path):
    """A 2-packet CoDel: the third arrival is dropped at the tail; the link then takes the two
    queued packets and finds the queue empty. Both the kernel and our replay say so."""
    _kernel_or_skip()
    s = schedule.Schedule(
        "hand",
        ["E", "E", "E", "D", "D", "D"],
        [0, 0, 0, 1_000_000, 2_000_000, 3_000_000],
        [1000] * 3 + [0] * 3,
        [0, 2, 0, 0, 0, 0],
        [1] * 3 + [0] * 3,
    )
    kern = kernel.run("codel", s.harness_text({"limit": 2}), b"", tmp_path)
    decisions = [line.split(" | ")[0] for line in kern]
    assert decisions == ["e 0 ok", "e 1 ok", "e 2 drop", "d 0", "d 1", "d -"]
    assert "drop_overlimit=1" in kern[2] and "qlen=2 backlog=2000 drops=1" in kern[2]
    ours = _core.replay_schedule(
        json.dumps({"kind": "codel", "limit": 2, "mtu": 1514}),
        10e6,
        1000,
        "".join(s.kinds),
        s.times_ns,
        s.sizes,
        s.ds,
        s.hashes,
        [],
        "u32",
    )
    assert (
        compare.compare_logs(compare.Case("hand", "codel", "", {}, {}), kern, ours).decision_diffs
        == 0
    )
