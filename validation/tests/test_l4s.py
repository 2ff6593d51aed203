"""The L4S test-suite comparison (validation/l4s/): the stored published table, the row
matching, the share arithmetic and the summary, on hand-made rows."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from validation.l4s import compare, published, section


def test_published_table_is_the_modelled_part_of_s1_table():
    t = published.s1_table()
    # 6 cells (2 rates x 3 queues) x 4 pairs of congestion controls x 6 RTT pairs.
    assert t.height == 144
    assert t.select(published.KEY).unique().height == 144
    assert set(t["qdisc"]) == {"dualpi2", "pfifo(200)", "pfifo(1000)", "fq_codel"}
    # Spot checks against s1_table.md (e21cd91): the first 10 Mbit/s DualPI2 row and the
    # most RTT-unfair Prague pair.
    row = t.filter(
        (pl.col("rate_mbps") == 10)
        & (pl.col("qdisc") == "dualpi2")
        & (pl.col("cc1") == "cubic")
        & (pl.col("rtt1_ms") == 10)
        & (pl.col("cc2") == "prague")
        & (pl.col("rtt2_ms") == 10)
    )
    assert row.select("d1_mbps", "d2_mbps", "jain").row(0) == (2.93, 6.22, 0.886)
    row = t.filter(
        (pl.col("rate_mbps") == 50)
        & (pl.col("qdisc") == "dualpi2")
        & (pl.col("cc1") == "prague")
        & (pl.col("rtt1_ms") == 160)
        & (pl.col("cc2") == "prague")
    )
    assert row.select("d1_mbps", "d2_mbps").row(0) == (1.56, 45.46)


def test_readme_figures():
    f = published.readme_figures()
    assert f.filter(pl.col("metric").str.starts_with("maximum"))["published"][0] == 4346.0


def _pub(rows):
    return pl.DataFrame(
        rows,
        schema=[*published.KEY, "d1_mbps", "d2_mbps"],
        orient="row",
    )


def test_ours_s1_parses_the_report_table():
    table = pl.DataFrame(
        {
            "qdisc": ["dualpi2"],
            "flow 1": ["cubic (160 ms)"],
            "D1 (Mb/s)": [1.0],
            "flow 2": ["prague (10 ms)"],
            "D2 (Mb/s)": [3.0],
        }
    )
    got = compare.ours_s1(table, 10)
    assert got.row(0) == (10, "dualpi2", "cubic", 160, "prague", 10, 1.0, 3.0)
    with pytest.raises(ValueError):
        compare.ours_s1(table.with_columns(pl.lit("cubic").alias("flow 1")), 10)


def test_join_and_summary_by_hand():
    pub = _pub(
        [
            (10, "dualpi2", "cubic", 10, "prague", 10, 2.93, 6.22),  # share 32.0 %
            (10, "dualpi2", "prague", 10, "cubic", 10, 6.25, 2.93),  # 68.1 %
            (10, "dualpi2", "cubic", 10, "cubic", 10, 4.82, 4.47),  # 51.9 %: not clear
            (50, "fq_codel", "cubic", 10, "cubic", 10, 25.0, 25.0),  # no ours: left out
        ]
    )
    ours = _pub(
        [
            (10, "dualpi2", "cubic", 10, "prague", 10, 7.8, 1.8),  # 81.25 %: other order
            (10, "dualpi2", "prague", 10, "cubic", 10, 6.0, 3.0),  # 66.67 %
            (10, "dualpi2", "cubic", 10, "cubic", 10, 4.0, 5.0),  # 44.4 %: other, close
        ]
    )
    j = compare.join_s1(pub, ours)
    assert j.height == 3
    share = 100 * 2.93 / (2.93 + 6.22)
    assert j["pub_share1"][0] == pytest.approx(share)
    assert j["diff_points"][0] == pytest.approx(81.25 - share)
    assert j["same_order"].to_list() == [False, True, False]
    assert j["clear"].to_list() == [True, True, False]
    s = compare.summary_s1(j)
    assert s["rate"].to_list() == ["10", "all"]
    first = s.row(0, named=True)
    diffs = sorted(j["diff_points"].to_list())
    assert first["rows"] == 3
    assert first["median diff (points)"] == pytest.approx(diffs[1])
    assert first["max diff (points)"] == pytest.approx(diffs[2])
    assert (first["wrong order"], first["wrong order, clear split"]) == (2, 1)


def test_peak_and_drain():
    t = np.arange(0, 60, 0.05)
    delay = np.where(t < 30, 1.0, np.clip(100.0 - 20.0 * (t - 31), 0.0, 100.0))
    peak, back = compare.peak_and_drain(t, delay, 30.0, 5.0)
    assert peak == 100.0
    # 100 - 20 (t - 31) < 5 from t > 35.75: the first sample after it is 35.8.
    assert back == pytest.approx(5.8)
    peak, back = compare.peak_and_drain(t, np.full(t.size, 50.0), 30.0, 5.0)
    assert peak == 50.0 and math.isnan(back)


def test_splice_replaces_only_the_section():
    page = "# Title\n\ntext\n"
    once = section.splice(page, f"{section.BEGIN}\nA\n{section.END}")
    assert once.startswith(page.rstrip("\n")) and "A" in once
    twice = section.splice(once, f"{section.BEGIN}\nB\n{section.END}")
    assert "B" in twice and "\nA\n" not in twice
    assert twice.count(section.BEGIN) == 1
