"""What a case's runs gave on each side, and the figures read from a run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bench.cases import Case
from bench.measure import Sample
from bench.stats import Spread, spread

Figure = Callable[[Sample], "float | None"]


@dataclass
class CaseResult:
    case: Case
    simulated_s: float | None = None
    samples: dict[str, list[Sample]] = field(default_factory=dict)  # side key -> in run order

    def values(self, side: str, fig: Figure) -> list[float]:
        vs = (fig(s) for s in self.samples.get(side, []))
        return [v for v in vs if v is not None]

    def spread(self, side: str, fig: Figure) -> Spread | None:
        return spread(self.values(side, fig))

    def median(self, side: str, fig: Figure) -> float | None:
        s = self.spread(side, fig)
        return None if s is None else s.median


def cpu(s: Sample) -> float:
    return s.cpu_s


def wall(s: Sample) -> float:
    return s.wall_s


def peak(s: Sample) -> float:
    return s.peak_mib


def line(label: str) -> Figure:
    """A line the benchmark printed, by its label."""
    return lambda s: s.output.value(label)


def extra(key: str) -> Figure:
    """One of the RFC 7928 pack's per-run figures."""
    return lambda s: s.extra.get(key)


def cpu_per_packet(s: Sample) -> float | None:
    """CPU seconds per bottleneck packet (both directions, data and ACKs): the cost of the
    work itself, comparable between scenarios and stacks that forward different numbers."""
    packets = s.output.value("bottleneck packets")
    return s.cpu_s / packets if packets else None
