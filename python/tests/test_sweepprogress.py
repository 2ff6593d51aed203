"""The progress displays: the sweep's (its numbers by hand, and what a terminal and a log get)
and a single run's line (`aqmlab run` on a terminal)."""

from __future__ import annotations

import io
import os

import polars as pl
import tqdm.std

from aqmlab.runs import runner
from aqmlab.runs.runner import Progress
from aqmlab.study import catalog, progress
from aqmlab.study.progress import SweepProgress, format_duration


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:  # for os.get_terminal_size: no size, unless the test gives one
        return -1


def screen(text: str) -> list[str]:
    """What a terminal shows after `text`: its lines, each as the carriage returns (a
    redraw from the first column) left it, trailing blanks dropped."""
    shown = []
    for line in text.split("\n"):
        row = ""
        for part in line.split("\r"):
            row = part + row[len(part) :]
        shown.append(row.rstrip())
    return shown


def _progress(monkeypatch, stream, **kw) -> tuple[SweepProgress, Clock]:
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    p = SweepProgress(
        total=5,
        done=1,
        failed=0,
        durations={"aaaaaaaa": 100.0, "bbbbbbbb": 100.0, "cccccccc": 50.0, "dddddddd": 50.0},
        stream=stream,
        **kw,
    )
    return p, clock


def test_eta_and_event_rate_by_hand(monkeypatch):
    p, clock = _progress(monkeypatch, io.StringIO())
    p.update({"run_id": "aaaaaaaa", "sim_s": 0.0, "end_s": 100.0, "events": 0})
    p.update({"run_id": "bbbbbbbb", "sim_s": 0.0, "end_s": 100.0, "events": 0})
    clock.t += 10.0
    p.update({"run_id": "aaaaaaaa", "sim_s": 40.0, "end_s": 100.0, "events": 4000})
    p.update({"run_id": "bbbbbbbb", "sim_s": 20.0, "end_s": 100.0, "events": 1000})
    # 60 simulated s in 10 wall s = 6 sim s/s; left: 300 - 60 = 240 sim s -> 40 s.
    assert p.eta_s() == 40.0
    assert p.events_per_s() == 500.0
    assert "aaaaaa  40%" in p.line() and "bbbbbb  20%" in p.line()
    assert "1/5 done | 0 failed" in p.line() and "ETA 40s" in p.line()
    clock.t += 10.0
    p.finished("aaaaaaaa", True, "done a")
    # Finished: its whole 100 s count as done; b is still at 20 s.
    assert p.done == 2 and "aaaaaaaa" not in p.running
    assert p.eta_s() == (200.0 - 20.0) / ((100.0 + 20.0) / 20.0)
    p.finished("bbbbbbbb", False, "failed b")
    assert p.failed == 1 and p.line().startswith("sweep: 2/5 done | 1 failed")


def test_log_gets_plain_lines_at_the_interval(monkeypatch):
    out = io.StringIO()
    p, clock = _progress(monkeypatch, out, interval_s=10.0)
    p.draw()
    clock.t += 5.0
    p.draw()  # too soon
    clock.t += 6.0
    p.draw()
    p.finished("aaaaaaaa", True, "  done   aaaaaaaa")
    lines = out.getvalue().splitlines()
    assert [x.startswith("sweep: ") for x in lines] == [True, True, False]
    assert "\r" not in out.getvalue()


def test_terminal_gets_one_line_redrawn(monkeypatch):
    out = Tty()
    p, clock = _progress(monkeypatch, out)
    p.update({"run_id": "aaaaaaaa", "sim_s": 50.0, "end_s": 100.0, "events": 10})
    p.draw()
    assert screen(out.getvalue()) == [p.line()] and "aaaaaa  50%" in p.line()
    p.update({"run_id": "aaaaaaaa", "sim_s": 60.0, "end_s": 100.0, "events": 20})
    clock.t += 0.1
    p.draw()  # too soon (5 a second at most)
    assert "aaaaaa  50%" in screen(out.getvalue())[0]
    clock.t += 1.0
    p.draw()  # in place: still one line
    assert screen(out.getvalue()) == [p.line()] and "aaaaaa  60%" in p.line()
    p.finished("aaaaaaaa", True, "  done   aaaaaaaa")
    # The run's line stays; the progress line is redrawn below it at once.
    assert screen(out.getvalue()) == ["  done   aaaaaaaa", p.line()]
    assert p.line().startswith("sweep: 2/5 done")
    p.close()
    assert screen(out.getvalue()) == ["  done   aaaaaaaa", ""]  # close leaves a clean line


