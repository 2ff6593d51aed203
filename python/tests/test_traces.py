"""`[trace]` as a user runs it: `aqmlab run --pcap/--trace-tcp`, the size stated before the
run and the disk check, one-line errors, traces per sweep cell, and `aqmlab plot-conn`.
(The captures against tshark: test_pcap.py; tc statistics: test_stats_cli.py; Flent:
test_flent_export.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import BASE, cli, write_scenario

from aqmlab.errors import ScenarioError
from aqmlab.runs import captures
from aqmlab.runs.runner import run


def pcap_records(data: bytes) -> int:
    assert data[:4] == bytes.fromhex("4d3cb2a1"), "nanosecond pcap, little-endian"
    n, i = 0, 24
    while i < len(data):
        i += 16 + int.from_bytes(data[i + 8 : i + 12], "little")
        n += 1
    assert i == len(data)
    return n


def test_run_with_pcap_and_tcp_trace(tmp_path: Path):
    scenario = write_scenario(tmp_path, BASE)
    out = tmp_path / "r"
    proc = cli("run", scenario, "--out", out, "--pcap", "forward", "--pcap", "host:0",
               "--trace-tcp", "0,2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "traces: about" in proc.stderr
    s = json.loads((out / "summary.json").read_text())
    sizes = s["traces"]["captures"]
    assert set(sizes) == {"capture-forward.pcap", "capture-host-0.pcap"}
    for name, size in sizes.items():
        assert (out / name).stat().st_size == size
    assert sum(sizes.values()) <= s["traces"]["estimate_bytes"], "the estimate is upper-side"
    # The whole run's egress capture holds exactly the packets the queue sent (tc's Sent).
    n = pcap_records((out / "capture-forward.pcap").read_bytes())
    assert n == s["summary"]["qdisc_forward"]["sent_packets"] > 100
    state = pl.read_parquet(out / "tcp_state.parquet")
    assert set(state["conn_id"].unique().to_list()) == {0, 2}
    assert set(state["ca_state"].unique().to_list()) <= {"open", "disorder", "recovery", "loss"}
    assert (state["cwnd"] > 0).all() and (state["rto_ms"] > 0).all()
    segs = pl.read_parquet(out / "segments.parquet")
    assert set(segs["conn"].unique().to_list()) == {0, 2}

    png = tmp_path / "c.png"
    proc = cli("plot-conn", out, "2", "--out", png)
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_traces_do_not_change_the_results(tmp_path: Path):
    """Tracing observes: every table the untraced run writes is identical with traces on."""
    scenario = write_scenario(tmp_path, BASE)
    plain = run(scenario, out=tmp_path / "a")
    traced = run(
        scenario,
        out=tmp_path / "b",
        overrides=['trace.pcap=[{point = "reverse_in"}]', "trace.tcp={interval_ms = 10}"],
    )
    for name in plain.tables:
        assert plain[name].equals(traced[name]), name  # NaN equal to NaN, unlike Arrow's
    assert plain.summary["summary"] == traced.summary["summary"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pcap", "host:x"], "--pcap host:x: expected host:N"),
        (["--pcap", "host:99"], "trace.pcap[0].host = 99: expected a host in 0..6"),
        (["--pcap", "middle"], "trace.pcap[0].point"),
        (["--trace-tcp", "1,a"], "--trace-tcp 1,a: expected connection ids"),
        (["--set", "trace.tcp={sample = 0}"], "trace.tcp.sample = 0: expected a share"),
        (["--set", 'trace.pcap=[{point = "forward", snaplen = 4}]'], "snaplen = 4"),
    ],
)
def test_bad_trace_input_is_one_line(tmp_path: Path, args: list[str], message: str):
    scenario = write_scenario(tmp_path, BASE)
    proc = cli("run", scenario, "--out", tmp_path / "r", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "r").exists()


def test_traces_that_cannot_fit_are_refused_before_the_run(tmp_path: Path, monkeypatch):
    class Usage:
        free = 1000

    monkeypatch.setattr(captures.shutil, "disk_usage", lambda _p: Usage())
    scenario = write_scenario(tmp_path, BASE)
    with pytest.raises(ScenarioError, match=r"trace: the traces would write up to .* MB"):
        run(scenario, out=tmp_path / "r", overrides=['trace.pcap=[{point = "forward"}]'])
    assert not (tmp_path / "r").exists()
    assert not list(tmp_path.glob(".r.*")), "no temporary directory left behind"


def test_plot_conn_without_a_trace_is_one_line(tmp_path: Path):
    scenario = write_scenario(tmp_path, BASE)
    out = tmp_path / "r"
    assert cli("run", scenario, "--out", out, "-q").returncode == 0
    proc = cli("plot-conn", out, "1")
    assert proc.returncode == 2
    assert "no segments table; run with --trace-tcp" in proc.stderr


def test_traces_per_sweep_cell(tmp_path: Path):
    scenario = write_scenario(tmp_path, BASE)
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        f"""[sweep]
name = "tr"
scenario = "{scenario}"

[[axis]]
name = "traced"
field = "trace"
values = [{{}}, {{ pcap = [{{ point = "forward", sample = 0.5 }}] }}]
labels = ["off", "pcap"]
""",
        encoding="utf-8",
    )
    proc = cli("sweep", sweep, "--out", tmp_path / "out", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert "over 1 traced run(s)" in proc.stderr
    caps = sorted(p.parent.name for p in (tmp_path / "out" / "runs").glob("*/capture-*.pcap"))
    assert len(caps) == 1
