"""Response-time histograms: exact CDF at the bin edges, merging, the capped mean."""

import math

import numpy as np
import polars as pl
import pytest

from aqmlab.analysis import rthist
from aqmlab.analysis.rthist import EDGES, ResponseTimeHist


def test_cdf_is_exact_at_the_edges():
    rng = np.random.default_rng(1)
    t = rng.lognormal(-1.5, 1.5, 20_000)
    h = ResponseTimeHist.from_times(t)
    assert h.n == t.size
    x, f = h.cdf()
    for i in (0, 300, 1000, 1500, EDGES.size - 1):
        assert f[i] == pytest.approx(np.mean(t < x[i]), abs=1e-12)
    x, p = h.ccdf()
    assert p[0] == 1.0 and p[-1] == 0.0


def test_out_of_range_and_nan():
    h = ResponseTimeHist.from_times([1e-6, 1e4, 2e4, math.nan, 0.5])
    assert (h.below, h.above, h.n) == (1, 2, 4)  # NaN dropped; 1e4 counts as above the top
    assert int(h.counts.sum()) == 1


def test_merge_and_capped_mean_by_hand():
    a = ResponseTimeHist.from_times([0.1, 0.3])
    b = ResponseTimeHist.from_times([5.0])
    m = a + b
    assert m.n == 3
    # min(t, 2 s): 0.1 + 0.3 + 2.0 over 3 exchanges.
    assert m.mean_capped() == pytest.approx(2.4 / 3)
    assert m.quantile(0.5) == pytest.approx(0.3, rel=0.01)  # the bin edge just above 0.3 s
    assert math.isnan(ResponseTimeHist().mean_capped())


def test_read_run_keeps_the_window(tmp_path):
    ex = pl.DataFrame(
        {
            "start_s": [1.0, 5.0, 6.0, 9.0, 5.5],
            "completed": [True, True, True, True, False],
            "response_time_s": [0.1, 0.2, 0.3, 0.4, math.nan],
        }
    )
    p = tmp_path / "exchanges.parquet"
    ex.write_parquet(p)
    h = rthist.read_run(p, 5.0, 8.0)  # started in [5, 8] and completed: 0.2 and 0.3 s
    assert h.n == 2 and h.capped_sum == pytest.approx(0.5)
