"""``--set key.path=value`` overrides: dotted key paths (``traffic[0].load`` or
``traffic.0.load``), values parsed as TOML (bare words as strings), applied to a scenario
document before it is resolved.

Switching the `kind` of a table (``--set queue.kind=fq_codel``) gives the new kind its own
defaults: the keys of the previous kind go, except those the new kind requires and keys named
by the same command (those stay, and validation reports them if the new kind refuses them).
Which keys a kind takes and requires is asked of the core's own deserialiser (`kind_keys`,
`_required_keys`), so the lists never drift from what validation accepts.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import aqmlab._core as _core
from aqmlab.errors import ScenarioError, show_value
from aqmlab.scenario.calibration import LOAD_KEYS, POPULATION

__all__ = [
    "apply_overrides",
    "assign",
    "kind_keys",
    "parse_key_path",
    "parse_override",
    "set_value",
    "show_path",
]

KeyPath = list[str | int]


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


def parse_override(item: str) -> tuple[str, Any]:
    """``key.path=value`` → (key, value parsed as TOML); a malformed item or path is a
    `ScenarioError` naming it."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep:
        raise ScenarioError(f"--set {item}: expected key.path=value")
    parse_key_path(key)
    return key, _parse_value(raw.strip())


def toml_value(v: Any, where: str) -> str:
    """A Python value as TOML text (an inline value), for `override_list`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x, where) for x in v) + "]"
    if isinstance(v, Mapping):
        items = (f"{json.dumps(str(k))} = {toml_value(x, where)}" for k, x in v.items())
        return "{" + ", ".join(items) + "}"
    raise ScenarioError(
        f"{where} = {v!r}: expected a number, string, boolean, list or table (a dict)"
    )


def override_list(overrides: Iterable[str] | Mapping[str, Any] | str) -> list[str]:
    """Overrides as the command line gives them (``["key.path=value", ...]``), from that or
    from a dict ``{"key.path": value}`` of Python values (the Python API takes both); a
    single string is one override."""
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [f"{k}={toml_value(v, f'overrides[{k!r}]')}" for k, v in overrides.items()]
    return list(overrides)


def apply_overrides(
    doc: dict[str, Any], overrides: Iterable[str] | Mapping[str, Any] | str
) -> dict[str, Any]:
    """Applies ``key.path=value`` assignments (or a dict of them, `override_list`) to a copy
    of `doc` (see `assign`). Intermediate tables are created as needed; a key that the
    scenario format does not know is reported later, with its full path, by validation."""
    doc = copy.deepcopy(doc)
    assign(doc, [(*parse_override(item), None) for item in override_list(overrides)])
    return doc


def set_value(doc: dict[str, Any], key: str, value: Any, where: str | None = None) -> None:
    """Sets the dotted path `key` (``traffic.0.load`` or ``traffic[0].load``) of `doc` to
    `value`, in place, creating intermediate tables as needed. Errors name `where` (default
    ``--set KEY``); a key the scenario format does not know is left to validation."""
    where = where or f"--set {key}"
    _set(doc, parse_key_path(key, where), value, where)


_MISSING = object()


def _get(doc: Any, parts: Sequence[str | int]) -> Any:
    node = doc
    for part in parts:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return _MISSING
            node = node[part]
        else:
            if not isinstance(node, dict) or part not in node:
                return _MISSING
            node = node[part]
    return node


def assign(
    doc: dict[str, Any],
    assignments: Iterable[tuple[str, Any, str | None]],
    typed: Iterable[str] = (),
) -> None:
    """Sets each ``(key, value, where)`` of `assignments`, in order and in place (errors name
    `where`, default ``--set KEY``). Then each table whose `kind` they changed keeps only the
    keys its new kind requires and the keys named by a path among the assignments or in
    `typed` (paths set earlier by the same command): a key the user typed is never dropped,
    and validation reports it if the new kind refuses it (`_drop_other_kinds_keys`)."""
    named: list[KeyPath] = [parse_key_path(k, f"--set {k}") for k in typed]
    within: list[KeyPath] = []  # keys typed inside a table assigned whole
    switched: list[KeyPath] = []
    for key, value, where in assignments:
        where = where or f"--set {key}"
        parts = parse_key_path(key, where)
        before = _get(doc, parts) if parts[-1] == "kind" else _MISSING
        _set(doc, parts, value, where)
        named.append(parts)
        within.extend(_paths_within(parts, value))
        if before is not _MISSING and before != value:
            switched.append(parts[:-1])
    for table in switched:
        _drop_other_kinds_keys(doc, table, named, within)


def _paths_within(parts: KeyPath, value: Any) -> list[KeyPath]:
    """For a table assigned whole, the path of every key typed inside it."""
    out: list[KeyPath] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            out += [[*parts, k], *_paths_within([*parts, k], v)]
    return out


def _drop_other_kinds_keys(
    doc: dict[str, Any], table: KeyPath, named: list[KeyPath], within: list[KeyPath]
) -> None:
    """After a table's `kind` switched: the new kind gets its own defaults (FQ-CoDel its
    10,240-packet limit, not drop-tail's 100). Kept are the keys named by the same command
    (`--set queue.limit=…`; inside a table assigned whole, those the new kind takes) and the
    keys the new kind requires (it has no default for them) that the old table had; every
    other key of the old kind goes."""
    node = _get(doc, table)
    if not isinstance(node, dict) or not isinstance(node.get("kind"), str):
        return
    accepted = kind_keys(table, node["kind"], doc)
    if accepted is None:
        return  # an unknown kind: validation lists the kinds
    n = len(table)
    keep = {p[n] for p in named if len(p) > n and p[:n] == table}
    keep |= {p[n] for p in within if len(p) > n and p[:n] == table} & accepted
    keep |= _required_keys(table, node, accepted & set(node), doc)
    for k in [k for k in node if k != "kind" and k not in keep]:
        del node[k]


def _required_keys(
    table: KeyPath, node: Mapping[str, Any], candidates: set[str], doc: Any
) -> set[str]:
    """Those of `candidates` (keys the table has and its kind takes) that the kind requires:
    the core, given the table without one of them, names it as missing."""
    required = set()
    for k in sorted(candidates):
        without = {"kind": node["kind"], **{c: node[c] for c in candidates if c != k}}
        if _missing_key(table, without, doc) == k:
            required.add(k)
    return required


def _missing_key(table: KeyPath, node: Mapping[str, Any], doc: Any) -> str | None:
    """The key the core reports missing first in `node` (at path `table`), if any."""
    probe, shown = _probe_document(table, dict(node), doc)
    try:
        _core.validate_scenario(json.dumps(probe))
    except ValueError as e:
        m = re.match(re.escape(shown) + r"\.([A-Za-z0-9_]+): missing \(required\)", str(e))
        return m.group(1) if m else None
    return None


# Keys that the Python layer resolves before the core sees the scenario, by table and kind
# (list indices shown as [0]).
_RESOLVED_HERE: dict[tuple[str, str], frozenset[str]] = {
    **{("traffic[0]", kind): frozenset(LOAD_KEYS) for kind in POPULATION},
    ("rtt", "empirical"): frozenset({"file"}),
    ("traffic[0].size", "empirical"): frozenset({"file"}),
    ("traffic[0]", "replay"): frozenset({"file"}),
}
# A key no table has: the core's "unknown field" error for it lists the keys the table takes.
_PROBE = "__probe__"


def kind_keys(table: Sequence[str | int], kind: str, doc: Any = None) -> frozenset[str] | None:
    """The keys (besides `kind`) that the table at path `table` takes when its kind is `kind`,
    as the core's deserialiser lists them, plus those the Python layer resolves (a Web
    source's `load`, an empirical law's `file`); None when the core does not know the kind.
    `doc` gives the kinds of the enclosing tables (an ftp source's `size` is read by the
    source's kind)."""
    # The smallest document holding the table: the core reads it up to the probe key and
    # names the keys allowed there.
    probe, shown = _probe_document(table, {_PROBE: 0, "kind": kind}, doc)
    core = _core_kind_keys(json.dumps(probe), shown)
    if core is None:
        return None
    return core | _RESOLVED_HERE.get((shown, kind), frozenset())


def _probe_document(table: KeyPath, node: Any, doc: Any) -> tuple[Any, str]:
    """The smallest scenario document holding `node` at path `table` (with the kinds of the
    enclosing tables from `doc`: an ftp source's `size` is read by the source's kind), and
    the table's path as the core's errors show it."""
    probe = node
    for i in range(len(table) - 1, -1, -1):
        if isinstance(table[i], int):
            probe = [probe]
            continue
        probe = {table[i]: probe}
        outer = _get(doc, table[:i]) if doc is not None and i > 0 else None
        if isinstance(outer, dict) and isinstance(outer.get("kind"), str):
            probe["kind"] = outer["kind"]
    return probe, show_path([0 if isinstance(p, int) else p for p in table])


@functools.lru_cache(maxsize=256)
def _core_kind_keys(probe: str, shown: str) -> frozenset[str] | None:
    try:
        _core.validate_scenario(probe)
    except ValueError as e:
        msg = str(e)
    else:  # pragma: no cover - a probe is never a whole scenario
        return None
    allowed = msg.removeprefix(f"{shown}.{_PROBE}: unknown field, ")
    if allowed != msg:
        return frozenset(re.findall(r"`([^`]+)`", allowed))
    if msg.startswith(shown.split(".")[0].split("[")[0]):
        return None  # the kind (or an enclosing table's) is refused
    # The table was read without complaint and the core went on to the scenario's own
    # missing keys: a kind without parameters (`rtt.kind = "none"`).
    return frozenset()


def _set(doc: dict[str, Any], parts: KeyPath, value: Any, where: str) -> None:
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
