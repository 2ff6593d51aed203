"""The bottleneck queue disciplines the bed can use, each with its parameters set explicitly
on both sides: the tc arguments of the Linux qdisc (the leaf under the htb class that sets the
rate) and the `[queue]` table of the matching aqmlab queue (docs/queues.md).

Every parameter that both sides have is written out here with the Linux default as the value,
so that neither side runs on a default the other does not share. Sources: the kernel's
`*_init` functions (Linux 6.1, the UML kernel's version: `sch_codel.c`, `sch_fq_codel.c`,
`sch_pie.c`/`include/net/pie.h`, `sch_cake.c`), tc-codel(8), tc-fq_codel(8), tc-pie(8),
tc-cake(8), and docs/queues.md for aqmlab's keys.

Units: Linux counts a packet's length with its 14-byte Ethernet header (skb->len at the
router's egress), aqmlab counts IP bytes. Where a parameter is a length, the value each side
documents as Linux's is used (codel and fq_codel `mtu` 1514 and quantum 1514 on both sides;
cake's adjusted length is IP + 14 on both sides through `overhead 14`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Not available: fq_pie (CONFIG_NET_SCH_FQ_PIE is off in Debian's user-mode-linux 6.1 and the
# host kernel has no fq_pie), dualpi2 (in Linux only from 6.16; neither kernel has it).
# fq_codel_ce and red_step are the marking queues for DCTCP (ECN on; see MARKING).
NAMES = ("pfifo", "codel", "fq_codel", "pie", "cake", "red", "fq_codel_ce", "red_step")

# The queues that mark ECT packets instead of dropping them: the only ones DCTCP is run
# through (over a dropping queue it is a Reno that never sees its signal).
MARKING = ("fq_codel_ce", "red_step")

# The tc kind of each name that is not one itself.
TC_KIND = {"fq_codel_ce": "fq_codel", "red_step": "red"}

# FQ-CoDel's CE threshold for DCTCP: tc-fq_codel(8)'s example value for DCTCP-style marking,
# `ce_threshold 1ms`, an instantaneous sojourn test beside CoDel's (include/net/codel_impl.h,
# after `end:`).
CE_THRESHOLD_MS = 1.0

# The step-marking RED for DCTCP: mark every ECT packet while the (averaged) queue is at or
# above K packets: min = K packets, max = min + 1 byte (the probabilistic band is one byte
# wide, the kernel's hard mark does the rest: red_action, qavg ≥ qth_max). K from the DCTCP
# paper's guideline K > C·RTT/7 (Alizadeh et al., SIGCOMM 2010, §3.4, eq. 13): 10 Mb/s ×
# 40 ms = 33 frames of 1514 bytes, / 7 = 4.7 → 5 packets. burst = 1 + K, the least tc
# accepts (tc_red_eval_ewma: burst ≥ 1 + min/avpkt), which gives the shortest average:
# Wlog 2, W = 1/4 (docs/queues.md, red_linux).
RED_STEP_K = 5
RED_STEP_PROBABILITY = 0.5  # inside the one-byte band only: irrelevant (tc needs one < 1)
# The dropping RED (`red`): Floyd & Jacobson's values (IEEE/ACM ToN 1(4), 1993, §11's
# simulations: min_th 5, max_th 15 packets, max_p 1/50; 1/50 is also tc's default
# probability), burst tc's default (2·min + max)/(3·avpkt) = 8 packets, written out; no ECN.
RED_MIN_PACKETS, RED_MAX_PACKETS, RED_PROBABILITY, RED_BURST = 5, 15, 0.02, 8
# Lengths: Linux counts the frame (IP + 14), aqmlab the IP packet; byte thresholds are given
# as whole packets on each side (K · 1514 and K · 1500), so both mark at the same K.
LINUX_FRAME_BYTES = 1514
AQMLAB_PACKET_BYTES = 1500


# PIE's update period. Linux keeps it in jiffies (pie_change: usecs_to_jiffies, rounded up):
# its default 15 ms is 20 ms at HZ = 100 (the UML kernel's), 16 ms at HZ = 250. 20 ms is a
# whole number of jiffies at HZ = 100, 250 and 1000, so both sides run the same period.
PIE_TUPDATE_MS = 20


@dataclass(frozen=True)
class Qdisc:
    name: str
    default_limit: int  # packets: Linux's default (pfifo: the bed's historic 100)
    limit_settable: bool = True  # cake's packet limit is fixed (sch->limit = 10240)
    notes: list[str] = field(default_factory=list)


QDISCS = {
    "pfifo": Qdisc("pfifo", 100),
    "codel": Qdisc("codel", 1000),  # codel_init: sch->limit = DEFAULT_CODEL_LIMIT
    "fq_codel": Qdisc("fq_codel", 10240),  # fq_codel_init: sch->limit = 10*1024
    "pie": Qdisc("pie", 1000),  # pie_init: sch->limit = 1000
    "cake": Qdisc("cake", 10240, limit_settable=False),  # cake_init: sch->limit = 10240
    "fq_codel_ce": Qdisc("fq_codel_ce", 10240),
    # red: tc's `limit` is the child bfifo's bytes; given here in packets (× frame bytes).
    "red_step": Qdisc("red_step", 1000),
    "red": Qdisc("red", 1000),
}


def check(name: str, limit: int | None) -> int:
    """The packet limit to use for `name` (its default when `limit` is None)."""
    if name not in QDISCS:
        raise ValueError(f"qdisc {name!r}: expected one of {', '.join(NAMES)}")
    q = QDISCS[name]
    if limit is None:
        return q.default_limit
    if limit <= 0:
        raise ValueError(f"limit {limit}: expected a positive number of packets")
    if not q.limit_settable and limit != q.default_limit:
        raise ValueError(f"{name}: the packet limit is fixed at {q.default_limit} in Linux")
    return limit


def check_cc(name: str, cc: str, ecn_ccs: tuple[str, ...]) -> None:
    """DCTCP (an `ecn_ccs` congestion control) only through a MARKING queue."""
    if cc in ecn_ccs and name not in MARKING:
        raise ValueError(
            f"{cc} through {name}: expected a marking queue ({', '.join(MARKING)}); over a "
            "dropping queue it never sees its congestion signal"
        )


def tc_args(name: str, limit: int) -> list[str]:
    """The qdisc's kind and options, for `tc qdisc add dev r1 parent 1:1 handle 10: ...`."""
    if name == "pfifo":
        return ["pfifo", "limit", str(limit)]
    if name == "codel":
        # codel_params_init: target 5 ms, interval 100 ms, no ECN, no ce_threshold.
        return ["codel", "limit", str(limit), "target", "5ms", "interval", "100ms", "noecn"]
    if name == "fq_codel_ce":
        # fq_codel as below with ECN on (CoDel marks ECT packets instead of dropping them) and
        # ce_threshold: every ECT packet whose sojourn exceeds it is marked CE at dequeue.
        return [
            "fq_codel", "limit", str(limit), "flows", "1024", "quantum", "1514",
            "target", "5ms", "interval", "100ms", "memory_limit", "33554432",
            "drop_batch", "64", "ecn", "ce_threshold", f"{CE_THRESHOLD_MS:g}ms",
        ]  # fmt: skip
    if name == "red":
        f = LINUX_FRAME_BYTES
        return [
            "red", "limit", str(limit * f), "min", str(RED_MIN_PACKETS * f),
            "max", str(RED_MAX_PACKETS * f), "avpkt", str(f), "burst", str(RED_BURST),
            "probability", f"{RED_PROBABILITY:g}", "bandwidth", "10mbit",
        ]  # fmt: skip
    if name == "red_step":
        k = RED_STEP_K * LINUX_FRAME_BYTES
        return [
            "red", "limit", str(limit * LINUX_FRAME_BYTES), "min", str(k), "max", str(k + 1),
            "avpkt", str(LINUX_FRAME_BYTES), "burst", str(RED_STEP_K + 1),
            "probability", f"{RED_STEP_PROBABILITY:g}", "bandwidth", "10mbit", "ecn",
        ]  # fmt: skip
    if name == "fq_codel":
        # fq_codel_init: 1024 flows, quantum psched_mtu (1514), memory_limit 32 MiB,
        # drop_batch 64, ECN on: turned off here (the bed's TCP does not negotiate ECN; off on
        # both sides so that a mark can never stand in for a drop).
        return [
            "fq_codel", "limit", str(limit), "flows", "1024", "quantum", "1514",
            "target", "5ms", "interval", "100ms", "memory_limit", "33554432",
            "drop_batch", "64", "noecn",
        ]  # fmt: skip
    if name == "pie":
        # pie_params_init: target 15 ms, alpha 2 and beta 20 (in 1/16 s⁻¹: 0.125 and 1.25),
        # no ECN, no byte mode, the timestamp delay estimator (dq_rate_estimator off). The
        # 150 ms burst allowance is not settable (MAX_BURST). tupdate: see PIE_TUPDATE_MS.
        return [
            "pie", "limit", str(limit), "target", "15ms", "tupdate", f"{PIE_TUPDATE_MS}ms",
            "alpha", "2", "beta", "20", "noecn", "nobytemode", "no_dq_rate_estimator",
        ]  # fmt: skip
    if name == "cake":
        # Unshaped (the htb class above sets the rate), one tin, per-flow fairness only (the
        # bed has one sender and one receiver host, aqmlab a host pair per flow: `flows`
        # isolation makes the host count irrelevant on both sides), rtt 100 ms (target
        # rtt/20 = 5 ms), overhead 14: the adjusted length is the IP packet + 14 bytes on
        # both sides (Linux subtracts its network offset when an overhead is given).
        return [
            "cake", "unlimited", "besteffort", "flows", "nonat", "nowash",
            "no-ack-filter", "rtt", "100ms", "overhead", "14", "mpu", "0", "noatm",
        ]  # fmt: skip
    raise ValueError(f"qdisc {name!r}: expected one of {', '.join(NAMES)}")


