"""The benchmark binary's printed lines, read into numbers.

It prints `label   value [unit]` lines (`wall time  0.171 s`, `bottleneck packets/wall-s
4.400 M`: the label is padded to a column, and a long label leaves a single space), a
`scenario: NAME, SECONDS s` line first, and digest lines. Every line of the first form is
kept, not only the known ones, so that a line a later binary adds (`memory per open
connection`) reaches the report without a change here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A label (anything, lazily), then a number and an optional unit that ends the line. A unit
# never starts with a digit, so that `records digest 0f3a…` is not read as 0 of unit "f3a…"
# (digest lines are skipped before this anyway).
_LINE = re.compile(
    r"^(?P<label>\S.*?)\s+(?P<num>[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?:\s*(?P<unit>[^\d\s]\S*))?\s*$"
)
_SCENARIO = re.compile(r"^scenario: (?P<name>.*), (?P<seconds>[\d.eE+-]+) s\s*$")
# Multipliers the benchmark prints as units (`4.400 M` bottleneck packets per second).
_SCALE = {"M": 1e6, "k": 1e3, "G": 1e9}
_SKIP = ("records digest", "column digest")


@dataclass(frozen=True)
class Figure:
    value: float  # scaled: `4.400 M` is 4.4e6 with unit ""
    unit: str  # as printed ("s", "MiB", "" for counts and ratios)


@dataclass
class Output:
    scenario: str | None = None
    seconds: float | None = None  # simulated seconds, as the binary ran them
    figures: dict[str, Figure] = field(default_factory=dict)

    def value(self, label: str) -> float | None:
        f = self.figures.get(label)
        return None if f is None else f.value


def parse(text: str) -> Output:
    out = Output()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(_SKIP):
            continue
        m = _SCENARIO.match(line)
        if m:
            out.scenario, out.seconds = m["name"], float(m["seconds"])
            continue
        m = _LINE.match(line)
        if not m:
            continue  # e.g. `peak resident memory (unknown: no /proc/self/status)`
        value = float(m["num"].replace(",", ""))
        unit = m["unit"] or ""
        if unit in _SCALE:
            value, unit = value * _SCALE[unit], ""
        out.figures[m["label"].strip()] = Figure(value, unit)
    return out
