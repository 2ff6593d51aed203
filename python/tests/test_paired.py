"""Paired differences in the study report (issue 36): hand-computed paired-t intervals and
the table's verdicts."""

from __future__ import annotations

import math

import polars as pl
import pytest

from aqmlab.analysis import intervals as iv
from aqmlab.report import paired


def test_paired_interval_by_hand():
    # Differences 1, 2, 3: mean 2, sd 1, n 3; t(0.975, 2) = 4.302653: half = 4.302653 / √3.
    a = {0: 11.0, 1: 12.0, 2: 13.0, 3: 99.0}  # rep 3 only in a: left out
    b = {0: 10.0, 1: 10.0, 2: 10.0}
    i = iv.paired_interval(a, b)
    assert i.n == 3 and i.mean == pytest.approx(2.0)
    assert i.half_width == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)


def test_pairing_removes_the_seeds_variation():
    """Two schemes whose runs differ by 0.1 s in every seed, with seeds far apart: unpaired
    (Welch) they cannot be told apart, paired they can."""
    base = {r: float(r) for r in range(5)}
    other = {r: float(r) + 0.1 for r in range(5)}
    assert iv.welch_interval(other.values(), base.values()).low < 0
    i = iv.paired_interval(other, base)
    assert i.mean == pytest.approx(0.1) and i.half_width == pytest.approx(0.0, abs=1e-12)
    assert paired.verdict(i).endswith(": higher")


def test_rows_against_the_baseline_and_the_neighbour():
    per_run = pl.DataFrame(
        {
            "queue": ["dt"] * 3 + ["codel"] * 3 + ["pie"] * 3,
            "rep": [0, 1, 2] * 3,
            "m": [1.0, 2.0, 3.0, 0.5, 1.5, 2.5, 0.51, 1.45, 2.6],
        }
    )
    curves = [  # ranked best first; plan order: dt, codel, pie
        {"labels": {"queue": "codel"}, "plan": [1]},
        {"labels": {"queue": "pie"}, "plan": [2]},
        {"labels": {"queue": "dt"}, "plan": [0]},
    ]
    rows = paired.paired_rows(per_run, [{}], [curves], "m")
    assert [r["scheme"] for r in rows] == ["codel", "pie"]
    assert rows[0]["− baseline"].startswith("dt: -0.500") and rows[0]["− baseline"].endswith(
        "lower"
    )
    assert rows[0]["− the one ranked above"] == "(ranked first)"
    assert rows[1]["− the one ranked above"].startswith("codel: +0.020")
    assert rows[1]["− the one ranked above"].endswith("cannot be told apart")
