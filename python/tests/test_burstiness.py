"""Heavy-tailed Web traffic is bursty at every time scale: Mah's users produce an arrival
series at the bottleneck whose Hurst estimate (Abry–Veitch wavelet) is clearly above 0.5."""

from __future__ import annotations

import tomllib
from pathlib import Path

import polars as pl

import aqmlab
from aqmlab import hurst

MAH = Path(__file__).resolve().parents[2] / "examples" / "web" / "mah.toml"


def _hurst_of_mah(size_law: str) -> float:
    base = tomllib.loads(MAH.read_text())
    sc = dict(base, duration_s=400.0, warmup_s=60.0)
    sc["topology"] = dict(base["topology"], bottleneck_mbps=100.0)  # uncongested
    sc["queue"] = {"kind": "droptail", "limit": 10000}
    sc["traffic"] = [dict(base["traffic"][0], users=2000, size_law=size_law)]
    res = aqmlab.run(sc)
    a = res["arrivals"].filter((pl.col("direction") == "reverse") & (pl.col("t_s") >= 60.0))
    return hurst.wavelet(a["bytes"].to_numpy().astype(float)).H


def test_heavy_tailed_web_traffic_is_long_range_dependent():
    h = _hurst_of_mah("empirical")
    assert h >= 0.65, f"H = {h:.3f}"
