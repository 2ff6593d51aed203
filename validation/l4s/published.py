"""The published figures, as stored beside this file (README.md gives their source)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
S1_TABLE = HERE / "s1_table.csv"
README_FIGURES = HERE / "readme_figures.csv"

# The row key shared by the published table and ours: the rate, the queue as the suite names
# it, and each flow's congestion control and RTT.
KEY = ["rate_mbps", "qdisc", "cc1", "rtt1_ms", "cc2", "rtt2_ms"]


def s1_table() -> pl.DataFrame:
    """Scenario 1's table: one row per rate, queue and pair of flows, with `d1_mbps`, `d2_mbps`
    (each flow's steady-state delivery rate) and `jain`."""
    return pl.read_csv(
        S1_TABLE,
        schema_overrides={
            "rate_mbps": pl.Int64,
            "rtt1_ms": pl.Int64,
            "rtt2_ms": pl.Int64,
            "d1_mbps": pl.Float64,
            "d2_mbps": pl.Float64,
            "jain": pl.Float64,
        },
    )


def readme_figures() -> pl.DataFrame:
    """The Scenario 2 and 3 figures the suite's README gives in numbers."""
    return pl.read_csv(README_FIGURES, schema_overrides={"published": pl.Float64})
