"""Packet captures against Wireshark's dissector: a capture of a short Web run decodes with no
malformed packet and good checksums, tshark's TCP analysis counts as many retransmissions as
the connections table records and as many duplicate ACKs as the segment trace holds. Needs
tshark (`make test` installs it where it can, like Chromium; AQMLAB_TSHARK names another
binary); skipped with the reason otherwise."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import polars as pl
import pytest

from aqmlab.runs.runner import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TSHARK = os.environ.get("AQMLAB_TSHARK") or shutil.which("tshark")

pytestmark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (make test installs it when root)"
)

# Every flavour tshark gives a segment sent again: it calls a retransmission "out of order"
# when it follows the highest segment within its reordering threshold (3 ms), and the model's
# FIFO paths never reorder packets, so those are retransmissions too.
RETRANSMITTED = (
    "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || "
    "tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order"
)
CHECKS = [
    "-o", "ip.check_checksum:TRUE",
    "-o", "tcp.check_checksum:TRUE",
    "-o", "udp.check_checksum:TRUE",
]  # fmt: skip


def tshark_count(path: Path, display_filter: str) -> int:
    out = subprocess.run(
        [TSHARK, "-n", "-r", str(path), *CHECKS, "-Y", display_filter, "-T", "fields",
         "-e", "frame.number"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    return sum(1 for line in out.splitlines() if line.strip())


def records(data: bytes) -> list[tuple[int, bytes]]:
    """A nanosecond pcap's records as (time in ns, record bytes with its header)."""
    assert data[:4] == struct.pack("<I", 0xA1B23C4D), "nanosecond pcap magic"
    out, i = [], 24
    while i < len(data):
        sec, nsec, incl, _orig = struct.unpack_from("<IIII", data, i)
        out.append((sec * 10**9 + nsec, data[i : i + 16 + incl]))
        i += 16 + incl
    assert i == len(data), "records end exactly at the end of the file"
    return out


def merge(paths: list[Path], out: Path) -> int:
    """The captures' records in time order (stable) in one file; returns the count."""
    datas = [p.read_bytes() for p in paths]
    recs = sorted((r for d in datas for r in records(d)), key=lambda r: r[0])
    out.write_bytes(datas[0][:24] + b"".join(r for _, r in recs))
    return len(recs)


def retransmits_by_connection(results) -> dict[int, int]:
    """The connections table's retransmissions (data, SYN, FIN) of each connection that closed
    more than 5 s before the end of the run: when the run stops, a connection's last packets
    (a FIN sent again just before the peer's ACK came) may still be between its host and the
    capture point, where its delay box holds them up to a few seconds (PackMime's RTTs)."""
    end = results.summary["scenario"]["duration_s"]
    c = results.connections.filter(pl.col("closed_s") < end - 5.0)
    n = c["data_retransmits"] + c["syn_retransmits"] + c["fin_retransmits"]
    return dict(zip(c["conn_id"].to_list(), n.to_list(), strict=True))


SYN, FIN, RST = 0x02, 0x01, 0x04


def dupacks_by_connection(results) -> dict[int, int]:
    """Duplicate ACKs in the segment trace, by Wireshark's definition (packet-tcp.c,
    `tcp_analyze_sequence_number`): a segment without payload, SYN, FIN or RST whose ACK
    equals the previous segment's from the same side, whose sequence number is that side's
    next, and whose window is the previous one's. The window is constant here but for the
    SYN's: a SYN's field is never scaled (RFC 7323 §2.2), so where the window needs a scale
    (rwnd over 65,535 bytes) the segment right after a SYN is a window update, not a
    duplicate; without scaling the SYN's window is the same and Wireshark may count it."""
    scaled = results.summary["scenario"]["tcp"]["rwnd"] > 0xFFFF
    s = results.segments.with_row_index("i").sort(["conn", "side", "i"])
    syn_fin = ((pl.col("flags") & SYN) > 0).cast(pl.UInt64) + ((pl.col("flags") & FIN) > 0).cast(
        pl.UInt64
    )
    s = s.with_columns((pl.col("seq") + pl.col("len") + syn_fin).alias("end"))
    by = ["conn", "side"]
    s = s.with_columns(
        pl.col("ack").shift(1).over(by).alias("prev_ack"),
        pl.col("end").cum_max().shift(1).over(by).alias("nextseq"),
        pl.col("flags").shift(1).over(by).alias("prev_flags"),
    )
    dup = (
        s.filter(
            (pl.col("len") == 0)
            & ((pl.col("flags") & (SYN | FIN | RST)) == 0)
            & (pl.col("ack") == pl.col("prev_ack"))
            & (pl.col("seq") == pl.col("nextseq"))
            & (((pl.col("prev_flags") & SYN) == 0) | (not scaled))
        )
        .group_by("conn")
        .len()
    )
    return dict(zip(dup["conn"].to_list(), dup["len"].to_list(), strict=True))


