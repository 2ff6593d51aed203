"""The E-model of a voice call (`kind = "voice"`, docs/workload.md): an R-factor and a MOS per
stream and per run, from the core's `voice` summary and its `voice_streams` table.

Model: ITU-T G.107 (06/2015), "The E-model: a computational model for use in transmission
planning", in the simplified form of Cole & Rosenbluth, "Voice over IP performance
monitoring", ACM SIGCOMM CCR 31(2), 2001:

    R = R0 − Id(Ta) − Ie,eff                        (G.107 §7, A = 0)
    R0 = 93.2                                       (G.107: R with every parameter at its default)
    Id(Ta) = 0.024·Ta + 0.11·(Ta − 177.3)·H(Ta − 177.3)   (Cole & Rosenbluth eq. 5, Ta in ms)
    Ie,eff = Ie + (95 − Ie) · Ppl / (Ppl / BurstR + Bpl)  (G.107, Ppl in %)
    MOS = 1                                  for R < 0
        = 1 + 0.035·R + R·(R − 60)·(100 − R)·7e-6   for 0 ≤ R ≤ 100    (G.107 Annex B)
        = 4.5                                for R > 100

Ta is the mouth-to-ear delay (the core's `mouth_to_ear_ms`: the network's one-way delay of the
jitter buffer's first packet, the buffer, the frame and the codec's look-ahead); Ppl counts
the packets lost in the network and those too late for the jitter buffer, both lost to the
listener. BurstR = 1/(p + q) (G.107's two-state model of the loss pattern), with p the
probability that a packet the listener got is followed by one it did not (bursts / packets
got) and q the converse (bursts / packets not got), from the core's count of `bursts` (runs of
packets lost or late); BurstR = 1 (random loss) where there is no loss or nothing was got.
Cole & Rosenbluth write 94.2 for R0 (their default Is); G.107's default R is 93.2, used here.

Equipment impairments (Ie, Bpl) from ITU-T G.113 (11/2007) Appendix I :
G.711 with packet loss concealment (G.711 Appendix I) Ie = 0, Bpl = 25.1; G.711 without
concealment Bpl = 4.3; G.729A (+VAD) Ie = 11, Bpl = 19.0. G.113 gives no narrow-band values for
Opus, so its streams get no score (NaN) unless `ie` and `bpl` are given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "CODECS",
    "R0",
    "burst_ratio",
    "delay_impairment",
    "effective_equipment_impairment",
    "mos",
    "r_factor",
    "stream_scores",
    "summary_metrics",
]

#: G.107's R with every parameter at its default value.
R0 = 93.2

#: (Ie, Bpl) by the core's codec name (G.113 Appendix I); Opus: none published.
CODECS: dict[str, tuple[float, float]] = {
    "g711": (0.0, 25.1),
    "g711_noplc": (0.0, 4.3),
    "g729a": (11.0, 19.0),
    "opus_wb": (math.nan, math.nan),
    "opus_fb": (math.nan, math.nan),
}


def delay_impairment(ta_ms: float) -> float:
    """Id of a mouth-to-ear delay `ta_ms` (Cole & Rosenbluth 2001, eq. 5)."""
    over = max(ta_ms - 177.3, 0.0)
    return 0.024 * ta_ms + 0.11 * over


def effective_equipment_impairment(ie: float, bpl: float, ppl_percent: float, burst_r=1.0):
    """Ie,eff of a codec (`ie`, `bpl`) at a packet-loss percentage (G.107)."""
    if ppl_percent <= 0.0:
        return ie
    return ie + (95.0 - ie) * ppl_percent / (ppl_percent / burst_r + bpl)


def burst_ratio(got: float, not_got: float, bursts: float) -> float:
    """G.107's BurstR = 1/(p + q) of a stream whose listener got `got` packets and missed
    `not_got` in `bursts` runs; 1 (random loss) when either count is zero."""
    if got <= 0 or not_got <= 0 or bursts <= 0:
        return 1.0
    return 1.0 / (bursts / got + bursts / not_got)


def r_factor(
    ta_ms: float, ppl_percent: float, codec: str = "g711", ie=None, bpl=None, burst_r=1.0
) -> float:
    """The transmission rating R of a call with mouth-to-ear delay `ta_ms` and `ppl_percent`
    of its packets lost to the listener, in bursts of ratio `burst_r`; `ie`, `bpl` override
    the codec's table values."""
    table_ie, table_bpl = CODECS.get(codec, (math.nan, math.nan))
    ie = table_ie if ie is None else ie
    bpl = table_bpl if bpl is None else bpl
    ie_eff = effective_equipment_impairment(ie, bpl, ppl_percent, burst_r)
    return R0 - delay_impairment(ta_ms) - ie_eff


