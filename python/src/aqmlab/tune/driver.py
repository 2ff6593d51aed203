"""`aqmlab tune FILE --out DIR`: the output directory, resuming, tune.json and the report.

Directory::

    DIR/tune.toml          the tune file as given
    DIR/identity.json      what the search depends on (a resume must match it)
    DIR/optuna.journal     optuna's study (JournalStorage): every trial asked and told
    DIR/calibration.json   calibrations of `load =` entries
    DIR/catalog.duckdb     every run of the tune (aqmlab.study.catalog), one axis `candidate`
    DIR/runs/<run_id>/     the runs
    DIR/tune.json          the outcome: best settings, intervals, baselines, held-out, trials
    DIR/report.html        the report

Running the same command again resumes: trials already told are not asked again, runs already
finished are read back (their ids are hashes of their scenarios), and an interrupted batch is
evaluated and told first.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import IO, Any

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from aqmlab import scenario as sc
from aqmlab.errors import make_dirs
from aqmlab.study import catalog, execute
from aqmlab.study import sweep as sweep_mod
from aqmlab.tune import intervals, search, tunefile
from aqmlab.tune.evaluate import Evaluator, StudyEvaluator

__all__ = ["JOURNAL_FILE", "TUNE_JSON", "run_tune"]

JOURNAL_FILE = "optuna.journal"
IDENTITY_FILE = "identity.json"
TUNE_JSON = "tune.json"
REPORT_FILE = "report.html"


def _check_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise sc.ScenarioError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / IDENTITY_FILE).is_file():
        raise sc.ScenarioError(
            f"--out {out}: exists, is not empty and is not an aqmlab tune directory "
            f"(no {IDENTITY_FILE})"
        )


def _check_identity(out: Path, tune: tunefile.Tune) -> None:
    now = json.loads(json.dumps(tune.search_identity(), default=str))
    path = out / IDENTITY_FILE
    if path.is_file():
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = None
        if before is not None and before != now:
            changed = sorted(k for k in now if before.get(k) != now.get(k))
            raise sc.ScenarioError(
                f"--out {out}: the tune there was made with another {', '.join(changed)}; "
                "resume with the same tune file and scale (only `trials` and what comes after "
                "the first rung may change), or give another --out"
            )
    path.write_text(json.dumps(now, indent=1) + "\n", encoding="utf-8")


def _interval_json(values: list[float]) -> dict[str, Any]:
    return intervals.as_json(intervals.mean(values))


def outcome_json(tune: tunefile.Tune, o: search.Outcome, runs_made: int | None) -> dict[str, Any]:
    def summary(c: search.Candidate | None) -> dict[str, Any] | None:
        if c is None:
            return None
        d = c.to_json()
        d["final_interval"] = _interval_json(c.final.objective) if c.final else None
        d["heldout_interval"] = _interval_json(c.heldout.objective) if c.heldout else None
        return d

    return {
        "format": "aqmlab-tune",
        "version": 1,
        "name": tune.name,
        "scale": tune.scale,
        "scenario": str(tune.scenario_file),
        "objective": tune.objective.describe(),
        "constraints": [c.text for c in tune.objective.constraints],
        "param_constraints": [c.text for c in tune.param_constraints],
        "params": [p.__dict__ for p in tune.params],
        "seeds": {
            "training": tune.seeds,
            "finalist": tune.finalist_seeds,
            "heldout": tune.heldout_seeds,
        },
        "rungs": {
            "duration_s": list(tune.rungs.duration_s),
            "warmup_s": tune.rungs.warmup_s,
            "eta": tune.rungs.eta,
            "sizes": o.rung_sizes,
        },
        "winner": summary(o.winner),
        "baselines": [summary(b) for b in o.baselines],
        "comparisons": o.comparisons,
        "finalists": [c.name for c in o.finalists],
        "trials": [c.to_json() for c in o.trials],
        "runs_made_now": runs_made,
    }


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_nan_to_none(v) for v in x]
    return x


def run_tune(
    tune_file: str | os.PathLike,
    out: str | os.PathLike,
    *,
    scale: str | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    stream: IO[str] | None = None,
    quiet: bool = False,
    interval_s: float = 10.0,
    evaluator: Evaluator | None = None,
    report: bool = True,
) -> dict[str, Any]:
    """Runs (or resumes) the tune of `tune_file` at `scale` into `out`; returns tune.json's
    content. `evaluator` replaces the simulator (tests)."""
    stream = stream if stream is not None else sys.stderr
    tune = tunefile.read(tune_file, scale)
    out_dir = Path(out)
    _check_dir(out_dir)
    if jobs is not None and jobs < 1:
        raise sc.ScenarioError(f"--workers {jobs}: expected at least 1")
    if scheduler is not None:
        execute.check_address(scheduler)

    def log(msg: str) -> None:
        if not quiet:
            stream.write(f"tune: {msg}\n")
            stream.flush()

    study_eval: StudyEvaluator | None = None
    if evaluator is None:
        # The backend is made on first use: a tune whose runs are all done starts nothing.
        backends: list[Any] = []

        def backend_get() -> Any:
            if not backends:
                backends.append(
                    execute.DaskBackend(scheduler)
                    if scheduler is not None
                    else execute.LocalBackend(jobs)
                )
            return backends[0]

        study_eval = StudyEvaluator(
            tune,
            out_dir,
            backend_get,
            stream=stream,
            quiet=quiet,
            interval_s=interval_s,
            workers=jobs or execute.default_jobs(),
        )
        # Before anything is written: a misspelt field or a refused value fails here.
        study_eval.check(search.check_requests(tune))
        evaluator = study_eval
    make_dirs(out_dir, f"--out {out_dir}")
    _check_identity(out_dir, tune)
    (out_dir / "tune.toml").write_bytes(Path(tune_file).read_bytes())
    if study_eval is not None:
        (out_dir / catalog.RUNS_DIR).mkdir(exist_ok=True)
        sweep_mod.remove_leftovers(out_dir)
    storage = JournalStorage(JournalFileBackend(str(out_dir / JOURNAL_FILE)))
    try:
        log(
            f"{tune.name}{f' ({tune.scale})' if tune.scale else ''}: {tune.trials} trials, "
            f"{len(tune.params)} parameters, {tune.objective.describe()}, rungs "
            f"{'/'.join(f'{d:g}' for d in tune.rungs.duration_s)} s -> {out_dir}"
        )
        outcome = search.search(tune, evaluator, storage, log)
    finally:
        if study_eval is not None:
            study_eval.write_catalog()
        if study_eval is not None:
            for b in backends:
                b.close()
    doc = _nan_to_none(
        outcome_json(tune, outcome, study_eval.ran if study_eval is not None else None)
    )
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    tmp = out_dir / f".{TUNE_JSON}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out_dir / TUNE_JSON)
    if report:
        from aqmlab.tune import report as report_mod

        report_mod.write(doc, out_dir / REPORT_FILE)
    return doc


def journal_trials(out: Path) -> int:
    """How many trials the directory's optuna study holds (for messages and tests)."""
    storage = JournalStorage(JournalFileBackend(str(out / JOURNAL_FILE)))
    names = [s.study_name for s in storage.get_all_studies()]
    if not names:
        return 0
    return len(optuna.load_study(study_name=names[0], storage=storage).trials)


