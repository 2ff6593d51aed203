"""Study C (Weigle, Jeffay, Smith 2005): the design in aqmlab/studies/C against the paper, and
`aqmlab reproduce C --scale smoke` end to end (summary tables per TCP with a row per queue
manager and load, the response-time figures, common random numbers across Reno and SACK)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from reproduce_support import axis, smoke_reproduction, table

import aqmlab
from aqmlab import scenario as sc
from aqmlab.reproduce import packmime_rtt, study_dir
from aqmlab.runs import runner

C = study_dir("C")
LOADS = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.05]  # §V.D
BDP = 74  # §V.A: packets of 1,250 bytes
QUEUES = ["DT-111q", "DT-148q", "ARED-5ms", "ARED-60ms", "ARED+ECN-5ms", "ARED+ECN-60ms"]


def sweep(name: str) -> dict:
    return sc.read_toml(C / f"{name}.toml")


def test_base_scenario_is_the_simulated_network():
    base = sc.read_toml(C / "base.toml")
    assert (base["warmup_s"], base["max_exchanges"], base["duration_s"]) == (120.0, 250_000, 2400.0)
    topo = base["topology"]
    assert (topo["bottleneck_mbps"], topo["access_mbps"]) == (10.0, 20.0)
    tcp = {**aqmlab.tcp_preset(base["tcp"]["preset"]), **base["tcp"]}
    # Table 2 and footnote 3
    assert tcp["initial_window"] == 2 and tcp["tick_ms"] == 10.0 and not tcp["delayed_ack"]
    assert (tcp["min_rto_s"], tcp["initial_rto_s"]) == (1.0, 6.0)
    assert (tcp["sack_max_blocks"], tcp["mss"], tcp["recovery"]) == (3, 1420, "reno")
    assert tcp["rwnd"] == BDP * tcp["mss"]  # send window capped at the BDP, in segments
    assert [(t["kind"], t["client_side"], t["http11"]) for t in base["traffic"]] == [
        ("packmime", "right", False),
        ("packmime", "left", False),
    ]
    # §V.D: a load is the link's utilization in each direction with both clouds active
    assert {t["load_basis"] for t in base["traffic"]} == {"two_way"}
    assert base["rtt"] == {"kind": "empirical", "file": "packmime_rtt.csv"}


def test_rtt_file_is_the_packmime_law_and_matches_the_quoted_statistics(tmp_path):
    regenerated = packmime_rtt.write_csv(tmp_path / "rtt.csv").read_text()
    assert regenerated == (C / "packmime_rtt.csv").read_text()
    pts = np.array(packmime_rtt.cdf_points())
    u = np.random.default_rng(5).random(400_000)
    rtt = np.interp(u, pts[:, 1], pts[:, 0])
    # §V.A: median 54 ms, mean 74 ms, 90th percentile 117 ms, 1 ms to 3.5 s
    assert np.median(rtt) == pytest.approx(54, rel=0.1)
    assert rtt.mean() == pytest.approx(74, rel=0.1)
    assert np.percentile(rtt, 90) == pytest.approx(117, rel=0.1)
    assert pts[-1, 0] == pytest.approx(3500) and pts[0, 0] < 1.0
    assert packmime_rtt.rtt_ms_at(0.5) == pytest.approx(57.9, abs=0.1)  # model-facts §8.3.9


def test_main_grid_is_table_1():
    doc = sweep("main")
    assert axis(doc, "tcp")["values"] == ["reno", "sack"]
    q = axis(doc, "queue")
    assert q["labels"] == QUEUES
    queues, ecn = q["zip"]["queue"], q["zip"]["tcp.ecn"]
    assert [x["limit"] for x in queues[:2]] == [round(1.5 * BDP), 2 * BDP]
    for x, with_ecn in zip(queues[2:], ecn[2:], strict=True):
        assert x["kind"] == "ared" and x["limit"] == 5 * BDP
        assert not x["queue_in_bytes"] and not x["byte_mode"] and x["mean_pkt_size"] == 1250
        # Table 3
        assert (x["alpha"], x["beta"], x["interval_s"], x["top"], x["bottom"]) == (
            0.01,
            0.9,
            0.5,
            0.5,
            0.01,
        )
        assert x["ecn"] == ("rfc3168" if with_ecn else "off")
    assert [x["target_delay_ms"] for x in queues[2:]] == [5.0, 60.0, 5.0, 60.0]
    assert ecn == [False, False, False, False, True, True]
    load = axis(doc, "load")["zip"]
    assert load["traffic.0.load"] == LOADS and load["traffic.1.load"] == LOADS


def test_ared_thresholds_resolve_as_in_table_1():
    """ns-2's automatic thresholds for 5 and 60 ms at 10 Mb/s and 1,250-byte packets are
    (5, 15) and (30, 90) (Table 1), and w_q = 1 - exp(-1/C) ≈ 0.001 (§VI.B)."""
    base = sc.read_toml(C / "base.toml")
    base["rtt"] = {"kind": "constant", "rtt_ms": 50.0}
    for t in base["traffic"]:
        del t["load"], t["load_basis"]
        t["rate"] = 5.0
    base.update(duration_s=1.0, warmup_s=0.0)
    seen = []
    for q in axis(sweep("main"), "queue")["zip"]["queue"][2:4]:
        s = copy.deepcopy(base)
        s["queue"] = q
        red = runner.run(s).summary["summary"]["queue_forward"]["params"]["red"]
        seen.append((red["min_th"], red["max_th"], round(red["w_q"], 4)))
    assert seen == [(5, 15, 0.001), (30, 90, 0.001)]


def test_red_one_way_and_uncongested_parts():
    red = axis(sweep("red"), "queue")["values"]
    assert [(q["min_th"], q["max_th"]) for q in red] == [(5, 15), (30, 90)]
    assert {(q["w_q"], q["max_p"], q["gentle"]) for q in red} == {(1 / 512, 0.1, False)}
    assert axis(sweep("red"), "load")["zip"]["traffic.0.load"] == [0.8, 0.9, 1.0]
    one = sweep("one_way")["sweep"]["set"]
    assert [t["client_side"] for t in one["traffic"]] == ["right"]
    assert one["queue"] == axis(sweep("main"), "queue")["zip"]["queue"][4] and one["tcp.ecn"]
    assert axis(sweep("one_way"), "load")["values"] == LOADS
    u = sweep("uncongested")
    assert u["sweep"]["set"]["topology.bottleneck_mbps"] == 100.0
    assert [round(v * 10, 6) for v in axis(u, "load")["zip"]["traffic.0.load"]] == LOADS


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return smoke_reproduction("C", tmp_path_factory)


def test_smoke_runs_every_part(smoke):
    outcome, _tables, _figs = smoke
    assert outcome.failed == 0 and outcome.runs == 7


def test_smoke_reno_and_sack_share_connections(smoke):
    """The calibrations of Reno and SACK (loss-free networks) give the same connection rates,
    so both see the same connections (common random numbers)."""
    outcome, _tables, _figs = smoke
    plan = json.loads((outcome.directory / "main" / "plan.json").read_text())
    rates = {}
    for r in plan["runs"]:
        rates.setdefault(r["labels"]["load"], set()).add(
            tuple(t["rate"] for t in r["scenario"]["traffic"])
        )
    assert all(len(v) == 1 for v in rates.values()), rates


def test_smoke_tables_and_figures(smoke):
    outcome, tables, figs = smoke
    for tcp in ("Reno", "SACK"):
        rows = table(tables, f"{tcp}: forward path")
        assert [(r["load"], r["queue"]) for r in rows] == [
            ("90%", "DT-148q"),
            ("90%", "ARED+ECN-5ms"),
        ]
        for r in rows:
            assert 0 < float(r["link utilization (%)"]) <= 100
            assert 0 <= float(r["flows with loss (%)"]) <= 100
    assert [r["traffic"] for r in table(tables, "Reno ARED+ECN-5ms")] == ["1-way", "2-way"]
    assert len(table(tables, "Per-connection minimum RTT")) == 2
    for num in ("02", "03", "04", "05", "06", "07", "08", "09", "11", "13", "14", "21"):
        assert any(f.startswith(f"fig-C_fig{num}") for f in figs), num
        assert list((outcome.directory / "figures").glob(f"C_fig{num}*.png")), num


def test_smoke_parts_share_one_calibration(smoke):
    """Each calibration is measured once per study (on the 10 Mb/s network of the first part
    that needs it) and reused by the later parts, the uncongested one included: its rates are
    those of the same loads at 10 Mb/s."""
    outcome, _tables, _figs = smoke
    keys = json.loads((outcome.directory / "calibration.json").read_text())["entries"]
    assert {round(c["capacity_mbps"]) for c in keys.values()} == {10}

    def rates(part: str) -> dict[str, tuple]:
        plan = json.loads((outcome.directory / part / "plan.json").read_text())
        return {
            r["labels"]["load"]: tuple(round(t["rate"], 9) for t in r["scenario"]["traffic"])
            for r in plan["runs"]
            if r["labels"].get("tcp", "Reno") == "Reno"
        }

    assert rates("uncongested") == rates("main")
