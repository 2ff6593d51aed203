"""Load calibration of Web traffic sources, as scenarios read it (docs/analysis.md, "Load
calibration"): the calibration file, its keys, and a `load` turned into a population.

A calibration (made by `aqmlab.runs.calibrate`, which runs the source uncongested) gives a Web
source's offered load in Mb/s per unit of population (`users` of a `mah` entry, `rate` of a
`packmime` entry).

Scenarios may then give `load = 0.9` (a fraction of the bottleneck capacity) instead of the
population; `resolve_loads` replaces it by `load × capacity / slope` using the stored
calibration whose key matches the entry.

Each calibration also records the traffic the source puts on the *other* direction (its
requests and the ACKs of its responses) per unit of population. In two-way scenarios an entry
may give `load_basis = "two_way"`: its `load` then counts everything the `load` entries put on
its response direction, its own responses plus the requests and ACKs of the entries whose
clients sit on its server side (Le et al. 2003, section 3.2), and the populations come from a
small linear system (`resolve_loads`). The default basis, `"responses"`, counts the entry's own
response-direction traffic only.

Calibration files are JSON, keyed by `calibration_key`: a hash of the fields that determine
the load per unit of population (the traffic entry without its population, `[tcp]` with ECN
normalised to off, `[rtt]`, `[topology]` without the bottleneck capacity and the queue sizes;
an entry's own `tcp`, `rtt` and `hop` in place of the scenario's). The seed is not part of
the key. `aqmlab calibrate` writes `<scenario stem>.calibration.json` in the current
directory (or `--out FILE`); a `load` is looked up there, then beside the scenario (where a
study ships its own), and `aqmlab run --calibrate` keeps what it measures in the run's own
directory (`calibration.json`): nothing is written beside a scenario.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.errors import ScenarioError, make_dirs, os_problem, show_value
from aqmlab.scenario.direction_names import rate_mbps

__all__ = [
    "CAPACITY_FACTOR",
    "FORMAT",
    "POPULATION",
    "Calibration",
    "CalibrationMissing",
    "calibration_fields",
    "calibration_key",
    "default_path",
    "load_file",
    "missing",
    "needs_calibration",
    "resolve_loads",
    "response_direction",
    "save_file",
    "web_entries",
]

FORMAT = "aqmlab-calibration"
VERSION = 1
POPULATION = {"mah": "users", "browsers": "users", "unc": "users", "packmime": "rate"}
# Kinds whose population is a whole number of users.
USER_KINDS = ("mah", "browsers", "unc")
CAPACITY_FACTOR = 10.0
BIG_QUEUE = 100_000
MAX_LOAD = 1.1
# `load_basis` of a Web entry: its own response-direction traffic, or all the `load` entries'
# traffic on its response direction (two-way studies).
LOAD_BASES = ("responses", "two_way")
# Keys of a traffic entry that only the Python layer reads (removed before the core sees it).
LOAD_KEYS = ("load", "load_basis")
# Where a run keeps the calibrations it measured (`aqmlab run --calibrate`): in its own directory.
IN_RUN_FILE = "calibration.json"
# The core's per-source lists (`[[traffic]]` entries' own `tcp`, `rtt`, `hop`, moved there by
# `aqmlab.scenario.load`), and the field of the calibration key each replaces.
PER_SOURCE_KEYS = {"traffic_tcp": "tcp", "traffic_rtt": "rtt", "traffic_hop": "hop"}
# Topology keys left out of the key: the capacity that scenarios vary and queue sizes.
_TOPOLOGY_IGNORED = ("bottleneck_mbps", "bottleneck_reverse_mbps", "access_queue_packets")


# Defaults of the core (config.rs), so that writing a default out does not change the key.
_ENTRY_DEFAULTS = {
    "mah": {"client_side": "left", "max_parallel": 4, "start_spread_s": 10.0},
    "browsers": {
        "client_side": "left",
        "parallel": [2, 4],
        "persistent_share": 0.15,
        "start_spread_s": 10.0,
    },
    "packmime": {"client_side": "left", "http11": False, "packmime_rtt": False},
}
_ENTRY_DEFAULTS["unc"] = _ENTRY_DEFAULTS["browsers"]
# Keys added after calibrations were shipped: left out of the key when they hold their
# default, so that older calibration files keep matching the scenarios they were made for.
_ENTRY_NEUTRAL = {"response_end": "last_byte"}
_TOPOLOGY_NEUTRAL = {"bottleneck_framing": "none", "access_framing": "none"}
_TCP_NEUTRAL = {
    "delack_segments": 2,
    "fin_when_idle": False,
    "newreno_variant": "rfc6582",
    "exact_halving": False,
    "cwr_on_retransmit": False,
    "limited_transmit": False,
    "congestion_control": "reno",
    "hystart": True,
    "hystart_plus_plus": False,
    "slow_start_after_idle": False,
    "prr": False,
    "rack_tlp": False,
    "frto": False,
    "pacing": False,
    "accecn": False,
    "prague_rtt_scaling": True,
    "prague_rtt_target_ms": 25.0,
    "prague_rtt_transition": 4,
    "prague_version": "893e147",
}
_BOX_NEUTRAL = {"placement": "split", "tick_ms": 0.0}


class CalibrationMissing(ScenarioError):
    """A `load` was given but no stored calibration matches the traffic entry."""


# --- what a calibration is keyed on --------------------------------------------------------


def web_entries(scenario: Mapping[str, Any]) -> list[int]:
    """Indices of the `[[traffic]]` entries that are Web sources (mah, packmime)."""
    return [
        i
        for i, t in enumerate(scenario.get("traffic") or [])
        if isinstance(t, Mapping) and t.get("kind") in POPULATION
    ]


def response_direction(entry: Mapping[str, Any]) -> str:
    """Bottleneck direction of a Web source's responses: clients on the left (default) get
    them right → left, the `reverse` direction."""
    return "reverse" if entry.get("client_side", "left") == "left" else "forward"


def direction_capacity(topology: Mapping[str, Any], direction: str) -> float:
    """The bottleneck's rate in `direction` at the start (0 when the topology has none)."""
    if "bottleneck_mbps" not in topology:
        return 0.0
    return rate_mbps(topology, direction)


