"""A recorded workload replayed (`[[traffic]] kind = "replay"`, docs/scenario.md) and ns-2's
DelayBox geometry (`[delay_box] placement = "boxes"`, docs/network.md), run as a user runs
them: a CSV file, the CLI, its tables and a capture, against hand-computed values."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl
import pytest
from conftest import cli, write_scenario

SCENARIO = """\
duration_s = 3.0
warmup_s = 0.0

[topology]
bottleneck_mbps = 10.0
bottleneck_delay_ms = 1.0
access_mbps = 100.0
access_delay_ms = 1.0
access_queue_packets = 1000
left_hosts = 2
right_hosts = 1

[queue]
kind = "droptail"
limit = 100

[tcp]
preset = "ns2.35-fulltcp"

[delay_box]
placement = "{placement}"

[[traffic]]
kind = "replay"
file = "connections.csv"
"""

ROWS = """\
# a comment line
start_s,request_bytes,response_bytes,server_delay_s,rtt_ms,client_rtt_ms
0.100,300,20000,0.010,40.0,30.0
0.500,200,1,0,10.0,5.0
0.500,100,5000,0.25,0,0
"""


def run(tmp_path: Path, placement: str, rows: str = ROWS, *extra: str):
    (tmp_path / "connections.csv").write_text(rows)
    scenario = write_scenario(tmp_path, SCENARIO.replace("{placement}", placement))
    out = tmp_path / f"r-{placement}"
    proc = cli("run", scenario, "--out", out, "-q", *extra)
    return proc, out


def test_each_row_becomes_its_connection(tmp_path: Path):
    proc, out = run(tmp_path, "split")
    assert proc.returncode == 0, proc.stderr
    ex = pl.read_parquet(out / "exchanges.parquet").sort("start_s", "request_bytes")
    assert ex["start_s"].to_list() == pytest.approx([0.1, 0.5, 0.5])
    assert ex["request_bytes"].to_list() == [300, 100, 200]
    assert ex["response_bytes"].to_list() == [20000, 5000, 1]
    assert ex["completed"].all()
    # Base RTT: the row's extra RTT plus the path's propagation (2 × (1 + 1 + 1) ms).
    assert ex["base_rtt_ms"].to_list() == pytest.approx([46.0, 6.0, 16.0])
    # The server's 0.25 s delay is in the response time: the lone 5000-byte exchange takes
    # at least handshake + request + delay + response (three RTTs of 6 ms at least).
    slow = ex.filter(pl.col("response_bytes") == 5000)
    assert 0.25 + 3 * 0.006 < slow["response_time_s"][0] < 0.25 + 0.1
    # Hosts go round: the two clients on the left are both used.
    conns = pl.read_parquet(out / "connections.parquet")
    assert sorted(conns["client_host"].to_list()) == [0, 0, 1]


def pcap_times(data: bytes, flag: int) -> list[float]:
    """Times of the packets whose TCP flags include `flag` in a raw-IPv4 nanosecond pcap."""
    out, i = [], 24
    while i < len(data):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", data, i)
        p = data[i + 16 : i + 16 + incl]
        ihl = (p[0] & 15) * 4
        if p[ihl + 13] & flag == flag:
            out.append(sec + nsec * 1e-9)
        i += 16 + incl
    return out


@pytest.mark.parametrize(
    ("placement", "before_ms", "between_ms"),
    [("boxes", 15.0, 10.0), ("split", 20.0, 20.0)],
)
def test_boxes_delay_each_side_by_its_own_box(
    tmp_path: Path, placement: str, before_ms: float, between_ms: float
):
    """One connection, client box 30 ms and server box 10 ms of a 40 ms RTT. With boxes, the
    SYN reaches the forward queue 15 ms (one way, client box) after leaving the client's
    access link, and the SYN-ACK reaches the reverse queue 2 × 5 ms (the server's box, both
    ways) plus the path after the SYN left the forward queue. Split puts 20 ms on what each
    end sends, before the queue: 20 ms before the forward queue, 20 ms between the two."""
    rows = "start_s,request_bytes,response_bytes,rtt_ms,client_rtt_ms\n0.1,300,2000,40,30\n"
    proc, out = run(tmp_path, placement, rows, "--pcap", "forward_in", "--pcap", "reverse_in")
    assert proc.returncode == 0, proc.stderr
    syn = 0x02
    syn_in = pcap_times((out / "capture-forward_in.pcap").read_bytes(), syn)[0]
    synack_in = pcap_times((out / "capture-reverse_in.pcap").read_bytes(), syn | 0x10)[0]
    size = 40  # ns2.35-fulltcp: no options
    access, bottleneck = size * 8 / 100e6, size * 8 / 10e6
    assert syn_in == pytest.approx(0.1 + access + 0.001 + before_ms / 1e3, abs=1e-9)
    path = bottleneck + 0.001 + 2 * (access + 0.001)
    expected = syn_in + path + between_ms / 1e3
    assert synack_in == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("start_s,request_bytes\n0,1\n", "missing column response_bytes"),
        ("start_s,request_bytes,response_bytes,rtt\n0,1,1,2\n", "unknown column 'rtt'"),
        ("start_s,request_bytes,response_bytes\n0,x,1\n", "row 1: request_bytes is not an"),
        ("start_s,request_bytes,response_bytes\n0,1,1\n0,-2,1\n", "row 2: request_bytes is neg"),
        ("start_s,request_bytes,response_bytes\n1,1,1\n0.5,1,1\n", "start_s[1] = 0.5: expected"),
        ("start_s,request_bytes,response_bytes\n0,0,1\n", "request_bytes[0] = 0: expected"),
        (
            "start_s,request_bytes,response_bytes,rtt_ms,client_rtt_ms\n0,1,1,10,12\n",
            "client_rtt_ms[0] = 12: expected a number ≤ rtt_ms[0]",
        ),
        ("start_s,request_bytes,response_bytes\n", "0 rows: expected 1..="),
    ],
)
def test_bad_files_get_one_line_errors(tmp_path: Path, rows: str, message: str):
    proc, out = run(tmp_path, "split", rows)
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert err.startswith("error: traffic[0]")
    assert not out.exists(), "nothing written for a refused scenario"


def test_a_missing_file_and_a_ticked_box(tmp_path: Path):
    scenario = write_scenario(tmp_path, SCENARIO.replace("{placement}", "boxes"))
    proc = cli("run", scenario, "--out", tmp_path / "o", "-q")
    assert proc.returncode != 0 and "file not found" in proc.stderr
    (tmp_path / "connections.csv").write_text(ROWS)
    proc = cli("run", scenario, "--out", tmp_path / "o", "-q", "--set", "delay_box.tick_ms=1")
    assert proc.returncode != 0
    assert "delay_box.tick_ms = 1: expected 0 with placement" in proc.stderr


def test_client_share_puts_an_rtt_draw_on_one_box(tmp_path: Path):
    """An RTT drawn from `[rtt]` (no row value) goes to the client-side box with
    client_share = 1: 20 ms one way before the forward queue, none on the server's side."""
    text = SCENARIO.replace("{placement}", "boxes") + '\n[rtt]\nkind = "constant"\nrtt_ms = 40.0\n'
    text = text.replace('placement = "boxes"', 'placement = "boxes"\nclient_share = 1.0')
    (tmp_path / "connections.csv").write_text("start_s,request_bytes,response_bytes\n0.1,1,1\n")
    out = tmp_path / "o"
    proc = cli("run", write_scenario(tmp_path, text), "--out", out, "-q",
               "--pcap", "forward_in", "--pcap", "reverse_in")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    syn_in = pcap_times((out / "capture-forward_in.pcap").read_bytes(), 0x02)[0]
    synack_in = pcap_times((out / "capture-reverse_in.pcap").read_bytes(), 0x12)[0]
    access, bottleneck = 40 * 8 / 100e6, 40 * 8 / 10e6
    assert syn_in == pytest.approx(0.1 + access + 0.001 + 0.020, abs=1e-9)
    path = bottleneck + 0.001 + 2 * (access + 0.001)
    assert synack_in == pytest.approx(syn_in + path, abs=1e-9)
    for bad, placement in (("2", "boxes"), ("0.5", "split")):
        scenario = write_scenario(tmp_path, SCENARIO.replace("{placement}", placement))
        share = f"delay_box.client_share={bad}"
        proc = cli("run", scenario, "--out", tmp_path / "x", "-q", "--set", share)
        assert proc.returncode != 0
        assert f"delay_box.client_share = {bad}: expected a share in [0, 1]" in proc.stderr
