"""`python -m fuzz [--count N] [--seed S] [--workers W] [--write-docs]`: a fuzzing campaign
(`campaign`), its outcome counts printed and, with --write-docs, written to
docs/reliability.md with every failing scenario's index (rerun one with --only INDEX)."""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from fuzz import campaign

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--only", type=int, default=None, help="run scenario INDEX alone and show it")
    p.add_argument("--write-docs", action="store_true", help="write docs/reliability.md's table")
    p.add_argument("--failures", default=None, help="write the failing scenarios (JSON) here")
    a = p.parse_args(argv)
    if a.only is not None:
        doc = campaign.scenario_for(a.seed, a.only)
        print(json.dumps(doc, indent=1))
        o = campaign._alone(a.seed, a.only)
        print(o.kind, o.detail)
        return 0 if o.kind in campaign.GOOD else 1
    t0 = time.time()

    def progress(n, total, o):
        if o.kind in campaign.BAD or n % 500 == 0:
            print(
                f"[{n}/{total}] #{o.index} {o.kind} {o.detail[:200]}",
                file=sys.stderr,
                flush=True,
            )

    outcomes = campaign.campaign(a.seed, a.count, a.workers, progress)
    wall = time.time() - t0
    counts = collections.Counter(o.kind for o in outcomes)
    bad = [o for o in outcomes if o.kind in campaign.BAD]
    peak = max((o.peak_rss_mb for o in outcomes), default=0.0)
    print(f"largest peak resident memory of a worker: {peak:.0f} MB")
    print(
        f"{len(outcomes)} scenarios (seed {a.seed}) in {wall:.0f} s: "
        + ", ".join(f"{k} {counts.get(k, 0)}" for k in campaign.GOOD + campaign.BAD)
    )
    for o in bad:
        print(f"  #{o.index} {o.kind}: {o.detail}")
    if a.failures:
        Path(a.failures).write_text(json.dumps([o.__dict__ for o in bad], indent=1))
    if a.write_docs:
        write_docs(a, outcomes, counts, wall)
    return 1 if bad else 0


def write_docs(a, outcomes, counts, wall) -> None:
    path = REPO / "docs" / "reliability.md"
    text = path.read_text()
    marker = "<!-- campaign -->"
    head = text.split(marker)[0]
    rows = "\n".join(f"| {k} | {counts.get(k, 0)} |" for k in campaign.GOOD + campaign.BAD)
    reruns = sum(
        1 for o in outcomes if o.index % campaign.RERUN_EVERY == 0 and o.kind == "finished"
    )
    body = (
        f"{marker}\n`python -m fuzz --count {a.count} --seed {a.seed} --workers {a.workers}`: "
        f"{len(outcomes)} scenarios in {wall / 60:.0f} min on {a.workers} workers "
        f"({time.strftime('%Y-%m-%d')}); {reruns} finished runs were run twice and compared; "
        f"the largest peak resident memory of a worker (any run's peak is below it) was "
        f"{max((o.peak_rss_mb for o in outcomes), default=0.0):.0f} MB, under the guard's "
        f"budget of {campaign.BUDGET_GB:g} GB.\n\n"
        f"| outcome | scenarios |\n| --- | --- |\n{rows}\n"
    )
    path.write_text(head + body)


if __name__ == "__main__":
    sys.exit(main())
