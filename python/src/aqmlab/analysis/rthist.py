"""Response-time distributions of many runs, in constant memory: a histogram on fixed
logarithmic bins that adds across runs (the repetitions of a study cell), with the CDF and
CCDF the study reports plot, and one exact summary of the body.

A full-scale run of Study B logs over ten million exchanges; keeping every response time of
every repetition of every configuration to draw a CDF is not possible, so each run is read
once (one column of its `exchanges` table) into a `ResponseTimeHist`, and the report works
with those. Bins: `BINS_PER_DECADE` per decade from 0.1 ms to 10^4 s (relative width 0.9 %),
plus an underflow and an overflow count; `capped_sum` keeps Σ min(t, `CAP_S`) exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["BINS_PER_DECADE", "CAP_S", "EDGES", "ResponseTimeHist", "read_run"]

BINS_PER_DECADE = 250
LOW_S, HIGH_S = 1e-4, 1e4
EDGES = np.logspace(
    math.log10(LOW_S), math.log10(HIGH_S), int(BINS_PER_DECADE * math.log10(HIGH_S / LOW_S)) + 1
)
# The response-time CDFs of the studies end at 2 s (Studies A and B).
CAP_S = 2.0


@dataclass
class ResponseTimeHist:
    """Completed exchanges' response times: counts per bin of `EDGES` (`[e_i, e_{i+1})`),
    `below` (< 0.1 ms) and `above` (≥ 10^4 s); `capped_sum` = Σ min(t, CAP_S)."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros(EDGES.size - 1, np.int64))
    below: int = 0
    above: int = 0
    capped_sum: float = 0.0

    @classmethod
    def from_times(cls, times: np.ndarray | pl.Series) -> ResponseTimeHist:
        t = np.asarray(times, dtype=np.float64)
        t = t[~np.isnan(t)]
        counts, _ = np.histogram(t, bins=EDGES)
        # np.histogram closes the last bin on the right: move t == HIGH_S to `above`.
        top = int(np.count_nonzero(t == EDGES[-1]))
        counts[-1] -= top
        return cls(
            counts=counts.astype(np.int64),
            below=int(np.count_nonzero(t < EDGES[0])),
            above=int(np.count_nonzero(t > EDGES[-1])) + top,
            capped_sum=float(np.minimum(t, CAP_S).sum()),
        )

    def __add__(self, other: ResponseTimeHist) -> ResponseTimeHist:
        return ResponseTimeHist(
            self.counts + other.counts,
            self.below + other.below,
            self.above + other.above,
            self.capped_sum + other.capped_sum,
        )

    @property
    def n(self) -> int:
        return int(self.counts.sum()) + self.below + self.above

    def mean_capped(self) -> float:
        """E[min(T, CAP_S)]: the area above the CDF on [0, CAP_S] (smaller = the CDF lies
        higher, closer to the uncongested network's). NaN without exchanges."""
        return self.capped_sum / self.n if self.n else math.nan

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, P(T < t)) at the bin edges (exact there)."""
        if not self.n:
            return EDGES.copy(), np.full(EDGES.size, math.nan)
        cum = np.concatenate([[self.below], self.below + np.cumsum(self.counts)])
        return EDGES.copy(), cum / self.n

    def ccdf(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, P(T ≥ t)) at the bin edges."""
        t, f = self.cdf()
        return t, 1.0 - f

    def quantile(self, q: float) -> float:
        """The q-quantile, to the bin (the upper edge of the bin where the CDF reaches q)."""
        t, f = self.cdf()
        i = int(np.searchsorted(f, q, side="left"))
        return float(t[min(i, t.size - 1)]) if self.n else math.nan


def read_run(
    exchanges: str | Path, start_min: float, start_max: float = math.inf
) -> ResponseTimeHist:
    """The response times of one run's completed exchanges that started in
    `[start_min, start_max]`, read from its `exchanges.parquet` (one column at a time)."""
    t = (
        pl.scan_parquet(exchanges)
        .filter(
            pl.col("completed")
            & (pl.col("start_s") >= start_min)
            & (pl.col("start_s") <= start_max)
        )
        .select("response_time_s")
        .collect()["response_time_s"]
    )
    return ResponseTimeHist.from_times(t.to_numpy())