def aqmlab_queue(name: str, limit: int) -> dict:
    """The `[queue]` table of the aqmlab queue that matches `tc_args(name, limit)`."""
    if name == "pfifo":
        return {"kind": "droptail", "limit": int(limit), "unit": "packets"}
    if name == "codel":
        return {
            "kind": "codel", "limit": int(limit), "target_ms": 5.0, "interval_ms": 100.0,
            "mtu": 1514, "ecn": False,
        }  # fmt: skip
    if name == "fq_codel":
        return {
            "kind": "fq_codel", "limit": int(limit), "flows": 1024, "quantum": 1514,
            "target_ms": 5.0, "interval_ms": 100.0, "memory_limit": 33554432,
            "drop_batch": 64, "mtu": 1514, "ecn": False,
        }  # fmt: skip
    if name == "fq_codel_ce":
        return {
            **aqmlab_queue("fq_codel", limit), "ecn": True, "ce_threshold_ms": CE_THRESHOLD_MS,
        }  # fmt: skip
    if name == "red":
        b = AQMLAB_PACKET_BYTES
        return {
            "kind": "red_linux", "limit": int(limit) * b, "min": RED_MIN_PACKETS * b,
            "max": RED_MAX_PACKETS * b, "avpkt": b, "burst": RED_BURST,
            "probability": RED_PROBABILITY, "bandwidth_mbps": 10.0, "ecn": False,
            "harddrop": False, "adaptive": False, "nodrop": False,
        }  # fmt: skip
    if name == "red_step":
        k = RED_STEP_K * AQMLAB_PACKET_BYTES
        return {
            "kind": "red_linux", "limit": int(limit) * AQMLAB_PACKET_BYTES, "min": k,
            "max": k + 1, "avpkt": AQMLAB_PACKET_BYTES, "burst": RED_STEP_K + 1,
            "probability": RED_STEP_PROBABILITY, "bandwidth_mbps": 10.0, "ecn": True,
            "harddrop": False, "adaptive": False, "nodrop": False,
        }  # fmt: skip
    if name == "pie":
        # aqmlab's `pie_linux`: Linux's own sch_pie (aqm/sch_pie.rs, checked decision by
        # decision against the packaged sch_pie.c), tc's units: alpha and beta in 1/16 s⁻¹;
        # the MTU of its 2-packet floor in the queue's own bytes (IP sizes; Linux's psched_mtu
        # 1514 counts the frame, as its backlog does).
        return {
            "kind": "pie_linux", "limit": int(limit), "target_ms": 15.0,
            "tupdate_ms": float(PIE_TUPDATE_MS), "alpha": 2, "beta": 20, "ecn": False,
            "bytemode": False, "dq_rate_estimator": False, "mtu": 1500,
        }  # fmt: skip
    if name == "cake":
        return {
            "kind": "cake", "limit": int(limit), "bandwidth": "unlimited",
            "diffserv": "besteffort", "isolation": "flows", "rtt_ms": 100.0,
            "target_ms": 5.0, "overhead": 14, "mpu": 0, "atm": "noatm",
            "ack_filter": "no-ack-filter",
        }  # fmt: skip
    raise ValueError(f"qdisc {name!r}: expected one of {', '.join(NAMES)}")
