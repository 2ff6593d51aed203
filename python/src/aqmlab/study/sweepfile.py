"""Sweep files (docs/sweeps.md): a base scenario, overrides, axes and repetitions, expanded into
the list of runs of a study.

    [sweep]                      name, scenario (or an inline [base] table), repetitions,
                                 seed, set = { "dotted.path" = value, ... }
    [[axis]]                     name + field + values (+ labels), or name + zip (+ labels)

Axes form a grid (cartesian product) in file order; a zipped axis moves several fields
together. Every cell is repeated `repetitions` times, and repetition `rep` runs with seed
`seed + rep` whatever the cell: the cells of one repetition share their random numbers
(common random numbers), so schemes are compared on the same users, sizes and RTTs.

Planning checks the whole file before anything runs: a malformed sweep, an axis over a field
the scenario format does not know, an empty axis or cells that resolve to the same scenario
are one-line `ScenarioError`s. A cell whose value the core rejects (a negative queue limit,
say) is planned with its error and recorded as a failed run, so the other cells still run.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aqmlab._core as _core
from aqmlab import scenario as sc
from aqmlab.errors import check_plain_name, show_value
from aqmlab.runs.calibrate import calibrate_entry
from aqmlab.scenario import calibration as cal
from aqmlab.scenario.overrides import parse_key_path

__all__ = [
    "RESERVED_COLUMNS",
    "Axis",
    "PlannedRun",
    "Sweep",
    "default_label",
    "plan",
    "read",
    "run_id",
    "run_seed",
    "scenario_hash",
]

# Columns of the catalog's runs table that an axis may not be named after.
RESERVED_COLUMNS = (
    "run_id",
    "status",
    "rep",
    "seed",
    "wall_time_s",
    "error",
    "scenario",
    "scenario_hash",
    "aqmlab_version",
    "core_version",
)
SEED_LIMIT = 2**64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
# A study's plan holds every run's scenario (some kB each) and the catalog a row per run: a
# million runs is far beyond any study here and still fits in memory.
MAX_RUNS = 1_000_000

_SWEEP_KEYS = ("name", "scenario", "repetitions", "seed", "set")
_AXIS_KEYS = ("name", "field", "values", "zip", "labels")


@dataclass(frozen=True)
class Axis:
    """One axis: `fields` (dotted paths) take `points[i]` (one value per field) together."""

    name: str
    fields: tuple[str, ...]
    points: tuple[tuple[Any, ...], ...]
    labels: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fields": list(self.fields),
            "values": [list(p) for p in self.points],
            "labels": list(self.labels),
        }


@dataclass
class Sweep:
    """A parsed sweep file (not yet expanded)."""

    name: str
    path: Path | None
    base: dict[str, Any]
    base_dir: Path
    base_file: Path | None
    repetitions: int
    seed: int
    overrides: dict[str, Any]
    axes: list[Axis]

    @property
    def columns(self) -> list[str]:
        """Axis names in file order, then "rep"."""
        return [a.name for a in self.axes] + ["rep"]


@dataclass
class PlannedRun:
    """One run of the plan. `scenario` is fully resolved (loads too) unless `error` says why
    it cannot run."""

    run_id: str
    rep: int
    seed: int
    labels: dict[str, str]
    scenario: dict[str, Any]
    scenario_hash: str
    calibration: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "rep": self.rep,
            "seed": self.seed,
            "labels": self.labels,
            "scenario_hash": self.scenario_hash,
            "error": self.error,
            "calibration": self.calibration,
            "scenario": self.scenario,
        }


# --- reading -------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    return show_value(value) if not isinstance(value, dict | list) else json.dumps(value)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def default_label(value: Any) -> str:
    """A short readable rendering of an axis value: `0.9`, `droptail`, `red(min_th=5,
    max_th=15)` for a table with a `kind`, `a=1,b=2` for other tables, `[1,2]` for lists."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, Mapping):
        rest = ",".join(f"{k}={default_label(v)}" for k, v in value.items() if k != "kind")
        if "kind" in value:
            kind = default_label(value["kind"])
            return f"{kind}({rest})" if rest else kind
        return rest
    if isinstance(value, list | tuple):
        return "[" + ",".join(default_label(v) for v in value) + "]"
    return str(value)


