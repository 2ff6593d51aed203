"""Scenarios from a random source: mostly valid, sometimes at or past a boundary.

One function of a `random.Random`, so that a campaign is reproducible by (seed, index) and
Hypothesis can drive the same generator (`st.randoms`) and shrink what it finds. Values are
drawn from lists that mix ordinary settings with the edges of what the integer
representation holds (`crates/aqmlab/src/bounds.rs`) and with plainly wrong ones; a run must
either finish, or be refused with one clean line.
"""

from __future__ import annotations

import random
from typing import Any

from aqmlab import tcp_presets

# (ordinary values, boundary and wrong values): a boundary value is drawn with probability
# EDGE, so that most scenarios run and every rule is still visited.
EDGE = 0.03

RATE_MBPS = ([1.0, 2.0, 10.0, 100.0], [1e-6, 1e-9, 0.064, 1e7, 1e8, 0.0, -1.0])
DELAY_MS = ([0.0, 1.0, 5.0, 25.0], [1e-3, 1e-7, 1e6, 1e10, 1e14, -1.0])
HOSTS = ([1, 2, 3, 8], [0, 1000, 2_000_000])
ACCESS_Q = ([10000, 100000, 50, 1_000_000], [0, 1, 10_000_000])
DURATION_S = ([0.5, 1.0, 2.0], [1e-7, 1e-3, 0.0, 1e5, 1e11, -2.0])
LIMIT = ([100, 200, 480], [0, 1, 2, 20, 10**7])
SAMPLE_MS = ([3.0, 1.0, 10.0], [1e-9, 1e-4, 0.0, 1e4])
INTERVAL_S = ([1.0, 0.1, 0.5], [1e-9, 1e-4, 0.0, 1e8])
USERS = ([1, 5, 20, 60], [0, 10**7])
PM_RATE = ([5.0, 20.0, 60.0], [1e-5, 0.01, 1e6, 0.0])
UDP_MBPS = ([0.5, 1.0, 5.0, 1000.0], [1e-9, 1e4, 1e8, 0.0])
QUEUES = [
    "droptail",
    "red",
    "gred_i",
    "ared",
    "pi",
    "rem",
    "codel",
    "pie",
    "fq_codel",
    "dualpi2",
    "cake",
    "fq_pie",
    "red_linux",
    "pie_linux",
]
RTTS = ["none", "constant", "uniform", "empirical", "matrix"]
TRAFFIC = ["bulk", "mah", "browsers", "packmime", "udp_cbr", "ftp"]
# Today's applications (issue 37), drawn as often as one of the kinds above together.
APPS = ["dash", "pages", "video_call", "voice", "game", "ping"]
# Every preset the core knows (historic and Linux), so that a new one is fuzzed at once.
PRESETS = tcp_presets()
# Congestion controls drawn beside any preset (the historic stacks' own Reno and Linux's).
CONGESTION = ["reno", "linux_reno", "cubic", "dctcp", "bbr", "prague", "ledbat"]


def pick(r: random.Random, values: tuple[list, list]) -> Any:
    ordinary, edges = values
    return r.choice(edges if r.random() < EDGE else ordinary)


