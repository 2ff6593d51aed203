"""Which bottleneck direction a scenario's results are read in: the one that carries its Web
responses (or its first source's data). Shared by the run metrics (`aqmlab.analysis.metrics`)
and the traffic-mix metrics (`aqmlab.analysis.mixes`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from aqmlab.analysis.kinds import WEB_KINDS


def studied_direction(scenario: Mapping[str, Any]) -> str:
    """`"reverse"` (right → left) when the first Web source (else the first source) has its
    clients on the left (the default), `"forward"` when they are on the right: the direction
    that carries the responses. Downloads travel server → client; an `upload` bulk source's
    data go the other way."""
    traffic = list(scenario.get("traffic") or [])
    web = [t for t in traffic if t.get("kind") in WEB_KINDS]
    entry = (web or traffic or [{}])[0]
    left = entry.get("client_side", "left") == "left"
    if entry.get("direction") == "upload":
        left = not left
    return "reverse" if left else "forward"


def first_hop(table: pl.DataFrame) -> pl.DataFrame:
    """A per-link table (`bottleneck`, `queue`, `queue_delay`, `source_delay`) at hop 0 only:
    a chain of bottlenecks gives them a `hop` column with rows for every hop (docs/network.md,
    "Chains of bottlenecks"); the dumbbell's have none and are returned as they are. The
    single-run plots and exports show the bottleneck, hop 0."""
    return table.filter(pl.col("hop") == 0) if "hop" in table.columns else table
