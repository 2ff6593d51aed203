"""Medians, ranges and the ratios of alternated pairs."""

import pytest

from bench.stats import Spread, paired, ratio, spread


def test_spread_of_odd_and_even_counts():
    assert spread([3.0, 1.0, 2.0]) == Spread(2.0, 1.0, 3.0, 3)
    assert spread([4.0, 1.0, 2.0, 3.0]) == Spread(2.5, 1.0, 4.0, 4)
    assert spread([7.0]) == Spread(7.0, 7.0, 7.0, 1)
    assert spread([]) is None


def test_median_ignores_one_slowed_run():
    # One run of five slowed by the shared machine: the median does not move with it.
    assert spread([1.0, 1.01, 0.99, 5.0, 1.0]).median == 1.0


def test_ratio_refuses_missing_or_zero_denominators():
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(None, 2.0) is None
    assert ratio(3.0, None) is None
    assert ratio(3.0, 0.0) is None


def test_paired_ratios_are_per_pair_then_median():
    new = [1.0, 2.2, 0.9]
    ref = [2.0, 2.0, 1.0]
    s = paired(new, ref)
    assert s.median == pytest.approx(0.9)
    assert (s.lo, s.hi, s.n) == (pytest.approx(0.5), pytest.approx(1.1), 3)
    # The ratio of the medians would be 1.0 / 2.0: pairing is not the same statistic.
    assert paired(new, []) is None