def test_terminal_line_is_cut_to_the_terminal_width(monkeypatch):
    # A line longer than the terminal would wrap, and a redraw would then only replace its
    # last row: the line is cut to the width, asked again at each draw. A terminal of 0
    # columns and rows (a pseudo-terminal given no size) gets the whole line.
    out = Tty()
    size = [(60, 24)]
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size(size[0]))
    p, clock = _progress(monkeypatch, out)
    for rid in p.durations:
        p.update({"run_id": rid, "sim_s": 10.0, "end_s": 100.0, "events": 10})
    p.draw()
    (shown,) = screen(out.getvalue())
    assert len(p.line()) > 60 and shown == p.line()[: len(shown)] and len(shown) < 60
    for size[0] in ((200, 24), (0, 0)):
        clock.t += 1.0
        p.draw()
        assert screen(out.getvalue()) == [p.line()]
    p.finished("aaaaaaaa", True, "  done   aaaaaaaa")
    p.close()
    assert screen(out.getvalue()) == ["  done   aaaaaaaa", ""]


def test_quiet_prints_nothing(monkeypatch):
    out = io.StringIO()
    p, _ = _progress(monkeypatch, out, enabled=False)
    p.draw(force=True)
    p.finished("aaaaaaaa", True, "done")
    p.close()
    assert out.getvalue() == ""


def test_format_duration():
    assert format_duration(3.25) == "3.2s"
    assert format_duration(42) == "42s"
    assert format_duration(125) == "2m05s"
    assert format_duration(7322) == "2h02m"
    assert format_duration(float("nan")) == "?"


def test_runs_frame_types_columns_from_all_values():
    rows = [
        {"run_id": "a", "status": "done", "rep": 0, "seed": 2**64 - 1, "x": "A", "m": 1},
        {"run_id": "b", "status": "done", "rep": 0, "seed": 1, "x": "B", "m": 2.5, "k": "s"},
        {"run_id": "c", "status": "failed", "rep": 1, "seed": 2, "x": "A", "k": 3, "big": 2**63},
    ]
    df = catalog.runs_frame(rows, ["x"])
    assert df.columns[:5] == ["run_id", "status", "rep", "seed", "x"]
    assert df.schema["seed"] == pl.UInt64 and df["seed"][0] == 2**64 - 1
    assert df.schema["x"] == pl.String
    assert df.schema["m"] == pl.Float64 and df["m"].to_list() == [1.0, 2.5, None]
    assert df.schema["k"] == pl.String and df["k"].to_list() == [None, "s", "3"]
    assert df.schema["big"] == pl.Float64
    assert df["wall_time_s"].to_list() == [None, None, None]


def test_a_single_runs_line(monkeypatch):
    """`aqmlab run` on a terminal: one line redrawn in place with the simulated seconds done,
    the rate (simulated seconds per wall second, from the first chunk on) and the time left
    at that rate; cleared when the run reaches its end."""
    clock = Clock()
    monkeypatch.setattr(tqdm.std, "time", clock)  # the library's clock
    out = Tty()
    show = runner._default_progress(out)
    show(Progress(6.0, 30.0, 0.5, 1000))
    assert screen(out.getvalue())[0].startswith("  6.0/30.0 s simulated  20% |")
    clock.t += 1.0
    show(Progress(12.0, 30.0, 1.5, 2000))
    (line,) = screen(out.getvalue())
    # 6 simulated s in 1 wall s; 18 s to go -> 3 s left.
    assert line.startswith("  12.0/30.0 s simulated  40% |") and "|" in line[30:]
    assert line.endswith("6.00 sim s/s, 00:03 left"), line
    clock.t += 0.05
    show(Progress(18.0, 30.0, 1.6, 3000))  # too soon (10 a second at most)
    assert screen(out.getvalue())[0].startswith("  12.0/30.0")
    clock.t += 2.95
    show(Progress(30.0, 30.0, 4.5, 5000))
    assert screen(out.getvalue()) == [""]
