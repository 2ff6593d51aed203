"""Traffic mixes (docs/mixes.md): the mix metrics on hand-built tables, and the Study D
examples run end to end through the real core."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import BASE, cli, edit, write_scenario

import aqmlab
from aqmlab import scenario as sc
from aqmlab.analysis import metrics as mt

MIXES = Path(__file__).resolve().parents[2] / "examples" / "mixes"
GREEDY = sorted(MIXES.glob("greedy_udp_*.toml"))
SHORT = ("duration_s=25", "warmup_s=10")


# --- metrics on hand values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "want"),
    [
        ([2.0, 2.0, 2.0, 2.0], 1.0),
        ([1.0, 0.0, 0.0, 0.0], 0.25),  # one flow takes everything: 1/n
        ([1.0, 2.0, 3.0], 36.0 / 42.0),  # (1+2+3)^2 / (3 (1+4+9))
        ([5.0], 1.0),
    ],
)
def test_jain_index_of_hand_values(values, want):
    assert mt.jain_index(values) == pytest.approx(want, rel=1e-12)


def test_jain_index_of_nothing_is_nan_and_negative_values_are_refused():
    assert math.isnan(mt.jain_index([]))
    assert math.isnan(mt.jain_index([0.0, 0.0]))
    with pytest.raises(ValueError, match="≥ 0"):
        mt.jain_index([1.0, -1.0])


def test_loss_run_distribution_of_a_hand_built_table():
    runs = pl.DataFrame(
        {
            "scope": ["udp_flow", "udp_flow", "udp_flow", "udp_all", "queue_reverse"],
            "flow": [0, 0, 1, -1, -1],
            "run_length": [1, 3, 1, 1, 2],
            "count": [6, 2, 2, 8, 5],
        }
    )
    d = mt.loss_run_distribution(runs, "udp_flow")
    assert d["run_length"].to_list() == [1, 3]
    assert d["count"].to_list() == [8, 2]
    assert d["probability"].to_list() == pytest.approx([0.8, 0.2])
    assert d["ccdf"].to_list() == pytest.approx([1.0, 0.2])
    one = mt.loss_run_distribution(runs, "udp_flow", flow=1)
    assert one["count"].to_list() == [2]
    assert mt.loss_run_distribution(runs, "queue_forward").height == 0
    with pytest.raises(ValueError, match="scope"):
        mt.loss_run_distribution(runs, "tcp")


def test_flow_throughputs_use_each_flows_time_in_the_window():
    summary = {
        "scenario": {"warmup_s": 10.0, "traffic": [{"kind": "bulk"}, {"kind": "ftp"}]},
        "summary": {"measured_s": 20.0},
    }
    conns = pl.DataFrame(
        {
            "conn_id": [0, 1, 2],
            "source": [0, 0, 1],
            "start_s": [1.0, 15.0, 5.0],
            "closed_s": [math.nan, 25.0, 12.0],
            "bytes_delivered_measured": [2_500_000, 1_000_000, 100_000],
        }
    )
    t = mt.flow_throughputs(summary, conns)
    # Alive 10..30 s (20 s), 15..25 s (10 s), 10..12 s (2 s).
    assert t["active_s"].to_list() == pytest.approx([20.0, 10.0, 2.0])
    assert t["throughput_mbps"].to_list() == pytest.approx([1.0, 0.8, 0.4])
    assert t["whole_window"].to_list() == [True, False, False]
    assert t["kind"].to_list() == ["bulk", "bulk", "ftp"]


# --- runs through the core -------------------------------------------------------------------


@pytest.fixture(scope="module")
def study_d(tmp_path_factory) -> aqmlab.Results:
    out = tmp_path_factory.mktemp("study_d") / "res"
    return aqmlab.run(MIXES / "study_d_mix.toml", out=out, overrides=SHORT)


def test_study_d_example_reports_goodput_udp_loss_and_loss_runs(study_d):
    m = mt.mix_metrics(study_d)
    s = study_d.summary["summary"]
    assert m["direction"] == "reverse"
    # Goodput: every measured byte of every connection, below the link's capacity.
    measured = study_d.connections["bytes_delivered_measured"].sum()
    assert s["tcp_goodput_bytes"] == measured > 0
    assert 0 < m["goodput_mbps"] <= 10.0
    assert m["goodput_mbps"] == pytest.approx(measured * 8 / s["measured_s"] / 1e6)
    # UDP: 10 flows of 100 kb/s over the 15 s measured, 1,000-byte packets.
    assert m["udp_flows"] == 10
    assert m["udp_sent"] == pytest.approx(10 * 12.5 * 15, abs=10)
    assert m["udp_delivered"] + m["udp_lost"] + m["udp_unresolved"] == m["udp_sent"]
    assert 0 <= m["udp_loss"] < 1
    # Consecutive-loss distributions: per flow (summed) and of the queue's aggregate.
    runs = study_d.loss_runs
    queue = mt.loss_run_distribution(runs, "queue_reverse")
    assert queue["count"].sum() > 0
    assert queue["probability"].sum() == pytest.approx(1.0)
    drops = sum(s["reverse"][k] for k in ("drops_early", "drops_forced", "drops_overflow"))
    weighted = int((queue["run_length"] * queue["count"]).sum())
    # The runs add up to the drops, but for a run straddling the warm-up and one still open
    # at the end (each shorter than the 64 that the last bin caps).
    assert abs(weighted - drops) <= 2 * 64
    per_flow = mt.loss_run_distribution(runs, "udp_flow")
    assert int((per_flow["run_length"] * per_flow["count"]).sum()) == m["udp_lost"]
    # Every queue drop (all on arrival: drop-tail) is a UDP loss or a TCP connection's drop,
    # but for UDP losses after a flow's last delivered packet, still unresolved.
    tcp = mt.loss_run_distribution(runs, "tcp_flow")
    tcp_drops = int((tcp["run_length"] * tcp["count"]).sum())
    assert tcp_drops == study_d.connections["bottleneck_drops"].sum()
    assert m["udp_lost"] + tcp_drops <= drops <= m["udp_lost"] + tcp_drops + m["udp_unresolved"]
    # The queueing-delay distribution sums to the departures after warm-up.
    qd = mt.queue_delay_distribution(study_d.queue_delay, "reverse")
    assert qd["count"].sum() == s["reverse"]["departures"]
    assert qd["cdf"][-1] == pytest.approx(1.0)
    # Three kinds of sources in one run.
    kinds = set(mt.flow_throughputs(study_d.summary, study_d.connections)["kind"].unique())
    assert kinds == {"ftp", "mah"}


def test_study_d_plots_show_the_loss_runs_and_delays(study_d, tmp_path: Path):
    from aqmlab.report import plots

    files = {f.name for f in plots.write_plots(study_d, tmp_path)}
    assert {"consecutive_losses.png", "queue_delay_cdf.png"} <= files
    fig = plots.consecutive_losses(study_d.loss_runs, "reverse")
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    queue = mt.loss_run_distribution(study_d.loss_runs, "queue_reverse")
    line = lines["aggregate at the reverse queue"]
    assert list(line.get_xdata()) == queue["run_length"].to_list()
    assert list(line.get_ydata()) == pytest.approx(queue["probability"].to_list())
    cdf = plots.queue_delay_cdf(study_d.queue_delay).axes[0].get_lines()[0].get_ydata()
    assert cdf[0] > 0 and np.all(np.diff(cdf) >= 0) and cdf[-1] <= 1


def test_study_d_example_sources_match_the_documented_mix():
    doc = tomllib.loads((MIXES / "study_d_mix.toml").read_text())
    by_kind = {t["kind"]: t for t in doc["traffic"]}
    assert by_kind["udp_cbr"]["share"] == 0.1
    assert by_kind["ftp"]["size"] == {"kind": "constant", "bytes": 100000}
    tcp_sources = by_kind["ftp"]["sessions"] + by_kind["mah"]["users"]
    assert by_kind["ftp"]["sessions"] / tcp_sources == pytest.approx(0.2)
    assert tcp_sources + by_kind["udp_cbr"]["flows"] == 200


@pytest.mark.parametrize("example", GREEDY, ids=[p.stem for p in GREEDY])
def test_greedy_udp_examples_run_and_print_the_mix_metrics(tmp_path: Path, example: Path):
    out = tmp_path / "res"
    proc = cli("run", example, "--out", out, *(a for kv in SHORT for a in ("--set", kv)))
    assert proc.returncode == 0, proc.stderr
    for label in ("TCP goodput", "UDP loss probability", "queue runs of 1 / 2 / >=3"):
        assert label in proc.stdout
    res = aqmlab.Results.open(out)
    m = mt.mix_metrics(res)
    assert 5.0 < m["goodput_mbps"] < 10.0
    assert m["udp_lost"] > 0 and 0 < m["udp_loss"] < 1
    assert m["flows_tcp"] == 200 and 0 < m["jain_tcp"] <= 1
    assert m["flows_udp"] == 10 and m["jain_udp"] > 0.5
    assert mt.loss_run_distribution(res.loss_runs, "udp_all")["count"].sum() > 0


def test_greedy_udp_examples_differ_only_in_the_queue():
    docs = [tomllib.loads(p.read_text()) for p in GREEDY]
    assert {d["queue"]["kind"] for d in docs} == {"droptail", "red", "gred_i"}
    assert sorted(d["queue"].get("gentle") for d in docs if d["queue"]["kind"] == "red") == [
        False,
        True,
    ]
    rest = [{k: v for k, v in d.items() if k not in ("queue", "name")} for d in docs]
    assert all(r == rest[0] for r in rest)


def test_same_seed_gives_identical_mix_tables(tmp_path: Path):
    runs = [
        aqmlab.run(
            MIXES / "greedy_udp_red.toml",
            out=tmp_path / f"r{i}",
            overrides=("duration_s=12", "warmup_s=2"),
        )
        for i in range(2)
    ]
    for table in ("udp_flows", "loss_runs", "queue_delay", "connections"):
        assert runs[0][table].equals(runs[1][table]), table
    assert runs[0].summary["summary"]["udp"] == runs[1].summary["summary"]["udp"]


# --- scenario files ---------------------------------------------------------------------------

FTP_EMPIRICAL = """
[[traffic]]
kind = "ftp"
rate = 2.0
size = { kind = "empirical", file = "sizes.csv" }
"""


def test_ftp_sizes_from_an_empirical_file(tmp_path: Path):
    (tmp_path / "sizes.csv").write_text("bytes,cdf\n1000,0.5\n50000,1.0\n", encoding="utf-8")
    p = write_scenario(tmp_path, BASE + FTP_EMPIRICAL)
    resolved = sc.load(p)
    assert resolved["traffic"][1]["size"] == {
        "kind": "empirical",
        "points": [[1000.0, 0.5], [50000.0, 1.0]],
        "source": "sizes.csv",
    }
    res = aqmlab.run(p)
    ftp = res.connections.filter(pl.col("source") == 1)
    assert ftp.height > 0
    assert ftp["response_bytes"].min() >= 1000 and ftp["response_bytes"].max() <= 50000


def test_ftp_size_file_errors_name_the_field(tmp_path: Path):
    p = write_scenario(tmp_path, BASE + FTP_EMPIRICAL)
    with pytest.raises(sc.ScenarioError, match=r"traffic\[1\]\.size\.file = \"sizes.csv\""):
        sc.load(p)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ('kind = "udp_cbr"\nflows = 2', "traffic[0].rate_mbps"),
        ('kind = "udp_cbr"\nflows = 2\nshare = -0.1', "traffic[0].share"),
        (
            'kind = "udp_cbr"\nflows = 2\nrate_mbps = 1.0\npacket_bytes = 0',
            "traffic[0].packet_bytes",
        ),
        (
            'kind = "ftp"\nsessions = 3\nrate = 1.0\nsize = {kind="constant", bytes=10}',
            "traffic[0].sessions",
        ),
        (
            'kind = "ftp"\nrate = 1.0\nsize = {kind="pareto", mean_bytes=1e5, shape=0.9}',
            "traffic[0].size.shape",
        ),
        (
            'kind = "ftp"\nrate = 1.0\nsize = {kind="pareto", bytes=10}',
            "traffic[0].size.bytes: unknown field",
        ),
    ],
)
def test_bad_mix_entries_are_one_line_errors(tmp_path: Path, entry: str, field: str):
    text = edit(BASE, 'kind = "bulk"\nflows = 6\nstart_jitter_s = 0.5', entry)
    p = write_scenario(tmp_path, text)
    proc = cli("validate", p)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and field in line, line


def test_summary_json_has_the_mix_totals(tmp_path: Path):
    text = BASE + '\n[[traffic]]\nkind = "udp_cbr"\nflows = 2\nrate_mbps = 0.5\n'
    out = tmp_path / "res"
    proc = cli("run", write_scenario(tmp_path, text), "--out", out)
    assert proc.returncode == 0, proc.stderr
    core = json.loads((out / "summary.json").read_text())["summary"]
    assert core["udp"]["flows"] == 2
    assert core["tcp_goodput_mbps"] > 0
    # 2 × 0.5 Mb/s of 1,000-byte packets for the 4 s measured: 500 packets.
    assert core["udp"]["sent"] == 500
    assert "TCP goodput" in proc.stdout
