"""Study B (Le, Aikat, Jeffay, Smith 2003): the design in the sweep files against the paper,
the campus-RTT substitute against its source, the "best setting" rule, and the smoke scale
end to end (runs, tables with one row per configuration, figures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import missing_figures, table_rows

from aqmlab import scenario as sc
from aqmlab.analysis import rthist
from aqmlab.reproduce import reproduce, scaling, study_b, study_dir
from aqmlab.study import Study, sweepfile

B = study_dir("B")


def _plan(tmp_path: Path, part: str, scale: str = "full") -> list[sweepfile.PlannedRun]:
    derived = scaling.derive(B / study_b.PARTS[part], scale, tmp_path / f"{part}-{scale}.toml")
    # The calibration shipped beside base.toml serves every cell: nothing is measured here.
    return sweepfile.plan(sweepfile.read(derived), tmp_path / f"{part}-calibration.json")


# §4-5: every queue manager and ECN setting (label -> (scheme, setting, ECN)).
EXPECTED = {
    "DT-24": ("drop-tail", "24", "off"),
    "DT-240": ("drop-tail", "240", "off"),
    "DT-2400": ("drop-tail", "2400", "off"),
    **{
        f"{s}-{t}{e}": (s, f"{p} {t}", "ECN" if e else "off")
        for s, p in (("PI", "q_ref"), ("REM", "b*"))
        for t in (24, 240)
        for e in ("", "/ECN")
    },
    **{
        f"ARED-{m}-{lo}/{hi}{e}": (f"ARED-{m}", f"({lo}, {hi})", ecn)
        for m in ("pkt", "byte")
        for lo, hi in ((12, 36), (120, 360))
        for e, ecn in (("", "off"), ("/ECN", "ECN"), ("/ECN-new-gentle", "ECN new gentle"))
    },
}


def _check_queue(label: str, s: dict) -> None:
    q = s["queue"]
    assert study_b.describe(s) == EXPECTED[label], label
    ecn = EXPECTED[label][2] != "off"
    assert s["tcp"]["ecn"] is ecn, label  # the end systems negotiate ECN with the AQM
    if q["kind"] == "droptail":
        return
    assert q["limit"] >= 10 * 720, label  # §4: no tail drops (ARED's gentle region ends at 720)
    assert q["mean_pkt_size"] == 500, label  # §4.4: "mean frame size ... a little over 500"
    if q["kind"] == "pi":
        assert q["queue_in_bytes"] and q["byte_mode"] and q["sample_hz"] == 160.0
        assert "a" not in q and "b" not in q  # the designers' coefficients (core defaults)
    elif q["kind"] == "rem":
        assert q["byte_mode"] and q.get("mark", False) is ecn
        assert all(k not in q for k in ("gamma", "phi", "alpha", "interval_ms"))
    else:
        assert q["kind"] == "ared" and q["mode"] == "timer" and q.get("gentle", True)
        assert q["queue_in_bytes"] is q["byte_mode"] is label.startswith("ARED-byte")


def test_full_design_matches_the_paper(tmp_path):
    main = _plan(tmp_path, "main")
    assert all(r.error is None for r in main), [r.error for r in main if r.error][:2]
    assert len(main) == 2 * 2 * len(EXPECTED) * 3
    assert {(r.rep, r.seed) for r in main} == {(0, 1), (1, 2), (2, 3)}  # same seeds, §3.3
    users = {}
    for r in main:
        s = r.scenario
        assert s["duration_s"] == 7200.0  # §3.3: 120 minutes ...
        assert s["duration_s"] - 2 * s["warmup_s"] == 5400.0  # ... 90 of them kept
        assert s["topology"]["bottleneck_mbps"] == 100.0
        assert s["tcp"]["rwnd"] == 16384 and s["tcp"]["tick_ms"] == 10.0  # 16 KB, FreeBSD 4
        _check_queue(r.labels["aqm"], s)
        if r.labels["rtt"] == "uniform":
            assert s["rtt"] == {"kind": "uniform", "min_ms": 10.0, "max_ms": 150.0}
        else:
            assert s["rtt"]["kind"] == "empirical" and s["rtt"]["source"] == "campus_rtt.csv"
        left, right = s["traffic"]
        assert left["kind"] == right["kind"] == "unc"  # the UNC model (its fallbacks here)
        assert s["topology"]["bottleneck_framing"] == s["topology"]["access_framing"] == "ethernet"
        assert s["delay_box"] == {"placement": "client_outbound", "tick_ms": 1.0}
        assert (left["client_side"], right["client_side"]) == ("left", "right")
        # Balanced (§3.2): each side is calibrated on its own, and with hosts' jitter and clock
        # phases the two measured slopes differ by about 1e-4.
        assert left["users"] == pytest.approx(right["users"], rel=1e-3)
        assert left["persistent_share"] == 0.15 and left["parallel"] == [2, 4]  # §3.1
        users.setdefault((r.labels["rtt"], r.labels["load"]), set()).add(left["users"])
    assert {k: len(v) for k, v in users.items()} == dict.fromkeys(users, 1)  # same users
    for rtt in ("uniform", "campus"):
        (u90,), (u98,) = users[(rtt, "90%")], users[(rtt, "98%")]
        assert u98 / u90 == pytest.approx(0.98 / 0.9, abs=2e-3)
    # The uncongested baseline: the same populations on 1 Gb/s, drop-tail 2,400 (§3.2).
    unc = _plan(tmp_path, "uncongested")
    assert len(unc) == 2 * 2 * 3
    for r in unc:
        s = r.scenario
        assert s["topology"]["bottleneck_mbps"] == 1000.0
        assert s["queue"] == {"kind": "droptail", "limit": 2400}
        assert {s["traffic"][0]["users"]} == users[(r.labels["rtt"], r.labels["load"])]


def test_two_way_load_counts_requests_and_acks():
    # §3.2: one direction carries one side's responses plus the other side's requests: the
    # users per side are load x capacity / (response slope + other-direction slope).
    cals = json_calibration()
    for rtt in ("uniform", "campus"):
        c = cals[rtt]
        assert 0 < c.other_slope_mbps < 0.3 * c.slope_mbps
        expected = round(0.9 * 100.0 / (c.slope_mbps + c.other_slope_mbps))
        assert expected < round(0.9 * 100.0 / c.slope_mbps)


def json_calibration() -> dict:
    from aqmlab.scenario import calibration as cal

    out = {}
    for c in cal.load_file(B / "base.calibration.json").values():
        out["uniform" if c.fields["rtt"]["kind"] == "uniform" else "campus"] = c
    return out


def test_campus_rtt_substitute_matches_its_source():
    # model-facts §8.3.10: PackMime DelayBox base RTT (client + server Xmit samples): median
    # ≈ 67 ms, mean ≈ 108 ms, 90 % ≈ 186 ms, 99 % ≈ 1.06 s.
    pts = sc.load_rtt_cdf(B / "campus_rtt.csv")
    v, p = np.array([x for x, _ in pts]), np.array([c for _, c in pts])
    q = lambda prob: float(np.interp(prob, p, v))  # noqa: E731
    assert q(0.5) == pytest.approx(67, rel=0.05)
    assert q(0.9) == pytest.approx(186, rel=0.05)
    assert q(0.99) == pytest.approx(1060, rel=0.08)
    mean = float(np.sum(np.diff(p) * (v[1:] + v[:-1]) / 2))
    assert 95 < mean < 110  # the tail above the 99.99th percentile is cut
    # Heavier-tailed than uniform [10, 150] ms (§3, Figure 3).
    assert q(0.95) > 150


def _cell(aqm: str, scheme: str, ecn: str, times) -> study_b.Cell:
    c = study_b.Cell("uniform", "90%", aqm, scheme, "", ecn)
    c.hist = rthist.ResponseTimeHist.from_times(np.array(times))
    return c


def test_best_is_the_cdf_closest_to_the_top():
    fast = _cell("PI-24", "PI", "off", [0.1] * 90 + [3.0] * 10)  # E[min(T, 2)] = 0.29
    slow = _cell("PI-240", "PI", "off", [0.2] * 100)  # 0.20
    marked = _cell("PI-24/ECN", "PI", "ECN", [0.05] * 100)  # 0.05
    other = _cell("REM-24", "REM", "off", [0.01] * 100)
    cells = [fast, slow, marked, other]
    assert study_b.best(cells, "PI", ["off"], "uniform", "90%") is slow
    assert study_b.best(cells, "PI", ["off", "ECN"], "uniform", "90%") is marked
    assert study_b.best(cells, "PI", ["off"], "uniform", "98%") is None


def test_link_utilization_is_on_the_papers_100_mbps_basis():
    # The uncongested network runs the same users on a 1 Gb/s link: 8.9 % of its time busy is
    # 89 Mb/s, which the paper's tables give as a share of the 100 Mb/s link (89 %).
    figures = {"loss": 0.0, "completed": 10.0, "marks": 0.0, "overflow": 0.0}
    dt = _cell("DT-240", "drop-tail", "off", [0.3] * 10)
    dt.capacity_mbps = 100.0
    dt.reps = [{**figures, "utilization": 0.90}, {**figures, "utilization": 0.92}]
    unc = _cell("uncongested", "uncongested", "off", [0.1] * 10)
    unc.capacity_mbps = 1000.0
    unc.reps = [{**figures, "utilization": 0.089}]
    table = study_b.summary_table([dt, unc], ["drop-tail", "uncongested"], basis_mbps=100.0)
    rows = {r["scheme"]: r for r in table.to_dicts()}
    assert "link utilization (%)" not in table.columns
    assert rows["uncongested"]["link utilization (% of 100 Mb/s)"] == pytest.approx(89.0)
    assert rows["uncongested"]["throughput (Mb/s)"] == pytest.approx(89.0)
    assert rows["drop-tail"]["link utilization (% of 100 Mb/s)"] == pytest.approx(91.0)
    assert rows["drop-tail"]["throughput (Mb/s)"] == pytest.approx(91.0)


def test_smoke_end_to_end(tmp_path):
    out = tmp_path / "b"
    outcome = reproduce("B", "smoke", out, jobs=2, quiet=True)
    assert outcome.failed == 0 and outcome.report is not None
    html = outcome.report.read_text(encoding="utf-8")
    main = study_b.collect(Study.open(out / "main"))
    unc = study_b.collect(Study.open(out / "uncongested"), aqm_of=lambda _r: "uncongested")
    smoke = ["DT-240", "PI-24", "PI-24/ECN", "REM-24/ECN", "ARED-byte-12/36"]
    smoke.append("ARED-pkt-12/36/ECN-new-gentle")
    assert set(main) == {(r, "90%", a) for r in ("uniform", "campus") for a in smoke}
    assert set(unc) == {(r, "90%", "uncongested") for r in ("uniform", "campus")}
    for c in main.values():
        assert c.hist.n > 1000 and len(set(c.users)) == 1
        assert c.mean("overflow") == 0 or c.scheme == "drop-tail", c.aqm  # §4: no tail drops
        assert 0.7 < c.mean("utilization") <= 1.0, (c.aqm, c.mean("utilization"))
        assert (c.mean("marks") > 0) is (c.ecn != "off"), c.aqm
    for c in unc.values():  # the same users on a ten times faster link: no loss, ~9 % busy
        assert c.mean("loss") == 0 and 0.05 < c.mean("utilization") < 0.15
        assert c.hist.mean_capped() < min(m.hist.mean_capped() for m in main.values())
    # Tables 2-4: one row per configuration, plus drop-tail and the uncongested network.
    assert table_rows(html, "Table 2: PI and REM (uniform RTTs)") == 3 + 2
    assert table_rows(html, "Table 3: ARED (uniform RTTs)") == 2 + 2
    assert table_rows(html, "Table 4: all queue management schemes (campus RTTs)") == 6 + 1
    assert "Best setting of each scheme" in html
    # Utilization on the paper's basis (the congested link), the uncongested network's too.
    capacity = {c.capacity_mbps for c in main.values()}
    assert len(capacity) == 1 and {c.capacity_mbps for c in unc.values()} == {10 * min(capacity)}
    assert f'<th class="num">link utilization (% of {min(capacity):g} Mb/s)</th>' in html
    assert not missing_figures(
        out,
        "fig02_rtt_cdf",
        "fig03_rtt_ccdf",
        "fig04_calibration",
        "fig05_PI_90",
        "fig08_ARED-byte_90",
        "fig09_best_90",
        "fig11_best_ccdf_90",
        "fig12_PI_ecn_90",
        "fig20_ared_new_gentle_90",
        "fig22_best_90",
        "fig24_best_ccdf_90",
        "fig25_campus_90",
        "fig27_campus_90",
    )
