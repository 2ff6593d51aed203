"""The Markdown section `make bench` writes between docs/performance.md's markers (and
prints): the machine and the method, then three tables — each case on both sides, the
benchmark's own figures per case, and the ratios issue 34's targets use."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench import ratios
from bench.results import CaseResult, cpu, cpu_per_packet, extra, line, peak, wall
from bench.sides import Side
from bench.stats import Spread, paired

# The lines every benchmark binary since the reference prints; the report shows some of them
# and passes on any other line a newer binary adds (`memory per open connection`).
KNOWN_LINES = {
    "wall time",
    "bottleneck packets",
    "bottleneck packets/wall-s",
    "events/wall-s",
    "simulated s/wall-s",
    "utilization (data dir.)",
    "loss rate (data dir.)",
    "peak packets in flight",
    "connections opened",
    "connections/wall-s",
    "exchanges recorded",
    "exchanges/wall-s",
    "peak resident memory",
}
SHOWN_LINES = ("bottleneck packets/wall-s", "simulated s/wall-s", "loss rate (data dir.)")


@dataclass
class Run:
    """Everything one `make bench` measured, for the report."""

    ref: Side
    new: Side
    results: dict[str, CaseResult]  # by case key, in the table's order
    runs: int
    quick: bool
    machine: dict[str, str]
    date: str
    load_before: str
    load_after: str
    elapsed_s: float
    rss_floor_mib: float  # ru_maxrss of a child that does nothing: the driver's own size
    # Fields an older binary refused, left out of its copy of a case's scenario, by case.
    left_out: dict[str, list[str]] = field(default_factory=dict)


def num(x: float | None, digits: int = 3) -> str:
    """`x` to `digits` significant figures, thousands separated: 0.171, 12.3, 1,390."""
    if x is None or not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def count(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def times(x: float | None) -> str:
    """A ratio: three decimals near 1 (where ×1.019 and ×1.02 differ), else three figures."""
    if x is None:
        return "—"
    return f"×{x:.3f}" if x < 10 else f"×{num(x)}"


def spread(s: Spread | None, unit: str, scale: float = 1.0) -> str:
    if s is None:
        return "—"
    text = f"{num(s.median * scale)} {unit}".rstrip()
    if s.n > 1:
        text += f" ({num(s.lo * scale)}–{num(s.hi * scale)})"
    return text


def arrow(a: float | None, b: float | None, unit: str, scale: float = 1.0) -> str:
    """reference → this tree, medians."""
    if a is None and b is None:
        return "—"
    sa = num(None if a is None else a * scale)
    sb = num(None if b is None else b * scale)
    return f"{sa} → {sb} {unit}".rstrip()


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(head), _row(["---"] * len(head)), *(_row(r) for r in rows)]


def _simulated(r: CaseResult) -> str:
    if r.case.kind == "rfc7928":
        n = r.median("new", extra("runs")) or r.median("ref", extra("runs"))
        return f"{n:.0f} runs" if n else "—"
    seconds = r.simulated_s
    if seconds is None:
        got = [s.output.seconds for ss in r.samples.values() for s in ss if s.output.seconds]
        seconds = got[0] if got else None
    return "—" if seconds is None else f"{num(seconds)} s"


def main_table(run: Run) -> list[str]:
    head = [
        "work",
        "simulated",
        f"CPU, reference {run.ref.commit}",
        f"CPU, this tree {run.new.commit}",
        "this tree / reference, CPU (pairs)",
        "wall, reference → this tree",
        "peak memory, reference → this tree",
    ]
    rows = []
    for r in run.results.values():
        p = paired(r.values("new", cpu), r.values("ref", cpu))
        ratio = "—" if p is None else times(p.median)
        if p is not None and p.n > 1:
            ratio += f" ({p.lo:.2f}–{p.hi:.2f})"
        rows.append(
            [
                f"{r.case.label} (`{r.case.key}`)",
                _simulated(r),
                spread(r.spread("ref", cpu), "s"),
                spread(r.spread("new", cpu), "s"),
                ratio,
                arrow(r.median("ref", wall), r.median("new", wall), "s"),
                arrow(r.median("ref", peak), r.median("new", peak), "MiB"),
            ]
        )
    return _table(head, rows)


def _extra_labels(results: list[CaseResult]) -> list[str]:
    """Labels of printed lines that are not among the known ones, in order of appearance."""
    seen: dict[str, None] = {}
    for r in results:
        for ss in r.samples.values():
            for s in ss:
                for label in s.output.figures:
                    if label not in KNOWN_LINES:
                        seen.setdefault(label)
    return list(seen)


def _unit(results: list[CaseResult], label: str) -> str:
    for r in results:
        for ss in r.samples.values():
            for s in ss:
                f = s.output.figures.get(label)
                if f is not None:
                    return f.unit
    return ""


def core_table(run: Run) -> list[str]:
    cores = [r for r in run.results.values() if r.case.kind == "core"]
    if not cores:
        return []
    labels = [*SHOWN_LINES, *_extra_labels(cores)]
    head = ["work", "bottleneck packets", "CPU per bottleneck packet"]
    head += [f"{label} (the benchmark's line)" for label in labels]
    rows = []
    for r in cores:
        # One number when both sides forwarded the same packets (they simulated the same
        # thing), both when not: per-packet costs then compare different work.
        a = r.median("ref", line("bottleneck packets"))
        b = r.median("new", line("bottleneck packets"))
        cells = [
            f"`{r.case.key}`",
            count(a if a is not None else b) if a == b or None in (a, b) else arrow(a, b, ""),
            arrow(r.median("ref", cpu_per_packet), r.median("new", cpu_per_packet), "ns", 1e9),
        ]
        for label in labels:
            scale, unit = (1e-6, "M") if label == "bottleneck packets/wall-s" else (1.0, "")
            unit = unit or _unit(cores, label)
            cells.append(arrow(r.median("ref", line(label)), r.median("new", line(label)),
                               unit, scale))  # fmt: skip
        rows.append(cells)
    return _table(head, rows)


_UNIT_SCALE: dict[str, tuple[float, str]] = {
    "ns/packet": (1e9, "ns"),
    "s": (1.0, "s"),
    "MiB": (1.0, "MiB"),
    "ms/run": (1e3, "ms"),
}


def ratio_table(run: Run) -> list[str]:
    ref = ratios.compute(run.results, "ref")
    new = ratios.compute(run.results, "new")
    if not ref:
        return []
    rows = []
    for (r, a), (_, b) in zip(ref, new, strict=True):
        scale, unit = _UNIT_SCALE[r.unit]

        def cell(v: ratios.Value, scale: float = scale, unit: str = unit) -> str:
            if v.ratio is None:
                return "—"
            return f"{times(v.ratio)} ({num(v.num * scale)} / {num(v.den * scale)} {unit})"

        rows.append([r.label, cell(a), cell(b)])
    return _table(["ratio", f"reference {run.ref.commit}", f"this tree {run.new.commit}"], rows)


def _pack_sentence(run: Run) -> list[str]:
    r = run.results.get("rfc7928")
    if r is None:
        return []

    def med(side: str, key: str) -> float | None:
        return r.median(side, extra(key))

    ms = 1e3
    return [
        "RFC 7928 pack, per run (medians, reference → this tree): through the whole command "
        + arrow(med("ref", "whole CPU per run"), med("new", "whole CPU per run"), "ms", ms)
        + " of CPU, the core alone "
        + arrow(med("ref", "core CPU per run"), med("new", "core CPU per run"), "ms", ms)
        + " (its wall "
        + arrow(med("ref", "core wall per run"), med("new", "core wall per run"), "ms", ms)
        + "); the pack's report, left out of the per-run figure, "
        + arrow(med("ref", "report CPU"), med("new", "report CPU"), "s")
        + " of CPU.",
        "",
    ]


def header(run: Run) -> list[str]:
    m = run.machine
    mode = ", `--quick` (short forms: not the table's figures)" if run.quick else ""
    return [
        f"Measured {run.date}: {run.runs} run{'s' if run.runs != 1 else ''} per side and "
        f"case{mode}, {num(run.elapsed_s / 60, 2)} minutes in all. Reference "
        f"**{run.ref.commit}**, this tree **{run.new.commit}**. Machine: {m['cpu']}, "
        f"{m['cores']} cores, {m['memory']}, {m['os']}, Linux {m['kernel']}; {m['rustc']}, "
        f"Python {m['python']}. Load average (1, 5, 15 min) before {run.load_before}, "
        f"after {run.load_after}.",
        "",
        "Method: every run a whole process, the two sides alternated (reference, this tree, "
        "reference, …); CPU is user + system time and peak memory the largest resident set, "
        "of the process and its children (`os.wait4`; a child's maximum resident set cannot be "
        f"below the driver's own when it forked, {num(run.rss_floor_mib)} MiB here, so the "
        "benchmark's peak is its own `peak resident memory` line), wall from start to exit; "
        "cells give "
        "the median (min–max), the ratio column the median of the per-pair ratios of CPU. "
        "Both sides' benchmarks run the same scenario JSON (this tree's `aqmlab validate "
        "--print`); the reference's whole command is its own package (a wheel built from the "
        "commit) with this tree's .venv dependencies. A pack's CPU per run is the pack's CPU "
        "less that of its report alone (`--report-only`), divided by its runs; the core's, "
        "the benchmark run on each run's `summary.json` scenario." + left_out_note(run),
        "",
    ]


def left_out_note(run: Run) -> str:
    """The fields an older binary did not know, left out of its copy of the scenario."""
    if not run.left_out:
        return ""
    cases_ = "; ".join(
        f"{case}: {', '.join(f'`{k}`' for k in keys)}" for case, keys in run.left_out.items()
    )
    return (
        " Fields a side's benchmark does not know (features added after it) are left out of "
        f"its copy of the scenario — {cases_}; the `bottleneck packets` and loss lines show "
        "whether the two sides still simulated the same thing."
    )


def render(run: Run) -> str:
    parts: list[list[str]] = [
        header(run),
        main_table(run),
        [""],
        core_table(run),
        [""],
        ratio_table(run),
        [""],
        _pack_sentence(run),
    ]
    lines = [ln for p in parts for ln in p]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n") + "\n"
