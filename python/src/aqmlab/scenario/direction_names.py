"""The bottleneck's two directions in a user's words (issue 36). The core and the tables
name them by the dumbbell's geometry: `forward` is left → right, `reverse` right → left. Every
shipped scenario puts the clients (the home side) on the left, so what a user calls the
download — servers to clients — crosses `reverse`, and the upload `forward`. Where a user
reads or types a direction (run summary, report, CLI flags) it is download/upload; the
geometric names stay accepted, and stay the tables' values (so old results read the same)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqmlab.errors import ScenarioError

__all__ = ["ALIASES", "CAPTURE_POINTS", "canonical", "capture_point", "label", "rate_mbps"]

# A user's name -> the tables' name.
ALIASES = {"download": "reverse", "upload": "forward", "forward": "forward", "reverse": "reverse"}
_LABELS = {"forward": "upload (left → right)", "reverse": "download (right → left)"}
# `--pcap` points by a user's name: the bottleneck's egress or its queue's arrivals (`_in`).
CAPTURE_POINTS = {
    **ALIASES,
    **{f"{k}_in": f"{v}_in" for k, v in ALIASES.items()},
}


def canonical(name: str, where: str = "direction") -> str:
    """`download`/`upload` (or `reverse`/`forward`) -> the tables' name."""
    d = ALIASES.get(name.strip().lower())
    if d is None:
        raise ScenarioError(f"{where} = {name!r}: expected download, upload, forward or reverse")
    return d


def capture_point(name: str) -> str:
    """A `--pcap` point by a user's name (`download`, `upload_in`, …) -> the core's."""
    return CAPTURE_POINTS.get(name, name)


def label(direction: str) -> str:
    """How a direction reads in a summary or a report: `download (right → left)`."""
    return _LABELS.get(direction, direction)


def rate_mbps(topology: Mapping[str, Any], direction: str, at_s: float | None = None) -> float:
    """The bottleneck's rate in `direction` (`forward`/`reverse`, or a user's name), Mb/s: an
    asymmetric link's `bottleneck_reverse_mbps` for the reverse direction, and at `at_s` the
    capacity steps in force then (on an asymmetric link a step without `reverse_mbps` leaves
    the reverse rate as it was: docs/network.md)."""
    reverse = canonical(direction) == "reverse"
    forward_mbps = float(topology["bottleneck_mbps"])
    asymmetric = topology.get("bottleneck_reverse_mbps") is not None
    rate = float(topology["bottleneck_reverse_mbps"]) if asymmetric and reverse else forward_mbps
    if at_s is None:
        return rate
    for step in topology.get("bottleneck_steps") or []:
        if at_s < float(step["at_s"]):
            break
        if not reverse:
            rate = float(step["mbps"])
        elif step.get("reverse_mbps") is not None:
            rate = float(step["reverse_mbps"])
        elif not asymmetric:
            rate = float(step["mbps"])
    return rate
