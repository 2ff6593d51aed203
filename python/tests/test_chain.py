"""Chains of bottlenecks from Python (docs/network.md, "Chains of bottlenecks"): `hop` is
pulled out of `[[traffic]]`, a chain's summary has `hops` and its tables a `hop` column, the
dumbbell's outputs have neither, and bad chain settings give one line naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli

import aqmlab
from aqmlab import scenario as sc
from aqmlab.analysis.directions import first_hop

ROOT = Path(__file__).resolve().parents[2]
PARKING_LOT = ROOT / "examples" / "chain" / "parking_lot.toml"

# Two 10 Mb/s hops, main bulk flows across both and cross flows at hop 1 (4 s simulated).
TWO_HOPS = {
    "seed": 3,
    "duration_s": 4.0,
    "warmup_s": 1.0,
    "topology": {"bottleneck_mbps": 10.0, "cross_hosts": 2, "hops": [{"delay_ms": 2.0}]},
    "queue": {"kind": "codel"},
    "traffic": [
        {"kind": "bulk", "flows": 2},
        {"kind": "bulk", "flows": 3, "hop": 1},
        {"kind": "udp_cbr", "flows": 1, "rate_mbps": 0.5, "hop": 0},
    ],
}


def test_the_loader_moves_hop_into_traffic_hop():
    s = sc.resolve(TWO_HOPS)
    assert all("hop" not in t for t in s["traffic"])
    assert s["traffic_hop"] == [None, 1, 0]
    sc.validate(s)
    assert "traffic_hop" not in sc.resolve({"duration_s": 1.0})


def test_a_chain_reports_every_hop_and_the_dumbbell_is_unchanged(tmp_path: Path):
    res = aqmlab.run(TWO_HOPS, out=tmp_path / "chain")
    hops = res.summary["summary"]["hops"]
    assert [h["hop"] for h in hops] == [0, 1]
    # Hop 1 carries the main flows and the cross flows: busier than hop 0.
    assert hops[1]["reverse"]["tx_packets"] > hops[0]["reverse"]["tx_packets"]
    for name in ("bottleneck", "queue", "queue_delay", "source_delay"):
        assert set(res[name]["hop"].unique()) == {0, 1}, name
    # The single-run plots and exports read hop 0 only.
    assert first_hop(res["queue"])["hop"].unique().to_list() == [0]
    dumbbell = dict(TWO_HOPS, topology={"bottleneck_mbps": 10.0})
    dumbbell["traffic"] = TWO_HOPS["traffic"][:1]
    plain = aqmlab.run(dumbbell, out=tmp_path / "dumbbell")
    assert "hops" not in plain.summary["summary"]
    assert "hop" not in plain["bottleneck"].columns
    assert "source_delay" not in plain.tables


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"traffic": [{"kind": "bulk", "flows": 1, "hop": 2}]},
            r"^traffic\[0\]\.hop = 2: expected a hop",
        ),
        ({"topology": {"hops": [{"mbps": 0.0}]}}, r"^topology\.hops\[0\]\.mbps = 0"),
        ({"topology": {"hops": [{}] * 8, "cross_hosts": 1}}, r"^topology\.hops = 8 entries"),
        (
            {"topology": {"hops": [{"queue": {"kind": "red", "limit": 0}}]}},
            r"^topology\.hops\[0\]\.queue",
        ),
    ],
)
def test_bad_chains_are_refused_with_one_line(change, message):
    doc = {**TWO_HOPS, **change}
    if "topology" in change:
        doc["topology"] = {**TWO_HOPS["topology"], **change["topology"]}
    with pytest.raises(sc.ScenarioError, match=message):
        sc.validate(sc.resolve(doc))


def test_validate_prints_the_chain_and_the_example_runs(tmp_path: Path):
    r = cli("validate", PARKING_LOT)
    assert r.returncode == 0, r.stderr
    assert "chain of 3 hops: hop 0 10.0 Mb/s 5.0 ms pie, hop 1 10.0 Mb/s 5.0 ms codel" in r.stdout
    assert "cross traffic: traffic[1] at hop 0, traffic[2] at hop 1" in r.stdout
    r = cli("run", PARKING_LOT, "--set", "duration_s=6", "--out", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    assert "hop 2 download (right → left)" in r.stdout
