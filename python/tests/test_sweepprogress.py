"""The sweep progress display: its numbers by hand, and what a terminal and a log get."""

from __future__ import annotations

import io

import polars as pl

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
    p.draw()
    clock.t += 1.0
    p.draw()
    p.finished("aaaaaaaa", True, "  done   aaaaaaaa")
    p.close()
    text = out.getvalue()
    assert text.count("\r\033[K") >= 3
    assert "  done   aaaaaaaa\n" in text
    assert text.endswith("\r\033[K")  # close leaves a clean line


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
