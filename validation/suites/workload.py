"""PackMime-HTTP's workload: our generators against ns-2.35's own random variables.

The end-to-end anchor (`e2e`) compares whole runs, and each side draws its own PackMime
workload; at the anchor's knee the figures move with the offered load (loss by about 9 %
per 1 % of load across ns-2's own seeds), so a small difference between the two workload
models would show there as a difference of the network. This suite compares the workloads
alone, over many seeds, at no simulation cost: ns-2 draws from its PackMime random variables
in a loop (`ns2/packmime_draws.tcl`, the same generators, streams and order as a
`packmime_e2e.tcl` run of the seed, which the suite checks on every run: `e2e_check_rows`),
aqmlab from its PackMime source (`aqmlab._core.packmime_draws`, the connections a run of the
seed opens: python/tests/test_packmime_draws.py).

The anchor's setting: two PackMime-HTTP/1.0 instances at 125 new connections/s, 360 s, each
instance a replication (independent streams on both sides); the per-replication figures
count the connections opened in the measured window, 60-360 s. Compared:
- the connection process: connections per window (mean, and its spread over replications,
  which the long-range dependence of the arrivals sets), and the index of dispersion of the
  counts per 1 s and per 10 s (burstiness at the time scales of a queue's build-up);
- the offered load: response bytes per second with each response counted up to 1 MB (the
  body of the size distribution, which sets the load a seed offers) and the number of
  responses above 1 MB (the tail; the whole load, whose mean a few responses of tens of MB
  make too noisy to resolve, is in the note);
- the marginal distributions, pooled: two-sample KS distance of the gaps between
  connections, request sizes, response sizes, server delays and the RTTs the DelayBoxes add
  (both boxes, and the client-side box), each CDF evaluated on a fixed grid of 2,001
  log-spaced points (so that 400 seeds fit in memory), with ns-2 against itself (its
  instance 0 against its instance 1) in the note.

Tolerances: rates and loads within 2 % (at the knee 2 % of load is the end-to-end loss
tolerance), the spread within 20 %, the dispersion indices and the tail count within 10 %,
KS distances 0.01 (a third of the response-time one). The fast subset (`make test`) runs
30 seeds; `--all` runs 400 (400 ns-2 runs of about 2 s of CPU each: ~7 minutes on two cores).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from aqmlab import _core
from aqmlab.analysis.intervals import welch_interval
from validation import ns2, ns2_record, sims
from validation.results import Row, row_maker
from validation.suites import e2e

SUITE = "workload"
RATE = 125.0  # the anchor's rate per instance (bench/packmime_ns2_anchor.toml)
STOP_S = 360.0
WINDOW_S = (60.0, 360.0)
FAST_SEEDS = tuple(range(1, 31))
ALL_SEEDS = tuple(range(1, 401))
BIG = 1_000_000  # bytes: a response above this is the distribution's tail
TOL_RATE = 0.02
TOL_SPREAD = 0.20
TOL_DISPERSION = 0.10
TOL_MARGINAL_KS = 0.01

# The CDF grids of the marginals (log-spaced; sizes on integers, where a size's CDF steps).
GRIDS = {
    "gap_s": np.logspace(-9, 2, 2001),
    "request_bytes": np.unique(np.floor(np.logspace(0, 10, 2001))),
    "response_bytes": np.unique(np.floor(np.logspace(0, 10, 2001))),
    "server_delay_s": np.logspace(-9, 0, 2001),
    "rtt_ms": np.logspace(-3, 5, 2001),
    "client_rtt_ms": np.logspace(-3, 5, 2001),
}
MARGINAL_NAMES = {
    "gap_s": "gap between connections",
    "request_bytes": "request size",
    "response_bytes": "response size",
    "server_delay_s": "server delay",
    "rtt_ms": "RTT added by the two DelayBoxes",
    "client_rtt_ms": "RTT added by the client-side DelayBox",
}


@dataclass
class Replication:
    """One PackMime instance's draws over one seed, reduced."""

    connections: int
    load_capped_mbps: float
    load_mbps: float
    big: int
    dispersion_1s: float
    dispersion_10s: float
    cdf: dict[str, np.ndarray] = field(default_factory=dict)  # counts <= each grid point
    n: dict[str, int] = field(default_factory=dict)


