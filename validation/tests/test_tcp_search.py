"""The random loss-pattern suite's draws: fixed by their seed, distinct, inside the window the
suite means to probe, and turned into the drops the `tcp` suite's driver scripts."""

from validation.suites import tcp_search
from validation.suites.tcp import AckTarget, Target, seg


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


def test_ack_patterns_are_fixed_distinct_and_in_range() -> None:
    pats = tcp_search.ack_patterns()
    assert pats == tcp_search.ack_patterns() == sorted(pats)
    assert len(set(pats)) == tcp_search.ACK_PATTERNS
    for data, acks, _ in pats:
        assert len(data) <= 2 and all(20 <= k <= 45 for k in data)
        assert 1 <= len(acks) <= 4 and all(2 <= j < 120 for j in acks)
    assert 0 < sum(synack for *_, synack in pats) < len(pats)


def test_an_ack_pattern_becomes_its_losses() -> None:
    case = tcp_search.ack_case_of("reno", ((30,), (4, 50), True))
    assert case.drops == [Target(seg(30))]
    assert case.ack_drops == [AckTarget(synack=True), AckTarget(index=4), AckTarget(index=50)]
    assert tcp_search.describe_acks(((30,), (4, 50), True)) == (
        "the SYN-ACK, pure ACKs 4, 50, segments 30"
    )


def test_independent_losses_lose_about_p_of_what_they_name() -> None:
    pats = tcp_search.bernoulli_patterns()
    assert pats == tcp_search.bernoulli_patterns()
    assert len(pats) == tcp_search.BERNOULLI_PATTERNS
    named = lost = 0
    for size, data, acks in pats:
        segs = -(-size // tcp_search.tcp.MSS)
        assert 4 <= segs <= 150 and all(0 <= i < segs for i in data)
        assert all(0 <= j <= segs // 2 for j in acks)
        named += segs + segs // 2 + 1
        lost += len(data) + len(acks)
    assert abs(lost / named - tcp_search.BERNOULLI_P) < 0.01
    case = tcp_search.bernoulli_case_of("newreno", (3000, (0, 4), (1,)))
    assert case.drops == [Target(index=0), Target(index=4)]
    assert case.ack_drops == [AckTarget(index=1)]
