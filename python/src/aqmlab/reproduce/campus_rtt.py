"""Study B's "general" minimum-RTT distribution, as an empirical CDF file for `[rtt] kind =
"empirical"` (`aqmlab/studies/B/campus_rtt.csv`).

Le et al. (2003) §3 and §6 use "a more general distribution that comes from a recent
measurement study of the RTTs experienced by the TCP connections transiting a university
campus-to-Internet gateway" (Aikat et al., UNC), published only as figures (Figures 2-3). The
closest public substitute is the same group's model of per-connection RTTs on the UNC link:
PackMime-HTTP's DelayBox RTTs (Cao et al. 2004, ns-2 `PackMimeHTTPXmit`, model-facts §8.3.9
-8.3.10), where a connection's base RTT is one client-side plus one server-side sample, i.e.
the end-to-end RTT across the monitored link. Its marginal (median ≈ 67 ms, mean ≈ 108 ms,
90th percentile ≈ 186 ms, 99th ≈ 1.06 s) is heavier-tailed than the uniform 10-150 ms law, as
the paper's Figure 3 shows for the campus distribution.

The points are quantiles of the base RTTs the core itself draws with `packmime_rtt = true`
(the ns-2 tables, tested in the core), over `SEEDS` × `DURATION_S` s at `RATE` connections/s
(about a million connections), sampled independently per connection when used (the FSD
correlation across connections is dropped). The tail above the 99.99th percentile (values
from the tables' extrapolation, at most 0.01 % of connections) is cut there.

`python -m aqmlab.reproduce.campus_rtt [FILE]` rewrites the file (≈ 25 s on one core).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["PROBABILITIES", "base_rtts", "generate", "write_csv"]

SEEDS = (1, 2, 3, 4, 5)
DURATION_S = 200.0
RATE = 1000.0
DEFAULT_FILE = Path(__file__).resolve().parent.parent / "studies" / "B" / "campus_rtt.csv"
# Every 0.25 % of the body, then finer steps into the tail; the last point (cdf 1) is the
# 99.99th percentile.
PROBABILITIES = (
    *(i / 400 for i in range(400)),
    0.998,
    0.999,
    0.9995,
    0.9998,
    1.0,
)
_TOP_QUANTILE = 0.9999

# An uncongested network whose only job is to open connections: tiny responses, a link far
# faster than the offered load, so every connection's base RTT is its DelayBox sample.
_SAMPLER = {
    "name": "campus-rtt-sampler",
    "duration_s": DURATION_S,
    "warmup_s": 0.0,
    "topology": {
        "bottleneck_mbps": 10000.0,
        "bottleneck_delay_ms": 0.0,
        "access_mbps": 10000.0,
        "access_delay_ms": 0.0,
        "access_queue_packets": 100000,
        "left_hosts": 4,
        "right_hosts": 4,
    },
    "queue": {"kind": "droptail", "limit": 100000},
    "tcp": {"preset": "freebsd-4.x"},
    "traffic": [
        {"kind": "packmime", "rate": RATE, "packmime_rtt": True, "response_cap_bytes": 1000}
    ],
    "measure": {"burst_bin_ms": 0},
}


def base_rtts(seed: int, duration_s: float = DURATION_S) -> np.ndarray:
    """The base RTTs (ms) of the connections one sampler run opens."""
    import aqmlab

    res = aqmlab.run({**_SAMPLER, "seed": seed, "duration_s": duration_s})
    return res.connections["base_rtt_ms"].to_numpy()


def generate(
    seeds: tuple[int, ...] = SEEDS, duration_s: float = DURATION_S
) -> list[tuple[float, float]]:
    """(rtt_ms, cdf) points: quantiles at `PROBABILITIES` of the pooled samples, the last
    one at the 99.99th percentile."""
    x = np.sort(np.concatenate([base_rtts(s, duration_s) for s in seeds]))
    probs = np.array(PROBABILITIES)
    q = np.quantile(x, np.minimum(probs, _TOP_QUANTILE))
    return [(float(v), float(p)) for v, p in zip(q, probs, strict=True)]


def write_csv(points: list[tuple[float, float]], path: str | Path = DEFAULT_FILE) -> Path:
    p = Path(path)
    head = [
        "# Study B general minimum-RTT law, substitute (aqmlab/reproduce/campus_rtt.py).",
        "# PackMime-HTTP DelayBox RTT = client-side + server-side PackMimeHTTPXmit sample (ns-2,",
        "# model-facts 8.3.9-8.3.10), quantiles of "
        f"{len(SEEDS)} x {DURATION_S:g} s x {RATE:g} connections/s, cut at the 99.99th percentile.",
        "rtt_ms,cdf",
    ]
    rows = [f"{v:.4f},{c:.6g}" for v, c in points]
    p.write_text("\n".join([*head, *rows]) + "\n", encoding="utf-8")
    return p


if __name__ == "__main__":
    print(write_csv(generate(), sys.argv[1] if len(sys.argv) > 1 else DEFAULT_FILE))
