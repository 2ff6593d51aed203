"""Intervals over seeds for the tune's comparisons (docs/tune.md, "Intervals").

- `mean(values)`: Student t interval of a mean over seeds (`aqmlab.analysis.intervals`).
- `paired(a, b)`: the mean of the per-seed differences a − b and its t interval. With common
  random numbers both members of a pair ran on the same workload, so the workload's share of
  the variance cancels in the difference (Law & Kelton, "Simulation Modeling and Analysis",
  3rd ed., §11.2 common random numbers; the paired-t interval of §10.2.1).
- `unpaired(a, b)`: the same difference treated as two independent samples (Welch's
  interval, §10.2.2, degrees of freedom by Welch–Satterthwaite rounded down, which makes the
  interval wider, never narrower): what the comparison would claim without the pairing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aqmlab.analysis.intervals import LEVEL, Interval, mean_interval, welch_interval

__all__ = ["Interval", "as_json", "mean", "paired", "unpaired"]


def mean(values: Sequence[float]) -> Interval:
    return mean_interval(values)


def paired(a: Sequence[float], b: Sequence[float]) -> Interval:
    """Interval of mean(a − b) over pairs (NaN pairs left out)."""
    return mean_interval(
        [x - y for x, y in zip(a, b, strict=True) if not (math.isnan(x) or math.isnan(y))]
    )


def unpaired(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval:
    """Welch's interval of mean(a) − mean(b), the samples taken as independent."""
    return welch_interval(a, b, level)


def as_json(i: Interval) -> dict[str, float | int | None]:
    return {"mean": i.mean, "n": i.n, "half_width": i.half_width, "low": i.low, "high": i.high}
