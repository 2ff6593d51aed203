"""The RFC 7928 quick pack's runs, CPU per run, this tree against another package, in pairs:

    python3 bench/pack_runs.py --reference DIR [--pairs 7] [--work /tmp/pack-runs]

DIR holds the other side's `aqmlab` package (its sources and its built `_core` extension, e.g.
`git archive COMMIT python/src/aqmlab` unpacked, with the commit's extension copied in), put
first on PYTHONPATH; this tree's side is its `.venv`. Each pair runs both packs in new
directories (nothing is deleted while measuring: on this machine's ext4 without a journal,
files created right after others were removed cost more, docs/performance.md), reference
first. Then the core alone (the benchmark binary, built here) on each run's resolved
scenario (its summary.json) of one pack of each side, CPU summed per run. Prints each
sample and the medians; figures as in docs/performance.md, "The whole command".
Standard library only; needs `make bootstrap` and `cargo bench -p aqmlab --no-run`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"


def pack(side: str, reference: Path, out: Path) -> dict[str, float]:
    env = dict(os.environ)
    if side == "reference":
        env["PYTHONPATH"] = str(reference)
    child = [str(PYTHON), str(ROOT / "bench" / "pack_child.py"), str(out)]
    p = subprocess.run(child, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def benchmark_binary() -> Path:
    built = sorted(
        (ROOT / "target" / "release" / "deps").glob("throughput-*"),
        key=lambda p: p.stat().st_mtime,
    )
    runnable = [p for p in built if p.suffix == "" and os.access(p, os.X_OK)]
    if not runnable:
        sys.exit("no benchmark binary: run `cargo bench -p aqmlab --no-run` first")
    return runnable[-1]


def core_ms(out: Path, binary: Path) -> float:
    """The core alone on every run of the pack in `out`: CPU per run, ms."""
    summaries = sorted(out.glob("*/runs/*/summary.json"))
    scenario = out / "core-scenario.json"
    total = 0.0
    for s in summaries:
        resolved = json.loads(s.read_text(encoding="utf-8"))["scenario"]
        scenario.write_text(json.dumps(resolved), encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = {**os.environ, "AQMLAB_BENCH_SCENARIO": str(scenario)}
        subprocess.run([str(binary), "--bench"], env=env, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total += after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return 1000.0 * total / max(len(summaries), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("/tmp/pack-runs"))
    args = ap.parse_args()
    binary = benchmark_binary()
    samples: dict[str, list[dict[str, float]]] = {"reference": [], "this tree": []}
    for i in range(args.pairs):
        for side in samples:
            out = args.work / f"{side.replace(' ', '-')}-{i}-{os.getpid()}"
            samples[side].append(pack(side, args.reference, out))
            print(side, json.dumps(samples[side][-1]), flush=True)
    for side, rows in samples.items():
        med = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
        print(f"{side}: medians {med}")
    ref = [r["cpu_ms"] for r in samples["reference"]]
    new = [r["cpu_ms"] for r in samples["this tree"]]
    ratios = sorted(b / a for a, b in zip(ref, new, strict=True))
    print(f"this tree / reference, CPU per run, per pair: median {statistics.median(ratios):.3f}")
    last = args.pairs - 1
    for side in samples:
        out = args.work / f"{side.replace(' ', '-')}-{last}-{os.getpid()}"
        print(f"core alone on {side}'s runs: {core_ms(out, binary):.2f} ms per run")


if __name__ == "__main__":
    main()
