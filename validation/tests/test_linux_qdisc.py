"""The linux_qdisc suite's parts: schedules, the log comparison, and one kernel harness run
by hand (skipped, with its reason, where Debian's linux-source package is missing)."""

from __future__ import annotations

import json

import pytest

from aqmlab import _core
from validation.linux_qdisc import compare, fixture, kernel, schedule


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


# ---- DualPI2: the kernel's logs from the committed fixture (the source is rarely here) ----


def _dualpi2_cases() -> list[compare.Case]:
    from validation.suites import linux_qdisc

    return [c for c, _ in linux_qdisc.CASES if c.qdisc == "dualpi2"]


def test_dualpi2_source_missing_is_one_line(monkeypatch):
    monkeypatch.delenv("AQMLAB_DUALPI2_SOURCE", raising=False)
    with pytest.raises(kernel.KernelSourceMissing) as e:
        kernel.source_dir("dualpi2")
    assert "\n" not in str(e.value) and "AQMLAB_DUALPI2_SOURCE" in str(e.value)
    monkeypatch.setenv("AQMLAB_DUALPI2_SOURCE", "/nonexistent")
    with pytest.raises(kernel.KernelSourceMissing, match=r"missing net/sched/sch_dualpi2\.c"):
        kernel.source_dir("dualpi2")


def test_dualpi2_fixture_has_every_case_and_its_provenance():
    stored = fixture.load("dualpi2")
    for case in _dualpi2_cases():
        log = fixture.kernel_log(case, stored)
        assert len(log) > 5000 and log[-1].startswith(("e ", "d ", "t"))
    info = fixture.meta("dualpi2")
    assert info["source"]["file"] == "net/sched/sch_dualpi2.c"
    assert len(info["source"]["git_blob"]) == 40 and info["source"]["upstream"] != "unknown"
    assert fixture.path("dualpi2").stat().st_size < 2_000_000
    # A case made for other parameters has no log: the fixture must be regenerated.
    other = compare.Case("x", "dualpi2", "cbr", {"limit": 7}, {}, tick_period_ns=16_000_000)
    with pytest.raises(fixture.FixtureMismatch, match="regenerate"):
        fixture.kernel_log(other, stored)


def test_dualpi2_fixture_log_shows_what_the_cases_exercise():
    """The stored kernel logs reach what the cases are for: the L queue used, both queues
    busy at once, CE marks at dequeue, drops at dequeue, overload (p' at MAX_PROB), the step,
    the tail (overflow) and drops at enqueue (drop_early)."""
    logs = {c.name: fixture.kernel_log(c) for c in _dualpi2_cases()}

    def state(line):
        return dict(kv.split("=") for kv in line.split(" | ")[1].split())

    cbr = logs["dualpi2-cbr"]
    last = state(cbr[-1])
    assert int(last["packets_in_l"]) > 0 and int(last["step_marks"]) > 0
    assert any(" ce" in ln.split(" | ")[0] for ln in cbr)
    assert any(" x " in ln.split(" | ")[0] for ln in cbr)
    assert max(int(state(ln)["prob"]) for ln in cbr) == 2**32 - 1
    assert any(0 < int(state(ln)["l_qlen"]) < int(state(ln)["qlen"]) for ln in cbr)
    assert int(state(logs["dualpi2-web-overflow-limit300"][-1])["overlimits"]) > 0
    assert any(ln.startswith("e ") and " drop" in ln for ln in logs["dualpi2-manyflow-drop_early"])


def test_dualpi2_replays_from_the_fixture_without_the_source(monkeypatch, tmp_path):
    monkeypatch.delenv("AQMLAB_DUALPI2_SOURCE", raising=False)
    case = next(c for c in _dualpi2_cases() if c.name == "dualpi2-cbr")
    res = compare.run_case(case, tmp_path)
    assert res.from_fixture and res.fixture_current is None
    assert (res.decision_diffs, res.state_lines_differing) == (0, 0)
    assert res.kernel_only == [] and "prob" in res.state_keys and "credit" in res.state_keys


def test_dualpi2_fixture_is_current_where_the_source_is(monkeypatch, tmp_path):
    """With the source the harness runs too: the stored log must be what it writes, and a
    changed stored log is reported stale."""
    try:
        kernel.source_dir("dualpi2")
    except kernel.KernelSourceMissing as e:
        pytest.skip(str(e))
    case = next(c for c in _dualpi2_cases() if c.name == "dualpi2-cbr")
    assert compare.run_case(case, tmp_path).fixture_current is True
    stored = fixture.load("dualpi2")
    for rec in stored:
        rec["kernel"] = [*rec["kernel"][:-1], "d - | qlen=0"]
    monkeypatch.setattr(fixture, "load", lambda qdisc: stored)
    assert compare.run_case(case, tmp_path).fixture_current is False


def test_kernel_red_by_hand(tmp_path):
    """sch_red with min 3000, max 6000 B, avpkt 1000, burst 3 (tc: Wlog 1, as
    1 ≤ (1 − 0.5³)/0.5), a 4500-B bfifo. Four 1000-B arrivals: qavg (point at 1 bit) 0, 1000,
    2500, 4250 (below min = 6000); the fifth, 4000 B queued: 4250 + 4000 − 2125 = 6125, in
    range: qcount 0 draws qR = 123456789 / ⌊85899345/3000⌋ = 4311, then the bfifo refuses it
    (pdrop). The link takes the four and finds the queue empty at 8 ms: the idle period
    starts there. Both the kernel and our replay say so."""
    _kernel_or_skip()
    from validation.suites.linux_qdisc import red_attrs

    ours = {"kind": "red_linux", "limit": 4500, "min": 3000, "max": 6000, "avpkt": 1000}
    ours["burst"] = 3
    attrs = red_attrs(ours)
    assert (attrs["Wlog"], attrs["max_P"]) == (1, 85_899_345)
    kinds = ["E"] * 5 + ["D"] * 5
    times = [1000, 2000, 3000, 4000, 5000, 6_000_000, 6_500_000, 7_000_000, 7_500_000, 8_000_000]
    s = schedule.Schedule("hand", kinds, times, [1000] * 5 + [0] * 5, [0] * 10, [1] * 10)
    words = [123_456_789]
    s.words = words
    kern = kernel.run("red", s.harness_text(attrs), s.words_bytes(), tmp_path)
    decisions = [line.split(" | ")[0] for line in kern]
    arrivals = ["e 0 ok", "e 1 ok", "e 2 ok", "e 3 ok", "e 4 drop"]
    assert decisions == [*arrivals, "d 0", "d 1", "d 2", "d 3", "d -"]
    assert [line.split("qavg=")[1].split()[0] for line in kern[:5]] == [
        "0",
        "1000",
        "2500",
        "4250",
        "6125",
    ]
    assert "qcount=0 qR=4311" in kern[4] and "pdrop=1" in kern[4], kern[4]
    assert "qidlestart=8000000" in kern[9], kern[9]
    got = _core.replay_schedule(
        json.dumps(ours), 10e6, 1000, "".join(kinds), times, s.sizes, s.ds, s.hashes, words, "u32"
    )
    res = compare.compare_logs(compare.Case("hand", "red", "", {}, {}), kern, got)
    assert (res.decision_diffs, res.state_lines_differing) == (0, 0)
    assert "qavg" in res.state_keys and "max_P" in res.state_keys
