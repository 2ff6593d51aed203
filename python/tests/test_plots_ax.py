"""Plot functions draw into a caller's axes with `ax=` (issue 36), so a researcher can
compose them into one figure; without it each makes a figure of its own, as before."""

from __future__ import annotations

import polars as pl
from matplotlib.figure import Figure

from aqmlab.report import plots

EXCHANGES = pl.DataFrame(
    {"completed": [True, True, True, False], "response_time_s": [0.1, 0.4, 0.9, 5.0]}
)


def test_ax_draws_into_the_callers_axes():
    fig = Figure()
    left, right = fig.subplots(1, 2)
    got = plots.response_time_cdf(EXCHANGES, ax=right)  # nested: cdf_curves draws it
    assert got is fig
    assert len(right.get_lines()) >= 1 and len(left.get_lines()) == 0
    assert 0.9 in list(right.get_lines()[0].get_xdata())  # the slowest completed response
    plots.response_time_ccdf(EXCHANGES, ax=left)
    assert len(left.get_lines()) >= 1


def test_without_ax_each_call_makes_its_own_figure():
    a, b = plots.response_time_cdf(EXCHANGES), plots.response_time_cdf(EXCHANGES)
    assert a is not b and len(a.axes) == 1
