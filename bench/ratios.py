"""The ratios issue 34's targets are stated in, each computed for both sides from medians:
what a modern stack costs per packet against Reno, whether the cost per packet grows with the
number of users (1 Gb/s against 100 Mb/s) or with simulated time (300 s against 40 s), and
what the whole command costs above the core."""

from __future__ import annotations

from dataclasses import dataclass

from bench.results import CaseResult, Figure, cpu, cpu_per_packet, extra, peak, wall
from bench.stats import ratio


@dataclass(frozen=True)
class Ratio:
    label: str
    num: str  # case key of the numerator
    den: str  # case key of the denominator
    num_fig: Figure
    den_fig: Figure
    unit: str  # of the two figures, for the report: "ns/packet", "s", "MiB", "ms/run"


RATIOS = (
    Ratio("greedy flows: linux-cubic / FreeBSD Reno, CPU per bottleneck packet",
          "greedy-cubic", "greedy-reno", cpu_per_packet, cpu_per_packet, "ns/packet"),
    Ratio("greedy flows: linux-bbr / FreeBSD Reno, CPU per bottleneck packet",
          "greedy-bbr", "greedy-reno", cpu_per_packet, cpu_per_packet, "ns/packet"),
    Ratio("Web, freebsd-4.x: 1 Gb/s / 100 Mb/s, CPU per bottleneck packet",
          "web1g-freebsd", "web100-freebsd", cpu_per_packet, cpu_per_packet, "ns/packet"),
    Ratio("Web, linux-cubic: 1 Gb/s / 100 Mb/s, CPU per bottleneck packet",
          "web1g-cubic", "web100-cubic", cpu_per_packet, cpu_per_packet, "ns/packet"),
    Ratio("Web, linux-cubic, 1 Gb/s: 300 s / 40 s, CPU per bottleneck packet",
          "web1g-cubic-300", "web1g-cubic", cpu_per_packet, cpu_per_packet, "ns/packet"),
    Ratio("anchor: `aqmlab run` / core, wall", "anchor-run", "anchor-core", wall, wall, "s"),
    Ratio("anchor: `aqmlab run` / core, CPU", "anchor-run", "anchor-core", cpu, cpu, "s"),
    Ratio("anchor: `aqmlab run` / core, peak memory",
          "anchor-run", "anchor-core", peak, peak, "MiB"),
    Ratio("RFC 7928 pack: whole command / core, CPU per run", "rfc7928", "rfc7928",
          extra("whole CPU per run"), extra("core CPU per run"), "ms/run"),
)  # fmt: skip


@dataclass(frozen=True)
class Value:
    num: float | None
    den: float | None

    @property
    def ratio(self) -> float | None:
        return ratio(self.num, self.den)


def compute(results: dict[str, CaseResult], side: str) -> list[tuple[Ratio, Value]]:
    """Each ratio whose two cases were measured, for `side`, from the medians."""
    out = []
    for r in RATIOS:
        if r.num in results and r.den in results:
            num = results[r.num].median(side, r.num_fig)
            den = results[r.den].median(side, r.den_fig)
            out.append((r, Value(num, den)))
    return out
