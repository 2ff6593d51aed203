"""One measured run of a case on one side: the benchmark binary (`core`), the whole `aqmlab
run` (`run`) or the whole RFC 7928 pack with the core on each of its runs (`rfc7928`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bench import cases, child, scenarios
from bench.cases import Case
from bench.errors import BenchError
from bench.output import Output, parse
from bench.sides import Side, bench_env, python_env


@dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float
    peak_mib: float
    output: Output = field(default_factory=Output)  # the benchmark's lines (core cases)
    extra: dict[str, float] = field(default_factory=dict)  # the pack's per-run figures


def aqmlab(root: Path) -> Path:
    return root / ".venv" / "bin" / "aqmlab"


def core_env(
    case: Case, scenario: Path | None, quick: bool, seconds: float | None = None
) -> dict[str, str]:
    """The benchmark's variables for `case`: the issue's way of running it (a preset for the
    built-in scenario, or a resolved scenario file), its duration override, and under
    --quick the built-in scenario shortened (a file's quick form is in its JSON)."""
    env = {}
    if case.tcp:
        env["AQMLAB_BENCH_TCP"] = case.tcp
    if scenario is not None:
        env["AQMLAB_BENCH_SCENARIO"] = str(scenario)
    if seconds is None and quick:
        seconds = case.quick_seconds if case.builtin else None
    elif seconds is None:
        seconds = case.seconds
    if seconds is not None:
        env["AQMLAB_BENCH_SECONDS"] = f"{seconds:g}"
    return bench_env(env)


def core(root: Path, case: Case, side: Side, scenario: Path | None, quick: bool) -> Sample:
    c = child.run(
        [side.bench, "--bench"],  # as `cargo bench` starts it
        core_env(case, scenario, quick),
        root,
        f"{case.key} ({side.name}'s benchmark)",
    )
    out = parse(c.stdout)
    if out.value("bottleneck packets") is None:
        raise BenchError(f"{case.key} ({side.name}): no `bottleneck packets` line in its output")
    # Its own high-water mark (VmHWM), not ru_maxrss: a child's ru_maxrss is at least the
    # resident size of this driver when it forked (the kernel keeps the pre-exec memory's
    # high-water mark), ≈15 MiB, more than the greedy benchmark's whole peak.
    peak = out.value("peak resident memory") or c.peak_mib
    return Sample(c.wall_s, c.cpu_s, peak, out)


# A binary's refusal of a field it does not know (serde's message).
UNKNOWN_FIELD = re.compile(r"unknown field `([A-Za-z0-9_]+)`")
# At most this many fields left out of one scenario before giving up.
MAX_LEFT_OUT = 40


def check_core(
    root: Path, case: Case, side: Side, scenario: Path | None
) -> tuple[Path | None, list[str]]:
    """One simulated second of the case, untimed, before any timed run. An older binary
    refuses a field it does not know (a feature added since); that field is left out of this
    side's copy of the scenario (`<file>-<side>.json`) and the check runs again. Returns the
    file this side times and the fields left out (reported on the page): the reference then
    runs without features it never had, at their defaults' absence; its benchmark's
    `bottleneck packets` and loss lines show whether both sides simulated the same thing."""
    left_out: list[str] = []
    path = scenario
    while True:
        try:
            child.run(
                [side.bench, "--bench"],
                core_env(case, path, False, seconds=1.0),
                root,
                f"{case.key}: {side.name}'s benchmark on {path or 'its built-in scenario'}",
            )
            return path, left_out
        except BenchError as e:
            m = UNKNOWN_FIELD.search(str(e))
            if scenario is None or m is None or len(left_out) >= MAX_LEFT_OUT:
                raise
            left_out.append(m.group(1))
            doc = json.loads(scenario.read_text(encoding="utf-8"))
            for key in left_out:
                drop_key(doc, key)
            path = scenario.with_name(f"{scenario.stem}-{side.key}.json")
            path.write_text(json.dumps(doc), encoding="utf-8")


def drop_key(doc: object, key: str) -> None:
    """Removes `key` from every object in the JSON document `doc`."""
    if isinstance(doc, dict):
        doc.pop(key, None)
        for v in doc.values():
            drop_key(v, key)
    elif isinstance(doc, list):
        for v in doc:
            drop_key(v, key)


def run(root: Path, case: Case, side: Side, quick: bool, work: Path) -> Sample:
    out = work / f"{side.key}-{case.key}"
    shutil.rmtree(out, ignore_errors=True)
    argv = [aqmlab(root), "run", case.scenario, "--out", out]
    for s in scenarios.sets(case, quick):
        argv += ["--set", s]
    c = child.run(argv, python_env(side), root, f"{case.key} ({side.name}'s aqmlab run)")
    shutil.rmtree(out, ignore_errors=True)
    return Sample(c.wall_s, c.cpu_s, c.peak_mib)


def rfc7928(root: Path, case: Case, side: Side, quick: bool, work: Path) -> Sample:
    """The pack, then its report alone (`--report-only`), then the core on every run's
    resolved scenario (its summary.json). A run's CPU through the whole command is the pack's
    CPU less the report's, per run; the core's, the benchmarks' CPU summed, per run."""
    out = work / f"{side.key}-{case.key}"
    shutil.rmtree(out, ignore_errors=True)
    argv = [aqmlab(root), "rfc7928", *cases.rfc7928_args(quick), "--out", out]
    what = f"{case.key} ({side.name}'s aqmlab rfc7928)"
    pack = child.run(argv, python_env(side), root, what)
    report = child.run([*argv, "--report-only"], python_env(side), root, what + " --report-only")
    summaries = sorted(out.glob("*/runs/*/summary.json"))
    if not summaries:
        raise BenchError(f"{what}: no runs/*/summary.json under {out}")
    core_cpu = core_wall = 0.0
    scenario = out / "core-scenario.json"
    for s in summaries:
        resolved = json.loads(s.read_text(encoding="utf-8"))["scenario"]
        scenario.write_text(json.dumps(resolved), encoding="utf-8")
        c = child.run(
            [side.bench, "--bench"],
            bench_env({"AQMLAB_BENCH_SCENARIO": str(scenario)}),
            root,
            f"{case.key} ({side.name}'s benchmark on {s.parent.name})",
        )
        core_cpu += c.cpu_s
        core_wall += c.wall_s
    shutil.rmtree(out, ignore_errors=True)
    n = len(summaries)
    extra = {
        "runs": float(n),
        "report CPU": report.cpu_s,
        "whole CPU per run": (pack.cpu_s - report.cpu_s) / n,
        "core CPU per run": core_cpu / n,
        "core wall per run": core_wall / n,
    }
    return Sample(pack.wall_s, pack.cpu_s, pack.peak_mib, extra=extra)


def check_package(root: Path, side: Side) -> None:
    """That `aqmlab` imports from where this side means it to (the reference's unpacked wheel,
    or this tree's python/src), and its bytecode compiled ahead, as an installed package has
    it: the first timed run then does not pay for compiling (where PYTHONDONTWRITEBYTECODE
    is set, every run would)."""
    want = (side.package or root / "python" / "src") / "aqmlab"
    python = root / ".venv" / "bin" / "python"
    p = subprocess.run(
        [python, "-c", "import aqmlab; print(aqmlab.__file__)"],
        env=python_env(side),
        cwd=root,
        capture_output=True,
        text=True,
    )
    got = Path(p.stdout.strip()).parent if p.returncode == 0 else None
    if got is None or got.resolve() != want.resolve():
        raise BenchError(
            f"{side.name}: `import aqmlab` gives {got or p.stderr.strip()}, not {want}"
            + ("" if side.package else ": run `make bootstrap` in this tree")
        )
    subprocess.run([python, "-m", "compileall", "-q", str(want)], env=python_env(side), check=True)
