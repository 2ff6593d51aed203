"""`aqmlab stats`: tc's layout of the bottleneck queues' statistics, reconciled with
summary.json and the bottleneck table, and the `qdisc` table of `[trace] qdisc`."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import BASE, cli, edit, write_scenario

CODEL = edit(BASE, 'kind = "droptail"\nlimit = 50', 'kind = "codel"\nlimit = 50')
NO_WARMUP = edit(CODEL, "warmup_s = 1.0", "warmup_s = 0.0")
TRACED = NO_WARMUP + "\n[trace]\nqdisc = true\n"

HEAD = re.compile(r"^qdisc (\S+) 0: dev (forward|reverse) root (.*)$")
SENT = re.compile(
    r"^ Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\)$"
)
BACKLOG = re.compile(r"^ backlog (\d+)b (\d+)p requeues (\d+)$")


def _run(tmp_path: Path, text: str, name: str) -> Path:
    out = tmp_path / name
    scenario = write_scenario(tmp_path, text, f"{name}.toml")
    proc = cli("run", scenario, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def _parse(text: str) -> dict[str, dict]:
    """tc's header lines per direction."""
    got: dict[str, dict] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := HEAD.match(line):
            s = SENT.match(lines[i + 1])
            b = BACKLOG.match(lines[i + 2])
            assert s and b, lines[i : i + 3]
            sent_bytes, sent, dropped, over, requeues = map(int, s.groups())
            got[m.group(2)] = {
                "kind": m.group(1),
                "options": m.group(3),
                "sent_bytes": sent_bytes,
                "sent_packets": sent,
                "dropped": dropped,
                "overlimits": over,
                "requeues": requeues,
                "backlog_bytes": int(b.group(1)),
                "backlog_packets": int(b.group(2)),
                "xstats": lines[i + 3],
            }
    return got


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("stats"), TRACED, "traced")


def test_stats_reconcile_with_summary_and_bottleneck_table(traced: Path):
    proc = cli("stats", traced)
    assert proc.returncode == 0, proc.stderr
    got = _parse(proc.stdout)
    assert set(got) == {"forward", "reverse"}
    summary = json.loads((traced / "summary.json").read_text())["summary"]
    b = pl.read_parquet(traced / "bottleneck.parquet")
    for d, g in got.items():
        q = summary[f"qdisc_{d}"]
        assert g["kind"] == "codel"
        assert g["options"] == "limit 50p target 5ms interval 100ms"
        for k in ("sent_bytes", "sent_packets", "dropped", "overlimits", "requeues"):
            assert g[k] == q[k], (d, k)
        assert (g["backlog_bytes"], g["backlog_packets"]) == (
            q["backlog_bytes"],
            q["backlog_packets"],
        )
        assert g["xstats"].startswith(f"  count {q['count']} lastcount {q['lastcount']} ldelay ")
        # No warm-up: the table's sums are tc's counters, and the summary's after-warm-up
        # totals are the whole run's.
        rows = b.filter(pl.col("direction") == d)
        drops = rows["drops_early"].sum() + rows["drops_forced"].sum()
        drops += rows["drops_overflow"].sum()
        assert g["sent_packets"] == rows["departures"].sum() == summary[d]["departures"]
        assert g["dropped"] == drops
        assert q["tx_bytes"] == rows["tx_bytes"].sum() == summary[d]["tx_bytes"]
        # Sent counts at dequeue, tx_bytes at the end of transmission: one packet apart.
        assert 0 <= g["sent_bytes"] - q["tx_bytes"] <= 1500
        assert q["marks"] == rows["marks"].sum()
        arrivals = rows["arrivals"].sum()
        assert arrivals == g["sent_packets"] + g["dropped"] + g["backlog_packets"]
    assert got["reverse"]["sent_packets"] > 0 and got["forward"]["sent_packets"] > 0


