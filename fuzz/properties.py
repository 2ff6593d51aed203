"""What every finished run must satisfy, read from its results directory. Each check returns
the violations it found, as short sentences naming the quantity and its value."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl

# Floating-point slack for ratios computed from integer counters.
EPS = 1e-9


def _limit(queue: dict[str, Any]) -> tuple[float, bool]:
    """The queue's limit and whether it counts bytes (RED's family nests its parameters).
    CAKE's buffer is a byte budget: `memlimit`, else `limit` MTUs (Linux `cake_reconfigure`);
    its packet count is not bounded by `limit`."""
    p = queue.get("params", {})
    p = p.get("red", p)
    if queue.get("kind") == "cake":
        return float(p.get("memlimit") or p.get("limit", 0) * p.get("mtu", 1500)), True
    limit = float(p.get("limit", 0) or 0)
    return limit, p.get("unit") == "bytes" or bool(p.get("queue_in_bytes"))


def _capacity_packets(queue: dict[str, Any]) -> float:
    """Most packets the queue can hold (a byte limit counted in 40-byte packets)."""
    limit, in_bytes = _limit(queue)
    return limit / 40.0 if in_bytes else limit


def check_run(out: Path) -> list[str]:
    s = json.loads((out / "summary.json").read_text())
    summ = s["summary"]
    bad: list[str] = []
    steps = len(((s.get("scenario") or {}).get("topology") or {}).get("bottleneck_steps") or [])
    # The bottleneck's directions, then every hop's of a chain (`summary.hops`; capacity
    # steps are hop 0's only).
    blocks = [(d, summ[d], summ[f"queue_{d}"], steps) for d in ("forward", "reverse")]
    for h in summ.get("hops") or []:
        blocks += [
            (f"hops[{h['hop']}].{d}", h[d], h[f"queue_{d}"], steps if h["hop"] == 0 else 0)
            for d in ("forward", "reverse")
        ]
    for d, x, q, steps in blocks:
        for k in ("loss_rate", "utilization", "utilization_ip"):
            top = 1 + EPS
            if k == "utilization_ip" and steps and x[k] > 0:
                # Across a capacity step the packet in service finishes at the rate it started
                # with (docs/network.md): up to one 1500-byte packet per step beyond the
                # period's mean capacity.
                capacity_bits = x["throughput_mbps"] / x[k] * 1e6 * summ["measured_s"]
                top += steps * 1500 * 8 / capacity_bits
            if not (-EPS <= x[k] <= top):
                bad.append(f"{d}.{k} = {x[k]} outside [0, 1]")
        ps = [x["delay_p50_ms"], x["delay_p90_ms"], x["delay_p99_ms"]]
        if not (ps[0] <= ps[1] <= ps[2] <= x["delay_max_ms"] + EPS):
            bad.append(f"{d} delay percentiles {ps} not ordered or above max {x['delay_max_ms']}")
        cap = _capacity_packets(q)
        if not _limit(q)[1] and x["max_queue_pkts"] > cap:
            bad.append(f"{d}.max_queue_pkts = {x['max_queue_pkts']} above the limit {cap:g}")
        # Conservation over the measured period: what arrived, less what left or was dropped,
        # is the change of the backlog, which the capacity bounds.
        drops = x["drops_early"] + x["drops_forced"] + x["drops_overflow"]
        imbalance = x["arrivals"] - x["departures"] - drops
        if abs(imbalance) > cap + 1:
            bad.append(
                f"{d}: arrivals {x['arrivals']} - departures {x['departures']} - drops {drops} "
                f"= {imbalance}, beyond the queue's capacity {cap:g}"
            )
    bad += _check_captures(out, s)
    udp = summ.get("udp") or {}
    if udp.get("flows"):
        if udp["sent"] != udp["delivered"] + udp["lost"] + udp["unresolved"]:
            bad.append(f"udp: sent {udp['sent']} != delivered + lost + unresolved")
        lp = udp["loss_probability"]  # None while no packet is resolved
        if lp is not None and not (-EPS <= lp <= 1 + EPS):
            bad.append(f"udp.loss_probability = {udp['loss_probability']} outside [0, 1]")
        ps = [udp["delay_p50_ms"], udp["delay_p99_ms"]]
        if None not in ps and not (ps[0] <= ps[1] <= udp["delay_max_ms"] + EPS):
            bad.append(f"udp delay percentiles {ps} not ordered or above max")
        flows = pl.read_parquet(out / "udp_flows.parquet")
        off = flows.filter(
            pl.col("sent") != pl.col("delivered") + pl.col("lost") + pl.col("unresolved")
        )
        if off.height:
            bad.append(f"udp_flows: {off.height} flows with sent != delivered + lost + unresolved")
    return bad


def _pcap_records(data: bytes) -> int | None:
    """The number of records of a nanosecond pcap, or None if the file is not one whose
    records end exactly at its end."""
    if len(data) < 24 or data[:4] != bytes.fromhex("4d3cb2a1"):
        return None
    n, i = 0, 24
    while i + 16 <= len(data):
        incl = int.from_bytes(data[i + 8 : i + 12], "little")
        i += 16 + incl
        n += 1
    return n if i == len(data) else None


def _check_captures(out: Path, s: dict) -> list[str]:
    """Every capture is a well-formed pcap; a whole-run egress capture holds exactly the
    packets the queue sent (tc's `Sent`)."""
    bad = []
    for cap in ((s.get("scenario") or {}).get("trace") or {}).get("pcap") or []:
        name = (
            f"capture-host-{cap['host']}.pcap"
            if cap["point"] == "host"
            else f"capture-{cap['point']}.pcap"
        )
        n = _pcap_records((out / name).read_bytes())
        if n is None:
            bad.append(f"{name}: not a well-formed pcap")
            continue
        whole = cap.get("sample", 1.0) == 1.0 and not cap.get("start_s") and not cap.get("end_s")
        if cap["point"] in ("forward", "reverse") and whole:
            sent = s["summary"][f"qdisc_{cap['point']}"]["sent_packets"]
            if n != sent:
                bad.append(f"{name}: {n} packets, the queue sent {sent}")
    return bad


def digest(out: Path) -> str:
    """The run's results without what depends on the machine or the clock (wall time,
    platform, versions): equal digests mean bit-identical results."""
    h = hashlib.sha256()
    s = json.loads((out / "summary.json").read_text())
    h.update(
        json.dumps(
            {k: s[k] for k in ("scenario", "seed", "summary", "tables")}, sort_keys=True
        ).encode()
    )
    for f in sorted(out.glob("*.parquet")):
        h.update(f.name.encode())
        h.update(pl.read_parquet(f).write_ipc(None).getvalue())
    return h.hexdigest()
