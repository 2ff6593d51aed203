"""The processes of the Linux testbed, each run inside one network namespace by the driver
(`ip netns exec NS python agents.py ROLE ...`). Standard library only: this file is run as a
script, not imported as part of the package.

Roles:
  forward  the delay line: a bridge between two interfaces (AF_PACKET) that holds every frame
           for its flow's one-way delay (by TCP/UDP port), releasing frames in time order
  send     the data senders (servers): accept N connections, write as fast as TCP takes
           data, sample each socket's tcp_info (what `ss -ti` prints) every few ms
  receive  the receivers (clients): open connection i at its start time, read everything,
           record the bytes received per flow every few ms
  qdisc    sample one qdisc's counters (what `tc -s qdisc` prints) over rtnetlink
  web_serve  the short flows' servers: per connection, read the request, write the response
           bytes it asks for, close
  web_fetch  the short flows' clients: open one connection per row of a schedule at its
           time, send the request, read the response, record the completion time
  echo     a UDP echo server (for the RTT check through the delay line)
  probe    send UDP probes from given source ports and record their RTTs

Times are CLOCK_MONOTONIC seconds, shared by every namespace; `--t0` is the scenario's time
zero, every table's `t_s` is relative to it. Each agent stops by itself at `--until` (a hard
deadline) or on SIGTERM, and writes its output then.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import heapq
import json
import math
import os
import select
import signal
import socket
import struct
import sys
import time

STOP = False


def _on_term(signum, frame) -> None:
    global STOP
    STOP = True


def _common(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--t0", type=float, required=True, help="time zero (CLOCK_MONOTONIC s)")
    ap.add_argument("--until", type=float, required=True, help="hard deadline (monotonic s)")
    ap.add_argument("--out", required=True, help="output file")


def _low_timer_slack() -> None:
    """Timer slack of 1 ns (PR_SET_TIMERSLACK): sleeps end when asked, not up to 50 µs later."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)


def _realtime(prio: int) -> bool:
    """SCHED_FIFO at `prio` (the kernel's RT throttling still bounds it); False if refused."""
    if prio <= 0:
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        return True
    except (OSError, AttributeError):
        return False


def _write_csv(path: str, header: list[str], rows: list[tuple]) -> None:
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(repr(x) if isinstance(x, float) else str(x) for x in r) + "\n")
    os.replace(tmp, path)


def _write_json(path: str, doc: dict) -> None:
    tmp = path + ".part"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


# --- forward: the delay line ------------------------------------------------------------------

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
HIST_BIN_US = 10
HIST_BINS = 2000  # 0–20 ms in 10 µs bins, the last bin collects the rest


def parse_delays(text: str) -> dict[int, int]:
    """`port:ms,port:ms` → {port: one-way delay in ns}."""
    out = {}
    for part in filter(None, text.split(",")):
        port, ms = part.split(":")
        out[int(port)] = round(float(ms) * 1e6)
    return out


def classify(frame: bytes, delays: dict[int, int], default_ns: int) -> int:
    """The one-way delay (ns) of an Ethernet frame: that of the flow whose port (source or
    destination) is in `delays`, for IPv4 TCP and UDP; `default_ns` for anything else."""
    if len(frame) >= 38 and frame[12] == 0x08 and frame[13] == 0x00 and frame[23] in (6, 17):
        ihl = (frame[14] & 0x0F) * 4
        if len(frame) >= 14 + ihl + 4:
            sport, dport = struct.unpack_from("!HH", frame, 14 + ihl)
            d = delays.get(dport)
            if d is None:
                d = delays.get(sport)
            if d is not None:
                return d
    return default_ns


