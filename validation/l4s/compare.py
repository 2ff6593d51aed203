"""Our L4S pack's figures beside the suite's published ones.

Scenario 1 is compared row by row on each flow's share of the two goodputs (D1 / (D1 + D2),
in percent): the published table's rates are delivery rates of a real testbed and ours are
goodputs of a model, so what both say about fairness is the split, not the absolute rate
(which also carries header overheads and the link's utilization). Per rate and queue the
summary gives the median and largest difference in share (percentage points) and the rows
whose ordering differs (the flow that got more is the other one); "clear" counts only rows
whose published split is at least 55:45, where the ordering is not a coin toss.
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl

from validation.l4s.published import KEY

# A published split within 5 points of 50:50 does not order the flows clearly.
CLEAR_POINTS = 5.0
# `rttfair_table`'s flow labels: "prague (10 ms)".
_FLOW = re.compile(r"^(\w+) \((\d+) ms\)$")


def _flow(label: str) -> tuple[str, int]:
    m = _FLOW.match(label)
    if m is None:
        raise ValueError(f"unexpected flow label {label!r}")
    return m[1], int(m[2])


def ours_s1(table: pl.DataFrame, rate_mbps: int) -> pl.DataFrame:
    """Our Scenario 1 rows from `study_l4s.rttfair_table` of one rate's part, keyed as the
    published table (`published.KEY`), with `d1_mbps` and `d2_mbps`."""
    rows = []
    for r in table.iter_rows(named=True):
        (cc1, rtt1), (cc2, rtt2) = _flow(r["flow 1"]), _flow(r["flow 2"])
        rows.append(
            {
                "rate_mbps": rate_mbps,
                "qdisc": r["qdisc"],
                "cc1": cc1,
                "rtt1_ms": rtt1,
                "cc2": cc2,
                "rtt2_ms": rtt2,
                "d1_mbps": float(r["D1 (Mb/s)"]),
                "d2_mbps": float(r["D2 (Mb/s)"]),
            }
        )
    return pl.DataFrame(rows, schema_overrides={"rate_mbps": pl.Int64})


def _share(d1: pl.Expr, d2: pl.Expr) -> pl.Expr:
    total = d1 + d2
    return pl.when(total > 0).then(100.0 * d1 / total).otherwise(float("nan"))


def join_s1(published: pl.DataFrame, ours: pl.DataFrame) -> pl.DataFrame:
    """Published and our rows side by side (only keys both have), with each side's share of
    flow 1 (%), their difference in points and whether both order the flows alike."""
    pub = published.select([*KEY, "d1_mbps", "d2_mbps"]).rename(
        {"d1_mbps": "pub_d1", "d2_mbps": "pub_d2"}
    )
    mine = ours.select([*KEY, "d1_mbps", "d2_mbps"]).rename(
        {"d1_mbps": "our_d1", "d2_mbps": "our_d2"}
    )
    j = pub.join(mine, on=KEY, how="inner")
    j = j.with_columns(
        _share(pl.col("pub_d1"), pl.col("pub_d2")).alias("pub_share1"),
        _share(pl.col("our_d1"), pl.col("our_d2")).alias("our_share1"),
    )
    return j.with_columns(
        (pl.col("our_share1") - pl.col("pub_share1")).abs().alias("diff_points"),
        (
            (pl.col("pub_d1") - pl.col("pub_d2")).sign()
            == (pl.col("our_d1") - pl.col("our_d2")).sign()
        ).alias("same_order"),
        ((pl.col("pub_share1") - 50.0).abs() >= CLEAR_POINTS).alias("clear"),
    )


def summary_s1(joined: pl.DataFrame) -> pl.DataFrame:
    """Per rate and queue (in the published table's order), then over all rows: rows compared,
    median and largest share difference (points), rows with the other ordering (all, and
    those with a clear published split)."""
    groups = [
        ((rate, qdisc), g)
        for (rate, qdisc), g in joined.group_by(["rate_mbps", "qdisc"], maintain_order=True)
    ]
    groups.append((("all", "all"), joined))
    rows = []
    for (rate, qdisc), g in groups:
        d = g["diff_points"].to_numpy()
        wrong = ~g["same_order"].to_numpy()
        clear = g["clear"].to_numpy()
        rows.append(
            {
                "rate": str(rate),
                "qdisc": qdisc,
                "rows": g.height,
                "median diff (points)": float(np.median(d)) if d.size else math.nan,
                "max diff (points)": float(np.max(d)) if d.size else math.nan,
                "wrong order": int(wrong.sum()),
                "wrong order, clear split": int((wrong & clear).sum()),
            }
        )
    return pl.DataFrame(rows)


def peak_and_drain(
    t: np.ndarray, delay_ms: np.ndarray, step_s: float, drain_ms: float
) -> tuple[float, float]:
    """After a capacity step at `step_s`: the peak queueing delay (ms) and the time from the
    step until the delay is back under `drain_ms` after that peak (s; NaN if it never is
    within the run)."""
    after = t >= step_s
    if not after.any():
        return math.nan, math.nan
    ta, da = t[after], delay_ms[after]
    k = int(np.argmax(da))
    back = ta[k:][da[k:] < drain_ms]
    return float(da[k]), (float(back[0]) - step_s) if back.size else math.nan
