"""An asymmetric access link (`topology.bottleneck_reverse_mbps`): the rate each direction
has, with capacity steps, as the analysis and the load calibration read it."""

from __future__ import annotations

import pytest

from aqmlab.scenario import calibration as cal
from aqmlab.scenario.direction_names import rate_mbps

TOPO = {
    "bottleneck_mbps": 10.0,
    "bottleneck_reverse_mbps": 100.0,
    "bottleneck_steps": [
        {"at_s": 5.0, "mbps": 20.0},  # the upload only: the download keeps 100
        {"at_s": 8.0, "mbps": 20.0, "reverse_mbps": 50.0},
    ],
}


@pytest.mark.parametrize(
    ("direction", "at_s", "mbps"),
    [
        ("upload", None, 10.0),
        ("download", None, 100.0),
        ("forward", 4.9, 10.0),
        ("forward", 5.0, 20.0),
        ("reverse", 6.0, 100.0),
        ("download", 8.0, 50.0),
    ],
)
def test_each_direction_has_its_rate(direction: str, at_s: float | None, mbps: float) -> None:
    assert rate_mbps(TOPO, direction, at_s) == mbps


def test_a_symmetric_links_steps_move_both_directions() -> None:
    topo = {"bottleneck_mbps": 10.0, "bottleneck_steps": [{"at_s": 1.0, "mbps": 2.0}]}
    assert rate_mbps(topo, "reverse", 0.5) == 10.0
    assert rate_mbps(topo, "reverse", 1.5) == 2.0


def test_a_load_is_a_fraction_of_its_directions_capacity() -> None:
    # Clients on the left: responses cross `reverse`, the 100 Mb/s download.
    assert cal.direction_capacity(TOPO, cal.response_direction({"client_side": "left"})) == 100.0
    assert cal.direction_capacity(TOPO, cal.response_direction({"client_side": "right"})) == 10.0
