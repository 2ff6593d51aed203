"""Study D (May, Diot, Lyles, Bolot 2000): the design in the sweep files against the paper,
and the smoke scale end to end (runs, tables with one row per configuration, figures)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import missing_figures, table_rows

from aqmlab.reproduce import reproduce, scaling, study_d, study_dir
from aqmlab.study import Study, sweepfile


def _plan(tmp_path: Path, part: str, scale: str = "full") -> list[sweepfile.PlannedRun]:
    rel = study_d.PARTS[part]
    derived = scaling.derive(study_dir("D") / rel, scale, tmp_path / f"{part}-{scale}.toml")
    return sweepfile.plan(sweepfile.read(derived), tmp_path / f"{part}-calibration.json")


RED = {"min_th": 30.0, "max_th": 130.0, "max_p": 0.1, "queue_in_bytes": False, "byte_mode": False}


def _check_queue(label: str, q: dict) -> None:
    """§II-B, §III-C, §IV, §V: the four queue managers with a 200-packet buffer."""
    assert q["limit"] == 200, label
    if label == "TD":
        assert q == {"kind": "droptail", "limit": 200}
    elif label.startswith("RED") or label == "GRED":
        assert q["kind"] == "red" and {k: q[k] for k in RED} == RED, label
        assert q["gentle"] is (label == "GRED"), label
    elif label == "GRED-I":
        assert q["kind"] == "gred_i" and q["min_th"] == 30.0 and q["max_p"] == 1.0
        assert q["thresholds"] == "max_th_is_buffer"  # max_th = the 200-packet buffer
        assert q["wait"] is False  # a drop function of the queue, no spacing of drops
    else:
        pytest.fail(f"unexpected queue {label}")


def test_full_design_matches_the_paper(tmp_path):
    for part in study_d.PARTS:
        runs = _plan(tmp_path, part)
        assert all(r.error is None for r in runs), [r.error for r in runs if r.error]
        reps = {r.rep for r in runs}
        assert len(reps) >= 10  # §II-B: "repeated each experiment at least 10 times"
        for r in runs:
            s = r.scenario
            assert s["duration_s"] - s["warmup_s"] >= 200.0  # §II-C: > 200 s simulated
            assert s["topology"]["bottleneck_mbps"] == 10.0
            assert s["tcp"]["recovery"] == "newreno" and s["tcp"]["mss"] == 1000
            topo = s["topology"]
            if part == "greedy":
                # §II-C's ns-2 network: RTTs 120-220 ms, no framing, no jitter.
                assert s["rtt"] == {"kind": "uniform", "min_ms": 120.0, "max_ms": 220.0}
                assert topo["bottleneck_framing"] == "none" and topo["host_jitter_us"] == 0.0
            else:
                # §II-B's testbed: Ethernet, a delay per source link of 10-200 ms each way.
                assert topo["bottleneck_framing"] == topo["access_framing"] == "ethernet"
                rtts = s["rtt"]["rtt_ms"]
                assert s["rtt"]["kind"] == "matrix" and len(rtts) == 1 and len(rtts[0]) == 32
                assert (min(rtts[0]), max(rtts[0])) == (20.0, 400.0)
            _check_queue(r.labels["queue"], s["queue"])
        # Common random numbers: the seed depends on the repetition only.
        assert {(r.rep, r.seed) for r in runs} == {(k, 1 + k) for k in reps}
    # Exp1-Exp5: 16 ... 256 TCP sources, 80 % FTP (100 KB files), 20 % small HTTP transfers,
    # no UDP (§II-B, §III-A.1).
    flows = _plan(tmp_path, "flows")
    seen = set()
    for r in flows:
        ftp, http = r.scenario["traffic"]
        n = ftp["sessions"] + http["sessions"]
        seen.add(n)
        assert str(n) == r.labels["flows"] and ftp["sessions"] == round(0.8 * n)
        assert ftp["size"]["bytes"] == 100_000 and http["size"]["bytes"] == 1_000
        assert ftp["think_mean_s"] == http["think_mean_s"] == 0.0  # back to back
    assert sorted(seen) == [16, 32, 64, 128, 256]
    greedy = _plan(tmp_path, "greedy")
    for r in greedy:
        bulk, udp = r.scenario["traffic"]
        assert bulk["kind"] == "bulk" and bulk["flows"] == 200 and "bytes" not in bulk
        assert udp["kind"] == "udp_cbr" and udp["share"] == 0.1
    weights = sorted(
        r.scenario["queue"]["w_q"]
        for r in greedy
        if r.rep == 0 and r.scenario["queue"]["kind"] == "red" and not r.scenario["queue"]["gentle"]
    )
    assert weights[-1] == 1.0 and weights[0] < 0.002 and len(weights) >= 6  # §III-B
    # Exp6: 400 sources, 10 % UDP; Exp7: 200, 10 %; Exp8: 200, 5 %; 20 % of the TCP sources
    # FTP with 100 KB files, 80 % HTTP (text and GIF transfers).
    expected = {"Exp6": (400, 0.1), "Exp7": (200, 0.1), "Exp8": (200, 0.05)}
    for r in _plan(tmp_path, "mix"):
        udp, ftp, text, gif = r.scenario["traffic"]
        sources, share = expected[r.labels["exp"]]
        assert udp["flows"] + ftp["sessions"] + text["sessions"] + gif["sessions"] == sources
        assert udp["share"] == share and udp["packet_bytes"] == 1000
        tcp = ftp["sessions"] + text["sessions"] + gif["sessions"]
        assert ftp["sessions"] == round(0.2 * tcp) and ftp["size"]["bytes"] == 100_000
        assert (text["size"]["bytes"], gif["size"]["bytes"]) == (1_000, 10_000)


def test_smoke_end_to_end(tmp_path):
    out = tmp_path / "d"
    outcome = reproduce("D", "smoke", out, jobs=2, quiet=True)
    assert outcome.failed == 0 and outcome.report is not None
    html = outcome.report.read_text(encoding="utf-8")
    flows = study_d.collect(Study.open(out / "flows"), ["flows", "queue"])
    greedy = study_d.collect(Study.open(out / "greedy"), ["queue"])
    mix = study_d.collect(Study.open(out / "mix"), ["exp", "queue"])
    # One row per configuration of the smoke plan, in the tables and in the report.
    assert set(flows) == {("64", q) for q in study_d.QUEUES}
    assert set(greedy) == {(q,) for q in ("TD", "RED", "RED w=1", "GRED", "GRED-I")}
    assert set(mix) == {("Exp7", q) for q in study_d.QUEUES}
    assert table_rows(html, "Exp1-Exp5: TCP sources") == len(flows)
    assert table_rows(html, "Simulations: 200 greedy NewReno flows + 10 % UDP CBR") == 5
    assert table_rows(html, "Exp6-Exp8: 400/200 sources, 10 %/5 % UDP") == len(mix)
    for cells in (flows, greedy, mix):
        for c in cells.values():
            assert 5.0 < c.mean("tcp_goodput_mbps") <= 10.0  # a saturated 10 Mb/s link
    for c in [*greedy.values(), *mix.values()]:
        assert 0.0 < c.mean("udp.loss_probability") < 1.0
    # Tail drop keeps its buffer nearly full with 200 greedy flows; GRED-I's ramp from 30
    # packets holds the queue lower (§V) - a property of the disciplines, not of the paper.
    assert greedy[("TD",)].mean("reverse.mean_queue_pkts") > 150
    assert greedy[("GRED-I",)].mean("reverse.mean_queue_pkts") < 150
    assert not missing_figures(
        out,
        "fig04_goodput_vs_flows",
        "fig05_08_10_goodput",
        "fig05_08_10_udp_loss",
        "fig06_queue_greedy",
        "fig07_goodput_vs_w",
        "fig07_udp_loss_vs_w",
        "fig09_queue_greedy",
        "fig11_queue_greedy",
        "fig06_09_11_loss_runs_udp_all_greedy",
        "fig06_09_11_loss_runs_queue_reverse_greedy",
        "queue_delay_greedy",
        "fig06_09_11_loss_runs_udp_all_Exp7",
    )
    # The report can be rewritten from the finished runs alone.
    again = reproduce("D", "smoke", out, report_only=True, quiet=True)
    assert again.runs == 0 and again.report == outcome.report