def mos(r: float) -> float:
    """The estimated mean opinion score of rating `r` (G.107 Annex B)."""
    if math.isnan(r):
        return math.nan
    if r < 0.0:
        return 1.0
    if r > 100.0:
        return 4.5
    return 1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6


def _ppl(delivered: float, lost: float, late: float) -> float:
    """Percent of the resolved packets the listener did not get in time."""
    resolved = delivered + lost
    return math.nan if resolved <= 0 else 100.0 * (lost + late) / resolved


def _burst_r(delivered: float, lost: float, late: float, bursts: float) -> float:
    return burst_ratio(delivered - late, lost + late, bursts)


def stream_scores(streams) -> Any:
    """The `voice_streams` table (a polars DataFrame) with `ppl_percent`, `burst_r`,
    `r_factor` and `mos` columns added, one per stream (a direction of a call)."""
    import polars as pl

    cols = ["codec", "delivered", "lost", "late", "bursts", "mouth_to_ear_ms"]
    rows = streams.select(cols).rows()
    ppl = [_ppl(d, lo, la) for _, d, lo, la, _, _ in rows]
    burst = [_burst_r(d, lo, la, b) for _, d, lo, la, b, _ in rows]
    r = [
        r_factor(m2e, p, codec, burst_r=b)
        for (codec, *_, m2e), p, b in zip(rows, ppl, burst, strict=True)
    ]
    return streams.with_columns(
        pl.Series("ppl_percent", ppl, dtype=pl.Float64),
        pl.Series("burst_r", burst, dtype=pl.Float64),
        pl.Series("r_factor", r, dtype=pl.Float64),
        pl.Series("mos", [mos(x) for x in r], dtype=pl.Float64),
    )


def summary_metrics(summary: Mapping[str, Any], results_dir=None) -> dict[str, float]:
    """`voice.ppl_percent`, `voice.burst_r`, `voice.r_factor` and `voice.mos` of a run from
    its summary (the whole run's loss, bursts and mean mouth-to-ear delay, the first voice
    entry's codec); with `results_dir` holding
    `voice_streams.parquet`, also the mean and worst of the streams' scores
    (`voice.mos_mean`, `voice.mos_min`). Empty for a run without voice. `summary` is the
    core's summary (or `summary.json` whole: its `summary` key is used)."""
    s = summary.get("summary", summary)
    v = s.get("voice")
    if not v:
        return {}
    ppl = _ppl(v["delivered"], v["lost"], v["late"])
    burst = _burst_r(v["delivered"], v["lost"], v["late"], v.get("bursts", 0))
    m2e = v.get("mouth_to_ear_ms")
    m2e = math.nan if m2e is None else m2e
    r = r_factor(m2e, ppl, v.get("codec", "g711"), burst_r=burst)
    out = {
        "voice.ppl_percent": ppl,
        "voice.burst_r": burst,
        "voice.r_factor": r,
        "voice.mos": mos(r),
    }
    path = Path(results_dir) / "voice_streams.parquet" if results_dir is not None else None
    if path is not None and path.is_file():
        import polars as pl

        scored = stream_scores(pl.read_parquet(path))
        if scored.height:
            out["voice.mos_mean"] = float(scored["mos"].mean())
            out["voice.mos_min"] = float(scored["mos"].min())
    return out
