"""Progress shown on a terminal: the line a run (`default_progress`) and a sweep
(`aqmlab.study.progress`) redraw in place. A module of its own so that tqdm is imported only
when a terminal is there to draw on (a sweep's worker, a run into a pipe, never import it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, Any

from tqdm import tqdm

__all__ = ["ProgressLine", "default_progress"]


class ProgressLine(tqdm):
    """tqdm's line redrawn in place (the progress displays of a run and of a sweep), cut to
    the terminal's width at each draw, or whole when the size is unknown (tqdm alone draws
    nothing on a terminal of 0 columns and rows, as a pseudo-terminal given no size is). No
    monitor thread."""

    monitor_interval = 0

    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        try:
            size = os.get_terminal_size(self.fp.fileno())
        except (AttributeError, OSError, ValueError):
            size = os.terminal_size((0, 0))
        # One column short of the width: a line that fills the last one wraps on some terminals.
        self.ncols = size.columns - 1 if size.columns > 1 else None
        self.nrows = size.lines if size.lines > 0 else None
        return super().refresh(*args, **kwargs)


def default_progress(stream: IO[str] = sys.stderr) -> Callable[[Any], None]:
    """A bar redrawn in place on `stream` (a terminal): simulated seconds done, simulated
    seconds per wall second and the time left at that rate; cleared when the run ends. The
    callback gets a `runner.Progress` (not imported here: the runner imports this module)."""
    bar: ProgressLine | None = None

    def show(p: Any) -> None:
        nonlocal bar
        if bar is None:  # the rate counts from the first chunk's end
            bar = ProgressLine(
                total=p.end_time_s,
                initial=p.sim_time_s,
                file=stream,
                unit=" sim s",
                smoothing=0,  # the rate since the start, not a moving average
                miniters=0,  # redrawn at most every 0.1 s (tqdm's mininterval), whatever the step
                leave=False,
                bar_format="  {n:.1f}/{total:.1f} s simulated {percentage:3.0f}% |{bar}| "
                "{rate_noinv_fmt}, {remaining} left",
            )
        bar.update(p.sim_time_s - bar.n)
        if p.sim_time_s >= p.end_time_s:
            bar.close()

    return show