def summary_text(doc: dict[str, Any], out: Path) -> str:
    """The command's closing lines: the winner, its intervals, the baselines."""

    def pm(iv: dict[str, Any] | None) -> str:
        if not iv or iv.get("mean") is None:
            return "-"
        hw = iv.get("half_width")
        return f"{iv['mean']:.4g}" + (f" ± {hw:.2g}" if hw is not None else "")

    lines = [f"tune {doc['name']}: {doc['objective']}"]
    w = doc.get("winner")
    if w is None:
        lines.append("  no winner (every finalist failed)")
    else:
        shown = ", ".join(
            f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
            for k, v in w["settings"].items()
        )
        lines.append(f"  best ({w['name']}): {shown}")
        lines.append(
            f"  objective: {pm(w['final_interval'])} (finalist seeds), "
            f"{pm(w['heldout_interval'])} (held-out seeds)"
        )
    for b, c in zip(doc["baselines"], doc["comparisons"], strict=False):
        diff = (c.get("heldout") or c.get("final") or {}).get("paired")
        lines.append(
            f"  baseline {b['name']}: {pm(b['final_interval'])} / {pm(b['heldout_interval'])}; "
            f"winner − baseline (paired, held-out): {pm(diff)}"
        )
    lines.append(f"  report {out / REPORT_FILE}, results {out / TUNE_JSON}")
    return "\n".join(lines)
