"""Helpers for test_tune.py: a noisy objective with a known optimum that behaves like the
simulator under common random numbers, and tiny tune files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from aqmlab.tune.evaluate import Request

# The known optimum, in the fields of the tune file below.
OPTIMUM = {"queue.min_th": 20.0, "queue.max_th": 90.0, "queue.max_p": 0.05}
FLOOR = 1.0  # the objective's value at the optimum
# Noise: a part shared by every candidate on a seed (the workload of that seed: common random
# numbers), a smaller part of the candidate's own; both shrink as 1/sqrt(run length).
SHARED_SD, OWN_SD, REFERENCE_S = 0.3, 0.05, 300.0


def truth(settings: dict[str, float]) -> float:
    """A bowl in log-space: FLOOR + sum of squared log-ratios to the optimum."""
    return FLOOR + math.fsum(math.log(settings[k] / v) ** 2 for k, v in OPTIMUM.items())


class BowlEvaluator:
    """Replaces the simulator: `truth` plus seeded noise, mean zero. The shared part depends on
    the seed and the run length only, the own part on the settings too (by value, so the
    same request always gets the same number)."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.calls = 0
        self.requests = 0
        self.interrupt_after = interrupt_after

    def evaluate(self, requests: Sequence[Request]) -> list[dict]:
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        out = []
        for r in requests:
            self.requests += 1
            s = dict(r.settings)
            scale = math.sqrt(REFERENCE_S / r.duration_s)
            shared = np.random.default_rng([r.seed, int(r.duration_s)]).normal(0, SHARED_SD)
            key = [int(1e6 * s.get(k, 0)) for k in sorted(OPTIMUM)]
            own = np.random.default_rng([r.seed, int(r.duration_s), *key]).normal(0, OWN_SD)
            v = truth({**OPTIMUM, **s}) + (shared + own) * scale
            out.append({"p50_response_s": v, "utilization": 0.95})
        return out


BOWL_TUNE = """\
[tune]
name = "bowl"
scenario = "base.toml"
seeds = [1, 2, 3]
finalist_seeds = [4, 5, 6, 7]
heldout_seeds = [101, 102, 103, 104]
trials = 36
batch = 4
finalists = 3
sampler_seed = 7
param_constraints = ["queue.min_th < queue.max_th"]

[tune.rungs]
duration_s = [100.0, 300.0, 900.0]
warmup_s = 10.0
eta = 3

[[param]]
field = "queue.min_th"
low = 2
high = 150
log = true
int = true

[[param]]
field = "queue.max_th"
low = 6
high = 480
log = true
int = true

[[param]]
field = "queue.max_p"
low = 0.005
high = 0.5
log = true

[objective]
minimize = "p50_response_s"
constraints = ["utilization >= 0.9"]

[[baseline]]
name = "far"
set = { "queue.min_th" = 5, "queue.max_th" = 15, "queue.max_p" = 0.1 }
"""

# RED on the report tests' small Web network: runs of 2 and 4 simulated seconds.
SIM_TUNE = """\
[tune]
name = "tiny"
scenario = "base.toml"
set = {{ queue = {{ kind = "red", limit = 30 }} }}
seeds = [1, 2]
finalist_seeds = [3]
heldout_seeds = [11]
trials = {trials}
batch = 3
startup_trials = 3
finalists = 2
param_constraints = ["queue.min_th < queue.max_th"]

[tune.rungs]
duration_s = [2.5, 4.0]
warmup_s = 1.0
eta = 3

[[param]]
field = "queue.min_th"
low = 2
high = 10
int = true

[[param]]
field = "queue.max_th"
low = 6
high = 29
int = true

[[param]]
field = "queue.max_p"
low = 0.02
high = 0.5
log = true

[objective]
minimize = {{ p50_response_s = 1.0, p90_response_s = 0.5 }}

[[baseline]]
name = "defaults"
set = {{}}

[[baseline]]
name = "Floyd 1997"
set = {{ "queue.min_th" = 5, "queue.max_th" = 15, "queue.max_p" = 0.1, "queue.w_q" = 0.002 }}
"""


def write_tune(directory: Path, text: str, base: str, name: str = "tune.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "base.toml").write_text(base, encoding="utf-8")
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path
