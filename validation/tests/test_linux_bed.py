"""The Linux testbed's parts that run without root: its command line, the delay line's frame
classification, the readers of tcp_info and rtnetlink qdisc dumps, the aqmlab scenario it
builds, and the metrics on hand-made samples."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import aqmlab
from aqmlab import scenario as sc
from validation.linux import __main__ as cli
from validation.linux import agents, measure, model


def test_without_root_it_says_so_and_exits_0(monkeypatch, capsys) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert cli.main(["--flows", "1", "--cc", "reno"]) == 0
    assert "needs root" in capsys.readouterr().out


def test_command_line_values() -> None:
    assert cli.parse_rtts("40", 3) == [40.0, 40.0, 40.0]
    assert cli.parse_rtts("20-80", 4) == [20.0, 40.0, 60.0, 80.0]
    assert cli.parse_rtts("20-80", 1) == [20.0]
    with pytest.raises(ValueError):
        cli.parse_rtts("80-20", 2)
    assert cli.parse_presets("freebsd-4.x") == {"*": "freebsd-4.x"}
    assert cli.parse_presets("reno=a,cubic=linux-cubic") == {"reno": "a", "cubic": "linux-cubic"}
    assert cli.parse_tcp(["min_rto_s=0.3", "recovery=newreno", "nagle=false"]) == {
        "min_rto_s": 0.3,
        "recovery": "newreno",
        "nagle": False,
    }


def _frame(proto: int, sport: int, dport: int, ethertype: bytes = b"\x08\x00") -> bytes:
    eth = b"\x02" * 6 + b"\x04" * 6 + ethertype
    ip = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, proto, 0, 0]) + bytes(8)
    return eth + ip + struct.pack("!HH", sport, dport) + bytes(16)


def test_delay_line_keys_on_either_port() -> None:
    delays = agents.parse_delays("40000:20,40001:35.5")
    assert delays == {40000: 20_000_000, 40001: 35_500_000}
    data = _frame(6, 5201, 40001)  # sender → receiver's port
    ack = _frame(6, 40001, 5201)
    assert agents.classify(data, delays, 7) == agents.classify(ack, delays, 7) == 35_500_000
    assert agents.classify(_frame(17, 40000, 5301), delays, 7) == 20_000_000  # UDP probe
    assert agents.classify(_frame(6, 1, 2), delays, 7) == 7  # unknown flow
    assert agents.classify(_frame(6, 5201, 40000, b"\x08\x06"), delays, 7) == 7  # not IPv4


def test_tcp_info_fields_at_their_offsets() -> None:
    raw = bytearray(agents.TCP_INFO_LEN)
    want = {}
    for k, (name, off, fmt) in enumerate(agents.TCP_INFO_FIELDS):
        want[name] = k + 3
        struct.pack_into(fmt, raw, off, k + 3)
    got = dict(zip([n for n, _, _ in agents.TCP_INFO_FIELDS], agents.tcp_info(bytes(raw)),
                   strict=True))  # fmt: skip
    assert got == want
    # The kernel's layout (include/uapi/linux/tcp.h): snd_cwnd follows snd_ssthresh.
    offs = {n: o for n, o, _ in agents.TCP_INFO_FIELDS}
    assert (offs["snd_ssthresh"], offs["snd_cwnd"], offs["total_retrans"]) == (76, 80, 100)


def _rtattr(kind: int, payload: bytes) -> bytes:
    n = 4 + len(payload)
    return struct.pack("HH", n, kind) + payload + bytes((-n) % 4)


def test_qdisc_dump_reader() -> None:
    stats = _rtattr(agents.TCA_STATS_BASIC, struct.pack("QI", 123456, 789) + bytes(4))
    stats += _rtattr(agents.TCA_STATS_QUEUE, struct.pack("IIIII", 42, 63000, 7, 0, 11))
    body = struct.pack("BBHiIII", 0, 0, 0, 3, 0x100000, 0x10001, 1)
    body += _rtattr(agents.TCA_KIND, b"pfifo\0") + _rtattr(agents.TCA_STATS2, stats)
    msg = struct.pack("IHHII", 16 + len(body), 36, 2, 1, 0) + body
    done = struct.pack("IHHII", 20, agents.NLMSG_DONE, 2, 1, 0) + bytes(4)
    qs, finished = agents.parse_qdisc_dump(msg + done)
    assert finished
    assert qs == [
        {
            "ifindex": 3,
            "handle": 0x100000,
            "parent": 0x10001,
            "kind": "pfifo",
            "bytes": 123456,
            "packets": 789,
            "qlen": 42,
            "backlog": 63000,
            "drops": 7,
            "requeues": 0,
            "overlimits": 11,
        }
    ]


def test_scenario_is_valid_and_matches_the_bed() -> None:
    tcp = model.overrides_for("freebsd-4.x")
    doc = model.scenario(flows=3, rtts_ms=[20.0, 50.0, 80.0], limit=60, seconds=5.0,
                         warmup=2.0, tcp=tcp)  # fmt: skip
    resolved = sc.resolve(doc)
    aqmlab.validate(resolved)
    assert resolved["queue"] == {"kind": "droptail", "limit": 60, "unit": "packets"}
    assert resolved["tcp"]["mss"] == 1448 and resolved["tcp"]["initial_window"] == 10
    assert doc["rtt"]["rtt_ms"][1] == [50.0, 50.0, 50.0]
    const = model.scenario(flows=2, rtts_ms=[40.0, 40.0], limit=100, seconds=5.0, warmup=2.0)
    assert const["rtt"] == {"kind": "constant", "rtt_ms": 40.0}
    # A Linux preset gets nothing beside it.
    assert model.overrides_for("linux-cubic") == {}
    assert model.overrides_for("linux-cubic", {"rwnd": 1}) == {"rwnd": 1}


def test_model_run_metrics_and_start_times(tmp_path: Path) -> None:
    doc = model.scenario(flows=2, rtts_ms=[30.0, 60.0], limit=50, seconds=6.0, warmup=2.0,
                         tcp=model.overrides_for("freebsd-4.x"))  # fmt: skip
    starts = model.start_times(doc)
    assert len(starts) == 2 and all(0 <= s < 1.0 for s in starts)
    m = model.run(doc, tmp_path / "aqmlab")
    got = model.metrics(m, 10.0)
    assert len(got["goodput_mbps"]) == 2
    assert 8.0 < got["aggregate_goodput_mbps"] < 9.6  # 10 Mb/s × 1448 / 1514 at most
    assert 0 < got["mean_queue_pkts"] <= 50
    assert set(m.cwnd["flow"].unique().to_list()) == {0, 1}
    # Per-flow RTTs reached the connections.
    rtts = m.connections.sort("flow")["base_rtt_ms"].to_list()
    assert rtts[0] < rtts[1]


def _write_run(d: Path) -> None:
    """Two flows over 10 s: flow 0 receives 1 MB/s, flow 1 0.5 MB/s; the queue holds 10
    packets for 0–5 s, 30 after; 5 drops in 1000 packets sent."""
    d.mkdir(parents=True)
    t = np.round(np.arange(0, 10.001, 0.01), 6)
    rows = [(x, f, int(x * rate)) for x in t for f, rate in ((0, 1e6), (1, 5e5))]
    pl.DataFrame(rows, schema=["t_s", "flow", "bytes"], orient="row").write_csv(d / "bytes.csv")
    pl.DataFrame(
        {
            "t_s": t,
            "packets": (t * 100).astype(int),
            "bytes": (t * 100).astype(int) * 1514,
            "qlen": np.where(t < 5, 10, 30),
            "backlog": 0,
            "drops": (t / 2).astype(int),
            "overlimits": 0,
            "requeues": 0,
        }
    ).write_csv(d / "qdisc.csv")
    cols = ["t_s", "flow"] + [n for n, _, _ in agents.TCP_INFO_FIELDS]
    info = [(x, f, *tuple(0 for _ in agents.TCP_INFO_FIELDS)) for x in t for f in (0, 1)]
    df = pl.DataFrame(info, schema=cols, orient="row")
    df = df.with_columns(snd_cwnd=pl.lit(10), snd_ssthresh=pl.lit(0x7FFFFFFF))
    df.write_csv(d / "tcp_info.csv")


def test_linux_metrics_on_known_samples(tmp_path: Path) -> None:
    _write_run(tmp_path / "run")
    m = measure.linux_metrics(tmp_path / "run", warmup=2.0, seconds=10.0, rate_mbit=10.0)
    assert m["goodput_mbps"] == pytest.approx([8.0, 4.0])
    assert m["jain"] == pytest.approx(144 / (2 * 80))
    # 800 sent and 4 dropped in the window, the backlog grew by 20.
    assert m["drop_rate"] == pytest.approx(4 / 824)
    assert m["mean_queue_pkts"] == pytest.approx((3 * 10 + 5 * 30) / 8, rel=1e-3)
    cw = measure.linux_cwnd(tmp_path / "run")
    assert cw["ssthresh"].null_count() == cw.height  # "infinite" ssthresh


def test_cwnd_correlation_finds_the_shift_and_sees_the_period() -> None:
    t = np.arange(0, 40, 0.01)
    saw = lambda period, phase: 50 + 50 * (((t + phase) / period) % 1.0)  # noqa: E731
    r, lag = measure.best_lag_correlation(saw(4.0, 0.0), saw(4.0, 1.3), 300)
    # The shift is found modulo the period (either direction).
    assert r > 0.99 and min(abs((lag * 0.01) % 4.0 - x) for x in (1.3, 2.7)) < 0.02
    r_other, _ = measure.best_lag_correlation(saw(4.0, 0.0), saw(5.0, 0.0), 300)
    assert r_other < 0.6
    assert measure.quantile_correlation(saw(4.0, 0.0), saw(5.0, 0.0)) > 0.99
    assert math.isnan(measure.quantile_correlation(np.ones(10), np.arange(10.0)))


def test_rows_apply_the_tolerances() -> None:
    lin = {"goodput_mbps": [5.0, 4.0], "aggregate_goodput_mbps": 9.0, "jain": 0.99,
           "drop_rate": 0.01, "drops": 10, "arrivals": 1000, "mean_queue_pkts": 50.0,
           "utilization": 1.0, "retransmits": [5, 5]}  # fmt: skip
    ours = {**lin, "goodput_mbps": [5.2, 4.5], "drop_rate": 0.0105, "mean_queue_pkts": 60.0}
    cw = [{"flow": 0, "corr": 0.97, "lag_s": 0.1, "quantile_corr": 0.99, "mean_linux": 1.0,
           "mean_aqmlab": 1.0}]  # fmt: skip
    rows = {r.metric: r for r in measure.comparison_rows("x", lin, ours, cw, 4)}
    assert rows["goodput flow 0 (Mb/s)"].passed  # 4 %
    assert not rows["goodput flow 1 (Mb/s)"].passed  # 12.5 %
    assert rows["drop rate"].passed
    assert not rows["mean queue (packets)"].passed
    assert rows["cwnd correlation flow 0"].passed
    assert rows["Jain's index"].passed is None
    # Not held for 16 flows.
    rows16 = {r.metric: r for r in measure.comparison_rows("x", lin, ours, cw, 16)}
    assert rows16["cwnd correlation flow 0"].passed is None
    text = measure.markdown(measure.frame(list(rows.values())))
    assert "| x |  | drop rate |" in text
    json.dumps([r.__dict__ for r in rows.values()])


def test_profile_by_hand(tmp_path: Path) -> None:
    """Two flows' TCP_INFO samples: flow 0 Open then Recovery, flow 1 in Loss throughout;
    only samples in [warm-up, end) count; retransmissions are the counter's growth."""
    from validation.linux import profile

    rows = []
    for k, t in enumerate([0.5, 1.0, 1.5, 2.0, 2.5]):
        rows.append(
            {
                "t_s": t,
                "flow": 0,
                "ca_state": 0 if t < 1.5 else 3,
                "snd_cwnd": 10 + k,
                "pacing_rate": 125_000,
                "total_retrans": 2 * k,
                "lost": 1,
                "rto_us": 200_000,
                "rtt_us": 40_000,
                "min_rtt_us": 40_000 - k,
            }
        )
        rows.append(
            {
                "t_s": t,
                "flow": 1,
                "ca_state": 4,
                "snd_cwnd": 1,
                "pacing_rate": 250_000,
                "total_retrans": 5,
                "lost": 3,
                "rto_us": 400_000,
                "rtt_us": 80_000,
                "min_rtt_us": 60_000,
            }
        )
    pl.DataFrame(rows).write_csv(tmp_path / "tcp_info.csv")
    p = profile.linux_profile(tmp_path, warmup=1.0, seconds=2.5)
    f0, f1 = p.row(0, named=True), p.row(1, named=True)
    # Samples at 1.0, 1.5, 2.0: cwnd 11, 12, 13; Open once, Recovery twice.
    assert f0["cwnd"] == pytest.approx(12.0)
    assert f0["open%"] == pytest.approx(100 / 3) and f0["recovery%"] == pytest.approx(200 / 3)
    assert f0["rexmits"] == 4 and f0["pacing_Mb/s"] == pytest.approx(1.0)
    assert f0["min_rtt_ms"] == pytest.approx(39.997)
    assert f1["loss%"] == 100.0 and f1["rexmits"] == 0 and f1["rto_ms"] == 400.0
