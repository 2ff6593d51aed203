"""`aqmlab flent RUN`: a run as a Flent data file (docs/flent.md).

The document's structure is checked directly (format 4, the common grid, the metadata Flent
needs, aggregate series equal to the bottleneck table), per-flow series against a synthetic
`tcp_state.parquet` of flows with known byte rates, and Flent itself (2.3.0 from the
registry, cached, see flent_support.py) opens the files and draws its plots headless.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import BASE as BASE_SCENARIO
from conftest import cli, edit, write_scenario
from flent_support import flent_command, run_flent

from aqmlab.analysis import flent_export as fe

# The conftest scenario, 6 s with a 1-s warm-up, reverse (download) bulk flows; the bottleneck
# reports every 0.5 s so that the grid (0.2 s) and the intervals cross.
SCENARIO = edit(BASE_SCENARIO, "duration_s = 5.0", "duration_s = 6.0") + (
    "\n[measure]\ninterval_s = 0.5\n"
)
REQUIRED_METADATA = (
    "NAME",
    "TITLE",
    "TIME",
    "T0",
    "HOST",
    "HOSTS",
    "LOCAL_HOST",
    "NOTE",
    "LENGTH",
    "TOTAL_LENGTH",
    "STEP_SIZE",
    "TEST_PARAMETERS",
    "DATA_FILENAME",
    "SERIES_META",
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("flent-run")
    scenario = write_scenario(d, SCENARIO)
    proc = cli("run", scenario, "--out", d / "res", "-q")
    assert proc.returncode == 0, proc.stderr
    return d / "res"


# --- resampling ----------------------------------------------------------------------------


def test_window_means_is_the_time_average_over_each_step():
    # Windows of 0.5 s ending at 0.5, 1.0, 1.5 holding 2, 4, 6; cells of 0.2 s.
    x = fe.grid(1.5, 0.2)
    assert x.tolist() == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6])
    got = fe.window_means(np.array([0.5, 1.0, 1.5]), np.array([2.0, 4.0, 6.0]), 0.5, x, 0.2)
    # x = 0: (-0.2, 0] before any window; (0.4, 0.6]: half 2, half 4; (1.4, 1.6]: only
    # (1.4, 1.5] is covered, by 6.
    assert got[0] is None
    assert got[1:] == pytest.approx([2.0, 2.0, 3.0, 4.0, 4.0, 6.0, 6.0, 6.0])
    # A NaN sample (an undefined window) is a gap, not a zero.
    gap = fe.window_means(np.array([0.5, 1.0]), np.array([2.0, np.nan]), 0.5, x, 0.2)
    assert gap[1:3] == pytest.approx([2.0, 2.0]) and gap[5] is None


def test_cumulative_rate_is_bytes_per_step():
    t = np.array([1.0, 2.0, 3.0])
    b = np.array([0.0, 1_000_000.0, 1_250_000.0])  # 8 Mbit/s, then 2 Mbit/s
    x = fe.grid(4.0, 0.5)
    got = fe.cumulative_rate_mbps(t, b, x, 0.5)
    # x = 0.5 and 1.0: steps (0, 0.5] and (0.5, 1.0] end before the first sample.
    assert got[:3] == [None, None, None]
    assert got[3:7] == pytest.approx([8.0, 8.0, 2.0, 2.0])
    assert got[7:] == [None, None]  # after the last sample


# --- the document of a real run (aggregate series) -----------------------------------------


def test_cli_writes_a_flent_document(run_dir: Path, tmp_path: Path):
    out = tmp_path / "run.flent.gz"
    proc = cli("flent", run_dir, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "rrul_be_nflows" in proc.stdout and "aggregate" in proc.stdout
    doc = fe.read(out)
    assert doc["version"] == 4
    meta = doc["metadata"]
    for key in REQUIRED_METADATA:
        assert key in meta, key
    summary = json.loads((run_dir / "summary.json").read_text())
    assert meta["NAME"] == "rrul_be_nflows"
    assert meta["TITLE"] == summary["scenario"]["name"] == "test"
    assert meta["STEP_SIZE"] == 0.2 and meta["TOTAL_LENGTH"] == 6.0 and meta["DELAY"] == 1.0
    assert meta["TIME"].endswith("Z") and meta["T0"] == meta["TIME"]
    assert meta["DATA_FILENAME"] == "run.flent.gz"
    assert "aqmlab 0.1.0" in meta["NOTE"] or summary["version"]["aqmlab"] in meta["NOTE"]
    assert meta["AQMLAB"]["mode"] == "aggregate"
    assert meta["TEST_PARAMETERS"]["upload_streams"] == 1
    assert meta["TEST_PARAMETERS"]["download_streams"] == 1

    x = doc["x_values"]
    assert len(x) == 31 and x[0] == 0 and x[-1] == pytest.approx(6.0)
    assert all(b - a == pytest.approx(0.2) for a, b in itertools.pairwise(x))
    results = doc["results"]
    for name, values in results.items():
        assert len(values) == len(x), name
    for name in (
        "TCP upload BE::1",
        "TCP download BE::1",
        "Ping (ms) ICMP",
        "TCP upload sum",
        "TCP download sum",
        "TCP totals",
        "Ping (ms) avg",
    ):
        assert name in results, name
    # Series that are aggregates say so, where Flent users look (SERIES_META) and in AQMLAB.
    for name in ("TCP upload BE::1", "TCP download BE::1", "Ping (ms) ICMP"):
        assert meta["SERIES_META"][name]["AQMLAB_AGGREGATE"] is True
        assert meta["AQMLAB"]["series"][name].startswith("AGGREGATE")
    assert meta["SERIES_META"]["TCP download BE::1"]["UNITS"] == "Mbits/s"

    # The download series is the reverse bottleneck throughput, averaged over each 0.2-s step.
    b = pl.read_parquet(run_dir / "bottleneck.parquet").filter(pl.col("direction") == "reverse")
    rate = dict(zip(b["t_s"].to_list(), b["throughput_mbps"].to_list(), strict=True))
    down = results["TCP download BE::1"]
    assert down[0] is None
    assert down[2] == pytest.approx(rate[0.5], abs=1e-6)  # (0.2, 0.4] in (0, 0.5]
    assert down[3] == pytest.approx((rate[0.5] + rate[1.0]) / 2, abs=1e-6)  # (0.4, 0.6]
    assert down[30] == pytest.approx(rate[6.0], abs=1e-6)
    assert results["TCP totals"][10] == pytest.approx(
        results["TCP upload BE::1"][10] + down[10], abs=1e-5
    )
    # Ping: never below its base RTT; above it once the reverse queue has built up.
    base = meta["AQMLAB"]["ping_base_rtt_ms"]
    ping = [v for v in results["Ping (ms) ICMP"] if v is not None]
    assert len(ping) == 30 and min(ping) >= base - 1e-6
    q = pl.read_parquet(run_dir / "queue.parquet").filter(
        (pl.col("direction") == "reverse") & (pl.col("t_s") > 2.0)
    )
    queued_ms = q["mean_bytes"].mean() * 8 / 10e6 * 1e3  # 10 Mbit/s bottleneck
    assert queued_ms > 1.0
    assert np.mean(ping[15:]) == pytest.approx(base + queued_ms, rel=0.1)
    # Raw values: every series Flent measured has records with absolute times.
    assert doc["raw_values"]["Ping (ms) ICMP"][0]["t"] > 1e9
    # The queues as Flent's qdisc statistics, at the tables' own times.
    params = meta["TEST_PARAMETERS"]
    assert params.get("qdisc_stats_hosts") == "forward,reverse"
    records = doc["raw_values"]["qdisc_stats_reverse"]
    t0 = records[0]["t"] - 0.1
    backlog = [r for r in records if "backlog_bytes" in r]
    assert (
        len(backlog)
        == q.height
        + pl.read_parquet(run_dir / "queue.parquet")
        .filter((pl.col("direction") == "reverse") & (pl.col("t_s") <= 2.0))
        .height
    )
    assert backlog[-1]["t"] - t0 == pytest.approx(6.0, abs=1e-5)
    assert backlog[-1]["delay"] == pytest.approx(backlog[-1]["backlog_bytes"] * 8e-4, rel=1e-5)
    drops = [r for r in records if "dropped" in r]
    assert len(drops) == b.height == 12
    assert sum(r["dropped"] for r in drops) == sum(
        b[c].sum() for c in ("drops_early", "drops_forced", "drops_overflow")
    )


def test_export_is_deterministic(run_dir: Path, tmp_path: Path):
    a = fe.export(run_dir, tmp_path / "a" / "x.flent.gz").path.read_bytes()
    b = fe.export(run_dir, tmp_path / "b" / "x.flent.gz").path.read_bytes()
    assert a == b
    assert a[4:8] == b"\0\0\0\0"  # gzip header: no modification time
    # The default place: beside the run's tables, named after the scenario.
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    done = fe.export(copy)
    assert done.path == copy / "test.flent.gz" and done.mode == "aggregate"


def test_not_a_run_is_one_line_error(tmp_path: Path):
    proc = cli("flent", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error:") and "summary.json" in proc.stderr
    assert proc.stderr.count("\n") == 1
    (tmp_path / "summary.json").write_text("{not json")
    proc = cli("flent", tmp_path)
    assert proc.returncode == 2 and "not the summary of an `aqmlab run`" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_table_without_a_needed_column_is_left_out(run_dir: Path, tmp_path: Path):
    """`measure.columns` may drop columns: the series that need them go, with a note."""
    d = tmp_path / "res"
    shutil.copytree(run_dir, d)
    pl.read_parquet(d / "queue.parquet").drop("mean_bytes").write_parquet(d / "queue.parquet")
    doc = fe.read(fe.export(d, tmp_path / "f.flent.gz").path)
    assert "Ping (ms) ICMP" not in doc["results"] and "TCP download BE::1" in doc["results"]
    assert "queue.parquet lacks mean_bytes: not used" in doc["metadata"]["AQMLAB"]["notes"]
    assert all("backlog_bytes" not in r for r in doc["raw_values"]["qdisc_stats_reverse"])


# --- per-flow series from tcp_state.parquet ------------------------------------------------

# Two downloads (server -> left client: reverse) and one upload (left client sends: forward),
# sampled every 100 ms from 0.5 s to 4.5 s, at constant byte rates.
FLOWS = {0: ("server", 1_000_000.0), 1: ("server", 250_000.0), 2: ("client", 500_000.0)}
SRTT = {0: 40.0, 1: 90.0, 2: 25.0, 99: 60.0}
CWND = {0: 14600, 1: 29200, 2: 7300, 99: 2920}


def synthetic_tcp_state(conn_sides: dict[int, tuple[str, float]]) -> pl.DataFrame:
    rows = []
    for cid, (sender, rate) in conn_sides.items():
        for k in range(41):
            t = round(0.5 + 0.1 * k, 9)
            for side in ("client", "server"):
                sent = rate * (t - 0.5) if side == sender else 100.0 * (k > 0)
                rows.append(
                    {
                        "t_s": t,
                        "conn_id": cid,
                        "side": side,
                        "ca_state": "open",
                        "cwnd": CWND[cid] if side == sender else 2920,
                        "ssthresh": 1 << 30,
                        "srtt_ms": SRTT[cid] if side == sender else 1.0,
                        "rttvar_ms": SRTT[cid] / 4,
                        "rto_ms": 1000.0,
                        "in_flight": 0,
                        "snd_una": round(sent),
                        "snd_nxt": round(sent),
                    }
                )
    return pl.DataFrame(
        rows,
        schema={
            "t_s": pl.Float64,
            "conn_id": pl.UInt64,
            "side": pl.String,
            "ca_state": pl.String,
            "cwnd": pl.UInt64,
            "ssthresh": pl.UInt64,
            "srtt_ms": pl.Float64,
            "rttvar_ms": pl.Float64,
            "rto_ms": pl.Float64,
            "in_flight": pl.UInt64,
            "snd_una": pl.UInt64,
            "snd_nxt": pl.UInt64,
        },
    )


@pytest.fixture(scope="module")
def traced_run(run_dir: Path, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("flent-traced") / "res"
    shutil.copytree(run_dir, d)
    conns = pl.read_parquet(d / "connections.parquet")
    assert set(FLOWS) <= set(conns["conn_id"].to_list())
    assert (
        conns.filter(pl.col("conn_id").is_in(list(FLOWS)))["client_side"].to_list() == ["left"] * 3
    )
    synthetic_tcp_state(FLOWS).write_parquet(d / "tcp_state.parquet")
    return d


def test_per_flow_throughput_equals_the_known_rates(traced_run: Path, tmp_path: Path):
    done = fe.export(traced_run, tmp_path / "flows.flent.gz")
    assert (done.mode, done.upload_streams, done.download_streams) == ("per_flow", 1, 2)
    doc = fe.read(done.path)
    meta, results, x = doc["metadata"], doc["results"], doc["x_values"]
    assert meta["TEST_PARAMETERS"]["upload_streams"] == 1
    assert meta["TEST_PARAMETERS"]["download_streams"] == 2
    want = {
        "TCP download BE::1": (0, 8.0),
        "TCP download BE::2": (1, 2.0),
        "TCP upload BE::1": (2, 4.0),
    }
    for name, (cid, mbps) in want.items():
        sm = meta["SERIES_META"][name]
        assert sm["AQMLAB_CONN_ID"] == cid and "AQMLAB_AGGREGATE" not in sm
        values = results[name]
        for xi, v in zip(x, values, strict=True):
            if 0.5 < xi < 4.5 + 0.2 - 1e-9:  # the steps that overlap [0.5, 4.5]
                assert v == pytest.approx(mbps, rel=1e-9), (name, xi)
            else:
                assert v is None, (name, xi)
        raw = doc["raw_values"][name]
        assert len(raw) == sum(v is not None for v in values)
        assert raw[0]["tcp_rtt"] == SRTT[cid]
        assert raw[0]["tcp_rtt_var"] == SRTT[cid] / 4
        assert raw[0]["tcp_cwnd"] == pytest.approx(CWND[cid] / 1460)
        t0 = raw[0]["t"] - raw[0]["t"] % 1
        assert raw[0]["t"] - t0 == pytest.approx(0.6, abs=1e-6)
    i = x.index(2.0)
    assert results["TCP download sum"][i] == pytest.approx(10.0)
    assert results["TCP download avg"][i] == pytest.approx(5.0)
    assert results["TCP upload sum"][i] == pytest.approx(4.0)
    assert results["TCP totals"][i] == pytest.approx(14.0)
    assert not any(meta["AQMLAB"]["notes"])
    again = fe.export(traced_run, tmp_path / "again" / "flows.flent.gz").path
    assert again.read_bytes() == done.path.read_bytes()


def test_max_flows_aggregate_and_time_options(traced_run: Path, tmp_path: Path):
    out = tmp_path / "two.flent.gz"
    proc = cli(
        "flent", traced_run, "--out", out, "--max-flows", "2", "--time", "2026-01-31T12:00:00"
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 of the 3 traced connections" in proc.stdout
    doc = fe.read(out)
    # Kept: the two that sent the most bytes (8 and 4 Mbit/s), numbered as before.
    kept = {k: v["AQMLAB_CONN_ID"] for k, v in doc["metadata"]["SERIES_META"].items() if "::" in k}
    assert kept == {"TCP download BE::1": 0, "TCP upload BE::1": 2}
    assert doc["metadata"]["TIME"] == "2026-01-31T12:00:00.000000Z"
    assert doc["raw_values"]["TCP upload BE::1"][0]["t"] == pytest.approx(1769860800.6)
    # The sums still add every traced connection (issue 36: with the series capped they read a
    # fraction of the link): the capped file's sums equal the uncapped file's.
    full = fe.read(fe.export(traced_run, tmp_path / "all.flent.gz").path)
    for name in ("TCP download sum", "TCP upload sum", "TCP totals"):
        assert doc["results"][name] == full["results"][name], name
    agg = fe.read(fe.export(traced_run, tmp_path / "agg.flent.gz", aggregate=True).path)
    assert agg["metadata"]["AQMLAB"]["mode"] == "aggregate"
    assert "TCP download BE::2" not in agg["results"]
    bad = cli("flent", traced_run, "--out", out, "--time", "yesterday")
    assert bad.returncode == 2 and "ISO 8601" in bad.stderr


def test_no_rtt_before_the_first_sample(run_dir: Path, tmp_path: Path):
    d = tmp_path / "res"
    shutil.copytree(run_dir, d)
    table = synthetic_tcp_state({0: ("server", 1_000_000.0)})
    table = table.with_columns(
        pl.when(pl.col("t_s") < 1.0).then(0.0).otherwise(pl.col("srtt_ms")).alias("srtt_ms")
    )
    table.write_parquet(d / "tcp_state.parquet")
    doc = fe.read(fe.export(d, tmp_path / "f.flent.gz").path)
    raw = doc["raw_values"]["TCP download BE::1"]
    early = raw[:2]  # x = 0.6 and 0.8: the sender's last rows still have SRTT 0
    assert all("tcp_rtt" not in r and "tcp_cwnd" in r for r in early)
    assert raw[2]["t"] - raw[0]["t"] == pytest.approx(0.4) and "tcp_rtt" in raw[2]
    assert raw[-1]["tcp_rtt"] == SRTT[0]


def test_rows_starting_late_and_unknown_connections(run_dir: Path, tmp_path: Path):
    """A flow whose rows start after it opened is anchored at 0 bytes at its start_s; a
    connection missing from connections.parquet goes the studied direction, with a note."""
    d = tmp_path / "res"
    shutil.copytree(run_dir, d)
    start = pl.read_parquet(d / "connections.parquet").filter(pl.col("conn_id") == 0)["start_s"]
    table = synthetic_tcp_state({0: ("server", 1_000_000.0), 99: ("server", 250_000.0)})
    # Conn 0: bytes counted from its start, at 1 MB/s; its rows only from 0.5 s on.
    table = table.with_columns(
        pl.when(pl.col("conn_id") == 0)
        .then(pl.col("snd_una") + round((0.5 - start[0]) * 1_000_000))
        .otherwise(pl.col("snd_una"))
        .alias("snd_una")
    )
    table.write_parquet(d / "tcp_state.parquet")
    doc = fe.read(fe.export(d, tmp_path / "f.flent.gz").path)
    first = doc["results"]["TCP download BE::1"]
    assert first[1] == pytest.approx(8.0, rel=1e-5)  # (0, 0.2]: covered from start_s on
    assert doc["metadata"]["SERIES_META"]["TCP download BE::2"]["AQMLAB_CONN_ID"] == 99
    (note,) = doc["metadata"]["AQMLAB"]["notes"]
    assert "1 connection(s) not in connections.parquet (99)" in note and "reverse" in note


def test_change_rows_at_irregular_times(run_dir: Path, tmp_path: Path):
    """interval_ms = 0: a row at every change, at irregular times; the rate over a step is
    still the bytes acknowledged in it."""
    d = tmp_path / "res"
    shutil.copytree(run_dir, d)
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(1.0, 3.0, 500))
    t = np.concatenate(([1.0], t, [3.0]))
    una = (t - 1.0) * 625_000  # 5 Mbit/s
    table = pl.DataFrame(
        {
            "t_s": t,
            "conn_id": np.zeros(len(t), dtype=np.uint64),
            "side": ["server"] * len(t),
            "snd_una": np.round(una).astype(np.uint64),
            "srtt_ms": np.full(len(t), 50.0),
        }
    )
    table.write_parquet(d / "tcp_state.parquet")
    doc = fe.read(fe.export(d, tmp_path / "f.flent.gz", step_s=0.25).path)
    values = [v for v in doc["results"]["TCP download BE::1"] if v is not None]
    assert len(values) == 8
    assert values == pytest.approx([5.0] * 8, rel=1e-4)


# --- Flent itself --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flent() -> list[str]:
    command, why = flent_command()
    if command is None:
        pytest.skip(f"Flent not available: {why}")
    return command


def _plot(flent: list[str], data: Path, plot: str, cwd: Path) -> Path:
    png = cwd / f"{plot}.png"
    proc = run_flent(flent, "-i", data, "-p", plot, "-o", png, cwd=cwd)
    # Flent logs errors and still exits with 0: its output must be clean too.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ERROR" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert png.is_file(), f"no {png.name}: {proc.stdout + proc.stderr}"
    data_ = png.read_bytes()
    assert data_.startswith(b"\x89PNG") and len(data_) > 10_000, plot
    return png


def test_flent_plots_an_aggregate_export(flent: list[str], run_dir: Path, tmp_path: Path):
    data = fe.export(run_dir, tmp_path / "agg.flent.gz").path
    for plot in ("totals", "all_scaled", "ping_cdf", "box_totals", "backlog", "drops", "delay"):
        _plot(flent, data, plot, tmp_path)
    # Flent's summary reads every series back (means over the raw values).
    proc = run_flent(flent, "-i", data, cwd=tmp_path)
    assert proc.returncode == 0 and "TCP download BE::1" in proc.stdout, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "TCP download BE::1" in ln)
    doc = fe.read(data)
    mean = np.mean([v for v in doc["results"]["TCP download BE::1"] if v is not None])
    assert float(line.split(":")[-1].split()[0]) == pytest.approx(mean, abs=0.01)


def test_flent_plots_per_flow_series(flent: list[str], traced_run: Path, tmp_path: Path):
    data = fe.export(traced_run, tmp_path / "flows.flent.gz").path
    for plot in ("download", "upload", "totals", "tcp_rtt", "tcp_cwnd"):
        _plot(flent, data, plot, tmp_path)


def test_gzip_is_what_flent_reads(run_dir: Path, tmp_path: Path):
    """Plain gzip of UTF-8 JSON, keys sorted (Flent writes indent 2 and sorted keys too)."""
    path = fe.export(run_dir, tmp_path / "x.flent.gz").path
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    doc = json.loads(text)
    assert list(doc) == sorted(doc)
    assert not any(isinstance(v, float) and math.isnan(v) for v in doc["x_values"])
