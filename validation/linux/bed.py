"""The dumbbell in network namespaces, and one run of bulk flows through it.

    senders (S) ── s0 ═ d0 ── delay line (D) ── d1 ═ r0 ── router (R) ── r1 ═ c0 ── receivers (C)
                                                              htb 10 Mb/s + pfifo

Four namespaces named `aqlb<pid><role>` (role s, d, r, c), three veth pairs with fixed MAC
addresses and permanent neighbour entries (no ARP through the delay line). The delay line is
a bridge in user space (`agents.py forward`): it holds every frame for its flow's one-way
delay, half the flow's RTT, in both directions. The bottleneck is the router's egress toward
the receivers: an htb class at the rate with a pfifo of `limit` packets under it. Every
offload is off (TSO, GSO, GRO, checksums), so every packet is one MTU-sized frame.

Everything is torn down at the end, on error, Ctrl-C, SIGTERM or the hard timeout: the
agents are killed (their process groups, by id), the namespaces deleted. Namespaces of an
earlier run whose driver is gone (its pid in the name no longer alive) are deleted first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PREFIX = "aqlb"
ROLES = ("s", "d", "r", "c")
AGENTS = Path(__file__).resolve().parent / "agents.py"

SENDER_IP = "10.201.1.1"
ROUTER_S_IP = "10.201.1.254"
ROUTER_C_IP = "10.201.2.254"
RECEIVER_IP = "10.201.2.1"
MAC = {
    "s0": "02:a9:00:00:01:01",
    "d0": "02:a9:00:00:01:02",
    "d1": "02:a9:00:00:01:03",
    "r0": "02:a9:00:00:01:04",
    "r1": "02:a9:00:00:02:01",
    "c0": "02:a9:00:00:02:02",
}
LISTEN_PORT = 5201
WEB_PORT = 5202  # the short flows' server (agents.py web_serve)
ECHO_PORT = 5301
PORT_BASE = 40000  # flow i: the receiver's port PORT_BASE + i (the delay line keys on it)
OFFLOADS = ("tso", "gso", "gro", "tx", "rx", "sg")
TOOLS = ("ip", "tc", "ethtool", "ss")


class BedError(RuntimeError):
    pass


@dataclass
class BedConfig:
    flows: int
    cc: str
    rtts_ms: list[float]  # per flow: the RTT the delay line adds (half each way)
    seconds: float  # scenario length (time zero = the first possible flow start)
    starts_s: list[float]  # per flow: when the receiver opens the connection
    limit: int = 100  # pfifo limit, packets
    rate_mbit: float = 10.0
    burst_bytes: int = 1600  # htb burst and cburst (one full frame and a little)
    sample_ms: float = 10.0  # tcp_info, qdisc and byte-count sampling period
    rt_prio: int = 1  # SCHED_FIFO priority of the delay line (0: ordinary scheduling)
    probes: int = 30  # UDP probes per distinct RTT before the flows start
    sysctls: dict[str, str] = field(default_factory=dict)  # extra, set in S and C
    # The bottleneck's leaf qdisc under the htb class: its tc kind and options
    # (qdiscs.tc_args), pfifo of `limit` packets when empty.
    qdisc_args: list[str] = field(default_factory=list)
    # Time zero is this long after the agents are started: Python starts in well under a
    # second on the host; in user-mode Linux every page fault is a round trip through ptrace.
    start_margin_s: float = 1.5
    # The delay line: "agent" (the user-space bridge, per-flow RTTs; the host kernel here has
    # no netem) or "netem" (a kernel bridge in D with netem delay RTT/2 on both of its
    # egresses: one RTT for all flows; where netem exists, e.g. in user-mode Linux, where
    # every frame through a user-space bridge would cost two ptrace round trips).
    delay: str = "agent"
    netem_limit: int = 100000  # packets netem may hold (it holds a BDP of each direction)
    # The short flows (workload.py): a schedule CSV the receivers' namespace fetches beside the
    # greedy flows, one connection per row (agents.py web_fetch / web_serve); "" for none.
    web_schedule: str = ""


# Congestion controls that need ECN and a receiver of their own kind: DCTCP's receiver echoes
# every change of the CE state (tcp_dctcp.c dctcp_ece_ack_update, run by the receiving
# socket's congestion control), so the receivers set it on their sockets too (TCP_CONGESTION
# before connecting: a namespace's default may not name a restricted algorithm, EPERM in
# tcp_set_default_congestion_control); tcp_ecn = 1 makes the opener ask for ECN (Linux's
# default 2 only answers; a DCTCP socket asks anyway, tcp_ca_needs_ecn). DCTCP sets ECT on
# its data itself.
ECN_CCS = ("dctcp",)


def ecn_sysctls(cc: str) -> dict[str, str]:
    """The sysctls set in the senders' and receivers' namespaces for `cc` (BedConfig.sysctls,
    `__` for `.`): ECN on for an ECN_CCS one, else none."""
    return {"net__ipv4__tcp_ecn": "1"} if cc in ECN_CCS else {}


def receiver_cc(cc: str) -> list[str]:
    """The receivers' `--cc` arguments: the congestion control for an ECN_CCS one (its
    receiver side), else none (the receivers keep the namespace's default)."""
    return ["--cc", cc] if cc in ECN_CCS else []


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def _run(cmd: list[str], *, check: bool = True, timeout: float = 20.0) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise BedError(f"`{' '.join(cmd)}` failed ({p.returncode}): {p.stderr.strip()}")
    return p.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _delete_namespace(ns: str) -> None:
    """Kills what still runs in `ns` (by pid) and deletes it."""
    pids = _run(["ip", "netns", "pids", ns], check=False).split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    _run(["ip", "netns", "del", ns], check=False)


def cleanup_leftovers() -> list[str]:
    """Deletes the namespaces of earlier runs whose driver process is gone."""
    gone = []
    for ns in namespaces():
        m = re.fullmatch(rf"{PREFIX}(\d+)[{''.join(ROLES)}]", ns)
        if m and not _alive(int(m.group(1))):
            _delete_namespace(ns)
            gone.append(ns)
    return gone


class Bed:
    """The namespaces and links of one run. Use as a context manager: leaving it kills the
    agents and deletes the namespaces, however it is left."""

    def __init__(self, cfg: BedConfig) -> None:
        self.cfg = cfg
        self.tag = f"{PREFIX}{os.getpid()}"
        self.ns = {r: self.tag + r for r in ROLES}
        self.procs: list[subprocess.Popen] = []

    # -- building ---------------------------------------------------------------------------

    def _ip(self, role: str, *args: str) -> None:
        _run(["ip", "-n", self.ns[role], *args])

    def _exec(self, role: str, *args: str, check: bool = True) -> str:
        return _run(["ip", "netns", "exec", self.ns[role], *args], check=check)

    def _sysctl(self, role: str, **kv: str) -> None:
        pairs = [f"{k.replace('__', '.')}={v}" for k, v in kv.items()]
        self._exec(role, "sysctl", "-qw", *pairs)

    def _veth(self, a_role: str, a: str, b_role: str, b: str) -> None:
        _run(
            [
                "ip", "link", "add", a, "netns", self.ns[a_role], "address", MAC[a],
                "type", "veth", "peer", "name", b, "netns", self.ns[b_role], "address", MAC[b],
            ]
        )  # fmt: skip

    def build(self) -> None:
        cfg = self.cfg
        for role in ROLES:
            if self.ns[role] in namespaces():
                _delete_namespace(self.ns[role])
            _run(["ip", "netns", "add", self.ns[role]])
            self._sysctl(
                role,
                net__ipv6__conf__all__disable_ipv6="1",
                net__ipv6__conf__default__disable_ipv6="1",
            )
            self._ip(role, "link", "set", "lo", "up")
        self._veth("s", "s0", "d", "d0")
        self._veth("d", "d1", "r", "r0")
        self._veth("r", "r1", "c", "c0")
        for role, dev in (("s", "s0"), ("d", "d0"), ("d", "d1"), ("r", "r0"), ("r", "r1"),
                          ("c", "c0")):  # fmt: skip
            args = [x for o in OFFLOADS for x in (o, "off")]
            self._exec(role, "ethtool", "-K", dev, *args)
            self._ip(role, "link", "set", dev, "up")
        for dev in ("d0", "d1"):
            self._ip("d", "link", "set", dev, "promisc", "on")
        if cfg.delay == "netem":
            self._netem_delay()
        elif cfg.delay != "agent":
            raise BedError(f"delay {cfg.delay!r}: expected agent or netem")
        self._ip("s", "addr", "add", f"{SENDER_IP}/24", "dev", "s0")
        self._ip("r", "addr", "add", f"{ROUTER_S_IP}/24", "dev", "r0")
        self._ip("r", "addr", "add", f"{ROUTER_C_IP}/24", "dev", "r1")
        self._ip("c", "addr", "add", f"{RECEIVER_IP}/24", "dev", "c0")
        self._ip("s", "route", "add", "default", "via", ROUTER_S_IP)
        self._ip("c", "route", "add", "default", "via", ROUTER_C_IP)
        for role, ip, dev, mac in (
            ("s", ROUTER_S_IP, "s0", MAC["r0"]),
            ("r", SENDER_IP, "r0", MAC["s0"]),
            ("r", RECEIVER_IP, "r1", MAC["c0"]),
            ("c", ROUTER_C_IP, "c0", MAC["r1"]),
        ):
            self._ip(role, "neigh", "replace", ip, "lladdr", mac, "dev", dev, "nud", "permanent")
        self._sysctl("r", net__ipv4__ip_forward="1")
        for role in ("s", "c"):
            self._sysctl(role, net__ipv4__tcp_no_metrics_save="1", **cfg.sysctls)
        rate = f"{cfg.rate_mbit}mbit"
        burst = f"{cfg.burst_bytes}b"
        _run(["tc", "-n", self.ns["r"], "qdisc", "add", "dev", "r1", "root", "handle", "1:",
              "htb", "default", "1"])  # fmt: skip
        _run(["tc", "-n", self.ns["r"], "class", "add", "dev", "r1", "parent", "1:",
              "classid", "1:1", "htb", "rate", rate, "ceil", rate, "burst", burst,
              "cburst", burst])  # fmt: skip
        leaf = cfg.qdisc_args or ["pfifo", "limit", str(cfg.limit)]
        _run(["tc", "-n", self.ns["r"], "qdisc", "add", "dev", "r1", "parent", "1:1", "handle",
              "10:", *leaf])  # fmt: skip

    def _netem_delay(self) -> None:
        """D bridges d0 and d1 in the kernel; each direction waits RTT/2 in netem on its
        egress (one delay for every flow: netem here is not classified by port)."""
        rtts = set(self.cfg.rtts_ms)
        if len(rtts) != 1:
            raise BedError("the netem delay line has one RTT for all flows; use delay agent")
        half = f"{rtts.pop() / 2 * 1000:g}us"
        self._ip("d", "link", "add", "br0", "type", "bridge", "stp_state", "0",
                 "forward_delay", "0")  # fmt: skip
        for dev in ("d0", "d1"):
            self._ip("d", "link", "set", dev, "master", "br0")
            _run(["tc", "-n", self.ns["d"], "qdisc", "add", "dev", dev, "root", "netem",
                  "delay", half, "limit", str(self.cfg.netem_limit)])  # fmt: skip
        self._ip("d", "link", "set", "br0", "up")

    def describe(self) -> dict:
        """What was built, as the tools report it (for the run's metadata)."""
        return {
            "namespaces": self.ns,
            "qdisc": self._exec("r", "tc", "-d", "qdisc", "show", "dev", "r1"),
            "delay_qdiscs": self._exec("d", "tc", "-d", "qdisc", "show"),
            "class": self._exec("r", "tc", "-d", "class", "show", "dev", "r1"),
            "offloads_s0": self._exec("s", "ethtool", "-k", "s0"),
            "links": {r: self._exec(r, "ip", "-d", "link", "show") for r in ROLES},
        }

    # -- agents -----------------------------------------------------------------------------

    def spawn(self, role: str, agent: str, *args: str, stdout=None) -> subprocess.Popen:
        cmd = ["ip", "netns", "exec", self.ns[role], sys.executable, str(AGENTS), agent, *args]
        p = subprocess.Popen(
            cmd,
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, grace: float = 3.0) -> None:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)

    def teardown(self) -> None:
        for p in self.procs:
            with contextlib.suppress(Exception):
                self.stop(p, grace=1.0)
        for role in ROLES:
            with contextlib.suppress(Exception):
                _delete_namespace(self.ns[role])

    def __enter__(self) -> Bed:
        try:
            self.build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.teardown()


