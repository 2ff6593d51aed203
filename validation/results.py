"""The rows the suites produce, and where they are kept.

Each row compares one metric of one scenario: ns-2's figure, ours, the difference (in the
unit the tolerance is stated in), the tolerance, the verdict, the seeds, and a note (why a
non-identical figure differs, or what the tolerance stands for).

Rows that compare statistics of two random streams (the end-to-end suites) also carry
`interval`: the half-width of the 95 % interval of the difference over the seeds (Welch's,
in the tolerance's unit; NaN for a deterministic comparison). Their verdict reads the
difference against the tolerance together with that interval:

- "pass": the difference is within the tolerance;
- "unresolved": it is not, but the interval reaches back inside the tolerance (difference −
  interval ≤ tolerance): with these seeds the two simulators cannot be told apart at the
  tolerance's resolution, and more seeds are needed to decide;
- "fail": even the near end of the interval lies beyond the tolerance.

A deterministic row is "pass" or "fail". `passed` is False only for "fail" (the exit status).
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
    interval: float = math.nan
    verdict: str = ""


def verdict(difference: float, tolerance: float, interval: float = math.nan) -> str:
    """ "pass", "unresolved" or "fail" (module docstring) for a difference, its tolerance and
    the half-width of the difference's interval (NaN: none)."""
    if math.isnan(difference):
        return "fail"
    if difference <= tolerance:
        return "pass"
    if not math.isnan(interval) and difference - interval <= tolerance:
        return "unresolved"
    return "fail"


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
    interval: float | None = None,
) -> Row:
    """A row whose difference is computed by `kind`: "abs" (|ours − ns2|), "rel" (relative
    to |ns2|), "points" (percentage points of two fractions) or "given" (`difference`).
    `interval` is the half-width of the difference's 95 % interval in the same unit (None:
    a deterministic comparison)."""
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
    iv = math.nan if interval is None else float(interval)
    v = verdict(diff, tolerance, iv)
    return Row(suite, scenario, metric, ns2, ours, diff, tolerance, v != "fail", seeds, note, iv, v)


def row_maker(suite: str, scenario: str, seeds: str):
    """`compare` with the suite, scenario and seeds fixed: `row(metric, ns2, ours, kind=...,
    tol=..., note=..., difference=...)`."""

    def row(metric, ns2_value, ours, *, kind, tol, note="", difference=None, interval=None) -> Row:
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
            interval=interval,
        )

    return row


# The numeric columns, always floats: inferred from the first rows, a suite whose first
# differences and tolerances are whole numbers (linux_qdisc's counts) made them integers and
# truncated every later suite's fractions to 0.
_FLOATS = {c: pl.Float64 for c in ("ns2", "aqmlab", "difference", "tolerance", "interval")}


def frame(rows: list[Row]) -> pl.DataFrame:
    return pl.DataFrame(
        [asdict(r) for r in rows], schema_overrides=_FLOATS, infer_schema_length=None
    )


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
    # Tables written before intervals existed have neither column: their rows get NaN and
    # the verdict their pass/fail implies.
    rows = []
    for r in df.to_dicts():
        if r.get("interval") is None:
            r["interval"] = math.nan
        for text in ("note", "seeds"):  # an empty text field reads back as null
            r[text] = r.get(text) or ""
        if not r.get("verdict"):
            r["verdict"] = "pass" if r["passed"] else "fail"
        rows.append(Row(**r))
    return rows
