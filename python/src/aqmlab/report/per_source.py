"""What each queue gives and costs each traffic source (issue 36): per cell and source, the
goodput its connections delivered after the warm-up and the queueing delay its packets met in
the direction that carries its data, as means over the repetitions. A queue that helps the
Web users may cost the bulk flows; this table shows both sides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from aqmlab.analysis.directions import studied_direction
from aqmlab.analysis.source_delays import class_delays

__all__ = ["per_source", "source_names"]


def source_names(scenario: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """Source index -> (its name in the table, the direction carrying its data)."""
    out = {}
    for i, entry in enumerate(scenario.get("traffic") or []):
        kind = str(entry.get("kind", "?"))
        out[i] = (f"traffic[{i}] {kind}", studied_direction({"traffic": [entry]}))
    return out


def per_source(study, axes: Sequence[str]) -> pl.DataFrame:
    """One row per cell (`axes` labels) and source: `source`, `runs`, `goodput (Mb/s)` (TCP
    bytes delivered in order after the warm-up over the measured time; blank without the
    connection table), `p50 delay (ms)`, `p99 delay (ms)` in the source's data direction."""
    runs = study.runs()
    if runs.height == 0:
        return pl.DataFrame()
    first = study.scenario(runs["run_id"][0])
    names = source_names(first)
    if len(names) < 2:
        return pl.DataFrame()  # one source: the summary already says it all
    measured = float(first.get("duration_s", 0)) - float(first.get("warmup_s", 0))
    keys = [*axes, "source"]
    parts = []
    try:
        conns = study.table("connections", ["source", "bytes_delivered_measured"])
    except KeyError:
        conns = None
    if conns is not None and measured > 0:
        per_run = conns.group_by(["run_id", *keys]).agg(
            (pl.col("bytes_delivered_measured").sum() * 8 / measured / 1e6).alias("goodput")
        )
        parts.append(per_run.group_by(keys).agg(pl.col("goodput").mean().alias("goodput (Mb/s)")))
    try:
        delays = study.table("source_delay")
    except KeyError:
        delays = None
    if delays is not None and delays.height:
        wanted = pl.DataFrame(
            {"source": list(names), "direction": [d for _, d in names.values()]},
            schema={"source": delays.schema["source"], "direction": pl.String},
        )
        own = delays.join(wanted, on=["source", "direction"])
        per_run = class_delays(own, ["run_id", *keys])
        if per_run.height:
            parts.append(
                per_run.group_by(keys).agg(
                    pl.col("p50 (ms)").mean().alias("p50 delay (ms)"),
                    pl.col("p99 (ms)").mean().alias("p99 delay (ms)"),
                )
            )
    if not parts:
        return pl.DataFrame()
    table = parts[0]
    for p in parts[1:]:
        table = table.join(p, on=keys, how="full", coalesce=True)
    counts = runs.group_by(list(axes)).agg(pl.len().alias("runs")) if axes else None
    if counts is not None:
        table = table.join(counts, on=list(axes), how="left")
    label = {i: n for i, (n, _) in names.items()}
    return table.with_columns(
        pl.col("source").map_elements(lambda s: label.get(int(s), str(s)), return_dtype=pl.String)
    ).sort(keys)
