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
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import aqmlab._core as _core
from aqmlab import scenario as sc
from aqmlab.errors import check_plain_name, show_value
from aqmlab.runs.calibrate import calibrate_entry
from aqmlab.scenario import calibration as cal
from aqmlab.scenario.overrides import parse_key_path, parse_override

__all__ = [
    "RESERVED_COLUMNS",
    "Axis",
    "PlanCheck",
    "PlannedRun",
    "Sweep",
    "check",
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

_SEED_RULE = "an integer >= 0 with seed + repetitions <= 2^64"


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
    cli_overrides: list[str] = field(default_factory=list)

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
#
# The shape of the file is a pydantic schema: each field's type and bounds, and in its
# description what the one-line error says is allowed (`each`: the rule of one item of a list
# or table). The rules that tie fields together (reserved and repeated names, `field` or
# `zip`, lengths, labels, the seed range) are checked after it.


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SweepTable(_Table):
    name: str | None = Field(None, min_length=1, description="a non-empty string")
    scenario: str | None = Field(None, min_length=1, description="a file path")
    repetitions: int = Field(1, ge=1, description="an integer >= 1")
    seed: int = Field(sc.DEFAULT_SEED, ge=0, description=_SEED_RULE)
    set: dict[str, Any] = Field(
        default_factory=dict, description='a table { "dotted.path" = value }'
    )


class _AxisTable(_Table):
    name: str = Field(
        pattern=rf"^{_NAME.pattern}$", description="a name (letters, digits, _ and -)"
    )
    field: str | None = Field(None, min_length=1, description="a dotted scenario path")
    values: list[Any] | None = Field(None, description="a list of values")
    zip: dict[str, list[Any]] | None = Field(
        None,
        min_length=1,
        description="a table of field = [values]",
        json_schema_extra={"each": "a list"},
    )
    labels: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None,
        description="a list of non-empty strings",
        json_schema_extra={"each": "a non-empty string"},
    )


class _SweepFile(_Table):
    sweep: _SweepTable = Field(description="the [sweep] table")
    base: dict[str, Any] | None = Field(None, description="a table")
    axis: list[_AxisTable] = Field(
        default_factory=list,
        description="[[axis]] tables",
        json_schema_extra={"each": "an [[axis]] table"},
    )


def _fmt(value: Any) -> str:
    return show_value(value) if not isinstance(value, dict | list) else json.dumps(value)


