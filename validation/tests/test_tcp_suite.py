"""The TCP suite's reader of ns-2 traces and its comparison rules, on hand-written lines."""

from pathlib import Path

import pytest

from validation.suites import tcp


def _line(t: float, src: int, size: int, seq: int, ack: int, tflags: int, flags="-------"):
    kind = "tcp" if src == 0 else "ack"
    hdr = 40
    state = "3.5 20 2 20" if src == 0 else "3.5 20 2.5 10"
    return (
        f" + {t:.6f} {src} {1 if src == 0 else 2} {kind} {size} {flags} 0 0.0 3.0 {seq} 7 "
        f"{ack} {tflags:#x} {hdr} 0  | {t!r} | {state}\n"
    )


def test_reader_sides_flags_and_the_senders_window(tmp_path: Path) -> None:
    tr = tmp_path / "events.tr"
    tr.write_text(
        _line(0.0, 0, 40, 0, -1, 0x02)  # client SYN
        + _line(0.02, 3, 40, 0, 1, 0x12)  # server SYN-ACK
        + _line(0.05, 0, 576, 1, 1, 0x10, "---A--N")  # data with ns-2's CWR flag (A)
        + _line(0.07, 3, 40, 1, 537, 0x18, "----E--")  # ACK echoing congestion (E)
    )
    segs = tcp._read_ns2(tr)
    assert [s.side for s in segs] == [0, 1, 0, 1]
    assert [s.len for s in segs] == [0, 0, 536, 0]
    assert segs[0].flags == tcp.SYN and segs[1].flags == tcp.SYN
    assert segs[2].flags == tcp.CWR and segs[3].flags == tcp.ECE
    # Each segment carries its sender's variables: the client's, then the server's.
    assert (segs[2].cwnd, segs[2].ssthresh) == (3.5, 20)
    assert (segs[3].cwnd, segs[3].ssthresh) == (2.5, 10)
    # Index among the client's packets: SYN 0, the data at 1 is 1, its retransmission 2.
    again = [*tcp._read_ns2(tr), tcp.Seg(0.3, 0, 1, 1, 536, 0, 1.0, 2.0)]
    assert tcp._index_of(again, tcp.Target(1)) == 1
    assert tcp._index_of(again, tcp.Target(1, 2)) == 2
    assert tcp._index_of(again, tcp.Target(0, syn=True)) == 0
    assert tcp._index_of(again, tcp.Target(1, 3)) is None


def test_comparison_flags_a_difference_and_skips_only_what_it_documents() -> None:
    a = [
        tcp.Seg(0.0, 0, 0, -1, 0, tcp.SYN, 1.0, 20.0),
        tcp.Seg(0.1, 0, 1, 1, 536, 0, 2.0, 20.0),
        tcp.Seg(0.2, 0, 537, 1, 536, tcp.CWR, 3.0, 20.0),
        tcp.Seg(0.3, 0, 1, 1, 536, 0, 9.0, 2.0),  # a retransmission: window not compared
    ]
    b = [
        tcp.Seg(0.0, 0, 0, 0, 0, tcp.SYN, 2.0, 20.0),  # SYN: ack and window not compared
        tcp.Seg(0.1, 0, 1, 1, 536, 0, 2.0, 20.0),
        tcp.Seg(0.2, 0, 537, 1, 536, 0, 3.0, 20.0),
        tcp.Seg(0.3, 0, 1, 1, 536, 0, 4.0, 2.0),
    ]
    case = tcp.Case("t", "test", "newreno", 1000)
    rows = {r.metric.split(",")[0]: r for r in tcp._compare(case, a, b) if "client" in r.metric}
    assert all(r.passed for r in rows.values()), rows  # CWR without ECN is ns-2's trace flag
    ecn = tcp.Case("t", "test", "newreno", 1000, ecn=True)
    bad = [r for r in tcp._compare(ecn, a, b) if not r.passed]
    assert [r.metric for r in bad] == ["client segments identical (seq, ack, len, flags)"]
    assert bad[0].difference == 2.0  # segments 2 and 3 are outside the identical prefix
    late = [*b[:3], tcp.Seg(0.3 + 1e-6, 0, 1, 1, 536, 0, 4.0, 2.0)]
    slow = [r for r in tcp._compare(case, a, late) if not r.passed]
    assert [r.metric.split(",")[0] for r in slow] == ["client send times"]


def test_an_ack_is_found_by_number_and_place_or_by_index() -> None:
    def seg(t, side, ack, length=0, flags=0):
        return tcp.Seg(t, side, 1, ack, length, flags, 2.0, 20.0)

    segs = [
        seg(0.0, 1, 1, flags=tcp.SYN),  # the SYN-ACK: server packet 0
        seg(0.1, 1, 537),  # pure ACK 0
        seg(0.2, 0, 1, 536),  # a client segment: not counted
        seg(0.3, 1, 537),  # pure ACK 1, the first duplicate of 537
        seg(0.4, 1, 1073, flags=tcp.FIN),  # a FIN: not a pure ACK
        seg(0.5, 1, 1609),  # pure ACK 2
    ]
    assert tcp._index_of(segs, tcp.AckTarget(537, 2)) == 2
    assert tcp._index_of(segs, tcp.AckTarget(synack=True)) == 0
    assert tcp._index_of(segs, tcp.AckTarget(1073)) is None
    assert tcp._resolve(segs, tcp.AckTarget(index=1)) == tcp.AckTarget(537, 2)
    assert tcp._resolve(segs, tcp.AckTarget(index=2)) == tcp.AckTarget(1609, 1)
    with pytest.raises(tcp.NotSent):
        tcp._resolve(segs, tcp.AckTarget(index=3))


def test_a_data_segment_is_found_by_index_as_its_sequence_and_transmission() -> None:
    def seg(t, side, seq, length):
        return tcp.Seg(t, side, seq, 1, length, 0, 2.0, 20.0)

    segs = [
        seg(0.0, 0, 1, 536),  # data 0
        seg(0.1, 1, 1, 0),  # the server: not counted
        seg(0.2, 0, 537, 536),  # data 1
        seg(0.3, 0, 537, 0),  # a pure ACK of the client: not data
        seg(0.4, 0, 1, 536),  # data 2: segment 1 again
    ]
    assert tcp._resolve(segs, tcp.Target(index=2)) == tcp.Target(1, 2)
    assert tcp._resolve(segs, tcp.Target(index=1)) == tcp.Target(537, 1)
    assert tcp._resolve(segs, tcp.Target(12, 1)) == tcp.Target(12, 1)
    with pytest.raises(tcp.NotSent):
        tcp._resolve(segs, tcp.Target(index=3))
