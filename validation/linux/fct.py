"""Flow completion times of the short flows (workload.py), the same way on both sides.

A connection's FCT is the time from the client opening it (its SYN: the bed's `opened_s`,
aqmlab's `start_s`) to the client holding the response's last byte (the bed's `last_byte_s`,
aqmlab's `last_byte_s`): handshake, request and response. Counted: the connections opened in
[warm-up, end − TAIL_S), so that every counted one had time to finish; one that did not
finish by the end is counted as unfinished (both sides), not given an FCT.

Per response-size class (CLASSES, bytes): the count, the unfinished, and the FCT's median,
90th and 99th percentile (ms; numpy's linear interpolation between order statistics).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

# (name, smallest size, largest size + 1): 1 KB = 1000 bytes.
CLASSES = (("<10 KB", 0, 10_000), ("10-100 KB", 10_000, 100_000), (">100 KB", 100_000, 1 << 62))
TAIL_S = 5.0
QUANTILES = (("median", 50.0), ("p90", 90.0), ("p99", 99.0))


def size_class(response_bytes: int) -> str:
    for name, lo, hi in CLASSES:
        if lo <= response_bytes < hi:
            return name
    raise ValueError(f"response of {response_bytes} bytes: no class")


def table(opened_s, response_bytes, done_s, warmup: float, seconds: float) -> dict:
    """{class: {n, unfinished, median_ms, p90_ms, p99_ms}} and "all" for the connections
    opened in [warmup, seconds − TAIL_S); `done_s` NaN where the response never completed."""
    t = np.asarray(opened_s, dtype=float)
    size = np.asarray(response_bytes, dtype=np.int64)
    done = np.asarray(done_s, dtype=float)
    keep = (t >= warmup) & (t < seconds - TAIL_S)
    out = {}
    for name, lo, hi in (*CLASSES, ("all", 0, 1 << 62)):
        sel = keep & (size >= lo) & (size < hi)
        fct = (done[sel] - t[sel]) * 1000.0
        finished = fct[~np.isnan(fct)]
        row = {"n": int(sel.sum()), "unfinished": int(np.isnan(fct).sum())}
        for q, p in QUANTILES:
            row[f"{q}_ms"] = float(np.percentile(finished, p)) if len(finished) else math.nan
        out[name] = row
    return out


def linux(run_dir: Path, warmup: float, seconds: float) -> dict:
    """The bed's FCTs (fct.csv of agents.py web_fetch)."""
    f = pl.read_csv(run_dir / "fct.csv")
    return table(f["opened_s"], f["response_bytes"], f["last_byte_s"], warmup, seconds)


def aqmlab(conns: pl.DataFrame, source: int, warmup: float, seconds: float) -> dict:
    """aqmlab's FCTs: the `connections` rows of traffic entry `source` (the replay)."""
    c = conns.filter(pl.col("source") == source)
    done = c["last_byte_s"].cast(pl.Float64).fill_null(math.nan)
    return table(c["start_s"], c["response_bytes"], done, warmup, seconds)


def comparison_rows(config: str, lin: dict, ours: dict, model: str = "") -> list:
    """Informational rows of the comparison table (measure.Row): per class the counts and the
    FCT quantiles of both sides."""
    from validation.linux.measure import row

    out = []
    for cls in (*(c[0] for c in CLASSES), "all"):
        a, b = lin[cls], ours[cls]
        out.append(row(config, f"short flows {cls}: counted", a["n"], b["n"], kind="info",
                       model=model, note=f"opened in [warm-up, end − {TAIL_S:g} s)"))  # fmt: skip
        out.append(row(config, f"short flows {cls}: unfinished", a["unfinished"],
                       b["unfinished"], kind="info", model=model))  # fmt: skip
        for q, _ in QUANTILES:
            out.append(row(config, f"FCT {cls} {q} (ms)", a[f"{q}_ms"], b[f"{q}_ms"],
                           kind="info", model=model, note="SYN → last response byte"))  # fmt: skip
    return out


def summary(config: str, lin: dict, ours: dict, run: str = "") -> list[dict]:
    """One line per size class: counts and FCT quantiles, Linux / aqmlab (for fct.md)."""
    out = []
    for cls in (*(c[0] for c in CLASSES), "all"):
        a, b = lin[cls], ours[cls]
        line = {"config": config, "run": run, "class": cls,
                "counted (L / a)": f"{a['n']} / {b['n']}",
                "unfinished (L / a)": f"{a['unfinished']} / {b['unfinished']}"}  # fmt: skip
        for q, _ in QUANTILES:
            x, y = a[f"{q}_ms"], b[f"{q}_ms"]
            rel = f" ({(y - x) / x:+.0%})" if x and not (math.isnan(x) or math.isnan(y)) else ""
            line[f"{q} ms (L / a)"] = f"{x:.4g} / {y:.4g}{rel}"
        out.append(line)
    return out
