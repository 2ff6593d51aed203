"""Metrics on hand-built tables, expected values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from aqmlab.analysis import metrics as mt

NAN = math.nan


def exchanges(rows):
    cols = (
        "start_s",
        "completed",
        "response_time_s",
        "syn_retransmits",
        "fin_retransmits",
        "data_retransmits",
    )
    df = pl.DataFrame([dict(zip(cols, r, strict=True)) for r in rows])
    n = df.height
    return df.with_columns(
        pl.Series("response_bytes", [1000 * (i + 1) for i in range(n)]),
        pl.Series("end_s", [NAN] * n),
    )


# start, completed, response time, SYN, FIN, data retransmissions
ROWS = [
    (0.5, True, 0.1, 0, 0, 0),  # before the warm-up (1 s): ignored
    (1.0, True, 0.2, 0, 0, 0),  # <= 1 s
    (2.0, True, 1.0, 1, 0, 0),  # <= 1 s (bound included), SYN
    (3.0, True, 1.5, 0, 2, 0),  # 1-2 s, FIN
    (4.0, True, 2.5, 0, 0, 3),  # 2-3 s, data
    (5.0, True, 3.0, 1, 0, 1),  # 2-3 s, combined
    (6.0, True, 7.0, 1, 1, 1),  # > 3 s, combined
    (7.0, False, NAN, 0, 0, 4),  # unfinished, data
    (8.0, False, NAN, 2, 0, 0),  # unfinished, SYN
]

SUMMARY = {
    "scenario": {
        "warmup_s": 1.0,
        "traffic": [{"kind": "mah", "users": 10, "client_side": "left"}],
    },
    "summary": {
        "measured_s": 10.0,
        "forward": {"throughput_mbps": 1.0, "arrivals": 10, "utilization": 0.1},
        "reverse": {
            "throughput_mbps": 8.0,
            "tx_bytes": 10_000_000,
            "arrivals": 1000,
            "drops_early": 10,
            "drops_forced": 20,
            "drops_overflow": 20,
            "link_losses": 10,
            "utilization": 0.8,
            "mean_queue_pkts": 12.5,
        },
    },
}


def test_retransmission_class_rule():
    ex = exchanges(ROWS)
    assert mt.retransmission_class(ex).to_list() == [
        "none",
        "none",
        "SYN",
        "FIN",
        "data",
        "combined",
        "combined",
        "data",
        "SYN",
    ]
    assert "retx_class" in mt.with_retransmission_class(ex).columns


def test_response_time_shares():
    shares = mt.response_time_shares([0.2, 1.0, 1.5, 2.5, 3.0, 7.0, NAN])
    assert shares == pytest.approx(
        {"pct_le_1s": 200 / 6, "pct_1_2s": 100 / 6, "pct_2_3s": 200 / 6, "pct_gt_3s": 100 / 6}
    )
    assert all(math.isnan(v) for v in mt.response_time_shares([]).values())


def test_run_metrics_by_hand():
    row = mt.run_metrics(SUMMARY, exchanges(ROWS))
    assert row["direction"] == "reverse"
    assert row["throughput_kBps"] == pytest.approx(1000.0)  # 8 Mb/s = 1000 kB/s
    assert row["pct_dropped"] == pytest.approx(5.0)  # 50 drops / 1000 arrivals
    assert row["loss_rate"] == pytest.approx(0.06)  # (50 + 10) / 1000
    assert row["mean_queue_pkts"] == 12.5
    assert row["utilization"] == 0.8
    # Completed after warm-up: 0.2, 1.0, 1.5, 2.5, 3.0, 7.0 -> median (1.5 + 2.5) / 2.
    assert row["median_response_s"] == pytest.approx(2.0)
    assert row["pct_le_1s"] == pytest.approx(100 * 2 / 6)
    assert row["pct_1_2s"] == pytest.approx(100 * 1 / 6)
    assert row["pct_2_3s"] == pytest.approx(100 * 2 / 6)
    assert row["pct_gt_3s"] == pytest.approx(100 * 1 / 6)
    assert row["exchanges_completed"] == 6
    assert row["exchanges_unfinished"] == 2


def test_forward_direction_and_no_exchanges():
    row = mt.run_metrics(SUMMARY, None, direction="forward")
    assert row["throughput_kBps"] == pytest.approx(125.0)
    assert row["pct_dropped"] == 0.0
    assert math.isnan(row["median_response_s"])
    assert row["exchanges_completed"] is None
    with pytest.raises(ValueError):
        mt.run_metrics(SUMMARY, None, direction="up")


def test_studied_direction():
    assert mt.studied_direction({"traffic": [{"kind": "packmime", "client_side": "right"}]}) == (
        "forward"
    )
    assert mt.studied_direction({"traffic": [{"kind": "bulk"}, {"kind": "mah"}]}) == "reverse"
    assert mt.studied_direction({"traffic": [{"kind": "bulk", "direction": "upload"}]}) == (
        "forward"
    )


def test_table_and_text():
    row = mt.run_metrics(SUMMARY, exchanges(ROWS))
    table = mt.metrics_table([row, row], labels=["a", "b"])
    assert table.columns[0] == "run" and table.height == 2
    text = mt.format_metrics(row)
    assert "1000.0 KB/s" in text and "5.00 %" in text and "2.000 s" in text


def test_ecdf_at_hand_computed():
    values = [0.5, 0.1, 0.3, 0.3]
    x = [0.0, 0.1, 0.3, 0.4, 0.5, 9.0]
    assert list(mt.ecdf_at(values, x)) == [0.0, 0.25, 0.75, 0.75, 1.0, 1.0]
    # a class's share of all exchanges: out of `total`, not of its own sample
    assert list(mt.ecdf_at([0.2], [0.1, 0.2], total=4)) == [0.0, 0.25]
    assert list(mt.ecdf_at(sorted(values), x, presorted=True)) == list(mt.ecdf_at(values, x))
    assert np.isnan(mt.ecdf_at([], [1.0, 2.0])).all()