def _axis(i: int, raw: Any, taken: set[str]) -> Axis:
    where = f"axis[{i}]"
    if not isinstance(raw, Mapping):
        raise sc.ScenarioError(f"{where}: expected a table ([[axis]]), got {_fmt(raw)}")
    unknown = [k for k in raw if k not in _AXIS_KEYS]
    if unknown:
        raise sc.ScenarioError(
            f"{where}.{unknown[0]}: unknown key, allowed: {', '.join(_AXIS_KEYS)}"
        )
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise sc.ScenarioError(
            f"{where}.name = {_fmt(name)}: expected a name (letters, digits, _ and -)"
        )
    where = f"axis {name!r}"
    if name in RESERVED_COLUMNS:
        raise sc.ScenarioError(
            f"{where}: the name is reserved for a catalog column ({', '.join(RESERVED_COLUMNS)})"
        )
    if name in taken:
        raise sc.ScenarioError(f"{where}: two axes have this name")
    if ("zip" in raw) == ("field" in raw):
        raise sc.ScenarioError(
            f"{where}: give either `field` and `values`, or `zip` (a table of field = [values])"
        )
    if "field" in raw:
        fld, values = raw["field"], raw.get("values")
        if not isinstance(fld, str) or not fld:
            raise sc.ScenarioError(f"{where}.field = {_fmt(fld)}: expected a dotted scenario path")
        if not isinstance(values, list):
            raise sc.ScenarioError(f"{where}.values = {_fmt(values)}: expected a list of values")
        columns = {fld: values}
    else:
        if "values" in raw:
            raise sc.ScenarioError(f"{where}: `values` goes with `field`, not with `zip`")
        columns = raw["zip"]
        if not isinstance(columns, Mapping) or not columns:
            raise sc.ScenarioError(
                f"{where}.zip = {_fmt(columns)}: expected a table of field = [values]"
            )
        for f, vs in columns.items():
            if not isinstance(vs, list):
                raise sc.ScenarioError(f'{where}.zip."{f}" = {_fmt(vs)}: expected a list')
    lengths = {f: len(vs) for f, vs in columns.items()}
    n = next(iter(lengths.values()))
    if n == 0:
        raise sc.ScenarioError(f"{where}: no values (an axis needs at least one)")
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{f}: {k}" for f, k in lengths.items())
        raise sc.ScenarioError(f"{where}: zipped lists differ in length ({shown})")
    fields = tuple(columns)
    for f in fields:
        _check_field(f, f"{where}: field {f}")
    points = tuple(tuple(columns[f][j] for f in fields) for j in range(n))
    labels = raw.get("labels")
    if labels is None:
        labels = [",".join(default_label(v) for v in p) for p in points]
        dup = _first_duplicate(labels)
        if dup is not None:
            raise sc.ScenarioError(
                f"{where}: two values have the same default label {dup!r}; give `labels`"
            )
    else:
        if not isinstance(labels, list) or not all(isinstance(s, str) and s for s in labels):
            raise sc.ScenarioError(
                f"{where}.labels = {_fmt(labels)}: expected a list of non-empty strings"
            )
        if len(labels) != n:
            raise sc.ScenarioError(f"{where}.labels: {len(labels)} labels for {n} values")
        dup = _first_duplicate(labels)
        if dup is not None:
            raise sc.ScenarioError(f"{where}.labels: {dup!r} appears twice")
    return Axis(name, fields, points, tuple(labels))


def parse_axis(i: int, raw: Any) -> Axis:
    """One [[axis]] table on its own (checked, with its labels)."""
    return _axis(i, raw, set())


def _check_field(path: str, where: str) -> None:
    parts = parse_key_path(path, where)
    if parts == ["seed"]:
        raise sc.ScenarioError(
            f"{where}: the seed is set by the sweep (sweep.seed + rep); use `repetitions`"
        )


