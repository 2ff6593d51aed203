"""The bed's DCTCP and short-flow (Web-like) additions, in the parts that run without root or a
guest: the schedule's law and files, the FCT metric by hand, the marking queues' parameters
on both sides, the qdisc mark counters, and the short-flow agents end to end on loopback."""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import aqmlab
from aqmlab import scenario as sc
from validation.linux import __main__ as cli
from validation.linux import agents, bed, fct, model, qdiscs, workload

# --- the schedule -----------------------------------------------------------------------------


def test_cut_pareto_mean_by_hand() -> None:
    # α = 2, x_m = 1, cut at 4: E[min(X, 4)] = ∫₀⁴ P(X > x) dx = 1 + ∫₁⁴ x⁻² dx = 1.75.
    law = workload.WebLaw(shape=2.0, scale_bytes=1.0, cap_bytes=4)
    assert law.mean_response_bytes() == pytest.approx(1.75)
    # λ = load · payload bytes/s / mean size.
    law = workload.WebLaw(load=0.5)
    capacity = 10e6 / 8 * 1448 / 1514
    assert law.opens_per_s() == pytest.approx(0.5 * capacity / law.mean_response_bytes())


def test_schedule_follows_its_law_and_its_seed() -> None:
    law = workload.WebLaw(load=0.5)
    rows = workload.schedule(law, 400.0, seed=7)
    assert rows == workload.schedule(law, 400.0, seed=7)
    assert rows != workload.schedule(law, 400.0, seed=8)
    t = np.array([r[0] for r in rows])
    size = np.array([r[2] for r in rows])
    assert np.all(np.diff(t) >= 0) and t[0] >= 0 and t[-1] < 400.0
    # Poisson count: mean λT, standard deviation √(λT); 5 σ.
    expect = law.opens_per_s() * 400.0
    assert abs(len(rows) - expect) < 5 * math.sqrt(expect)
    assert size.min() >= law.scale_bytes and size.max() <= law.cap_bytes
    assert {r[1] for r in rows} == {law.request_bytes}
    # The tail: P(X > 10 KB) = (4/10)^1.2 = 0.333, P(X > 100 KB) = 0.0211.
    n = len(size)
    assert abs(np.mean(size > 10_000) - 0.4**1.2) < 5 * math.sqrt(0.333 * 0.667 / n)
    assert abs(np.mean(size > 100_000) - 0.04**1.2) < 5 * math.sqrt(0.0211 / n)


def test_schedule_checks_its_law() -> None:
    for bad in (dict(load=1.0), dict(load=0.0), dict(shape=1.0), dict(request_bytes=10)):
        with pytest.raises(ValueError):
            workload.schedule(workload.WebLaw(**bad), 10.0, 1)


def test_schedule_file_is_read_alike_by_both_sides(tmp_path: Path) -> None:
    law = workload.WebLaw()
    rows = workload.schedule(law, 3.0, seed=1)
    path = tmp_path / "schedule.csv"
    workload.write(rows, path, law, 1)
    assert workload.read(path) == rows
    assert [(t, q, r) for _, t, q, r in agents.read_schedule(str(path))] == rows
    # aqmlab's replay takes the same file beside the greedy flows.
    doc = model.scenario(flows=2, rtts_ms=[40.0, 40.0], limit=100, seconds=4.0, warmup=1.0,
                         preset="linux-cubic", replay_file=str(path))  # fmt: skip
    aqmlab.validate(sc.resolve(doc))
    res = aqmlab.run(doc, out=tmp_path / "a")
    replayed = res.connections.filter(res.connections["source"] == model.REPLAY_SOURCE)
    assert replayed.height == len(rows)
    assert sorted(replayed["response_bytes"].to_list()) == sorted(r[2] for r in rows)
    # The greedy flows start as they do without the short flows (their own streams).
    alone = dict(doc, traffic=doc["traffic"][:1])
    assert model.start_times(doc) == model.start_times(alone)
    got = fct.aqmlab(res.connections, model.REPLAY_SOURCE, 0.0, 4.0 + fct.TAIL_S)
    assert got["all"]["n"] == len(rows)


# --- flow completion times --------------------------------------------------------------------


def test_size_classes_at_their_edges() -> None:
    assert fct.size_class(1) == "<10 KB" and fct.size_class(9_999) == "<10 KB"
    assert fct.size_class(10_000) == "10-100 KB" and fct.size_class(99_999) == "10-100 KB"
    assert fct.size_class(100_000) == ">100 KB"