def _show_loc(loc: Sequence[str | int]) -> str:
    """``axis[0].zip."queue.limit"``: a key that is not a plain name is quoted."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}" if _NAME.fullmatch(part) else f'."{part}"'
        else:
            out = part
    return out


def _schema_error(
    p: Path | str, doc: Any, e: ValidationError, prefix: Sequence[str | int] = ()
) -> sc.ScenarioError:
    """The first problem `e` found in `doc`, in one line: where, the value, what is allowed.
    An unknown key comes first (a misspelt key often explains the other errors)."""
    err = min(e.errors(), key=lambda x: (x["type"] != "extra_forbidden", len(x["loc"])))
    loc = [*prefix, *err["loc"]]
    if err["type"] == "extra_forbidden":
        if len(loc) == 1:
            return sc.ScenarioError(
                f"{p}: unknown top-level key {loc[0]!r}; allowed: [sweep], [base], [[axis]]"
            )
        keys = (_SweepTable if loc[0] == "sweep" else _AxisTable).model_fields
        return sc.ScenarioError(f"{_show_loc(loc)}: unknown key, allowed: {', '.join(keys)}")
    # The field the error is in: [sweep] keys, [[axis]] keys, top-level tables.
    if loc[0] == "sweep" and len(loc) > 1:
        n, info = 2, _SweepTable.model_fields[str(loc[1])]
    elif loc[0] == "axis" and len(loc) > 2:
        n, info = 3, _AxisTable.model_fields[str(loc[2])]
    else:
        n, info = 1, _SweepFile.model_fields[str(loc[0])]
    allowed = info.description
    each = info.json_schema_extra.get("each") if isinstance(info.json_schema_extra, dict) else None
    loc, allowed = (loc[: n + 1], each) if each and len(loc) > n else (loc[:n], allowed)
    if err["type"] == "missing":
        if loc == ["sweep"]:
            return sc.ScenarioError(f"{p}: missing the [sweep] table")
        return sc.ScenarioError(f"{_show_loc(loc)}: missing, expected {allowed}")
    value = doc
    for part in loc[len(prefix) :]:
        value = value[part]
    return sc.ScenarioError(f"{_show_loc(loc)} = {_fmt(value)}: expected {allowed}")


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


def _axis(raw: _AxisTable, taken: set[str]) -> Axis:
    """The rules of one axis beyond its schema."""
    name = raw.name
    where = f"axis {name!r}"
    if name in RESERVED_COLUMNS:
        raise sc.ScenarioError(
            f"{where}: the name is reserved for a catalog column ({', '.join(RESERVED_COLUMNS)})"
        )
    if name in taken:
        raise sc.ScenarioError(f"{where}: two axes have this name")
    if (raw.zip is None) == (raw.field is None):
        raise sc.ScenarioError(
            f"{where}: give either `field` and `values`, or `zip` (a table of field = [values])"
        )
    if raw.field is not None:
        if raw.values is None:
            raise sc.ScenarioError(f"{where}.values: missing, expected a list of values")
        columns = {raw.field: raw.values}
    else:
        if raw.values is not None:
            raise sc.ScenarioError(f"{where}: `values` goes with `field`, not with `zip`")
        columns = raw.zip or {}
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
    if raw.labels is None:
        labels = [",".join(default_label(v) for v in p) for p in points]
        dup = _first_duplicate(labels)
        if dup is not None:
            raise sc.ScenarioError(
                f"{where}: two values have the same default label {dup!r}; give `labels`"
            )
    else:
        labels = raw.labels
        if len(labels) != n:
            raise sc.ScenarioError(f"{where}.labels: {len(labels)} labels for {n} values")
        dup = _first_duplicate(labels)
        if dup is not None:
            raise sc.ScenarioError(f"{where}.labels: {dup!r} appears twice")
    return Axis(name, fields, points, tuple(labels))


def parse_axis(i: int, raw: Any) -> Axis:
    """One [[axis]] table on its own (checked, with its labels); errors name it axis[i]."""
    try:
        table = _AxisTable.model_validate(raw)
    except ValidationError as e:
        raise _schema_error("axis", raw, e, prefix=("axis", i)) from None
    return _axis(table, set())


def _check_field(path: str, where: str) -> list[str | int]:
    parts = parse_key_path(path, where)
    if parts == ["seed"]:
        raise sc.ScenarioError(
            f"{where}: the seed is set by the sweep (sweep.seed + rep); use `repetitions`"
        )
    return parts


def _first_duplicate(items: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for s in items:
        if s in seen:
            return s
        seen.add(s)
    return None


def _check_cli_set(items: Sequence[str], axes: Sequence[Axis]) -> list[str]:
    """`--set` items, checked: a value that an axis replaces in every cell is an error."""
    for item in items:
        key, _ = parse_override(item)
        parts = parse_key_path(key)
        if parts == ["seed"]:
            raise sc.ScenarioError(
                f"--set {item}: the seed is set by the sweep (sweep.seed + rep); use `repetitions`"
            )
        for axis in axes:
            for f in axis.fields:
                if parts[: len(fp := parse_key_path(f))] == fp:
                    raise sc.ScenarioError(
                        f"--set {item}: the axis {axis.name!r} sets {f} in every cell, which "
                        "replaces this value; change the axis instead"
                    )
    return list(items)


def read(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Sweep:
    """Parses and checks a sweep file (everything but the cells' scenarios). `overrides` are
    ``--set key.path=value`` items for the base scenario, applied after the file's `set`."""
    p = Path(path)
    doc = sc.read_toml(p)
    try:
        parsed = _SweepFile.model_validate(doc)
    except ValidationError as e:
        raise _schema_error(p, doc, e) from None
    head = parsed.sweep
    name = head.name if head.name is not None else p.stem
    if head.name is not None:
        # The default study directory is results/<name>: a name is one plain path component.
        # (A name taken from the file's stem is checked where it makes a path, see sweep.py.)
        check_plain_name(name, "sweep.name")
    reps, seed = head.repetitions, head.seed
    if seed + reps > SEED_LIMIT:
        raise sc.ScenarioError(f"sweep.seed = {seed}: expected {_SEED_RULE}")
    for key in head.set:
        _check_field(key, f'sweep.set."{key}"')
    if (head.scenario is None) == (parsed.base is None):
        raise sc.ScenarioError(
            'sweep.scenario: give either `scenario = "FILE"` or an inline [base] table'
        )
    if head.scenario is not None:
        base_file = (p.parent / head.scenario).resolve()
        if not base_file.is_file():
            raise sc.ScenarioError(
                f"sweep.scenario = {_fmt(head.scenario)}: no such scenario file "
                f"(looked for {base_file})"
            )
        base = sc.read_toml(base_file)
        base_dir = base_file.parent
    else:
        base = dict(parsed.base or {})
        base_file, base_dir = None, p.resolve().parent
    axes: list[Axis] = []
    for raw in parsed.axis:
        axes.append(_axis(raw, {a.name for a in axes}))
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
        base=base,
        base_dir=base_dir,
        base_file=base_file,
        repetitions=reps,
        seed=seed,
        overrides=dict(head.set),
        axes=axes,
        cli_overrides=_check_cli_set(overrides, axes),
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


@dataclass
class _Cell:
    rep: int
    labels: dict[str, str]
    scenario: dict[str, Any]
    error: str | None = None


def _expand(sweep: Sweep) -> list[_Cell]:
    """Every cell's scenario: the base with its defaults (docs/scenario.md), then `set`, then
    the command line's `--set`, then the cell's axis values. A `kind` switched on the way
    drops the keys of the previous kind that no step names (`aqmlab.scenario.assign`)."""
    base = sc.with_defaults(sweep.base)
    typed = [str(k) for k in sweep.overrides]
    sc.assign(base, [(str(k), v, f'sweep.set."{k}"') for k, v in sweep.overrides.items()])
    cli = [parse_override(item) for item in sweep.cli_overrides]
    sc.assign(base, [(k, v, f"--set {k}") for k, v in cli], typed=typed)
    typed += [k for k, _ in cli]
    cells: list[_Cell] = []
    grids = [range(len(a.points)) for a in sweep.axes]
    for rep in range(sweep.repetitions):
        for combo in itertools.product(*grids):
            doc = copy.deepcopy(base)
            labels: dict[str, str] = {}
            assignments = []
            for axis, j in zip(sweep.axes, combo, strict=True):
                for f, v in zip(axis.fields, axis.points[j], strict=True):
                    assignments.append((f, v, f"axis {axis.name!r}: field {f}"))
                labels[axis.name] = axis.labels[j]
            sc.assign(doc, assignments, typed=typed)
            seed = run_seed(sweep.seed, rep)
            try:
                resolved = sc.resolve(doc, seed=seed, base_dir=sweep.base_dir, loads=False)
                sc.validate(cal.with_placeholder_populations(resolved))
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
    measure: bool = True,
) -> dict[str, tuple[dict[str, Any], int]]:
    """Makes sure `calibration_file` holds a calibration for every `load` entry of the
    cells: taken from `seed_from` (a calibration file) when it has one with the same key,
    else measured (once per key, on the first cell that needs it). With `measure=False`
    nothing is measured: returns the keys still missing (with a cell and entry needing it)."""
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
        return needed
    source = cal.load_file(seed_from) if seed_from is not None and seed_from.is_file() else {}
    found = [source[k] for k in needed if k in source]
    if found:
        cal.save_file(calibration_file, found)
        for c in found:
            needed.pop(c.key)
            if log:
                log(f"calibration {c.key}: taken from {seed_from}")
    if not measure:
        return needed
    for key, (scenario, i) in needed.items():
        if log:
            log(f"calibration {key}: measuring traffic[{i}] ({scenario['traffic'][i]['kind']})")
        done = calibrate_entry(scenario, i, workers=workers, log=log)
        cal.save_file(calibration_file, [done])
    return {}


