"""The ns-2 queue-trace reader on hand-written traces (8 Mb/s: 1,000 bytes take 1 ms)."""

from pathlib import Path

import numpy as np

from validation import ns2_trace

RATE = 8e6


def _line(ev: str, t: float, uid: int, flags: str = "-------", size: int = 1000, *state) -> str:
    values = " ".join(str(x) for x in state)
    return f"{ev} {t:.6f} 0 1 cbr {size} {flags} 0 0.0 1.0 {uid} {uid}  | {t!r} | {values}\n"


def test_outcomes_idle_periods_and_state_after_each_arrival(tmp_path: Path) -> None:
    tr = tmp_path / "events.tr"
    tr.write_text(
        _line("+", 0.0, 1, "-------", 1000, 0.0)
        + _line("-", 0.0, 1, "-------", 1000, 0.5)  # state after arrival 1: 0.5
        + _line("+", 0.0004, 2, "------N", 1000, 0.5)
        + _line("d", 0.0004, 2, "------N", 1000, 0.6)  # dropped: state read on its drop
        + _line("+", 0.0005, 3, "------N", 1000, 0.6)
        + _line("r", 0.0011, 1, "-------", 1000, 0.7)  # delivery: state after arrival 3
        + _line("-", 0.001, 3, "----E-N", 1000, 0.7)  # marked (CE) when it leaves
        + _line("+", 0.005, 4, "-------", 1000, 0.8)
        + _line("-", 0.005, 4, "-------", 1000, 0.9)
    )
    log = ns2_trace.read(tr, ["ave_"], RATE)
    assert log.outcome == ["accepted", "dropped", "marked", "accepted"]
    assert list(log.ect) == [False, True, True, False]
    assert np.allclose(log.state["ave_"], [0.5, 0.6, 0.7, 0.9])
    assert np.allclose(log.state_before["ave_"], [0.0, 0.5, 0.6, 0.8])
    # Packet 3 leaves at 1 ms and takes 1 ms: the link asks again at 2 ms and finds nothing.
    kinds = [(k, round(t, 6)) for k, t, _ in log.events]
    assert kinds == [
        ("arrival", 0.0),
        ("dequeue", 0.0),
        ("arrival", 0.0004),
        ("arrival", 0.0005),
        ("dequeue", 0.001),
        ("idle", 0.002),
        ("arrival", 0.005),
        ("dequeue", 0.005),
        ("idle", 0.006),
    ]
    assert np.isnan(log.dequeued_at[1])
