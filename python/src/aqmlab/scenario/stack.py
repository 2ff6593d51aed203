"""Which TCP stack and queue ran, in the words a user gave them: a resolved `[tcp]` table
(the preset expanded into every parameter, `aqmlab.scenario.load`) named by the preset it
matches best and the keys that differ from it, and a queue by its kind and the keys it set.
Every run summary and report says this (issue 36), also for results written before the
preset's name was kept anywhere: it is read back from the resolved parameters alone."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import aqmlab._core as _core

__all__ = ["describe_queue", "describe_stack", "describe_stacks", "ecn_note"]


@functools.lru_cache(maxsize=1)
def _presets() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((n, dict(_core.tcp_preset(n))) for n in _core.tcp_presets())


def _show(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, float) else f"{v:g}"


def describe_stack(tcp: Mapping[str, Any]) -> str:
    """`linux-cubic`, or `freebsd-4.x with rwnd = 65535, ecn = true`: the preset with the
    fewest differing parameters, then those parameters."""
    best: tuple[int, str, list[str]] | None = None
    for name, table in _presets():
        diff = [k for k in tcp if table.get(k, object()) != tcp[k]]
        if best is None or len(diff) < best[0]:
            best = (len(diff), name, diff)
    if best is None:
        return "TCP (no presets known)"
    _, name, diff = best
    if not diff:
        return name
    return f"{name} with " + ", ".join(f"{k} = {_show(tcp[k])}" for k in diff)


def describe_stacks(scenario: Mapping[str, Any]) -> list[str]:
    """The stacks of a resolved scenario: `[tcp]`'s for the sources without their own, then
    each source's own (`traffic[i]: ...`)."""
    own = scenario.get("traffic_tcp") or []
    traffic = scenario.get("traffic") or []
    lines = []
    if any(i >= len(own) or own[i] is None for i in range(len(traffic))):
        lines.append(describe_stack(scenario.get("tcp") or {}))
    for i, t in enumerate(own):
        if t is not None:
            lines.append(f"traffic[{i}]: {describe_stack(t)}")
    return lines


def describe_queue(queue: Mapping[str, Any]) -> str:
    """`fq_codel`, or `red (limit = 100, ecn = "rfc3168")`: the kind and the keys set."""
    kind = str(queue.get("kind", "?"))
    keys = [f"{k} = {_show(v)}" for k, v in queue.items() if k != "kind"]
    return f"{kind} ({', '.join(keys)})" if keys else kind


def _marks(queue: Mapping[str, Any]) -> bool:
    """Whether a queue marks ECN-capable packets instead of dropping them: DualPI2 always
    (RFC 9332), the others when their `ecn` key says so (RED: a policy other than "off")."""
    if queue.get("kind") == "dualpi2":
        return True
    ecn = queue.get("ecn", False)
    return ecn not in (False, "off", None)


def ecn_note(scenario: Mapping[str, Any]) -> str | None:
    """A line when a queue that marks ran with senders that never negotiate ECN: its marks
    are drops for them (DualPI2 then runs as a plain PI2 on its classic queue)."""
    queues = [q for q in (scenario.get("queue"), scenario.get("queue_reverse")) if q]
    marking = [q for q in queues if _marks(q)]
    if not marking:
        return None
    stacks = [scenario.get("tcp") or {}] + [t for t in scenario.get("traffic_tcp") or [] if t]
    if any(t.get("ecn") for t in stacks):
        return None
    kinds = sorted({str(q.get("kind")) for q in marking})
    extra = " (DualPI2 runs as a plain PI2 on its classic queue)" if "dualpi2" in kinds else ""
    return (
        f"{', '.join(kinds)} marks ECN-capable packets, but no sender here uses ECN "
        f"(tcp.ecn = false): it drops instead{extra}"
    )
