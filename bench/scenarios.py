"""Scenario files resolved to the JSON the benchmark binary reads (`aqmlab validate FILE --set
... --print`), by this tree's package: both sides' binaries then run the very same file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bench.cases import Case
from bench.errors import BenchError


def sets(case: Case, quick: bool) -> list[str]:
    """The case's `--set` overrides; under --quick also a short duration, a quarter of it
    warm-up (the work per simulated second is what is timed; warm-up only decides which
    records are kept)."""
    out = list(case.sets)
    if quick:
        out += [f"duration_s={case.quick_seconds}", f"warmup_s={case.quick_seconds / 4}"]
    return out


def resolve(root: Path, aqmlab: Path, case: Case, quick: bool, folder: Path) -> Path:
    """Writes the case's resolved scenario to folder/<key>[-quick].json and returns its path."""
    assert case.scenario is not None
    argv = [str(aqmlab), "validate", case.scenario, "--print"]
    for s in sets(case, quick):
        argv += ["--set", s]
    p = subprocess.run(argv, cwd=root, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BenchError(f"aqmlab validate {case.scenario}: {msg}")
    json.loads(p.stdout)  # a JSON document, not a message
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case.key}{'-quick' if quick else ''}.json"
    path.write_text(p.stdout, encoding="utf-8")
    return path


def duration(path: Path) -> float:
    """The simulated seconds of a resolved scenario."""
    return float(json.loads(path.read_text(encoding="utf-8"))["duration_s"])
