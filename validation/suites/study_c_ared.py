"""Study C's overload cells in ns-2.35 and in aqmlab (on demand, `--all`; issue 16).

Study C (Weigle, Jeffay, Smith 2005; `python/src/aqmlab/studies/C/`) runs two-way
PackMime-HTTP/1.0 over a 10 Mb/s bottleneck with per-connection RTTs from DelayBox and ns-2
Full-TCP. At 100 % and 105 % load its Adaptive RED cell with a 5 ms target (ARED-5ms) loses
15-19 % of the packets and has medians of seconds (issue 16: is the study file, the model,
or neither wrong?). This suite runs those cells, and the
drop-tail cell DT-148q as a reference, in ns-2.35 (`ns2/study_c_cell.tcl`) and in aqmlab,
from the same resolved scenario:

* the cells are planned from the study's own sweep file (`main.toml`, full scale) with the
  sweep machinery: `load` is resolved to a PackMime `rate` through the study's calibration
  (measured once by aqmlab at 100 Mb/s and cached in `OUT/study_c_ared/calibration.json`);
  only Reno, the two queues and the two loads are kept;
* both sides run that scenario with a shorter run: the study's 120 s warm-up, then
  `MEASURED_S` seconds (the study runs until 250,000 exchanges or 2,400 s), seeds `SEEDS`;
* ns-2 gets every setting from the resolved scenario (rates, topology, RTT table, Full-TCP
  settings of the `ns2-weigle2005` preset, queue), mapped in `ns2_queue_settings` and
  `ns2_params` with the ns-2 source of each.

Compared per cell, pooled over the seeds: response-time p50 and p90 (both clouds) and the
forward cloud's p50 (the study's metric), and per bottleneck direction utilisation, loss rate
and mean queue; for ARED the time average of max_p. An extra cell runs the 100 % rate on the
uncongested 100 Mb/s network (the calibration's claim, in ns-2 too). Tolerances are those of
the e2e suite (offered load: 5 %). Without `--all` the suite returns no rows.

Runtime on the 2-core machine, two simulations at a time: ≈ 14 min from scratch (15 ns-2
runs of 2-3 min, 15 aqmlab runs of ≈ 10 s, one calibration of ≈ 1 min). A run whose inputs
(parameter file with the script's digest, scenario file) are unchanged is not repeated.
Findings: docs/validation.md ("Study C's ARED at overload").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from aqmlab import scenario as sc
from aqmlab.reproduce import scaling
from aqmlab.study import sweepfile
from validation import ns2, sims
from validation.results import Row, row_maker
from validation.sims import TOL_QUANTILE, TOL_QUEUE  # TOL_QUEUE also for ARED max_p

SUITE = "study_c_ared"
REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "python" / "src" / "aqmlab" / "studies" / "C"
# Two cores: never more than two simulations at once (ns-2 and aqmlab alike).


QUEUES = ("ARED-5ms", "DT-148q")  # labels of main.toml's queue axis
LOADS = ("100%", "105%")  # labels of its load axis
TCP = "reno"  # Study C's Reno cells (main.toml tcp axis)
UNCONGESTED = "uncongested"  # the 100 % rate at 100 Mb/s (label of the extra cell)
TOL_OFFERED = 0.05  # offered load on the uncongested network, relative (heavy-tailed sizes)
# Ten seeds a side: over three, the 95 % interval of a loss or median difference in the
# drop-tail cells was ±40-130 % (validation/suites/e2e.py, ANCHOR_SEEDS).
SEEDS = tuple(range(1, 11))
WARMUP_S = 120.0  # the study's warm-up (base.toml)
MEASURED_S = 300.0  # the study measures up to 250,000 exchanges / 2,280 s; shortened here
RED_SAMPLE_S = 0.1  # ns-2's cur_max_p_/ave_ sampling period (aqmlab: 100-ms queue windows)

# Tolerances (the e2e suite's).

NOTE_RT = (
    "response time: request write (connection open for a connection's first request) to the "
    "last byte of the response, requests written at or after the warm-up and completed by "
    "the end, both clouds pooled (ns-2: PackMime set-outfile/set-warmup; aqmlab: exchanges "
    "start_s >= warmup_s)"
)
NOTE_MAXP = (
    "ARED max_p, time average after the warm-up; ns-2: cur_max_p_ sampled every 100 ms; "
    "aqmlab: the queue table's aqm_state (max_p) per 100-ms window"
)


# ---------------------------------------------------------------------------------------------
# The cells, as the study resolves them.


@dataclass
class Cell:
    queue: str  # label, e.g. "ARED-5ms"
    load: str  # label, e.g. "105%"
    rate: float  # PackMime new connections/s of each cloud
    scenario: dict[str, Any]  # the resolved scenario of the full-scale study (seed 1)

    @property
    def name(self) -> str:
        return f"{self.queue}_{self.load.rstrip('%')}"


def _subset_sweep(dest: Path) -> Path:
    """main.toml at full scale, kept to Reno and the cells of QUEUES × LOADS."""
    doc = sc.read_toml(STUDY / "main.toml")
    doc.pop("scale", None)
    head = dict(doc["sweep"])
    head["scenario"] = str((STUDY / head["scenario"]).resolve())
    head["set"] = {**head.get("set", {}), "tcp.recovery": TCP}
    doc["sweep"] = head
    axes = []
    for i, raw in enumerate(doc["axis"]):
        if raw["name"] == "tcp":
            continue
        wanted = {"queue": QUEUES, "load": LOADS}[raw["name"]]
        labels = list(sweepfile.parse_axis(i, raw).labels)
        idx = [j for j, lab in enumerate(labels) if lab in wanted]
        a = dict(raw)
        a["zip"] = {f: [vs[j] for j in idx] for f, vs in raw["zip"].items()}
        a["labels"] = [labels[j] for j in idx]
        axes.append(a)
    doc["axis"] = axes
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(scaling.to_toml(doc), encoding="utf-8")
    return dest


def study_cells(out: Path, log=None) -> list[Cell]:
    """Plans the cells (calibrating once, cached in OUT/study_c_ared/calibration.json)."""
    base = out / SUITE
    sweep = sweepfile.read(_subset_sweep(base / "sweep.toml"))
    runs = sweepfile.plan(sweep, base / "calibration.json", workers=sims.WORKERS, log=log)
    cells = []
    for r in runs:
        if r.error:
            raise ns2.Ns2Failed(f"study C cell {r.labels}: {r.error}")
        rates = {t["rate"] for t in r.scenario["traffic"]}
        assert len(rates) == 1, "both clouds of a Study C cell have one rate"
        cells.append(Cell(r.labels["queue"], r.labels["load"], rates.pop(), r.scenario))
    # The calibration's own claim, checked in ns-2 too: the 100 % rate on the uncongested
    # network (uncongested.toml: the bottleneck at 100 Mb/s, a queue that never fills).
    ref = next(c for c in cells if c.queue == QUEUES[-1] and c.load == LOADS[0])
    unc = json.loads(json.dumps(ref.scenario))
    unc["topology"]["bottleneck_mbps"] = 100.0
    unc["queue"] = {"kind": "droptail", "limit": 1000}
    cells.append(Cell(UNCONGESTED, ref.load, ref.rate, unc))
    return cells


# ---------------------------------------------------------------------------------------------
# The ns-2 side.


def ns2_queue_settings(q: dict[str, Any]) -> tuple[str, int, dict[str, object]]:
    """(ns-2 queue class, limit_, Queue/RED class settings) for our [queue] table."""
    if q["kind"] == "droptail":
        # drop-tail.cc enque: drops when length + 1 >= qlim_ (the packet on the wire counts),
        # so limit_ L holds L - 1 waiting; ours holds `limit` waiting (docs/queues.md).
        return "DropTail", int(q["limit"]) + 1, {}
    if q["kind"] != "ared" or q.get("mode", "ns2") != "ns2":
        raise ValueError(f"queue {q}: only droptail and ared (mode ns2) are mapped")
    w_q = {"auto_1s": 0, "auto_rtt": -1, "auto_fast": -2}.get(q.get("w_q", "auto_1s"), q.get("w_q"))
    if q.get("ecn", "off") != "off":
        raise ValueError("ECN cells are not mapped (Study C's ARED-5ms is ecn = off)")
    s: dict[str, object] = {
        # red.cc estimator(): updateMaxP on arrivals when adaptive_ == 1 (our mode "ns2").
        "adaptive_": 1,
        # red.cc initialize_params(): thresh_ 0 -> max(5, targetdelay_·ptc/2), maxthresh_ 0 ->
        # 3·thresh_, ptc = bandwidth/(8·mean_pktsize_) (reset()): ours auto::min_th.
        "targetdelay_": float(q.get("target_delay_ms", 5.0)) / 1000.0,
        "thresh_": q.get("min_th", 0),
        "maxthresh_": q.get("max_th", 0),
        # q_weight_ 0 -> 1 - exp(-1/ptc) (our "auto_1s"); -1 -> RTT rule ("auto_rtt").
        "q_weight_": w_q,
        "mean_pktsize_": int(q["mean_pkt_size"]),
        "bytes_": "true" if q.get("byte_mode", True) else "false",
        "queue_in_bytes_": "true" if q.get("queue_in_bytes", True) else "false",
        # updateMaxP(): alpha_, beta_, top_, bottom_; interval_ in estimator().
        "alpha_": q.get("alpha", 0.01),
        "beta_": q.get("beta", 0.9),
        "interval_": q.get("interval_s", 0.5),
        "top_": q.get("top", 0.5),
        # bottom_ 0 would be automatic (min(0.01, 80000/bw), initialize_params); the study
        # sets 0.01 explicitly (Table 3), as ns-2.1b9's default (ns-default.tcl 141 there).
        "bottom_": q["bottom"],
        # reset(): cur_max_p = 1/linterm_ (initial max_p; ours max_p, default 0.1).
        "linterm_": 1.0 / float(q.get("max_p", 0.1)),
        "gentle_": "true" if q.get("gentle", True) else "false",
        "wait_": "true" if q.get("wait", True) else "false",
        # enque(): with use_mark_p_ true (2.35's default) the forced region avg >= 2·th_max
        # is skipped; our ecn = "off" keeps it (docs/queues.md): use_mark_p_ false is ns-2's
        # equivalent (and what 2.1b9, which has no use_mark_p_, always does).
        "use_mark_p_": "false",
        "setbit_": "false",
    }
    return "RED", int(q["limit"]), s


def _rtt_cdf_file(scenario: dict[str, Any], path: Path) -> Path:
    """The RTT table as an ns-2 Empirical CDF of the one-way box delay d/2 (ms)."""
    r = scenario["rtt"]
    if r.get("kind") != "empirical":
        raise ValueError(f"rtt {r.get('kind')}: only an empirical table is mapped")
    box = scenario.get("delay_box") or {}
    if box.get("placement") != "boxes" or box.get("client_share") != 1.0:
        # study_c_cell.tcl's rule: the client-side box delays the flow by d/2 both ways.
        raise ValueError(f"delay_box {box}: only placement 'boxes' with client_share 1 is mapped")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{v / 2.0!r} 0 {c!r}\n" for v, c in r["points"]))
    return path


def ns2_params(cell: Cell, seed: int, workdir: Path) -> str:
    doc = cell.scenario
    topo, tcp = doc["topology"], doc["tcp"]
    queue, limit, red = ns2_queue_settings(doc["queue"])
    if tcp["recovery"] != "reno" or tcp.get("ecn"):
        raise ValueError("only the Reno, non-ECN cells are mapped")
    # The preset's values that the script maps one to one (docs/tcp.md, ns2-weigle2005).
    assert tcp["header_bytes"] == 40 and tcp["nagle"] and tcp["dupack_threshold"] == 3
    assert tcp["timer_model"] == "ns2" and tcp["rwnd"] % tcp["mss"] == 0
    p = {
        "seed": seed,
        "rate": cell.rate,
        "tcp": "Reno",
        "bw": f"{topo['bottleneck_mbps']}Mb",
        "delay": f"{topo['bottleneck_delay_ms']}ms",
        "access_bw": f"{topo['access_mbps']}Mb",
        "access_delay": f"{topo['access_delay_ms']}ms",
        "access_limit": int(topo["access_queue_packets"]),
        "queue": queue,
        "limit": limit,
        "warmup": int(WARMUP_S),
        "stop": WARMUP_S + MEASURED_S,
        "sample": RED_SAMPLE_S,
        "rtt_cdf": str(_rtt_cdf_file(doc, workdir / "rtt_half_ms.cdf")),
        "segsize": tcp["mss"],
        "window": tcp["rwnd"] // tcp["mss"],
        "window_init": tcp["initial_window"],
        "tick": tcp["tick_ms"] / 1000.0,
        "minrto": tcp["min_rto_s"],
        "maxrto": tcp["max_rto_s"],
        "rtxcur_init": tcp["initial_rto_s"],
    }
    lines = [ns2.tcl_array("P", p)]
    lines += [f"Queue/RED set {k} {v}" for k, v in red.items()]
    return "\n".join(lines) + "\n"  # stamped with the scripts' digest by sims.resumable_ns2


# ---------------------------------------------------------------------------------------------
# The aqmlab side: the resolved scenario with the suite's seed and length.


def ours_doc(cell: Cell, seed: int) -> dict[str, Any]:
    d = json.loads(json.dumps(cell.scenario))
    d["name"] = f"{SUITE}-{cell.name}-s{seed}"
    d["seed"] = seed
    d["warmup_s"] = WARMUP_S
    d["duration_s"] = WARMUP_S + MEASURED_S
    d.pop("max_exchanges", None)
    return d


def jobs_for(cell: Cell, out: Path) -> list:
    base = out / SUITE / cell.name
    jobs = []
    for s in SEEDS:
        # A run whose inputs are unchanged since its results were written is not repeated.
        params = ns2_params(cell, s, base / f"ns2_s{s}")
        jobs.extend(sims.resumable_ns2(base, s, "study_c_cell.tcl", params))
        jobs.extend(sims.resumable_ours(base, s, ours_doc(cell, s)))
    return jobs


# ---------------------------------------------------------------------------------------------
# Reading the results.


def red_state_ours(outdir: Path) -> dict[str, float]:
    """Time average of max_p per direction after the warm-up (queue table, 100-ms windows)."""
    q = pl.read_parquet(outdir / "queue.parquet").filter(pl.col("t_s") > WARMUP_S)
    out = {}
    for d, short in (("forward", "fwd"), ("reverse", "rev")):
        out[f"{short}.maxp_time_avg"] = float(
            q.filter(pl.col("direction") == d)["aqm_state"].mean()
        )
    return out


def cell_rows(cell: Cell, out: Path) -> list[Row]:
    base = out / SUITE / cell.name
    seeds = f"ns-2 {SEEDS[0]}-{SEEDS[-1]}; aqmlab {SEEDS[0]}-{SEEDS[-1]}"
    scen = f"studyC_reno_{cell.name}"
    what = (
        f"Study C Reno {cell.queue} at {cell.load} ({cell.rate:.2f} conn/s per cloud), "
        f"{WARMUP_S:.0f} s warm-up + {MEASURED_S:.0f} s"
    )

    make = row_maker(SUITE, scen, seeds)

    def row(metric, a, b, *, kind, tol, note="", interval=None):
        return make(metric, a, b, kind=kind, tol=tol, note=f"{what}; {note}", interval=interval)

    per_ns = [sims.response_times_ns2(base / f"ns2_s{s}") for s in SEEDS]
    per_ours = [sims.response_times_ours(base / f"aqmlab_s{s}", WARMUP_S) for s in SEEDS]
    rows = sims.response_rows(row, per_ns, per_ours, (50, 90), NOTE_RT)
    fwd_ns = [sims.response_times_ns2(base / f"ns2_s{s}", (0,)) for s in SEEDS]
    fwd_ours = [sims.response_times_ours(base / f"aqmlab_s{s}", WARMUP_S, "right") for s in SEEDS]
    p50_ns = float(np.median(np.concatenate(fwd_ns)))
    rows.append(
        row(
            "response time p50, forward cloud only (s)",
            p50_ns,
            np.median(np.concatenate(fwd_ours)),
            kind="rel",
            tol=TOL_QUANTILE,
            note="the study's own metric: responses of the cloud whose clients are on the right",
            interval=sims.interval_of(
                [np.median(x) for x in fwd_ns], [np.median(x) for x in fwd_ours], "rel", p50_ns
            ),
        )
    )
    ns_stats = [sims.read_stats(base / f"ns2_s{s}" / "stats.txt") for s in SEEDS]
    ours = [json.loads((base / f"aqmlab_s{s}" / "summary.json").read_text()) for s in SEEDS]
    rate_bps = cell.scenario["topology"]["bottleneck_mbps"] * 1e6
    for d, ad in (("fwd", "forward"), ("rev", "reverse")):
        name = "forward (left → right)" if d == "fwd" else "reverse (right → left)"
        if cell.queue == UNCONGESTED:
            mbps_ns = [s[f"{d}.bdepartures_"] * 8e-6 / s["measured_s"] for s in ns_stats]
            mbps_ours = [o["summary"][ad]["throughput_mbps"] for o in ours]
            rows.append(
                row(
                    f"offered load (Mb/s), {name}",
                    np.mean(mbps_ns),
                    np.mean(mbps_ours),
                    kind="rel",
                    tol=TOL_OFFERED,
                    note="bytes through the 100 Mb/s bottleneck × 8 / measured time: what "
                    "the study's 100 % rate offers (nominal 10 Mb/s)"
                    + sims.per_seed(mbps_ns, mbps_ours, ".3f"),
                    interval=sims.interval_of(mbps_ns, mbps_ours, "rel", np.mean(mbps_ns)),
                )
            )
            continue
        rows.extend(sims.direction_rows(row, ns_stats, ours, rate_bps, d))
        if cell.scenario["queue"]["kind"] == "ared":
            mp_ns = [s[f"{d}.maxp_time_avg"] for s in ns_stats]
            mp_ours = [red_state_ours(base / f"aqmlab_s{s}")[f"{d}.maxp_time_avg"] for s in SEEDS]
            rows.append(
                row(
                    f"ARED max_p, time average, {name}",
                    np.mean(mp_ns),
                    np.mean(mp_ours),
                    kind="rel",
                    tol=TOL_QUEUE,
                    note=NOTE_MAXP + sims.per_seed(mp_ns, mp_ours, ".3f"),
                    interval=sims.interval_of(mp_ns, mp_ours, "rel", np.mean(mp_ns)),
                )
            )
    return rows


def run(out: Path, fast: bool) -> list[Row]:
    if fast:
        return []
    out = out.resolve()  # ns-2 runs in its work directory: every path it reads is absolute
    cells = study_cells(out)
    jobs = []
    for c in cells:
        jobs.extend(jobs_for(c, out))
    sims.parallel(jobs)
    rows: list[Row] = []
    for c in cells:
        rows.extend(cell_rows(c, out))
    return [r for r in rows if not math.isnan(r.tolerance)]
