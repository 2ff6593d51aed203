"""The workload suite's reduction of one replication's draws, and its KS distance on the
grid, against hand-computed values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from validation.suites import workload


def _cols(start, rsp):
    n = len(start)
    return {
        "start_s": np.array(start, dtype=float),
        "request_bytes": np.full(n, 300),
        "response_bytes": np.array(rsp, dtype=float),
        "server_delay_s": np.full(n, 0.01),
        "rtt_ms": np.full(n, 40.0),
        "client_rtt_ms": np.full(n, 10.0),
    }


def test_window_counts_loads_and_the_tail():
    # One connection per second from 0 to 359.5 s, two in each of the seconds 100-109.
    start = sorted([t + 0.5 for t in range(360)] + [t + 0.25 for t in range(100, 110)])
    rsp = [1000.0] * len(start)
    rsp[start.index(200.5)] = 3_000_000.0  # one response above 1 MB, inside the window
    rsp[start.index(10.5)] = 5_000_000.0  # one before the window: not counted
    r = workload.reduce(_cols(start, rsp))
    assert r.connections == 300 + 10
    assert r.big == 1
    assert r.load_capped_mbps == pytest.approx((309 * 1000 + 1_000_000) * 8 / 300 / 1e6)
    assert r.load_mbps == pytest.approx((309 * 1000 + 3_000_000) * 8 / 300 / 1e6)
    # Per 1 s: 290 ones and 10 twos; variance / mean by hand.
    counts = np.array([1] * 290 + [2] * 10, dtype=float)
    assert r.dispersion_1s == pytest.approx(counts.var(ddof=1) / counts.mean())
    # Per 10 s: 29 windows of 10 and one of 20.
    tens = np.array([10] * 29 + [20], dtype=float)
    assert r.dispersion_10s == pytest.approx(tens.var(ddof=1) / tens.mean())
    # The grid's CDF: every response is <= 1e10 bytes, 359 + 10 of them <= 1000.
    grid = workload.GRIDS["response_bytes"]
    assert r.cdf["response_bytes"][-1] == len(start) == r.n["response_bytes"]
    assert r.cdf["response_bytes"][np.searchsorted(grid, 1000)] == len(start) - 2
    assert r.n["gap_s"] == len(start) - 1


def test_ks_on_the_grid_is_the_largest_cdf_gap(tmp_path: Path):
    a = workload.reduce(_cols(np.arange(0, 360, 1.0), [100.0] * 360))
    b = workload.reduce(_cols(np.arange(0, 360, 1.0), [100.0] * 180 + [10_000.0] * 180))
    assert workload._ks([a], [b], "response_bytes") == pytest.approx(0.5)
    assert workload._ks([a, b], [a, b], "response_bytes") == 0.0
    # What a replication saves is what it loads.
    workload._save([a, b], tmp_path / "reduced.json")
    back = workload._load(tmp_path / "reduced.json")
    assert back[1].load_mbps == b.load_mbps and back[1].n == b.n
    assert np.array_equal(back[1].cdf["response_bytes"], b.cdf["response_bytes"])