def test_fct_table_by_hand() -> None:
    nan = math.nan
    # warm-up 2, end 20: counted are the opens in [2, 15).
    opened = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 14.9, 15.0]
    size = [500, 500, 500, 500, 50_000, 200_000, 500, 500]
    done = [1.5, 2.1, 3.2, 4.3, 6.0, nan, 15.3, 15.1]
    t = fct.table(opened, size, done, warmup=2.0, seconds=20.0)
    small = t["<10 KB"]  # FCTs 100, 200, 300, 400 ms
    assert small["n"] == 4 and small["unfinished"] == 0
    assert small["median_ms"] == pytest.approx(250.0)
    assert small["p90_ms"] == pytest.approx(370.0)  # 300 + 0.7 · 100 (linear, rank 2.7)
    assert small["p99_ms"] == pytest.approx(397.0)
    assert t["10-100 KB"]["n"] == 1 and t["10-100 KB"]["median_ms"] == pytest.approx(1000.0)
    big = t[">100 KB"]
    assert big["n"] == 1 and big["unfinished"] == 1 and math.isnan(big["median_ms"])
    assert t["all"]["n"] == 6 and t["all"]["unfinished"] == 1


def test_fct_rows_and_summary() -> None:
    lin = fct.table([3.0, 4.0], [500, 500], [3.1, 4.2], 2.0, 20.0)
    ours = fct.table([3.0, 4.0], [500, 500], [3.2, 4.4], 2.0, 20.0)
    rows = fct.comparison_rows("c", lin, ours, "m")
    med = next(r for r in rows if r.metric == "FCT <10 KB median (ms)")
    assert med.linux == pytest.approx(150.0) and med.aqmlab == pytest.approx(300.0)
    assert med.passed is None and med.model == "m"
    line = next(x for x in fct.summary("c", lin, ours) if x["class"] == "<10 KB")
    assert line["median ms (L / a)"] == "150 / 300 (+100%)"


# --- DCTCP: marking queues and marks ----------------------------------------------------------


def _opt(args: list[str], key: str) -> str:
    return args[args.index(key) + 1]


def test_marking_queues_match_on_both_sides() -> None:
    tc, q = qdiscs.tc_args("fq_codel_ce", 10240), qdiscs.aqmlab_queue("fq_codel_ce", 10240)
    assert "ecn" in tc and "noecn" not in tc and q["ecn"] is True
    assert _opt(tc, "ce_threshold") == "1ms" and q["ce_threshold_ms"] == 1.0
    plain = qdiscs.aqmlab_queue("fq_codel", 10240)
    assert {k: v for k, v in q.items() if k not in ("ecn", "ce_threshold_ms")} == {
        k: v for k, v in plain.items() if k != "ecn"
    }
    tc, q = qdiscs.tc_args("red_step", 1000), qdiscs.aqmlab_queue("red_step", 1000)
    # The same thresholds in whole packets: frames of 1514 bytes in Linux, 1500-byte IP
    # packets in aqmlab.
    assert int(_opt(tc, "min")) / 1514 == q["min"] / 1500 == 5
    assert int(_opt(tc, "max")) - int(_opt(tc, "min")) == q["max"] - q["min"] == 1
    assert int(_opt(tc, "limit")) / 1514 == q["limit"] / 1500 == 1000
    assert int(_opt(tc, "avpkt")) == 1514 and q["avpkt"] == 1500
    assert int(_opt(tc, "burst")) == q["burst"] == 6
    assert float(_opt(tc, "probability")) == q["probability"]
    assert "ecn" in tc and q["ecn"] and not q["harddrop"] and "harddrop" not in tc
    assert set(qdiscs.MARKING) <= set(qdiscs.NAMES)


def test_dropping_red_matches_on_both_sides() -> None:
    tc, q = qdiscs.tc_args("red", 1000), qdiscs.aqmlab_queue("red", 1000)
    assert int(_opt(tc, "min")) / 1514 == q["min"] / 1500 == 5
    assert int(_opt(tc, "max")) / 1514 == q["max"] / 1500 == 15
    # burst as tc would default it, (2·min + max)/(3·avpkt), truncated, on either side.
    for mn, mx, av in ((int(_opt(tc, "min")), int(_opt(tc, "max")), 1514),
                       (q["min"], q["max"], q["avpkt"])):  # fmt: skip
        assert (2 * mn + mx) // (3 * av) == q["burst"] == int(_opt(tc, "burst")) == 8
    assert "ecn" not in tc and q["ecn"] is False and "red" not in qdiscs.MARKING


def test_dctcp_only_through_a_marking_queue() -> None:
    qdiscs.check_cc("red_step", "dctcp", bed.ECN_CCS)
    qdiscs.check_cc("pfifo", "cubic", bed.ECN_CCS)
    with pytest.raises(ValueError, match="marking queue"):
        qdiscs.check_cc("fq_codel", "dctcp", bed.ECN_CCS)
    assert bed.ecn_sysctls("dctcp") == {"net__ipv4__tcp_ecn": "1"}
    assert bed.ecn_sysctls("cubic") == {} and bed.receiver_cc("cubic") == []
    assert bed.receiver_cc("dctcp") == ["--cc", "dctcp"]
    spec = {"cc": "dctcp", "flows": 1, "rtts_ms": [40.0], "limit": 1000, "seconds": 60.0,
            "starts_s": [0.1], "rate_mbit": 10.0, "sample_ms": 10.0, "rt_prio": 1,
            "qdisc": "red_step"}  # fmt: skip
    cfg = cli.bed_config(spec)
    assert cfg.sysctls == {"net__ipv4__tcp_ecn": "1"} and cfg.qdisc_args[0] == "red"
    assert cfg.web_schedule == ""
    presets = cli.parse_presets(model.DEFAULT_PRESETS)
    assert presets["dctcp"] == "linux-dctcp"


