"""The L4S pack: its sweep files against l4s-tests' `l4s.batch` (the design), and the smoke
scale end to end (per-flow and per-class tables, figures, tc statistics)."""

from __future__ import annotations

from pathlib import Path

from conftest import missing_figures, table_rows
from markupsafe import escape

from aqmlab.reproduce import reproduce, scaling, study_dir, study_l4s
from aqmlab.study import Study, sweepfile

L4S_CC = "linux-prague"


def _plan(tmp_path: Path, part: str, scale: str = "full") -> list[sweepfile.PlannedRun]:
    rel = study_l4s.PARTS[part]
    derived = scaling.derive(study_dir("l4s") / rel, scale, tmp_path / f"{part}-{scale}.toml")
    return sweepfile.plan(sweepfile.read(derived), tmp_path / f"{part}-calibration.json")


def _cc(tcp: dict | None, scenario: dict) -> str:
    """Which stack a resolved per-source TCP is: Prague (the L4S preset) or CUBIC."""
    tcp = tcp or scenario["tcp"]
    return "prague" if tcp["congestion_control"] == _PRAGUE_CC else "cubic"


_PRAGUE_CC = __import__("aqmlab").tcp_preset(L4S_CC)["congestion_control"]


def test_rtt_fairness_design_is_scenario_1(tmp_path):
    """[Batch::l4s-s1-rttfair]: 2 uploads, 180 s, vs x qdisc x rtt pairs, pfifo 200/1000."""
    rtt_pairs = {(10, 10), (20, 10), (20, 20), (80, 80), (80, 20), (160, 10)}
    for part, mbps, limit in (("rttfair_10", 10.0, 200), ("rttfair_50", 50.0, 1000)):
        runs = _plan(tmp_path, part)
        assert len(runs) == 4 * 3 * 6 and all(r.error is None for r in runs)
        seen_pairs, seen_vs = set(), set()
        for r in runs:
            s = r.scenario
            assert s["duration_s"] == 180.0 and s["duration_s"] - s["warmup_s"] == 60.0
            assert s["topology"]["bottleneck_mbps"] == mbps
            assert [t["direction"] for t in s["traffic"]] == ["upload", "upload"]
            q = s["queue"]
            assert q in ({"kind": "dualpi2", "min_qlen_step": 2}, {"kind": "fq_codel"}) or q == {
                "kind": "droptail",
                "limit": limit,
            }
            rtts = tuple(int(x["rtt_ms"]) for x in s["traffic_rtt"])
            seen_pairs.add(rtts)
            assert r.labels["rtt"] == f"{rtts[0]}/{rtts[1]}"
            ccs = [_cc(t, s) for t in s["traffic_tcp"]]
            seen_vs.add("-vs-".join(ccs))
            assert r.labels["vs"] == "-vs-".join(ccs)
        assert seen_pairs == rtt_pairs
        assert seen_vs == {
            "prague-vs-prague",
            "cubic-vs-prague",
            "prague-vs-cubic",
            "cubic-vs-cubic",
        }


def test_rate_step_designs_are_scenarios_2_and_3(tmp_path):
    steps = set()
    for r in _plan(tmp_path, "ratestep"):
        s = r.scenario
        assert s["topology"]["bottleneck_mbps"] == 50.0 and s["duration_s"] == 60.0
        (step,) = s["topology"]["bottleneck_steps"]
        assert step["at_s"] == 30.0
        steps.add(step["mbps"])
        assert s["rtt"]["rtt_ms"] in (20.0, 80.0)
    assert steps == {25.0, 10.0, 5.0, 1.0}
    for r in _plan(tmp_path, "varrate"):
        topo = r.scenario["topology"]
        assert topo["bottleneck_mbps"] == 100.0
        assert [(x["at_s"], x["mbps"]) for x in topo["bottleneck_steps"]] == [
            (25.0, 50.0),
            (30.0, 10.0),
            (35.0, 90.0),
            (50.0, 5.0),
        ]


