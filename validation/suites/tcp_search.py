"""Random loss patterns, one TCP connection each, against ns-2.35 (docs/validation.md,
"Random loss patterns"). On demand (`--suite tcp_search --all`, about 5 minutes on two
cores).

The `tcp` suite's cases are chosen by hand, so they test what their author thought of. This
suite draws loss patterns at random from a fixed seed and runs each through the same
machinery (`tcp.run_case`: one Full-TCP upload in ns-2.35 and in aqmlab's `ns2.35-fulltcp`
preset, every segment compared). Three sets per variant:
- windows: in 80 KB, one segment lost (the 20th, 30th or 40th), often its first
  retransmission too, and two to five more among the next 23, the multi-loss windows where
  recovery rules differ: it is how the ns-2 rules of docs/tcp.md ("Full-TCP's own rules")
  were found;
- ACKs: one to four of the server's pure ACKs, sometimes its SYN-ACK, with up to two data
  segments, as two-way runs lose ACKs that queue behind the other direction's data;
- independent losses: data transmissions and ACKs each lost at 8 %, in transfers of 4 to 150
  segments.
One row per variant and set counts the patterns whose every segment, time, cwnd and ssthresh
agree; the note names the first patterns that differ. A pattern whose loss ns-2 never sends
once the others are in place does not apply and is left out of the count.
"""

from __future__ import annotations

import random
from pathlib import Path

from validation import sims
from validation.results import Row, row_maker
from validation.suites import tcp
from validation.suites.tcp import AckTarget, Case, NotSent, Target, seg

SUITE = "tcp_search"
PATTERNS = 300  # per variant
SEED = 1
TRANSFER = 80_000  # bytes: about 150 segments of 536, so losses at 20-63 fall mid-transfer
SHOWN = 5  # differing patterns named in a row's note
ACK_PATTERNS = 150  # per variant
BERNOULLI_PATTERNS = 300  # per variant
BERNOULLI_P = 0.08  # the knee's loss rate, about

Pattern = tuple[int, tuple[int, ...], bool]
# (data segments lost, the server's pure ACKs lost by their index among its pure ACKs,
# whether its first SYN-ACK is lost too)
AckPattern = tuple[tuple[int, ...], tuple[int, ...], bool]
# (bytes, the client's data transmissions lost by index, the server's pure ACKs lost by index)
BernoulliPattern = tuple[int, tuple[int, ...], tuple[int, ...]]


def patterns(n: int = PATTERNS, seed: int = SEED) -> list[Pattern]:
    """`n` distinct (first loss, later losses, first retransmission lost too), in order."""
    rng = random.Random(seed)
    drawn: set[Pattern] = set()
    while len(drawn) < n:
        first = rng.choice([20, 30, 40])
        k = rng.choice([2, 3, 4, 5])
        holes = tuple(sorted(rng.sample(range(first + 1, first + 24), k)))
        drawn.add((first, holes, rng.random() < 0.8))
    return sorted(drawn)


def case_of(variant: str, pattern: Pattern) -> Case:
    first, holes, lost_rexmit = pattern
    drops = [Target(seg(first))]
    drops += [Target(seg(first), 2)] if lost_rexmit else []
    drops += [Target(seg(h)) for h in holes]
    name = f"search_{variant}_{first}_{'_'.join(map(str, holes))}{'_r' if lost_rexmit else ''}"
    return Case(name, "a random loss pattern", variant, TRANSFER, drops)


def describe(pattern: Pattern) -> str:
    first, holes, lost_rexmit = pattern
    again = " (and its retransmission)" if lost_rexmit else ""
    return f"segment {first}{again}, {', '.join(map(str, holes))}"


def ack_patterns(n: int = ACK_PATTERNS, seed: int = SEED) -> list[AckPattern]:
    """`n` distinct patterns of zero to two lost data segments (among segments 20-45), one
    to four lost pure ACKs of the server, named by their index among its pure ACKs (from 0;
    among the first 120, which a transfer of 150 segments always sends), and one time in
    five the server's SYN-ACK."""
    rng = random.Random(seed)
    drawn: set[AckPattern] = set()
    while len(drawn) < n:
        data = tuple(sorted(rng.sample(range(20, 46), rng.choice([0, 1, 1, 2]))))
        acks = tuple(sorted(rng.sample(range(2, 120), rng.choice([1, 2, 3, 4]))))
        drawn.add((data, acks, rng.random() < 0.2))
    return sorted(drawn)


