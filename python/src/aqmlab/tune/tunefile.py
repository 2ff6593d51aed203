"""The tune file (TOML): what to run, which parameters to search, the objective, the
baselines and the budget at each scale (docs/tune.md, "Tune file").

The shape is a pydantic schema (types, bounds, unknown keys); the rules tying fields together
(low < high, increasing rung lengths, disjoint seed sets, known metrics) are checked after it.
Every problem is one line naming the field, its value and what is allowed.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aqmlab import scenario as sc
from aqmlab.errors import check_plain_name, show_value
from aqmlab.tune import objective as obj

__all__ = ["Baseline", "Param", "Rungs", "Tune", "read", "resolve_scenario_path", "studies_dir"]

_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\[\]]*)\s*(<=|>=|<|>)\s*(\S+)\s*$")


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Rungs(_Table):
    duration_s: list[float] = Field(
        min_length=1, description="a list of increasing run lengths in seconds (> warmup_s)"
    )
    warmup_s: float = Field(0.0, ge=0, description="a number of seconds >= 0")
    eta: int = Field(3, ge=2, description="an integer >= 2 (the halving factor)")


class _Budget(_Table):
    """The keys a [scale.NAME] table may change."""

    seeds: list[int] | None = Field(None, min_length=1, description="a list of integers >= 0")
    heldout_seeds: list[int] | None = Field(None, description="a list of integers >= 0")
    finalist_seeds: list[int] | None = Field(None, description="a list of integers >= 0")
    trials: int | None = Field(None, ge=1, le=10_000, description="an integer in 1..10000")
    batch: int | None = Field(None, ge=1, le=1000, description="an integer in 1..1000")
    startup_trials: int | None = Field(None, ge=1, description="an integer >= 1")
    finalists: int | None = Field(None, ge=1, description="an integer >= 1")
    rungs: _Rungs | None = Field(None, description="a [rungs] table")


class _TuneTable(_Budget):
    name: str | None = Field(None, min_length=1, description="a plain name")
    scenario: str = Field(min_length=1, description='a file path or "A:base.toml"')
    set: dict[str, Any] = Field(
        default_factory=dict, description='a table { "dotted.path" = value }'
    )
    sampler_seed: int = Field(1, ge=0, description="an integer >= 0")
    param_constraints: list[str] = Field(
        default_factory=list, description='a list like ["queue.min_th < queue.max_th"]'
    )


class _Param(_Table):
    field: str = Field(min_length=1, description="a dotted scenario path")
    low: float = Field(description="a number")
    high: float = Field(description="a number")
    log: bool = Field(False, description="true or false")
    int: bool = Field(False, description="true or false")


class _Objective(_Table):
    minimize: str | dict[str, float] | None = Field(
        None, description="a metric name or a table { metric = weight }"
    )
    maximize: str | None = Field(None, description="a metric name")
    constraints: list[str] = Field(
        default_factory=list, description='a list like ["utilization >= 0.9"]'
    )


class _Baseline(_Table):
    name: str = Field(min_length=1, description="a non-empty string")
    source: str = Field("", description="a string (where the settings come from)")
    set: dict[str, Any] = Field(
        default_factory=dict, description='a table { "dotted.path" = value }'
    )


class _TuneFile(_Table):
    tune: _TuneTable = Field(description="the [tune] table")
    param: list[_Param] = Field(min_length=1, description="[[param]] tables (at least one)")
    objective: _Objective = Field(description="the [objective] table")
    baseline: list[_Baseline] = Field(default_factory=list, description="[[baseline]] tables")
    scale: dict[str, _Budget] = Field(
        default_factory=dict, description="[scale.NAME] tables of budget keys"
    )


@dataclass(frozen=True)
class Param:
    field: str
    low: float
    high: float
    log: bool
    integer: bool


@dataclass(frozen=True)
class Rungs:
    duration_s: tuple[float, ...]
    warmup_s: float
    eta: int


@dataclass(frozen=True)
class Baseline:
    name: str
    source: str
    set: dict[str, Any]


@dataclass(frozen=True)
class Comparison:
    """`left OP right`: `left` a field or metric, `right` a number or (for parameters) a
    field."""

    left: str
    op: str
    right: str | float
    text: str

    def holds(self, values: Mapping[str, float]) -> bool:
        return self.violation(values) <= 0

    def violation(self, values: Mapping[str, float]) -> float:
        """0 when it holds, else how far it misses (> 0); NaN values miss by infinity."""
        a = float(values[self.left])
        b = float(values[self.right]) if isinstance(self.right, str) else self.right
        if math.isnan(a) or math.isnan(b):
            return math.inf
        ok = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]
        return 0.0 if ok else max(abs(a - b), 1e-9)


@dataclass
class Tune:
    """A parsed tune file at one scale."""

    name: str
    path: Path
    scale: str | None
    scenario_file: Path
    set: dict[str, Any]
    params: list[Param]
    param_constraints: list[Comparison]
    objective: obj.Objective
    baselines: list[Baseline]
    seeds: list[int]
    heldout_seeds: list[int]
    finalist_seeds: list[int]
    trials: int
    batch: int
    startup_trials: int
    finalists: int
    sampler_seed: int
    rungs: Rungs
    scales: list[str] = field(default_factory=list)

    def search_identity(self) -> dict[str, Any]:
        """What the trials told to the optimizer depend on (the cheapest rung's runs, the
        space, the objective, the sampler): a directory resumes only with the same. The
        number of trials and what comes after the first rung may change."""
        return {
            "scenario": str(self.scenario_file),
            "set": self.set,
            "params": [p.__dict__ for p in self.params],
            "param_constraints": [c.text for c in self.param_constraints],
            "objective": self.objective.describe(),
            "seeds": self.seeds,
            "first_rung_s": self.rungs.duration_s[0],
            "warmup_s": self.rungs.warmup_s,
            "batch": self.batch,
            "startup_trials": self.startup_trials,
            "sampler_seed": self.sampler_seed,
        }


def studies_dir() -> Path:
    """The studies packaged with aqmlab (`aqmlab/studies/<X>/`)."""
    return Path(__file__).resolve().parents[1] / "studies"


def resolve_scenario_path(text: str, tune_file: Path) -> Path:
    """`"A:base.toml"` names a packaged study's file; anything else is a path relative to
    the tune file."""
    m = re.fullmatch(r"([A-Za-z0-9_]+):(.+)", text)
    if m and (studies_dir() / m.group(1)).is_dir():
        p = studies_dir() / m.group(1) / m.group(2)
        if not p.is_file():
            raise sc.ScenarioError(
                f"tune.scenario = {show_value(text)}: no file {m.group(2)} in the packaged "
                f"study {m.group(1)} ({studies_dir() / m.group(1)})"
            )
        return p
    p = (tune_file.parent / text).resolve()
    if not p.is_file():
        raise sc.ScenarioError(
            f"tune.scenario = {show_value(text)}: no such scenario file (looked for {p})"
        )
    return p


def _loc(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _schema_error(p: Path, doc: Any, e: ValidationError) -> sc.ScenarioError:
    """The first problem, in one line (an unknown key first: it often explains the rest)."""
    err = min(e.errors(), key=lambda x: (x["type"] != "extra_forbidden", len(x["loc"])))
    loc = list(err["loc"])
    # pydantic appends the union member tried ("str", "dict[str,float]"): not a place.
    loc = [x for x in loc if not (isinstance(x, str) and ("[" in x or x in ("str", "float")))]
    model: type[BaseModel] = _TuneFile
    info = None
    skip_key = False
    for i, part in enumerate(loc):
        if isinstance(part, int) or model is None or skip_key:
            skip_key = False  # a list index, or the NAME of a [scale.NAME] table
            continue
        if part not in model.model_fields:
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(model.model_fields)
                return sc.ScenarioError(f"{_loc(loc[: i + 1])}: unknown key, allowed: {allowed}")
            break
        info = model.model_fields[part]
        nxt = info.annotation
        sub = next(
            (
                t
                for t in (_TuneTable, _Rungs, _Param, _Objective, _Baseline, _Budget)
                if t is nxt or t.__name__ in str(nxt)
            ),
            None,
        )
        if sub is None:
            loc = loc[: i + 1]
            break
        model = sub
        skip_key = str(nxt).startswith("dict[")
    allowed = info.description if info is not None else "a valid tune file"
    if err["type"] == "missing":
        return sc.ScenarioError(f"{_loc(loc)}: missing, expected {allowed}")
    value: Any = doc
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            break
    shown = json.dumps(value) if isinstance(value, dict | list) else show_value(value)
    return sc.ScenarioError(f"{_loc(loc)} = {shown}: expected {allowed}")


def _comparison(text: str, where: str, allowed: str) -> Comparison:
    m = _CONSTRAINT.match(text)
    if not m:
        raise sc.ScenarioError(f"{where} = {show_value(text)}: expected {allowed}")
    left, op, right = m.groups()
    try:
        value: str | float = float(right)
    except ValueError:
        value = right
    return Comparison(left, op, value, " ".join(text.split()))


def _check_seeds(name: str, seeds: Sequence[int], taken: dict[str, set[int]]) -> None:
    if any(s < 0 for s in seeds):
        raise sc.ScenarioError(f"tune.{name} = {seeds}: expected integers >= 0")
    if len(set(seeds)) != len(seeds):
        raise sc.ScenarioError(f"tune.{name} = {seeds}: a seed appears twice")
    for other, have in taken.items():
        common = sorted(set(seeds) & have)
        if common:
            raise sc.ScenarioError(
                f"tune.{name} = {seeds}: seed {common[0]} is also in tune.{other}; "
                "the seed sets must be disjoint"
            )
    taken[name] = set(seeds)


def _params(raw: list[_Param]) -> list[Param]:
    out: list[Param] = []
    for i, p in enumerate(raw):
        where = f"param[{i}]"
        if not p.low < p.high:
            raise sc.ScenarioError(
                f"{where}.high = {p.high:g}: expected a number > low ({p.low:g})"
            )
        if p.log and p.low <= 0:
            raise sc.ScenarioError(f"{where}.low = {p.low:g}: expected a number > 0 (log = true)")
        if p.int and (p.low != int(p.low) or p.high != int(p.high)):
            raise sc.ScenarioError(
                f"{where}.low/high = {p.low:g}/{p.high:g}: expected whole numbers (int = true)"
            )
        if p.field in (q.field for q in out):
            raise sc.ScenarioError(f"{where}.field = {show_value(p.field)}: appears twice")
        if p.field in ("seed", "duration_s", "warmup_s"):
            raise sc.ScenarioError(
                f"{where}.field = {show_value(p.field)}: expected a model parameter "
                "(seeds and run lengths are the tune's own)"
            )
        out.append(Param(p.field, p.low, p.high, p.log, p.int))
    return out


def read(path: str | os.PathLike, scale: str | None = None) -> Tune:
    """Parses and checks a tune file at `scale` (a [scale.NAME] table's keys replace the
    [tune] ones; None: the [tune] table as it is)."""
    p = Path(path)
    doc = sc.read_toml(p)
    try:
        parsed = _TuneFile.model_validate(doc)
    except ValidationError as e:
        raise _schema_error(p, doc, e) from None
    head = parsed.tune
    name = check_plain_name(head.name if head.name is not None else p.stem, "tune.name")
    if scale is not None and scale not in parsed.scale:
        have = ", ".join(parsed.scale) or "none"
        raise sc.ScenarioError(f"--scale {scale}: not in {p} (its scales: {have})")
    budget = head.model_dump()
    if scale is not None:
        budget.update({k: v for k, v in parsed.scale[scale].model_dump().items() if v is not None})
    where = f"scale.{scale}" if scale is not None else "tune"
    for key in ("seeds", "trials", "rungs"):
        if budget.get(key) is None:
            raise sc.ScenarioError(f"{where}.{key}: missing (give it in [tune] or the scale)")
    rungs = _Rungs.model_validate(budget["rungs"])
    d = rungs.duration_s
    if any(b <= a for a, b in itertools.pairwise(d)) or d[0] <= rungs.warmup_s:
        raise sc.ScenarioError(
            f"{where}.rungs.duration_s = {d}: expected increasing lengths > warmup_s "
            f"({rungs.warmup_s:g})"
        )
    taken: dict[str, set[int]] = {}
    seeds = list(budget["seeds"])
    _check_seeds("seeds", seeds, taken)
    finalist_seeds = list(budget.get("finalist_seeds") or [])
    _check_seeds("finalist_seeds", finalist_seeds, taken)
    heldout = list(budget.get("heldout_seeds") or [])
    _check_seeds("heldout_seeds", heldout, taken)
    params = _params(parsed.param)
    fields = {q.field for q in params}
    param_constraints = []
    for i, text in enumerate(head.param_constraints):
        c = _comparison(text, f"tune.param_constraints[{i}]", '"FIELD < FIELD or number"')
        for f in (c.left, c.right):
            if isinstance(f, str) and f not in fields:
                raise sc.ScenarioError(
                    f"tune.param_constraints[{i}] = {show_value(text)}: {f} is not a "
                    f"[[param]] field (those are: {', '.join(sorted(fields))})"
                )
        param_constraints.append(c)
    objective = obj.parse(parsed.objective.minimize, parsed.objective.maximize)
    for i, text in enumerate(parsed.objective.constraints):
        c = _comparison(text, f"objective.constraints[{i}]", '"METRIC >= number"')
        if c.left not in obj.METRICS or isinstance(c.right, str):
            raise sc.ScenarioError(
                f"objective.constraints[{i}] = {show_value(text)}: expected METRIC OP number "
                f"with METRIC one of {', '.join(obj.METRICS)}"
            )
        objective.constraints.append(c)
    names = [b.name for b in parsed.baseline]
    for i, b in enumerate(parsed.baseline):
        if names.index(b.name) != i:
            raise sc.ScenarioError(f"baseline[{i}].name = {show_value(b.name)}: appears twice")
    trials = int(budget["trials"])
    return Tune(
        name=name,
        path=p,
        scale=scale,
        scenario_file=resolve_scenario_path(head.scenario, p),
        set=dict(head.set),
        params=params,
        param_constraints=param_constraints,
        objective=objective,
        baselines=[Baseline(b.name, b.source, dict(b.set)) for b in parsed.baseline],
        seeds=seeds,
        heldout_seeds=heldout,
        finalist_seeds=finalist_seeds,
        trials=trials,
        batch=int(budget.get("batch") or 4),
        startup_trials=min(int(budget.get("startup_trials") or 10), trials),
        finalists=int(budget.get("finalists") or 3),
        sampler_seed=head.sampler_seed,
        rungs=Rungs(tuple(float(x) for x in d), float(rungs.warmup_s), int(rungs.eta)),
        scales=list(parsed.scale),
    )