def queue(r: random.Random) -> dict[str, Any]:
    kind = r.choice(QUEUES)
    q: dict[str, Any] = {"kind": kind}
    q["limit"] = pick(r, LIMIT)
    if kind == "red" and r.random() < 0.5:
        q.update(min_th=r.choice([5.0, 30.0]), max_th=r.choice([15.0, 90.0, 4.0]))
    if kind == "ared":
        q["target_delay_ms"] = pick(r, ([5.0, 20.0], [1e-9, 0.0, 1e9]))
    if kind == "gred_i":
        q["min_th"] = r.choice([1.0, 5.0, 30.0])
    if kind == "pi":
        q["q_ref"] = r.choice([10.0, 50.0, 0.0])
        if r.random() < 0.3:
            # A frequency: its unit bounds (`_hz`) refuse one that would never let a run end.
            q["sample_hz"] = pick(r, ([160.0, 170.0], [1e9, 1e-9, 0.0, -1.0]))
    if kind == "rem":
        q["b_ref"] = r.choice([10.0, 50.0])
        if r.random() < 0.3:
            q["interval_ms"] = pick(r, ([2.0, 10.0], [1e-9, 1e-3, 1e9]))
    if kind == "red_linux":
        # tc's keys: bytes for limit/min/max/avpkt, burst in packets; past u32 and tc's rules.
        q["limit"] = pick(r, ([60_000, 150_000, 400_000], [0, 1, 2**32 - 1, 2**32]))
        q["avpkt"] = pick(r, ([1000, 1500, 500], [0, 1, 10**6]))
        if r.random() < 0.5:
            pairs = ([(10_000, 30_000), (30_000, 90_000)], [(1, 5_000), (30_000, 5_000)])
            q["min"], q["max"] = pick(r, pairs)
        if r.random() < 0.3:
            q["burst"] = pick(r, ([200, 400], [0, 1, 2**32 - 1]))
        if r.random() < 0.3:
            q["probability"] = pick(r, ([0.02, 0.1], [0.0, 1.0, 1e-12, -0.5]))
            q["bandwidth_mbps"] = pick(r, ([10.0, 100.0], [1e-9, 0.0, 1e6]))
        for flag in ("ecn", "harddrop", "adaptive", "nodrop"):
            if r.random() < 0.3:
                q[flag] = True
    if kind == "pie" and r.random() < 0.3:
        q["t_update_ms"] = pick(r, ([15.0, 30.0], [1e-9, 1e-3, 1e9]))
    if kind == "dualpi2" and r.random() < 0.3:
        q["tupdate_ms"] = pick(r, ([16.0, 32.0], [1e-9, 1e-3, 1e9]))
    if kind == "dualpi2" and r.random() < 0.3:
        q.update(c_protection=r.choice([0, 10, 100]), drop_enqueue=r.random() < 0.5)
        # Linux's integer arithmetic, with gains tc could send and one it could not.
        if r.random() < 0.5:
            q.update(linux_fixed_point=True, alpha=r.choice([0.16, 0.3125, 1e-3, 1e7]))
    if kind == "cake" and r.random() < 0.5:
        q["bandwidth"] = r.choice(["unlimited", "1Mbit", "9Mbit", "100kbps", "8bit", "1tbit"])
        q["diffserv"] = r.choice(
            ["besteffort", "precedence", "diffserv8", "diffserv4", "diffserv3"]
        )
        q["isolation"] = r.choice(
            [
                "flowblind",
                "srchost",
                "dsthost",
                "hosts",
                "flows",
                "dual-srchost",
                "dual-dsthost",
                "triple-isolate",
            ]
        )
    if kind == "cake" and r.random() < 0.3:
        q.update(
            framing=r.choice(["raw", "ethernet", "docsis", "pppoe-ptm", "pppoe-llcsnap"]),
            rtt_ms=pick(r, ([100.0, 20.0], [1e-6, 3.6e6])),
            memlimit=r.choice([1, 3000, 10**7]),
        )
    if kind == "cake" and r.random() < 0.3:
        q["ack_filter"] = r.choice(["no-ack-filter", "ack-filter", "ack-filter-aggressive"])
    if kind == "fq_pie" and r.random() < 0.3:
        q["tupdate_ms"] = pick(r, ([15.0, 30.0], [1e-9, 1e-3, 1e9]))
    if kind == "fq_pie" and r.random() < 0.3:
        q.update(
            ecn=r.random() < 0.5,
            ecn_prob=r.choice([0, 10, 100]),
            flows=r.choice([1, 1024]),
            dq_rate_estimator=r.random() < 0.5,
            bytemode=r.random() < 0.5,
        )
    if kind == "pie_linux" and r.random() < 0.3:
        q.update(
            tupdate_ms=pick(r, ([15.0, 20.0], [1e-9, 1e-3, 1e9])),
            ecn=r.random() < 0.5,
            dq_rate_estimator=r.random() < 0.5,
            bytemode=r.random() < 0.5,
        )
    if kind == "fq_codel" and r.random() < 0.3:
        q.update(
            ce_threshold_ms=pick(r, ([1.0, 0.5], [0.0, 1e-9, 1e9])),
            ce_threshold_selector=1,
            ce_threshold_mask=r.choice([1, 3]),
        )
    if kind == "fq_codel" and r.random() < 0.2:
        # tc's memory_limit (bytes), down to less than one packet (issue 36's UDP flood).
        q["memory_limit"] = pick(r, ([1500, 32 << 20], [1, 0, 10**12]))
    if kind in ("codel", "fq_codel") and r.random() < 0.3:
        q["target_ms"] = pick(r, ([5.0, 1.0], [1e-9, 200.0]))
    if kind in ("red", "gred_i", "ared") and r.random() < 0.3:
        q["ecn"] = r.choice(["off", "rfc3168", "new_gentle", "mark_p"])
    if kind in ("pi", "codel", "pie", "fq_codel") and r.random() < 0.3:
        q["ecn"] = True
    if kind == "rem" and r.random() < 0.3:
        q["mark"] = True
    return q


