"""Compares aqmlab's L4S pack with the L4S test suite's published figures.

    python -m validation.l4s [--scale smoke|quick|full] [--out DIR] [--jobs N] [--write-docs]

Runs (or resumes) the pack's `rttfair_10`, `rttfair_50` and (not at the smoke scale)
`ratestep` parts into OUT (default out/l4s-<scale>), prints the Scenario 1 summary (per rate
and queue: median and largest difference in flow 1's share, rows ordered the other way) and
the Scenario 2 figures. `--write-docs` stores the results in validation/l4s/ and rewrites
docs/validation.md's section "Against the L4S test suite". Exit status 2 when nothing could
be compared (no run matched a published row).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from aqmlab.reproduce import study_dir, study_l4s
from validation.l4s import compare, ours, published, section

DOCS = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _prague_preset() -> str:
    """The Prague preset the pack's Scenario 1 files name."""
    text = (study_dir("L4S") / study_l4s.PARTS["rttfair_10"]).read_text(encoding="utf-8")
    found = re.findall(r"linux-prague[\w.-]*", text)
    return found[0] if found else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m validation.l4s", description=__doc__.split("\n")[1]
    )
    ap.add_argument("--scale", default="quick", choices=["smoke", "quick", "full"])
    ap.add_argument("--out", type=Path, default=None, help="work directory")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--write-docs", action="store_true", help="store and rewrite the docs section")
    args = ap.parse_args(argv)
    out = args.out or Path("out") / f"l4s-{args.scale}"
    parts = [*ours.S1_PARTS] + ([] if args.scale == "smoke" else [ours.S2_PART])
    studies = ours.run_parts(parts, args.scale, out, args.jobs)
    joined = compare.join_s1(published.s1_table(), ours.s1(studies))
    if joined.height == 0:
        print("validation.l4s: no run matched a published row", file=sys.stderr)
        return 2
    summary = compare.summary_s1(joined)
    print(f"Scenario 1 against s1_table.md ({args.scale} scale, {joined.height} rows):")
    for r in summary.iter_rows(named=True):
        print(
            f"  {r['rate']:>3} Mbit/s {r['qdisc']:<12} {r['rows']:>3} rows: share difference "
            f"median {r['median diff (points)']:.1f}, max {r['max diff (points)']:.1f} points; "
            f"wrong order {r['wrong order']} ({r['wrong order, clear split']} clear)"
        )
    s2 = None
    if ours.S2_PART in studies:
        s2 = ours.s2(studies[ours.S2_PART], published.readme_figures())
        for r in s2.iter_rows(named=True):
            print(
                f"  Scenario 2 {r['cc']} {r['qdisc']} {r['step']} {r['rtt']}: {r['metric']}: "
                f"published {r['relation']} {r['published']:g}, aqmlab "
                f"{'at least ' if r['ours_at_least'] else ''}{r['ours']:.1f}"
            )
    if args.write_docs:
        meta = {"scale": args.scale, "commit": _commit(), "prague_preset": _prague_preset()}
        section.store(joined, s2, meta)
        DOCS.write_text(section.splice(DOCS.read_text(), section.render(joined, s2, meta)))
        print(f"wrote {DOCS} and validation/l4s/results_*")
    return 0


if __name__ == "__main__":
    sys.exit(main())
