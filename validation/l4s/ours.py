"""Our side: the L4S pack's parts the published figures cover (`rttfair_10`, `rttfair_50`,
`ratestep`), run at a scale with `aqmlab reproduce`'s machinery (its sweep files, derived
per scale; finished runs are kept and a rerun resumes), then read as the pack's report reads
them (`study_l4s.rttfair_table`, the queue's delay over time)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from aqmlab.reproduce import scaling, study_dir, study_l4s
from aqmlab.study import Study, sweep
from validation.l4s import compare

# Scenario 1's parts and their bottleneck rates (the published table's `Rate`).
S1_PARTS = {"rttfair_10": 10, "rttfair_50": 50}
S2_PART = "ratestep"
# Scenario 2's step: at 30 s of 60 (`[Arg::s2_*]`); "back" means under FQ-CoDel's target, as
# the pack's report measures it.
STEP_S = 30.0


def run_parts(parts: list[str], scale: str, out: Path, jobs: int) -> dict[str, Study]:
    """Runs (or resumes) `parts` of the L4S pack at `scale` into `out/<part>`."""
    studies = {}
    with sweep.Backends(None, jobs) as backends:
        for part in parts:
            src = study_dir("L4S") / study_l4s.PARTS[part]
            sweep_file = scaling.derive(src, scale, out / "sweeps" / f"{part}.toml")
            done = sweep.run_sweep(sweep_file, out / part, backends=backends, quiet=True)
            if done.failed:
                raise RuntimeError(f"{part}: {done.failed} runs failed: {done.failures[:3]}")
            studies[part] = Study.open(out / part)
    return studies


def s1(studies: dict[str, Study]) -> pl.DataFrame:
    """Our Scenario 1 rows of the parts run, keyed as the published table."""
    frames = [
        compare.ours_s1(study_l4s.rttfair_table(studies[part]), rate)
        for part, rate in S1_PARTS.items()
        if part in studies
    ]
    return pl.concat(frames) if frames else pl.DataFrame()


def s2(study: Study, figures: pl.DataFrame) -> pl.DataFrame:
    """Our value of each published Scenario 2 figure: the largest TCP RTT as the path's RTT
    plus the queue's peak delay after the step (backlog ÷ capacity over Flent's 50-ms
    steps), and the spike's length as the time from the step until that delay is back under
    5 ms."""
    rows = []
    for f in figures.filter(pl.col("scenario") == 2).iter_rows(named=True):
        where = {"cc": f["cc"], "qdisc": f["qdisc"], "step": f["step"], "rtt": f["rtt"]}
        t, delay, _ = study_l4s.delay_over_time(study, where, study_l4s.UPLOAD)
        peak, drained = compare.peak_and_drain(t, delay, STEP_S, study_l4s.DRAIN_MS)
        bound = False
        if f["metric"].startswith("maximum TCP RTT"):
            ours = float(f["rtt"].removesuffix("ms")) + peak
        elif not math.isnan(drained):
            ours = drained
        else:
            # Not back within the run: as long as the run lets us see, a lower bound.
            ours, bound = float(np.max(t) - STEP_S), True
        rows.append({**f, "ours": ours, "ours_at_least": bound})
    return pl.DataFrame(rows)
