"""Study A (Christiansen et al. 2001): the design in aqmlab/studies/A against the paper, and
`aqmlab reproduce A --scale smoke` end to end (tables with a row per configuration, figures)."""

from __future__ import annotations

import statistics

import pytest
from reproduce_support import axis, smoke_reproduction, table

from aqmlab import scenario as sc
from aqmlab.reproduce import study_dir, study_module

A = study_dir("A")
LOADS = [0.5, 0.7, 0.8, 0.9, 0.98, 1.1]  # §3.4
# App. A Table 1: rows = server machines (goddard ... yako), columns = browsers (brain ...).
PAPER_RTT = [
    [81, 105, 64, 64, 67, 147, 114],
    [126, 137, 47, 53, 41, 86, 114],
    [33, 42, 40, 114, 112, 117, 108],
    [35, 45, 95, 100, 31, 100, 116],
    [105, 92, 78, 41, 53, 109, 66],
    [85, 112, 38, 83, 55, 8, 41],
    [124, 87, 101, 87, 95, 7, 61],
]
ALTQ_RED = {  # §5 and §3.1 (ALTQ RED: packet mode, not gentle), qlen 480, w_q 1/512
    "kind": "red",
    "limit": 480,
    "w_q": 1 / 512,
    "gentle": False,
    "wait": False,
    "queue_in_bytes": False,
    "byte_mode": False,
}


def sweep(name: str) -> dict:
    return sc.read_toml(A / f"{name}.toml")


def paper_max_p(core_max_p: float) -> float:
    """ALTQ's max_p P behaves as RED without `wait` at P/2 (red_thresholds.toml)."""
    return round(2 * core_max_p, 6)


def test_base_scenario_is_the_laboratory_network():
    base = sc.read_toml(A / "base.toml")
    assert (base["duration_s"], base["warmup_s"]) == (90 * 60.0, 20 * 60.0)
    topo = base["topology"]
    assert (topo["bottleneck_mbps"], topo["access_mbps"]) == (10.0, 10.0)
    assert (topo["left_hosts"], topo["right_hosts"]) == (7, 7)
    assert base["tcp"] == {"preset": "freebsd-2.2.8"}
    assert base["traffic"][0]["kind"] == "mah" and base["traffic"][0]["client_side"] == "left"
    # rows of our matrix are browsers: the paper's table transposed
    matrix = base["rtt"]["rtt_ms"]
    assert [[matrix[b][s] for b in range(7)] for s in range(7)] == PAPER_RTT
    assert statistics.mean(v for row in PAPER_RTT for v in row) == pytest.approx(79, abs=0.5)
    assert base["measure"]["queue_sample_ms"] == 3.0


def test_fifo_sizes_and_loads():
    doc = sweep("fifo")
    assert [v["limit"] for v in axis(doc, "queue")["values"]] == [30, 60, 120, 190, 240]
    assert {v["kind"] for v in axis(doc, "queue")["values"]} == {"droptail"}
    assert axis(doc, "load")["values"] == LOADS


def test_red_parameter_sets():
    thr = sweep("red_thresholds")
    q = thr["sweep"]["set"]["queue"]
    assert {k: q[k] for k in ALTQ_RED} == ALTQ_RED and paper_max_p(q["max_p"]) == 0.10
    zip_ = axis(thr, "red")["zip"]
    pairs = list(zip(zip_["queue.min_th"], zip_["queue.max_th"], strict=True))
    assert pairs == [(5, 15), (15, 45), (30, 90), (60, 180), (120, 360)]
    assert axis(thr, "load")["values"] == LOADS
    ratio = axis(sweep("red_ratio"), "red")["zip"]
    pairs = set(zip(ratio["queue.min_th"], ratio["queue.max_th"], strict=True)) | {(30, 90)}
    assert {m for m, x in pairs if x == 90} == {5, 15, 30, 60}  # App. B Table 3
    assert {x for m, x in pairs if m == 30} == {45, 60, 90, 180}  # App. B Table 4
    wq = sweep("red_wq_maxp")
    assert axis(wq, "w_q")["values"] == [1 / 512, 1 / 256, 1 / 128]
    assert [paper_max_p(v) for v in axis(wq, "max_p")["values"]] == [0.05, 0.10, 0.25]
    assert axis(wq, "max_p")["labels"] == ["0.05", "0.10", "0.25"]
    assert axis(wq, "load")["values"] == [0.9, 0.98, 1.1]
    assert axis(sweep("red_qlen"), "qlen")["values"] == [160, 120]  # and 480 in thresholds
    for name in ("red_ratio", "red_wq_maxp", "red_qlen"):
        assert sweep(name)["sweep"]["set"]["queue"] == q, name


