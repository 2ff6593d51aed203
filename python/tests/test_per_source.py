"""The study report's per-source table (issue 36): goodput and queueing delay of each traffic
source per cell, checked against the runs' own tables by hand."""

from __future__ import annotations

import polars as pl
import pytest
from sweep_support import write_sweep

from aqmlab.report import per_source, study_report
from aqmlab.study import Study, sweep

BASE = """\
name = "mix"
duration_s = 6.0
warmup_s = 2.0
[topology]
bottleneck_mbps = 10.0
left_hosts = 4
right_hosts = 4
[queue]
kind = "droptail"
limit = 60
[[traffic]]
kind = "packmime"
rate = 5.0
[[traffic]]
kind = "bulk"
flows = 2
tcp = "linux-reno"  # a source of its own: the runs write `source_delay`
"""
SWEEP = """\
[sweep]
name = "mix"
scenario = "base.toml"
repetitions = 2
[[axis]]
name = "queue"
field = "queue"
values = [{kind = "droptail", limit = 60}, {kind = "fq_codel"}]
labels = ["fifo", "fq_codel"]
"""


@pytest.fixture(scope="module")
def mix_study(tmp_path_factory):
    d = tmp_path_factory.mktemp("mix")
    p = write_sweep(d, SWEEP, base=BASE)
    sweep.run_sweep(p, d / "study", jobs=1, quiet=True)
    return Study.open(d / "study")


def test_goodput_per_source_by_hand(mix_study):
    table = per_source.per_source(mix_study, ["queue"])
    assert set(table["source"]) == {"traffic[0] packmime", "traffic[1] bulk"}
    conns = mix_study.table("connections")
    for label in ("fifo", "fq_codel"):
        for src, name in ((0, "traffic[0] packmime"), (1, "traffic[1] bulk")):
            runs = conns.filter((pl.col("queue") == label) & (pl.col("source") == src))
            per_run = runs.group_by("run_id").agg(pl.col("bytes_delivered_measured").sum())
            want = (per_run["bytes_delivered_measured"] * 8 / 4.0 / 1e6).mean()
            got = table.filter((pl.col("queue") == label) & (pl.col("source") == name))
            assert got["goodput (Mb/s)"][0] == pytest.approx(want)
            assert got["runs"][0] == 2
    # Each source's delay is read in its data's direction (downloads: right -> left).
    assert table["p99 delay (ms)"].null_count() == 0


def test_the_report_shows_it(mix_study):
    html = study_report.build_report(mix_study).render()
    assert "Per source: what each queue gives and costs" in html
    assert "traffic[1] bulk" in html


def test_each_source_over_time(mix_study):
    """`source_intervals`, drawn per representative run (issue 36: Flent's all_scaled per
    source): its goodput rows, over their 1-s spans, add up to the source's delivered bytes."""
    from aqmlab.report import study_plots as sp

    rid = mix_study.runs()["run_id"][0]
    res = mix_study.results(rid)
    iv = res["source_intervals"]
    assert set(iv["source"]) == {0, 1}
    assert iv["t_s"].min() > 2.0  # after the warm-up only
    conns = res["connections"]
    for src in (0, 1):
        got = iv.filter(pl.col("source") == src)["goodput_mbps"].sum() * 1e6 / 8
        want = conns.filter(pl.col("source") == src)["bytes_delivered_measured"].sum()
        assert got == pytest.approx(want, abs=1e-3)
    fig = sp.source_traces(mix_study)
    assert fig is not None and len(fig.axes) == 2 * 2  # goodput and delay, per scheme
    html = study_report.build_report(mix_study).render()
    assert "source_traces" in html
