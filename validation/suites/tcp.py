"""One TCP connection, packet by packet (docs/validation.md, "TCP").

Each case runs one Full-TCP connection in ns-2.35 (`ns2/tcp_single.tcl`): a client uploads
`bytes` to a server across client -- r1 -- r2 -- server, with losses and CE marks scripted on
the client's access link and losses of the server's ACKs and SYN-ACK on its own. The same
connection runs in aqmlab under the `ns2.35-fulltcp` preset, with the same losses and marks
scripted on the same links. Every segment either end
sends is compared in order: time, sequence and acknowledgment numbers, length, SYN/FIN/ECE/CWR
flags, and the sender's cwnd and ssthresh (ns-2's `cwnd_`/`ssthresh_`, in segments) as it
sends.

Losses are named by the segment they hit (its sequence number and which transmission of it;
an ACK by its number and place among its duplicates), or by index among the client's data
transmissions or the server's pure ACKs in ns-2's run, not by packet count: ns-2's list error
model counts every packet, so the driver finds the index of each target in a run with the
earlier targets already in place, reruns, and re-places them until the indices hold.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from aqmlab import _core
from aqmlab import scenario as sc
from validation import ns2
from validation.results import Row, row_maker

SUITE = "tcp"
MSS = 536
HEADER = 40
# Time agreement: both sides schedule in exact arithmetic of the same link rates and delays;
# ns-2 in double-precision seconds, aqmlab in integer nanoseconds. 10 ns covers the rounding
# of a few hundred sums of transmission times.
TIME_TOL_S = 1e-8
# ns-2 keeps cwnd_ as a double (congestion avoidance adds 1/cwnd per ACK); aqmlab in whole
# bytes, so the two differ by the truncation of a byte per increment.
CWND_TOL = 0.01

# Flags compared (SYN, FIN, ECE, CWR; ns-2 sets PSH on pure ACKs and ACK as it likes, so those
# two are left out).
FIN, SYN, ECE, CWR = 0x01, 0x02, 0x40, 0x80
COMPARED_FLAGS = FIN | SYN | ECE | CWR
VARIANTS = {"reno": "FullTcp", "newreno": "FullTcp/Newreno", "sack": "FullTcp/Sack"}


@dataclass
class Target:
    """A packet the client sends: data at `seq` (a byte sequence number; 0 is the SYN), its
    `nth` transmission (1 = the first). Or, with `index`, the client's index-th data segment
    (from 0, retransmissions included) in ns-2's run with the earlier losses in place, which
    the driver turns into its sequence number and transmission (`_resolve`)."""

    seq: int = -1
    nth: int = 1
    syn: bool = False
    index: int | None = None


@dataclass
class AckTarget:
    """A pure ACK the server sends (no data, SYN or FIN) acknowledging `ack`: the `nth` such
    (duplicates share their number). Or, with `index`, the server's index-th pure ACK (from
    0) in ns-2's run with the earlier losses in place, which the driver turns into its
    number and place (`_resolve`) for aqmlab's run. With `synack`, the server's first
    SYN-ACK instead."""

    ack: int = -1
    nth: int = 1
    index: int | None = None
    synack: bool = False


@dataclass
class Case:
    name: str
    what: str
    variant: str  # reno, newreno, sack
    bytes: int
    drops: list[Target] = field(default_factory=list)
    marks: list[Target] = field(default_factory=list)
    ack_drops: list[AckTarget] = field(default_factory=list)
    ecn: bool = False
    tcp: dict[str, object] = field(default_factory=dict)  # ns-2 instance variables
    ours: dict[str, object] = field(default_factory=dict)  # our [tcp] overrides
    duration_s: float = 30.0
    bn_delay_ms: float = 20.0
    note: str = ""


def seg(k: int) -> int:
    """Sequence number of the k-th data segment (from 0)."""
    return 1 + k * MSS


CASES = [
    Case("newreno_clean", "no loss: handshake, slow start, close", "newreno", 20_000),
    Case("reno_one_loss", "one loss, fast retransmit", "reno", 40_000, [Target(seg(12))]),
    Case(
        "newreno_one_loss",
        "one loss, fast retransmit",
        "newreno",
        40_000,
        [Target(seg(12))],
    ),
    Case("sack_one_loss", "one loss, fast retransmit", "sack", 40_000, [Target(seg(12))]),
    Case(
        "reno_two_losses",
        "two losses in one window",
        "reno",
        40_000,
        [Target(seg(12)), Target(seg(14))],
    ),
    Case(
        "newreno_two_losses",
        "two losses in one window: partial ACK",
        "newreno",
        40_000,
        [Target(seg(12)), Target(seg(14))],
    ),
    Case(
        "newreno_three_losses",
        "three losses in one window: two partial ACKs",
        "newreno",
        60_000,
        [Target(seg(20)), Target(seg(22)), Target(seg(24))],
    ),
    Case(
        "sack_two_losses",
        "two losses in one window",
        "sack",
        40_000,
        [Target(seg(12)), Target(seg(14))],
    ),
    Case(
        "newreno_lost_retransmission",
        "the fast retransmission is lost too: timeout",
        "newreno",
        40_000,
        [Target(seg(12)), Target(seg(12), 2)],
    ),
    Case(
        "sack_lost_retransmission",
        "the fast retransmission is lost too",
        "sack",
        40_000,
        [Target(seg(12)), Target(seg(12), 2)],
    ),
    Case("newreno_lost_syn", "the SYN is lost", "newreno", 10_000, [Target(0, syn=True)]),
    Case(
        "newreno_late_loss",
        "a loss with just three segments behind it: fast retransmit at the last duplicate",
        "newreno",
        4_000,
        [Target(seg(3))],
    ),
    Case(
        "newreno_tail_loss_timeout",
        "the last segment is lost: no duplicate ACKs, a retransmission timeout",
        "newreno",
        7 * 536,
        [Target(seg(6))],
    ),
    Case(
        "reno_tail_loss_backoff",
        "the last segment and its retransmission are lost: timeout, backed-off timeout",
        "reno",
        7 * 536,
        [Target(seg(6)), Target(seg(6), 2)],
    ),
    Case(
        "sack_tail_loss_timeout",
        "the last segment is lost: timeout with SACK",
        "sack",
        7 * 536,
        [Target(seg(6))],
    ),
    Case(
        "newreno_ecn_one_mark",
        "one CE mark: one reduction, ECE until CWR",
        "newreno",
        60_000,
        marks=[Target(seg(20))],
        ecn=True,
    ),
    Case(
        "newreno_ecn_marks_in_one_window",
        "three CE marks in one window: one reduction",
        "newreno",
        60_000,
        marks=[Target(seg(20)), Target(seg(21)), Target(seg(23))],
        ecn=True,
    ),
    Case(
        "newreno_ecn_marks_two_windows",
        "marks in successive windows: a reduction each",
        "newreno",
        80_000,
        marks=[Target(seg(20)), Target(seg(50))],
        ecn=True,
    ),
    Case(
        "newreno_ecn_then_loss",
        "a CE mark, then a loss in the same window: retransmit, no second ssthresh cut",
        "newreno",
        80_000,
        [Target(seg(30))],
        marks=[Target(seg(20))],
        ecn=True,
    ),
    Case(
        "sack_ecn_then_loss",
        "a CE mark, then a loss in the same window, with SACK",
        "sack",
        80_000,
        [Target(seg(30))],
        marks=[Target(seg(20))],
        ecn=True,
    ),
    Case(
        "newreno_ecn_then_tail_timeout",
        "a CE mark, then the last segment lost: a timeout after an ECN reduction",
        "newreno",
        26 * 536,
        [Target(seg(25))],
        marks=[Target(seg(12))],
        ecn=True,
    ),
    Case(
        "newreno_six_losses",
        "six losses in two windows: partial ACKs restart the timer, recovery without a timeout "
        "(found by a search of random loss patterns: the last kind it found different)",
        "newreno",
        80_000,
        [Target(seg(k)) for k in (20, 25, 26, 30, 31, 32)],
    ),
    Case(
        "reno_six_losses",
        "six losses in two windows: a timeout, then duplicates the gate refuses and that "
        "still inflate cwnd",
        "reno",
        80_000,
        [Target(seg(k)) for k in (20, 25, 26, 30, 31, 32)],
    ),
    Case(
        "reno_fractional_window",
        "six losses: after the timeout cwnd is 2.5 segments, and ns-2 sends two whole "
        "segments, never a part one (window() is int(cwnd_))",
        "reno",
        80_000,
        [Target(seg(k)) for k in (40, 57, 58, 59, 60, 62)],
    ),
    Case(
        "newreno_partial_ack_after_timeout",
        "a lost fast retransmission, a timeout, then a partial ACK ahead of go-back-N: ns-2 "
        "sends the segment twice (pack_action's retransmission, then send_much from t_seqno_)",
        "newreno",
        80_000,
        [Target(seg(20)), Target(seg(20), 2)] + [Target(seg(k)) for k in (22, 23, 25, 32, 39)],
    ),
    Case(
        "newreno_fin_retransmitted_into_last_ack",
        "the client's FIN is sent twice and the second reaches a server in LAST_ACK, which "
        "ignores it without an ACK",
        "newreno",
        80_000,
        [Target(seg(20)), Target(seg(20), 2)] + [Target(seg(k)) for k in (22, 25, 31, 37, 38)],
    ),
    Case(
        "sack_exact_halving",
        "a timeout, then a SACK recovery from cwnd 5: ns-2.35 halves cwnd exactly (2.5 "
        "segments, ssthresh 2)",
        "sack",
        80_000,
        [Target(seg(20)), Target(seg(20), 2), Target(seg(32)), Target(seg(43))],
    ),
    Case(
        "newreno_lost_synack",
        "the server's SYN-ACK is lost: the client's SYN and the server's SYN-ACK time out "
        "together, and ns-2 drops the repeated SYN, owing an ACK it sends later",
        "newreno",
        20_000,
        ack_drops=[AckTarget(synack=True)],
    ),
    Case(
        "newreno_lost_acks",
        "pure ACKs lost in slow start and among the duplicates of a loss: the next ACK "
        "acknowledges more, and cwnd opens per ACK (ns-2 counts ACKs, not bytes)",
        "newreno",
        60_000,
        [Target(seg(30))],
        ack_drops=[AckTarget(index=j) for j in (4, 5, 12, 33, 35)],
    ),
    Case(
        "newreno_nagle_small_writes",
        "a transfer that ends in a part segment (Nagle and delayed ACK of it)",
        "newreno",
        536 * 7 + 100,
    ),
]


# --- ns-2 ---------------------------------------------------------------------------------


@dataclass
class Seg:
    t: float
    side: int  # 0 client, 1 server
    seq: int
    ack: int
    len: int
    flags: int
    cwnd: float  # the sender's, in segments
    ssthresh: float


def _ns2_params(
    case: Case, droplist: list[int], marklist: list[int], ackdroplist: list[int]
) -> str:
    tcp = {"segsize_": MSS, "window_": 20, **case.tcp}
    if case.ecn:
        tcp["ecn_"] = 1
    p = {
        "variant": VARIANTS[case.variant],
        "tcp": [x for kv in tcp.items() for x in kv],
        "bytes": case.bytes,
        "start": 0.0,
        "access_rate": "100Mb",
        "access_delay": "1ms",
        "bn_rate": "10Mb",
        "bn_delay": f"{case.bn_delay_ms}ms",
        "bn_limit": 1000,
        "droplist": droplist,
        "marklist": marklist,
        "ackdroplist": ackdroplist,
        "duration": case.duration_s,
    }
    return ns2.tcl_array("P", p)


def _read_ns2(path: Path) -> list[Seg]:
    """The segments of events.tr (tcp_single.tcl's format)."""
    out = []
    for line in path.read_text().splitlines():
        trace, now, state = (x.strip() for x in line.split("|"))
        f = trace.split()
        src = int(f[2])
        side = 0 if src == 0 else 1
        size, seqno, ackno = int(f[5]), int(f[10]), int(f[12])
        tflags = int(f[13], 16)
        nsflags = f[6]
        flags = tflags & (FIN | SYN | ECE | CWR)
        if len(nsflags) > 4 and nsflags[4] == "E":
            flags |= ECE
        if len(nsflags) > 3 and nsflags[3] == "A":
            flags |= CWR
        hdr = int(f[14])
        v = [float(x) for x in state.split()]
        cwnd, ssth = (v[0], v[1]) if side == 0 else (v[2], v[3])
        out.append(Seg(float(now), side, seqno, ackno, size - hdr, flags, cwnd, ssth))
    return out


def _index_of(segs: list[Seg], t: Target | AckTarget) -> int | None:
    """Index among the client's packets of the target's transmission (for an ACK, among the
    server's packets)."""
    seen = 0
    if isinstance(t, AckTarget):
        server = [s for s in segs if s.side == 1]
        for i, s in enumerate(server):
            if (s.flags & SYN) if t.synack else (_pure_ack(s) and s.ack == t.ack):
                seen += 1
                if seen == t.nth:
                    return i
        return None
    client = [s for s in segs if s.side == 0]
    for i, s in enumerate(client):
        hit = (s.flags & SYN) if t.syn else (s.len > 0 and s.seq == t.seq)
        if hit and s.seq == t.seq:
            seen += 1
            if seen == t.nth:
                return i
    return None


class NotSent(ns2.Ns2Failed):
    """A target the ns-2 run never sends (a loss pattern that does not apply)."""


def _pure_ack(s: Seg) -> bool:
    return s.len == 0 and not s.flags & (SYN | FIN)


def _resolve(segs: list[Seg], t: Target | AckTarget) -> Target | AckTarget:
    """A target named by its index as the number and place of that packet in `segs`: a data
    segment's sequence number and transmission, an ACK's number and place among its
    duplicates."""
    if t.index is None or (isinstance(t, AckTarget) and t.synack):
        return t
    if isinstance(t, Target):
        data = [s for s in segs if s.side == 0 and s.len > 0]
        if t.index >= len(data):
            raise NotSent(f"the client sent {len(data)} data segments, not {t.index + 1}")
        seq = data[t.index].seq
        return Target(seq, sum(s.seq == seq for s in data[: t.index + 1]))
    pure = [s for s in segs if s.side == 1 and _pure_ack(s)]
    if t.index >= len(pure):
        raise NotSent(f"the server sent {len(pure)} pure ACKs, not {t.index + 1}")
    ack = pure[t.index].ack
    return AckTarget(ack, sum(s.ack == ack for s in pure[: t.index + 1]))


def _run_ns2(case: Case, work: Path) -> tuple[list[Seg], Case]:
    """Runs the case in ns-2, placing the drops and marks one at a time; returns the
    segments and the case with every loss by number and place (for aqmlab's run). A later
    target can move an earlier one's index (a lost SYN-ACK adds a SYN before every data
    segment), so once all are placed their indices are checked in the final run and
    re-placed until they hold."""
    placed: list[tuple[Target | AckTarget, str, int]] = []
    pending = [(t, "drop") for t in case.drops] + [(t, "mark") for t in case.marks]
    pending += [(t, "ackdrop") for t in case.ack_drops]

    def run() -> list[Seg]:
        lists = (sorted(i for _, k, i in placed if k == kind) for kind in KINDS)
        d = ns2.run("tcp_single.tcl", _ns2_params(case, *lists), work)
        return _read_ns2(d / "events.tr")

    def index(segs: list[Seg], t: Target | AckTarget) -> int:
        i = _index_of(segs, t)
        if i is None:
            raise NotSent(f"{case.name}: ns-2 never sent {t}")
        return i

    segs = run()
    for t, kind in pending:
        t = _resolve(segs, t)
        placed.append((t, kind, index(segs, t)))
        segs = run()
    for _ in range(len(placed) + 1):
        moved = [(t, k, index(segs, t)) for t, k, _ in placed]
        if moved == placed:
            named = {k: [t for t, kind, _ in placed if kind == k] for k in KINDS}
            resolved = dataclasses.replace(
                case, drops=named["drop"], marks=named["mark"], ack_drops=named["ackdrop"]
            )
            return segs, resolved
        placed = moved
        segs = run()
    raise ns2.Ns2Failed(f"{case.name}: the losses' packet indices do not settle")


KINDS = ("drop", "mark", "ackdrop")  # tcp_single.tcl's droplist, marklist, ackdroplist


# --- aqmlab -------------------------------------------------------------------------------


def _scenario(case: Case) -> str:
    doc = {
        "name": f"validation-tcp-{case.name}",
        "seed": 1,
        "duration_s": case.duration_s,
        "topology": {
            "bottleneck_mbps": 10.0,
            "bottleneck_delay_ms": case.bn_delay_ms,
            "access_mbps": 100.0,
            "access_delay_ms": 1.0,
            "access_queue_packets": 100000,
            "left_hosts": 1,
            "right_hosts": 1,
        },
        "queue": {"kind": "droptail", "limit": 999},
        "tcp": {"preset": "ns2.35-fulltcp", "recovery": case.variant, "ecn": case.ecn, **case.ours},
        "traffic": [{"kind": "bulk", "flows": 1, "bytes": case.bytes, "direction": "upload"}],
    }
    return sc.to_json(sc.resolve(doc))


def _run_ours(case: Case) -> list[Seg]:
    sim = _core.Simulation(_scenario(case))
    sim.enable_trace()
    client_uplink = 0  # host 0 (the left host) sends on link 0 (net/topology.rs)
    for kind, targets in (("drop", case.drops), ("mark", case.marks)):
        for t in targets:
            # The segment's transmissions before the target pass.
            sim.script_loss(client_uplink, t.seq, syn=t.syn, mark=kind == "mark", skip=t.nth - 1)
    server_uplink = 2  # host 1 (the right host) sends on link 2
    for a in case.ack_drops:
        if a.synack:
            if a.nth != 1:
                raise ValueError(f"{case.name}: only the first SYN-ACK can be lost")
            sim.script_loss(server_uplink, 0, syn=True)
        else:
            sim.script_loss(server_uplink, a.ack, ack=True, skip=a.nth - 1)
    sim.run_until(case.duration_s)
    tr = sim.trace()
    out = []
    for i in range(len(tr["t_ns"])):
        out.append(
            Seg(
                tr["t_ns"][i] * 1e-9,
                tr["side"][i],
                tr["seq"][i],
                tr["ack"][i],
                tr["len"][i],
                tr["flags"][i] & COMPARED_FLAGS,
                tr["cwnd"][i] / MSS,
                tr["ssthresh"][i] / MSS,
            )
        )
    return out


# --- comparison ---------------------------------------------------------------------------


def _key(s: Seg, ecn: bool) -> tuple[int, int, int, int]:
    # A client's SYN acknowledges nothing: ns-2 writes -1 there, aqmlab 0.
    ack = -1 if s.flags & SYN and s.side == 0 else s.ack
    # Without ECN, ns-2 still sets CWR on new data after a window reduction, "for traces"
    # (tcp-full.cc foutput); it means nothing on the wire.
    flags = s.flags if ecn else s.flags & ~CWR
    return (s.seq, ack, s.len, flags)


def _window_compared(segs: list[Seg]) -> list[bool]:
    """Which segments' cwnd and ssthresh are compared. Not a SYN or SYN-ACK: ns-2 sets
    `cwnd_` to `windowInit_` only when the handshake completes, aqmlab at creation, and
    nothing is sent under that value. Not a retransmission: ns-2 prints its variables as the
    packet leaves, in the middle of the ACK's processing (`dupack_action` inflates cwnd
    after `fast_retransmit`, NewReno's `pack_action` deflates it after), aqmlab records
    them once the ACK is processed; the segments that follow carry the settled values."""
    out, top = [], 0
    for s in segs:
        retransmit = s.len > 0 and s.seq < top
        top = max(top, s.seq + s.len)
        out.append(not s.flags & SYN and not retransmit)
    return out


def _compare(case: Case, theirs: list[Seg], ours: list[Seg]) -> list[Row]:
    """Per side: the segments (identical up to which index), then over that identical prefix
    the largest difference of send time, cwnd and ssthresh. The ns-2 and aqmlab columns show
    the last segment of the prefix."""
    rows = []
    row = row_maker(SUITE, case.name, "-")
    for side, who in ((0, "client"), (1, "server")):
        a = [s for s in theirs if s.side == side]
        b = [s for s in ours if s.side == side]
        n = min(len(a), len(b))
        first = next((i for i in range(n) if _key(a[i], case.ecn) != _key(b[i], case.ecn)), n)
        same = first == n and len(a) == len(b)
        note = case.what
        if not same:
            at = a[first] if first < len(a) else None
            got = b[first] if first < len(b) else None
            note += f"; first difference at segment {first}: ns-2 {at}, aqmlab {got}"
        differing = 0.0 if same else float(max(len(a), len(b)) - first)
        rows.append(
            row(
                f"{who} segments identical (seq, ack, len, flags)",
                len(a),
                len(b),
                kind="given",
                difference=differing,
                tol=0.0,
                note=note,
            )
        )
        shown = _window_compared(a)
        windows = [i for i in range(first) if shown[i]]
        prefix = range(first)
        for what, attr, idx, tol in (
            ("send times, max |difference| (s)", "t", prefix, TIME_TOL_S),
            ("cwnd (segments), max |difference|", "cwnd", windows, CWND_TOL),
            ("ssthresh (segments), max |difference|", "ssthresh", windows, CWND_TOL),
        ):
            diff = max((abs(getattr(a[i], attr) - getattr(b[i], attr)) for i in idx), default=0.0)
            last = [getattr(x[first - 1], attr) if first else math.nan for x in (a, b)]
            rows.append(
                row(
                    f"{who} {what} over the identical prefix",
                    *last,
                    kind="given",
                    difference=diff,
                    tol=tol,
                )
            )
    return rows


def run_case(case: Case, out: Path) -> tuple[list[Row], list[Seg], list[Seg]]:
    theirs, resolved = _run_ns2(case, out / "tcp" / case.name)
    ours = _run_ours(resolved)
    dump = out / "tcp" / case.name / "segments.json"
    dump.write_text(
        json.dumps({"ns2": [s.__dict__ for s in theirs], "aqmlab": [s.__dict__ for s in ours]})
    )
    return _compare(case, theirs, ours), theirs, ours


def run(out: Path, fast: bool) -> list[Row]:
    """Every case: the whole suite takes about 10 s, so the fast subset is all of it."""
    del fast
    rows: list[Row] = []
    for case in CASES:
        rows.extend(run_case(case, out)[0])
    return rows
