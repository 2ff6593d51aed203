"""`aqmlab reproduce A|B|C|D|L4S|household`: re-run one of the four seed studies as designed
(or the L4S pack, `study_l4s`, or the household pack of today's applications, `household`)
and write a report with the paper's figures and tables regenerated from our runs.

A study is a module `aqmlab.reproduce.study_<x>` that provides

    TITLE: str                       the report's title
    CITATION: str                    the paper
    PARTS: dict[str, str]            part name -> sweep file, relative to aqmlab/studies/<X>/
    def report(parts: dict[str, Study], doc: HtmlDocument, scale: str) -> None

Each part is one sweep (its own grid: Study A's FIFO and RED experiments, say), run into
`OUT/<part>/` with `aqmlab sweep`'s machinery (parallel, resumable, catalogued); the parts'
load calibrations are shared (every calibration a part measures is gathered in
`OUT/calibration.json`, which seeds the following parts). The sweep
files hold the paper's design at `full` scale and thinner `[scale.NAME]` variants
(`scaling.py`); `quick` keeps the design and finishes in about ten minutes on two cores,
`smoke` is the test suite's.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aqmlab import scenario as sc
from aqmlab.report.html import HtmlDocument
from aqmlab.reproduce import scaling
from aqmlab.scenario import calibration as cal

__all__ = ["STUDIES", "ReproduceOutcome", "reproduce", "study_dir", "study_module"]

STUDIES = {
    "A": "study_a",
    "B": "study_b",
    "C": "study_c",
    "D": "study_d",
    "L4S": "study_l4s",
    "HOUSEHOLD": "household",
}
STUDIES_ROOT = Path(__file__).resolve().parent.parent / "studies"
REPORT_FILE = "report.html"
FIGURES_DIR = "figures"
SWEEPS_DIR = "sweeps"
CALIBRATION_FILE = "calibration.json"


@dataclass
class ReproduceOutcome:
    study: str
    scale: str
    directory: Path
    report: Path | None
    runs: int = 0
    failed: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    wall_s: float = 0.0


def _key(study: str) -> str:
    key = study.strip().upper()
    if key not in STUDIES:
        raise sc.ScenarioError(f"study {study!r}: expected one of {', '.join(STUDIES)}")
    return key


def study_module(study: str) -> Any:
    return importlib.import_module(f"aqmlab.reproduce.{STUDIES[_key(study)]}")


def study_dir(study: str) -> Path:
    """The folder of a study's sweep files and base scenarios."""
    return STUDIES_ROOT / _key(study)


def reproduce(
    study: str,
    scale: str = "quick",
    out: str | os.PathLike | None = None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    stream: IO[str] | None = None,
    quiet: bool = False,
    interval_s: float = 10.0,
    report_only: bool = False,
    log: Callable[[str], None] | None = None,
) -> ReproduceOutcome:
    """Runs (or resumes) every part of `study` at `scale` into `out` (default
    `results/study-<X>-<scale>`) and writes `out/report.html` with its figures in
    `out/figures/`. With `report_only`, only the report is rewritten from finished runs."""
    from aqmlab.study import Study, sweep

    key = _key(study)
    mod = study_module(key)
    out_dir = Path(out) if out is not None else Path("results") / f"study-{key}-{scale}"
    say = log or (lambda m: None if quiet else print(m, file=stream or sys.stderr, flush=True))
    started = time.monotonic()
    outcome = ReproduceOutcome(key, scale, out_dir, None)
    derived = {
        part: scaling.derive(study_dir(key) / rel, scale, out_dir / SWEEPS_DIR / f"{part}.toml")
        for part, rel in mod.PARTS.items()
    }
    # Every calibration measured by a part is gathered in OUT/calibration.json, which seeds
    # the next parts: a key is measured once per study, whichever part needs it first.
    calibration = out_dir / CALIBRATION_FILE
    # One pool of workers for every part (started by the first one with runs to do).
    with sweep.Backends(scheduler, jobs) as backends:
        for part, sweep_file in derived.items():
            part_dir = out_dir / part
            if report_only:
                continue
            say(f"study {key} ({scale}): part {part!r}")
            done = sweep.run_sweep(
                sweep_file,
                part_dir,
                calibration=calibration if calibration.is_file() else None,
                stream=stream,
                quiet=quiet,
                interval_s=interval_s,
                backends=backends,
            )
            outcome.runs += done.total
            outcome.failed += done.failed
            outcome.failures += [(f"{part}/{r}", w, e) for r, w, e in done.failures]
            measured = cal.load_file(part_dir / CALIBRATION_FILE)
            if measured:
                cal.save_file(calibration, measured.values())
    parts = {part: Study.open(out_dir / part) for part in derived}
    heading = getattr(mod, "HEADING", f"Study {key}: {mod.TITLE}")
    doc = HtmlDocument(heading, figure_dir=out_dir / FIGURES_DIR)
    doc.paragraph(f"Reproduction of {mod.CITATION}, at {scale} scale, by aqmlab.")
    mod.report(parts, doc, scale)
    for part, sweep_file in derived.items():
        doc.code(sweep_file.read_text(encoding="utf-8"), summary=f"sweep file of part {part!r}")
    outcome.report = doc.write(out_dir / REPORT_FILE)
    outcome.wall_s = time.monotonic() - started
    return outcome
