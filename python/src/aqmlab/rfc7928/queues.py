"""The schemes `aqmlab rfc7928` compares: `--aqm` names (each with optional parameters,
`codel:target_ms=5,interval_ms=100`) or the named queue tables of a `--queues` TOML file.
Every scheme becomes one value of the `aqm` axis of each section's sweep file, with that
section's buffer (its drop-tail entry's `limit`, RFC 7928 §3.2) unless it sets `limit`."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab import scenario as sc
from aqmlab.errors import ScenarioError

__all__ = ["DEFAULT_AQMS", "KINDS", "Scheme", "parse_aqm_list", "read_queue_file", "with_ecn"]

# Names accepted by --aqm -> the core's queue kind (docs/queues.md).
KINDS = {
    "droptail": "droptail",
    "drop-tail": "droptail",
    "fifo": "droptail",
    "red": "red",
    "ared": "ared",
    "pi": "pi",
    "rem": "rem",
    "pie": "pie",
    "pie_linux": "pie_linux",
    "red_linux": "red_linux",
    "codel": "codel",
    "fq_codel": "fq_codel",
    "fq-codel": "fq_codel",
    "fq_pie": "fq_pie",
    "fq-pie": "fq_pie",
    "cake": "cake",
    "dualpi2": "dualpi2",
}
# The issue's default set: drop-tail (RFC 7928 §4.3.1's baseline), RED, ARED, PIE, CoDel and
# FQ-CoDel, and DualPI2 (RFC 9332; with these classic senders it runs its PI2 classic queue).
DEFAULT_AQMS = "droptail,red,ared,pie,codel,fq_codel,dualpi2"
BASELINE = "droptail"

# How each kind turns ECN marking on (RFC 7928 §4.5; docs/queues.md). Drop-tail has none.
_ECN_ON: dict[str, Any] = {
    "red": "rfc3168",
    "ared": "rfc3168",
    "pi": True,
    "rem": True,
    "pie": True,
    "pie_linux": True,
    "red_linux": True,
    "codel": True,
    "fq_codel": True,
    "fq_pie": True,
}


# Kinds with tc's byte limits (`red_linux`: limit, min and max in bytes, avpkt required): the
# section's buffer counts full-size packets of this many bytes (the pack's 1500-byte MTU), and
# avpkt is tc-red(8)'s example value unless the scheme sets it.
_BYTE_LIMIT = {"red_linux": 1500}
_DEFAULTS: dict[str, dict[str, Any]] = {"red_linux": {"avpkt": 1000}}


@dataclass(frozen=True)
class Scheme:
    """One compared scheme: its label (the `aqm` axis label) and queue table."""

    label: str
    queue: Mapping[str, Any] = field(default_factory=dict)

    def table(self, buffer_packets: int | None) -> dict[str, Any]:
        """The queue table for a section whose buffer is `buffer_packets` (CAKE and DualPI2
        take `limit` too; a scheme's own `limit` wins)."""
        kind = str(self.queue.get("kind"))
        out = {**_DEFAULTS.get(kind, {}), **self.queue}
        if buffer_packets is not None and "limit" not in out:
            out["limit"] = buffer_packets * _BYTE_LIMIT.get(kind, 1)
        return out


def _value(text: str) -> Any:
    """A parameter value: TOML (numbers, booleans, quoted strings), else a bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _kind(name: str, where: str) -> str:
    kind = KINDS.get(name.strip().lower())
    if kind is None:
        raise ScenarioError(f"{where}: {name!r}: unknown queue, allowed: {', '.join(KINDS)}")
    return kind


def parse_aqm_list(text: str) -> list[Scheme]:
    """`--aqm` value: comma-separated schemes, each `NAME` or `NAME:key=value,...`; a
    parameter's keys follow its colon up to the next NAME (`codel:target_ms=5,interval_ms=100,
    pie`). Each queue table is checked by the core."""
    schemes: list[Scheme] = []
    current: dict[str, Any] | None = None
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            raise ScenarioError(f"--aqm {text!r}: empty entry, allowed: NAME[:key=value,...],...")
        if "=" in item and ":" not in item:
            if current is None:
                raise ScenarioError(f"--aqm {text!r}: {item!r}: a parameter before any queue name")
            key, _, value = item.partition("=")
            _set_param(current, key, value, text)
            continue
        name, _, param = item.partition(":")
        current = {"kind": _kind(name, f"--aqm {text!r}")}
        schemes.append(Scheme(name.strip().lower(), current))
        if param:
            if "=" not in param:
                raise ScenarioError(
                    f"--aqm {text!r}: {item!r}: expected NAME:key=value (e.g. codel:target_ms=5)"
                )
            key, _, value = param.partition("=")
            _set_param(current, key, value, text)
    return _unique([_labelled(s) for s in schemes], text)


def _set_param(queue: dict[str, Any], key: str, value: str, text: str) -> None:
    key = key.strip()
    if not key or not value.strip():
        raise ScenarioError(f"--aqm {text!r}: {key}={value}: expected key=value")
    if key == "kind":
        raise ScenarioError(f"--aqm {text!r}: kind: set by the queue's name")
    queue[key] = _value(value.strip())


def _labelled(s: Scheme) -> Scheme:
    """Label = the name, plus its parameters when it has any (`codel(target_ms=5)`)."""
    params = {k: v for k, v in s.queue.items() if k != "kind"}
    if not params:
        return Scheme(s.label, dict(s.queue))
    shown = ",".join(f"{k}={v}" for k, v in params.items())
    return Scheme(f"{s.label}({shown})", dict(s.queue))


def _unique(schemes: Sequence[Scheme], where: str) -> list[Scheme]:
    seen: set[str] = set()
    for s in schemes:
        if s.label in seen:
            raise ScenarioError(f"--aqm {where!r}: {s.label!r} is listed twice")
        seen.add(s.label)
    return list(schemes)


def read_queue_file(path: str | os.PathLike) -> list[Scheme]:
    """`--queues FILE.toml`: one table per scheme, its name the label:

    [codel-5ms]
    kind = "codel"
    target_ms = 5.0
    """
    p = Path(path)
    doc = sc.read_toml(p)
    if not doc:
        raise ScenarioError(f"--queues {p}: no queue tables (expected [NAME] tables with `kind`)")
    out = []
    for name, table in doc.items():
        if not isinstance(table, Mapping) or "kind" not in table:
            raise ScenarioError(f"--queues {p}: [{name}]: expected a table with `kind`")
        kind = _kind(str(table["kind"]), f"--queues {p}: [{name}].kind")
        out.append(Scheme(name, {**table, "kind": kind}))
    return _unique(out, str(p))


def with_ecn(queue: Mapping[str, Any]) -> dict[str, Any]:
    """The queue with its ECN marking on (RFC 7928 §4.5), unless it sets `ecn` itself.
    DualPI2 and CAKE mark ECT packets by design; drop-tail cannot."""
    out = dict(queue)
    on = _ECN_ON.get(str(out.get("kind")))
    if on is not None and "ecn" not in out:
        out["ecn"] = on
    return out