def rtt(r: random.Random) -> dict[str, Any]:
    kind = r.choice(RTTS)
    if kind == "constant":
        return {"kind": kind, "rtt_ms": pick(r, ([10.0, 100.0], [0.0, 1e10, 1e14]))}
    if kind == "uniform":
        lo = r.choice([1.0, 10.0])
        return {
            "kind": kind,
            "min_ms": lo,
            "max_ms": pick(r, ([lo + 10, lo + 200], [lo, 1e12])),
        }
    if kind == "empirical":
        pts = [[5.0, 0.0], [50.0, 0.5], [r.choice([200.0, 400.0, 1e12]), 1.0]]
        if r.random() < EDGE:
            pts[2][1] = 0.9  # the last probability must be 1
        return {"kind": kind, "points": pts}
    if kind == "matrix":
        return {
            "kind": kind,
            "rtt_ms": [[r.choice([10.0, 60.0]) for _ in range(2)] for _ in range(2)],
        }
    return {"kind": "none"}


def application(r: random.Random, kind: str, side: str) -> dict[str, Any]:
    """One of today's applications (issue 37) with ordinary values and, now and then, its
    edges: counts of zero and beyond their caps, rates, sizes and intervals out of range."""
    t: dict[str, Any] = {"kind": kind, "client_side": side}
    count = pick(r, ([1, 2], [0, 10**6]))
    if kind == "dash":
        t["sessions"] = count
        if r.random() < 0.3:
            t["ladder_kbps"] = pick(r, ([[300, 1000, 3000]], [[], [0], [3000, 1000], [1e9]]))
        if r.random() < 0.3:
            t["segment_s"] = pick(r, ([2.0, 4.0], [0.0, 1e-9, 1e9]))
        if r.random() < 0.2:
            t["abr"] = r.choice(["dynamic", "throughput", "bola", "fast"])
    elif kind == "pages":
        t["users"] = count
        t["protocol"] = r.choice(["h2", "http/1.1"])
        if r.random() < 0.3:
            t["think_s"] = pick(r, ([0.5, 2.0], [0.0, -1.0, 1e9]))
    elif kind == "video_call":
        t["calls"] = count
        t["controller"] = r.choice(["nada", "none"])
        t["ecn"] = r.choice(["not_ect", "ect0", "ect1"])
        if r.random() < 0.3:
            t["max_rate_mbps"] = pick(r, ([1.5, 4.0], [0.0, 1e-6, 1e6]))
    else:  # voice, game, ping
        t["flows"] = count
        t["ecn"] = r.choice(["not_ect", "ect0", "ect1"])
        if kind == "voice":
            t["codec"] = r.choice(["g711", "g729a", "opus_wb", "opus_fb", "amr"])
            t["jitter_buffer_ms"] = pick(r, ([60.0, 20.0], [0.0, -1.0, 1e9]))
        elif kind == "game":
            t["tick_hz"] = pick(r, ([64.0, 128.0], [0.0, 1e9, 1e-9]))
        else:
            t["interval_ms"] = pick(r, ([200.0, 10.0], [0.0, 1e-9, 1e12]))
    return t