def _dispersion(starts: np.ndarray, width: float) -> float:
    lo, hi = WINDOW_S
    counts, _ = np.histogram(starts, bins=np.arange(lo, hi + width / 2, width))
    return float(counts.var(ddof=1) / counts.mean())


def reduce(cols: dict[str, np.ndarray]) -> Replication:
    """A replication's figures from its connections (the columns of a replay file)."""
    start = np.asarray(cols["start_s"], dtype=float)
    rsp = np.asarray(cols["response_bytes"], dtype=float)
    inside = (start >= WINDOW_S[0]) & (start < WINDOW_S[1])
    span = WINDOW_S[1] - WINDOW_S[0]
    values = {k: np.asarray(cols[k], dtype=float) for k in GRIDS if k != "gap_s"}
    values["gap_s"] = np.diff(start)
    rep = Replication(
        connections=int(inside.sum()),
        load_capped_mbps=float(np.minimum(rsp[inside], BIG).sum() * 8 / span / 1e6),
        load_mbps=float(rsp[inside].sum() * 8 / span / 1e6),
        big=int((rsp[inside] > BIG).sum()),
        dispersion_1s=_dispersion(start, 1.0),
        dispersion_10s=_dispersion(start, 10.0),
    )
    for k, grid in GRIDS.items():
        x = np.sort(values[k])
        rep.cdf[k] = np.searchsorted(x, grid, side="right")
        rep.n[k] = len(x)
    return rep


def ours(seed: int) -> list[Replication]:
    """aqmlab's two instances of the anchor (its sources 0 and 1) for `seed`."""
    return [
        reduce({k: np.asarray(v) for k, v in _core.packmime_draws(RATE, STOP_S, seed, i).items()})
        for i in (0, 1)
    ]


def _params(seed: int) -> str:
    return ns2.tcl_array("P", {"seed": seed, "rate": RATE, "stop": STOP_S})


def _save(reps: list[Replication], path: Path) -> None:
    arrays = {}
    for i, r in enumerate(reps):
        for k in GRIDS:
            arrays[f"{i}.{k}"] = r.cdf[k]
    np.savez_compressed(path.with_suffix(".npz"), **arrays)
    scalars = [{k: v for k, v in r.__dict__.items() if k not in ("cdf",)} for r in reps]
    path.write_text(json.dumps(scalars) + "\n")


def _load(path: Path) -> list[Replication]:
    arrays = np.load(path.with_suffix(".npz"))
    reps = []
    for i, s in enumerate(json.loads(path.read_text())):
        r = Replication(**{k: v for k, v in s.items() if k != "n"})
        r.n = s["n"]
        r.cdf = {k: arrays[f"{i}.{k}"] for k in GRIDS}
        reps.append(r)
    return reps


def _ns2_post(wd: Path) -> None:
    """Reduces a packmime_draws.tcl run's draws<i>.csv, then removes them (2 MB each)."""
    reps = []
    for i in (0, 1):
        f = wd / f"draws{i}.csv"
        df = pl.read_csv(f)
        reps.append(reduce({c: df[c].to_numpy() for c in df.columns}))
        f.unlink()
    _save(reps, wd / "reduced.json")


def ns2_jobs(base: Path, seeds: tuple[int, ...]) -> list:
    jobs = []
    for s in seeds:
        jobs.extend(
            sims.resumable_ns2(
                base, s, "packmime_draws.tcl", _params(s), post=_ns2_post, result="reduced.json"
            )
        )
    return jobs


def _ks(a: list[Replication], b: list[Replication], k: str) -> float:
    ca = np.sum([r.cdf[k] for r in a], axis=0) / sum(r.n[k] for r in a)
    cb = np.sum([r.cdf[k] for r in b], axis=0) / sum(r.n[k] for r in b)
    return float(np.max(np.abs(ca - cb)))


