"""Packet captures of a run (`[[trace.pcap]]`): the pcap bytes the core encodes are appended
to their files chunk by chunk (memory stays flat however long the run), in the run's
temporary directory like its tables; without an output directory they are kept in memory.

Before the run, `check_room` compares the core's upper-side estimate of what the traces
will write with the free space where they go, and refuses a run that cannot fit.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from aqmlab.errors import ScenarioError, os_problem


def _mb(b: float) -> str:
    return f"{b / 1e6:.3g} MB"


def describe(estimate_bytes: float) -> str:
    """The notice printed before a traced run starts."""
    return f"traces: about {_mb(estimate_bytes)} at most (estimated from the scenario)"


def check_room(estimate_bytes: float, directory: Path | None) -> None:
    """Refuses a run whose traces (estimated) exceed the free space of `directory`."""
    if directory is None or estimate_bytes <= 0:
        return
    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        return
    if estimate_bytes > free:
        raise ScenarioError(
            f"trace: the traces would write up to {_mb(estimate_bytes)}, more than the "
            f"{_mb(free)} free in {directory}; narrow them (trace.pcap[].sample, "
            "connections, hosts, start_s/end_s, snaplen; trace.tcp.sample or interval_ms)"
        )


class CaptureFiles:
    """Appends drained pcap bytes to `directory/<file>` (or keeps them, without one)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.sizes: dict[str, int] = {}
        self.memory: dict[str, bytearray] = {}

    def add(self, parts: Iterable[tuple[str, bytes]]) -> None:
        for name, data in parts:
            self.sizes[name] = self.sizes.get(name, 0) + len(data)
            if self.directory is None:
                self.memory.setdefault(name, bytearray()).extend(data)
                continue
            if not data:
                continue
            try:
                with open(self.directory / name, "ab") as f:
                    f.write(data)
            except OSError as e:
                raise ScenarioError(f"trace.pcap: cannot write {name} ({os_problem(e)})") from None