def ack_case_of(variant: str, pattern: AckPattern) -> Case:
    data, acks, synack = pattern
    name = f"search_ack_{variant}_d{'_'.join(map(str, data))}_a{'_'.join(map(str, acks))}"
    name += "_synack" if synack else ""
    drops = [Target(seg(k)) for k in data]
    lost = [AckTarget(synack=True)] if synack else []
    lost += [AckTarget(index=j) for j in acks]
    return Case(name, "random ACK losses", variant, TRANSFER, drops, ack_drops=lost)


def describe_acks(pattern: AckPattern) -> str:
    data, acks, synack = pattern
    lost = ("the SYN-ACK, " if synack else "") + f"pure ACKs {', '.join(map(str, acks))}"
    return lost + (f", segments {', '.join(map(str, data))}" if data else "")


def bernoulli_patterns(
    n: int = BERNOULLI_PATTERNS, p: float = BERNOULLI_P, seed: int = SEED
) -> list[BernoulliPattern]:
    """`n` transfers of 4 to 150 segments (sizes as a PackMime mix: mostly short), each data
    transmission among the first as many as there are segments and each of the server's
    first pure ACKs up to half that many lost with probability `p`: independent losses
    at the knee's rate, wherever they fall (the first segments, the last, retransmissions,
    several in a window), rather than the chosen windows of the other two sets."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        segs = rng.choice([4, 8, 15, 30, 60, 150])
        size = (segs - 1) * tcp.MSS + rng.randint(1, tcp.MSS)
        data = tuple(i for i in range(segs) if rng.random() < p)
        acks = tuple(i for i in range(segs // 2 + 1) if rng.random() < p)
        out.append((size, data, acks))
    return out


def bernoulli_case_of(variant: str, pattern: BernoulliPattern) -> Case:
    size, data, acks = pattern
    name = f"search_bern_{variant}_{size}_d{'_'.join(map(str, data))}_a{'_'.join(map(str, acks))}"
    drops = [Target(index=i) for i in data]
    lost = [AckTarget(index=i) for i in acks]
    return Case(name, "independent losses", variant, size, drops, ack_drops=lost)


def describe_bernoulli(pattern: BernoulliPattern) -> str:
    size, data, acks = pattern
    return (
        f"{size} bytes, data transmissions {', '.join(map(str, data)) or 'none'}, "
        f"pure ACKs {', '.join(map(str, acks)) or 'none'}"
    )


def _agrees(case: Case, out: Path) -> bool | None:
    """Whether every row passes; None when ns-2 never sends one of the losses."""
    try:
        rows, _, _ = tcp.run_case(case, out / SUITE)
    except NotSent:
        return None
    return all(r.verdict == "pass" for r in rows)


def _row(variant: str, kind: str, pats: list, cases: list[Case], label, out: Path) -> Row:
    agree = sims.parallel([lambda c=c: _agrees(c, out) for c in cases])
    applied = [(p, ok) for p, ok in zip(pats, agree, strict=True) if ok is not None]
    differ = [label(p) for p, ok in applied if not ok]
    skipped = len(pats) - len(applied)
    sizes = sorted({c.bytes for c in cases})
    each = f"{sizes[0]:,} bytes each" if len(sizes) == 1 else f"{sizes[0]:,}-{sizes[-1]:,} bytes"
    note = (
        f"{len(pats)} patterns drawn with seed {SEED}, {each}"
        + (f", {skipped} not applicable (ns-2 never sent the loss)" if skipped else "")
        + (f"; differing: {'; '.join(differ[:SHOWN])}" if differ else "")
        + (f" and {len(differ) - SHOWN} more" if len(differ) > SHOWN else "")
    )
    row = row_maker(SUITE, f"{variant}_{kind}", "-")
    return row(
        "patterns whose every segment agrees",
        len(applied),
        len(applied) - len(differ),
        kind="given",
        difference=float(len(differ)),
        tol=0.0,
        note=note,
    )


def run(out: Path, fast: bool) -> list[Row]:
    if fast:
        return []
    pats, acks, bern = patterns(), ack_patterns(), bernoulli_patterns()
    rows: list[Row] = []
    for v in tcp.VARIANTS:
        rows.append(_row(v, "random_losses", pats, [case_of(v, p) for p in pats], describe, out))
        cases = [ack_case_of(v, p) for p in acks]
        rows.append(_row(v, "random_ack_losses", acks, cases, describe_acks, out))
        cases = [bernoulli_case_of(v, p) for p in bern]
        rows.append(_row(v, "independent_losses", bern, cases, describe_bernoulli, out))
    return rows