def _spread_interval(a: np.ndarray, b: np.ndarray) -> float:
    """Half-width (relative) of the 95 % interval of sd(b)/sd(a) − 1: the log of a sample
    variance has variance ≈ 2/(n − 1) for normal values; the interval's wider side."""
    se = math.sqrt(2 / (len(a) - 1) + 2 / (len(b) - 1)) / 2  # of log(sd ratio)
    ratio = float(np.std(b, ddof=1) / np.std(a, ddof=1))
    return max(ratio * math.exp(1.96 * se) - ratio, ratio - ratio * math.exp(-1.96 * se))


def rows_of(ns: list[Replication], us: list[Replication], seeds: tuple[int, ...]) -> list[Row]:
    row = row_maker(
        SUITE,
        "packmime_http10_rate125",
        f"ns-2 {seeds[0]}-{seeds[-1]}; aqmlab {seeds[0]}-{seeds[-1]} (2 instances each)",
    )
    out: list[Row] = []

    def mean_row(metric, attr, tol, note):
        a = np.array([getattr(r, attr) for r in ns], dtype=float)
        b = np.array([getattr(r, attr) for r in us], dtype=float)
        iv = welch_interval(b, a).half_width
        out.append(
            row(
                metric,
                a.mean(),
                b.mean(),
                kind="rel",
                tol=tol,
                note=note + f"; sd over replications: ns-2 {a.std(ddof=1):.4g}, aqmlab "
                f"{b.std(ddof=1):.4g}",
                interval=iv / abs(a.mean()) if iv is not None else None,
            )
        )

    mean_row("connections opened, 60-360 s", "connections", TOL_RATE, "mean per replication")
    a = np.array([r.connections for r in ns], dtype=float)
    b = np.array([r.connections for r in us], dtype=float)
    out.append(
        row(
            "connections opened, 60-360 s: standard deviation over replications",
            a.std(ddof=1),
            b.std(ddof=1),
            kind="rel",
            tol=TOL_SPREAD,
            note="set by the arrivals' long-range dependence (FSD, d = 0.33); interval of "
            "the ratio from the sample variances (normal approximation)",
            interval=_spread_interval(a, b),
        )
    )
    for attr, width in (("dispersion_1s", "1 s"), ("dispersion_10s", "10 s")):
        mean_row(
            f"index of dispersion of connections per {width}",
            attr,
            TOL_DISPERSION,
            "variance / mean of the counts, 60-360 s, mean over replications",
        )
    whole_ns = np.array([r.load_mbps for r in ns])
    whole_ours = np.array([r.load_mbps for r in us])
    whole_iv = welch_interval(whole_ours, whole_ns).half_width or math.nan
    mean_row(
        "offered response load, each response up to 1 MB (Mb/s)",
        "load_capped_mbps",
        TOL_RATE,
        "response bytes of the connections opened 60-360 s, × 8 / 300 s. The whole load, "
        f"each response in full: ns-2 {whole_ns.mean():.3f}, aqmlab {whole_ours.mean():.3f} "
        f"Mb/s, difference {100 * (whole_ours.mean() / whole_ns.mean() - 1):+.1f} % ± "
        f"{100 * whole_iv / whole_ns.mean():.1f} % (sd over replications {whole_ns.std(ddof=1):.2f}"
        f" and {whole_ours.std(ddof=1):.2f}): a few responses of tens of MB make its mean "
        "too noisy to resolve 2 % with any feasible number of seeds, so its two parts are "
        "compared: this row and the count above 1 MB",
    )
    mean_row(
        "responses above 1 MB, 60-360 s",
        "big",
        TOL_DISPERSION,
        "the tail of the download sizes (download state, extrapolated table)",
    )
    for k, name in MARGINAL_NAMES.items():
        self_ks = _ks(ns[0::2], ns[1::2], k)
        out.append(
            row(
                f"{name}: CDF distance (two-sample KS)",
                0.0,
                0.0,
                kind="given",
                tol=TOL_MARGINAL_KS,
                difference=_ks(ns, us, k),
                note=f"pooled over all replications, on a {len(GRIDS[k])}-point log grid; "
                f"ns-2 against itself, instance 0 against instance 1: {self_ks:.4f}",
            )
        )
    return out


