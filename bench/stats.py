"""Medians with their range, and ratios: the statistics of alternated whole-process runs.

On a shared machine one run can be slowed by another's load for seconds; the median of
several runs ignores such a run where a mean would not, and the range shows how noisy the
figure was. Runs of the two sides are alternated, so pair i saw about the same machine: the
ratio of each pair, then their median, cancels slow drifts of the machine's speed."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    median: float
    lo: float
    hi: float
    n: int


def spread(values: Sequence[float]) -> Spread | None:
    """Median, minimum and maximum of `values`; None when there are none."""
    if not values:
        return None
    return Spread(statistics.median(values), min(values), max(values), len(values))


def ratio(num: float | None, den: float | None) -> float | None:
    """num / den, or None when either is missing or den is not positive."""
    if num is None or den is None or den <= 0:
        return None
    return num / den


def paired(new: Sequence[float], ref: Sequence[float]) -> Spread | None:
    """The spread of new[i] / ref[i] over the pairs both sides completed."""
    rs = [r for r in (ratio(a, b) for a, b in zip(new, ref, strict=False)) if r is not None]
    return spread(rs)
