"""Study A's think-time threshold, derived from the paper's calibration (its setup, not its
results).

Christiansen et al. wrote their generator from Mah's distributions (§3.2) and did not say how
it drew think times. Used as measured (mean 1,287 s, up to a day), Mah's law gives a user
~0.19 kb/s and ~54,000 users for 10 Mb/s, against the paper's ~3,400 (§3.3, Figure 4). The
public tools that shipped Mah's tables, GloMoSim 2.02's HTTP client (`http_client.pc`) and
QualNet's (`app_http.cpp`), fold a think time above the client's threshold back as its
remainder modulo the threshold (`think_wrap_s`; docs/workload.md). The threshold is a
configuration parameter whose value for the UNC generator is not published.

The paper's Table 2 measures the generator on the unconstrained network: requests (one TCP
connection each) in 70 minutes at each load. Divided by the users of each load (load × 3,400,
§3.3) it is ≈0.0331 requests per user per second at every load (0.0329-0.0337). A user's
requests per second are its mean objects per page (Mah: 2.90) over the mean cycle, think time
plus the time to fetch a page, so this fixes the mean folded think time, hence the threshold.

`python -m aqmlab.reproduce.mah_threshold [--users N]` measures the request rate on Study A's
uncongested network (its base scenario with the router link at 100 Mb/s) for candidate
thresholds and bisects to the one whose rate is Table 2's, printing each step. Bytes play no
part in it: the users-per-load of the calibration (Mb/s per user, from Mah's size tables)
then checks the model independently against the paper's ~3,400 users per 10 Mb/s
(`aqmlab calibrate`, docs/studies.md).
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import Any

from aqmlab import scenario as sc
from aqmlab.runs import runner

__all__ = ["TABLE2", "USERS_PER_10MBPS", "request_rate", "table2_rate"]

# Table 2 of the paper: typical requests in a 70-minute interval, by load (%).
TABLE2 = {50: 240_379, 70: 329_638, 80: 375_673, 90: 425_293, 98: 461_837, 110: 521_561}
# §3.3: ≈3,400 users offer 10 Mb/s (and 3,750 offer 11 Mb/s).
USERS_PER_10MBPS = 3_400
INTERVAL_S = 70 * 60

BASE = Path(__file__).resolve().parent.parent / "studies" / "A" / "base.toml"


def table2_rate() -> float:
    """Requests per user per second, averaged over Table 2's loads."""
    rates = [
        n / INTERVAL_S / (USERS_PER_10MBPS * load / 100)
        for load, n in TABLE2.items()
        if load != 110
    ]
    # 110 %: §3.3 gives its population directly, 3,750 users.
    rates.append(TABLE2[110] / INTERVAL_S / 3_750)
    return sum(rates) / len(rates)


def _scenario(users: int, threshold: float, seed: int) -> dict[str, Any]:
    doc = sc.read_toml(BASE)
    doc["traffic"][0].pop("load", None)
    doc["traffic"][0]["users"] = users
    doc["traffic"][0]["think_wrap_s"] = threshold
    doc["topology"]["bottleneck_mbps"] = 100.0
    doc["queue"] = {"kind": "droptail", "limit": 50}
    doc["measure"] = {"connections": False, "burst_bin_ms": 0}
    return sc.resolve(copy.deepcopy(doc), seed=seed, base_dir=BASE.parent)


def request_rate(users: int, threshold: float, seed: int = 1) -> float:
    """Requests (exchanges started after the warm-up) per user per second on the unconstrained
    network, over the paper's 90 minutes with 20 discarded."""
    res = runner.run(_scenario(users, threshold, seed))
    ex = res["exchanges"]
    warm = res.summary["scenario"]["warmup_s"]
    span = res.summary["scenario"]["duration_s"] - warm
    started = ex.filter(ex["start_s"] >= warm).height
    return started / users / span


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=5_000)
    ap.add_argument("--lo", type=float, default=300.0)
    ap.add_argument("--hi", type=float, default=3_000.0)
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args(argv)
    target = table2_rate()
    print(f"Table 2: {target:.5f} requests per user per second")
    lo, hi = args.lo, args.hi
    for _ in range(args.steps):
        mid = round((lo + hi) / 2)
        r = request_rate(args.users, mid)
        print(f"threshold {mid:6d} s: {r:.5f} requests per user per second")
        # A longer threshold folds less of the tail away: longer thinks, fewer requests.
        if r > target:
            lo = mid
        else:
            hi = mid
    print(f"threshold ≈ {round((lo + hi) / 2)} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
