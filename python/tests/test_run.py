"""Runs through the real core: outputs, summary, --set/--seed, determinism, atomicity."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli, looks_complete

import aqmlab


def _parquet_digest(out: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.parquet"))
    }


def _rows(out: Path) -> int:
    summary = json.loads((out / "summary.json").read_text())
    return sum(summary["tables"].values())


def _need_records(out: Path) -> None:
    """Determinism checks mean something only if the run produced records."""
    assert _rows(out) > 0, "the run produced no records"


def test_cli_run_writes_results(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "res"
    proc = cli("run", scenario_file, "--out", out, "--seed", "11", "--set", "queue.limit=60")
    assert proc.returncode == 0, proc.stderr
    assert "connections:" in proc.stdout and "sim s/wall s" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 11
    assert summary["scenario"]["seed"] == 11
    assert summary["scenario"]["queue"]["limit"] == 60
    assert summary["scenario"]["tcp"]["mss"] == 1460  # preset expanded
    assert summary["overrides"] == ["queue.limit=60"]
    assert summary["version"]["aqmlab"] == aqmlab.__version__
    assert summary["version"]["core"]
    assert summary["wall_time_s"] >= 0
    assert "events" in summary["engine_stats"]
    assert isinstance(summary["summary"], dict)
    for name in summary["tables"]:
        assert (out / f"{name}.parquet").is_file()
    # Nothing but the results themselves: no temporary directory left beside them.
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_rerun_with_force_replaces_previous_results(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "res"
    assert cli("run", scenario_file, "--out", out, "--seed", "1").returncode == 0
    assert cli("run", scenario_file, "--out", out, "--seed", "2", "--force").returncode == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "scenario.toml"]


def test_validate_ok(scenario_file: Path):
    proc = cli("validate", scenario_file)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok:")
    proc = cli("validate", scenario_file, "--print", "--seed", "3")
    assert json.loads(proc.stdout)["seed"] == 3


def test_presets_command():
    proc = cli("presets")
    assert proc.returncode == 0
    assert "freebsd-2.2.8" in proc.stdout and "ns2-weigle2005" in proc.stdout


def test_python_api_in_memory(scenario_file: Path):
    res = aqmlab.run(scenario_file, seed=5)
    assert res.directory is None
    assert res.summary["seed"] == 5
    for name in res.tables:
        df = res[name]
        assert df.height == res.summary["tables"][name]
        assert getattr(res, name).equals(df)
    with pytest.raises(AttributeError):
        _ = res.no_such_table


def test_python_api_to_disk_and_reopen(tmp_path: Path, scenario_file: Path):
    calls = []
    res = aqmlab.run(scenario_file, out=tmp_path / "r", progress=calls.append, chunk_s=1.0)
    assert len(calls) == 5 and calls[-1].sim_time_s == 5.0
    again = aqmlab.Results.open(tmp_path / "r")
    assert again.summary["scenario"] == res.summary["scenario"]
    assert again.tables == res.tables
    for name in res.tables:
        assert again[name].equals(res[name])


@pytest.mark.parametrize(
    ("duration_s", "chunk_s"), [(0.5, 0.5), (5.0, 1.0), (20.0, 2.0), (60.0, 5.0), (900.0, 5.0)]
)
def test_default_chunk_is_the_one_the_memory_estimate_assumes(
    scenario_file: Path, duration_s: float, chunk_s: float
):
    """A tenth of the run within [1, 5] s (the whole run when shorter): the runner's chunks
    and the rows per chunk of the core's memory estimate (`sim/estimate.rs`) agree."""
    import aqmlab._core as core

    from aqmlab import scenario as sc
    from aqmlab.runs import runner

    resolved = sc.load(
        scenario_file, overrides=[f"duration_s={duration_s}", f"warmup_s={duration_s / 4}"]
    )
    assert core.estimate(sc.to_json(resolved))["chunk_s"] == chunk_s
    assert min(runner.default_chunk_s(duration_s), duration_s) == chunk_s
    if duration_s <= 20.0:
        calls = []
        aqmlab.run(resolved, progress=calls.append)
        assert [p.sim_time_s for p in calls][:2] == [min(chunk_s, duration_s), 2 * chunk_s][
            : len(calls)
        ]


