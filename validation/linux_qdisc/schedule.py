"""Schedules of queue events, generated deterministically from a seed.

A schedule is what a root qdisc sees: arrivals (time, size, DS byte, flow hash), the instants
the link asks for a packet, and the instants the discipline's timer fires, plus the random
words that both the kernel's code and ours consume. The same schedule goes to the kernel
harness (`harness_text`) and to our replay (`aqmlab._core.replay_schedule`).

Traffic patterns (`PATTERNS`), all offered to a link polled at its packet rate with jitter:
- `cbr`: four constant-rate flows, 20 % above the link rate together: a standing queue;
- `onoff`: eight flows alternating exponential on (at 40 % of the link rate each) and off
  periods: the queue builds, drains and idles;
- `manyflow`: 200 flows, Poisson arrivals at 110 % of the link rate, sizes 64/576/1500:
  many sparse flows, buckets shared by hashing;
- `web`: Poisson "responses", each a new flow sending a Pareto-sized burst back to back at
  four times the link rate, with small request packets: bursts and flow churn.
ECN codepoints are set per flow (Not-ECT, ECT(0), ECT(1)) and a few packets arrive already CE.
Every few seconds the link stalls for 50–300 ms (no dequeue instants): bursts of delay.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

NS = 1_000_000_000
PATTERNS = ("cbr", "onoff", "manyflow", "web")
# DS bytes of the flows in turn: Not-ECT, ECT(0), ECT(1) (RFC 3168 §5: 00, 10, 01).
FLOW_DS = (0, 2, 1, 2, 0, 1)
CE = 3


@dataclass
class Schedule:
    name: str
    kinds: list[str] = field(default_factory=list)  # "E", "D" or "T"
    times_ns: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    ds: list[int] = field(default_factory=list)
    hashes: list[int] = field(default_factory=list)
    words: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.kinds)

    def harness_text(self, attrs: dict[str, int]) -> str:
        """The schedule as the kernel harness reads it, after the tc attributes."""
        lines = [f"A {k} {v}" for k, v in attrs.items()]
        for k, t, s, d, h in zip(
            self.kinds, self.times_ns, self.sizes, self.ds, self.hashes, strict=True
        ):
            lines.append(f"E {t} {s} {d} {h}" if k == "E" else f"{k} {t}")
        return "\n".join(lines) + "\n"

    def words_bytes(self) -> bytes:
        return struct.pack(f"<{len(self.words)}I", *self.words)


def _arrivals(pattern: str, rng: random.Random, rate_bps: float, end_ns: int):
    """(time, size, ds, hash) of the pattern's arrivals before `end_ns`, unsorted."""
    pkt_rate = rate_bps / 8 / 1000  # 1000-byte packets per second at the link rate
    out = []

    def flow_hash() -> int:
        return rng.getrandbits(32)

    def ds_of(flow: int) -> int:
        d = FLOW_DS[flow % len(FLOW_DS)]
        return CE if d and rng.random() < 0.01 else d

    if pattern == "cbr":
        for f in range(4):
            h, size = flow_hash(), (1000, 1500, 1000, 576)[f]
            gap = size / (1.2 * pkt_rate * 1000 / 4) * NS
            t = rng.random() * gap
            while t < end_ns:
                out.append((int(t), size, ds_of(f), h))
                t += gap
    elif pattern == "onoff":
        for f in range(8):
            h = flow_hash()
            gap = NS / (0.4 * pkt_rate)
            t = rng.expovariate(1 / 0.3) * NS
            while t < end_ns:
                on_end = t + rng.expovariate(1 / 0.2) * NS
                while t < min(on_end, end_ns):
                    out.append((int(t), 1000, ds_of(f), h))
                    t += gap
                t = on_end + rng.expovariate(1 / 0.3) * NS
    elif pattern == "manyflow":
        hashes = [flow_hash() for _ in range(200)]
        t = 0.0
        while True:
            t += rng.expovariate(1.1 * pkt_rate * 1000 / 900) * NS
            if t >= end_ns:
                break
            f = rng.randrange(200)
            out.append((int(t), rng.choice((64, 576, 1500, 1500)), ds_of(f), hashes[f]))
    elif pattern == "web":
        t, f = 0.0, 0
        gap = NS / (4 * pkt_rate)
        while True:
            t += rng.expovariate(pkt_rate / 9) * NS
            if t >= end_ns:
                break
            f += 1
            h, ds = flow_hash(), ds_of(f)
            out.append((int(t), 64, ds, flow_hash()))  # the request, another flow
            n = int(2 * rng.paretovariate(1.2))
            for k in range(min(n, 400)):
                out.append((int(t + (k + 1) * gap), 1500 if k < n - 1 else 700, ds, h))
    else:
        raise ValueError(f"pattern {pattern!r}: expected one of {PATTERNS}")
    return out


def _dequeues(rng: random.Random, rate_bps: float, end_ns: int) -> list[int]:
    """The link's requests: one per 1000-byte transmission time (±20 %), and a stall of
    50-300 ms every 2-4 s."""
    tx = 1000 * 8 / rate_bps * NS
    out, t = [], 0.0
    stall_at = rng.uniform(2, 4) * NS
    while t < end_ns:
        t += tx * rng.uniform(0.8, 1.2)
        if t >= stall_at:
            t += rng.uniform(0.05, 0.3) * NS
            stall_at = t + rng.uniform(2, 4) * NS
        out.append(int(t))
    return out


def generate(
    pattern: str,
    *,
    seed: int,
    seconds: float,
    rate_bps: float = 10e6,
    tick_first_ns: int | None = None,
    tick_period_ns: int | None = None,
) -> Schedule:
    """The schedule of `pattern` for `seconds`, with timer instants at `tick_first_ns` and
    then every `tick_period_ns` when given. At equal times: dequeue, then timer, then arrival
    (a stable order both sides follow)."""
    rng = random.Random(f"{pattern}:{seed}")
    end = int(seconds * NS)
    events = [(t, 1, "E", s, d, h) for t, s, d, h in _arrivals(pattern, rng, rate_bps, end)]
    events += [(t, 0, "D", 0, 0, 0) for t in _dequeues(rng, rate_bps, end) if t < end]
    if tick_period_ns:
        t = tick_first_ns if tick_first_ns is not None else tick_period_ns
        ticks = []
        while t < end:
            ticks.append(t)
            t += tick_period_ns
        events += [(t, 0.5, "T", 0, 0, 0) for t in ticks]
    events.sort(key=lambda e: (e[0], e[1]))
    sched = Schedule(f"{pattern}-s{seed}")
    for t, _, k, s, d, h in events:
        sched.kinds.append(k)
        sched.times_ns.append(t)
        sched.sizes.append(s)
        sched.ds.append(d)
        sched.hashes.append(h)
    words = random.Random(f"words:{pattern}:{seed}")
    sched.words = [words.getrandbits(32) for _ in range(2 * len(events) + 1024)]
    return sched
