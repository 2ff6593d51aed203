"""Load calibration of Web traffic sources (docs/analysis.md, "Load calibration").

A Web source's population (`users` of a `mah` entry, `rate` of a `packmime` entry) is turned
into an offered load by measuring: the scenario is run with only that source active, on an
uncongested copy of its network (bottleneck capacity × 10, large drop-tail queues), at several
populations; the throughput of the source's response direction after the warm-up is the
offered load, and a least-squares line through the origin gives Mb/s per unit of population.

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

Calibration files are JSON (`<scenario stem>.calibration.json` beside the scenario by
default), keyed by `calibration_key`: a hash of the fields that determine the load per unit of
population (the traffic entry without its population, `[tcp]` with ECN normalised to off,
`[rtt]`, `[topology]` without the bottleneck capacity and the queue sizes). The seed is not
part of the key.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aqmlab import scenario as sc
from aqmlab.errors import make_dirs, os_problem

__all__ = [
    "CAPACITY_FACTOR",
    "FORMAT",
    "POPULATION",
    "Calibration",
    "CalibrationMissing",
    "calibrate",
    "calibration_fields",
    "calibration_key",
    "default_path",
    "fit_intercept",
    "fit_through_origin",
    "load_file",
    "needs_calibration",
    "resolve_loads",
    "response_direction",
    "target_populations",
    "uncongested",
    "web_entries",
]

FORMAT = "aqmlab-calibration"
VERSION = 1
POPULATION = {"mah": "users", "browsers": "users", "unc": "users", "packmime": "rate"}
# Kinds whose population is a whole number of users.
USER_KINDS = ("mah", "browsers", "unc")
CAPACITY_FACTOR = 10.0
BIG_QUEUE = 100_000
DEFAULT_PILOT = {"mah": 10, "browsers": 10, "unc": 10, "packmime": 10.0}
MAX_LOAD = 1.1
# The pilot population grows × 10 (at most PILOT_TRIES runs) until it offers at least this
# fraction of the capacity.
PILOT_MIN_FRACTION = 0.01
PILOT_TRIES = 4
# `load_basis` of a Web entry: its own response-direction traffic, or all the `load` entries'
# traffic on its response direction (two-way studies).
LOAD_BASES = ("responses", "two_way")
# Keys of a traffic entry that only the Python layer reads (removed before the core sees it).
LOAD_KEYS = ("load", "load_basis")
# Topology keys left out of the key: the capacity that scenarios vary and queue sizes.
_TOPOLOGY_IGNORED = ("bottleneck_mbps", "access_queue_packets")


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
}
_BOX_NEUTRAL = {"placement": "split", "tick_ms": 0.0}


class CalibrationMissing(sc.ScenarioError):
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
    tcp = {
        k: v for k, v in (scenario.get("tcp") or {}).items() if _TCP_NEUTRAL.get(k, object()) != v
    }
    if tcp.get("ecn"):
        # The calibration network is drop-tail and never marks: ECN changes no packet, so an
        # ECN run gets the population of its non-ECN twin (and no calibration of its own).
        tcp["ecn"] = False
    fields = {
        "traffic": entry,
        "tcp": tcp,
        "rtt": scenario.get("rtt") or {"kind": "none"},
        "topology": topo,
    }
    # The delay emulator shapes the traffic; absent (or at its defaults) it leaves the key of
    # the calibrations made before it existed.
    box = {k: v for k, v in (scenario.get("delay_box") or {}).items() if _BOX_NEUTRAL.get(k) != v}
    if box:
        fields["delay_box"] = box
    return fields


def calibration_key(scenario: Mapping[str, Any], index: int) -> str:
    """SHA-256 (first 16 hex digits) of `calibration_fields` as canonical JSON."""
    text = json.dumps(calibration_fields(scenario, index), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_path(scenario_file: str | os.PathLike) -> Path:
    """`<dir>/<stem>.calibration.json` for `<dir>/<stem>.toml`."""
    p = Path(scenario_file)
    return p.with_name(f"{p.stem}.calibration.json")


# --- fits ----------------------------------------------------------------------------------


def _r2(y: Sequence[float], pred: Sequence[float]) -> float:
    mean = sum(y) / len(y)
    ss_tot = sum((v - mean) ** 2 for v in y)
    ss_res = sum((v - p) ** 2 for v, p in zip(y, pred, strict=True))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


def fit_through_origin(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least squares y = slope·x: slope = Σxy / Σx². Returns (slope, R²), R² = 1 − SS_res /
    SS_tot with SS_tot about the mean of y (the usual, stricter, centred R²)."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError("need at least 2 (population, load) points")
    sxx = sum(v * v for v in x)
    if sxx <= 0:
        raise ValueError("all populations are zero")
    slope = sum(a * b for a, b in zip(x, y, strict=True)) / sxx
    return slope, _r2(y, [slope * v for v in x])


def fit_intercept(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Ordinary least squares y = slope·x + intercept. Returns (slope, intercept, R²)."""
    n = len(x)
    if n != len(y) or n < 2:
        raise ValueError("need at least 2 (population, load) points")
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((v - mx) ** 2 for v in x)
    if sxx <= 0:
        raise ValueError("need at least 2 distinct populations")
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
    icpt = my - slope * mx
    return slope, icpt, _r2(y, [slope * v + icpt for v in x])