def traffic(r: random.Random) -> dict[str, Any]:
    side = r.choice(["left", "right"])
    if r.random() < 0.5:
        return application(r, r.choice(APPS), side)
    kind = r.choice(TRAFFIC)
    if kind == "bulk":
        t = {
            "kind": kind,
            "flows": pick(r, ([1, 4, 10], [0, 10**6])),
            "client_side": side,
        }
        if r.random() < 0.5:
            t["bytes"] = pick(r, ([20_000, 200_000], [0, 1, 10**12]))
        t["start_jitter_s"] = r.choice([0.0, 0.2])
        return t
    if kind == "mah":
        return {
            "kind": kind,
            "users": pick(r, USERS),
            "client_side": side,
            "start_spread_s": r.choice([0.0, 0.5]),
        }
    if kind == "browsers":
        return {
            "kind": kind,
            "users": pick(r, USERS),
            "client_side": side,
            "start_spread_s": r.choice([0.0, 0.5]),
            "parallel": r.choice([[2, 4], [1], [0], [65]]) if r.random() < EDGE else [2, 4],
        }
    if kind == "packmime":
        return {
            "kind": kind,
            "rate": pick(r, PM_RATE),
            "client_side": side,
            "http11": r.random() < 0.5,
            "packmime_rtt": r.random() < 0.5,
        }
    if kind == "udp_cbr":
        t = {
            "kind": kind,
            "flows": pick(r, ([1, 2, 100], [0, 10**5])),
            "packet_bytes": pick(r, ([1000, 200], [0, 1, 40, 10**6])),
            "client_side": side,
        }
        if r.random() < 0.5:
            t["rate_mbps"] = pick(r, UDP_MBPS)
        else:
            t["share"] = pick(r, ([0.1, 0.5], [0.0, 1.0, 2.0]))
        return t
    t = {
        "kind": "ftp",
        "size": {"kind": "constant", "bytes": r.choice([10_000, 100_000])},
        "client_side": side,
    }
    if r.random() < 0.5:
        t["sessions"] = pick(r, ([1, 5], [0, 10**7]))
        t["think_mean_s"] = r.choice([0.0, 0.5])
    else:
        t["rate"] = pick(r, ([2.0, 10.0], [1e-9, 0.0, 1e7]))
    return t


