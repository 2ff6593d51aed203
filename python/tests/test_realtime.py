"""The real-time kinds (`voice`, `game`, `ping`) end to end: the example runs through FIFO and
FQ-CoDel, its tables read back, and the E-model scores the call from them."""

import math
from pathlib import Path

import polars as pl
import pytest

import aqmlab
from aqmlab.analysis import voice

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "realtime" / "calls_and_games.toml"
SHORT = ["duration_s=4.0", "warmup_s=1.0"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for q in ("droptail", "fq_codel"):
        d = tmp_path_factory.mktemp(q)
        over = [*SHORT] + ([] if q == "droptail" else ["queue.kind=fq_codel"])
        aqmlab.run(EXAMPLE, out=d, overrides=over)
        out[q] = d
    return out


def test_the_tables_read_back(runs):
    d = runs["droptail"]
    streams = pl.read_parquet(d / "voice_streams.parquet")
    assert streams["direction"].to_list() == ["up", "down"]
    assert set(streams["codec"]) == {"g711"}
    assert (streams["packet_bytes"] == 200).all()
    # Sent = delivered + lost + unresolved, per stream.
    assert (streams["sent"] == streams["delivered"] + streams["lost"] + streams["unresolved"]).all()
    games = pl.read_parquet(d / "game_flows.parquet")
    assert games.height == 1 and games["rtt_samples"][0] > 100
    probes = pl.read_parquet(d / "ping_probes.parquet")
    # A probe every 200 ms after the 1 s warm-up, 3 s: 15.
    assert probes.height == 15
    assert probes.columns == ["flow", "source", "seq", "t_s", "rtt_ms", "status"]
    answered = probes.filter(pl.col("status") == "answered")
    assert answered["rtt_ms"].is_finite().all()


def test_fq_codel_keeps_the_real_time_flows_fast(runs):
    s = {q: aqmlab.Results.open(d).summary["summary"] for q, d in runs.items()}
    fifo, fq = s["droptail"], s["fq_codel"]
    # Behind two CUBIC downloads the FIFO's queue grows; FQ-CoDel serves the sparse flows
    # first.
    assert fq["game"]["rtt_p99_ms"] < fifo["game"]["rtt_p99_ms"]
    assert fq["ping"]["rtt_p50_ms"] < fifo["ping"]["rtt_p50_ms"]
    assert fq["voice"]["delay_p99_ms"] < fifo["voice"]["delay_p99_ms"]


def test_the_call_is_scored(runs):
    d = runs["fq_codel"]
    m = voice.summary_metrics(aqmlab.Results.open(d).summary, d)
    assert 1.0 <= m["voice.mos"] <= 4.5
    assert m["voice.mos_min"] <= m["voice.mos_mean"] <= 4.5
    scored = voice.stream_scores(pl.read_parquet(d / "voice_streams.parquet"))
    assert not any(math.isnan(x) for x in scored["mos"])
