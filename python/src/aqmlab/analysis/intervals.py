"""Confidence intervals of a mean over repetitions (docs/report.md, "Intervals").

- `t_quantile(p, df)`: the p-quantile of Student's t with `df` (integer) degrees of freedom,
  from its closed-form distribution function (Abramowitz & Stegun 26.7.3-4) by bisection:
  exact to 1e-10, no SciPy needed.
- `half_width(sd, n)`: the half-width of the two-sided interval of a mean of n values of
  sample standard deviation sd: t(1 − α/2, n − 1) × sd / √n (None when n < 2).
- `mean_interval(values)`: the mean, n and that interval (NaN and None values left out).
- `paired_interval(a, b)`: mean(a − b) over repetitions run with the same seed, and the
  Student t interval of those differences (the paired-t comparison).
- `welch_interval(a, b)`: mean(a) − mean(b) for two independent samples and Welch's interval
  (Law & Kelton, "Simulation Modeling and Analysis", 3rd ed., §10.2.2; degrees of freedom by
  Welch–Satterthwaite, rounded down, which widens the interval, never narrows it).
- `adjusted_difference(xa, ya, xb, yb)`: the difference of two groups' means of y at equal
  covariate x — analysis of covariance with a common slope, y = α + β·x + δ·[group a] + ε,
  fitted by least squares; δ and its t interval on n − 3 degrees of freedom (Montgomery,
  "Design and Analysis of Experiments", §15.3). Where x is a property of each replication's
  random input whose expectation is the same for both groups (the load a seed's workload
  offers, say), this is the control-variate comparison: the part of the difference that
  the two groups' draws of x explain is removed, and the interval narrows by √(1 − ρ²).

Repetitions of a cell differ only in their seed, so their per-run metrics are independent
draws: the Student t interval over them is the textbook one (it assumes the per-run values
are roughly normal, which averages and medians over a run's many exchanges are).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

__all__ = [
    "LEVEL",
    "Interval",
    "adjusted_difference",
    "half_width",
    "mean_interval",
    "paired_interval",
    "t_quantile",
    "welch_interval",
]

LEVEL = 0.95  # the report's intervals: two-sided 95 %


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with `df` degrees of freedom (t ≥ 0)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:  # odd: 2/π [θ + sinθ cosθ (1 + 2/3 cos²θ + ... + 2·4···(df−3)/1·3···(df−2))]
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    # even: sinθ [1 + 1/2 cos²θ + 1·3/2·4 cos⁴θ + ... + 1·3···(df−3)/2·4···(df−2) cos^(df−2)θ]
    term, total = 1.0, 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        total += term
    return math.sin(theta) * total


@cache
def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with `df` ≥ 1 degrees of freedom (0.5 < p < 1)."""
    if df < 1 or int(df) != df:
        raise ValueError(f"df = {df!r}: expected an integer >= 1")
    if not 0.5 < p < 1:
        raise ValueError(f"p = {p!r}: expected 0.5 < p < 1")
    target = 2 * p - 1
    lo, hi = 0.0, 1.0
    while _t_two_sided(hi, int(df)) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_two_sided(mid, int(df)) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * hi:
            break
    return (lo + hi) / 2


def half_width(sd: float | None, n: int, level: float = LEVEL) -> float | None:
    """Half-width of the `level` two-sided Student t interval of a mean of `n` values whose
    sample standard deviation is `sd`; None without one (n < 2, or sd missing)."""
    if sd is None or n < 2 or math.isnan(sd):
        return None
    return t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)


@dataclass(frozen=True)
class Interval:
    mean: float  # NaN without values
    n: int
    half_width: float | None  # None with fewer than two values

    @property
    def low(self) -> float | None:
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        return None if self.half_width is None else self.mean + self.half_width


def mean_interval(values: Iterable[float | None], level: float = LEVEL) -> Interval:
    """The mean of the values (None and NaN left out) and its Student t interval."""
    xs = [float(v) for v in values if v is not None and not math.isnan(v)]
    n = len(xs)
    if n == 0:
        return Interval(math.nan, 0, None)
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else None
    return Interval(mean, n, half_width(sd, n, level))


