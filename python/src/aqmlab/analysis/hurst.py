"""Hurst-parameter estimation for count series (packets or bytes per bin).

Three estimators, as listed in shared/reference/model-facts.md §10 (Leland, Taqqu,
Willinger, Wilson, ToN 1994; Taqqu, Teverovsky, Willinger, Fractals 1995; Abry & Veitch, IEEE
Trans. Inf. Theory 44(1), 1998):

- `aggregated_variance`: the variance–time plot. Var(X^(m)) ~ m^(2H-2), so H = 1 + slope/2.
- `rescaled_range`: R/S (pox plot). E[R/S](n) ~ c n^H, so H = slope.
- `wavelet`: the Abry–Veitch logscale diagram on a Daubechies DWT written here (no
  PyWavelets): y_j = log2(mean d_j^2) - g(n_j), weighted fit against the octave j, slope α,
  H = (α + 1)/2 for fGn-like counts, with a confidence interval.

Also `fgn` (exact fractional Gaussian noise by circulant embedding, Davies & Harte 1987) for
tests and calibration of the estimators, and `aggregate` (sums over blocks).

Every estimator returns a `HurstEstimate` (H, the points of its plot, the fitted range).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "HurstEstimate",
    "aggregate",
    "aggregated_variance",
    "daubechies",
    "dwt_details",
    "fgn",
    "rescaled_range",
    "wavelet",
]


@dataclass(frozen=True)
class HurstEstimate:
    """One estimate: `H`, the method, the plot's points (`x`, `y`: log10 scale and log10
    statistic for the time-domain methods; octave j and y_j for the wavelet one), the fitted
    slope and, for the wavelet method, a 95 % confidence interval of H."""

    H: float
    method: str
    x: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    slope: float = float("nan")
    intercept: float = float("nan")
    ci95: tuple[float, float] | None = None
    fit_range: tuple[float, float] | None = None


def _as_series(x) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size < 32:
        raise ValueError(f"need a series of at least 32 values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError("the series contains NaN or infinite values")
    return a


def aggregate(x, m: int) -> np.ndarray:
    """Sums of consecutive, non-overlapping blocks of `m` values (a trailing partial block is
    dropped): the series at an m times coarser time scale."""
    a = np.asarray(x, dtype=float).ravel()
    if m < 1:
        raise ValueError(f"block size m = {m}: expected an integer >= 1")
    k = a.size // m
    return a[: k * m].reshape(k, m).sum(axis=1)


def _log_sizes(lo: int, hi: int, per_decade: int = 8) -> np.ndarray:
    if hi < lo:
        return np.array([], dtype=int)
    n = max(2, math.ceil(per_decade * math.log10(hi / lo)) + 1)
    return np.unique(np.round(np.logspace(math.log10(lo), math.log10(hi), n)).astype(int))


# --- synthetic fractional Gaussian noise ---------------------------------------------------


def fgn_autocovariance(H: float, n: int) -> np.ndarray:
    """γ(k), k = 0..n-1, of unit-variance fractional Gaussian noise with Hurst parameter H."""
    k = np.arange(n, dtype=float)
    return 0.5 * (np.abs(k + 1) ** (2 * H) - 2 * np.abs(k) ** (2 * H) + np.abs(k - 1) ** (2 * H))


def fgn(n: int, H: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """`n` samples of zero-mean, unit-variance fractional Gaussian noise, exact in
    distribution, by embedding the covariance in a circulant matrix of size 2n and
    diagonalising it with the FFT (Davies & Harte 1987)."""
    if not 0 < H < 1:
        raise ValueError(f"H = {H}: expected 0 < H < 1")
    rng = np.random.default_rng(rng)
    gamma = fgn_autocovariance(H, n + 1)
    row = np.concatenate([gamma, gamma[-2:0:-1]])  # length 2n
    lam = np.fft.fft(row).real
    if lam.min() < -1e-9 * lam.max():
        raise ValueError(f"circulant embedding not non-negative for H = {H}")
    lam = np.clip(lam, 0.0, None)
    size = row.size
    z = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    w = np.fft.fft(np.sqrt(lam / size) * z)
    return w.real[:n]


# --- aggregated variance -------------------------------------------------------------------


def _fit(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    if w is None:
        w = np.ones_like(x)
    s0, s1, s2 = w.sum(), (w * x).sum(), (w * x * x).sum()
    t0, t1 = (w * y).sum(), (w * x * y).sum()
    det = s0 * s2 - s1 * s1
    slope = (s0 * t1 - s1 * t0) / det
    return float(slope), float((t0 - slope * s1) / s0)


def aggregated_variance(
    x, m_min: int = 1, m_max: int | None = None, min_blocks: int = 10
) -> HurstEstimate:
    """Variance–time estimate. For block sizes m (logarithmically spaced from `m_min` to
    `m_max`, default such that at least `min_blocks` blocks remain), the sample variance of the
    block means; least-squares line of log10 variance on log10 m; H = 1 + slope/2."""
    a = _as_series(x)
    hi = m_max if m_max is not None else a.size // min_blocks
    ms = _log_sizes(max(1, m_min), max(hi, m_min))
    xs, ys = [], []
    for m in ms:
        means = aggregate(a, int(m)) / m
        if means.size < 2:
            continue
        v = means.var(ddof=1)
        if v > 0:
            xs.append(math.log10(m))
            ys.append(math.log10(v))
    if len(xs) < 3:
        raise ValueError("too few block sizes with a positive variance to fit")
    xa, ya = np.array(xs), np.array(ys)
    slope, icpt = _fit(xa, ya)
    return HurstEstimate(
        1 + slope / 2,
        "aggregated-variance",
        xa,
        ya,
        slope,
        icpt,
        fit_range=(float(ms[0]), float(ms[-1])),
    )


# --- R/S -----------------------------------------------------------------------------------


def rescaled_range(x, n_min: int = 16, n_max: int | None = None) -> HurstEstimate:
    """R/S estimate. For window lengths n (logarithmically spaced, `n_min` to `n_max`, default
    a quarter of the series), the mean over non-overlapping windows of R(n)/S(n), where R is the
    range of the cumulative deviations from the window mean (including 0) and S the window's
    standard deviation; least-squares line of log10 R/S on log10 n; H = slope."""
    a = _as_series(x)
    hi = n_max if n_max is not None else a.size // 4
    ns = _log_sizes(max(8, n_min), max(hi, n_min))
    xs, ys = [], []
    for n in ns:
        k = a.size // n
        if k < 1:
            continue
        w = a[: k * n].reshape(k, n)
        dev = np.cumsum(w - w.mean(axis=1, keepdims=True), axis=1)
        r = np.maximum(dev.max(axis=1), 0) - np.minimum(dev.min(axis=1), 0)
        s = w.std(axis=1)
        ok = s > 0
        if not ok.any():
            continue
        xs.append(math.log10(n))
        ys.append(math.log10(float(np.mean(r[ok] / s[ok]))))
    if len(xs) < 3:
        raise ValueError("too few window lengths to fit")
    xa, ya = np.array(xs), np.array(ys)
    slope, icpt = _fit(xa, ya)
    return HurstEstimate(
        slope, "rescaled-range", xa, ya, slope, icpt, fit_range=(float(ns[0]), float(ns[-1]))
    )


# --- wavelet (Abry–Veitch) -----------------------------------------------------------------


def daubechies(n_vanishing: int) -> np.ndarray:
    """Low-pass filter (length 2N, sum √2) of the Daubechies wavelet with N vanishing moments,
    computed by spectral factorisation: |H(ω)|² = cos^{2N}(ω/2) P(sin²(ω/2)) with
    P(y) = Σ_{k<N} C(N-1+k, k) y^k; the factor of P is built from the roots inside the unit
    circle (minimum phase). N = 1 is the Haar filter."""
    N = int(n_vanishing)
    if not 1 <= N <= 10:
        raise ValueError(f"vanishing moments = {N}: expected 1..10")
    # Roots of P in y, each mapped to z with z + 1/z = 2 - 4y; keep |z| < 1.
    coeffs = [math.comb(N - 1 + k, k) for k in range(N)]  # ascending powers of y
    y_roots = np.roots(coeffs[::-1]) if N > 1 else np.array([])
    poly = np.array([1.0 + 0j])
    for y in y_roots:
        b = 2 - 4 * y
        z1 = (b + np.sqrt(b * b - 4)) / 2
        z = z1 if abs(z1) < 1 else 1 / z1
        poly = np.convolve(poly, [1.0, -z])
    for _ in range(N):
        poly = np.convolve(poly, [1.0, 1.0])
    h = poly.real
    return h * (math.sqrt(2) / h.sum())


def dwt_details(x, h: np.ndarray, levels: int | None = None) -> list[np.ndarray]:
    """Detail coefficients d_j, j = 1, 2, ... (finest first) of a DWT with low-pass filter
    `h` and the matching high-pass filter g_k = (-1)^k h_{L-1-k}. Convolutions keep only
    coefficients that do not touch the series' ends (no boundary extension), so every
    coefficient is exact and the count halves (minus the filter length) per octave."""
    a = np.asarray(x, dtype=float).ravel()
    L = h.size
    g = h[::-1] * np.array([(-1) ** k for k in range(L)])
    out = []
    j = 0
    while a.size >= 2 * L and (levels is None or j < levels):
        d = np.convolve(a, g[::-1], mode="valid")[::2]
        a = np.convolve(a, h[::-1], mode="valid")[::2]
        out.append(d)
        j += 1
    return out


def _digamma(x: float) -> float:
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    inv = 1 / x
    inv2 = inv * inv
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240))))
    return acc + math.log(x) - 0.5 * inv - series


def _trigamma(x: float) -> float:
    """ζ(2, x) = Σ_k 1/(x + k)²."""
    acc = 0.0
    while x < 6:
        acc += 1 / (x * x)
        x += 1
    inv = 1 / x
    inv2 = inv * inv
    return acc + inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 / 42))


def wavelet(
    x,
    n_vanishing: int = 2,
    j1: int = 3,
    j2: int | None = None,
    min_coeffs: int = 8,
) -> HurstEstimate:
    """Abry–Veitch estimate. For each octave j: μ_j = mean of d_j², y_j = log2 μ_j - g(n_j)
    with g(n) = ψ(n/2)/ln 2 - log2(n/2), and Var y_j ≈ ζ(2, n_j/2)/(ln 2)²; weighted least
    squares of y_j on j over [j1, j2] (default j2: the coarsest octave with at least
    `min_coeffs` coefficients) gives α; H = (α + 1)/2, with a 95 % interval from the fit's
    variance."""
    a = _as_series(x)
    details = dwt_details(a, daubechies(n_vanishing))
    js, ys, vs = [], [], []
    for j, d in enumerate(details, start=1):
        n = d.size
        if n < min_coeffs:
            break
        mu = float(np.mean(d * d))
        if mu <= 0:
            continue
        js.append(j)
        ys.append(math.log2(mu) - (_digamma(n / 2) / math.log(2) - math.log2(n / 2)))
        vs.append(_trigamma(n / 2) / math.log(2) ** 2)
    ja, ya, va = np.array(js, dtype=float), np.array(ys), np.array(vs)
    hi = j2 if j2 is not None else (int(ja.max()) if ja.size else 0)
    sel = (ja >= j1) & (ja <= hi)
    if sel.sum() < 2:
        raise ValueError(
            f"too few octaves in [{j1}, {hi}] for a wavelet fit (series of {a.size} values)"
        )
    w = 1 / va[sel]
    slope, icpt = _fit(ja[sel], ya[sel], w)
    s0, s1, s2 = w.sum(), (w * ja[sel]).sum(), (w * ja[sel] ** 2).sum()
    var_slope = s0 / (s0 * s2 - s1 * s1)
    H = (slope + 1) / 2
    half = 1.96 * math.sqrt(var_slope) / 2
    return HurstEstimate(
        H,
        f"wavelet-db{n_vanishing}",
        ja,
        ya,
        slope,
        icpt,
        ci95=(H - half, H + half),
        fit_range=(float(j1), float(hi)),
    )
