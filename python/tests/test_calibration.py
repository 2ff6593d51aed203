"""Load calibration: fit math, keys, load -> population, missing-calibration errors, and an
end-to-end calibration of a small PackMime scenario."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest
from conftest import cli

import aqmlab
from aqmlab import _core
from aqmlab import scenario as sc
from aqmlab.runs import calibrate as making
from aqmlab.scenario import calibration as cal

WEB = """\
name = "web"
seed = 3
duration_s = 30.0
warmup_s = 5.0

[topology]
bottleneck_mbps = 1.0
bottleneck_delay_ms = 1.0
access_mbps = 100.0
access_delay_ms = 1.0
access_queue_packets = 10000
left_hosts = 4
right_hosts = 4

[queue]
kind = "droptail"
limit = 30

[rtt]
kind = "uniform"
min_ms = 10.0
max_ms = 50.0

[[traffic]]
kind = "packmime"
{population}
"""


def write(tmp_path: Path, population: str = "load = 0.5", text: str = WEB) -> Path:
    p = tmp_path / "web.toml"
    p.write_text(text.format(population=population), encoding="utf-8")
    return p


def test_fit_through_origin_by_hand():
    # y = 2x exactly: slope 2, R² 1.
    assert making.fit_through_origin([1, 2, 3], [2, 4, 6]) == pytest.approx((2.0, 1.0))
    # x = 1, 2; y = 1, 3: slope = (1 + 6) / (1 + 4) = 1.4; residuals -0.4, 0.2;
    # SS_res = 0.2, SS_tot = 2 about the mean 2: R² = 0.9.
    assert making.fit_through_origin([1, 2], [1, 3]) == pytest.approx((1.4, 0.9))


def test_fit_with_intercept_by_hand():
    slope, icpt, r2 = making.fit_intercept([1, 2, 3], [3, 5, 7])
    assert (slope, icpt, r2) == pytest.approx((2.0, 1.0, 1.0))
    # x = 0, 1, 2, 3; y = 0, 2, 2, 4: slope 1.2, intercept 0.2, R² = 1 - 0.8/8 = 0.9.
    assert making.fit_intercept([0, 1, 2, 3], [0, 2, 2, 4]) == pytest.approx((1.2, 0.2, 0.9))
    with pytest.raises(ValueError):
        making.fit_intercept([1, 1], [1, 2])


def test_target_populations_span_the_load_range():
    pops = making.target_populations("packmime", 0.1, 10.0, 5)
    assert pops == pytest.approx([22, 44, 66, 88, 110])
    users = making.target_populations("mah", 2.0, 1.0, 5)  # 0.11 .. 0.55 users -> distinct ints
    assert users == [1, 2, 3, 4, 5]


def test_key_ignores_capacity_population_and_seed_not_rtt(tmp_path):
    base = sc.load(write(tmp_path, "rate = 5.0"), loads=False)
    key = cal.calibration_key(base, 0)
    for change in (
        ["topology.bottleneck_mbps=10.0", "traffic[0].rate=50.0", "seed=9"],
        ["queue.limit=5", "duration_s=100.0", "traffic[0].client_side=left"],
    ):
        other = sc.resolve(base, overrides=change, loads=False)
        assert cal.calibration_key(other, 0) == key, change
    for change in (["rtt.max_ms=200.0"], ["tcp.rwnd=8192"], ["traffic[0].http11=true"]):
        other = sc.resolve(base, overrides=change, loads=False)
        assert cal.calibration_key(other, 0) != key, change


def test_uncongested_copy(tmp_path):
    base = sc.load(write(tmp_path, "rate = 5.0"), overrides=["max_exchanges=10"], loads=False)
    base["traffic"].append({"kind": "bulk", "flows": 2})
    base["queue_reverse"] = {"kind": "droptail", "limit": 3}
    u = making.uncongested(base, 0, 7.0, duration_s=20.0)
    assert u["traffic"] == [{"kind": "packmime", "rate": 7.0}]
    assert u["topology"]["bottleneck_mbps"] == 10.0
    assert u["queue"] == {"kind": "droptail", "limit": cal.BIG_QUEUE}
    assert "queue_reverse" not in u and "max_exchanges" not in u
    assert u["duration_s"] == 20.0 and u["warmup_s"] == 5.0
    assert u["tcp"] == base["tcp"] and u["rtt"] == base["rtt"] and u["seed"] == base["seed"]


def test_key_ignores_ecn_and_load_basis(tmp_path):
    # A drop-tail calibration network never marks: ECN runs share the non-ECN calibration.
    base = sc.load(write(tmp_path, "rate = 5.0"), loads=False)
    key = cal.calibration_key(base, 0)
    other = sc.resolve(base, overrides=["tcp.ecn=true"], loads=False)
    other["traffic"][0]["load_basis"] = "two_way"
    assert cal.calibration_key(other, 0) == key
    assert other["tcp"]["ecn"] is True  # the scenario itself keeps ECN


def fake_calibration(scenario, slope, path, index=0, other=None):
    c = cal.Calibration(
        key=cal.calibration_key(scenario, index),
        kind=scenario["traffic"][index]["kind"],
        population="rate",
        direction="reverse",
        slope_mbps=slope,
        r2=0.998,
        intercept_fit={"slope_mbps": slope, "intercept_mbps": 0.0, "r2": 0.998},
        points=[],
        capacity_mbps=1.0,
        calibration_bottleneck_mbps=10.0,
        duration_s=30.0,
        warmup_s=5.0,
        seed=1,
        traffic_index=index,
        other_slope_mbps=other,
    )
    return cal.save_file(path, [c])


def test_load_resolves_to_population(tmp_path):
    f = write(tmp_path, "load = 0.5")
    unresolved = sc.load(f, loads=False)
    fake_calibration(unresolved, 0.04, cal.default_path(f))
    resolved, used = sc.load_with_calibration(f)
    assert resolved["traffic"][0]["rate"] == pytest.approx(0.5 * 1.0 / 0.04)
    assert "load" not in resolved["traffic"][0]
    assert used[0]["load"] == 0.5 and used[0]["slope_mbps"] == 0.04 and used[0]["r2"] == 0.998
    # Another capacity, same calibration: population scales with it.
    resolved = sc.load(f, overrides=["topology.bottleneck_mbps=4.0"])
    assert resolved["traffic"][0]["rate"] == pytest.approx(0.5 * 4.0 / 0.04)


TWO_WAY = WEB.replace('kind = "packmime"\n{population}', 'kind = "browsers"\n{population}')


def _two_way(tmp_path, left: str, right: str) -> Path:
    text = TWO_WAY.format(population=left) + f'\n[[traffic]]\nkind = "browsers"\n{right}\n'
    f = tmp_path / "two.toml"
    f.write_text(text, encoding="utf-8")
    return f


def test_two_way_load_counts_the_other_sides_requests(tmp_path):
    # Left clients: responses 0.02 Mb/s per user on reverse, 0.005 on forward (requests,
    # ACKs); right clients: 0.03 on forward, 0.004 on reverse. Capacity 1 Mb/s.
    two = 'load = 0.9\nload_basis = "two_way"\nclient_side = "{side}"'
    f = _two_way(tmp_path, two.format(side="left"), two.format(side="right"))
    raw = sc.load(f, loads=False)
    fake_calibration(raw, 0.02, cal.default_path(f), index=0, other=0.005)
    fake_calibration(raw, 0.03, cal.default_path(f), index=1, other=0.004)
    resolved, used = sc.load_with_calibration(f)
    # reverse: 0.02 nL + 0.004 nR = 0.9;  forward: 0.03 nR + 0.005 nL = 0.9
    # det = 0.02·0.03 − 0.004·0.005 = 5.8e-4; nL = (0.9·0.03 − 0.004·0.9)/det = 40.34...,
    # nR = (0.02·0.9 − 0.005·0.9)/det = 23.27...
    assert [t["users"] for t in resolved["traffic"]] == [40, 23]
    assert all("load_basis" not in t and "load" not in t for t in resolved["traffic"])
    assert used[0]["load_basis"] == "two_way" and used[1]["other_slope_mbps"] == 0.004
    # One two-way entry against a fixed-basis one: 0.02 nL + 0.004·(0.9/0.03) = 0.9.
    f = _two_way(tmp_path, two.format(side="left"), 'load = 0.9\nclient_side = "right"')
    assert [t["users"] for t in sc.load(f)["traffic"]] == [round((0.9 - 0.12) / 0.02), 30]
    # Without the basis each entry counts only its own responses (the default).
    plain = 'load = 0.9\nclient_side = "{side}"'
    f = _two_way(tmp_path, plain.format(side="left"), plain.format(side="right"))
    assert [t["users"] for t in sc.load(f)["traffic"]] == [45, 30]


def test_two_way_load_errors(tmp_path):
    two = 'load = 0.9\nload_basis = "two_way"\nclient_side = "{side}"'
    f = _two_way(tmp_path, two.format(side="left"), two.format(side="right"))
    raw = sc.load(f, loads=False)
    fake_calibration(raw, 0.02, cal.default_path(f), index=0, other=None)  # an old file
    fake_calibration(raw, 0.03, cal.default_path(f), index=1, other=0.004)
    with pytest.raises(sc.ScenarioError, match="no other-direction slope; calibrate it again"):
        sc.load(f)
    g = _two_way(tmp_path, two.format(side="left"), two.format(side="left"))
    with pytest.raises(sc.ScenarioError, match="at most one two-way `load` entry per direction"):
        sc.load(g, calibration=cal.default_path(f))
    h = _two_way(tmp_path, 'load = 0.9\nload_basis = "both"', "users = 3")
    with pytest.raises(sc.ScenarioError, match=r'traffic\[0\].load_basis = "both": expected'):
        sc.load(h, calibration=cal.default_path(f))
    k = _two_way(tmp_path, 'users = 3\nload_basis = "two_way"', "users = 3")
    with pytest.raises(sc.ScenarioError, match=r"traffic\[0\].load_basis: only with"):
        sc.load(k)


def test_mah_users_are_rounded(tmp_path):
    text = WEB.replace('kind = "packmime"', 'kind = "mah"')
    f = write(tmp_path, "load = 0.9", text)
    fake_calibration(sc.load(f, loads=False), 0.07, cal.default_path(f))
    assert sc.load(f)["traffic"][0]["users"] == round(0.9 / 0.07) == 13


def test_missing_calibration_is_one_clear_line(tmp_path):
    f = write(tmp_path, "load = 0.5")
    with pytest.raises(cal.CalibrationMissing, match=r"aqmlab calibrate"):
        sc.load(f)
    proc = cli("validate", f)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: traffic[0].load = 0.5: no calibration")
    assert "aqmlab calibrate" in lines[0] and "--calibrate" in lines[0]
    # A calibration of another RTT model does not match.
    other = sc.load(f, overrides=["rtt.max_ms=99.0"], loads=False)
    fake_calibration(other, 0.04, cal.default_path(f))
    with pytest.raises(cal.CalibrationMissing):
        sc.load(f)


def test_bad_loads(tmp_path):
    f = write(tmp_path, "load = 0.5\nrate = 3.0")
    fake_calibration(sc.load(f, loads=False), 0.04, cal.default_path(f))
    with pytest.raises(sc.ScenarioError, match="not both"):
        sc.load(f)
    f = write(tmp_path, "load = -1")
    with pytest.raises(sc.ScenarioError, match=r"traffic\[0\].load = -1"):
        sc.load(f)


def _core_has_packmime() -> bool:
    try:
        _core.validate_scenario(
            json.dumps(sc.resolve(tomllib.loads(WEB.format(population="rate = 1.0"))))
        )
    except ValueError:
        return False
    return True


@pytest.mark.skipif(not _core_has_packmime(), reason="core without packmime traffic")
def test_end_to_end_calibration_and_load(tmp_path):
    # PackMime's sizes and arrivals are long-range dependent: a load measured over a run
    # converges slowly. Responses are capped at 100 kB and runs last 1000 s (about a second of
    # wall time each at 1 Mb/s); across seeds the run at load 0.5 lands within about ±0.03.
    (tmp_path / "scenarios").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    f = write(tmp_path / "scenarios", "load = 0.5\nresponse_cap_bytes = 100000")
    proc = cli(
        "calibrate", f, "--points", "5", "--duration", "1000", "--warmup", "5", "-q", cwd=work
    )
    assert proc.returncode == 0, proc.stderr
    # Written in the current directory, never beside the scenario (issue 36).
    written = work / "web.calibration.json"
    assert not cal.default_path(f).exists() and sorted(work.iterdir()) == [written]
    stored = cal.load_file(written)
    (c,) = stored.values()
    assert c.kind == "packmime" and c.population == "rate" and len(c.points) == 6
    assert max(p["load_fraction"] for p in c.points) > 0.9
    assert c.r2 >= 0.99, c
    # Requests and ACKs on the other direction: some traffic, far less than the responses.
    assert 0 < c.other_slope_mbps < 0.5 * c.slope_mbps, c
    assert all(p["other_load_mbps"] > 0 for p in c.points)
    assert "R²" in proc.stdout and "web.calibration.json" in proc.stdout
    # A run at load 0.5 on the uncongested network measures 0.5 ± 0.03 of the capacity.
    resolved = sc.load(f, calibration=written)
    rate = resolved["traffic"][0]["rate"]
    assert rate == pytest.approx(0.5 / c.slope_mbps)
    u = making.uncongested(resolved, 0, rate, duration_s=1000.0, warmup_s=5.0)
    load, _ = making.measure_load(u, "reverse")
    assert abs(load / 1.0 - 0.5) <= 0.03, (load, c)
    # The run records what it used.
    out = tmp_path / "res"
    res = aqmlab.run(f, out=out, overrides=["duration_s=10.0"], calibration=written)
    assert res.summary["scenario"]["traffic"][0]["rate"] == pytest.approx(rate)
    (info,) = res.summary["calibration"]
    assert info["slope_mbps"] == c.slope_mbps and math.isfinite(info["r2"])


def test_pilot_grows_until_it_offers_one_percent(tmp_path, monkeypatch):
    """A pilot offering under 1 % of the capacity is run again × 10 (at most 4 runs), so the
    points span the load range even when a small population offers almost nothing (a few
    stationary Mah users)."""
    slope = 2e-5  # Mb/s per unit: 10 units offer 0.002 % of 1 Mb/s
    pilots: list[float] = []

    def fake_measure(scenario, direction):  # (load, utilization, other direction's load)
        pop = scenario["traffic"][0]["rate"]
        pilots.append(pop)
        return slope * pop, 0.0, 0.0

    def fake_all(jobs, direction, workers):
        return [(slope * j["traffic"][0]["rate"], 0.0, 0.0) for j in jobs]

    monkeypatch.setattr(making, "measure_loads", fake_measure)
    monkeypatch.setattr(making, "_run_all", fake_all)
    scenario = sc.load(write(tmp_path), loads=False)
    c = making.calibrate_entry(scenario, 0)
    assert pilots == [10.0, 100.0, 1000.0]  # 0.02 % and 0.2 % are too little; 2 % is enough
    assert max(p["load_fraction"] for p in c.points) == pytest.approx(cal.MAX_LOAD)
    assert c.slope_mbps == pytest.approx(slope)


def test_study_b_benchmark_keeps_its_cell():
    """bench/study_b_full.toml resolves, with the calibration beside it, to Study B's 98 %
    DT-240 cell as it was before issue 15 (6,930 `browsers` users per side, no framing, exact
    delays): the benchmark's work stays the same across versions, so timings compare."""
    root = Path(__file__).resolve().parents[2]
    proc = cli("validate", root / "bench" / "study_b_full.toml", "--print")
    assert proc.returncode == 0, proc.stderr
    bench = json.loads(proc.stdout)
    assert [t["users"] for t in bench["traffic"]] == [6930, 6930]
    assert all(t["kind"] == "browsers" for t in bench["traffic"])
    assert "delay_box" not in bench
    assert "bottleneck_framing" not in bench["topology"]
    assert bench["queue"] == {"kind": "droptail", "limit": 240}