def paired_interval(
    a: dict[int, float | None], b: dict[int, float | None], level: float = LEVEL
) -> Interval:
    """mean(a − b) over the repetitions both have (keys: repetition), with the Student t
    interval of the per-repetition differences: the two schemes ran with the same seed in
    each repetition (common random numbers), so the differences are the independent draws
    and the seed's own variation cancels (Law & Kelton, 3rd ed., §10.2.1, paired-t)."""
    diffs = [
        float(a[r]) - float(b[r])
        for r in sorted(a.keys() & b.keys())
        if a[r] is not None and b[r] is not None
    ]
    return mean_interval(diffs, level)


def welch_interval(
    a: Iterable[float | None], b: Iterable[float | None], level: float = LEVEL
) -> Interval:
    """mean(a) − mean(b), the samples taken as independent (None and NaN left out), with
    Welch's `level` interval; n is the smaller sample's size. No interval with fewer than two
    values on a side; a zero-width one when neither side varies."""
    xs = [float(x) for x in a if x is not None and not math.isnan(x)]
    ys = [float(y) for y in b if y is not None and not math.isnan(y)]
    if not xs or not ys:
        return Interval(math.nan, 0, None)
    d = math.fsum(xs) / len(xs) - math.fsum(ys) / len(ys)
    n = min(len(xs), len(ys))
    if n < 2:
        return Interval(d, n, None)

    def var_of_mean(v: list[float]) -> float:
        mu = math.fsum(v) / len(v)
        return math.fsum((x - mu) ** 2 for x in v) / (len(v) - 1) / len(v)

    va, vb = var_of_mean(xs), var_of_mean(ys)
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(d, n, 0.0)
    df = (va + vb) ** 2 / (va**2 / (len(xs) - 1) + vb**2 / (len(ys) - 1))
    return Interval(d, n, t_quantile(0.5 + level / 2, max(1, int(df))) * se)


def adjusted_difference(
    xa: Iterable[float],
    ya: Iterable[float],
    xb: Iterable[float],
    yb: Iterable[float],
    level: float = LEVEL,
) -> Interval:
    """mean(ya) − mean(yb) at equal x (module docstring: ANCOVA with a common slope), with its
    `level` interval; n is the number of pairs (x, y) in all. No interval with fewer than four
    pairs, or when x does not vary within the groups."""
    xa, ya, xb, yb = (list(map(float, v)) for v in (xa, ya, xb, yb))
    if len(xa) != len(ya) or len(xb) != len(yb):
        raise ValueError("each group needs as many x values as y values")
    n = len(xa) + len(xb)
    if not xa or not xb:
        return Interval(math.nan, n, None)

    def centred(x: list[float], y: list[float]) -> tuple[float, float, float, float, float]:
        mx, my = math.fsum(x) / len(x), math.fsum(y) / len(y)
        sxx = math.fsum((v - mx) ** 2 for v in x)
        sxy = math.fsum((u - mx) * (v - my) for u, v in zip(x, y, strict=True))
        syy = math.fsum((v - my) ** 2 for v in y)
        return mx, my, sxx, sxy, syy

    mxa, mya, sxxa, sxya, syya = centred(xa, ya)
    mxb, myb, sxxb, sxyb, syyb = centred(xb, yb)
    sxx = sxxa + sxxb
    if sxx == 0:
        return Interval(mya - myb, n, None)
    # The within-group (pooled) slope, and the groups' means moved to a common x.
    beta = (sxya + sxyb) / sxx
    delta = (mya - myb) - beta * (mxa - mxb)
    if n < 4:
        return Interval(delta, n, None)
    residual = (syya + syyb) - beta * (sxya + sxyb)
    s2 = max(residual, 0.0) / (n - 3)
    var = s2 * (1 / len(xa) + 1 / len(xb) + (mxa - mxb) ** 2 / sxx)
    return Interval(delta, n, t_quantile(0.5 + level / 2, n - 3) * math.sqrt(var))
