"""Video calls (`kind = "video_call"`) through the package: the example scenario runs, its
tables reach the results, packets are conserved, the L4S call is marked in DualPI2, and RFC
7928 §7.2's metrics read the summary."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import ClassVar

import pytest

import aqmlab
from aqmlab.errors import ScenarioError
from aqmlab.rfc7928.metrics import run_metrics
from aqmlab.rfc7928.sections import NOT_EXPRESSIBLE, SECTIONS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "video" / "call_beside_download.toml"


def _scenario(**over) -> dict:
    sc = dict(tomllib.loads(EXAMPLE.read_text()), duration_s=8.0, warmup_s=2.0)
    sc.update(over)
    return sc


def test_the_example_call_conserves_packets_and_writes_its_tables(tmp_path: Path):
    res = aqmlab.run(_scenario(), out=tmp_path / "fifo")
    v = res.summary["summary"]["video_call"]
    assert v["calls"] == 1 and v["frames"] > 0
    assert v["packets_sent"] == (
        v["packets_delivered"] + v["packets_lost"] + v["packets_unresolved"]
    )
    calls, rates = res["video_calls"], res["video_rates"]
    assert calls.height == 1 and calls["controller"].to_list() == ["nada"]
    # One rate row per call and second of the 8-s run.
    assert rates.height == 8
    assert v["frame_delay_p50_ms"] <= v["frame_delay_p95_ms"] <= v["frame_delay_p99_ms"]


def test_the_l4s_call_is_marked_through_dualpi2():
    sc = _scenario(queue={"kind": "dualpi2"})
    sc["traffic"][1] = dict(sc["traffic"][1], ecn="ect1")
    v = aqmlab.run(sc).summary["summary"]["video_call"]
    assert v["ce_marked"] > 0 and v["packets_lost"] == 0


def test_a_bad_video_field_is_one_line_naming_it():
    sc = _scenario()
    sc["traffic"][1] = dict(sc["traffic"][1], controller="none")
    with pytest.raises(ScenarioError, match=r"traffic\[1\]\.rate_mbps"):
        aqmlab.run(sc)


def test_rfc7928_video_section_reads_the_frame_metrics():
    assert any(s.key == "video" and s.rfc == "7.2" for s in SECTIONS)
    assert not any("video" in k for k, _ in NOT_EXPRESSIBLE)

    class Res:
        summary: ClassVar[dict] = {
            "summary": {
                "measured_s": 10.0,
                "forward": {"arrivals": 100, "drops_overflow": 1, "utilization": 0.9},
                "video_call": {
                    "calls": 2,
                    "receive_mbps": 1.5,
                    "frame_delay_p95_ms": 40.0,
                    "frame_delay_p99_ms": 60.0,
                    "frames_delivered": 90,
                    "frames_lost": 10,
                    "freeze_ratio": 0.2,
                },
            }
        }

        def __getitem__(self, name):
            raise KeyError(name)

    m = run_metrics(Res(), {"traffic": []})
    assert m["video_mbps"] == 3.0 and m["goodput_mbps"] == 3.0
    assert m["video_frame_delay_p95_ms"] == 40.0
    assert math.isclose(m["video_frame_loss"], 0.1)
    assert m["video_freeze_ratio"] == 0.2


def _pcap_records(path: Path) -> int:
    """Packets in a classic pcap file: the 24-byte header, then a 16-byte header per record."""
    import struct

    data, n, at = path.read_bytes(), 0, 24
    while at + 16 <= len(data):
        (incl,) = struct.unpack_from("<I", data, at + 8)
        at += 16 + incl
        n += 1
    return n


def test_captures_hold_the_calls_packets(tmp_path: Path):
    """A capture at the bottleneck's egress records every packet the queue sent, the call's
    media and feedback included (a fuzzer found them missing: 0 captured of 8 sent)."""
    sc = _scenario(trace={"pcap": [{"point": "forward"}, {"point": "reverse"}]})
    res = aqmlab.run(sc, out=tmp_path / "cap")
    s = res.summary["summary"]
    for d in ("forward", "reverse"):
        got = _pcap_records(tmp_path / "cap" / f"capture-{d}.pcap")
        assert got == s[f"qdisc_{d}"]["sent_packets"] > 0, d
