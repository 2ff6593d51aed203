"""Page loads (`kind = "pages"`, docs/workload.md): the example runs end to end through the
core, its `pages` table and summary agree, and the CLI prints their line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
from conftest import cli

import aqmlab
from aqmlab.analysis import pages

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "access" / "pages.toml"
SHORT = ("duration_s=20", "warmup_s=1")


def test_example_pages_table_and_summary_agree(tmp_path):
    aqmlab.run(EXAMPLE, out=tmp_path / "r", overrides=SHORT)
    rows = pl.read_parquet(tmp_path / "r" / "pages.parquet")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    m = pages.summary_metrics(summary)
    done = rows.filter(pl.col("completed") & (pl.col("start_s") >= 1.0))
    assert done.height >= 3
    assert m["pages.pages_completed"] == done.height
    assert (
        rows.filter(pl.col("completed"))["bytes"]
        == rows.filter(pl.col("completed"))["bytes_delivered"]
    ).all()
    assert set(rows["protocol"]) == {"h2"}
    # Linear interpolation between order statistics, as the core computes it.
    assert math.isclose(m["pages.plt_p50_s"], done["plt_s"].quantile(0.5, "linear"))
    assert 0 < m["pages.ttfb_p50_s"] < m["pages.plt_p50_s"]


def test_summary_metrics_without_pages_is_empty_and_null_is_nan():
    assert pages.summary_metrics({"summary": {"tcp_goodput_mbps": 1.0}}) == {}
    m = pages.summary_metrics({"pages": {"pages_started": 2, "plt_p50_s": None}})
    assert m["pages.pages_started"] == 2.0 and math.isnan(m["pages.plt_p50_s"])
    assert pages.format_line({}) is None


def test_cli_prints_the_pages_line(tmp_path):
    r = cli("run", EXAMPLE, "--out", tmp_path / "r", *(f"--set={o}" for o in SHORT))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("pages (started"))
    assert "load time p50" in line and "first byte p50" in line