def _rtattr(kind: int, data: bytes) -> bytes:
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + bytes((4 - n % 4) % 4)


def test_marks_from_each_qdiscs_xstats() -> None:
    # fq_codel: u32 type, then maxpacket, drop_overlimit, ecn_mark, …, ce_mark (7th).
    fq = struct.pack("I" * 10, 0, 1514, 0, 3, 9, 1, 2, 5, 0, 0)
    assert agents.marks("fq_codel", fq) == 8
    assert agents.marks("red", struct.pack("IIII", 1, 2, 0, 7)) == 7
    assert agents.marks("codel", struct.pack("I" * 9, 1514, 1, 1, 0, 0, 0, 4, 0, 6)) == 10
    assert agents.marks("pfifo", b"") == 0 and agents.marks("htb", struct.pack("I", 9)) == 0
    # The dump reader keeps the xstats.
    body = struct.pack("BBHiIII", 0, 0, 0, 3, 0x100000, 0x10001, 1)
    body += _rtattr(agents.TCA_KIND, b"red\0") + _rtattr(agents.TCA_XSTATS, bytes(16))
    msg = struct.pack("IHHII", 16 + len(body), 36, 2, 1, 0) + body
    qs, _ = agents.parse_qdisc_dump(msg)
    assert qs[0]["kind"] == "red" and qs[0]["xstats"] == bytes(16)


def test_labels_with_short_flows() -> None:
    assert cli.label("cubic", 2, "40", 100, 60.0, web_load=0.5) == "cubic-n2-rtt40-web50-q100-60s"
    assert (
        cli.label("cubic", 2, "40", 1000, 60.0, "codel", 0.5)
        == "cubic-n2-rtt40-web50-codel-q1000-60s"
    )


# --- the short-flow agents on loopback --------------------------------------------------------


def test_request_header() -> None:
    req = agents.request(5, 300, 12345)
    assert len(req) == 300 and agents.WEB_HEADER.unpack(req[:20]) == (5, 300, 12345)


def test_web_agents_on_loopback(tmp_path: Path) -> None:
    """web_serve and web_fetch as the bed runs them, on 127.0.0.1 (no namespace needed):
    every row's response arrives whole, after its open."""
    sched = tmp_path / "s.csv"
    sched.write_text("start_s,request_bytes,response_bytes\n0.0,300,1\n0.05,300,70000\n"
                     "0.1,2000,5000\n")  # fmt: skip
    port = 20000 + os.getpid() % 20000
    now = time.monotonic()
    script = str(bed.AGENTS)
    srv = subprocess.Popen(
        [sys.executable, script, "web_serve", "--listen", f"127.0.0.1:{port}", "--cc", "reno",
         "--until", repr(now + 20), "--out", str(tmp_path / "serve.json")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert srv.stdout.readline().strip() == "ready"
        t0 = time.monotonic() + 0.5
        subprocess.run(
            [sys.executable, script, "web_fetch", "--t0", repr(t0), "--until", repr(t0 + 15),
             "--out", str(tmp_path / "fct.csv"), "--server", f"127.0.0.1:{port}",
             "--schedule", str(sched), "--end", repr(t0 + 1.5)],
            check=True, timeout=20,
        )  # fmt: skip
    finally:
        srv.terminate()
        srv.wait(10)
    import polars as pl

    got = pl.read_csv(tmp_path / "fct.csv").sort("row")
    assert got["bytes"].to_list() == [1, 70000, 5000]
    assert (got["last_byte_s"] >= got["first_byte_s"]).all()
    assert (got["first_byte_s"] > got["opened_s"]).all()
    assert (got["opened_s"] >= got["start_s"]).all()
    assert json.loads((tmp_path / "serve.json").read_text())["served"] == 3


def test_noise_includes_the_fct_quantiles() -> None:
    from validation.linux import measure

    def run(med: float) -> dict:
        t = {c: {"median_ms": med, "p99_ms": 2 * med} for c in ("<10 KB", "all")}
        return {"goodput_mbps": [1.0], "aggregate_goodput_mbps": 1.0, "drop_rate": 0.1,
                "mean_queue_pkts": 5.0, "jain": 1.0, "utilization": 0.9, "fct": t}  # fmt: skip

    df = measure.noise("c", [run(100.0), run(110.0), run(120.0)])
    row = df.filter(df["metric"] == "FCT <10 KB median (ms)").row(0, named=True)
    assert row["mean"] == pytest.approx(110.0) and row["max_rel_dev"] == pytest.approx(10 / 110)
    assert "FCT all p99 (ms)" in df["metric"].to_list()