def _first_duplicate(items: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for s in items:
        if s in seen:
            return s
        seen.add(s)
    return None


def read(path: str | os.PathLike) -> Sweep:
    """Parses and checks a sweep file (everything but the cells' scenarios)."""
    p = Path(path)
    doc = sc.read_toml(p)
    unknown = [k for k in doc if k not in ("sweep", "base", "axis")]
    if unknown:
        raise sc.ScenarioError(
            f"{p}: unknown top-level key {unknown[0]!r}; allowed: [sweep], [base], [[axis]]"
        )
    head = doc.get("sweep")
    if not isinstance(head, Mapping):
        raise sc.ScenarioError(f"{p}: missing the [sweep] table")
    bad = [k for k in head if k not in _SWEEP_KEYS]
    if bad:
        raise sc.ScenarioError(f"sweep.{bad[0]}: unknown key, allowed: {', '.join(_SWEEP_KEYS)}")
    name = head.get("name", p.stem)
    if not isinstance(name, str) or not name:
        raise sc.ScenarioError(f"sweep.name = {_fmt(name)}: expected a non-empty string")
    if "name" in head:
        # The default study directory is results/<name>: a name is one plain path component.
        # (A name taken from the file's stem is checked where it makes a path, see sweep.py.)
        check_plain_name(name, "sweep.name")
    reps = head.get("repetitions", 1)
    if not _is_int(reps) or reps < 1:
        raise sc.ScenarioError(f"sweep.repetitions = {_fmt(reps)}: expected an integer >= 1")
    seed = head.get("seed", sc.DEFAULT_SEED)
    if not _is_int(seed) or seed < 0 or seed + reps > SEED_LIMIT:
        raise sc.ScenarioError(
            f"sweep.seed = {_fmt(seed)}: expected an integer >= 0 with seed + repetitions <= 2^64"
        )
    overrides = head.get("set", {})
    if not isinstance(overrides, Mapping):
        raise sc.ScenarioError(
            f'sweep.set = {_fmt(overrides)}: expected a table {{ "dotted.path" = value }}'
        )
    for key in overrides:
        _check_field(str(key), f'sweep.set."{key}"')
    scen = head.get("scenario")
    if (scen is None) == ("base" not in doc):
        raise sc.ScenarioError(
            'sweep.scenario: give either `scenario = "FILE"` or an inline [base] table'
        )
    if scen is not None:
        if not isinstance(scen, str) or not scen:
            raise sc.ScenarioError(f"sweep.scenario = {_fmt(scen)}: expected a file path")
        base_file = (p.parent / scen).resolve()
        if not base_file.is_file():
            raise sc.ScenarioError(
                f"sweep.scenario = {_fmt(scen)}: no such scenario file (looked for {base_file})"
            )
        base = sc.read_toml(base_file)
        base_dir = base_file.parent
    else:
        base = doc["base"]
        if not isinstance(base, Mapping):
            raise sc.ScenarioError(f"base = {_fmt(base)}: expected a table")
        base_file, base_dir = None, p.resolve().parent
    raw_axes = doc.get("axis", [])
    if not isinstance(raw_axes, list):
        raise sc.ScenarioError("axis: expected [[axis]] tables")
    axes: list[Axis] = []
    for i, raw in enumerate(raw_axes):
        axes.append(_axis(i, raw, {a.name for a in axes}))
    runs = reps * math.prod(len(a.points) for a in axes)
    if runs > MAX_RUNS:
        # Checked before anything is expanded: the plan holds every run's scenario in memory.
        raise sc.ScenarioError(
            f"sweep.repetitions = {reps}: {runs} runs in all (repetitions × the axes' points), "
            f"expected at most {MAX_RUNS}"
        )
    return Sweep(
        name=name,
        path=p,
        base=dict(base),
        base_dir=base_dir,
        base_file=base_file,
        repetitions=reps,
        seed=seed,
        overrides=dict(overrides),
        axes=axes,
    )


# --- expansion -----------------------------------------------------------------------------


def run_seed(sweep_seed: int, rep: int) -> int:
    """The seed of repetition `rep`: `sweep_seed + rep`. It depends on nothing else, so every
    cell of a repetition uses the same random numbers (the core derives an independent stream
    per component from it, rng.rs)."""
    return sweep_seed + rep


def scenario_hash(scenario: Mapping[str, Any]) -> str:
    """SHA-256 of the scenario as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def run_id(scenario: Mapping[str, Any]) -> str:
    """The run's directory name: the first 12 hex digits of `scenario_hash` (seed included)."""
    return scenario_hash(scenario)[:12]


def _is_unknown_field(message: str) -> bool:
    return ": unknown field," in message


def _with_placeholder_populations(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """A copy where each `load` is replaced by a population of 1, so that the core can check
    everything else before any calibration runs."""
    s = copy.deepcopy(dict(scenario))
    for i in cal.needs_calibration(s):
        entry = s["traffic"][i]
        pop = cal.POPULATION.get(entry.get("kind"))
        if pop is not None and pop not in entry:
            for k in cal.LOAD_KEYS:
                entry.pop(k, None)
            entry[pop] = 1 if pop == "users" else 1.0
    return s


@dataclass
class _Cell:
    rep: int
    labels: dict[str, str]
    scenario: dict[str, Any]
    error: str | None = None


def _expand(sweep: Sweep) -> list[_Cell]:
    base = dict(sweep.base)
    for key, value in sweep.overrides.items():
        sc.set_value(base, str(key), value, where=f'sweep.set."{key}"')
    cells: list[_Cell] = []
    grids = [range(len(a.points)) for a in sweep.axes]
    for rep in range(sweep.repetitions):
        for combo in itertools.product(*grids):
            doc = copy.deepcopy(base)
            labels: dict[str, str] = {}
            for axis, j in zip(sweep.axes, combo, strict=True):
                for f, v in zip(axis.fields, axis.points[j], strict=True):
                    sc.set_value(doc, f, v, where=f"axis {axis.name!r}: field {f}")
                labels[axis.name] = axis.labels[j]
            seed = run_seed(sweep.seed, rep)
            try:
                resolved = sc.resolve(doc, seed=seed, base_dir=sweep.base_dir, loads=False)
                sc.validate(_with_placeholder_populations(resolved))
                error = None
            except sc.ScenarioError as e:
                if _is_unknown_field(str(e)):
                    raise sc.ScenarioError(f"{_where(labels, rep)}: {e}") from None
                resolved, error = doc, str(e)
                resolved["seed"] = seed
            cells.append(_Cell(rep, labels, resolved, error))
    return cells


def _where(labels: Mapping[str, str], rep: int) -> str:
    shown = ", ".join(f"{k}={v}" for k, v in labels.items())
    return f"run ({shown}{', ' if shown else ''}rep={rep})"


# --- calibration ---------------------------------------------------------------------------


def _calibrate(
    cells: list[_Cell],
    calibration_file: Path,
    seed_from: Path | None,
    workers: int,
    log: Callable[[str], None] | None,
) -> None:
    """Makes sure `calibration_file` holds a calibration for every `load` entry of the
    cells: taken from `seed_from` (a calibration file) when it has one with the same key,
    else measured (once per key, on the first cell that needs it)."""
    have = cal.load_file(calibration_file)
    needed: dict[str, tuple[dict[str, Any], int]] = {}
    for c in cells:
        if c.error is not None:
            continue
        for i in cal.needs_calibration(c.scenario):
            key = cal.calibration_key(c.scenario, i)
            if key not in have:
                needed.setdefault(key, (c.scenario, i))
    if not needed:
        return
    source = cal.load_file(seed_from) if seed_from is not None and seed_from.is_file() else {}
    found = [source[k] for k in needed if k in source]
    if found:
        cal.save_file(calibration_file, found)
        for c in found:
            needed.pop(c.key)
            if log:
                log(f"calibration {c.key}: taken from {seed_from}")
    for key, (scenario, i) in needed.items():
        if log:
            log(f"calibration {key}: measuring traffic[{i}] ({scenario['traffic'][i]['kind']})")
        done = calibrate_entry(scenario, i, workers=workers, log=log)
        cal.save_file(calibration_file, [done])


def _resolve_loads(c: _Cell, calibration_file: Path) -> list[dict[str, Any]]:
    if c.error is not None or not cal.needs_calibration(c.scenario):
        return []
    try:
        used = cal.resolve_loads(c.scenario, calibration_file, shown=calibration_file.name)
        sc.validate(c.scenario)
    except sc.ScenarioError as e:
        c.error = str(e)
        return []
    for u in used:
        u["file"] = calibration_file.name  # relative to the study directory
    return used


def plan(
    sweep: Sweep,
    calibration_file: Path,
    *,
    calibration_source: Path | None = None,
    workers: int = 1,
    log: Callable[[str], None] | None = None,
) -> list[PlannedRun]:
    """Expands `sweep` into its runs, repetition by repetition (every cell of rep 0 first),
    cells in grid order (the last axis varies fastest). `load` entries are resolved with
    `calibration_file`, which is completed first (see `_calibrate`; `calibration_source`
    default: the calibration file beside the base scenario)."""
    cells = _expand(sweep)
    if calibration_source is None and sweep.base_file is not None:
        calibration_source = cal.default_path(sweep.base_file)
    _calibrate(cells, calibration_file, calibration_source, workers, log)
    runs: list[PlannedRun] = []
    seen: dict[str, _Cell] = {}
    for c in cells:
        used = _resolve_loads(c, calibration_file)
        h = scenario_hash(c.scenario)
        rid = h[:12]
        if rid in seen:
            raise sc.ScenarioError(
                f"{_where(seen[rid].labels, seen[rid].rep)} and {_where(c.labels, c.rep)} "
                "resolve to the same scenario; make the axis values differ"
            )
        seen[rid] = c
        runs.append(
            PlannedRun(
                run_id=rid,
                rep=c.rep,
                seed=int(c.scenario["seed"]),
                labels=c.labels,
                scenario=c.scenario,
                scenario_hash=h,
                calibration=used,
                error=c.error,
            )
        )
    return runs


def plan_document(sweep: Sweep, runs: Sequence[PlannedRun]) -> dict[str, Any]:
    """plan.json: the sweep's header, its axes and every run."""
    return {
        "format": "aqmlab-plan",
        "version": 1,
        "name": sweep.name,
        "aqmlab": _core.version(),
        "repetitions": sweep.repetitions,
        "seed": sweep.seed,
        "seed_rule": "run seed = sweep seed + rep",
        "set": sweep.overrides,
        "axes": [a.to_json() for a in sweep.axes],
        "columns": sweep.columns,
        "runs": [r.to_json() for r in runs],
    }