# The check that ns2/packmime_draws.tcl draws what a packmime_e2e.tcl run draws.
CHECK_SEED = 2
CHECK_STOP_S = 20.0
# Connections opened before this have their SYN and request arrive by the stop (a server-side
# RTT reaches 5 s).
CHECK_OPENED_S = 6.0


def _close(a: np.ndarray, b: np.ndarray, tol: float) -> np.ndarray:
    """For each value of `a`, whether some value of `b` lies within `tol` of it."""
    b = np.sort(b)
    i = np.clip(np.searchsorted(b, a), 1, len(b) - 1)
    return np.minimum(np.abs(b[i] - a), np.abs(b[i - 1] - a)) <= tol


def e2e_check_rows(out: Path) -> list[Row]:
    """Runs packmime_e2e.tcl (the anchor under drop-tail, CHECK_STOP_S seconds) and
    packmime_draws.tcl for CHECK_SEED, and counts the recorded connections the draws
    reproduce, of those opened in its first CHECK_OPENED_S seconds, connection by
    connection: opening time (within 1 µs: the script sums gaps that ns-2's `value` command
    prints to 7 digits, ranvar.cc), request and response sizes (7 digits likewise) and the
    client-side box's delay (3 decimals, the delay file's); the server delay and the
    server-side box's delay, which a run draws in arrival order, as a value of the drawn
    sequence. A connection a box never saw (ns2_record.Recorded) counts as not reproduced."""
    v = e2e.VARIANTS[0]
    doc = e2e.anchor_doc(v)
    doc["duration_s"], doc["warmup_s"] = CHECK_STOP_S, 1.0
    run_dir, draws_dir = out / SUITE / "e2e_check" / "run", out / SUITE / "e2e_check" / "draws"
    ns2.run("packmime_e2e.tcl", e2e._anchor_params(v, CHECK_SEED, doc), run_dir)
    ns2_record.pack(run_dir)
    params = ns2.tcl_array("P", {"seed": CHECK_SEED, "rate": RATE, "stop": CHECK_STOP_S})
    ns2.run("packmime_draws.tcl", params, draws_dir)
    checked = agreeing = 0
    for i in (0, 1):
        rec = pl.read_csv(run_dir / f"replay{i}.csv")
        drawn = pl.read_csv(draws_dir / f"draws{i}.csv")
        n = rec.filter(pl.col("start_s") < CHECK_OPENED_S).height
        r, d = rec.head(n), drawn.head(n)
        same = (
            (np.abs(r["start_s"] - d["start_s"]).to_numpy() <= 1e-6)
            & (r["request_bytes"] == d["request_bytes"]).to_numpy()
            & (np.abs(r["response_bytes"] / d["response_bytes"] - 1).to_numpy() <= 1e-6)
            & (np.abs(r["client_rtt_ms"] - d["client_rtt_ms"]).to_numpy() <= 2.1e-3)
            & _close(r["server_delay_s"].to_numpy(), drawn["server_delay_s"].to_numpy(), 1e-9)
            & _close(
                (r["rtt_ms"] - r["client_rtt_ms"]).to_numpy(),
                (drawn["rtt_ms"] - drawn["client_rtt_ms"]).to_numpy(),
                2.1e-3,
            )
        )
        checked += n
        agreeing += int(same.sum()) if d.height == n else 0
    row = row_maker(SUITE, "packmime_draws_vs_e2e_run", f"ns-2 {CHECK_SEED}; -")
    return [
        row(
            f"connections of a packmime_e2e.tcl run (opened in {CHECK_OPENED_S:g} s) the draws "
            "reproduce",
            checked,
            agreeing,
            kind="abs",
            tol=0,
            note="ns-2 column: connections recorded; aqmlab column: connections "
            "identical (both columns are ns-2's: this checks the suite's ns-2 script)",
        )
    ]


def run(out: Path, fast: bool) -> list[Row]:
    seeds = FAST_SEEDS if fast else ALL_SEEDS
    base = out / SUITE
    sims.parallel(ns2_jobs(base, seeds))
    ns = [r for s in seeds for r in _load(base / f"ns2_s{s}" / "reduced.json")]
    us = [r for s in seeds for r in ours(s)]
    return e2e_check_rows(out) + rows_of(ns, us, seeds)