def tshark_by_connection(path: Path, display_filter: str) -> dict[int, int]:
    """tshark's frames matching the filter, per connection id (the client port is 1024 + id
    for the first 64512 connections, the server port 80: docs/tracing.md)."""
    out = subprocess.run(
        [TSHARK, "-n", "-r", str(path), "-Y", display_filter, "-T", "fields",
         "-e", "tcp.srcport", "-e", "tcp.dstport"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    counts: dict[int, int] = {}
    for line in out.splitlines():
        src, dst = (int(x) for x in line.split())
        conn = (dst if src == 80 else src) - 1024
        counts[conn] = counts.get(conn, 0) + 1
    return counts


def traced_web_run(tmp_path: Path, overrides: list[str]):
    """Both bottleneck ingress points: every packet sent crosses exactly one of them, and is
    seen there before any drop."""
    return run(
        EXAMPLES / "web" / "packmime.toml",
        out=tmp_path / "run",
        overrides=[
            "duration_s=25",
            "warmup_s=0",
            "queue.limit=25",
            "traffic[0].rate=110",
            "traffic[1].rate=110",
            'trace.pcap=[{point = "forward_in"}, {point = "reverse_in"}]',
            "trace.tcp={}",  # every segment sent, for the duplicate ACKs
            *overrides,
        ],
    )


def check_against_tshark(tmp_path: Path, results) -> None:
    files = [
        results.directory / "capture-forward_in.pcap",
        results.directory / "capture-reverse_in.pcap",
    ]
    merged = tmp_path / "both.pcap"
    n = merge(files, merged)
    assert n > 10_000
    assert tshark_count(merged, "frame") == n
    assert tshark_count(merged, "_ws.malformed") == 0
    bad = "ip.checksum.status == 0 || tcp.checksum.status == 0 || udp.checksum.status == 0"
    assert tshark_count(merged, bad) == 0
    ours = retransmits_by_connection(results)
    assert max(ours) < 64512, "client ports are unique in this run"
    theirs = tshark_by_connection(merged, RETRANSMITTED)
    got = {k: theirs.get(k, 0) for k in ours}
    assert sum(ours.values()) > 100, "the run must lose packets for the comparison to mean much"
    differ = {k: (ours[k], got[k]) for k in ours if ours[k] != got[k]}
    assert not differ, f"(ours, tshark's) retransmissions differ for connections {differ}"
    # Duplicate ACKs: from our segment records by Wireshark's definition, against its count.
    dup_ours = dupacks_by_connection(results)
    dup_theirs = tshark_by_connection(merged, "tcp.analysis.duplicate_ack")
    assert sum(dup_ours.get(k, 0) for k in ours) > 100
    differ = {
        k: (dup_ours.get(k, 0), dup_theirs.get(k, 0))
        for k in ours
        if dup_ours.get(k, 0) != dup_theirs.get(k, 0)
    }
    assert not differ, f"(ours, tshark's) duplicate ACKs differ for connections {differ}"


def test_web_capture_decodes_and_tshark_counts_our_retransmissions_and_dupacks(tmp_path):
    check_against_tshark(tmp_path, traced_web_run(tmp_path, []))


def test_linux_stack_with_ecn_sack_and_timestamps(tmp_path):
    """Linux CUBIC with SACK, timestamps and ECN through CoDel: options and ECN bits decode,
    and the counts still agree."""
    results = traced_web_run(
        tmp_path,
        ['tcp={preset = "linux-cubic", ecn = true}', 'queue={kind = "codel", ecn = true}'],
    )
    check_against_tshark(tmp_path, results)
    merged = tmp_path / "both.pcap"
    assert tshark_count(merged, "tcp.options.timestamp.tsval") > 1000
    assert tshark_count(merged, "ip.dsfield.ecn == 2") > 1000  # ECT(0) data
    assert tshark_count(merged, "tcp.flags.ece == 1") > 0  # CE echoed back


def test_egress_capture_carries_the_queue_marks_and_not_its_drops(tmp_path):
    results = run(
        EXAMPLES / "quickstart.toml",
        out=tmp_path / "q",
        overrides=[
            "duration_s=15",
            'tcp={preset = "linux-cubic", ecn = true}',
            'queue={kind = "codel", ecn = true}',
            'trace.pcap=[{point = "reverse"}, {point = "reverse_in"}]',
        ],
    )
    egress = results.directory / "capture-reverse.pcap"
    ingress = results.directory / "capture-reverse_in.pcap"
    n_out, n_in = tshark_count(egress, "frame"), tshark_count(ingress, "frame")
    # Every packet that arrived was sent, dropped, or is still queued or in service at the end.
    b = results.bottleneck.filter(pl.col("direction") == "reverse")
    drops = int(b["drops_early"].sum() + b["drops_forced"].sum() + b["drops_overflow"].sum())
    assert 0 <= n_in - n_out - drops <= 200, (n_in, n_out, drops)
    marks = int(b["marks"].sum())
    assert marks > 0
    ce = tshark_count(egress, "ip.dsfield.ecn == 3")
    assert ce == marks, f"CE at the egress {ce}, marks counted {marks}"
    assert tshark_count(ingress, "ip.dsfield.ecn == 3") == 0, "nothing marks before this queue"


def test_a_host_capture_holds_every_segment_its_host_sent_with_its_sack_blocks(tmp_path):
    """At a host, packets are captured as they are sent: its frames with a SACK option are
    exactly the segments with SACK blocks that the segment trace has for that host, with the
    same first left edges (relative to the receiving side's ISN, as Wireshark shows them)."""
    results = run(
        EXAMPLES / "quickstart.toml",
        out=tmp_path / "q",
        overrides=[
            "duration_s=15",
            'tcp={preset = "linux-cubic"}',
            'trace.pcap=[{point = "host", host = 0}]',
            "trace.tcp={}",
        ],
    )
    conns = results.connections.filter(pl.col("client_host") == 0)["conn_id"].to_list()
    segs = results.segments.filter(
        pl.col("conn").is_in(conns) & (pl.col("side") == 0) & (pl.col("sack_n") > 0)
    )
    assert segs.height > 100
    out = subprocess.run(
        [TSHARK, "-n", "-r", str(results.directory / "capture-host-0.pcap"), "-Y",
         "ip.src == 10.0.0.1 && tcp.options.sack_le", "-T", "fields", "-e", "tcp.options.sack_le"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    firsts = sorted(int(line.split(",")[0]) for line in out.splitlines())
    assert firsts == sorted(segs["sack0_start"].to_list())
