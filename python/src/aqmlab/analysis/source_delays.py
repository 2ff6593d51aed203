"""Queueing delay per traffic source (the `source_delay` table: one histogram per source and
bottleneck direction): its mean and percentiles per group, for the reports that show what
each queue costs each kind of user (the study report's per-source table, the L4S pack)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

__all__ = ["class_delays"]


def class_delays(source_delay: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Mean and percentiles of the queueing delay per group of `by` (axis labels, `source`,
    `direction`) from `source_delay` histogram rows (bin midpoints for the mean; a percentile
    is the upper edge of the bin where the cumulative count reaches it)."""
    if source_delay.height == 0:
        return pl.DataFrame()
    d = source_delay.filter(pl.col("width_ms").is_finite()).with_columns(
        (pl.col("delay_ms") + pl.col("width_ms") / 2).alias("mid"),
        (pl.col("delay_ms") + pl.col("width_ms")).alias("upper"),
    )
    rows = []
    for key, g in d.group_by(list(by), maintain_order=True):
        g = g.group_by(["delay_ms", "mid", "upper"]).agg(pl.col("count").sum()).sort("delay_ms")
        counts = g["count"].to_numpy().astype(float)
        total = counts.sum()
        if total == 0:
            continue
        cum = np.cumsum(counts) / total
        upper = g["upper"].to_numpy()

        def pct(q: float, cum: np.ndarray = cum, upper: np.ndarray = upper) -> float:
            return float(upper[min(np.searchsorted(cum, q), len(upper) - 1)])

        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "packets": int(total),
                "mean delay (ms)": float((g["mid"].to_numpy() * counts).sum() / total),
                "p50 (ms)": pct(0.5),
                "p99 (ms)": pct(0.99),
            }
        )
    return pl.DataFrame(rows)
