"""One schedule through the kernel's discipline and through ours, compared line by line.

Each log line is a decision (`e …`, `d …`, `t …`) and, after ` | `, the state as `key=value`
pairs (harness/harness.h). Decisions must be identical; of the state, every key both sides
write is compared exactly (the kernel's units: our replay converts), keys only the kernel
writes are listed as not compared.

A discipline no installable package carries (kernel.EXTERNAL: DualPI2) is compared with the
kernel's log committed in its fixture (fixture.py); where its source is available the harness
runs too, and the result says whether the fixture is still what the harness writes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aqmlab import _core
from validation.linux_qdisc import fixture, kernel, schedule


@dataclass
class Case:
    name: str
    qdisc: str  # harness (kernel.SOURCES)
    pattern: str  # schedule.PATTERNS
    attrs: dict[str, int]  # tc attributes, in tc's units (µs, packets, bytes)
    ours: dict[str, object]  # our [queue] table
    seconds: float = 4.0
    seed: int = 1
    fast: bool = False
    draw: str = "u32"  # how the kernel reads its random words (schedule_replay::Draw)
    tick_first_ns: int | None = None
    tick_period_ns: int | None = None
    rate_bps: float = 10e6


@dataclass
class Result:
    case: Case
    events: int
    decision_diffs: int
    first_decision_diff: str  # "" when none
    state_lines_differing: int
    state_keys: list[str]  # compared
    kernel_only: list[str]  # written by the kernel harness only
    key_diffs: Counter = field(default_factory=Counter)
    first_state_diff: str = ""
    kernel_version: str = ""
    # EXTERNAL disciplines: the kernel log came from the fixture; whether the harness still
    # writes it (None: the source is not available here, the harness did not run).
    from_fixture: bool = False
    fixture_current: bool | None = None


def _split(line: str) -> tuple[str, dict[str, str]]:
    decision, _, state = line.partition(" | ")
    pairs = dict(kv.split("=", 1) for kv in state.split())
    return decision, pairs


def compare_logs(case: Case, kern: list[str], ours: list[str]) -> Result:
    if len(kern) != len(ours):
        raise RuntimeError(f"{case.name}: {len(kern)} kernel lines against {len(ours)} of ours")
    decision_diffs = 0
    first_decision = ""
    state_lines = 0
    first_state = ""
    key_diffs: Counter = Counter()
    compared: set[str] = set()
    kernel_only: set[str] = set()
    for i, (k, o) in enumerate(zip(kern, ours, strict=True)):
        kd, ks = _split(k)
        od, os_ = _split(o)
        if kd != od:
            decision_diffs += 1
            if not first_decision:
                first_decision = f"event {i}: kernel `{kd}`, ours `{od}`"
        common = ks.keys() & os_.keys()
        compared |= common
        kernel_only |= ks.keys() - os_.keys()
        bad = [key for key in sorted(common) if ks[key] != os_[key]]
        if bad:
            state_lines += 1
            key_diffs.update(bad)
            if not first_state:
                key = bad[0]
                first_state = f"event {i} ({kd}): {key} kernel {ks[key]}, ours {os_[key]}"
    return Result(
        case,
        len(kern),
        decision_diffs,
        first_decision,
        state_lines,
        sorted(compared),
        sorted(kernel_only),
        key_diffs,
        first_state,
    )


def run_case(case: Case, workdir: Path) -> Result:
    sched = schedule.generate(
        case.pattern,
        seed=case.seed,
        seconds=case.seconds,
        rate_bps=case.rate_bps,
        tick_first_ns=case.tick_first_ns,
        tick_period_ns=case.tick_period_ns,
    )
    current: bool | None = None
    if case.qdisc in kernel.EXTERNAL:
        kern = fixture.kernel_log(case)
        try:
            kernel.source_dir(case.qdisc)
        except kernel.KernelSourceMissing:
            pass
        else:
            current = fixture.run_kernel(case, workdir) == kern
        src = fixture.meta(case.qdisc)["source"]
        version = f"{src['file']} blob {src['git_blob'][:12]} ({src['upstream']}; fixture)"
    else:
        kern = kernel.run(case.qdisc, sched.harness_text(case.attrs), sched.words_bytes(), workdir)
        version = kernel.extract().version
    ours = _core.replay_schedule(
        json.dumps(case.ours),
        case.rate_bps,
        1000,
        "".join(sched.kinds),
        sched.times_ns,
        sched.sizes,
        sched.ds,
        sched.hashes,
        sched.words,
        case.draw,
    )
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / f"{case.name}.kernel.log").write_text("\n".join(kern) + "\n")
    (workdir / f"{case.name}.ours.log").write_text("\n".join(ours) + "\n")
    res = compare_logs(case, kern, ours)
    res.kernel_version = version
    res.from_fixture = case.qdisc in kernel.EXTERNAL
    res.fixture_current = current
    return res
