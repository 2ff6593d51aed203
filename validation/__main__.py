"""Runs the differential validation against ns-2.35.

    python -m validation [--all] [--suite NAME ...] [--out DIR] [--write-docs [--keep CSV]]

Without `--all`, the fast subset (what `make test` runs). The rows go to OUT/results.csv
(and .parquet); with `--write-docs` (full runs) also to validation/results.csv and a
regenerated docs/validation.md (`--keep CSV` carries over the rows of suites not run now).
Exit status 1 when a row fails, 2 when ns-2 is missing or a script fails.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from validation import docs, ns2, results
from validation.linux_qdisc.kernel import KernelSourceMissing
from validation.suites import aqm, e2e, linux_qdisc, study_c_ared, tcp, tcp_search, workload

SUITES = {
    "aqm": aqm.run,
    "e2e": e2e.run,
    "linux_qdisc": linux_qdisc.run,
    "study_c_ared": study_c_ared.run,
    "tcp": tcp.run,
    "tcp_search": tcp_search.run,
    "workload": workload.run,
}
# Suites whose reference is not ns-2 (linux_qdisc: the kernel's own code, from Debian's
# linux-source package).
NOT_NS2 = {"linux_qdisc"}
HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation", description=__doc__.split("\n")[1])
    ap.add_argument("--all", action="store_true", help="every case (default: the fast subset)")
    ap.add_argument("--suite", action="append", choices=sorted(SUITES), help="only these suites")
    ap.add_argument("--out", type=Path, default=Path("out/validation"), help="work directory")
    ap.add_argument(
        "--write-docs",
        action="store_true",
        help="write validation/results.csv and docs/validation.md from this run",
    )
    ap.add_argument(
        "--keep",
        type=Path,
        metavar="CSV",
        help="with --write-docs: the rows of suites not run now come from this earlier "
        "results file (e.g. validation/results.csv), marked as such on the page",
    )
    args = ap.parse_args(argv)
    ran = args.suite or sorted(SUITES)
    if set(ran) - NOT_NS2:
        try:
            ns2.binary()
        except ns2.Ns2Missing as e:
            print(f"validation: {e}", file=sys.stderr)
            return 2
    rows: list[results.Row] = []
    for name in list(ran):
        t0 = time.monotonic()
        try:
            got = SUITES[name](args.out, fast=not args.all)
        except ns2.Ns2Failed as e:
            print(f"validation: suite {name}: {e}", file=sys.stderr)
            return 2
        except KernelSourceMissing as e:
            # The fast subset (make test) skips it where the package cannot be installed;
            # a full run (make validate) does not pass without its reference.
            if args.all:
                print(f"validation: suite {name}: {e}", file=sys.stderr)
                return 2
            print(f"{name}: skipped: {e}")
            ran.remove(name)
            continue
        rows.extend(got)
        failed = [r for r in got if r.verdict == "fail"]
        unresolved = [r for r in got if r.verdict == "unresolved"]
        print(
            f"{name}: {len(got)} comparisons, {len(failed)} failed, {len(unresolved)} unresolved "
            f"({time.monotonic() - t0:.0f} s)"
        )
        for r in failed + unresolved:
            interval = "" if math.isnan(r.interval) else f" ± {r.interval:.3g}"
            print(
                f"  {r.verdict.upper()} {r.scenario}: {r.metric}: "
                f"{docs.REFERENCE.get(r.suite, 'ns-2')} {r.ns2:.6g}, "
                f"aqmlab {r.aqmlab:.6g}, difference {r.difference:.3g}{interval} > "
                f"{r.tolerance:.3g}"
            )
    results.write(rows, args.out / "results.csv")
    if args.write_docs:
        kept = [r for r in results.read(args.keep) if r.suite not in ran] if args.keep else []
        results.write(rows + kept, HERE / "results.csv")
        docs.write(
            rows + kept,
            HERE.parent / "docs" / "validation.md",
            full=args.all,
            kept={r.suite for r in kept},
        )
    return 1 if any(not r.passed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
