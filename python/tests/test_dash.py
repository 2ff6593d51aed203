"""DASH players (docs/workload.md, "Adaptive video streaming"): the example runs end to end
through the real core under FIFO and FQ-CoDel, each session's QoE equals Yin et al.'s formula
recomputed from its segments, bytes are conserved, and bad values are refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqmlab
from aqmlab import scenario as sc
from aqmlab.analysis import dash

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "video" / "dash.toml"
SHORT = ("duration_s=20",)


def test_qoe_yin_by_hand():
    # 1000 + 1000 + 2000 - |2000 - 1000| - 3000 * 0.5 - 3000 * 1.2 = -2100
    assert dash.qoe_yin([1000.0, 1000.0, 2000.0], 0.5, 1.2) == pytest.approx(-2100.0)
    assert dash.qoe_yin([], 0.0, 0.0) == 0.0


@pytest.mark.parametrize("queue", ['{kind="droptail",limit=1000}', '{kind="fq_codel"}'])
def test_example_sessions_match_their_segments(queue, tmp_path):
    res = aqmlab.run(EXAMPLE, out=tmp_path / "r", overrides=(*SHORT, f"queue={queue}"))
    ses = res["dash_sessions"].sort("session")
    seg = res["dash_segments"].sort(["session", "index"])
    assert ses.height == 2
    assert res.summary["summary"]["dash"]["sessions"] == 2
    for row in ses.iter_rows(named=True):
        mine = seg.filter(seg["session"] == row["session"])
        assert mine.height == row["segments"]
        assert mine["index"].to_list() == list(range(mine.height))
        want = dash.qoe_yin(mine["bitrate_kbps"].to_list(), row["stall_s"], row["startup_s"])
        assert row["qoe"] == pytest.approx(want, rel=1e-12, abs=1e-6)
        # Delivered: every finished segment plus what arrived of the one in flight.
        assert sum(mine["bytes"]) <= row["bytes_delivered"] <= row["bytes_requested"]
    extra = dash.summary_metrics(res.summary, tmp_path / "r")
    assert set(extra) == {"dash.qoe_per_segment_min", "dash.startup_s_p90", "dash.stalled_share"}
    assert extra["dash.qoe_per_segment_min"] == pytest.approx(ses["qoe_per_segment"].min())


def test_bad_ladder_is_refused_by_name():
    with pytest.raises(sc.ScenarioError, match=r"traffic\[0\]\.ladder_kbps\[1\]"):
        aqmlab.run(EXAMPLE, overrides=(*SHORT, "traffic[0].ladder_kbps=[1000,500]"))