def scenario(r: random.Random) -> dict[str, Any]:
    """One scenario document (as a TOML file would give it)."""
    duration = pick(r, DURATION_S)
    doc: dict[str, Any] = {
        "name": "fuzz",
        "seed": r.randrange(0, 2**32),
        "duration_s": duration,
        "warmup_s": r.choice([0.0, 0.25]) if r.random() > EDGE else pick(r, DURATION_S),
        "topology": {
            "bottleneck_mbps": pick(r, RATE_MBPS),
            "bottleneck_delay_ms": pick(r, DELAY_MS),
            "access_mbps": pick(r, ([100.0, 10.0, 1000.0], RATE_MBPS[1])),
            "access_delay_ms": pick(r, DELAY_MS),
            "access_queue_packets": pick(r, ACCESS_Q),
            "left_hosts": pick(r, HOSTS),
            "right_hosts": pick(r, HOSTS),
        },
        "queue": queue(r),
        "tcp": {"preset": r.choice(PRESETS)},
        "rtt": rtt(r),
        "traffic": [traffic(r) for _ in range(r.choice([1, 1, 2]))],
    }
    tcp = doc["tcp"]
    if r.random() < 0.3:
        tcp["recovery"] = r.choice(["reno", "newreno", "sack"])
    if r.random() < 0.2:
        tcp["ecn"] = True
    if r.random() < 0.2:
        tcp["congestion_control"] = r.choice(CONGESTION)
        tcp["hystart"] = r.random() < 0.8
        # Linux's loss recovery, pacing and HyStart++ on or off (HyStart++ with the stacks'
        # own Reno is refused with one line).
        for key in ("prr", "rack_tlp", "pacing", "hystart_plus_plus", "accecn"):
            if r.random() < 0.3:
                tcp[key] = r.random() < 0.5
    if r.random() < 0.1:
        # Prague's keys, edge values included (refused with one line).
        tcp["prague_rtt_scaling"] = r.random() < 0.5
        tcp["prague_rtt_target_ms"] = pick(r, ([5.0, 25.0], [0.0, -1.0, 1e9]))
        tcp["prague_rtt_transition"] = pick(r, ([0, 4, 500], [10**7]))
    if r.random() < 0.1:
        tcp["timer_model"] = r.choice(["bsd", "ns2", "linux"])
    if r.random() < 0.1:
        tcp["min_rto_s"] = pick(r, ([0.2, 1.0], [1e-9, 0.0, 1e9]))
    if r.random() < 0.3:
        doc["queue_reverse"] = queue(r)
    if r.random() < 0.3:
        doc["measure"] = {
            "queue_sample_ms": pick(r, SAMPLE_MS),
            "interval_s": pick(r, INTERVAL_S),
        }
        doc["measure"]["queue_window_ms"] = max(100.0, doc["measure"]["queue_sample_ms"])
    if r.random() < 0.1:
        doc["topology"]["host_jitter_us"] = pick(r, ([0.0, 100.0], [0.5, 1e7]))
    if r.random() < 0.1:
        doc["topology"]["loss_rate"] = r.choice([0.0, 0.01, 0.5, 1.0])
    if r.random() < 0.1:
        # Capacity steps: in order, or out of order, at time 0, or to a zero rate (refused).
        steps = [
            {"at_s": pick(r, ([0.1, 0.3], [0.0, -1.0, 1e9])), "mbps": pick(r, RATE_MBPS)}
            for _ in range(r.choice([1, 2]))
        ]
        for step in steps:
            if r.random() < 0.3:
                step["reverse_mbps"] = pick(r, RATE_MBPS)
        doc["topology"]["bottleneck_steps"] = steps
    if r.random() < 0.1:
        # An asymmetric access link: the reverse direction (the download) at its own rate.
        doc["topology"]["bottleneck_reverse_mbps"] = pick(r, RATE_MBPS)
    if r.random() < 0.05:
        # Arrival bins (the burstiness table): fine bins are memory per second of a run.
        doc.setdefault("measure", {})["burst_bin_ms"] = pick(r, ([0.0, 10.0], [1e-3, 1e-9]))
    if r.random() < 0.1:
        # Captures and traces: a point (host numbers possibly out of range), maybe a sampled
        # or windowed selection, and a TCP state trace at every change or per interval.
        cap = {"point": r.choice(["forward", "reverse", "forward_in", "reverse_in", "host"])}
        if cap["point"] == "host":
            cap["host"] = r.choice([0, 1, 10**6])
        if r.random() < 0.3:
            cap["sample"] = pick(r, ([0.5, 1.0], [0.0, -1.0, 2.0]))
        if r.random() < 0.2:
            cap["snaplen"] = pick(r, ([40, 96, 65535], [0, 10**9]))
        doc["trace"] = {"pcap": [cap]}
        if r.random() < 0.5:
            doc["trace"]["tcp"] = {"interval_ms": pick(r, ([0.0, 10.0], [-1.0, 1e-9]))}
        if r.random() < 0.5:
            doc["trace"]["qdisc"] = True
    for t in doc["traffic"]:
        # A source's own stack and RTT (refused on a udp_cbr source, with one line).
        if r.random() < 0.15:
            t["tcp"] = r.choice(PRESETS) if r.random() < 0.7 else {"preset": r.choice(PRESETS)}
        if r.random() < 0.1:
            t["rtt"] = rtt(r)
    if r.random() < 0.15:
        chain(r, doc)
    return doc


def chain(r: random.Random, doc: dict[str, Any]) -> None:
    """A chain of bottlenecks (docs/network.md): a few more hops, each with its own rate,
    delay and sometimes queues, cross hosts, and sources crossing one hop only. Edges: too
    many hops, no cross hosts for a source with a hop, a hop past the last (each refused with
    one line)."""
    n = pick(r, ([1, 2, 3], [7, 8]))
    hops = []
    for _ in range(n):
        h: dict[str, Any] = {}
        if r.random() < 0.7:
            h["mbps"] = pick(r, RATE_MBPS)
        if r.random() < 0.7:
            h["delay_ms"] = pick(r, DELAY_MS)
        if r.random() < 0.4:
            h["queue"] = queue(r)
        if r.random() < 0.2:
            h["queue_reverse"] = queue(r)
        hops.append(h)
    doc["topology"]["hops"] = hops
    doc["topology"]["cross_hosts"] = pick(r, ([1, 2, 3], [0]))
    for t in doc["traffic"]:
        if r.random() < 0.5:
            t["hop"] = pick(r, (list(range(n + 1)), [n + 1, -1]))
    if r.random() < 0.5:
        # Cross traffic beside the main traffic: a greedy source at one hop.
        doc["traffic"].append(
            {"kind": "bulk", "flows": r.choice([1, 2]), "hop": r.randrange(n + 1)}
        )
