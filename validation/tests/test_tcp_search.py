"""The random loss-pattern suite's draws: fixed by their seed, distinct, inside the window the
suite means to probe, and turned into the drops the `tcp` suite's driver scripts."""

from validation.suites import tcp_search
from validation.suites.tcp import Target, seg


def test_patterns_are_fixed_distinct_and_in_range() -> None:
    pats = tcp_search.patterns()
    assert pats == tcp_search.patterns()  # the same draws on every run
    assert len(pats) == len(set(pats)) == tcp_search.PATTERNS
    assert pats == sorted(pats)
    for first, holes, _ in pats:
        assert first in (20, 30, 40)
        assert 2 <= len(holes) <= 5 and list(holes) == sorted(set(holes))
        assert first < holes[0] and holes[-1] <= first + 23
    assert any(lost for *_, lost in pats) and not all(lost for *_, lost in pats)
    assert tcp_search.patterns(seed=2) != pats


def test_a_pattern_becomes_its_drops() -> None:
    case = tcp_search.case_of("sack", (20, (32, 43), True))
    assert case.variant == "sack" and case.bytes == tcp_search.TRANSFER
    assert case.drops == [Target(seg(20)), Target(seg(20), 2), Target(seg(32)), Target(seg(43))]
    assert case.name == "search_sack_20_32_43_r"
    plain = tcp_search.case_of("reno", (40, (57, 62), False))
    assert plain.drops == [Target(seg(40)), Target(seg(57)), Target(seg(62))]
    assert (
        tcp_search.describe((40, (57, 62), True)) == "segment 40 (and its retransmission), 57, 62"
    )
