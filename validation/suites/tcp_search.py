"""Random loss patterns, one TCP connection each, against ns-2.35 (docs/validation.md,
"TCP: random loss patterns"). On demand (`--suite tcp_search --all`, about 8 minutes on two
cores).

The `tcp` suite's cases are chosen by hand, so they test what their author thought of. This
suite draws loss patterns at random from a fixed seed and runs each through the same
machinery (`tcp.run_case`: one Full-TCP upload of 80 KB in ns-2.35 and in aqmlab's
`ns2.35-fulltcp` preset, every segment compared). A pattern loses one segment (the 20th, 30th
or 40th), often its first retransmission too, and two to five more segments among the next 23,
the multi-loss windows where recovery rules differ: it is how the ns-2 rules of docs/tcp.md
("Full-TCP's own rules") were found. One row per variant counts the patterns whose every
segment, time, cwnd and ssthresh agree; the note names the first patterns that differ.
"""

from __future__ import annotations

import random
from pathlib import Path

from validation import sims
from validation.results import Row, row_maker
from validation.suites import tcp
from validation.suites.tcp import Case, Target, seg

SUITE = "tcp_search"
PATTERNS = 300  # per variant
SEED = 1
TRANSFER = 80_000  # bytes: about 150 segments of 536, so losses at 20-63 fall mid-transfer
SHOWN = 5  # differing patterns named in a row's note


def patterns(n: int = PATTERNS, seed: int = SEED) -> list[tuple[int, tuple[int, ...], bool]]:
    """`n` distinct (first loss, later losses, first retransmission lost too), in order."""
    rng = random.Random(seed)
    drawn: set[tuple[int, tuple[int, ...], bool]] = set()
    while len(drawn) < n:
        first = rng.choice([20, 30, 40])
        k = rng.choice([2, 3, 4, 5])
        holes = tuple(sorted(rng.sample(range(first + 1, first + 24), k)))
        drawn.add((first, holes, rng.random() < 0.8))
    return sorted(drawn)


def case_of(variant: str, pattern: tuple[int, tuple[int, ...], bool]) -> Case:
    first, holes, lost_rexmit = pattern
    drops = [Target(seg(first))]
    drops += [Target(seg(first), 2)] if lost_rexmit else []
    drops += [Target(seg(h)) for h in holes]
    name = f"search_{variant}_{first}_{'_'.join(map(str, holes))}{'_r' if lost_rexmit else ''}"
    return Case(name, "a random loss pattern", variant, TRANSFER, drops)


def describe(pattern: tuple[int, tuple[int, ...], bool]) -> str:
    first, holes, lost_rexmit = pattern
    again = " (and its retransmission)" if lost_rexmit else ""
    return f"segment {first}{again}, {', '.join(map(str, holes))}"


def _agrees(case: Case, out: Path) -> bool:
    rows, _, _ = tcp.run_case(case, out / SUITE)
    return all(r.verdict == "pass" for r in rows)


def run(out: Path, fast: bool) -> list[Row]:
    if fast:
        return []
    pats = patterns()
    rows: list[Row] = []
    for variant in tcp.VARIANTS:
        cases = [case_of(variant, p) for p in pats]
        agree = sims.parallel([lambda c=c: _agrees(c, out) for c in cases])
        differ = [describe(p) for p, ok in zip(pats, agree, strict=True) if not ok]
        note = (
            f"{len(pats)} patterns drawn with seed {SEED}, {TRANSFER // 1000} KB each"
            + (f"; differing: {'; '.join(differ[:SHOWN])}" if differ else "")
            + (f" and {len(differ) - SHOWN} more" if len(differ) > SHOWN else "")
        )
        row = row_maker(SUITE, f"{variant}_random_losses", "-")
        rows.append(
            row(
                "patterns whose every segment agrees",
                len(pats),
                sum(agree),
                kind="given",
                difference=float(len(differ)),
                tol=0.0,
                note=note,
            )
        )
    return rows
