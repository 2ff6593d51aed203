"""`aqmlab rfc7928`: the RFC 7928 characterization pack (Kuhn, Natarajan, Khademi, Ros,
"Characterization Guidelines for Active Queue Management (AQM)", July 2016).

Each section of the RFC that a packet-level simulation can express is a sweep file in
aqmlab/studies/RFC7928/ (`sections.py`); its `aqm` axis is replaced by the compared schemes
(`queues.py`), the file is cut to the scale asked for (aqmlab.reproduce.scaling), and it runs
with `aqmlab sweep`'s machinery into OUT/<section>/ (parallel, on local cores or Dask,
resumable: finished runs are kept in the section's catalog). The report (`report.py`) judges
every scheme against drop-tail per scenario and writes OUT/report.html."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aqmlab import scenario as sc
from aqmlab.errors import ScenarioError
from aqmlab.reproduce import scaling
from aqmlab.rfc7928 import queues as qs
from aqmlab.rfc7928.sections import SECTIONS, Section

__all__ = ["STUDY_DIR", "PackOutcome", "core_has_hops", "run_pack", "select_sections"]

STUDY_DIR = Path(__file__).resolve().parent.parent / "studies" / "RFC7928"
SCALES = ("full", "quick", "smoke")
REPORT_FILE = "report.html"


@dataclass
class PackOutcome:
    directory: Path
    scale: str
    sections: list[str]
    report: Path | None = None
    runs: int = 0
    failed: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    wall_s: float = 0.0


def core_has_hops() -> bool:
    """Whether the core accepts a chain of bottlenecks (`topology.hops`, RFC 7928 §10)."""
    try:
        sc.validate(sc.load(STUDY_DIR / "base.toml", overrides=["topology.hops=[{mbps=10.0}]"]))
    except (ScenarioError, ValueError, RuntimeError):
        return False
    return True


def select_sections(names: str | None) -> tuple[list[Section], list[tuple[str, str]]]:
    """The sections to run (--sections, comma-separated keys; default: all the core can run)
    and those left out with the reason."""
    by_key = {s.key: s for s in SECTIONS}
    hops = core_has_hops()
    skipped: list[tuple[str, str]] = []
    if names is None:
        chosen = list(SECTIONS)
    else:
        chosen = []
        for n in (x.strip() for x in names.split(",")):
            if n not in by_key:
                raise ScenarioError(
                    f"--sections {names!r}: {n!r}: unknown, allowed: {', '.join(by_key)}"
                )
            chosen.append(by_key[n])
    out = []
    for s in chosen:
        if s.needs_hops and not hops:
            skipped.append((s.key, "the core has no chain of bottlenecks (topology.hops)"))
        else:
            out.append(s)
    return out, skipped


def _buffer(doc: dict[str, Any]) -> int | None:
    """The section's buffer: the `limit` of its `aqm` axis's drop-tail entry."""
    for a in doc.get("axis", []):
        if a.get("name") == "aqm":
            for v in a.get("values", []):
                if v.get("kind") == "droptail" and "limit" in v:
                    return int(v["limit"])
    return None


def section_source(
    section: Section, schemes: Sequence[qs.Scheme], repetitions: int | None
) -> dict[str, Any]:
    """The section's sweep document with the compared schemes on its `aqm` axis."""
    src = STUDY_DIR / section.file
    doc = sc.read_toml(src)
    buffer = _buffer(doc)
    tables = [s.table(buffer) for s in schemes]
    if section.ecn:
        tables = [qs.with_ecn(t) for t in tables]
    for a in doc.get("axis", []):
        if a.get("name") == "aqm":
            a["values"] = tables
            a["labels"] = [s.label for s in schemes]
    doc["sweep"]["scenario"] = str((src.parent / doc["sweep"]["scenario"]).resolve())
    if repetitions is not None:
        if repetitions < 1:
            raise ScenarioError(f"--repetitions {repetitions}: expected at least 1")
        doc["sweep"]["repetitions"] = repetitions
        for table in doc.get("scale", {}).values():
            table["repetitions"] = repetitions
    return doc


def _check_schemes(schemes: Sequence[qs.Scheme]) -> None:
    """Each scheme's queue table as the core reads it: a bad key is a one-line error now."""
    for s in schemes:
        queue = scaling._value(s.table(83))
        try:
            sc.validate(sc.load(STUDY_DIR / "base.toml", overrides=[f"queue={queue}"]))
        except ScenarioError as e:
            raise ScenarioError(f"--aqm {s.label}: {e}") from None


def run_pack(
    schemes: Sequence[qs.Scheme] | None = None,
    sections: str | None = None,
    scale: str = "quick",
    out: str | os.PathLike | None = None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    repetitions: int | None = None,
    stream: IO[str] | None = None,
    quiet: bool = False,
    interval_s: float = 10.0,
    report_only: bool = False,
    log: Callable[[str], None] | None = None,
) -> PackOutcome:
    """Runs (or resumes) the chosen sections for `schemes` at `scale` into `out` (default
    results/rfc7928-<scale>) and writes out/report.html."""
    from aqmlab.rfc7928 import report
    from aqmlab.study import Study, sweep

    if scale not in SCALES:
        raise ScenarioError(f"--scale {scale!r}: expected one of {', '.join(SCALES)}")
    schemes = list(schemes or qs.parse_aqm_list(qs.DEFAULT_AQMS))
    _check_schemes(schemes)
    chosen, skipped = select_sections(sections)
    out_dir = Path(out) if out is not None else Path("results") / f"rfc7928-{scale}"
    say = log or (lambda m: None if quiet else print(m, file=stream or sys.stderr, flush=True))
    started = time.monotonic()
    outcome = PackOutcome(out_dir, scale, [s.key for s in chosen], skipped=skipped)
    sweeps_dir = out_dir / "sweeps"
    sweeps_dir.mkdir(parents=True, exist_ok=True)
    derived = {}
    for s in chosen:
        src = sweeps_dir / f"{s.key}.source.toml"
        src.write_text(
            f"# {s.file} with the compared schemes (written by aqmlab rfc7928)\n"
            + scaling.to_toml(section_source(s, schemes, repetitions)),
            encoding="utf-8",
        )
        derived[s.key] = scaling.derive(src, scale, sweeps_dir / f"{s.key}.toml")
    # One pool of workers for every section (started by the first one with runs to do).
    with sweep.Backends(scheduler, jobs) as backends:
        for s in chosen:
            if report_only:
                continue
            say(f"rfc7928 ({scale}): section {s.rfc} {s.title} ({s.key})")
            done = sweep.run_sweep(
                derived[s.key],
                out_dir / s.key,
                stream=stream,
                quiet=quiet,
                interval_s=interval_s,
                backends=backends,
            )
            outcome.runs += done.total
            outcome.failed += done.failed
            outcome.failures += [(f"{s.key}/{r}", w, e) for r, w, e in done.failures]
    studies = {s.key: Study.open(out_dir / s.key) for s in chosen if (out_dir / s.key).is_dir()}
    outcome.report = report.write(
        out_dir,
        chosen,
        studies,
        [x.label for x in schemes],
        scale,
        skipped,
        {k: p.read_text(encoding="utf-8") for k, p in derived.items()},
    )
    outcome.wall_s = time.monotonic() - started
    return outcome
