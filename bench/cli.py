"""`python3 -m bench` (`make bench`): builds both sides, measures the cases alternated, and
prints the section, which it also writes into docs/performance.md after a full run."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

from bench import build, cases, child, machine, markers, measure, report, scenarios
from bench.errors import BenchError
from bench.results import CaseResult
from bench.sides import Side, base_env

ROOT = Path(__file__).resolve().parents[1]
DOC = Path("docs/performance.md")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python3 -m bench",
        description="Performance figures of this tree and a reference commit, side by side "
        "(whole processes, alternated), written into docs/performance.md.",
    )
    ap.add_argument("--cases", help=f"comma-separated subset of: {', '.join(cases.BY_KEY)}")
    ap.add_argument("--runs", type=int, help="runs per side and case (default 5; --quick 1)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="short simulated durations and the pack's smoke scale, for CI and development "
        "(never written into the page)",
    )
    ap.add_argument("--no-write", action="store_true", help="print the section only")
    ap.add_argument(
        "--reference", default=cases.REFERENCE, help=f"commit (default {cases.REFERENCE})"
    )
    ap.add_argument(
        "--reference-bench",
        type=Path,
        metavar="EXE",
        help="an already built benchmark binary as the reference, instead of building the "
        "commit (core cases only)",
    )
    args = ap.parse_args(argv)
    if args.runs is None:
        args.runs = 1 if args.quick else 5
    if args.runs < 1:
        ap.error("--runs: expected at least 1")
    return args


def say(msg: str) -> None:
    print(f"make bench: {msg}", file=sys.stderr, flush=True)


def tree_commit(root: Path) -> str:
    short = build.git(root, "rev-parse", "--short=7", "HEAD")
    dirty = build.git(root, "status", "--porcelain", "--untracked-files=no")
    return short + (" (with uncommitted changes)" if dirty else "")


def make_sides(args: argparse.Namespace, chosen: list[cases.Case]) -> tuple[Side, Side]:
    whole = any(c.kind != "core" for c in chosen)
    if args.reference_bench is not None:
        if whole:
            raise BenchError("--reference-bench times the core only: choose core --cases")
        exe = args.reference_bench.resolve()
        if not exe.is_file():
            raise BenchError(f"--reference-bench {exe}: no such file")
    else:  # the reference commit found (and checked out) before anything is built
        tree, full = build.reference_tree(ROOT, args.reference)
    new_bench = build.bench_binary(ROOT, base_env(), "this tree")
    new = Side("new", "this tree", tree_commit(ROOT), new_bench)
    if args.reference_bench is not None:
        return Side("ref", "reference", f"binary {exe.name}", exe), new
    ref_bench = build.bench_binary(tree, build.reference_env(tree), f"reference {full[:7]}")
    package = None
    if whole:
        package = build.reference_package(tree, ROOT / ".venv" / "bin" / "maturin")
    return Side("ref", "reference", full[:7], ref_bench, package), new


def measure_case(
    case: cases.Case,
    sides: tuple[Side, Side],
    scenarios_by_side: dict[str, Path | None],
    args,
    work: Path,
) -> CaseResult:
    result = CaseResult(case)  # simulated seconds: the benchmark's own line, or set below
    started = time.monotonic()
    for i in range(args.runs):
        for side in sides:  # A B A B …: pair i saw about the same machine
            if case.kind == "core":
                scenario = scenarios_by_side.get(side.key)
                s = measure.core(ROOT, case, side, scenario, args.quick)
            elif case.kind == "run":
                s = measure.run(ROOT, case, side, args.quick, work)
            else:
                s = measure.rfc7928(ROOT, case, side, args.quick, work)
            result.samples.setdefault(side.key, []).append(s)
        ref, new = (result.samples[k][-1] for k in ("ref", "new"))
        left = (time.monotonic() - started) / (i + 1) * (args.runs - i - 1)
        say(
            f"{case.key} {i + 1}/{args.runs}: CPU {ref.cpu_s:.3f} s (reference), "
            f"{new.cpu_s:.3f} s (this tree)"
            + (f"; ≈{left:.0f} s more for this case" if left else "")
        )
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    try:
        chosen = cases.select(args.cases)
        if not measure.aqmlab(ROOT).exists():
            raise BenchError(f"{measure.aqmlab(ROOT)} is missing: run `make bootstrap` first")
        writes = not (args.no_write or args.quick) and len(chosen) == len(cases.CASES)
        if writes:  # a page without its markers is refused now, not after the whole run
            markers.check(ROOT / DOC)
        load_before = machine.load()
        sides = make_sides(args, chosen)
        work = ROOT / ".bench" / "work"
        files = {
            c.key: scenarios.resolve(ROOT, measure.aqmlab(ROOT), c, args.quick, work)
            for c in chosen
            if c.scenario is not None
        }
        # Each side's scenario file per core case, and the fields left out of the
        # reference's (an older binary refuses fields it does not know).
        side_files: dict[str, dict[str, Path | None]] = {}
        left_out: dict[str, list[str]] = {}
        for c in chosen:
            if c.kind != "core":
                continue
            for side in sides:
                path, dropped = measure.check_core(ROOT, c, side, files.get(c.key))
                side_files.setdefault(c.key, {})[side.key] = path
                if dropped:
                    left_out[f"{c.key} ({side.name})"] = dropped
        if any(c.kind != "core" for c in chosen):
            for side in sides:
                measure.check_package(ROOT, side)
        results = {}
        for n, c in enumerate(chosen, 1):
            say(f"case {n}/{len(chosen)}: {c.key}")
            core_files = side_files.get(c.key, {}) if c.kind == "core" else {}
            results[c.key] = measure_case(c, sides, core_files, args, work)
            if c.kind == "run":
                results[c.key].simulated_s = scenarios.duration(files[c.key])
        run = report.Run(
            ref=sides[0],
            new=sides[1],
            results=results,
            runs=args.runs,
            quick=args.quick,
            machine=machine.describe(),
            date=datetime.date.today().isoformat(),
            load_before=load_before,
            load_after=machine.load(),
            elapsed_s=time.monotonic() - started,
            rss_floor_mib=child.floor_mib(),
            left_out=left_out,
        )
        text = report.render(run)
        print(text)
        if not writes:
            why = "--no-write" if args.no_write else "--quick" if args.quick else "--cases"
            say(f"{DOC} not written ({why}: only a full run of every case is)")
        elif markers.write(ROOT / DOC, text):
            say(f"{DOC}: section rewritten")
    except BenchError as e:
        say(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    return 0
