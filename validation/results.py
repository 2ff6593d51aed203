"""The rows the suites produce, and where they are kept.

Each row compares one metric of one scenario: ns-2's figure, ours, the difference (in the
unit the tolerance is stated in), the tolerance, pass or fail, the seeds, and a note (why a
non-identical figure differs, or what the tolerance stands for).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl


@dataclass
class Row:
    suite: str
    scenario: str
    metric: str
    ns2: float
    aqmlab: float
    difference: float
    tolerance: float
    passed: bool
    seeds: str
    note: str = ""


def compare(
    suite: str,
    scenario: str,
    metric: str,
    ns2: float,
    ours: float,
    *,
    kind: str,
    tolerance: float,
    seeds: str,
    note: str = "",
    difference: float | None = None,
) -> Row:
    """A row whose difference is computed by `kind`: "abs" (|ours − ns2|), "rel" (relative
    to |ns2|), "points" (percentage points of two fractions) or "given" (`difference`)."""
    if kind == "abs":
        diff = abs(ours - ns2)
    elif kind == "rel":
        diff = abs(ours - ns2) / abs(ns2) if ns2 != 0 else (0.0 if ours == 0 else math.inf)
    elif kind == "points":
        diff = abs(ours - ns2) * 100.0
    elif kind == "given":
        if difference is None:
            raise ValueError("kind='given' needs a difference")
        diff = difference
    else:
        raise ValueError(f"kind = {kind!r}: expected abs, rel, points or given")
    passed = bool(diff <= tolerance) and not math.isnan(diff)
    return Row(suite, scenario, metric, ns2, ours, diff, tolerance, passed, seeds, note)


def row_maker(suite: str, scenario: str, seeds: str):
    """`compare` with the suite, scenario and seeds fixed: `row(metric, ns2, ours, kind=...,
    tol=..., note=..., difference=...)`."""

    def row(metric, ns2_value, ours, *, kind, tol, note="", difference=None) -> Row:
        return compare(
            suite,
            scenario,
            metric,
            float(ns2_value),
            float(ours),
            kind=kind,
            tolerance=tol,
            seeds=seeds,
            note=note,
            difference=difference,
        )

    return row


def frame(rows: list[Row]) -> pl.DataFrame:
    return pl.DataFrame([asdict(r) for r in rows])


def write(rows: list[Row], path: Path) -> None:
    """Writes the rows as CSV (for reading) and Parquet beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    df = frame(rows)
    df.write_csv(path)
    df.write_parquet(path.with_suffix(".parquet"))


def read(path: Path) -> list[Row]:
    if not path.exists():
        return []
    df = pl.read_csv(path, infer_schema_length=None)
    return [Row(**r) for r in df.to_dicts()]
