"""`aqmlab._core.packmime_draws`: the connections a PackMime-HTTP/1.0 source opens, drawn
without the network (validation's `workload` suite compares them with ns-2.35's), must be
the connections a run of the same seed opens, connection by connection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import aqmlab
from aqmlab import _core

SCENARIO = {
    "duration_s": 20.0,
    "warmup_s": 0.0,
    "seed": 7,
    "topology": {"bottleneck_mbps": 100.0, "access_mbps": 1000.0},
    "queue": {"kind": "droptail", "limit": 1000},
    "delay_box": {"placement": "boxes"},
    "traffic": [
        {"kind": "packmime", "rate": 30.0, "client_side": "left", "packmime_rtt": True},
        {"kind": "packmime", "rate": 30.0, "client_side": "right", "packmime_rtt": True},
    ],
}


def test_draws_are_the_connections_a_run_opens(tmp_path: Path):
    conns = aqmlab.run(SCENARIO, out=tmp_path / "run").connections
    path_rtt_ms = 2 * (2 * 1.0 + 1.0)  # access, bottleneck, access (1 ms defaults), both ways
    for source in (0, 1):
        ours = conns.filter(pl.col("source") == source).sort("start_s")
        d = _core.packmime_draws(30.0, 20.0, seed=7, source=source)
        assert len(d["start_s"]) == ours.height > 400
        assert np.allclose(d["start_s"], ours["start_s"].to_numpy(), rtol=0, atol=1e-9)
        assert d["request_bytes"] == ours["request_bytes"].to_list()
        assert d["response_bytes"] == ours["response_bytes"].to_list()
        extra = ours["base_rtt_ms"].to_numpy() - path_rtt_ms
        assert np.allclose(d["rtt_ms"], extra, rtol=0, atol=1e-6)
        assert all(0 <= c <= r for c, r in zip(d["client_rtt_ms"], d["rtt_ms"], strict=True))
    # Different seeds, different users (and the same seed, the same ones).
    assert _core.packmime_draws(30.0, 20.0, seed=8)["start_s"] != d["start_s"]
    assert _core.packmime_draws(30.0, 20.0, seed=7, source=1) == d


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate": 0.0, "duration_s": 1.0}, "rate = 0: expected"),
        ({"rate": 10.0, "duration_s": float("inf")}, "duration_s = inf: expected"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _core.packmime_draws(**kwargs)
