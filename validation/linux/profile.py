"""Per-flow profile of a testbed configuration: the kernel's TCP_INFO samples over the measured
window (mean cwnd and pacing rate, the share of samples in each congestion-avoidance state,
retransmissions, segments marked lost), and the resolved aqmlab scenario of the same
configuration written beside them, for aqmlab's own per-flow profile
(`cargo run --release -p aqmlab --example bbr_flows -- DIR/aqmlab/scenario.json`).

    python -m validation.linux.profile validation/linux/results/DIR/bbr-n64-rtt40-q100-60s
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl

from aqmlab import scenario as sc
from validation.linux import model

# icsk_ca_state values (include/net/tcp.h, enum tcp_ca_state).
CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}


def linux_profile(run_dir: Path, warmup: float, seconds: float) -> pl.DataFrame:
    """One row per flow: means and state shares over [warmup, seconds), counter deltas."""
    info = pl.read_csv(run_dir / "tcp_info.csv").filter(
        (pl.col("t_s") >= warmup) & (pl.col("t_s") < seconds)
    )
    states = [
        (pl.col("ca_state") == k).mean().mul(100).alias(f"{name}%") for k, name in CA_STATES.items()
    ]
    return (
        info.sort("t_s")
        .group_by("flow")
        .agg(
            pl.col("snd_cwnd").mean().alias("cwnd"),
            (pl.col("pacing_rate").mean() * 8e-6).alias("pacing_Mb/s"),
            *states,
            (pl.col("total_retrans").last() - pl.col("total_retrans").first()).alias("rexmits"),
            pl.col("lost").mean().alias("lost_out"),
            (pl.col("rto_us").mean() / 1000).alias("rto_ms"),
            (pl.col("rtt_us").mean() / 1000).alias("srtt_ms"),
            (pl.col("min_rtt_us").min() / 1000).alias("min_rtt_ms"),
        )
        .sort("flow")
    )


def write_scenario(d: Path, spec: dict, preset: str) -> Path:
    """The resolved aqmlab scenario of configuration `spec`, as `compare` runs it."""
    doc = model.scenario(
        flows=spec["flows"], rtts_ms=spec["rtts_ms"], limit=spec["limit"],
        seconds=spec["seconds"], warmup=spec["warmup"], rate_mbit=spec["rate_mbit"],
        preset=preset, tcp=model.overrides_for(preset), start_jitter_s=spec["start_jitter_s"],
        seed=spec["seed"], name=d.name,
    )  # fmt: skip
    out = d / "aqmlab" / "scenario.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(sc.to_json(sc.resolve(doc)))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    d = Path(argv[0])
    spec = json.loads((d / "run.json").read_text())
    presets = dict(p.split("=", 1) for p in model.DEFAULT_PRESETS.split(","))
    preset = presets.get(spec["cc"], model.DEFAULT_PRESET)
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_float_precision(2)
    for rd in sorted(p.parent for p in d.glob("linux*/meta.json")):
        prof = linux_profile(rd, spec["warmup"], spec["seconds"])
        print(f"{rd.name}: per flow")
        print(prof)
        print(f"{rd.name}: means over flows")
        print(prof.drop("flow").mean())
    print(f"aqmlab scenario: {write_scenario(d, spec, preset)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