def _resolve_loads(
    c: _Cell, calibration_file: Path, missing: Sequence[str]
) -> list[dict[str, Any]]:
    needs = cal.needs_calibration(c.scenario)
    if c.error is not None or not needs:
        return []
    if any(cal.calibration_key(c.scenario, i) in missing for i in needs):
        return []  # not measured yet (`check`): the cell keeps its `load`
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
    return _plan(sweep, calibration_file, calibration_source, workers, log, measure=True)[0]


@dataclass
class PlanCheck:
    """What `check` found: the planned runs (`error` set on those that would fail) and the
    calibrations that running the sweep would measure first (their keys)."""

    runs: list[PlannedRun]
    to_measure: list[str]

    @property
    def failures(self) -> list[PlannedRun]:
        return [r for r in self.runs if r.error is not None]


def check(sweep: Sweep, calibration_source: Path | None = None) -> PlanCheck:
    """The plan of `sweep`, made without running or writing anything: calibrations are taken
    from `calibration_source` (default: beside the base scenario) when it has them; the
    cells of a calibration it lacks keep their `load` (checked with a placeholder population)
    and the calibration is listed in `to_measure`."""
    with tempfile.TemporaryDirectory() as d:
        runs, missing = _plan(
            sweep, Path(d) / "calibration.json", calibration_source, 1, None, measure=False
        )
    return PlanCheck(runs, missing)


def _plan(
    sweep: Sweep,
    calibration_file: Path,
    calibration_source: Path | None,
    workers: int,
    log: Callable[[str], None] | None,
    measure: bool,
) -> tuple[list[PlannedRun], list[str]]:
    cells = _expand(sweep)
    if calibration_source is None and sweep.base_file is not None:
        calibration_source = cal.default_path(sweep.base_file)
    missing = list(_calibrate(cells, calibration_file, calibration_source, workers, log, measure))
    runs: list[PlannedRun] = []
    seen: dict[str, _Cell] = {}
    for c in cells:
        used = _resolve_loads(c, calibration_file, missing)
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
    return runs, missing


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
        "cli_set": sweep.cli_overrides,
        "axes": [a.to_json() for a in sweep.axes],
        "columns": sweep.columns,
        "runs": [r.to_json() for r in runs],
    }