# --- the calibration runs ------------------------------------------------------------------


def uncongested(
    scenario: Mapping[str, Any],
    index: int,
    population: float,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    factor: float = CAPACITY_FACTOR,
) -> dict[str, Any]:
    """The scenario with only traffic entry `index` (at `population`), the bottleneck
    `factor` times faster, drop-tail queues of 100 000 packets both ways and no exchange
    limit: everything else (TCP, RTTs, access links, seed) unchanged."""
    s = copy.deepcopy(dict(scenario))
    entry = dict(s["traffic"][index])
    kind = entry["kind"]
    for k in LOAD_KEYS:
        entry.pop(k, None)
    entry[POPULATION[kind]] = round(population) if kind in USER_KINDS else float(population)
    s["traffic"] = [entry]
    topo = dict(s["topology"])
    topo["bottleneck_mbps"] = float(topo["bottleneck_mbps"]) * factor
    topo["access_queue_packets"] = max(int(topo.get("access_queue_packets", 0)), BIG_QUEUE)
    s["topology"] = topo
    s["queue"] = {"kind": "droptail", "limit": BIG_QUEUE}
    s.pop("queue_reverse", None)
    s.pop("max_exchanges", None)
    if duration_s is not None:
        s["duration_s"] = float(duration_s)
    if warmup_s is not None:
        s["warmup_s"] = float(warmup_s)
    if s.get("warmup_s", 0) >= s["duration_s"]:
        s["warmup_s"] = s["duration_s"] / 5
    measure = dict(s.get("measure") or {})
    measure["connections"] = False
    s["measure"] = measure
    return s


def measure_load(scenario: Mapping[str, Any], direction: str) -> tuple[float, float]:
    """Runs `scenario` in memory; returns (throughput Mb/s, utilization) of `direction` after
    the warm-up. (Top level so that worker processes can run it.)"""
    return measure_loads(scenario, direction)[:2]


def measure_loads(scenario: Mapping[str, Any], direction: str) -> tuple[float, float, float]:
    """`measure_load`, plus the throughput (Mb/s) of the other direction."""
    from aqmlab import runner

    res = runner.run(scenario)
    core = res.summary.get("summary") or {}
    block = core.get(direction) or {}
    other = core.get(_OTHER[direction]) or {}
    return (
        float(block.get("throughput_mbps", 0.0)),
        float(block.get("utilization", 0.0)),
        float(other.get("throughput_mbps", 0.0)),
    )


_OTHER = {"forward": "reverse", "reverse": "forward"}


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


