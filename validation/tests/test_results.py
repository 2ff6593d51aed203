"""The verdict of a comparison (`validation.results`) and the interval it reads
(`validation.sims.interval_of`), against hand-computed cases; and older result tables."""

from __future__ import annotations

import math

import pytest

from validation import ns2, results, sims


@pytest.mark.parametrize(
    ("difference", "tolerance", "interval", "want"),
    [
        (0.05, 0.10, math.nan, "pass"),
        (0.10, 0.10, math.nan, "pass"),  # the tolerance is inclusive
        (0.15, 0.10, math.nan, "fail"),  # a deterministic row has no middle ground
        (0.15, 0.10, 0.06, "unresolved"),  # 0.15 − 0.06 = 0.09 reaches back inside
        (0.15, 0.10, 0.05, "unresolved"),  # exactly to the tolerance
        (0.15, 0.10, 0.04, "fail"),  # 0.11: the whole interval lies beyond
        (math.nan, 0.10, 0.5, "fail"),
    ],
)
def test_the_verdict(difference, tolerance, interval, want):
    assert results.verdict(difference, tolerance, interval) == want


def test_only_a_failed_row_is_not_passed():
    row = results.row_maker("s", "c", "1")
    assert row("m", 1.0, 1.05, kind="rel", tol=0.1).passed
    unresolved = row("m", 1.0, 1.2, kind="rel", tol=0.1, interval=0.15)
    assert (unresolved.verdict, unresolved.passed) == ("unresolved", True)
    failed = row("m", 1.0, 1.2, kind="rel", tol=0.1, interval=0.05)
    assert (failed.verdict, failed.passed) == ("fail", False)
    assert math.isnan(row("m", 1.0, 1.0, kind="abs", tol=0.0).interval)


def test_the_interval_in_the_tolerances_unit():
    # ns-2 1, 3 and aqmlab 2, 4: difference of the means 1, standard error √2, Welch df 2,
    # half-width t(0.975, 2) × √2 = 4.3027 × 1.41421 = 6.0849.
    assert sims.interval_of([1, 3], [2, 4], "abs", 2.0) == pytest.approx(6.0849, abs=1e-3)
    assert sims.interval_of([1, 3], [2, 4], "rel", 2.0) == pytest.approx(3.0424, abs=1e-3)
    assert sims.interval_of([1, 3], [2, 4], "points", 2.0) == pytest.approx(608.49, abs=0.1)
    assert math.isnan(sims.interval_of([1], [2, 4], "rel", 1.0))


def test_older_tables_read_with_the_verdict_their_pass_implies(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text(
        "suite,scenario,metric,ns2,aqmlab,difference,tolerance,passed,seeds,note\n"
        "e2e,a,m,1.0,1.5,0.5,0.2,false,1,\n"
        "e2e,b,m,1.0,1.1,0.1,0.2,true,1,\n"
    )
    got = results.read(path)
    assert [(r.verdict, r.passed) for r in got] == [("fail", False), ("pass", True)]
    assert all(math.isnan(r.interval) for r in got)
    results.write(got, tmp_path / "new.csv")
    again = results.read(tmp_path / "new.csv")
    assert [r.verdict for r in again] == ["fail", "pass"]


def test_parameter_files_carry_the_scripts_digest():
    a = ns2.stamped("set x 1\n", "packmime_e2e.tcl")
    b = ns2.stamped("set x 1\n", "red_greedy.tcl")
    head, body = a.split("\n", 1)
    assert head.startswith("# packmime_e2e.tcl ") and len(head.split()[-1]) == 16
    assert body == "set x 1\n"
    assert a != b and a == ns2.stamped("set x 1\n", "packmime_e2e.tcl")


def test_whole_number_rows_first_keep_later_fractions(tmp_path):
    """A suite whose rows come first with whole-number differences (linux_qdisc's counts)
    made the column an integer and wrote every later fraction as 0 (a carried-over workload
    row read 'difference 0, tolerance 0')."""
    rows = [
        results.compare("a", "s", "m", 5, 5, kind="given", tolerance=0, seeds="", difference=0),
        results.compare("b", "s", "m", 1.0, 1.5, kind="rel", tolerance=0.02, seeds=""),
    ]
    path = tmp_path / "r.csv"
    results.write(rows, path)
    back = results.read(path)
    assert back[1].difference == 0.5 and back[1].tolerance == 0.02


def test_empty_notes_read_back_empty(tmp_path):
    rows = [results.compare("a", "s", "m", 1.0, 1.0, kind="abs", tolerance=0.1, seeds="")]
    path = tmp_path / "r.csv"
    results.write(rows, path)
    assert results.read(path)[0].note == "" and results.read(path)[0].seeds == ""
