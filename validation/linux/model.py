"""The aqmlab side: the scenario that matches a testbed configuration, its run, and the
same metrics as the testbed's.

The scenario: the 10 Mb/s bottleneck (bytes on the wire = the IP packet + the 14-byte
Ethernet header, which is what htb counts), a drop-tail queue of the same limit in packets
(or the queue manager matching the bed's qdisc, qdiscs.py),
no propagation delay (the veth links have none) and 1 Gb/s access links, one `bulk` entry of
N greedy downloads (server on the right sends, as the testbed's senders do), each flow on its
own pair of hosts with its RTT from `[rtt]` (constant, or a matrix giving flow i its own),
added half on each direction as the delay line does (`[delay_box]` "split"). With short flows
(`--web`), a `replay` entry of the schedule the bed's clients read (workload.py) beside them.

The TCP model: `preset` (by default `linux-reno` for Reno and `linux-cubic` for CUBIC; another
preset, e.g. `freebsd-4.x`, gets LINUX_APPROX on top, unless it is itself a `linux-*` one).
README.md lists what still differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

import aqmlab
from aqmlab import scenario as sc
from aqmlab.analysis.metrics import jain_index

# The model of each Linux congestion control (docs/tcp.md); a congestion control without one
# (BBR, not built yet) is compared with DEFAULT_PRESET, the closest historic stack made
# Linux-like by LINUX_APPROX, and the table says which model was used.
DEFAULT_PRESETS = "reno=linux-reno,cubic=linux-cubic,bbr=linux-bbr,dctcp=linux-dctcp"
DEFAULT_PRESET = "freebsd-4.x"

# Linux's defaults where the model has a knob (net.ipv4.tcp_* defaults, kernel 6.x).
LINUX_APPROX: dict[str, object] = {
    "mss": 1448,  # 1500-byte MTU less IP, TCP and the 12-byte timestamp option
    "header_bytes": 52,
    "rwnd": 16 << 20,  # autotuned receive buffer: never the limit here
    "initial_window": 10,  # TCP_INIT_CWND
    "recovery": "sack",  # tcp_sack = 1 (Linux adds RACK-TLP and PRR, not modelled)
    "sack_max_blocks": 3,  # 3 blocks fit beside the timestamp option
    "limited_transmit": True,  # Linux always does RFC 3042
    # Linux grows cwnd by the segments an ACK covers (tcp_cong_avoid_ai counts them), the
    # model by ACKs: with the receiver's ACK every two segments the model would open half as
    # fast. An ACK per segment gives the model Linux's growth per RTT.
    "delayed_ack": False,
    "min_rto_s": 0.2,  # TCP_RTO_MIN
    "initial_rto_s": 1.0,  # TCP_TIMEOUT_INIT (RFC 6298)
    "max_rto_s": 120.0,  # TCP_RTO_MAX
    "tick_ms": 1.0,  # Linux times RTTs in µs (timers in 4 ms jiffies at HZ = 250)
    "ack_of_syn_opens_cwnd": False,  # a Linux server starts at IW10, nothing more
}


# The greedy flows are traffic entry 0 (`source` in aqmlab's connections table), the short
# flows' replay, when there is one, entry 1.
BULK_SOURCE = 0
REPLAY_SOURCE = 1


@dataclass
class ModelRun:
    scenario: dict
    summary: dict
    connections: pl.DataFrame
    cwnd: pl.DataFrame  # t_s, flow, cwnd, ssthresh (segments), retransmit: every data segment
    mss: int


def overrides_for(preset: str, extra: dict[str, object] | None = None) -> dict[str, object]:
    """The `[tcp]` keys set beside `preset`: LINUX_APPROX for a non-Linux preset, then
    `extra` (the command line's `--aqmlab-tcp`)."""
    base = {} if preset.startswith("linux-") else dict(LINUX_APPROX)
    return {**base, **(extra or {})}


def scenario(
    *,
    flows: int,
    rtts_ms: list[float],
    limit: int,
    seconds: float,
    warmup: float,
    rate_mbit: float = 10.0,
    preset: str = DEFAULT_PRESET,
    tcp: dict[str, object] | None = None,
    start_jitter_s: float = 1.0,
    seed: int = 1,
    name: str = "linux-bed",
    queue: dict | None = None,
    replay_file: str | None = None,
) -> dict:
    """The aqmlab scenario of a testbed configuration (`tcp`: the keys beside the preset,
    usually `overrides_for(preset)`; `queue`: the bottleneck's `[queue]` table,
    qdiscs.aqmlab_queue, drop-tail of `limit` packets when None; `replay_file`: the short
    flows' schedule (workload.py), replayed beside the greedy flows as traffic entry 1 with
    the same RTT and TCP)."""
    if len(rtts_ms) != flows:
        raise ValueError(f"rtts_ms has {len(rtts_ms)} values for {flows} flows")
    if len(set(rtts_ms)) == 1:
        rtt = {"kind": "constant", "rtt_ms": float(rtts_ms[0])}
    else:  # flow i runs between client host i and server host i: row i is its RTT
        rtt = {"kind": "matrix", "rtt_ms": [[float(r)] * flows for r in rtts_ms]}
    return {
        "name": name,
        "seed": seed,
        "duration_s": float(seconds),
        "warmup_s": float(warmup),
        "topology": {
            "bottleneck_mbps": float(rate_mbit),
            "bottleneck_delay_ms": 0.0,
            "access_mbps": 1000.0,
            "access_delay_ms": 0.0,
            "access_queue_packets": 100000,
            "left_hosts": flows,
            "right_hosts": flows,
            "bottleneck_framing": {"overhead_bytes": 14},
        },
        "queue": queue or {"kind": "droptail", "limit": int(limit), "unit": "packets"},
        "tcp": {"preset": preset, **(tcp or {})},
        "rtt": rtt,
        "delay_box": {"placement": "split"},
        "traffic": [
            {
                "kind": "bulk",
                "flows": flows,
                "direction": "download",
                "start_s": 0.0,
                "start_jitter_s": float(start_jitter_s),
            }
        ]
        + ([{"kind": "replay", "file": str(replay_file)}] if replay_file else []),
        "measure": {"queue_sample_ms": 1.0, "queue_window_ms": 100.0, "interval_s": 1.0},
    }


def start_times(doc: dict) -> list[float]:
    """When each flow opens its connection in aqmlab (seconds, by flow): the testbed opens
    its connections at the same times. Runs the scenario's first second only."""
    short = json.loads(json.dumps(doc))
    jitter = doc["traffic"][0].get("start_jitter_s", 0.0)
    short["duration_s"] = float(doc["traffic"][0].get("start_s", 0.0) + jitter + 0.5)
    short["warmup_s"] = 0.0
    res = aqmlab.run(short)
    conns = res.connections.filter(pl.col("source") == BULK_SOURCE).sort("flow")
    return [float(x) for x in conns["start_s"]]


def run(doc: dict, out: Path) -> ModelRun:
    """Runs `doc` with `aqmlab.run` (results in `out`), then once more with the segment trace
    on (the same run: the trace changes nothing) for every sender's cwnd over time."""
    out.mkdir(parents=True, exist_ok=True)
    res = aqmlab.run(doc, out=out)
    resolved = sc.resolve(doc)
    sim = aqmlab.Simulation(sc.to_json(resolved))
    sim.enable_trace()
    sim.run_until(float(doc["duration_s"]))
    tr = pl.DataFrame(sim.trace())
    conns = pl.read_parquet(out / "connections.parquet").filter(pl.col("source") == BULK_SOURCE)
    mss = int(resolved["tcp"]["mss"])
    flow_of = dict(zip(conns["conn_id"].to_list(), conns["flow"].to_list(), strict=True))
    # The server (side 1) sends the data; its segments carry its cwnd as it sent them.
    cwnd = (
        tr.filter((pl.col("side") == 1) & (pl.col("len") > 0) & pl.col("conn").is_in(list(flow_of)))
        .select(
            pl.col("t_s"),
            pl.col("conn").replace_strict(flow_of, return_dtype=pl.Int64).alias("flow"),
            (pl.col("cwnd") / mss).alias("cwnd"),
            (pl.col("ssthresh") / mss).alias("ssthresh"),
            pl.col("retransmit"),
        )
        .sort("flow", "t_s")
    )
    cwnd.write_parquet(out / "cwnd.parquet")
    return ModelRun(doc, res.summary, conns, cwnd, mss)


def metrics(m: ModelRun, rate_mbit: float) -> dict:
    """The comparison's metrics from aqmlab's results (the data cross the bottleneck right →
    left: the `reverse` direction)."""
    s = m.summary["summary"]
    rev = s["reverse"]
    measured = s["measured_s"]
    conns = m.connections.sort("flow")
    goodput = (conns["bytes_delivered_measured"].cast(pl.Float64) * 8 / measured / 1e6).to_list()
    drops = rev["drops_early"] + rev["drops_forced"] + rev["drops_overflow"]
    warmup = float(m.scenario.get("warmup_s", 0.0))
    rx = m.cwnd.filter(pl.col("retransmit") & (pl.col("t_s") >= warmup))
    retrans = [rx.filter(pl.col("flow") == f).height for f in conns["flow"].to_list()]
    return {
        "goodput_mbps": goodput,
        "aggregate_goodput_mbps": float(np.sum(goodput)),
        "jain": jain_index(goodput) if goodput else float("nan"),
        "drop_rate": drops / max(rev["arrivals"], 1),
        "drops": drops,
        "arrivals": rev["arrivals"],
        "mean_queue_pkts": rev["mean_queue_pkts"],
        "utilization": rev["utilization"],
        "marks": rev.get("marks", 0),
        "mark_rate": rev.get("marks", 0) / max(rev["arrivals"], 1),
        "retransmits": retrans,
        "rate_mbit": rate_mbit,
    }