def test_python_api_accepts_a_dict(scenario_file: Path):
    doc = aqmlab.scenario.read_toml(scenario_file)
    res = aqmlab.run(doc, seed=4, overrides=["traffic[0].flows=2"])
    assert res.summary["scenario"]["traffic"][0]["flows"] == 2


def test_failed_run_leaves_nothing_complete(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "res"

    def boom(p):
        if p.sim_time_s >= 2.0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        aqmlab.run(scenario_file, out=out, progress=boom, chunk_s=1.0)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [scenario_file]


def test_failed_rerun_keeps_previous_results(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "res"
    aqmlab.run(scenario_file, out=out, seed=1)

    def boom(p):
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        aqmlab.run(scenario_file, out=out, seed=2, progress=boom)
    assert looks_complete(out)
    assert json.loads((out / "summary.json").read_text())["seed"] == 1


def test_same_seed_same_parquet(tmp_path: Path, scenario_file: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("run", scenario_file, "--out", a, "--seed", "3", "-q").returncode == 0
    assert cli("run", scenario_file, "--out", b, "--seed", "3", "-q").returncode == 0
    assert _parquet_digest(a) == _parquet_digest(b)
    _need_records(a)
    assert _parquet_digest(a)


def test_other_seed_other_parquet(tmp_path: Path, scenario_file: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("run", scenario_file, "--out", a, "--seed", "3", "-q").returncode == 0
    assert cli("run", scenario_file, "--out", b, "--seed", "4", "-q").returncode == 0
    _need_records(a)
    assert _parquet_digest(a) != _parquet_digest(b)


def test_run_produces_the_core_tables(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "res"
    assert cli("run", scenario_file, "--out", out, "-q").returncode == 0
    _need_records(out)
    res = aqmlab.Results.open(out)
    assert {"connections", "bottleneck", "queue"} <= set(res.tables)
    assert res.connections.height > 0


def test_measure_connections_false_keeps_no_connection_rows(tmp_path: Path, scenario_file: Path):
    # docs/scenario.md: `measure.connections = false` keeps no row per connection (a long Web
    # run's largest table); everything else is unchanged.
    on = aqmlab.run(scenario_file, out=tmp_path / "on")
    off = aqmlab.run(scenario_file, out=tmp_path / "off", overrides=["measure.connections=false"])
    assert "connections" in on.tables and "connections" not in off.tables
    assert not (tmp_path / "off" / "connections.parquet").exists()
    assert set(on.tables) - set(off.tables) == {"connections"}
    assert off.summary["summary"] == on.summary["summary"]
    assert off.bottleneck.equals(on.bottleneck)


# A run with every column type the core emits (`segments`, a TCP trace, has the i64 ones).
TRACED = {
    "duration_s": 6.0,
    "warmup_s": 1.0,
    "traffic": [{"kind": "packmime", "rate": 20.0}],
    "trace": {"tcp": {"connections": [0, 1]}},
}


def test_files_hold_what_a_run_in_memory_holds(tmp_path: Path):
    """The Parquet files the extension writes from the core's columns read back as the tables
    a run kept in memory holds (Arrow tables pyarrow built from the same records): the same
    tables, schema (u64, i64, f64, bool and string columns, nullable), rows and values."""
    import pyarrow.parquet as pq

    disk = aqmlab.run(TRACED, seed=3, out=tmp_path / "d")
    mem = aqmlab.run(TRACED, seed=3)
    assert disk.tables == mem.tables
    assert disk.summary["tables"] == mem.summary["tables"]
    kinds = set()
    for name in mem.tables:
        schema = pq.read_schema(disk.path(name))
        assert schema.equals(mem.arrow(name).schema), name
        kinds |= {str(f.type) for f in schema}
        assert disk[name].equals(mem[name]), name
    assert kinds == {"uint64", "int64", "double", "bool", "string"}
    assert disk.segments.height > 0 and disk.connections.height > 0


def test_files_do_not_depend_on_chunking(tmp_path: Path, monkeypatch):
    """Row groups of exactly ROW_GROUP rows (the last one shorter), whatever the chunks the
    run was drained in: the same bytes for any `chunk_s`."""
    import pyarrow.parquet as pq

    from aqmlab.runs import runner

    monkeypatch.setattr(runner, "ROW_GROUP", 50)
    a = aqmlab.run(TRACED, seed=3, out=tmp_path / "a", chunk_s=0.25)
    aqmlab.run(TRACED, seed=3, out=tmp_path / "b", chunk_s=4.0)
    assert _parquet_digest(tmp_path / "a") == _parquet_digest(tmp_path / "b")
    rows = a.summary["tables"]["connections"]
    assert rows > 100  # several row groups
    meta = pq.ParquetFile(a.path("connections")).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sizes == [50] * (rows // 50) + ([rows % 50] if rows % 50 else [])
    assert pq.ParquetFile(a.path("loss_runs")).metadata.num_row_groups == 0  # empty: a schema


def test_column_chunks_are_zstd_with_one_context(tmp_path: Path, monkeypatch):
    """Every column chunk of every row group says zstd, its pages decompress to the values a
    run in memory holds (the writer compresses the pages of all its chunks with one zstd
    context and appends each chunk to its row group: `zstd_pages.rs`), and zstd packed them
    (the numbers' chunks smaller than their plain encoding)."""
    import pyarrow.parquet as pq

    from aqmlab.runs import runner

    monkeypatch.setattr(runner, "ROW_GROUP", 50)  # several row groups per file
    disk = aqmlab.run(TRACED, seed=3, out=tmp_path / "d")
    mem = aqmlab.run(TRACED, seed=3)
    chunks = packed = 0
    for name in mem.tables:
        meta = pq.ParquetFile(disk.path(name)).metadata
        for g in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                col = meta.row_group(g).column(c)
                assert col.compression == "ZSTD", (name, col.path_in_schema)
                chunks += 1
                packed += col.total_compressed_size < col.total_uncompressed_size
        assert disk[name].equals(mem[name]), name
    assert chunks > 100 and packed > chunks / 2


def test_interrupted_run_stops_the_writer_and_leaves_nothing(tmp_path: Path):
    """Interrupted while the writer thread has files open: no OUT, no temporary directory,
    and the next run into the same OUT works."""
    out = tmp_path / "res"

    def boom(p):
        if p.sim_time_s >= 3.0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        aqmlab.run(TRACED, out=out, progress=boom, chunk_s=0.5)
    assert list(tmp_path.iterdir()) == []
    assert looks_complete(aqmlab.run(TRACED, out=out).directory)


ANCHOR = Path(__file__).resolve().parents[2] / "bench" / "packmime_ns2_anchor.toml"


def _limit_file_size() -> None:
    """In the child: files may not grow past 300 kB, and exceeding it is an error (EFBIG),
    not the SIGXFSZ that would kill the process: a disk that fills up during the run."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_failed_write_is_one_line_and_leaves_nothing(tmp_path: Path):
    """The writer thread's error (here the file-size limit, as a full disk would) ends the run:
    one line naming OUT, the file and the cause, status 2, nothing that looks complete."""
    proc = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", ANCHOR, "--out", "r", "--set", "duration_s=90"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit_file_size,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: --out r: cannot write ")
    assert ".parquet (file too large)" in proc.stderr and proc.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def _peak_mb(duration_s: float, row_group: int, out: Path) -> float:
    """Peak resident memory (MB) of a fresh process running the ns-2 anchor for
    `duration_s` into `out` with row groups of `row_group` rows. Its own VmHWM: getrusage's
    maximum would keep the peak of the process it was forked from (pytest's)."""
    code = (
        "import sys\n"
        "from aqmlab.runs import runner\n"
        f"runner.ROW_GROUP = {row_group}\n"
        f"runner.run(sys.argv[1], out=sys.argv[2], overrides=['duration_s={duration_s}'])\n"
        "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ANCHOR), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads Linux's VmHWM")
def test_memory_of_a_long_run_stays_bounded(tmp_path: Path):
    """A run holds one row group per table and a few drained chunks, not its tables: 240
    more simulated seconds (60 000 more rows of connections and as many of exchanges, 48
    columns between them) cost no more than a few MB. Without the bound (one row group for
    the whole run) the same comparison grows by tens of MB: the first check shows that this
    test would see it."""
    whole_short = _peak_mb(90, 10**9, tmp_path / "a")
    whole_long = _peak_mb(330, 10**9, tmp_path / "b")
    assert whole_long - whole_short > 15, (whole_short, whole_long)
    short = _peak_mb(90, 2048, tmp_path / "c")
    long = _peak_mb(330, 2048, tmp_path / "d")
    assert long - short < 8, (short, long)


def test_summary_table_reads_the_core_totals():
    from aqmlab.cli import format_summary

    summary = {
        "scenario": {"name": "x", "duration_s": 30.0},
        "scenario_file": "x.toml",
        "seed": 1,
        "version": {"aqmlab": "0", "core": "0"},
        "wall_time_s": 2.0,
        "engine_stats": {"events": 1000, "sim_time_s": 30.0},
        "summary": {
            "forward": {
                "throughput_mbps": 9.5,
                "utilization": 0.95,
                "loss_rate": 0.0123,
                "mean_queue_pkts": 42.0,
            },
            "reverse": {"throughput_mbps": 0.4, "utilization": 0.04, "loss_rate": 0.0},
            "connections_started": 13,
            "connections_completed": 10,
            "connections_aborted": 0,
            "connections_unfinished": 3,
        },
        "tables": {},
    }
    text = format_summary(aqmlab.Results(summary))
    assert "9.50 Mb/s" in text and "95.00 %" in text and "1.23 %" in text
    assert "42.0 pkt" in text and "download (right → left)" in text
    assert "10 completed, 0 aborted, 3 unfinished" in text
    assert "500 events/s" in text and "15.0 sim s/wall s" in text


def test_console_script():
    import subprocess
    import sys

    script = Path(sys.executable).parent / "aqmlab"
    proc = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("aqmlab ")


# --- measure.columns: what a run keeps on disk ---------------------------------------------

WEB_FOR_COLUMNS = {
    "duration_s": 20.0,
    "warmup_s": 5.0,
    "traffic": [{"kind": "packmime", "rate": 20.0}],
}


def test_measure_columns_keeps_exactly_the_named_columns(tmp_path: Path):
    import polars as pl

    keep = ["start_s", "response_time_s", "completed"]
    full = aqmlab.run(WEB_FOR_COLUMNS, seed=3, out=tmp_path / "full")
    cut = aqmlab.run(
        {**WEB_FOR_COLUMNS, "measure": {"columns": {"exchanges": keep}}},
        seed=3,
        out=tmp_path / "cut",
    )
    ex = pl.read_parquet(tmp_path / "cut" / "exchanges.parquet")
    assert ex.columns == keep
    # The same rows and values as the full table's columns, and the same core summary: the
    # core builds every column, only the runner's writing changes.
    assert ex.equals(pl.read_parquet(tmp_path / "full" / "exchanges.parquet").select(keep))
    assert cut.summary["summary"] == full.summary["summary"]
    assert "columns" in cut.summary["scenario"]["measure"]  # recorded with the run
    other = pl.read_parquet(tmp_path / "cut" / "bottleneck.parquet")
    assert other.columns == pl.read_parquet(tmp_path / "full" / "bottleneck.parquet").columns


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"exchanges": ["start_s", "nope"]}, 'measure.columns.exchanges: no column "nope"'),
        ({"exchanges": []}, "measure.columns.exchanges = []: expected a non-empty list"),
        ({"exchanges": ["start_s", "start_s"]}, "expected a non-empty list of distinct"),
        ("start_s", 'measure.columns = "start_s": expected a table'),
    ],
)
def test_measure_columns_errors_are_one_line(tmp_path: Path, columns, message):
    scenario = {**WEB_FOR_COLUMNS, "duration_s": 6.0, "measure": {"columns": columns}}
    with pytest.raises(aqmlab.ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        aqmlab.run(scenario, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()  # nothing that looks like results