def test_smoke_end_to_end(tmp_path):
    out = tmp_path / "l4s"
    outcome = reproduce("l4s", "smoke", out, jobs=2, quiet=True)
    assert outcome.failed == 0 and outcome.report is not None
    html = outcome.report.read_text(encoding="utf-8")
    # Scenario 1: one row per (qdisc, vs, rtt) of the smoke plan; goodputs fill the link.
    t = study_l4s.rttfair_table(Study.open(out / "rttfair_10"))
    assert t.height == 3 * 1 * 2
    assert all(8.0 < a + b <= 10.0 for a, b in zip(t["D1 (Mb/s)"], t["D2 (Mb/s)"], strict=True))
    assert all(0.5 <= j <= 1.0 for j in t["Jain's"])
    caption = (
        "Scenario 1 at 10 Mbit/s: steady-state goodput of each flow (the measured window at "
        "the end of the run), Jain's index, and each flow's mean queueing delay"
    )
    assert table_rows(html, str(escape(caption))) == t.height
    # A FIFO of 200 packets at 10 Mb/s: both flows see ~200 packets of queue, and their
    # delays agree (one queue); FQ-CoDel keeps each flow's own delay near its 5 ms target.
    fifo = t.filter(t["qdisc"] == "pfifo(200)")
    assert all(d > 100.0 for d in fifo["delay 1 (ms)"])
    # Web: per-class response times and queueing delay for the mixed population.
    web = Study.open(out / "web")
    classes = study_l4s.class_delays(web.table("source_delay"), ["users", "source"])
    assert set(classes["source"]) == {0, 1, 2, 3}
    assert (
        str(escape("Queueing delay of each class's packets at the responses' bottleneck")) in html
    )
    assert "tc -s qdisc statistics" in html and "step_marks" in html
    assert not missing_figures(out, "s1_jain_rttfair_10", "s2_delay", "s3_delay", "s3_thr")
    assert not missing_figures(out, "web_response_cdf")
    # Scenario 4 (rrul_be at asymmetric rates): both ccs, the three qdiscs at 1/10 Mbit/s, each
    # direction's TCP within its own link rate, and the probes answered.
    s4 = study_l4s.bidir_table(Study.open(out / "bidir_asym"))
    assert s4.height == 2 * 3 and set(s4["qdisc"]) == {"dualpi2", "fq_codel", "pfifo"}
    assert all(0.0 < u <= 1.0 for u in s4["TCP upload sum (Mb/s)"])
    assert all(0.0 < d <= 10.0 for d in s4["TCP download sum (Mb/s)"])
    assert all(p > 20.0 for p in s4["ping p50 (ms)"])  # at least the 20 ms base RTT
    assert "Scenario 4: bi-directional traffic at asymmetric rates" in html


def test_bidir_asym_design_is_scenario_4(tmp_path):
    """[Batch::l4s-s4-bidir-asym]: cc x (bandwidth x qdisc, the pfifo limits per bandwidth) x
    rtt; rrul_be's four flows each way and four probes."""
    runs = _plan(tmp_path, "bidir_asym")
    assert len(runs) == 2 * 9 * 2 and all(r.error is None for r in runs)
    limits = {"1/10": (20, 200), "1/20": (20, 400), "5/100": (100, 1000)}
    for r in runs:
        s, (bw, qdisc) = r.scenario, r.labels["setup"].split(" ")
        up, down = (float(x) for x in bw.split("/"))
        assert (s["topology"]["bottleneck_mbps"], s["topology"]["bottleneck_reverse_mbps"]) == (
            up,
            down,
        )
        if qdisc == "pfifo":
            assert (s["queue"]["limit"], s["queue_reverse"]["limit"]) == limits[bw]
        assert [(t["kind"], t["flows"]) for t in s["traffic"]] == [
            ("bulk", 4),
            ("bulk", 4),
            ("ping", 4),
        ]
