"""The verdict of one scheme in one scenario, against drop-tail in the same scenario (RFC 7928
§4.3.1 compares the schemes with drop-tail as the baseline). The RFC states no numeric
thresholds; a difference counts only when it exceeds twice its standard error over the
repetitions (about a 95 % confidence level for normal means: a first-principles rule, not a
tuned one). Rules, in order:

* delay significantly lower and the section's metric not significantly worse: "better";
* delay significantly lower and the metric significantly worse: "trade-off";
* delay significantly higher, or the metric significantly worse: "worse";
* the metric significantly better (delay not significantly different): "better";
* otherwise "≈ drop-tail". With fewer than 2 repetitions no verdict is given ("n/a").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["RULES", "VERDICTS", "difference", "verdict"]

VERDICTS = ("better", "trade-off", "worse", "≈ drop-tail", "baseline", "n/a")
RULES = __doc__ or ""
# Standard errors a difference must exceed to count.
SIGNIFICANCE_SE = 2.0


def difference(base: Sequence[float], other: Sequence[float]) -> int:
    """+1 if `other`'s mean is significantly above `base`'s, -1 if below, 0 if not
    significant, using Welch's standard error of the difference of the means."""
    a = np.asarray([x for x in base if math.isfinite(x)], float)
    b = np.asarray([x for x in other if math.isfinite(x)], float)
    if a.size < 2 or b.size < 2:
        raise ValueError("a verdict needs at least 2 repetitions on each side")
    diff = b.mean() - a.mean()
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    if abs(diff) <= SIGNIFICANCE_SE * se or diff == 0:
        return 0
    return 1 if diff > 0 else -1


def verdict(
    base_delay: Sequence[float],
    delay: Sequence[float],
    base_metric: Sequence[float],
    metric: Sequence[float],
    higher_is_better: bool = True,
) -> str:
    """The verdict (rules in this module's text) of a scheme's repetitions against drop-
    tail's."""
    try:
        d = difference(base_delay, delay)
        m = difference(base_metric, metric)
    except ValueError:
        return "n/a"
    if not higher_is_better:
        m = -m
    if d < 0:
        return "trade-off" if m < 0 else "better"
    if d > 0 or m < 0:
        return "worse"
    return "better" if m > 0 else "≈ drop-tail"
