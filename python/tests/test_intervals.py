"""Confidence intervals over repetitions (`aqmlab.analysis.intervals`): Student t quantiles
against published tables, and the interval of a mean computed by hand."""

from __future__ import annotations

import math
import statistics

import pytest

from aqmlab.analysis import intervals

# t_{0.975, df}: the two-sided 95 % points of Student's t (any statistics table).
T_975 = {
    1: 12.7062,
    2: 4.3027,
    3: 3.1824,
    4: 2.7764,
    5: 2.5706,
    9: 2.2622,
    10: 2.2281,
    29: 2.0452,
    60: 2.0003,
    120: 1.9799,
}


@pytest.mark.parametrize(("df", "want"), sorted(T_975.items()))
def test_student_t_quantiles_match_the_tables(df, want):
    assert intervals.t_quantile(0.975, df) == pytest.approx(want, abs=5e-5)


def test_other_levels_and_large_degrees_of_freedom():
    assert intervals.t_quantile(0.95, 4) == pytest.approx(2.1318, abs=5e-5)
    assert intervals.t_quantile(0.995, 9) == pytest.approx(3.2498, abs=5e-5)
    assert intervals.t_quantile(0.975, 100_000) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        intervals.t_quantile(0.975, 0)


def test_the_interval_of_a_mean_is_t_times_the_standard_error():
    values = [0.31, 0.27, 0.35, 0.29, 0.30]
    iv = intervals.mean_interval(values)
    sd = statistics.stdev(values)
    assert iv.n == 5 and iv.mean == pytest.approx(statistics.fmean(values))
    assert iv.half_width == pytest.approx(2.7764 * sd / math.sqrt(5), rel=1e-4)
    assert (iv.low, iv.high) == pytest.approx((iv.mean - iv.half_width, iv.mean + iv.half_width))


def test_one_value_has_no_interval_and_missing_values_are_left_out():
    one = intervals.mean_interval([0.4])
    assert one.n == 1 and one.mean == 0.4 and one.half_width is None
    assert intervals.mean_interval([0.2, None, float("nan"), 0.4]).n == 2
    assert intervals.mean_interval([]).half_width is None
    assert math.isnan(intervals.mean_interval([]).mean)
    # The half-width of n values with standard deviation sd: what a table column needs.
    assert intervals.half_width(0.1, 5) == pytest.approx(2.7764 * 0.1 / math.sqrt(5), rel=1e-4)
    assert intervals.half_width(0.1, 1) is None
    assert intervals.half_width(None, 3) is None


def test_welchs_interval_by_hand():
    # a = 1, 2, 3, 4: mean 2.5, variance of the mean 5/3 / 4 = 5/12; b = 2, 4: mean 3,
    # variance of the mean 2 / 2 = 1. Difference −0.5, standard error √(17/12) = 1.19024;
    # Welch–Satterthwaite df = (17/12)² / ((5/12)²/3 + 1²/1) = 1.897, rounded down to 1:
    # half-width t(0.975, 1) × 1.19024 = 12.7062 × 1.19024 = 15.1234.
    iv = intervals.welch_interval([1, 2, 3, 4], [2, 4])
    assert iv.mean == pytest.approx(-0.5)
    assert iv.n == 2
    assert iv.half_width == pytest.approx(15.1234, abs=1e-3)
    # Equal variances, two values a side: df = (1 + 1)² / (1/1 + 1/1) = 2.
    assert intervals.welch_interval([2, 4], [1, 3]).half_width == pytest.approx(
        4.3027 * math.sqrt(2), abs=1e-3
    )


def test_welchs_interval_edge_cases():
    assert intervals.welch_interval([1.0, None, math.nan, 3.0], [2.0, 2.0]).mean == 0.0
    assert intervals.welch_interval([1.0, 1.0], [2.0, 2.0]).half_width == 0.0
    assert intervals.welch_interval([1.0], [2.0, 3.0]).half_width is None
    assert math.isnan(intervals.welch_interval([], [1.0]).mean)


def test_adjusted_difference_removes_what_the_covariate_explains():
    # Both groups on the same line y = 1 + 2x, group a 0.5 higher: the raw difference of the
    # means (a sits at lower x) is -1.5, the difference at equal x exactly 0.5, no residual.
    iv = intervals.adjusted_difference([1, 2, 3], [3.5, 5.5, 7.5], [2, 3, 4], [5, 7, 9])
    assert iv.mean == pytest.approx(0.5) and iv.half_width == pytest.approx(0.0, abs=1e-12)
    assert iv.n == 6


def test_adjusted_difference_is_the_least_squares_group_coefficient():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    xa, xb = rng.normal(0.70, 0.02, 40), rng.normal(0.71, 0.02, 40)
    ya = -0.25 + 0.42 * xa + rng.normal(0, 0.005, 40)
    yb = -0.43 + 0.69 * xb + rng.normal(0, 0.005, 40)
    iv = intervals.adjusted_difference(xa, ya, xb, yb)
    # The same model by a general least-squares solve: y = α + β x + δ [group a].
    x = np.concatenate([xa, xb])
    g = np.r_[np.ones(40), np.zeros(40)]
    design = np.vstack([np.ones(80), x, g]).T
    y = np.concatenate([ya, yb])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    cov = resid @ resid / (80 - 3) * np.linalg.inv(design.T @ design)
    assert iv.mean == pytest.approx(coef[2], rel=1e-9)
    t = intervals.t_quantile(0.975, 77)
    assert iv.half_width == pytest.approx(t * math.sqrt(cov[2, 2]), rel=1e-9)


def test_adjusted_difference_edge_cases():
    assert intervals.adjusted_difference([1], [1], [2], [2]).half_width is None
    same_x = intervals.adjusted_difference([1, 1], [2, 4], [1, 1], [1, 1])
    assert same_x.mean == 2.0 and same_x.half_width is None
    assert math.isnan(intervals.adjusted_difference([], [], [1], [1]).mean)
    with pytest.raises(ValueError):
        intervals.adjusted_difference([1, 2], [1], [1], [1])