def test_stats_json_and_over_time(traced: Path, tmp_path: Path):
    proc = cli("stats", traced, "--json")
    assert proc.returncode == 0, proc.stderr
    raw = json.loads(proc.stdout)
    summary = json.loads((traced / "summary.json").read_text())["summary"]
    assert raw == {"forward": summary["qdisc_forward"], "reverse": summary["qdisc_reverse"]}
    out = tmp_path / "qdisc.csv"
    proc = cli("stats", traced, "--over-time", "--out", out)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [float(r["t_s"]) for r in rows[::2]] == [1.0, 2.0, 3.0, 4.0, 5.0]
    for d in ("forward", "reverse"):
        last = [r for r in rows if r["direction"] == d][-1]
        q = summary[f"qdisc_{d}"]
        for k in ("sent_packets", "sent_bytes", "dropped", "backlog_packets", "count"):
            assert float(last[k]) == q[k], (d, k)
    printed = cli("stats", traced, "--over-time")
    assert printed.returncode == 0 and printed.stdout == out.read_text()


def test_no_qdisc_table_without_the_trace(tmp_path: Path):
    out = _run(tmp_path, CODEL, "plain")
    assert not (out / "qdisc.parquet").exists()
    assert "qdisc" not in json.loads((out / "summary.json").read_text())["tables"]
    proc = cli("stats", out, "--over-time")
    assert proc.returncode == 2
    assert "no qdisc table" in proc.stderr
    # The whole-run statistics are there all the same (warm-up included, as tc counts).
    got = _parse(cli("stats", out).stdout)
    summary = json.loads((out / "summary.json").read_text())["summary"]
    assert got["reverse"]["sent_packets"] > summary["reverse"]["departures"]


def _stats_of(tmp_path: Path, queue: str, name: str) -> tuple[dict[str, dict], dict]:
    """A run of NO_WARMUP with `queue` as its [queue] table: `aqmlab stats`' header lines
    per direction, and the run's summary."""
    out = _run(tmp_path, edit(NO_WARMUP, 'kind = "codel"\nlimit = 50', queue), name)
    proc = cli("stats", out)
    assert proc.returncode == 0, proc.stderr
    return _parse(proc.stdout), json.loads((out / "summary.json").read_text())["summary"]


def test_red_linux_is_tcs_red_line(tmp_path: Path):
    """`red_linux` prints as tc prints `red`: the options tc would echo (its defaults for
    min/max applied by the core: limit/4 and a third of it), the flags, probability; tc's
    xstats, with early = prob_drop + forced_drop and marked = prob_mark + forced_mark."""
    queue = 'kind = "red_linux"\nlimit = 200000\navpkt = 1000\necn = true'
    got, summary = _stats_of(tmp_path, queue, "red")
    for d, g in got.items():
        q = summary[f"qdisc_{d}"]
        assert g["kind"] == "red"
        assert g["options"] == "limit 200000b min 16666b max 50000b ecn probability 0.02"
        assert g["xstats"] == (
            f"  marked {q['marked']} early {q['early']} pdrop {q['pdrop']} other 0"
        )
        assert q["early"] == q["prob_drop"] + q["forced_drop"]
        assert q["marked"] == q["prob_mark"] + q["forced_mark"]
        assert g["dropped"] == q["early"] + q["pdrop"]


def test_pie_linux_is_tcs_pie_line(tmp_path: Path):
    """`pie_linux` (Linux's sch_pie) prints as tc prints `pie`: tc's options with its
    defaults, and pie's xstats (`pie_dump_stats`), whose counters reconcile: every packet
    offered was accepted (pkts_in) or dropped, and what was accepted either left or is queued;
    sch_pie never counts the qdisc's overlimits."""
    queue = 'kind = "pie_linux"\necn = true'
    got, summary = _stats_of(tmp_path, queue, "pie")
    assert summary["queue_reverse"]["kind"] == "pie_linux"
    for d, g in got.items():
        q = summary[f"qdisc_{d}"]
        assert g["kind"] == "pie"
        assert g["options"] == "limit 1000p target 15ms tupdate 15ms alpha 2 beta 20 ecn"
        assert g["overlimits"] == 0
        assert g["dropped"] == q["dropped"]
        assert q["pkts_in"] == g["sent_packets"] + g["backlog_packets"]
        assert 0.0 <= q["prob"] <= 1.0
        assert q["maxq"] >= g["backlog_packets"] - 1
    assert summary["qdisc_reverse"]["pkts_in"] > 0