def target_populations(
    kind: str, slope_guess: float, capacity_mbps: float, points: int, max_load: float = MAX_LOAD
) -> list[float]:
    """`points` populations whose loads, at `slope_guess` Mb/s per unit, are evenly spread up
    to `max_load` × capacity (users rounded, at least 1 and distinct)."""
    if points < 2:
        raise ValueError(f"points = {points}: expected at least 2")
    if not slope_guess > 0:
        raise ValueError("the pilot run measured no load")
    out: list[float] = []
    for i in range(1, points + 1):
        p = max_load * capacity_mbps * i / points / slope_guess
        if kind in USER_KINDS:
            p = max(round(p), (int(out[-1]) + 1) if out else 1)
        out.append(p)
    return out


def _run_all(jobs: list[dict[str, Any]], direction: str, workers: int) -> list[tuple]:
    if workers <= 1 or len(jobs) <= 1:
        return [measure_loads(j, direction) for j in jobs]
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as ex:
        return list(ex.map(measure_loads, jobs, [direction] * len(jobs)))


def calibrate_entry(
    scenario: Mapping[str, Any],
    index: int,
    points: int = 5,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    workers: int = 2,
    scenario_file: str | None = None,
    log: Callable[[str], None] | None = None,
) -> Calibration:
    """Calibrates traffic entry `index` of a resolved scenario (see the module doc). A pilot
    run at the entry's own population (else 10 users / 10 connections/s; × 10 until it
    offers 1 % of the capacity) sets the populations of the `points` runs, which span loads up to
    1.1 × the real bottleneck capacity; the pilot is a point of the fit too."""
    entry = scenario["traffic"][index]
    kind = entry["kind"]
    pop_key = POPULATION[kind]
    direction = response_direction(entry)
    capacity = float(scenario["topology"]["bottleneck_mbps"])
    say = log or (lambda _m: None)

    def job(p: float) -> dict[str, Any]:
        return uncongested(scenario, index, p, duration_s, warmup_s)

    pilot = float(entry.get(pop_key) or DEFAULT_PILOT[kind])
    results: list[tuple[float, float, float, float]] = []
    for attempt in range(PILOT_TRIES):
        load, util, other = measure_loads(job(pilot), direction)
        say(f"traffic[{index}] {kind}: pilot {pop_key} = {pilot:g}: {load:.4g} Mb/s")
        # A pilot that carries almost nothing (a few pages of a few users) gives a slope
        # guess off by orders of magnitude, and the points would miss the load range.
        if load >= PILOT_MIN_FRACTION * capacity or (load > 0 and attempt == PILOT_TRIES - 1):
            results.append((pilot, load, util, other))
            break
        pilot *= 10
    if not results:
        raise RuntimeError(f"traffic[{index}]: the pilot runs measured no load in {direction}")
    pops = target_populations(kind, results[0][1] / results[0][0], capacity, points)
    measured = _run_all([job(p) for p in pops], direction, workers)
    for p, (load, util, other) in zip(pops, measured, strict=True):
        say(f"traffic[{index}] {kind}: {pop_key} = {p:g}: {load:.4g} Mb/s")
        results.append((float(p), load, util, other))
    results.sort()
    xs, ys = [r[0] for r in results], [r[1] for r in results]
    slope, r2 = fit_through_origin(xs, ys)
    other_slope, _ = fit_through_origin(xs, [r[3] for r in results])
    s2, icpt, r2i = fit_intercept(xs, ys)
    ref = uncongested(scenario, index, pops[0], duration_s, warmup_s)
    from aqmlab import __version__

    return Calibration(
        key=calibration_key(scenario, index),
        kind=kind,
        population=pop_key,
        direction=direction,
        slope_mbps=slope,
        r2=r2,
        intercept_fit={"slope_mbps": s2, "intercept_mbps": icpt, "r2": r2i},
        points=[
            {
                "population": p,
                "load_mbps": y,
                "load_fraction": y / capacity,
                "utilization": u,
                "other_load_mbps": o,
            }
            for p, y, u, o in results
        ],
        capacity_mbps=capacity,
        calibration_bottleneck_mbps=ref["topology"]["bottleneck_mbps"],
        duration_s=ref["duration_s"],
        warmup_s=ref["warmup_s"],
        seed=int(scenario.get("seed", sc.DEFAULT_SEED)),
        traffic_index=index,
        scenario_file=scenario_file,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        aqmlab=__version__,
        fields=calibration_fields(scenario, index),
        other_slope_mbps=other_slope,
    )


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
        raise sc.ScenarioError(
            f"{where}: expected an object (a calibration), got {_json_type(entry)}"
        )
    for name, (types, wanted) in (*_ENTRY_TYPES.items(), *_OPTIONAL_TYPES.items()):
        if name not in entry:
            if name in _ENTRY_TYPES:
                raise sc.ScenarioError(f"{where}: missing {name}; calibrate again")
            continue
        value = entry[name]
        if isinstance(value, bool) or not isinstance(value, types):
            raise sc.ScenarioError(f"{where}.{name}: expected {wanted}, got {_json_type(value)}")


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
        raise sc.ScenarioError(
            f"{p}: cannot read the calibration file ({os_problem(e, p)})"
        ) from None
    except UnicodeDecodeError:
        raise sc.ScenarioError(f"{p}: not a calibration file (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise sc.ScenarioError(
            f"{p}: line {e.lineno}: not valid JSON (a calibration file is {_SHAPE})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise sc.ScenarioError(f"{p}: not an aqmlab calibration file (expected {_SHAPE})")
    entries = doc.get("entries", {})
    if not isinstance(entries, dict):
        raise sc.ScenarioError(
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
        raise sc.ScenarioError(
            f"{p}: cannot write the calibration file ({os_problem(e, p)})"
        ) from None
    return p


def calibrate(
    scenario: str | os.PathLike | Mapping[str, Any],
    points: int = 5,
    duration_s: float | None = None,
    warmup_s: float | None = None,
    out: str | os.PathLike | None = None,
    *,
    overrides: Iterable[str] = (),
    seed: int | None = None,
    workers: int = 2,
    only: Iterable[int] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[Path | None, list[Calibration]]:
    """Calibrates every Web traffic entry of a scenario (or the entries in `only`) and stores
    the results in `out` (default: `default_path(scenario file)`; a scenario given as a dict
    without `out` stores nothing). Returns (file, calibrations)."""
    if isinstance(scenario, str | os.PathLike):
        source: str | None = os.fspath(scenario)
        resolved = sc.load(scenario, overrides=overrides, seed=seed, loads=False)
    else:
        source = None
        resolved = sc.resolve(scenario, overrides=overrides, seed=seed, loads=False)
    indices = web_entries(resolved) if only is None else list(only)
    if not indices:
        raise sc.ScenarioError("traffic: no mah or packmime entry to calibrate")
    done = [
        calibrate_entry(resolved, i, points, duration_s, warmup_s, workers, source, log)
        for i in indices
    ]
    path = Path(out) if out is not None else (default_path(source) if source else None)
    if path is not None:
        save_file(path, done)
    return path, done


# --- load → population ---------------------------------------------------------------------


def needs_calibration(scenario: Mapping[str, Any]) -> list[int]:
    """Indices of the traffic entries that give a `load`."""
    return [
        i
        for i, t in enumerate(scenario.get("traffic") or [])
        if isinstance(t, Mapping) and "load" in t
    ]


def missing(scenario: Mapping[str, Any], path: str | os.PathLike | None) -> list[int]:
    """The `load` entries with no matching calibration in `path`."""
    have = load_file(path) if path is not None else {}
    return [i for i in needs_calibration(scenario) if calibration_key(scenario, i) not in have]


def resolve_loads(
    scenario: dict[str, Any], path: str | os.PathLike | None, shown: str | None = None
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
            raise sc.ScenarioError(f"traffic[{i}].load_basis: only with traffic[{i}].load")
    todo = needs_calibration(scenario)
    if not todo:
        return []
    stored = load_file(path) if path is not None else {}
    capacity = float((scenario.get("topology") or {}).get("bottleneck_mbps") or 0)
    found = {i: _entry_calibration(scenario, i, stored, path, shown) for i in todo}
    pops = _populations(scenario, found, capacity)
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
        raise sc.ScenarioError(
            f"{where}: `load` is only allowed in {', '.join(POPULATION)} entries, not {kind!r}"
        )
    if isinstance(load, bool) or not isinstance(load, int | float) or not 0 < load <= 10:
        raise sc.ScenarioError(
            f"{where} = {sc._fmt(load)}: expected a fraction of the bottleneck capacity in (0, 10]"
        )
    basis = entry.get("load_basis", LOAD_BASES[0])
    if basis not in LOAD_BASES:
        raise sc.ScenarioError(
            f"traffic[{i}].load_basis = {sc._fmt(basis)}: expected "
            + " or ".join(f'"{b}"' for b in LOAD_BASES)
        )
    pop_key = POPULATION[kind]
    if pop_key in entry:
        raise sc.ScenarioError(
            f"{where}: give either traffic[{i}].load or traffic[{i}].{pop_key}, not both"
        )
    key = calibration_key(scenario, i)
    c = stored.get(key)
    if c is None:
        name = shown or (str(path) if path is not None else "(no calibration file)")
        raise CalibrationMissing(
            f"{where} = {sc._fmt(load)}: no calibration for this {kind} entry "
            f"(key {key}) in {name}; run `aqmlab calibrate SCENARIO` first, "
            "or `aqmlab run --calibrate`"
        )
    if not c.slope_mbps > 0 or not math.isfinite(c.slope_mbps):
        raise sc.ScenarioError(f"{where}: calibration {key} has a bad slope {c.slope_mbps}")
    return c, basis


def _populations(
    scenario: Mapping[str, Any],
    found: Mapping[int, tuple[Calibration, str]],
    capacity: float,
) -> dict[int, float]:
    """Unrounded population of every `load` entry (see `resolve_loads`)."""
    traffic = scenario["traffic"]
    direction = {i: response_direction(traffic[i]) for i in found}
    target = {i: float(traffic[i]["load"]) * capacity for i in found}
    pops = {i: target[i] / c.slope_mbps for i, (c, b) in found.items() if b == LOAD_BASES[0]}
    two_way = [i for i, (_c, b) in found.items() if b != LOAD_BASES[0]]
    for d in ("forward", "reverse"):
        same = [i for i in two_way if direction[i] == d]
        if len(same) > 1:
            raise sc.ScenarioError(
                f'traffic[{same[1]}].load_basis = "two_way": at most one two-way `load` entry '
                f"per direction (traffic[{same[0]}] also has its responses on {d})"
            )

    def other_slope(g: int, e: int) -> float:
        b = found[g][0].other_slope_mbps
        if b is None or not math.isfinite(b) or b < 0:
            raise sc.ScenarioError(
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
            raise sc.ScenarioError(
                f"traffic[{e}].load_basis: the calibrations of traffic[{e}] and traffic[{f}] "
                "leave no positive solution (other-direction traffic exceeds the responses)"
            )
        pops[e] = (rhs[e] * a[f] - bf * rhs[f]) / det
        pops[f] = (a[e] * rhs[f] - be * rhs[e]) / det
    for e in two_way:
        if not pops[e] > 0:
            raise sc.ScenarioError(
                f"traffic[{e}].load = {sc._fmt(traffic[e]['load'])}: the other-direction traffic "
                'of the opposite `load` entries alone exceeds it (load_basis = "two_way")'
            )
    return pops
