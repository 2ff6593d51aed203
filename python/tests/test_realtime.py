"""The real-time kinds (`voice`, `game`, `ping`) end to end: the example runs through FIFO and
FQ-CoDel, its tables read back, and the E-model scores the call from them."""

import math
from pathlib import Path

import polars as pl
import pytest

import aqmlab
from aqmlab.analysis import voice

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "realtime" / "calls_and_games.toml"
SHORT = ["duration_s=4.0", "warmup_s=1.0"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for q in ("droptail", "fq_codel"):
        d = tmp_path_factory.mktemp(q)
        over = [*SHORT] + ([] if q == "droptail" else ["queue.kind=fq_codel"])
        aqmlab.run(EXAMPLE, out=d, overrides=over)
        out[q] = d
    return out


def test_the_tables_read_back(runs):
    d = runs["droptail"]
    streams = pl.read_parquet(d / "voice_streams.parquet")
    assert streams["direction"].to_list() == ["up", "down"]
    assert set(streams["codec"]) == {"g711"}
    assert (streams["packet_bytes"] == 200).all()
    # Sent = delivered + lost + unresolved, per stream.
    assert (streams["sent"] == streams["delivered"] + streams["lost"] + streams["unresolved"]).all()
    games = pl.read_parquet(d / "game_flows.parquet")
    assert games.height == 1 and games["rtt_samples"][0] > 100
    probes = pl.read_parquet(d / "ping_probes.parquet")
    # A probe every 200 ms after the 1 s warm-up, 3 s: 15.
    assert probes.height == 15
    assert probes.columns == ["flow", "source", "seq", "t_s", "rtt_ms", "status"]
    answered = probes.filter(pl.col("status") == "answered")
    assert answered["rtt_ms"].is_finite().all()


def test_fq_codel_keeps_the_real_time_flows_fast(runs):
    s = {q: aqmlab.Results.open(d).summary["summary"] for q, d in runs.items()}
    fifo, fq = s["droptail"], s["fq_codel"]
    # Behind two CUBIC downloads the FIFO's queue grows; FQ-CoDel serves the sparse flows
    # first.
    assert fq["game"]["rtt_p99_ms"] < fifo["game"]["rtt_p99_ms"]
    assert fq["ping"]["rtt_p50_ms"] < fifo["ping"]["rtt_p50_ms"]
    assert fq["voice"]["delay_p99_ms"] < fifo["voice"]["delay_p99_ms"]


def test_the_call_is_scored(runs):
    d = runs["fq_codel"]
    m = voice.summary_metrics(aqmlab.Results.open(d).summary, d)
    assert 1.0 <= m["voice.mos"] <= 4.5
    assert m["voice.mos_min"] <= m["voice.mos_mean"] <= 4.5
    scored = voice.stream_scores(pl.read_parquet(d / "voice_streams.parquet"))
    assert not any(math.isnan(x) for x in scored["mos"])


def _udp_ports(pcap: bytes) -> list[tuple[int, int]]:
    """(source port, destination port) of each UDP/IPv4 record of a raw-IP pcap."""
    import struct

    ports, i = [], 24  # the file header
    while i + 16 <= len(pcap):
        incl = struct.unpack_from("<I", pcap, i + 8)[0]
        ip = pcap[i + 16 : i + 16 + incl]
        i += 16 + incl
        if ip and ip[0] >> 4 == 4 and ip[9] == 17:
            ihl = (ip[0] & 15) * 4
            ports.append(struct.unpack_from(">HH", ip, ihl))
    return ports


def test_a_host_capture_holds_the_real_time_packets(tmp_path):
    res = aqmlab.run(
        EXAMPLE,
        out=tmp_path / "cap",
        overrides=[
            "duration_s=1.0",
            "warmup_s=0.0",
            'trace.pcap=[{point = "host", host = 0}]',
        ],
    )
    pcap = (res.directory / "capture-host-0.pcap").read_bytes()
    dports = {d for _, d in _udp_ports(pcap)}
    # Host 0 (left) sends the call's upstream (RTP 5004), the game's commands (27015) and
    # the probes (echo, 7).
    assert {5004, 27015, 7} <= dports