def calibration_fields(scenario: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The fields a calibration depends on, from a resolved scenario (TCP preset expanded,
    RTT file loaded)."""
    entry = {**_ENTRY_DEFAULTS.get(scenario["traffic"][index].get("kind"), {})}
    entry.update(scenario["traffic"][index])
    for k in ("users", "rate", *LOAD_KEYS):
        entry.pop(k, None)
    for k, neutral in _ENTRY_NEUTRAL.items():
        if entry.get(k) == neutral:
            entry.pop(k)
    topo = {
        k: v
        for k, v in (scenario.get("topology") or {}).items()
        if k not in _TOPOLOGY_IGNORED and _TOPOLOGY_NEUTRAL.get(k, object()) != v
    }
    own = own_per_source(scenario, index)
    tcp = {
        k: v
        for k, v in (own.get("tcp") or scenario.get("tcp") or {}).items()
        if _TCP_NEUTRAL.get(k, object()) != v
    }
    if tcp.get("ecn"):
        # The calibration network is drop-tail and never marks: ECN changes no packet, so an
        # ECN run gets the population of its non-ECN twin (and no calibration of its own).
        tcp["ecn"] = False
    fields = {
        "traffic": entry,
        "tcp": tcp,
        "rtt": own.get("rtt") or scenario.get("rtt") or {"kind": "none"},
        "topology": topo,
    }
    if "hop" in own:
        fields["hop"] = own["hop"]
    # The delay emulator shapes the traffic; absent (or at its defaults) it leaves the key of
    # the calibrations made before it existed.
    box = {k: v for k, v in (scenario.get("delay_box") or {}).items() if _BOX_NEUTRAL.get(k) != v}
    if box:
        fields["delay_box"] = box
    return fields


def own_per_source(scenario: Mapping[str, Any], index: int) -> dict[str, Any]:
    """Traffic entry `index`'s own TCP, RTT law and hop (`tcp`, `rtt`, `hop`), where it has
    them: a calibration depends on them, not on the other entries'."""
    own = {}
    for listed, name in PER_SOURCE_KEYS.items():
        values = scenario.get(listed) or []
        if index < len(values) and values[index] is not None:
            own[name] = values[index]
    return own


def with_placeholder_populations(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """A copy where each `load` is replaced by a population of 1, so that the core can check
    everything else before any calibration runs or is looked up."""
    s = copy.deepcopy(dict(scenario))
    for i in needs_calibration(s):
        entry = s["traffic"][i]
        pop = POPULATION.get(entry.get("kind"))
        if pop is not None:
            for k in LOAD_KEYS:
                entry.pop(k, None)
            entry.setdefault(pop, 1 if pop == "users" else 1.0)
    return s


def calibration_key(scenario: Mapping[str, Any], index: int) -> str:
    """SHA-256 (first 16 hex digits) of `calibration_fields` as canonical JSON."""
    text = json.dumps(calibration_fields(scenario, index), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_path(scenario_file: str | os.PathLike) -> Path:
    """`<dir>/<stem>.calibration.json` for `<dir>/<stem>.toml`: where a study ships its
    calibration (read only)."""
    p = Path(scenario_file)
    return p.with_name(f"{p.stem}.calibration.json")


def output_path(scenario_file: str | os.PathLike) -> Path:
    """`<stem>.calibration.json` in the current directory: where `aqmlab calibrate` writes."""
    return Path(f"{Path(scenario_file).stem}.calibration.json")


def lookup_path(scenario_file: str | os.PathLike) -> Path:
    """The calibration file a scenario's `load` entries are resolved with when none is given:
    `output_path` if it exists, else `default_path`."""
    mine = output_path(scenario_file)
    return mine if mine.is_file() else default_path(scenario_file)


@dataclass
class Calibration:
    """One traffic entry's calibration (one entry of the JSON file)."""

    key: str
    kind: str
    population: str
    direction: str
    slope_mbps: float
    r2: float
    intercept_fit: dict[str, float]
    points: list[dict[str, float]]
    capacity_mbps: float
    calibration_bottleneck_mbps: float
    duration_s: float
    warmup_s: float
    seed: int
    traffic_index: int
    scenario_file: str | None = None
    created: str = ""
    aqmlab: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    # Mb/s per unit of population on the other direction (requests, ACKs); None in files
    # written before it was measured.
    other_slope_mbps: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def population_for(self, load: float, two_way: bool = False) -> float:
        """Users (or connections per second) offering `load` × the capacity on the response
        direction: counting this entry's responses alone, or (`two_way`) also the requests and
        ACKs that an equal population on the other side puts there (Study B's definition)."""
        other = (self.other_slope_mbps or 0.0) if two_way else 0.0
        per_unit = self.slope_mbps + other
        return load * self.capacity_mbps / per_unit if per_unit > 0 else math.nan

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Calibration:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


# --- the file ------------------------------------------------------------------------------


# The JSON types of an entry's fields (`Calibration`), checked when a file is read: a file
# of another shape is one line naming the file and the field, not a traceback later on.
_NUMBER = ((int, float), "a number")
_STRING = ((str,), "a string")
_INTEGER = ((int,), "an integer")
_OBJECT = ((dict,), "an object")
_ENTRY_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "key": _STRING,
    "kind": _STRING,
    "population": _STRING,
    "direction": _STRING,
    "slope_mbps": _NUMBER,
    "r2": _NUMBER,
    "intercept_fit": _OBJECT,
    "points": ((list,), "a list"),
    "capacity_mbps": _NUMBER,
    "calibration_bottleneck_mbps": _NUMBER,
    "duration_s": _NUMBER,
    "warmup_s": _NUMBER,
    "seed": _INTEGER,
    "traffic_index": _INTEGER,
}
_OPTIONAL_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "scenario_file": ((str, type(None)), "a string or null"),
    "created": _STRING,
    "aqmlab": _STRING,
    "fields": _OBJECT,
    "other_slope_mbps": ((int, float, type(None)), "a number or null"),
}
_SHAPE = f'a JSON object {{"format": "{FORMAT}", "entries": {{KEY: calibration, ...}}}}'


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), "null")