def _wait_line(p: subprocess.Popen, want: str, timeout: float) -> None:
    """Waits for `want` on the agent's stdout."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(max(0.0, deadline - time.monotonic())):
            line = p.stdout.readline()
            if line.strip() == want:
                return
            if not line:
                break
    err = p.stderr.read() if p.poll() is not None else ""
    raise BedError(f"agent did not say {want!r} within {timeout} s: {err.strip()}")


def _wait(p: subprocess.Popen, deadline: float, what: str) -> None:
    try:
        p.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise BedError(f"{what} still running past its deadline") from None
    if p.returncode != 0:
        raise BedError(f"{what} failed ({p.returncode}): {p.stderr.read().strip()[-2000:]}")


def probe_allowance_s(cfg: BedConfig) -> float:
    """The longest the RTT check may take (`_flows` waits this long for the probes)."""
    return 5.0 + len(set(cfg.rtts_ms)) * cfg.probes * 0.3


def run(cfg: BedConfig, out: Path, *, hard_timeout_s: float | None = None) -> dict:
    """Builds the bed, checks the delay line's RTTs with UDP probes, runs the flows and
    writes the raw samples into `out`:

    - `tcp_info.csv`: per flow every `sample_ms`, the sender's tcp_info (cwnd, ssthresh, rtt…)
    - `bytes.csv`: per flow every `sample_ms`, bytes received so far
    - `qdisc.csv`: the bottleneck pfifo's counters every `sample_ms`
    - `probe.csv`: the probes' RTTs; `forward.json`: the delay line's own timing and drops
    - `meta.json`: configuration, what was built, snapshots of `tc -s` and `ss -ti`, CPU used

    Returns the metadata. The bed is gone when this returns, whatever happened."""
    out.mkdir(parents=True, exist_ok=True)
    # The RTT check before the flows sends `probes` UDP probes per distinct RTT one after the
    # other (up to 0.3 s each, `_flows`): with 64 flows spread over 20-80 ms that is some
    # 100 s, which the budget must add to the scenario's length.
    budget = (hard_timeout_s or (cfg.seconds + 60.0)) + probe_allowance_s(cfg)
    old_alarm = signal.signal(signal.SIGALRM, _on_alarm)
    old_term = signal.signal(signal.SIGTERM, _on_term)
    signal.alarm(int(budget) + 1)
    meta: dict = {"config": asdict(cfg), "kernel": os.uname().release}
    try:
        meta["leftovers_removed"] = cleanup_leftovers()
        with Bed(cfg) as bed:
            meta["bed"] = bed.describe()
            meta.update(_flows(bed, cfg, out, time.monotonic() + budget))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGTERM, old_term)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


class HardTimeout(BedError):
    pass


def _on_alarm(signum, frame) -> None:
    raise HardTimeout("the run passed its hard timeout")


def _on_term(signum, frame) -> None:
    raise KeyboardInterrupt


def _flows(bed: Bed, cfg: BedConfig, out: Path, deadline: float) -> dict:
    meta: dict = {}
    rtts = cfg.rtts_ms
    delays = ",".join(f"{PORT_BASE + i}:{rtts[i] / 2}" for i in range(cfg.flows))
    until = deadline
    t_start = time.monotonic()
    fwd = None
    if cfg.delay == "agent":
        fwd = bed.spawn(
            "d", "forward", "--t0", str(t_start), "--until", str(until), "--out",
            str(out / "forward.json"), "--a", "d0", "--b", "d1", "--delays", delays,
            "--default-ms", str(rtts[0] / 2), "--rt-prio", str(cfg.rt_prio),
        )  # fmt: skip
    # The RTT check: UDP probes from the flows' ports (one per distinct RTT), idle bed.
    echo = bed.spawn(
        "c", "echo", "--bind", f"{RECEIVER_IP}:{ECHO_PORT}", "--until", str(until),
        stdout=subprocess.PIPE,
    )  # fmt: skip
    _wait_line(echo, "ready", 10.0)
    firsts = {}
    for i, r in enumerate(rtts):
        firsts.setdefault(r, PORT_BASE + i)
    probe = bed.spawn(
        "s", "probe", "--t0", str(t_start), "--until", str(until), "--out",
        str(out / "probe.csv"), "--server", f"{RECEIVER_IP}:{ECHO_PORT}", "--bind", SENDER_IP,
        "--sports", ",".join(str(p) for p in firsts.values()), "--count", str(cfg.probes),
    )  # fmt: skip
    _wait(probe, time.monotonic() + probe_allowance_s(cfg), "probe")
    bed.stop(echo)
    meta["probe_ports_rtt_ms"] = {str(p): r for r, p in firsts.items()}

    # Time zero leaves the agents time to start (Python, in a loaded machine).
    t0 = time.monotonic() + cfg.start_margin_s
    end = t0 + cfg.seconds
    common = ["--t0", repr(t0), "--until", repr(min(until, end + 10.0))]
    send = bed.spawn(
        "s", "send", *common, "--out", str(out / "tcp_info.csv"),
        "--listen", f"{SENDER_IP}:{LISTEN_PORT}", "--flows", str(cfg.flows), "--cc", cfg.cc,
        "--port-base", str(PORT_BASE), "--end", repr(end), "--sample-ms", str(cfg.sample_ms),
        stdout=subprocess.PIPE,
    )  # fmt: skip
    _wait_line(send, "ready", 10.0)
    qd = bed.spawn(
        "r", "qdisc", *common, "--out", str(out / "qdisc.csv"), "--dev", "r1",
        "--handle", "10:", "--end", repr(end), "--sample-ms", str(cfg.sample_ms),
    )  # fmt: skip
    recv = bed.spawn(
        "c", "receive", *common, "--out", str(out / "bytes.csv"),
        "--server", f"{SENDER_IP}:{LISTEN_PORT}", "--bind", RECEIVER_IP,
        "--starts", ",".join(repr(s) for s in cfg.starts_s), "--port-base", str(PORT_BASE),
        "--end", repr(end), "--sample-ms", str(cfg.sample_ms), *receiver_cc(cfg.cc),
    )  # fmt: skip
    web = None
    if cfg.web_schedule:
        serve = bed.spawn(
            "s", "web_serve", "--listen", f"{SENDER_IP}:{WEB_PORT}", "--cc", cfg.cc,
            "--until", repr(min(until, end + 10.0)), "--out", str(out / "web_serve.json"),
            stdout=subprocess.PIPE,
        )  # fmt: skip
        _wait_line(serve, "ready", 10.0)
        web = bed.spawn(
            "c", "web_fetch", *common, "--out", str(out / "fct.csv"),
            "--server", f"{SENDER_IP}:{WEB_PORT}", "--schedule", cfg.web_schedule,
            "--end", repr(end), *receiver_cc(cfg.cc),
        )  # fmt: skip
    if time.monotonic() > t0:
        raise BedError("the agents started after time zero (machine too loaded?)")
    # Snapshots with the tools themselves, half-way: cross-checks of the agents' readings.
    mid = t0 + cfg.seconds / 2
    time.sleep(max(0.0, mid - time.monotonic()))
    meta["snapshot_t_s"] = time.monotonic() - t0
    meta["ss_ti"] = bed._exec("s", "ss", "-tin", "state", "established", check=False)
    meta["tc_s"] = bed._exec("r", "tc", "-s", "-j", "qdisc", "show", "dev", "r1", check=False)
    meta["snapshot_t_end_s"] = time.monotonic() - t0
    waits = [(recv, "receiver"), (send, "sender"), (qd, "qdisc sampler")]
    for p, what in waits + ([(web, "short-flow clients")] if web else []):
        _wait(p, end + 15.0, what)
    if web:
        bed.stop(serve)
    meta["tc_s_end"] = bed._exec("r", "tc", "-s", "-j", "qdisc", "show", "dev", "r1", check=False)
    if fwd is not None:
        bed.stop(fwd)
        if fwd.returncode not in (0, -signal.SIGTERM):
            raise BedError(f"delay line failed ({fwd.returncode}): {fwd.stderr.read().strip()}")
    else:  # the netem delay line's counters (drops there would be the bed's, not the AQM's)
        meta["tc_delay_end"] = bed._exec("d", "tc", "-s", "-j", "qdisc", "show", check=False)
    meta["t0_monotonic"] = t0
    meta["wall_s"] = time.monotonic() - t_start
    return meta
