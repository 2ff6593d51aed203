"""The live progress display of a sweep, on stderr.

A terminal gets one line redrawn in place (tqdm, through `runs.progress_bar.ProgressLine`: the line
cut to the terminal's width, the lines that stay printed above it); anything else (a log
file, CI) gets a plain line every `interval_s` seconds (by hand: tqdm has no such mode, it
writes carriage returns). Either way a line is printed for each run that finishes or
fails. The line holds runs done/failed/total, each running run's simulated-time fraction,
events per second and an ETA (computed here: tqdm's ETA counts items, not simulated
seconds).

ETA: simulated seconds still to do (whole durations of the runs not started, the rest of the
running ones) divided by the simulated seconds per wall second achieved so far by this
invocation, summed over workers — so it accounts for parallelism and for runs of different
durations.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aqmlab.runs.progress_bar import ProgressLine

__all__ = ["SweepProgress", "format_duration"]


def format_duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    if seconds < 10:
        return f"{seconds:.1f}s"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


@dataclass
class _Running:
    sim_s: float = 0.0
    end_s: float = 0.0
    events: int = 0


class SweepProgress:
    """Feed it `started`, `update` (worker messages), `finished`; it draws."""

    def __init__(
        self,
        total: int,
        done: int,
        failed: int,
        durations: dict[str, float],
        stream: IO[str] | None = None,
        interval_s: float = 10.0,
        enabled: bool = True,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.total = total
        self.done = done
        self.failed = failed
        self.durations = durations  # planned simulated duration of each run to do
        self.running: dict[str, _Running] = {}
        self.sim_done = 0.0  # simulated seconds finished by this invocation
        self.events_done = 0
        self.t0 = time.monotonic()
        self.interval_s = interval_s
        self._last_draw = 0.0
        self._bar: ProgressLine | None = None  # the terminal's line, from the first draw on

    # --- state ---

    def update(self, msg: dict[str, Any]) -> None:
        rid = msg.get("run_id")
        if rid is None:
            return
        r = self.running.setdefault(rid, _Running())
        r.sim_s = float(msg.get("sim_s", r.sim_s))
        r.end_s = float(msg.get("end_s", r.end_s))
        r.events = int(msg.get("events", r.events))

    def finished(self, run_id: str, ok: bool, line: str) -> None:
        r = self.running.pop(run_id, None)
        if ok:
            self.done += 1
            self.sim_done += self.durations.get(run_id, r.end_s if r else 0.0)
            self.events_done += r.events if r else 0
        else:
            self.failed += 1
        self.durations.pop(run_id, None)
        self.say(line)

    # --- numbers ---

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def events_per_s(self) -> float:
        t = self.elapsed()
        events = self.events_done + sum(r.events for r in self.running.values())
        return events / t if t > 0 else 0.0

    def eta_s(self) -> float:
        t = self.elapsed()
        progressed = self.sim_done + sum(r.sim_s for r in self.running.values())
        if t <= 0 or progressed <= 0:
            return float("nan")
        left = sum(self.durations.values()) - sum(r.sim_s for r in self.running.values())
        return max(0.0, left) / (progressed / t)

    def line(self) -> str:
        parts = [f"{self.done}/{self.total} done", f"{self.failed} failed"]
        if self.running:
            shown = sorted(self.running.items())[:4]
            runs = " ".join(
                f"{rid[:6]} {100 * r.sim_s / r.end_s:3.0f}%" if r.end_s > 0 else f"{rid[:6]} ?"
                for rid, r in shown
            )
            more = f" +{len(self.running) - len(shown)}" if len(self.running) > len(shown) else ""
            parts.append(f"running: {runs}{more}")
        parts.append(f"{self.events_per_s() / 1e6:.2f} M events/s")
        parts.append(f"ETA {format_duration(self.eta_s())}")
        return "sweep: " + " | ".join(parts)

    # --- drawing ---

    def say(self, text: str) -> None:
        """A line that stays (a finished or failed run, a note)."""
        if not self.enabled:
            return
        if self._bar is None:
            self.stream.write(text + "\n")
            self.stream.flush()
        else:  # above the line, which tqdm clears and redraws
            self._bar.write(text, file=self.stream)
        self.draw(force=self.tty)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < (0.2 if self.tty else self.interval_s):
            return
        self._last_draw = now
        if not self.tty:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
        elif self._bar is None:
            from aqmlab.runs.progress_bar import ProgressLine  # tqdm, for a terminal only

            self._bar = ProgressLine(
                file=self.stream, bar_format="{desc}", desc=self.line(), leave=False
            )
        else:
            self._bar.set_description_str(self.line())

    def close(self) -> None:
        """Clears the terminal's line."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
