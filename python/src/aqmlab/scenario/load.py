"""Scenario files: TOML in, the core's JSON out.

The user writes TOML (documented in docs/scenario.md). This module

- reads it (`load`), or takes an already parsed document (`resolve`);
- fills the sections it omits with the defaults (`with_defaults`): a minimal scenario is
  ``duration_s`` alone, the quickstart's network and traffic;
- applies ``--set key.path=value`` overrides (`aqmlab.scenario.overrides`);
- expands ``[tcp] preset = "..."`` into every TCP parameter, then applies the other ``[tcp]``
  keys on top;
- loads an empirical RTT distribution from ``[rtt] file = "..."`` (relative to the scenario
  file) into ``points``, and a replay source's connections file into ``connections``;
- fills ``seed`` (argument, else the file's, else 1);
- and checks the result with the core (`validate`), which reports the first bad field.

Every problem raises `ScenarioError` with one line: the field, the value and what is allowed.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import aqmlab._core as _core
import aqmlab.scenario.calibration as cal
import aqmlab.scenario.replay_file as replay_file
import aqmlab.scenario.unc_model as unc_model
from aqmlab.errors import ScenarioError, os_problem, show_value
from aqmlab.scenario.files import take_file
from aqmlab.scenario.overrides import apply_overrides, show_path

# The stack a user of today has (issue 36): Linux's default, CUBIC with IW 10, SACK, RACK-TLP
# and PRR (docs/tcp.md); ECN as Linux offers it by default (tcp_ecn = 2: accepted, never
# asked for), i.e. off for the connections aqmlab opens. Historic studies and every shipped
# scenario name their preset, so nothing of theirs changes.
DEFAULT_PRESET = "linux-cubic"
DEFAULT_SEED = 1
# What a scenario that omits them gets (docs/scenario.md, "A minimal scenario"): the
# quickstart's dumbbell, drop-tail queue and greedy transfers. Only keys the core requires
# are filled; the core's own defaults (loss_rate, framing, unit, ...) stay implicit, so a
# scenario that gives these sections resolves exactly as it did before they had defaults.
DEFAULT_TOPOLOGY = {
    "bottleneck_mbps": 10.0,
    "bottleneck_delay_ms": 1.0,
    "access_mbps": 100.0,
    "access_delay_ms": 1.0,
    "access_queue_packets": 10000,
    "left_hosts": 8,
    "right_hosts": 8,
}
DEFAULT_QUEUE = {"kind": "droptail", "limit": 100}
DEFAULT_TRAFFIC = [{"kind": "bulk", "flows": 40, "start_jitter_s": 1.0}]
# Former preset names, still accepted with a warning, and the names they stand for.
DEPRECATED_PRESETS = {"ns2-fulltcp": "ns2-weigle2005"}

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_QUEUE",
    "DEFAULT_SEED",
    "DEFAULT_TOPOLOGY",
    "DEFAULT_TRAFFIC",
    "PYTHON_MEASURE_KEY",
    "check_python_keys",
    "load",
    "load_cdf",
    "load_rtt_cdf",
    "load_with_calibration",
    "read_toml",
    "resolve",
    "resolve_with_calibration",
    "to_json",
    "validate",
    "with_defaults",
]


# --- reading -------------------------------------------------------------------------------


def _read_text(p: Path, what: str, missing: str) -> str:
    """Reads a UTF-8 file; failures are a one-line `ScenarioError` starting with `what`
    (the problem in words, and for bad bytes their line, never the file's content)."""
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{what}: {missing}") from None
    except OSError as e:
        shown = "" if what == str(p) else f" {p}"
        raise ScenarioError(f"{what}: cannot read{shown} ({os_problem(e, p)})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ScenarioError(f"{what}: line {line}: not UTF-8 text") from None


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parses a TOML file; a missing or malformed file is a `ScenarioError`."""
    text = _read_text(Path(path), str(path), "no such scenario file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: invalid TOML: {e}") from None


def load(
    path: str | Path,
    overrides: Iterable[str] = (),
    seed: int | None = None,
    *,
    calibration: str | Path | Mapping[str, cal.Calibration] | None = None,
    loads: bool = True,
) -> dict[str, Any]:
    """Reads and resolves a scenario file (see the module doc). A traffic `load` is resolved
    with `calibration` (default: `<stem>.calibration.json` in the current directory, else
    beside the file: `calibration.lookup_path`)."""
    return load_with_calibration(path, overrides, seed, calibration=calibration, loads=loads)[0]


def load_with_calibration(
    path: str | Path,
    overrides: Iterable[str] = (),
    seed: int | None = None,
    *,
    calibration: str | Path | Mapping[str, cal.Calibration] | None = None,
    loads: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`load`, also returning the calibrations used to resolve `load` entries."""
    doc = read_toml(path)
    if calibration is None:
        calibration = cal.lookup_path(path)
    return resolve_with_calibration(
        doc,
        overrides=overrides,
        seed=seed,
        base_dir=Path(path).resolve().parent,
        calibration=calibration,
        loads=loads,
    )


# --- empirical RTT -------------------------------------------------------------------------


def load_rtt_cdf(path: str | Path, shown: str | None = None) -> list[tuple[float, float]]:
    """Reads an empirical RTT CDF: two columns ``rtt_ms, cdf`` separated by a comma, a
    semicolon or blanks; an optional header line; ``#`` starts a comment."""
    return load_cdf(path, f"rtt.file = {show_value(shown or str(path))}", "rtt_ms")


def load_cdf(path: str | Path, field: str, value: str) -> list[tuple[float, float]]:
    """Reads a two-column CDF file (``value, cdf``; see `load_rtt_cdf`); errors start with
    `field` and name the columns by `value`."""
    p = Path(path)
    text = _read_text(p, field, f"file not found (looked for {p})")
    points: list[tuple[float, float]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cells = [c for c in re.split(r"[,;\s]+", line) if c]
        # Errors name the line, never its text: the file is the user's data, and a stray
        # binary or huge line would make the message unreadable.
        try:
            if len(cells) != 2:
                raise ValueError
            rtt, cdf = float(cells[0]), float(cells[1])
        except ValueError:
            if not points and lineno == _first_content_line(text):
                continue  # a header such as "rtt_ms,cdf"
            n = len(cells)
            got = f"{n} field{'' if n == 1 else 's'}" if n != 2 else "a value that is not a number"
            raise ScenarioError(
                f"{field}: line {lineno}: expected two numbers ({value}, cdf), found {got}"
            ) from None
        if not (math.isfinite(rtt) and math.isfinite(cdf)):
            raise ScenarioError(
                f"{field}: line {lineno}: expected two finite numbers ({value}, cdf)"
            )
        points.append((rtt, cdf))
    if len(points) < 2:
        raise ScenarioError(
            f"{field}: expected at least 2 ({value}, cdf) rows, found {len(points)}"
        )
    return points


def _first_content_line(text: str) -> int:
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.split("#", 1)[0].strip():
            return lineno
    return 0


# --- resolution ----------------------------------------------------------------------------


def with_defaults(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `doc` with the sections it omits filled: `topology` (each of its required
    keys it lacks), `queue` and `traffic` (when absent) get `DEFAULT_TOPOLOGY`,
    `DEFAULT_QUEUE` and `DEFAULT_TRAFFIC`. The seed and `[tcp]` are filled later (`resolve`);
    every other section has the core's default. Values that are not tables are left for
    validation to report."""
    out = dict(doc)
    topology = out.get("topology", {})
    if isinstance(topology, Mapping):
        missing = {k: v for k, v in DEFAULT_TOPOLOGY.items() if k not in topology}
        if missing:
            out["topology"] = {**topology, **missing}
    out.setdefault("queue", copy.deepcopy(DEFAULT_QUEUE))
    out.setdefault("traffic", copy.deepcopy(DEFAULT_TRAFFIC))
    return out


def _resolve_tcp(doc: dict[str, Any]) -> None:
    doc["tcp"] = _tcp_table(doc.get("tcp", {}), "tcp")


def _tcp_table(tcp: Any, where: str) -> dict[str, Any]:
    """A `[tcp]`-style table (or, for a traffic source, a bare preset name) with its
    `preset` expanded into every TCP parameter and its other keys applied on top."""
    if isinstance(tcp, str) and where != "tcp":
        tcp = {"preset": tcp}
    if not isinstance(tcp, dict):
        expected = "a table" if where == "tcp" else "a preset name or a table"
        raise ScenarioError(f"{where} = {show_value(tcp)}: expected {expected}")
    tcp = dict(tcp)
    name = tcp.pop("preset", DEFAULT_PRESET)
    if not isinstance(name, str):
        raise ScenarioError(
            f"{where}.preset = {show_value(name)}: expected one of {', '.join(_core.tcp_presets())}"
        )
    if name in DEPRECATED_PRESETS:
        warnings.warn(
            f"{where}.preset = {show_value(name)} is the former name of "
            f"{show_value(DEPRECATED_PRESETS[name])} "
            "(Weigle et al. 2005's ns-2 settings); ns-2.35's own defaults are "
            '"ns2.35-fulltcp"',
            FutureWarning,
            stacklevel=3,
        )
    try:
        base = _core.tcp_preset(name)
    except ValueError as e:
        raise ScenarioError(str(e).replace("tcp.preset", f"{where}.preset", 1)) from None
    base.update(tcp)
    return base


def _resolve_rtt(doc: dict[str, Any], base_dir: Path) -> None:
    if "rtt" in doc:
        doc["rtt"] = _rtt_table(doc["rtt"], "rtt", base_dir)


def _rtt_table(rtt: Any, where: str, base_dir: Path) -> Any:
    """An `[rtt]`-style table with an empirical law's `file` read into its `points`."""
    if not isinstance(rtt, dict) or rtt.get("kind") != "empirical" or "file" not in rtt:
        return rtt
    rtt = dict(rtt)
    file, p = take_file(
        rtt,
        f"{where}.file",
        "a (rtt_ms, cdf) file",
        "points",
        f"give either {where}.file or {where}.points, not both",
        base_dir,
    )
    rtt["points"] = [list(pt) for pt in load_rtt_cdf(p, shown=file)]
    rtt.setdefault("source", file)
    return rtt


def _resolve_traffic_classes(doc: dict[str, Any], base_dir: Path) -> None:
    """`[[traffic]] tcp = ...`, `rtt = ...` and `hop = ...`: a source's own TCP (a preset
    name, or a table like `[tcp]`), RTT law (a table like `[rtt]`) and, in a chain of
    bottlenecks, the one hop it crosses (its hosts are that hop's cross hosts), moved into the
    core's per-source lists `traffic_tcp`, `traffic_rtt` and `traffic_hop` (absent when no
    source has its own; the core checks the values)."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list):
        return
    for key, resolve_one in (
        ("tcp", lambda v, w: _tcp_table(v, w)),
        ("rtt", lambda v, w: _rtt_table(v, w, base_dir)),
        ("hop", lambda v, w: v),
    ):
        listed = f"traffic_{key}"
        per_source = list(doc.get(listed) or [])
        for i, entry in enumerate(traffic):
            if not isinstance(entry, dict) or key not in entry:
                continue
            entry = dict(entry)
            value = entry.pop(key)
            traffic[i] = entry
            per_source.extend([None] * (i + 1 - len(per_source)))
            per_source[i] = resolve_one(value, f"traffic[{i}].{key}")
        if per_source:
            doc[listed] = per_source


def _resolve_file_sizes(doc: dict[str, Any], base_dir: Path) -> None:
    """An ftp source's ``size = {kind = "empirical", file = "sizes.csv"}``: the (bytes, cdf)
    points are read from the file (relative to the scenario file)."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list):
        return
    for i, entry in enumerate(traffic):
        law = entry.get("size") if isinstance(entry, dict) else None
        if not isinstance(law, dict) or law.get("kind") != "empirical" or "file" not in law:
            continue
        law = dict(law)
        where = f"traffic[{i}].size.file"
        file, p = take_file(
            law,
            where,
            "a (bytes, cdf) file",
            "points",
            "give either file or points, not both",
            base_dir,
        )
        law["points"] = [list(pt) for pt in load_cdf(p, f"{where} = {show_value(file)}", "bytes")]
        law.setdefault("source", file)
        traffic[i] = {**entry, "size": law}


def _check_finite(value: Any, path: list[str | int]) -> None:
    """JSON has no NaN or infinity (TOML has); dates have no JSON form either."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{show_path(path)} = {value}: expected a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, [*path, k])
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, [*path, i])
    elif not isinstance(value, str | int | float | bool | type(None)):
        raise ScenarioError(
            f"{show_path(path)} = {value}: expected a number, string, boolean, table or list"
        )


def resolve(
    doc: Mapping[str, Any],
    overrides: Iterable[str] = (),
    seed: int | None = None,
    base_dir: str | Path | None = None,
    *,
    calibration: str | Path | Mapping[str, cal.Calibration] | None = None,
    loads: bool = True,
) -> dict[str, Any]:
    """Turns a parsed scenario document into the core's scenario (a plain dict).

    A traffic entry's `load` is replaced by its population from the calibration file
    `calibration` (see aqmlab.scenario.calibration); `loads=False` leaves `load` keys as they are.
    Resolving an already resolved scenario gives it back unchanged.
    """
    return resolve_with_calibration(
        doc, overrides, seed, base_dir, calibration=calibration, loads=loads
    )[0]


def resolve_with_calibration(
    doc: Mapping[str, Any],
    overrides: Iterable[str] = (),
    seed: int | None = None,
    base_dir: str | Path | None = None,
    *,
    calibration: str | Path | Mapping[str, cal.Calibration] | None = None,
    loads: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`resolve`, also returning the calibrations used (one dict per `load` entry)."""
    if not isinstance(doc, Mapping):
        raise ScenarioError(f"scenario: expected a table, got {type(doc).__name__}")
    out = apply_overrides(with_defaults(doc), overrides)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ScenarioError(f"seed = {show_value(seed)}: expected an integer in 0..2^64")
        out["seed"] = seed
    out.setdefault("seed", DEFAULT_SEED)
    _resolve_tcp(out)
    _resolve_rtt(out, base)
    _resolve_traffic_classes(out, base)
    _resolve_file_sizes(out, base)
    replay_file.resolve_entries(out, base)
    unc_model.resolve_entries(out, base)
    _check_finite(out, [])
    used: list[dict[str, Any]] = []
    if loads:
        if cal.needs_calibration(out):
            # Every field is checked before `load` is turned into a population, so that a
            # mistake names the key the user wrote (not a missing calibration or a derived
            # population).
            validate(cal.with_placeholder_populations(out))
        used = cal.resolve_loads(out, calibration)
    return out, used


# `[measure] columns = { TABLE = [COLUMN, ...] }`: the columns of a record table that a run
# keeps on disk (the runner drops the others as it writes). Read by the runner only: the core
# builds every column, so outcomes and speed do not depend on it.
PYTHON_MEASURE_KEY = "columns"


def to_json(scenario: Mapping[str, Any]) -> str:
    """The core's input (without the keys only Python reads). Keys keep their order, so equal
    scenarios give equal JSON."""
    measure = scenario.get("measure")
    if isinstance(measure, Mapping) and PYTHON_MEASURE_KEY in measure:
        kept = {k: v for k, v in measure.items() if k != PYTHON_MEASURE_KEY}
        scenario = {**scenario, "measure": kept}
    return json.dumps(scenario, allow_nan=False, ensure_ascii=False)


def check_python_keys(scenario: Mapping[str, Any]) -> None:
    """`measure.columns`: a table of lists of column names (which columns exist is checked
    when the run writes its first rows, against what the core emits)."""
    measure = scenario.get("measure")
    if not isinstance(measure, Mapping) or PYTHON_MEASURE_KEY not in measure:
        return
    tables = measure[PYTHON_MEASURE_KEY]
    where = f"measure.{PYTHON_MEASURE_KEY}"
    if not isinstance(tables, Mapping):
        raise ScenarioError(
            f"{where} = {show_value(tables)}: expected a table {{TABLE = [COLUMN, ...]}}"
        )
    for name, cols in tables.items():
        if (
            not isinstance(cols, list)
            or not cols
            or not all(isinstance(c, str) and c for c in cols)
            or len(set(cols)) != len(cols)
        ):
            raise ScenarioError(
                f"{where}.{name} = {show_value(cols)}: expected a non-empty list of distinct "
                "column names"
            )


def validate(scenario: Mapping[str, Any]) -> None:
    """Checks a resolved scenario with the core; raises `ScenarioError` on the first bad field."""
    check_python_keys(scenario)
    try:
        _core.validate_scenario(to_json(scenario))
    except ValueError as e:
        raise ScenarioError(str(e)) from None
