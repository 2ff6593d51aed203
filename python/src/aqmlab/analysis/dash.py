"""DASH sessions (docs/workload.md, "Adaptive video streaming"): Yin et al.'s QoE of a
segment sequence, and per-run figures over a run's `dash_sessions` table that a study's
catalog can add to its row (`summary_metrics`).

The core computes each session's QoE (`dash_sessions.qoe`, `summary.dash.qoe_mean`);
`qoe_yin` is the same definition written independently, for checks and for other weights:
Yin, Jindal, Sekar, Sinopoli, "A control-theoretic approach for dynamic adaptive video
streaming over HTTP", SIGCOMM 2015, with q(R) = R in kb/s and the evaluation's balanced
weights lambda = 1, mu = mu_s = 3000."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LAMBDA = 1.0
MU = 3000.0


def qoe_yin(
    bitrates_kbps: Sequence[float],
    stall_s: float,
    startup_s: float,
    lam: float = LAMBDA,
    mu: float = MU,
    mu_s: float = MU,
) -> float:
    """Sum of the segments' bitrates, minus lam times the sum of |changes| between
    consecutive segments, minus mu per second of stall and mu_s per second of startup."""
    quality = sum(bitrates_kbps)
    switches = sum(abs(b - a) for a, b in itertools.pairwise(bitrates_kbps))
    return quality - lam * switches - mu * stall_s - mu_s * startup_s


def summary_metrics(summary: dict[str, Any], results_dir: str | Path) -> dict[str, float]:
    """Per-run figures over the sessions of `results_dir/dash_sessions.parquet`: the worst
    session's QoE per segment, the 90th percentile of startup delay, and the share of sessions
    that stalled; empty without DASH sessions. (`summary.dash` already holds the means.)"""
    path = Path(results_dir) / "dash_sessions.parquet"
    if not (summary.get("summary", summary).get("dash") or {}).get("sessions") or not path.exists():
        return {}
    import polars as pl

    s = pl.read_parquet(path, columns=["qoe_per_segment", "startup_s", "stalls"])
    if s.height == 0:
        return {}
    startup = s["startup_s"].drop_nans().drop_nulls()
    return {
        "dash.qoe_per_segment_min": float(s["qoe_per_segment"].min()),
        "dash.startup_s_p90": float(startup.quantile(0.9, "linear")) if len(startup) else math.nan,
        "dash.stalled_share": float((s["stalls"] > 0).mean()),
    }