def _check_entry(p: Path, i: int, key: str, entry: Any) -> None:
    # A key as calibration_key writes it is shown; another one (the file's content, of any
    # length) is not: the entry's position says which.
    where = f'{p}: entries."{key}"' if re.fullmatch(r"[0-9a-f]{16}", key) else f"{p}: entry {i + 1}"
    if not isinstance(entry, dict):
        raise ScenarioError(f"{where}: expected an object (a calibration), got {_json_type(entry)}")
    for name, (types, wanted) in (*_ENTRY_TYPES.items(), *_OPTIONAL_TYPES.items()):
        if name not in entry:
            if name in _ENTRY_TYPES:
                raise ScenarioError(f"{where}: missing {name}; calibrate again")
            continue
        value = entry[name]
        if isinstance(value, bool) or not isinstance(value, types):
            raise ScenarioError(f"{where}.{name}: expected {wanted}, got {_json_type(value)}")


def load_file(path: str | os.PathLike) -> dict[str, Calibration]:
    """The calibrations stored in `path` by key ({} when the file does not exist). A file
    that cannot be read, is not JSON or has another shape is a one-line `ScenarioError`
    naming the file (and the line or the field, never the content)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ScenarioError(f"{p}: cannot read the calibration file ({os_problem(e, p)})") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not a calibration file (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(
            f"{p}: line {e.lineno}: not valid JSON (a calibration file is {_SHAPE})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ScenarioError(f"{p}: not an aqmlab calibration file (expected {_SHAPE})")
    entries = doc.get("entries", {})
    if not isinstance(entries, dict):
        raise ScenarioError(
            f"{p}: entries: expected an object {{KEY: calibration, ...}}, got {_json_type(entries)}"
        )
    for i, (k, v) in enumerate(entries.items()):
        _check_entry(p, i, k, v)
    return {k: Calibration.from_json(v) for k, v in entries.items()}


def save_file(path: str | os.PathLike, calibrations: Iterable[Calibration]) -> Path:
    """Adds (or replaces, by key) `calibrations` in the file at `path`, atomically."""
    p = Path(path)
    entries = {k: v.to_json() for k, v in load_file(p).items()}
    for c in calibrations:
        entries[c.key] = c.to_json()
    doc = {"format": FORMAT, "version": VERSION, "entries": entries}
    make_dirs(p.parent, f"{p}")
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(p)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise ScenarioError(
            f"{p}: cannot write the calibration file ({os_problem(e, p)})"
        ) from None
    return p


# --- load → population ---------------------------------------------------------------------


def needs_calibration(scenario: Mapping[str, Any]) -> list[int]:
    """Indices of the traffic entries that give a `load`."""
    return [
        i
        for i, t in enumerate(scenario.get("traffic") or [])
        if isinstance(t, Mapping) and "load" in t
    ]


def stored_in(
    source: str | os.PathLike | Mapping[str, Calibration] | None,
) -> dict[str, Calibration]:
    """The calibrations of a file (none if it does not exist), or of a mapping kept in memory."""
    if source is None:
        return {}
    if isinstance(source, Mapping):
        return dict(source)
    return load_file(source)


def missing(
    scenario: Mapping[str, Any], path: str | os.PathLike | Mapping[str, Calibration] | None
) -> list[int]:
    """The `load` entries with no matching calibration in `path`."""
    have = stored_in(path)
    return [i for i in needs_calibration(scenario) if calibration_key(scenario, i) not in have]


def resolve_loads(
    scenario: dict[str, Any],
    path: str | os.PathLike | Mapping[str, Calibration] | None,
    shown: str | None = None,
) -> list[dict[str, Any]]:
    """Replaces, in place, every traffic entry's `load` by its population (`users`, rounded
    and at least 1, or `rate`) = load × bottleneck capacity / calibrated slope. Returns what
    was used, one dict per entry (for summary.json). Raises `CalibrationMissing` when an
    entry has no calibration in `path`.

    With `load_basis = "two_way"` an entry's load also counts the other-direction traffic
    (slope `other_slope_mbps`) of the `load` entries whose responses go the other way; the
    populations then solve `a_e·n_e + Σ b_g·n_g = load_e × capacity` (at most one such entry
    per direction)."""
    for i, t in enumerate(scenario.get("traffic") or []):
        if isinstance(t, Mapping) and "load_basis" in t and "load" not in t:
            raise ScenarioError(f"traffic[{i}].load_basis: only with traffic[{i}].load")
    todo = needs_calibration(scenario)
    if not todo:
        return []
    stored = stored_in(path)
    if isinstance(path, Mapping):
        shown, path = shown or IN_RUN_FILE, IN_RUN_FILE
    found = {i: _entry_calibration(scenario, i, stored, path, shown) for i in todo}
    pops = _populations(scenario, found)
    used = []
    for i in todo:
        entry = scenario["traffic"][i]
        c, basis = found[i]
        kind = entry["kind"]
        pop_key = POPULATION[kind]
        value: float = max(1, round(pops[i])) if kind in USER_KINDS else pops[i]
        load = entry.pop("load")
        entry.pop("load_basis", None)
        entry[pop_key] = value
        info = {
            "traffic_index": i,
            "load": load,
            pop_key: value,
            "key": c.key,
            "slope_mbps": c.slope_mbps,
            "r2": c.r2,
            "file": str(path),
        }
        if basis != LOAD_BASES[0]:
            info["load_basis"] = basis
            info["other_slope_mbps"] = c.other_slope_mbps
        used.append(info)
    return used


def _entry_calibration(
    scenario: Mapping[str, Any],
    i: int,
    stored: Mapping[str, Calibration],
    path: str | os.PathLike | None,
    shown: str | None,
) -> tuple[Calibration, str]:
    """Checks `load` entry `i` and returns its calibration and load basis."""
    entry = scenario["traffic"][i]
    where = f"traffic[{i}].load"
    load = entry.get("load")
    kind = entry.get("kind")
    if kind not in POPULATION:
        raise ScenarioError(
            f"{where}: `load` is only allowed in {', '.join(POPULATION)} entries, not {kind!r}"
        )
    if isinstance(load, bool) or not isinstance(load, int | float) or not 0 < load <= 10:
        raise ScenarioError(
            f"{where} = {show_value(load)}: "
            "expected a fraction of the bottleneck capacity in (0, 10]"
        )
    basis = entry.get("load_basis", LOAD_BASES[0])
    if basis not in LOAD_BASES:
        raise ScenarioError(
            f"traffic[{i}].load_basis = {show_value(basis)}: expected "
            + " or ".join(f'"{b}"' for b in LOAD_BASES)
        )
    pop_key = POPULATION[kind]
    if pop_key in entry:
        raise ScenarioError(
            f"{where}: give either traffic[{i}].load or traffic[{i}].{pop_key}, not both"
        )
    key = calibration_key(scenario, i)
    c = stored.get(key)
    if c is None:
        name = shown or (str(path) if path is not None else "(no calibration file)")
        raise CalibrationMissing(
            f"{where} = {show_value(load)}: no calibration for this {kind} entry "
            f"(key {key}) in {name}; run `aqmlab calibrate SCENARIO` first, "
            "or `aqmlab run --calibrate`"
        )
    if not c.slope_mbps > 0 or not math.isfinite(c.slope_mbps):
        raise ScenarioError(f"{where}: calibration {key} has a bad slope {c.slope_mbps}")
    return c, basis


def _populations(
    scenario: Mapping[str, Any],
    found: Mapping[int, tuple[Calibration, str]],
) -> dict[int, float]:
    """Unrounded population of every `load` entry (see `resolve_loads`): a load is a fraction
    of the capacity of the direction its responses cross."""
    traffic = scenario["traffic"]
    direction = {i: response_direction(traffic[i]) for i in found}
    topology = scenario.get("topology") or {}
    target = {
        i: float(traffic[i]["load"]) * direction_capacity(topology, direction[i]) for i in found
    }
    pops = {i: target[i] / c.slope_mbps for i, (c, b) in found.items() if b == LOAD_BASES[0]}
    two_way = [i for i, (_c, b) in found.items() if b != LOAD_BASES[0]]
    for d in ("forward", "reverse"):
        same = [i for i in two_way if direction[i] == d]
        if len(same) > 1:
            raise ScenarioError(
                f'traffic[{same[1]}].load_basis = "two_way": at most one two-way `load` entry '
                f"per direction (traffic[{same[0]}] also has its responses on {d})"
            )

    def other_slope(g: int, e: int) -> float:
        b = found[g][0].other_slope_mbps
        if b is None or not math.isfinite(b) or b < 0:
            raise ScenarioError(
                f'traffic[{e}].load_basis = "two_way": the calibration of traffic[{g}] '
                f"({found[g][0].key}) has no other-direction slope; calibrate it again"
            )
        return b

    # Right-hand sides once the responses-basis entries (already known) are subtracted.
    rhs = {
        e: target[e]
        - sum(other_slope(g, e) * pops[g] for g in pops if direction[g] != direction[e])
        for e in two_way
    }
    a = {e: found[e][0].slope_mbps for e in two_way}
    if len(two_way) == 1:
        (e,) = two_way
        pops[e] = rhs[e] / a[e]
    elif len(two_way) == 2:
        e, f = two_way
        be, bf = other_slope(e, f), other_slope(f, e)
        det = a[e] * a[f] - be * bf
        if not det > 0:
            raise ScenarioError(
                f"traffic[{e}].load_basis: the calibrations of traffic[{e}] and traffic[{f}] "
                "leave no positive solution (other-direction traffic exceeds the responses)"
            )
        pops[e] = (rhs[e] * a[f] - bf * rhs[f]) / det
        pops[f] = (a[e] * rhs[f] - be * rhs[e]) / det
    for e in two_way:
        if not pops[e] > 0:
            raise ScenarioError(
                f"traffic[{e}].load = {show_value(traffic[e]['load'])}: "
                "the other-direction traffic of the opposite `load` entries alone exceeds it "
                '(load_basis = "two_way")'
            )
    return pops
