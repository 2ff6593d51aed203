"""Reading ns-2's queue trace with the queue's state appended (`ns2/aqm_queue.tcl`).

A trace line is `EV TIME SRC DST TYPE SIZE FLAGS FID SRC.PORT DST.PORT SEQ UID`, with EV one of
`+` (arrival at the queue), `-` (dequeue: start of transmission), `r` (delivery at the far
end) and `d` (drop), TIME rounded to the microsecond, and FLAGS seven characters: `N` in
position 6 marks an ECN-capable packet, `E` in position 4 a packet with CE set (ns-2
trace/trace.cc). After ` | ` comes the exact simulation time (the trace's own is rounded to
the microsecond), and after another ` | ` the values of the queue's state variables read at
that moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class QueueLog:
    """The queue's history as ns-2 ran it."""

    # One row per arrival, in order.
    t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    size: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ect: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    outcome: list[str] = field(default_factory=list)
    # The state variables after each arrival (read at the next trace event), one column per
    # variable; and as the arrival found them (read at its own trace event, before the queue
    # acted: for disciplines whose state changes only on their timer, PI and REM).
    state: dict[str, np.ndarray] = field(default_factory=dict)
    state_before: dict[str, np.ndarray] = field(default_factory=dict)
    # The replay log: (kind, time, arrival index or -1), kinds "arrival", "dequeue", "idle".
    events: list[tuple[str, float, int]] = field(default_factory=list)
    # Dequeue times per arrival index (NaN for dropped packets).
    dequeued_at: np.ndarray = field(default_factory=lambda: np.zeros(0))


def read(path: Path, state_vars: list[str], rate_bps: float) -> QueueLog:
    """Parses `events.tr`; idle periods are inferred: a dequeue that empties the queue is
    followed by an idle period from the end of that packet's transmission (at `rate_bps`)
    unless an arrival comes first."""
    t, size, ect, outcome = [], [], [], []
    state_after: list[list[float] | None] = []
    state_before: list[list[float]] = []
    events: list[tuple[str, float, int]] = []
    index_of: dict[int, int] = {}
    dequeued: dict[int, float] = {}
    queued = 0
    idle_due: float | None = None
    pending_state: int | None = None  # arrival whose state is read at the next event
    with path.open() as f:
        for line in f:
            head, _, tail = line.partition(" | ")
            fields = head.split()
            if not fields:
                continue
            exact, _, state = tail.partition(" | ")
            values = [float(x) for x in state.split()]
            if pending_state is not None:
                state_after[pending_state] = values
                pending_state = None
            ev, now = fields[0], float(exact)
            pkt_size, flags, uid = int(fields[5]), fields[6], int(fields[11])
            if idle_due is not None and ev in "+-" and now >= idle_due:
                events.append(("idle", idle_due, -1))
                idle_due = None
            if ev == "+":
                i = len(t)
                index_of[uid] = i
                t.append(now)
                size.append(pkt_size)
                ect.append(len(flags) > 6 and flags[6] == "N")
                outcome.append("accepted")
                state_after.append(None)
                state_before.append(values)
                pending_state = i
                events.append(("arrival", now, i))
                queued += 1
                idle_due = None
            elif ev == "d":
                i = index_of.get(uid)
                if i is None:
                    continue
                if t[i] == now and outcome[i] == "accepted" and uid not in dequeued:
                    outcome[i] = "dropped"
                    queued -= 1
                    state_after[i] = values
                else:
                    raise ValueError(f"{path}: a queued packet dropped later (uid {uid})")
            elif ev == "-":
                i = index_of[uid]
                if len(flags) > 4 and flags[4] == "E":
                    outcome[i] = "marked"
                dequeued[uid] = now
                events.append(("dequeue", now, i))
                queued -= 1
                if queued == 0:
                    idle_due = now + pkt_size * 8.0 / rate_bps
    if idle_due is not None:
        events.append(("idle", idle_due, -1))
    n = len(t)
    log = QueueLog(
        t=np.array(t),
        size=np.array(size, dtype=np.int64),
        ect=np.array(ect, dtype=bool),
        outcome=outcome,
        events=events,
    )
    for k, name in enumerate(state_vars):
        log.state[name] = np.array(
            [s[k] if s is not None and len(s) > k else np.nan for s in state_after]
        )
        log.state_before[name] = np.array([s[k] if len(s) > k else np.nan for s in state_before])
    deq = np.full(n, np.nan)
    for uid, when in dequeued.items():
        deq[index_of[uid]] = when
    log.dequeued_at = deq
    return log


def read_vars(path: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Traced variables (`vars.tr`): letter -> (times, values), written on each change."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    if not path.exists():
        return {}
    with path.open() as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue
            times, values = out.setdefault(parts[0], ([], []))
            times.append(float(parts[1]))
            values.append(float(parts[2]))
    return {k: (np.array(a), np.array(b)) for k, (a, b) in out.items()}
