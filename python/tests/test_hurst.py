"""Hurst estimators on synthetic series of known H (fGn by circulant embedding; Poisson)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aqmlab.analysis import hurst

N = 2**14
SEEDS = (1, 2, 3)
# Tolerances, stated: wavelet (db2, octaves 3..) ±0.05; aggregated variance and R/S, whose
# biases at H = 0.9 are known (both fall short), ±0.1. Seeds are fixed: the test is
# deterministic.
TOL = {"wavelet": 0.05, "aggregated_variance": 0.1, "rescaled_range": 0.1}


def test_haar_and_db2_filters():
    np.testing.assert_allclose(hurst.daubechies(1), [1 / math.sqrt(2)] * 2)
    s3 = math.sqrt(3)
    db2 = np.array([1 + s3, 3 + s3, 3 - s3, 1 - s3]) / (4 * math.sqrt(2))
    np.testing.assert_allclose(hurst.daubechies(2), db2, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_daubechies_properties(n):
    h = hurst.daubechies(n)
    assert h.size == 2 * n
    assert h.sum() == pytest.approx(math.sqrt(2))
    # Orthonormal to its even shifts.
    for shift in range(0, 2 * n, 2):
        dot = float(np.dot(h[shift:], h[: h.size - shift]))
        assert dot == pytest.approx(1.0 if shift == 0 else 0.0, abs=1e-10)
    # The high-pass filter kills polynomials of degree < n.
    g = h[::-1] * np.array([(-1) ** k for k in range(h.size)])
    k = np.arange(h.size)
    for p in range(n):
        assert float(np.dot(g, k**p)) == pytest.approx(0.0, abs=1e-8 * (h.size**p))


def test_fgn_has_the_right_covariance():
    x = np.concatenate([hurst.fgn(4096, 0.8, s) for s in range(8)])
    assert x.var() == pytest.approx(1.0, abs=0.1)
    gamma1 = hurst.fgn_autocovariance(0.8, 2)[1]  # 2^(2H-1) - 1
    assert gamma1 == pytest.approx(2 ** (0.6) - 1)
    lag1 = np.mean([np.corrcoef(y[:-1], y[1:])[0, 1] for y in np.split(x, 8)])
    assert lag1 == pytest.approx(gamma1, abs=0.05)


def test_aggregate_sums_blocks():
    np.testing.assert_array_equal(hurst.aggregate([1, 2, 3, 4, 5, 6, 7], 3), [6, 15])


@pytest.mark.parametrize("H", [0.5, 0.7, 0.9])
@pytest.mark.parametrize("method", sorted(TOL))
def test_estimators_recover_h_of_fgn(H, method):
    for seed in SEEDS:
        x = hurst.fgn(N, H, seed)
        est = getattr(hurst, method)(x)
        assert abs(est.H - H) <= TOL[method], (method, H, seed, est.H)


def test_wavelet_interval_covers_the_truth():
    hits = 0
    for seed in range(10):
        lo, hi = hurst.wavelet(hurst.fgn(N, 0.75, 100 + seed)).ci95
        hits += lo <= 0.75 <= hi
    assert hits >= 8  # nominal 95 %


@pytest.mark.parametrize("method", sorted(TOL))
def test_poisson_counts_are_short_range(method):
    x = np.random.default_rng(5).poisson(4.0, N)
    assert abs(getattr(hurst, method)(x).H - 0.5) <= 0.06


def test_wavelet_ignores_a_linear_trend():
    x = hurst.fgn(N, 0.7, 9) + np.linspace(0, 20, N)
    assert abs(hurst.wavelet(x, n_vanishing=2).H - 0.7) <= 0.05


def test_short_or_bad_series_are_rejected():
    with pytest.raises(ValueError):
        hurst.wavelet(np.ones(10))
    with pytest.raises(ValueError):
        hurst.aggregated_variance([1.0, math.nan] * 40)
