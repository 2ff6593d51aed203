"""Packet captures against Wireshark's dissector: a capture of a short Web run decodes with no
malformed packet and good checksums, and tshark's TCP analysis counts as many retransmissions
as the connections table records. Needs tshark (`make test` installs it where it can, like
Chromium; AQMLAB_TSHARK names another binary); skipped with the reason otherwise."""

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


def retransmits(results) -> int:
    c = results.connections
    return int(
        c["data_retransmits"].sum() + c["syn_retransmits"].sum() + c["fin_retransmits"].sum()
    )


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
            *overrides,
        ],
    )


def check_against_tshark(tmp_path: Path, results) -> tuple[int, int]:
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
    got = tshark_count(merged, RETRANSMITTED)
    return got, retransmits(results)


def test_web_capture_decodes_and_tshark_counts_our_retransmissions(tmp_path):
    results = traced_web_run(tmp_path, [])
    got, ours = check_against_tshark(tmp_path, results)
    assert ours > 100, "the run must lose packets for the comparison to mean something"
    assert got == ours, f"tshark: {got} retransmissions, connections table: {ours}"


def test_linux_stack_with_ecn_sack_and_timestamps(tmp_path):
    """Linux CUBIC with SACK, timestamps and ECN through CoDel: options and ECN bits decode,
    and the counts still agree."""
    results = traced_web_run(
        tmp_path,
        ['tcp={preset = "linux-cubic", ecn = true}', 'queue={kind = "codel", ecn = true}'],
    )
    got, ours = check_against_tshark(tmp_path, results)
    assert got == ours, f"tshark: {got} retransmissions, connections table: {ours}"
    merged = tmp_path / "both.pcap"
    assert tshark_count(merged, "tcp.options.timestamp.tsval") > 1000
    assert tshark_count(merged, "tcp.options.sack_le") > 0
    assert tshark_count(merged, "ip.dsfield.ecn == 3") > 0  # CE marks (forward_in: before
    # the queue only marks from the other direction's... see the egress test)


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
