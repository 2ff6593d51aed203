"""Plots: figures with the expected axes, and PNG files from a results object."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from aqmlab.report import plots
from aqmlab.runs.runner import Results

RNG = np.random.default_rng(3)


def fake_exchanges(n=400):
    rt = RNG.lognormal(-1.0, 1.0, n)
    completed = RNG.random(n) > 0.05
    return pl.DataFrame(
        {
            "start_s": np.linspace(0, 100, n),
            "completed": completed,
            "response_time_s": np.where(completed, rt, math.nan),
            "response_bytes": RNG.integers(100, 1_000_000, n),
            "syn_retransmits": RNG.integers(0, 2, n) * (RNG.random(n) < 0.1),
            "fin_retransmits": RNG.integers(0, 2, n) * (RNG.random(n) < 0.1),
            "data_retransmits": RNG.integers(0, 3, n) * (RNG.random(n) < 0.2),
        }
    )


def fake_arrivals(seconds=100.0, bin_s=0.01):
    n = int(seconds / bin_s)
    t = np.arange(n) * bin_s
    pk = RNG.poisson(5.0, n)
    rows = pl.DataFrame({"t_s": t, "direction": ["reverse"] * n, "packets": pk, "bytes": pk * 1000})
    other = rows.with_columns(pl.lit("forward").alias("direction"))
    # Leave out empty bins, as a sparse table would.
    return pl.concat([rows, other]).filter(pl.col("packets") > 0)


def test_cdf_axes():
    fig = plots.response_time_cdf({"a": fake_exchanges(), "b": fake_exchanges()})
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 2.0)
    assert ax.get_xlabel() == "response time (s)"
    assert len(ax.get_lines()) == 2


def test_ccdf_is_log_log():
    ax = plots.response_time_ccdf(fake_exchanges()).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    y = ax.get_lines()[0].get_ydata()
    assert y[0] == pytest.approx(1.0) and y.min() > 0


def test_scatter_by_retransmission_class():
    ax = plots.response_time_vs_size(fake_exchanges()).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text().split()[0] for t in ax.get_legend().get_texts()]
    assert "none" in labels and "data" in labels
    assert set(labels) <= {"none", "SYN", "FIN", "data", "combined"}


def test_arrival_counts_fill_missing_bins():
    a = pl.DataFrame(
        {
            "t_s": [0.0, 0.02, 0.05, 0.05],
            "direction": ["reverse", "reverse", "reverse", "forward"],
            "packets": [1, 2, 3, 9],
            "bytes": [100, 200, 300, 900],
        }
    )
    pk, by = plots.arrival_counts(a, "reverse", 0.01, 0.0, 0.06)
    np.testing.assert_array_equal(pk, [1, 0, 2, 0, 0, 3])
    np.testing.assert_array_equal(by, [100, 0, 200, 0, 0, 300])
    pk, _ = plots.arrival_counts(a, "reverse", 0.01, 0.02, 0.06)
    np.testing.assert_array_equal(pk, [2, 0, 0, 3])


def test_cov_of_poisson_falls_as_square_root():
    x = RNG.poisson(5.0, 100_000)
    s, c = plots.cov_by_scale(x, 0.01)
    assert s[0] == pytest.approx(0.01) and s[-1] == pytest.approx(10.0)
    slope = np.polyfit(np.log10(s), np.log10(c), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.05)


def test_burstiness_and_variance_time_figures():
    pk, by = plots.arrival_counts(fake_arrivals(), "reverse", 0.01, 0.0, 100.0)
    ax = plots.burstiness_cov((pk, by), 0.01).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    ax = plots.variance_time(pk, 0.01).axes[0]
    texts = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "aggregated variance: H = 0.4" in texts or "aggregated variance: H = 0.5" in texts
    assert "wavelet" in texts and "R/S" in texts


def test_write_plots_from_results(tmp_path):
    summary = {
        "scenario": {
            "warmup_s": 10.0,
            "duration_s": 100.0,
            "measure": {"burst_bin_ms": 10},
            "traffic": [{"kind": "packmime", "rate": 10.0}],
        },
        "summary": {"measured_s": 90.0},
    }
    res = Results(
        summary,
        memory={"exchanges": fake_exchanges().to_arrow(), "arrivals": fake_arrivals().to_arrow()},
    )
    files = plots.write_plots(res, tmp_path / "p")
    names = sorted(f.name for f in files)
    assert names == [
        "burstiness_cov.png",
        "response_time_ccdf.png",
        "response_time_cdf.png",
        "response_time_vs_size.png",
        "variance_time.png",
    ]
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_run_plots_and_plots_command(tmp_path):
    from test_calibration import WEB, _core_has_packmime

    if not _core_has_packmime():
        pytest.skip("core without packmime traffic")
    from conftest import cli

    f = tmp_path / "w.toml"
    f.write_text(WEB.format(population="rate = 5.0"), encoding="utf-8")
    out = tmp_path / "res"
    proc = cli("run", f, "--out", out, "--plots", "--set", "duration_s=60.0")
    assert proc.returncode == 0, proc.stderr
    assert "studied direction: reverse" in proc.stdout and "median response" in proc.stdout
    names = {p.name for p in (out / "plots").glob("*.png")}
    # The five Web plots, the queueing-delay CDF, and the loss runs when anything was lost.
    assert len(names - {"consecutive_losses.png"}) == 6 and "queue_delay_cdf.png" in names
    proc = cli("plots", out, "--out", tmp_path / "p", "--direction", "forward")
    assert proc.returncode == 0, proc.stderr
    assert "studied direction: forward" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "p").glob("*.png")) == sorted(
        p.name for p in (out / "plots").glob("*.png")
    )
    assert cli("plots", tmp_path / "nothing").returncode == 2
