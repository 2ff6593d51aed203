"""``--set key.path=value`` overrides: dotted key paths (``traffic[0].load`` or
``traffic.0.load``), values parsed as TOML (bare words as strings), applied to a scenario
document before it is resolved."""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Iterable
from typing import Any

from aqmlab.errors import ScenarioError, show_value

__all__ = ["apply_overrides", "parse_key_path", "set_value", "show_path"]


_SEGMENT = re.compile(r"([A-Za-z0-9_\-]+)((?:\[\d+\])*)")


def parse_key_path(key: str, where: str | None = None) -> list[str | int]:
    """``traffic[0].flows`` or ``traffic.0.flows`` → ["traffic", 0, "flows"]."""
    where = where or f"--set {key}"
    parts: list[str | int] = []
    if not key or key.startswith(".") or key.endswith(".") or ".." in key:
        raise ScenarioError(f"{where}: expected a dotted key path like topology.bottleneck_mbps")
    for piece in key.split("."):
        m = _SEGMENT.fullmatch(piece)
        if not m:
            raise ScenarioError(f"{where}: bad key segment {piece!r}")
        name, idx = m.groups()
        parts.append(int(name) if name.isdigit() else name)
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", idx))
    return parts


def _parse_value(text: str) -> Any:
    """A TOML value (``10``, ``1.5``, ``true``, ``"x"``, ``[1, 2]``, ``{a = 1}``); anything
    that is not TOML is taken as a bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def show_path(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else p
    return out


def apply_overrides(doc: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Applies ``key.path=value`` assignments to a copy of `doc`. Intermediate tables are
    created as needed; a key that the scenario format does not know is reported later, with
    its full path, by validation."""
    doc = copy.deepcopy(doc)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ScenarioError(f"--set {item}: expected key.path=value")
        set_value(doc, key, _parse_value(raw.strip()))
    return doc


def set_value(doc: dict[str, Any], key: str, value: Any, where: str | None = None) -> None:
    """Sets the dotted path `key` (``traffic.0.load`` or ``traffic[0].load``) of `doc` to
    `value`, in place, creating intermediate tables as needed. Errors name `where` (default
    ``--set KEY``); a key the scenario format does not know is left to validation."""
    where = where or f"--set {key}"
    parts = parse_key_path(key, where)
    node: Any = doc
    for i, part in enumerate(parts[:-1]):
        here = show_path(parts[: i + 1])
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ScenarioError(f"{where}: {show_path(parts[:i])} is not a list")
            if part >= len(node):
                raise ScenarioError(
                    f"{where}: {here} is out of range "
                    f"({show_path(parts[:i])} has {len(node)} entries)"
                )
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(f"{where}: {show_path(parts[:i])} is not a table")
            if part not in node:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
        if not isinstance(node, dict | list):
            raise ScenarioError(
                f"{where}: {here} = {show_value(node)} is a value, not a table or list"
            )
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ScenarioError(f"{where}: {show_path(parts)} is out of range")
        node[last] = copy.deepcopy(value)
    else:
        if not isinstance(node, dict):
            raise ScenarioError(f"{where}: {show_path(parts[:-1])} is not a table")
        node[last] = copy.deepcopy(value)