def test_uncongested_baseline_and_shared_seeds():
    u = sweep("uncongested")
    assert u["sweep"]["set"]["topology.bottleneck_mbps"] == 100.0
    assert [round(v * 10, 6) for v in axis(u, "load")["values"]] == LOADS
    parts = study_module("A").PARTS
    heads = [sweep(f.removesuffix(".toml"))["sweep"] for f in parts.values()]
    assert {(h["seed"], h["repetitions"]) for h in heads} == {(1, 1)}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return smoke_reproduction("A", tmp_path_factory)


COLUMNS = [
    "KB/s",
    "% drops",
    "mean queue",
    "median resp. (ms)",
    "% ≤ 1 s",
    "1 < % ≤ 2 s",
    "2 < % ≤ 3 s",
    "% > 3 s",
]


def test_smoke_runs_every_part(smoke):
    outcome, _tables, _figs = smoke
    assert outcome.failed == 0 and outcome.runs == 11
    assert outcome.report.is_file()


def test_smoke_tables_have_a_row_per_configuration(smoke):
    _outcome, tables, _figs = smoke
    fifo = table(tables, "Table B.1")
    assert [(r["Load %"], r["Queue length"]) for r in fifo] == [("98%", "30"), ("98%", "120")]
    assert list(fifo[0]) == ["Load %", "Queue length", *COLUMNS]
    for r in fifo:
        shares = [float(r[c]) for c in COLUMNS[4:]]
        assert sum(shares) == pytest.approx(100, abs=0.01)
    red = table(tables, "Table B.2")
    assert [r["(min_th, max_th)"] for r in red] == ["(5,15)", "(30,90)", "(60,180)"]
    assert [r["(min_th, max_th)"] for r in table(tables, "Table B.3")] == ["(5,90)", "(30,90)"]
    assert [r["(min_th, max_th)"] for r in table(tables, "Table B.4")] == ["(30,90)", "(30,180)"]
    assert [r["Queue length"] for r in table(tables, "Table 3")] == ["480", "120"]
    best = table(tables, "Table 4")
    assert [r["Notes"] for r in best] == ["best response times", "best utilization", "lowest drops"]
    retx = table(tables, "Table 5")
    assert [r["(min_th, max_th)"] for r in retx] == ["(5,15)", "(60,180)"]
    for r in retx:
        assert sum(float(r[f"% {c}"]) for c in ("none", "SYN", "FIN", "data", "combined")) == (
            pytest.approx(100, abs=0.01)
        )
    assert [r["load"] for r in table(tables, "Table 2")] == ["98%"]


def test_smoke_figures(smoke):
    outcome, _tables, figs = smoke
    expected = [
        "01",
        "07",
        "08",
        "09",
        "10",
        "11",
        "12",
        "14",
        "15",
        "16",
        "17",
        "18",
        "19",
        "20",
        "21",
        "22",
    ]
    for num in expected:
        assert any(f.startswith(f"fig-A_fig{num}") for f in figs), num
        assert list((outcome.directory / "figures").glob(f"A_fig{num}_*.png")), num
