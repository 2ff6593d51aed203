"""The search (docs/tune.md, "Method"):

1. **TPE on the first rung.** optuna's Tree-structured Parzen Estimator (Bergstra et al.,
   "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011; multivariate, Falkner et al.
   2018) proposes `batch` candidates at a time (constant liar for the ones still running, so a
   batch spreads out), each run on every training seed (common random numbers) at the first,
   shortest run length. Its constraints (the parameter constraints and the objective's) go
   to optuna's constrained TPE (`Trial.set_constraint`: feasible trials first, the
   infeasible ranked by how far they miss). The sampler is re-seeded from `sampler_seed`
   and the number of trials asked before each batch, so the same tune file gives the same
   trials, and so does an interrupted search resumed (the trials asked but not told are
   evaluated and told first).
2. **Successive halving on run length** (Jamieson & Talwalkar, AISTATS 2016; Li et al.,
   Hyperband, JMLR 2018): the best ⌈trials/η^r⌉ of rung r−1 run again at rung r's length, on
   the same seeds.
3. **Finalists**: the best `finalists` of the last rung run on the training and finalist
   seeds at the longest length; the winner is the best mean objective among the feasible.
4. **Baselines and held-out seeds**: every baseline runs on the same seeds as the finalists
   (paired comparisons), then the winner and the baselines run on the held-out seeds, which
   played no part in any choice: the check against an optimum that only fits its seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import optuna

from aqmlab.tune import intervals
from aqmlab.tune.evaluate import Evaluator, Request
from aqmlab.tune.tunefile import Tune

__all__ = ["Candidate", "Outcome", "search"]

optuna.logging.set_verbosity(optuna.logging.WARNING)

CONSTRAINT_ATTR = "constraint"
# A candidate whose run failed: infeasible by this much (larger than any real miss in the
# objective's units, so the constrained TPE ranks it below every candidate that ran).
FAILED_VIOLATION = 1e9


@dataclass
class Evaluation:
    """A candidate at one run length over a set of seeds."""

    duration_s: float
    seeds: list[int]
    objective: list[float]  # per seed (NaN: the run failed)
    metrics: list[dict[str, Any]]  # per seed
    violation: float  # of the mean metrics (0: feasible)

    @property
    def value(self) -> float:
        ok = [v for v in self.objective if not math.isnan(v)]
        return math.fsum(ok) / len(ok) if len(ok) == len(self.objective) and ok else math.nan

    def mean_metrics(self) -> dict[str, float]:
        keys = [k for k, v in self.metrics[0].items() if isinstance(v, float)]
        out = {}
        for k in keys:
            vs = [m.get(k, math.nan) for m in self.metrics]
            vs = [float(v) for v in vs if isinstance(v, float) and not math.isnan(v)]
            out[k] = math.fsum(vs) / len(vs) if vs else math.nan
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "duration_s": self.duration_s,
            "seeds": self.seeds,
            "objective": self.objective,
            "value": self.value,
            "violation": self.violation,
            "mean_metrics": self.mean_metrics(),
            "run_ids": [m.get("run_id") for m in self.metrics],
            "errors": [m["error"] for m in self.metrics if "error" in m],
        }


@dataclass
class Candidate:
    name: str
    settings: dict[str, Any]
    number: int | None = None  # the optuna trial number (None: a baseline)
    source: str = ""
    space_violation: float = 0.0
    rungs: dict[int, Evaluation] = field(default_factory=dict)
    final: Evaluation | None = None
    heldout: Evaluation | None = None

    def rank_key(self, rung: int) -> tuple[bool, float, float]:
        e = self.rungs[rung]
        v = e.value
        return (e.violation > 0, e.violation, v if not math.isnan(v) else math.inf)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trial": self.number,
            "source": self.source,
            "settings": self.settings,
            "space_violation": self.space_violation,
            "rungs": {str(r): e.to_json() for r, e in sorted(self.rungs.items())},
            "final": self.final.to_json() if self.final else None,
            "heldout": self.heldout.to_json() if self.heldout else None,
        }


@dataclass
class Outcome:
    trials: list[Candidate]
    finalists: list[Candidate]
    winner: Candidate | None
    baselines: list[Candidate]
    rung_sizes: list[int]
    comparisons: list[dict[str, Any]]


def _settings_items(settings: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(settings.items()))


def _evaluate(
    tune: Tune,
    evaluator: Evaluator,
    cands: Sequence[Candidate],
    seeds: Sequence[int],
    duration_s: float,
) -> list[Evaluation]:
    requests = [
        Request(c.name, _settings_items(c.settings), s, duration_s) for c in cands for s in seeds
    ]
    results = evaluator.evaluate(requests) if requests else []
    out = []
    for i, _ in enumerate(cands):
        ms = results[i * len(seeds) : (i + 1) * len(seeds)]
        objective = [math.nan if "error" in m else tune.objective.value(m) for m in ms]
        ev = Evaluation(duration_s, list(seeds), objective, list(ms), 0.0)
        if any("error" in m for m in ms) or math.isnan(ev.value):
            ev.violation = FAILED_VIOLATION
        else:
            ev.violation = tune.objective.violation(ev.mean_metrics())
        out.append(ev)
    return out


def _sampler(tune: Tune, asked: int) -> optuna.samplers.BaseSampler:
    # One seed per batch, from the tune's seed and the trials asked so far: a resumed search
    # asks what the uninterrupted one would have.
    seed = (tune.sampler_seed * 1_000_003 + asked) % 2**32
    return optuna.samplers.TPESampler(
        seed=seed,
        n_startup_trials=tune.startup_trials,
        multivariate=True,
        constant_liar=True,
    )


def _suggest(tune: Tune, trial: optuna.trial.Trial) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in tune.params:
        if p.integer:
            out[p.field] = trial.suggest_int(p.field, int(p.low), int(p.high), log=p.log)
        else:
            out[p.field] = trial.suggest_float(p.field, p.low, p.high, log=p.log)
    return out


def _candidate(tune: Tune, trial: optuna.trial.BaseTrial, params: dict[str, Any]) -> Candidate:
    c = Candidate(f"trial {trial.number}", params, number=trial.number)
    c.space_violation = math.fsum(k.violation(params) for k in tune.param_constraints)
    return c


def _first_rung(
    tune: Tune,
    study: optuna.Study,
    evaluator: Evaluator,
    log: Callable[[str], None],
) -> list[Candidate]:
    """Asks and tells trials until `tune.trials` are told; returns every trial's candidate
    (those told earlier re-evaluated from the runs, which are read back, not run)."""
    d0 = tune.rungs.duration_s[0]
    while True:
        trials = study.get_trials(deepcopy=False)
        told = [t for t in trials if t.state.is_finished()]
        waiting = [t for t in trials if t.state == optuna.trial.TrialState.RUNNING]
        if len(told) >= tune.trials and not waiting:
            break
        if waiting:  # asked by an interrupted search: evaluated and told first
            batch = [(optuna.trial.Trial(study, t._trial_id), dict(t.params)) for t in waiting]
        else:
            study.sampler = _sampler(tune, len(trials))
            n = min(tune.batch, tune.trials - len(told))
            asked = [study.ask() for _ in range(n)]
            batch = [(t, _suggest(tune, t)) for t in asked]
        cands = [_candidate(tune, t, params) for t, params in batch]
        feasible = [c for c in cands if c.space_violation == 0]
        for c, ev in zip(
            feasible, _evaluate(tune, evaluator, feasible, tune.seeds, d0), strict=True
        ):
            c.rungs[0] = ev
        for (t, _), c in zip(batch, cands, strict=True):
            if c.space_violation > 0:
                # Outside the space's constraints: not run, told as infeasible.
                t.set_constraint(CONSTRAINT_ATTR, c.space_violation)
                study.tell(t, math.inf)
                continue
            ev = c.rungs[0]
            t.set_constraint(CONSTRAINT_ATTR, ev.violation)
            study.tell(t, ev.value if not math.isnan(ev.value) else math.inf)
        best = [c for c in cands if 0 in c.rungs]
        shown = ", ".join(f"{c.name}: {c.rungs[0].value:.4g}" for c in best)
        log(f"rung 0 ({d0:g} s): {len(told) + len(cands)}/{tune.trials} trials told  {shown}")
    out = []
    told = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
    for t in told[: tune.trials]:
        out.append(_candidate(tune, t, dict(t.params)))
    feasible = [c for c in out if c.space_violation == 0]
    for c, ev in zip(feasible, _evaluate(tune, evaluator, feasible, tune.seeds, d0), strict=True):
        c.rungs[0] = ev
    return out


def rung_sizes(tune: Tune) -> list[int]:
    """How many trials run at each rung: ⌈trials / η^r⌉ (at least the finalists at the last
    rung when there are that many trials)."""
    n = tune.trials
    sizes = [max(1, math.ceil(n / tune.rungs.eta**r)) for r in range(len(tune.rungs.duration_s))]
    if len(sizes) > 1:
        sizes[-1] = min(n, max(sizes[-1], tune.finalists))
    return sizes


def midpoint(tune: Tune) -> dict[str, Any]:
    """The middle of the space (geometric for log parameters): a candidate to check."""
    out: dict[str, Any] = {}
    for p in tune.params:
        v = math.sqrt(p.low * p.high) if p.log else (p.low + p.high) / 2
        out[p.field] = round(v) if p.integer else v
    return out


def check_requests(tune: Tune) -> list[Request]:
    """A request for the middle of the space and one per baseline, at the first rung: what
    `StudyEvaluator.check` plans before anything runs."""
    cands = [("the middle of the space", midpoint(tune))]
    cands += [(f"baseline {b.name!r}", b.set) for b in tune.baselines]
    d0 = tune.rungs.duration_s[0]
    return [Request(name, _settings_items(s), tune.seeds[0], d0) for name, s in cands]


def search(
    tune: Tune,
    evaluator: Evaluator,
    storage: Any = None,
    log: Callable[[str], None] = lambda _m: None,
) -> Outcome:
    """Runs (or resumes, when `storage` holds the study) the whole search; see the module."""
    study = optuna.create_study(
        storage=storage,
        study_name=tune.name,
        direction="minimize",
        load_if_exists=True,
        sampler=_sampler(tune, 0),
    )
    trials = _first_rung(tune, study, evaluator, log)
    sizes = rung_sizes(tune)
    ranked = [c for c in trials if 0 in c.rungs]
    for r in range(1, len(tune.rungs.duration_s)):
        ranked = sorted(ranked, key=lambda c, r=r: c.rank_key(r - 1))[: sizes[r]]
        d = tune.rungs.duration_s[r]
        log(f"rung {r} ({d:g} s): {len(ranked)} trials")
        for c, ev in zip(ranked, _evaluate(tune, evaluator, ranked, tune.seeds, d), strict=True):
            c.rungs[r] = ev
    top = len(tune.rungs.duration_s) - 1
    finalists = sorted(ranked, key=lambda c: c.rank_key(top))[: tune.finalists]
    final_seeds = [*tune.seeds, *tune.finalist_seeds]
    d_top = tune.rungs.duration_s[-1]
    baselines = [Candidate(b.name, dict(b.set), source=b.source) for b in tune.baselines]
    log(
        f"finalists and baselines: {len(finalists)} + {len(baselines)} on {len(final_seeds)} "
        f"seeds at {d_top:g} s"
    )
    evs = _evaluate(tune, evaluator, [*finalists, *baselines], final_seeds, d_top)
    for c, ev in zip([*finalists, *baselines], evs, strict=True):
        c.final = ev

    def final_key(c: Candidate) -> tuple[bool, float, float]:
        assert c.final is not None
        v = c.final.value
        return (c.final.violation > 0, c.final.violation, v if not math.isnan(v) else math.inf)

    winner = min(finalists, key=final_key) if finalists else None
    checked = ([winner] if winner else []) + baselines
    if tune.heldout_seeds and checked:
        log(f"held-out check: {len(checked)} candidates on {len(tune.heldout_seeds)} seeds")
        evs = _evaluate(tune, evaluator, checked, tune.heldout_seeds, d_top)
        for c, ev in zip(checked, evs, strict=True):
            c.heldout = ev
    return Outcome(trials, finalists, winner, baselines, sizes, _comparisons(winner, baselines))


def _comparisons(winner: Candidate | None, baselines: list[Candidate]) -> list[dict[str, Any]]:
    """Winner − baseline on the finalist seeds and on the held-out seeds: paired and
    unpaired intervals (negative: the winner is better, the objective being minimised)."""
    out: list[dict[str, Any]] = []
    if winner is None:
        return out
    for b in baselines:
        row: dict[str, Any] = {"baseline": b.name}
        for part in ("final", "heldout"):
            w, o = getattr(winner, part), getattr(b, part)
            if w is None or o is None:
                continue
            row[part] = {
                "paired": intervals.as_json(intervals.paired(w.objective, o.objective)),
                "unpaired": intervals.as_json(intervals.unpaired(w.objective, o.objective)),
            }
        out.append(row)
    return out