class Lateness:
    """Histogram of how late frames left relative to their release time, and when the
    frames more than 1 ms late left (the first 2000; monotonic s)."""

    def __init__(self) -> None:
        self.bins = [0] * HIST_BINS
        self.n = 0
        self.sum_us = 0.0
        self.max_us = 0.0
        self.late_1ms: list[tuple[float, float]] = []

    def add(self, late_ns: int) -> None:
        us = late_ns / 1000.0
        self.n += 1
        self.sum_us += us
        self.max_us = max(self.max_us, us)
        self.bins[min(max(int(us // HIST_BIN_US), 0), HIST_BINS - 1)] += 1
        if us > 1000.0 and len(self.late_1ms) < 2000:
            self.late_1ms.append((round(time.monotonic(), 4), round(us, 1)))

    def quantile(self, q: float) -> float:
        if self.n == 0:
            return float("nan")
        target, acc = q * self.n, 0
        for i, c in enumerate(self.bins):
            acc += c
            if acc >= target:
                return (i + 1) * HIST_BIN_US
        return HIST_BINS * HIST_BIN_US

    def doc(self) -> dict:
        return {
            "frames": self.n,
            "mean_us": self.sum_us / self.n if self.n else float("nan"),
            "p50_us": self.quantile(0.5),
            "p99_us": self.quantile(0.99),
            "p999_us": self.quantile(0.999),
            "max_us": self.max_us,
            "bin_us": HIST_BIN_US,
            "histogram": {str(i * HIST_BIN_US): c for i, c in enumerate(self.bins) if c},
            "over_1ms": sum(c for i, c in enumerate(self.bins) if i * HIST_BIN_US >= 1000),
            "late_1ms_at": self.late_1ms,
        }


def _packet_socket(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    for force, plain, val in (
        (SO_RCVBUFFORCE, socket.SO_RCVBUF, 16 << 20),
        (SO_SNDBUFFORCE, socket.SO_SNDBUF, 4 << 20),
    ):
        try:
            s.setsockopt(socket.SOL_SOCKET, force, val)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, plain, val)
    with contextlib.suppress(OSError):  # else filtered by packet type when read
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setblocking(False)
    return s


def _socket_drops(s: socket.socket) -> tuple[int, int]:
    """(packets, drops) since the last call (PACKET_STATISTICS resets on read)."""
    packets, drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    return packets, drops


def forward(args) -> None:
    delays = parse_delays(args.delays)
    default_ns = round(args.default_ms * 1e6)
    socks = [_packet_socket(args.a), _packet_socket(args.b)]
    for s in socks:
        _socket_drops(s)  # reset the counters
    rt = _realtime(args.rt_prio)
    late = [Lateness(), Lateness()]  # frames leaving on a, on b
    read_lag = Lateness()  # kernel receive timestamp → read by us
    heap: list = []
    seq = 0
    counts = [[0, 0], [0, 0]]  # frames, bytes leaving on a, on b
    max_held = 0
    no_stamp = 0
    cmsg_space = socket.CMSG_SPACE(16)
    deadline = args.until
    clock = time.time_ns  # the receive timestamps are CLOCK_REALTIME
    while not STOP and time.monotonic() < deadline:
        now = clock()
        while heap and heap[0][0] <= now:
            rel, _, out, frame = heapq.heappop(heap)
            socks[out].send(frame)
            now = clock()
            late[out].add(now - rel)
            counts[out][0] += 1
            counts[out][1] += len(frame)
        timeout = 0.05 if not heap else max((heap[0][0] - clock()) / 1e9, 0.0)
        ready, _, _ = select.select(socks, [], [], min(timeout, 0.05))
        for s in ready:
            out = 1 if s is socks[0] else 0
            while True:
                try:
                    frame, anc, _, addr = s.recvmsg(65536, cmsg_space)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                t_read = clock()
                stamp = None
                for level, kind, data in anc:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                        sec, nsec = struct.unpack("qq", data[:16])
                        stamp = sec * 1_000_000_000 + nsec
                # A stamp missing, or absurd (not from this second), falls back on our clock.
                if stamp is None or not (t_read - 1_000_000_000 < stamp <= t_read):
                    no_stamp += 1
                    stamp = t_read
                read_lag.add(t_read - stamp)
                seq += 1
                heapq.heappush(heap, (stamp + classify(frame, delays, default_ns), seq, out, frame))
        max_held = max(max_held, len(heap))
    drops = [_socket_drops(s)[1] for s in socks]
    _write_json(
        args.out,
        {
            "realtime": rt,
            "frames_out": {args.a: counts[0][0], args.b: counts[1][0]},
            "bytes_out": {args.a: counts[0][1], args.b: counts[1][1]},
            "socket_drops": {args.a: drops[0], args.b: drops[1]},
            "held_at_exit": len(heap),
            "max_held": max_held,
            "frames_without_kernel_stamp": no_stamp,
            "lateness": {args.a: late[0].doc(), args.b: late[1].doc()},
            "read_lag": read_lag.doc(),
            "cpu_s": sum(os.times()[:2]),
        },
    )


# --- tcp_info ---------------------------------------------------------------------------------

# struct tcp_info (include/uapi/linux/tcp.h): (name, offset, format), the fields we keep.
TCP_INFO_FIELDS = (
    ("ca_state", 1, "B"),
    ("rto_us", 8, "I"),
    ("snd_mss", 16, "I"),
    ("unacked", 24, "I"),
    ("sacked", 28, "I"),
    ("lost", 32, "I"),
    ("retrans", 36, "I"),
    ("rtt_us", 68, "I"),
    ("rttvar_us", 72, "I"),
    ("snd_ssthresh", 76, "I"),
    ("snd_cwnd", 80, "I"),
    ("total_retrans", 100, "I"),
    ("pacing_rate", 104, "Q"),
    ("bytes_acked", 120, "Q"),
    ("min_rtt_us", 148, "I"),
    ("delivered", 192, "I"),
)
TCP_INFO_LEN = 232


def tcp_info(raw: bytes) -> tuple:
    return tuple(struct.unpack_from(fmt, raw, off)[0] for _, off, fmt in TCP_INFO_FIELDS)


# --- send: the data senders ------------------------------------------------------------------


def send(args) -> None:
    host, port = args.listen.rsplit(":", 1)
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    lst.bind((host, int(port)))
    lst.listen(max(args.flows, 16))
    lst.setblocking(False)
    print("ready", flush=True)
    base = args.port_base
    conns: dict[int, socket.socket] = {}  # flow → socket
    accepted_s: dict[int, float] = {}
    chunk = memoryview(bytes(1 << 16))
    dt = args.sample_ms / 1000.0
    rows: list[tuple] = []
    next_tick = args.t0
    end = args.end
    cc_seen = set()
    while not STOP and time.monotonic() < min(end, args.until):
        now = time.monotonic()
        if now >= next_tick:
            t = now - args.t0
            for flow, c in conns.items():
                try:
                    raw = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
                except OSError:
                    continue
                rows.append((round(t, 6), flow, *tcp_info(raw)))
            next_tick += dt * (1 + int((now - next_tick) // dt))
        rl = [lst] if len(conns) < args.flows else []
        wl = list(conns.values())
        timeout = max(0.0, min(next_tick, end) - time.monotonic())
        r, w, _ = select.select(rl, wl, [], timeout)
        if r:
            try:
                c, peer = lst.accept()
            except BlockingIOError:
                c = None
            if c is not None:
                flow = peer[1] - base
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
                cc_seen.add(
                    c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
                    .rstrip(b"\0")
                    .decode()
                )
                c.setblocking(False)
                conns[flow] = c
                accepted_s[flow] = time.monotonic() - args.t0
        for c in w:
            try:
                while c.send(chunk):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                conns = {f: x for f, x in conns.items() if x is not c}
    header = ["t_s", "flow"] + [n for n, _, _ in TCP_INFO_FIELDS]
    _write_csv(args.out, header, rows)
    _write_json(
        args.out + ".json",
        {
            "accepted_s": accepted_s,
            "congestion_control": sorted(cc_seen),
            "cpu_s": sum(os.times()[:2]),
        },
    )
    for c in conns.values():
        c.close()


# --- receive: the receivers ------------------------------------------------------------------


def receive(args) -> None:
    host, port = args.server.rsplit(":", 1)
    starts = [float(x) for x in args.starts.split(",")]
    n = len(starts)
    base = args.port_base
    socks: dict[socket.socket, int] = {}
    connecting: dict[socket.socket, int] = {}
    got = [0] * n
    established_s = [float("nan")] * n
    buf = bytearray(1 << 17)
    dt = args.sample_ms / 1000.0
    rows: list[tuple] = []
    next_tick = args.t0
    pending = sorted(range(n), key=lambda i: starts[i])
    end = args.end
    while not STOP and time.monotonic() < min(end, args.until):
        now = time.monotonic()
        while pending and now >= args.t0 + starts[pending[0]]:
            i = pending.pop(0)
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if args.cc:  # the receiver side of a congestion control that has one (DCTCP)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
            s.bind((args.bind, base + i))
            s.setblocking(False)
            s.connect_ex((host, int(port)))
            connecting[s] = i
        if now >= next_tick:
            t = round(now - args.t0, 6)
            rows.extend((t, i, got[i]) for i in range(n))
            next_tick += dt * (1 + int((now - next_tick) // dt))
        wake = min(next_tick, end)
        if pending:
            wake = min(wake, args.t0 + starts[pending[0]])
        r, w, _ = select.select(
            list(socks), list(connecting), [], max(0.0, wake - time.monotonic())
        )
        for s in w:
            i = connecting.pop(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                established_s[i] = time.monotonic() - args.t0
                socks[s] = i
            else:
                s.close()
        for s in r:
            i = socks[s]
            try:
                while True:
                    k = s.recv_into(buf)
                    if k == 0:
                        del socks[s]
                        break
                    got[i] += k
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                socks.pop(s, None)
    t = round(time.monotonic() - args.t0, 6)
    rows.extend((t, i, got[i]) for i in range(n))
    _write_csv(args.out, ["t_s", "flow", "bytes"], rows)
    _write_json(
        args.out + ".json",
        {"established_s": established_s, "cpu_s": sum(os.times()[:2])},
    )


# --- qdisc: counters over rtnetlink -----------------------------------------------------------

RTM_GETQDISC = 38
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLM_F_REQUEST = 1
NLM_F_DUMP = 0x300
TCA_KIND = 1
TCA_STATS = 3
TCA_XSTATS = 4
TCA_STATS2 = 7
TCA_STATS_BASIC = 1
TCA_STATS_QUEUE = 3
TCA_STATS_PKT64 = 8


def _attrs(buf: bytes, off: int, end: int):
    while off + 4 <= end:
        alen, atype = struct.unpack_from("HH", buf, off)
        if alen < 4:
            break
        yield atype & 0x3FFF, buf[off + 4 : off + alen]
        off += (alen + 3) & ~3


def parse_qdisc_dump(buf: bytes) -> tuple[list[dict], bool]:
    """The qdiscs of an RTM_NEWQDISC dump reply: [{ifindex, handle, parent, kind, bytes,
    packets, qlen, backlog, drops, requeues, overlimits}], and whether NLMSG_DONE was seen."""
    out, off, done = [], 0, False
    while off + 16 <= len(buf):
        mlen, mtype, _, _, _ = struct.unpack_from("IHHII", buf, off)
        if mlen < 16:
            break
        if mtype == NLMSG_DONE:
            done = True
        elif mtype == NLMSG_ERROR:
            (err,) = struct.unpack_from("i", buf, off + 16)
            if err:
                raise OSError(-err, os.strerror(-err))
        elif mlen >= 36:
            _, _, _, ifindex, handle, parent, _ = struct.unpack_from("BBHiIII", buf, off + 16)
            q = {"ifindex": ifindex, "handle": handle, "parent": parent, "kind": ""}
            for atype, data in _attrs(buf, off + 36, off + mlen):
                if atype == TCA_KIND:
                    q["kind"] = data.rstrip(b"\0").decode()
                elif atype == TCA_XSTATS:
                    q["xstats"] = bytes(data)
                elif atype == TCA_STATS2:
                    for stype, sdata in _attrs(data, 0, len(data)):
                        if stype == TCA_STATS_BASIC and len(sdata) >= 12:
                            q["bytes"], packets = struct.unpack_from("QI", sdata)
                            q.setdefault("packets", packets)
                        elif stype == TCA_STATS_PKT64 and len(sdata) >= 8:
                            (q["packets"],) = struct.unpack_from("Q", sdata)
                        elif stype == TCA_STATS_QUEUE and len(sdata) >= 20:
                            (
                                q["qlen"],
                                q["backlog"],
                                q["drops"],
                                q["requeues"],
                                q["overlimits"],
                            ) = struct.unpack_from("IIIII", sdata)
            out.append(q)
        off += (mlen + 3) & ~3
    return out, done


# Where each qdisc's ECN marks are in its TCA_XSTATS structure (include/uapi/linux/pkt_sched.h,
# Linux 6.1): byte offsets of u32 counters added together. fq_codel: tc_fq_codel_xstats = u32
# type, then tc_fq_codel_qd_stats {maxpacket, drop_overlimit, ecn_mark, new_flow_count,
# new_flows_len, old_flows_len, ce_mark, ...}: ecn_mark (CoDel's marks) + ce_mark (those of
# ce_threshold); codel: tc_codel_xstats {maxpacket, count, lastcount, ldelay, drop_next,
# drop_overlimit, ecn_mark, dropping, ce_mark}; red: tc_red_xstats {early, pdrop, other,
# marked}; pie: tc_pie_xstats {u64 prob, delay, avg_dq_rate, dq_rate_estimating, packets_in,
# dropped, overlimit, maxq, ecn_mark}.
MARK_OFFSETS = {"fq_codel": (12, 28), "codel": (24, 32), "red": (12,), "pie": (36,)}


def marks(kind: str, xstats: bytes | None) -> int:
    """The ECN marks a qdisc counted (0 for a kind without marks or without xstats)."""
    if not xstats:
        return 0
    return sum(
        struct.unpack_from("I", xstats, off)[0]
        for off in MARK_OFFSETS.get(kind, ())
        if off + 4 <= len(xstats)
    )


def _dump_qdiscs(nl: socket.socket, seq: int) -> list[dict]:
    req = struct.pack("IHHII", 36, RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
    req += struct.pack("BBHiIII", socket.AF_UNSPEC, 0, 0, 0, 0, 0, 0)
    nl.send(req)
    out: list[dict] = []
    while True:
        got, done = parse_qdisc_dump(nl.recv(1 << 16))
        out.extend(got)
        if done:
            return out


def qdisc(args) -> None:
    ifindex = socket.if_nametoindex(args.dev)
    major, minor = args.handle.split(":")
    handle = (int(major, 16) << 16) | int(minor or "0", 16)
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
    nl.bind((0, 0))
    dt = args.sample_ms / 1000.0
    rows: list[tuple] = []
    keys = ("packets", "bytes", "qlen", "backlog", "drops", "overlimits", "requeues")
    next_tick = args.t0
    seq = 0
    while not STOP and time.monotonic() < min(args.end, args.until):
        now = time.monotonic()
        if now >= next_tick:
            seq += 1
            qs = [
                q
                for q in _dump_qdiscs(nl, seq)
                if q["ifindex"] == ifindex and q["handle"] == handle
            ]
            t = time.monotonic()
            if qs:
                q = qs[0]
                rows.append(
                    (
                        round((now + t) / 2 - args.t0, 6),
                        *(q.get(k, 0) for k in keys),
                        marks(q["kind"], q.get("xstats")),
                    )
                )
            next_tick += dt * (1 + int((t - next_tick) // dt))
        time.sleep(max(0.0, min(next_tick, args.end) - time.monotonic()))
    _write_csv(args.out, ["t_s", *keys, "marks"], rows)
    _write_json(args.out + ".json", {"cpu_s": sum(os.times()[:2]), "samples": len(rows)})


# --- echo / probe: RTT through the delay line -------------------------------------------------


def echo(args) -> None:
    host, port = args.bind.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, int(port)))
    print("ready", flush=True)
    while not STOP and time.monotonic() < args.until:
        r, _, _ = select.select([s], [], [], 0.05)
        if r:
            data, peer = s.recvfrom(2048)
            s.sendto(data, peer)


def probe(args) -> None:
    host, port = args.server.rsplit(":", 1)
    rows = []
    for sport in (int(p) for p in args.sports.split(",")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((args.bind, sport))
        s.setblocking(False)
        for k in range(args.count):
            if STOP or time.monotonic() > args.until:
                break
            t_send = time.monotonic()
            s.sendto(struct.pack("!Id", k, t_send), (host, int(port)))
            got = None
            while time.monotonic() < t_send + 2.0:
                r, _, _ = select.select([s], [], [], 0.5)
                if r:
                    data, _ = s.recvfrom(2048)
                    t_recv = time.monotonic()
                    if struct.unpack("!I", data[:4])[0] == k:
                        got = t_recv
                        break
            rtt = (got - t_send) * 1000.0 if got is not None else float("nan")
            rows.append((sport, k, round(rtt, 6)))
            time.sleep(max(0.0, t_send + args.interval - time.monotonic()))
        s.close()
    _write_csv(args.out, ["sport", "k", "rtt_ms"], rows)


# --- web_serve / web_fetch: the short flows -----------------------------------------------------

# A request starts with this header: the schedule's row, the request's and the response's sizes
# (bytes). The rest of the request is padding up to its size.
WEB_HEADER = struct.Struct("!IQQ")


def read_schedule(path: str) -> list[tuple[int, float, int, int]]:
    """(row, start_s, request_bytes, response_bytes) of each row of a schedule CSV (columns
    start_s, request_bytes, response_bytes first; `#` lines are comments)."""
    rows = []
    with open(path) as f:
        lines = [x for x in f if x.strip() and not x.startswith("#")]
    head = lines[0].strip().split(",")
    i_t, i_q, i_r = (head.index(c) for c in ("start_s", "request_bytes", "response_bytes"))
    for k, line in enumerate(lines[1:]):
        cols = line.strip().split(",")
        rows.append((k, float(cols[i_t]), int(cols[i_q]), int(cols[i_r])))
    return rows


def request(row: int, request_bytes: int, response_bytes: int) -> bytes:
    """The request of a row: the header, padded to `request_bytes` (at least the header)."""
    head = WEB_HEADER.pack(row, request_bytes, response_bytes)
    return head + bytes(max(request_bytes - len(head), 0))


def web_serve(args) -> None:
    """Accepts connections; on each reads the request (its size is in its header), then
    writes the response's bytes and closes: HTTP/1.0, one exchange per connection."""
    import selectors

    host, port = args.listen.rsplit(":", 1)
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    lst.bind((host, int(port)))
    lst.listen(1024)
    lst.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(lst, selectors.EVENT_READ)
    state: dict[socket.socket, list] = {}  # socket → [bytes read, header, bytes left to send]
    zeros = memoryview(bytes(1 << 16))
    served = accepted = 0
    print("ready", flush=True)
    while not STOP and time.monotonic() < args.until:
        for key, ev in sel.select(0.05):
            s = key.fileobj
            if s is lst:
                while True:
                    try:
                        c, _ = lst.accept()
                    except BlockingIOError:
                        break
                    c.setblocking(False)
                    state[c] = [0, b"", 0]
                    sel.register(c, selectors.EVENT_READ)
                    accepted += 1
                continue
            st = state[s]
            try:
                if ev & selectors.EVENT_READ and st[2] == 0:
                    data = s.recv(1 << 16)
                    if not data:
                        raise OSError("closed before its request")
                    st[0] += len(data)
                    if len(st[1]) < WEB_HEADER.size:
                        st[1] += data[: WEB_HEADER.size - len(st[1])]
                    if len(st[1]) == WEB_HEADER.size:
                        _, req, rsp = WEB_HEADER.unpack(st[1])
                        if st[0] >= req:
                            st[2] = rsp
                            sel.modify(s, selectors.EVENT_WRITE)
                if st[2] > 0 and ev & selectors.EVENT_WRITE:
                    while st[2] > 0:
                        k = s.send(zeros[: min(st[2], len(zeros))])
                        st[2] -= k
                    if st[2] == 0:
                        served += 1
                        raise OSError("done")
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:  # done, or the client went away: close (FIN after the data)
                sel.unregister(s)
                del state[s]
                s.close()
    _write_json(args.out, {"accepted": accepted, "served": served, "open_at_end": len(state),
                           "cpu_s": sum(os.times()[:2])})  # fmt: skip


def web_fetch(args) -> None:
    """Opens connection k at t0 + start_s of row k (a fresh socket each), sends its request
    once connected, reads until the response's bytes have all arrived, closes. Writes per
    row: when it was due, opened, connected, got its first and its last response byte
    (seconds after t0; NaN if not reached by the end) and the bytes received."""
    import selectors

    host, port = args.server.rsplit(":", 1)
    sched = read_schedule(args.schedule)
    nan = float("nan")
    # row → [opened, established, first byte, last byte, bytes got]
    rec = {r: [nan, nan, nan, nan, 0] for r, _, _, _ in sched}
    sel = selectors.DefaultSelector()
    conns: dict[socket.socket, tuple] = {}  # socket → (row, request bytes left, response size)
    pending = 0
    end = min(args.end, args.until)
    while not STOP and time.monotonic() < end:
        now = time.monotonic()
        while pending < len(sched) and now >= args.t0 + sched[pending][1]:
            row, _, req, rsp = sched[pending]
            pending += 1
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if args.cc:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
            s.setblocking(False)
            s.connect_ex((host, int(port)))
            rec[row][0] = time.monotonic() - args.t0
            conns[s] = (row, memoryview(request(row, req, rsp)), rsp)
            sel.register(s, selectors.EVENT_WRITE)
        wake = end if pending >= len(sched) else min(end, args.t0 + sched[pending][1])
        for key, ev in sel.select(max(0.0, min(wake - time.monotonic(), 0.05))):
            s = key.fileobj
            row, left, rsp = conns[s]
            r = rec[row]
            t = time.monotonic() - args.t0
            try:
                if ev & selectors.EVENT_WRITE:
                    if math.isnan(r[1]):
                        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                            raise OSError("connect failed")
                        r[1] = t
                    k = s.send(left)
                    left = left[k:]
                    conns[s] = (row, left, rsp)
                    if not len(left):
                        sel.modify(s, selectors.EVENT_READ)
                if ev & selectors.EVENT_READ:
                    while True:
                        data = s.recv(1 << 17)
                        if not data:
                            raise OSError("closed")
                        if r[4] == 0:
                            r[2] = time.monotonic() - args.t0
                        r[4] += len(data)
                        if r[4] >= rsp:
                            r[3] = time.monotonic() - args.t0
                            raise OSError("done")
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                sel.unregister(s)
                del conns[s]
                s.close()
    rows = [(row, t, req, rsp, *rec[row]) for row, t, req, rsp in sched if row < pending]
    _write_csv(
        args.out,
        ["row", "start_s", "request_bytes", "response_bytes", "opened_s", "established_s",
         "first_byte_s", "last_byte_s", "bytes"],
        rows,
    )  # fmt: skip
    _write_json(args.out + ".json", {"opened": pending, "open_at_end": len(conns),
                                     "cpu_s": sum(os.times()[:2])})  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="agents.py")
    sub = ap.add_subparsers(dest="role", required=True)
    p = sub.add_parser("forward")
    _common(p)
    p.add_argument("--a", required=True, help="interface toward the senders")
    p.add_argument("--b", required=True, help="interface toward the router")
    p.add_argument("--delays", required=True, help="port:one-way-ms,...")
    p.add_argument("--default-ms", type=float, default=0.0)
    p.add_argument("--rt-prio", type=int, default=0, help="SCHED_FIFO priority (0: none)")
    p = sub.add_parser("send")
    _common(p)
    p.add_argument("--listen", required=True)
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--cc", required=True)
    p.add_argument("--port-base", type=int, required=True)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--sample-ms", type=float, default=10.0)
    p = sub.add_parser("receive")
    _common(p)
    p.add_argument("--server", required=True)
    p.add_argument("--bind", required=True)
    p.add_argument("--starts", required=True, help="start times (s after t0), one per flow")
    p.add_argument("--cc", default="", help="congestion control of the sockets (default: none)")
    p.add_argument("--port-base", type=int, required=True)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--sample-ms", type=float, default=10.0)
    p = sub.add_parser("qdisc")
    _common(p)
    p.add_argument("--dev", required=True)
    p.add_argument("--handle", required=True)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--sample-ms", type=float, default=10.0)
    p = sub.add_parser("echo")
    p.add_argument("--bind", required=True)
    p.add_argument("--until", type=float, required=True)
    p = sub.add_parser("probe")
    _common(p)
    p.add_argument("--server", required=True)
    p.add_argument("--bind", required=True)
    p.add_argument("--sports", required=True)
    p.add_argument("--count", type=int, default=30)
    p.add_argument("--interval", type=float, default=0.01)
    p = sub.add_parser("web_serve")
    p.add_argument("--listen", required=True)
    p.add_argument("--cc", required=True)
    p.add_argument("--until", type=float, required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("web_fetch")
    _common(p)
    p.add_argument("--server", required=True)
    p.add_argument("--schedule", required=True, help="CSV: start_s, request/response bytes")
    p.add_argument("--cc", default="", help="congestion control of the sockets (default: none)")
    p.add_argument("--end", type=float, required=True)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    _low_timer_slack()
    {
        "forward": forward,
        "send": send,
        "receive": receive,
        "qdisc": qdisc,
        "echo": echo,
        "probe": probe,
        "web_serve": web_serve,
        "web_fetch": web_fetch,
    }[args.role](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
