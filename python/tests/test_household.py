"""The household pack's comparison (aqmlab.reproduce.household): paired differences against the
FIFO, by hand on made-up runs."""

from __future__ import annotations

import polars as pl

from aqmlab.reproduce import household as hh

LOWER = hh.AppMetric("game", "game.rtt_p95_ms", "RTT p95 (ms)", "lower", 1)
HIGHER = hh.AppMetric("bulk", "bulk_download_mbps", "goodput (Mb/s)", "higher", 1)


def _runs() -> pl.DataFrame:
    # Three seeds. fq_codel: RTT 50 ms lower in every seed (differences -49, -50, -51: a
    # gain); goodput 1 Mb/s lower in every seed (a cost). pie: goodput differences +1, -1, 0
    # (mean 0, interval holds 0: cannot be told apart).
    rows = []
    for rep, (fifo_rtt, fifo_bulk) in enumerate([(100.0, 10.0), (110.0, 12.0), (90.0, 11.0)]):
        rows.append({"qdisc": "fifo", "rep": rep, LOWER.column: fifo_rtt, HIGHER.column: fifo_bulk})
        rows.append(
            {
                "qdisc": "fq_codel",
                "rep": rep,
                LOWER.column: fifo_rtt - 49.0 - rep,
                HIGHER.column: fifo_bulk - 1.0,
            }
        )
        rows.append(
            {"qdisc": "pie", "rep": rep, LOWER.column: fifo_rtt, HIGHER.column: fifo_bulk + 1 - rep}
        )
    return pl.DataFrame(rows)


def test_paired_differences_name_gains_and_costs() -> None:
    runs = _runs()
    gc = hh.gains_and_costs(runs, [LOWER, HIGHER], "fq_codel")
    assert gc == {"gain": ["game: RTT p95 (ms)"], "cost": ["bulk: goodput (Mb/s)"], "same": []}
    gc = hh.gains_and_costs(runs, [HIGHER], "pie")
    assert gc == {"gain": [], "cost": [], "same": ["bulk: goodput (Mb/s)"]}


def test_the_table_shows_means_and_paired_intervals() -> None:
    rows = hh.comparison_rows(_runs(), [LOWER, HIGHER], ["fifo", "fq_codel", "pie"])
    game, bulk = rows
    assert game["fifo"] == "100.0"
    # fq_codel: mean 100 - 50 = 50.0; differences -49, -50, -51: mean -50, sd 1,
    # half-width t(0.975, 2) · 1 / √3 = 4.303 / 1.732 = 2.484.
    assert game["fq_codel"] == "50.0 (-50.0 ± 2.5) ▲"
    assert bulk["fq_codel"] == "10.0 (-1.0 ± 0.0) ▼"
    assert bulk["pie"].endswith("=")


def test_missing_metrics_are_left_out() -> None:
    absent = hh.AppMetric("voice", "voice.mos", "MOS", "higher")
    assert hh.comparison_rows(_runs(), [absent], ["fifo", "pie"]) == []
