"""Reading a packmime_e2e.tcl run's recorded workload (ns2_record.py) from files written the
way ns-2.35 writes them (packmime_HTTP.cc, delaybox.cc), and the paired interval of the
replay rows (sims.interval_of)."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from aqmlab.scenario.load import resolve
from validation import ns2_record, sims
from validation.suites import e2e

# Instance 0 (_o74) opens flows 0 and 1, instance 1 (_o79) its flow 0 (id 100000000). Server
# apps are pooled: _o98 serves instance 0's flow 1 after having served nothing of instance 1.
DEBUG = """\
Created FlowArrive RNG and RV
PackMimeHTTP _o74> new flow 0  total active: 1 at 0.000000
\tflow 0 created new ServerApp _o90 (0 in pool, 1 active)
\tnext connection scheduled in 0.002 s
PackMimeHTTP _o79> new flow 0  total active: 1 at 0.000000
\tflow 0 created new ServerApp _o94 (0 in pool, 1 active)
PackMimeHTTP _o74> new flow 1  total active: 2 at 0.002341
\tflow 1 got ServerApp _o98 (0 in pool, 2 active)
server _o98 (1)> waiting 0.001357 s before responding at 0.013774
server _o94 (0)> waiting 0.250000 s before responding at 0.020000
server _o90 (0)> waiting 0.000798 s before responding at 0.103793
something ns-2 printed that is not PackMime's
"""
FILES = {
    "conn0.txt": "0 0.000000000\n1 0.002341046\n",
    "conn1.txt": "100000000 0.000000000\n",
    "samples0.txt": "0.000000    350        12022      1.0     \n0.002341    517  721  1.2\n",
    "samples1.txt": "0.000000    40         0          0.1     \n",
    # db0: instance 0's client box and instance 1's server box; flow 1 never reached db1.
    "delays0.txt": "0   1   0       20.026 ms\n1   0   0       20.026 ms\n"
    "0   1   1        0.313 ms\n1   0   100000000    3.000 ms\n",
    "delays1.txt": "0   1   0        1.000 ms\n1   0   100000000   26.655 ms\n",
}


def write_run(d: Path) -> Path:
    for name, text in FILES.items():
        (d / name).write_text(text)
    (d / "ns.log").write_text(DEBUG)
    return d


def test_each_connection_gets_its_sizes_delays_and_boxes(tmp_path: Path):
    rec = ns2_record.read(write_run(tmp_path))
    c0, c1 = rec.columns
    assert c0["start_s"] == [0.0, 0.002341046]
    assert c0["request_bytes"] == [350, 517] and c0["response_bytes"] == [12022, 721]
    assert c0["server_delay_s"] == [0.000798, 0.001357]
    # RTT: twice the sum of the two boxes' one-way delays; the client box's part.
    assert c0["rtt_ms"] == pytest.approx([2 * (20.026 + 1.0), 2 * 0.313])
    assert c0["client_rtt_ms"] == pytest.approx([2 * 20.026, 2 * 0.313])
    assert c1["response_bytes"] == [1], "a 0-byte response is 1 byte, as PackMime sends"
    assert c1["server_delay_s"] == [0.25]
    assert c1["rtt_ms"] == pytest.approx([2 * (26.655 + 3.0)])
    assert c1["client_rtt_ms"] == pytest.approx([2 * 26.655])
    assert (rec.missing_box, rec.missing_server_delay) == (1, 0)


def test_pack_writes_replay_files_the_scenario_loader_reads(tmp_path: Path):
    d = write_run(tmp_path)
    ns2_record.pack(d)
    assert not any((d / name).exists() for name in ns2_record.RAW)
    assert (d / "ns.log").read_text() == "something ns-2 printed that is not PackMime's\n"
    csv = pl.read_csv(d / "replay0.csv")
    assert csv.columns == list(ns2_record.COLUMNS) and csv.height == 2
    # The e2e suite's replay scenario resolves and validates with these files.
    v = e2e.VARIANTS[0]
    doc = resolve(e2e._replay_ours(v, 1, e2e.anchor_doc(v), d))
    t = doc["traffic"]
    assert [x["client_side"] for x in t] == ["left", "right"]
    assert t[0]["connections"]["rtt_ms"] == pytest.approx([42.052, 0.626])
    assert "sha256" in t[0]["source"]
    assert doc["delay_box"]["placement"] == "boxes"


def test_a_count_mismatch_is_refused(tmp_path: Path):
    d = write_run(tmp_path)
    (d / "samples1.txt").write_text("")
    with pytest.raises(ValueError, match="1 connections but 0 requests"):
        ns2_record.read(d)


def test_paired_interval_is_that_of_the_differences():
    ns = [1.0, 2.0, 3.0, 4.0]
    ours = [1.1, 2.1, 3.1, 4.1]  # the same offset on every seed: no spread
    assert sims.interval_of(ns, ours, "rel", 2.5, paired=True) == pytest.approx(0.0, abs=1e-12)
    assert sims.interval_of(ns, ours, "rel", 2.5) > 0.5  # unpaired: the seeds' spread
    assert math.isnan(sims.interval_of([1.0], [1.0], "rel", 1.0, paired=True))
