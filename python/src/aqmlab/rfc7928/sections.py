"""The sections of RFC 7928 the pack runs: one sweep file each in aqmlab/studies/RFC7928/,
the axis that names its scenarios, and the metric its summary judges besides the delay."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NOT_EXPRESSIBLE", "SECTIONS", "Section"]


@dataclass(frozen=True)
class Section:
    key: str  # --sections name, the part's folder
    file: str  # sweep file in studies/RFC7928/
    rfc: str  # RFC 7928 section numbers
    title: str
    scenario_axis: str | None  # the axis whose labels are the scenarios (None: one scenario)
    metric: str  # column of the per-run metrics judged with the delay
    higher_is_better: bool = True
    ecn: bool = False  # queues get their ECN option on (§4.5)
    needs_hops: bool = False  # needs topology.hops (the chain of bottlenecks)


SECTIONS = (
    Section(
        "transport", "transport.toml", "5.1-5.3", "Transport protocols", "case", "goodput_mbps"
    ),
    # §5.4 judges the LEDBAT flow's share of the goodput: lower keeps its less-than-best-effort
    # priority, which an AQM that holds the queue below LEDBAT's TARGET takes away.
    Section(
        "lbe",
        "lbe.toml",
        "5.4",
        "Less-than-best-effort transport",
        "case",
        "lbe_share",
        higher_is_better=False,
    ),
    Section("rtt_fairness", "rtt_fairness.toml", "6", "Round-trip-time fairness", "rtt", "jain"),
    Section(
        "burst",
        "burst.toml",
        "7",
        "Burst absorption",
        "case",
        "short_completion_s",
        higher_is_better=False,
    ),
    Section(
        "video",
        "video.toml",
        "7.2",
        "Burst absorption: bursty video frames",
        "case",
        "video_frame_delay_p95_ms",
        higher_is_better=False,
    ),
    Section(
        "congestion",
        "congestion.toml",
        "8.2.2-8.2.4",
        "Stability: congestion levels",
        "level",
        "goodput_mbps",
    ),
    Section(
        "varying_congestion",
        "varying_congestion.toml",
        "8.2.5",
        "Stability: varying congestion level",
        None,
        "goodput_mbps",
    ),
    Section(
        "varying_capacity",
        "varying_capacity.toml",
        "8.2.6",
        "Stability: varying available capacity",
        None,
        "goodput_mbps",
    ),
    Section(
        "traffic_mix", "traffic_mix.toml", "9", "Various traffic profiles", "case", "goodput_mbps"
    ),
    Section("ecn", "ecn.toml", "4.5", "Interaction with ECN", "senders", "goodput_mbps", ecn=True),
    Section(
        "multi_aqm",
        "multi_aqm.toml",
        "10",
        "Multi-AQM (two bottlenecks in series)",
        "second",
        "goodput_mbps",
        needs_hops=True,
    ),
)

# RFC 7928 tests the core cannot express yet, and what they would need.
NOT_EXPRESSIBLE = (
    (
        "4.6",
        "Packet scheduling is not a section of its own: FQ-CoDel (and FQ-PIE, CAKE with --aqm) "
        "is compared in every section, which is how §4.6 asks scheduling to be characterized "
        "(the AQM and the scheduler together).",
    ),
    (
        "8.3, 11, 12",
        "Parameter sensitivity, implementation cost and auto-tuning are analyses of a scheme's "
        "design, not simulated scenarios (run aqmlab sweep over a scheme's parameters for 8.3).",
    ),
)
