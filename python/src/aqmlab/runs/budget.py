"""The resource guard: before a run starts, its cost as the core estimates it from the
scenario (`_core.estimate`: events, wall time, peak memory) is compared with a budget, and a
run beyond it is refused with the estimate and the way to raise the limit.

The memory budget is, in order: the `max_memory_gb` argument (CLI `--max-memory-gb`), the
environment variable `AQMLAB_MAX_MEMORY_GB` (inherited by sweep workers), or the memory the
machine has available now (`MemAvailable` of /proc/meminfo). Runs estimated to take more than
an hour of wall time are allowed, with a warning on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import aqmlab._core as _core
from aqmlab.errors import ScenarioError

ENV = "AQMLAB_MAX_MEMORY_GB"
WARN_WALL_S = 3600.0


def available_memory_bytes() -> float | None:
    """The memory the machine can give a new process now, or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def memory_budget(max_memory_gb: float | None = None) -> tuple[float | None, str]:
    """The budget in bytes (None: no limit known) and where it comes from, for messages."""
    if max_memory_gb is not None:
        return _positive_gb(max_memory_gb, "--max-memory-gb") * 1e9, "--max-memory-gb"
    env = os.environ.get(ENV)
    if env:
        try:
            gb = float(env)
        except ValueError:
            raise ScenarioError(f"{ENV} = {env!r}: expected a number of GB > 0") from None
        return _positive_gb(gb, ENV) * 1e9, f"{ENV} or --max-memory-gb"
    return available_memory_bytes(), "the machine's available memory"


def _positive_gb(gb: float, name: str) -> float:
    if not (gb > 0 and gb < float("inf")):
        raise ScenarioError(f"{name} = {gb}: expected a number of GB > 0")
    return gb


def _gb(b: float) -> str:
    return f"{b / 1e9:.3g} GB"


def check(
    scenario_json: str, max_memory_gb: float | None = None, chunk_s: float | None = None
) -> Mapping[str, Any]:
    """Refuses (ScenarioError) a run whose estimated peak memory exceeds the budget; warns on
    stderr above an hour of estimated wall time. `chunk_s`: the simulated time between two
    drains of the records (`--chunk-s`; default the core's assumption), whose records are
    held at once. Returns the estimate (its `peak_bytes` for that chunk)."""
    try:
        est = dict(_core.estimate(scenario_json))
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    if chunk_s is not None and chunk_s > est["chunk_s"]:
        extra = est["record_bytes_per_s"] * (chunk_s - est["chunk_s"])
        est["peak_bytes"] += extra
        est["rows_per_chunk"] *= chunk_s / est["chunk_s"]
    budget, source = memory_budget(max_memory_gb)
    peak = est["peak_bytes"]
    if budget is not None and peak > budget:
        raise ScenarioError(
            f"this run needs about {_gb(peak)} of memory (estimate: "
            f"{est['hosts']:.3g} hosts, "
            f"{est['connections_open']:.3g} connections open, {est['users']:.3g} users, "
            f"{est['packets_in_flight']:.3g} packets in flight, {est['rows_per_chunk']:.3g} "
            f"record rows per chunk), more than the budget of {_gb(budget)} ({source}); "
            f"reduce the scenario, or raise the budget with --max-memory-gb or {ENV}"
        )
    if est["wall_s"] > WARN_WALL_S:
        print(
            f"warning: this run is estimated to take about {est['wall_s'] / 3600:.3g} h "
            f"({est['events']:.3g} events)",
            file=sys.stderr,
        )
    return est
