"""Queue disciplines, decision by decision (docs/validation.md, "AQM state").

Each case runs ns-2.35 (`ns2/aqm_queue.tcl`) with one queue under test, reads the queue's
history (every arrival, its outcome, every dequeue, and the discipline's state after each
arrival) and replays that history through our discipline (`aqmlab._core.replay_queue_log`):
the random decisions follow ns-2's outcomes, so the deterministic state (RED's average and
`p_b`, ARED's `max_p`, PI's and REM's probability) must agree to ns-2's printing precision
(6 significant digits), and every decision ns-2 took must be one our state allows. Then the
same arrivals go through our discipline with our own random numbers and our own link
(`replay_queue`): drop and mark rates and gaps are compared as statistics, and the link's
dequeue times (following ns-2's decisions) to the microsecond.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aqmlab import _core
from validation import ns2, ns2_trace
from validation.results import Row, compare, row_maker

SUITE = "aqm"

# ns-2 prints its state with 6 significant digits: a relative difference up to 5e-6 is
# rounding; 1e-5 leaves room for the last digit of both rounding and the average's own
# floating-point path.
STATE_TOL = 1e-5
# Statistics of our own random decisions against ns-2's, on the same arrivals: relative.
STAT_TOL = 0.10


@dataclass
class Case:
    name: str
    what: str
    ns2_queue: str  # ns-2 class suffix: RED, PI, REM, DropTail
    ns2_settings: dict[str, object]  # Queue/<class> instance-variable defaults
    ours: dict[str, object]  # our [queue] table
    traffic: dict[str, object]  # P(...) of aqm_queue.tcl
    state: dict[str, str]  # ns-2 variable -> our column
    fast: bool = False
    limit: int = 50
    duration_s: float = 8.0
    seed: int = 1
    rate_mbps: float = 10.0
    delay_ms: float = 10.0
    mean_pkt_size: int = 1000
    vars_traced: list[str] = field(default_factory=list)  # timer-driven (PI, REM)


ONOFF = {
    "traffic": "onoff",
    "udp_flows": 24,
    "pkt_size": 1000,
    "on_s": 0.3,
    "off_s": 0.3,
    "on_rate": "1.07Mb",
}
TCP_ECN = {
    "traffic": "tcp",
    "tcp_flows": 16,
    "tcp_variant": "Newreno",
    "pkt_size": 1000,
    "window": 64,
    "ecn": 1,
    "base_delay_ms": 5,
    "delay_step_ms": 3,
}


def _red(
    *,
    min_th: float,
    max_th: float,
    w_q: float,
    max_p: float = 0.1,
    gentle: bool,
    wait: bool,
    in_bytes: bool = False,
    ecn: str = "off",
    mean: int = 1000,
) -> tuple[dict, dict]:
    """The same RED for ns-2 (Queue/RED defaults) and for us."""
    ns = {
        "thresh_": min_th,
        "maxthresh_": max_th,
        "q_weight_": w_q,
        "linterm_": 1.0 / max_p,
        "gentle_": int(gentle),
        "wait_": int(wait),
        "bytes_": int(in_bytes),
        "queue_in_bytes_": int(in_bytes),
        "mean_pktsize_": mean,
        "setbit_": int(ecn != "off"),
        "use_mark_p_": int(ecn == "mark_p"),
        "mark_p_": 0.1,
    }
    ours = {
        "min_th": min_th,
        "max_th": max_th,
        "w_q": w_q,
        "max_p": max_p,
        "gentle": gentle,
        "wait": wait,
        "queue_in_bytes": in_bytes,
        "byte_mode": in_bytes,
        "mean_pkt_size": mean,
        "ecn": ecn,
        "mark_p": 0.1,
    }
    return ns, ours


def _cases() -> list[Case]:
    red_state = {"ave_": "avg", "prob1_": "p_b"}
    cases = []
    ns, ours = _red(min_th=5, max_th=15, w_q=0.002, gentle=False, wait=False)
    cases.append(
        Case(
            "red_packets",
            "RED in packets, not gentle, no wait: average, p_b, forced region",
            "RED",
            ns,
            {"kind": "red", **ours},
            ONOFF,
            red_state,
            fast=True,
        )
    )
    ns, ours = _red(min_th=5, max_th=15, w_q=0.002, gentle=True, wait=True)
    cases.append(
        Case(
            "red_gentle_wait",
            "RED gentle with wait (ns-2's defaults): the gentle line and the wait rule",
            "RED",
            ns,
            {"kind": "red", **ours},
            ONOFF,
            red_state,
        )
    )
    ns, ours = _red(min_th=5, max_th=15, w_q=0.002, gentle=True, wait=True, in_bytes=True, mean=500)
    cases.append(
        Case(
            "red_bytes",
            "RED in bytes with byte-mode probabilities (mean 500 B, 1,000-B packets)",
            "RED",
            ns,
            {"kind": "red", **ours},
            ONOFF,
            red_state,
            mean_pkt_size=500,
        )
    )
    ns, ours = _red(min_th=5, max_th=15, w_q=0.002, gentle=True, wait=False, ecn="mark_p")
    cases.append(
        Case(
            "red_ecn_mark_p",
            "RED with ECN as ns-2.35 ships it (use_mark_p_): TCP NewReno flows with ECN",
            "RED",
            ns,
            {"kind": "red", **ours},
            TCP_ECN,
            red_state,
            fast=True,
        )
    )
    ns, ours = _red(min_th=5, max_th=15, w_q=0.002, gentle=True, wait=False, ecn="new_gentle")
    cases.append(
        Case(
            "red_ecn_gentle",
            "RED with ECN marking in the linear and gentle regions (use_mark_p_ false)",
            "RED",
            ns,
            {"kind": "red", **ours},
            TCP_ECN,
            red_state,
        )
    )
    ns, _ = _red(min_th=5, max_th=15, w_q=0.002, gentle=True, wait=False)
    ns.update({"adaptive_": 1, "alpha_": 0.01, "beta_": 0.9, "interval_": 0.5})
    cases.append(
        Case(
            "ared",
            "Adaptive RED (ns-2.35, event-driven): max_p's trajectory under overload",
            "RED",
            ns,
            {
                "kind": "ared",
                "min_th": 5,
                "max_th": 15,
                "w_q": 0.002,
                "gentle": True,
                "wait": False,
                "queue_in_bytes": False,
                "byte_mode": False,
                "mean_pkt_size": 1000,
                "mode": "ns2",
                "max_p": 0.1,
            },
            ONOFF,
            {**red_state, "cur_max_p_": "max_p"},
            duration_s=9.0,
            fast=True,
        )
    )
    ns, ours = _red(min_th=5, max_th=100, w_q=1.0, gentle=True, wait=False)
    cases.append(
        Case(
            "gred_i",
            "GRED-I: gentle RED on the instantaneous queue (w_q = 1)",
            "RED",
            ns,
            {"kind": "red", **ours},
            ONOFF,
            red_state,
            limit=100,
        )
    )
    cases.append(
        Case(
            "pi",
            "PI (ns-2.35 defaults a, b, 170 Hz, q_ref 50): probability at every update",
            "PI",
            {"a_": 0.00001822, "b_": 0.00001816, "w_": 170, "qref_": 50, "setbit_": 0},
            {"kind": "pi", "a": 0.00001822, "b": 0.00001816, "sample_hz": 170, "q_ref": 50},
            ONOFF,
            {"prob_": "prob"},
            limit=200,
            vars_traced=["prob_"],
            fast=True,
        )
    )
    cases.append(
        Case(
            "pi_ecn",
            "PI marking ECT packets (setbit_), TCP NewReno flows with ECN",
            "PI",
            {"a_": 0.00001822, "b_": 0.00001816, "w_": 170, "qref_": 50, "setbit_": 1},
            {
                "kind": "pi",
                "a": 0.00001822,
                "b": 0.00001816,
                "sample_hz": 170,
                "q_ref": 50,
                "ecn": True,
            },
            TCP_ECN,
            {"prob_": "prob"},
            limit=200,
            vars_traced=["prob_"],
        )
    )
    rem = {"gamma_": 0.001, "phi_": 1.001, "inw_": 1, "pupdtime_": 0.002, "pbo_": 20}
    ours_rem = {"kind": "rem", "gamma": 0.001, "phi": 1.001, "b_ref": 20, "interval_ms": 2}
    cases.append(
        Case(
            "rem",
            "REM (ns-2.35 defaults): price and probability at every update, drops",
            "REM",
            {**rem, "mean_pktsize_": 1000, "markpkts_": 0},
            {**ours_rem, "mean_pkt_size": 1000},
            ONOFF,
            {"prob_": "prob"},
            limit=200,
            vars_traced=["prob_"],
            fast=True,
        )
    )
    cases.append(
        Case(
            "rem_ecn",
            "REM marking ECT packets at dequeue (markpkts_), TCP NewReno flows with ECN",
            "REM",
            {**rem, "mean_pktsize_": 1000, "markpkts_": 1},
            {**ours_rem, "mean_pkt_size": 1000, "mark": True},
            TCP_ECN,
            {"prob_": "prob"},
            limit=200,
            vars_traced=["prob_"],
        )
    )
    cases.append(
        Case(
            "droptail",
            "Drop-tail 50 (ns-2 holds limit − 1 = 49 waiting: ours with limit 49)",
            "DropTail",
            {},
            {"kind": "droptail", "limit": 49},
            ONOFF,
            {},
            fast=True,
        )
    )
    return cases


CASES = _cases()


def _params(c: Case) -> str:
    p = {
        "seed": c.seed,
        "rate": f"{c.rate_mbps}Mb",
        "delay": f"{c.delay_ms}ms",
        "queue": c.ns2_queue,
        "duration": c.duration_s,
        "state_vars": list(c.state),
        "trace_vars": c.vars_traced,
        **c.traffic,
    }
    lines = [ns2.tcl_array("P", p), f"Queue set limit_ {c.limit}"]
    for k, v in c.ns2_settings.items():
        lines.append(f"Queue/{c.ns2_queue} set {k} {v}")
    return "\n".join(lines) + "\n"


def _ours(c: Case) -> dict:
    q = dict(c.ours)
    q.setdefault("limit", c.limit)
    return q


def run_case(c: Case, out: Path) -> list[Row]:
    """Runs one case in ns-2 and through our discipline; returns its rows."""
    workdir = ns2.run("aqm_queue.tcl", _params(c), out / SUITE / c.name)
    rate = c.rate_mbps * 1e6
    log = ns2_trace.read(workdir / "events.tr", list(c.state), rate)
    seeds = f"ns-2 {c.seed}; aqmlab 1"
    queue_json = json.dumps(_ours(c))
    kinds = [e[0] for e in log.events]
    times = [e[1] for e in log.events]
    idx = [e[2] for e in log.events]
    sizes = [int(log.size[i]) if i >= 0 else 1 for i in idx]
    ect = [bool(log.ect[i]) if i >= 0 else False for i in idx]
    outcomes = [log.outcome[i] if i >= 0 else "accepted" for i in idx]
    replay = _core.replay_queue_log(
        queue_json, rate, c.mean_pkt_size, c.delay_ms / 1e3, kinds, times, sizes, ect, outcomes
    )
    arr = replay["arrivals"]
    rows: list[Row] = []
    row = row_maker(SUITE, c.name, seeds)
    n = len(log.t)
    rows.append(row("arrivals replayed", n, len(arr["t_s"]), kind="abs", tol=0))
    # Deterministic state after each arrival.
    timer_driven = bool(c.vars_traced)
    for ns_var, col in c.state.items():
        # A timer-driven probability does not change at an arrival: compare it with what
        # the arrival found (read before ns-2's queue acted, so no update intervenes).
        ref = (log.state_before if timer_driven else log.state)[ns_var]
        mine = np.array(arr[col])
        mask = ~np.isnan(ref)
        if col == "p_b":
            # ns-2 computes p_b only when it draws (drop_early); compare there.
            mask &= np.array(arr["drew"])
        when = "at" if timer_driven else "after"
        metric = f"{col} {when} each arrival ({ns_var})"
        rows.append(_state_row(c, seeds, metric, ref, mine, mask))
    # Decisions: each of ns-2's outcomes must be one our state allows.
    rows.append(_decision_row(c, seeds, log, arr, replay["departures"]))
    # Periodic updates (PI, REM): ns-2's traced changes against our updates.
    if c.vars_traced:
        rows.extend(_tick_rows(c, seeds, workdir, replay["ticks"]))
    # Our own random numbers and our own link on the same arrivals.
    rows.extend(_free_rows(c, seeds, log, queue_json, rate))
    return rows


def _state_row(c, seeds, metric, ref, mine, mask) -> Row:
    """Largest relative difference over the compared arrivals (relative to max(|ns-2|,
    1e-6·scale) so that values printed as 0 compare absolutely)."""
    if not mask.any():
        return compare(
            SUITE,
            c.name,
            metric,
            np.nan,
            np.nan,
            kind="given",
            tolerance=STATE_TOL,
            seeds=seeds,
            difference=np.nan,
            note="nothing to compare",
        )
    r, m = ref[mask], mine[mask]
    scale = max(float(np.max(np.abs(r))), 1e-12)
    denom = np.maximum(np.abs(r), 1e-6 * scale)
    rel = np.abs(m - r) / denom
    worst = int(np.argmax(rel))
    note = f"{int(mask.sum())} arrivals; worst at arrival {int(np.flatnonzero(mask)[worst])}"
    return compare(
        SUITE,
        c.name,
        metric,
        float(np.mean(r)),
        float(np.mean(m)),
        kind="given",
        tolerance=STATE_TOL,
        seeds=seeds,
        note=note,
        difference=float(rel[worst]),
    )


def _decision_row(c, seeds, log, arr, dep) -> Row:
    """Arrivals (and, for dequeue-time marking, departures) whose ns-2 outcome our state does
    not allow: a deterministic verdict that differs, or a followed draw at probability 0."""
    verdict = np.array(arr["verdict"])
    applied = np.array(arr["applied"])
    ours_outcome = np.where(
        verdict == "pass", "accepted", np.where(verdict == "mark", "marked", "dropped")
    )
    differ = int(np.sum(ours_outcome != applied))
    checked = len(applied)
    if c.ns2_queue == "REM" and c.ours.get("mark"):
        # Marks are decided at dequeue: compare there (our verdict vs ns-2's CE flag).
        dv = np.array(dep["verdict"])
        marked_ns2 = np.array([log.outcome[i] == "marked" for i in dep["arrival"]])
        differ = int(np.sum((dv == "mark") != marked_ns2))
        checked = len(dv)
    return compare(
        SUITE,
        c.name,
        "decisions ns-2 took that our state does not allow",
        checked,
        checked - differ,
        kind="given",
        tolerance=0,
        seeds=seeds,
        difference=differ,
        note="ns-2 column: decisions checked; aqmlab column: decisions agreeing",
    )


def _tick_rows(c, seeds, workdir, ticks) -> list[Row]:
    traced = ns2_trace.read_vars(workdir / "vars.tr")
    rows = []
    if "p" not in traced:
        return [
            compare(
                SUITE,
                c.name,
                "probability at each update",
                np.nan,
                np.nan,
                kind="given",
                tolerance=STATE_TOL,
                seeds=seeds,
                difference=np.nan,
                note="ns-2 traced no change",
            )
        ]
    t_ref, v_ref = traced["p"]
    t_ours = np.array(ticks["t_s"])
    v_ours = np.array(ticks["prob"])
    # ns-2 writes a line when the value changes; its time has 6 significant digits. Match
    # each line to our update nearest in time.
    j = np.clip(np.searchsorted(t_ours, t_ref), 1, len(t_ours) - 1)
    nearest = np.where(np.abs(t_ours[j - 1] - t_ref) <= np.abs(t_ours[j] - t_ref), j - 1, j)
    dt = np.abs(t_ours[nearest] - t_ref)
    # Lines at time 0 are ns-2's initial assignment, not updates; the replay's updates stop
    # with the log's last event.
    keep = (t_ref > 0) & (t_ref <= t_ours[-1] + 1e-4)
    precision = np.where(t_ref >= 10, 1e-4, np.where(t_ref >= 1, 1e-5, 1e-6))
    rows.append(
        compare(
            SUITE,
            c.name,
            "update times: largest gap to ns-2's, beyond its printing (s)",
            0.0,
            float(np.max((dt - precision)[keep], initial=0.0)),
            kind="abs",
            tolerance=1e-6,
            seeds=seeds,
            note=f"{int(keep.sum())} updates that changed the probability",
        )
    )
    rel = np.abs(v_ours[nearest] - v_ref) / np.maximum(np.abs(v_ref), 1e-9)
    rows.append(
        compare(
            SUITE,
            c.name,
            "probability after each update",
            float(np.mean(v_ref[keep])),
            float(np.mean(v_ours[nearest][keep])),
            kind="given",
            tolerance=STATE_TOL,
            seeds=seeds,
            difference=float(np.max(rel[keep], initial=0.0)),
        )
    )
    return rows


def _stat_tol(count: int) -> float:
    """Tolerance of a rate or mean made of `count` random events: 3 Poisson standard
    deviations (3/sqrt(count), relative), and never below STAT_TOL."""
    return max(STAT_TOL, 3.0 / np.sqrt(max(count, 1)))


def _free_rows(c, seeds, log, queue_json, rate) -> list[Row]:
    """Our random numbers and our link on ns-2's arrivals: drop and mark rates and the gaps
    between them, as statistics."""
    rows = []
    free = _core.replay_queue(
        queue_json,
        rate,
        c.mean_pkt_size,
        c.delay_ms / 1e3,
        list(log.t),
        [int(s) for s in log.size],
        [bool(e) for e in log.ect],
        1,
    )
    ns_out = np.array(log.outcome)
    n = len(ns_out)
    # Our outcome per arrival: dropped or marked at enqueue, or marked at dequeue (REM).
    fv = np.array(free["arrivals"]["verdict"]).astype(str)
    ours = np.where(
        np.char.startswith(fv, "drop"), "dropped", np.where(fv == "mark", "marked", "accepted")
    )
    dep = free["departures"]
    for i, v in zip(dep["arrival"], dep["verdict"], strict=True):
        if v == "mark":
            ours[i] = "marked"
    note = f"{n} arrivals; random decisions with different generators: 3/sqrt(events), >= 10 %"
    for what in ("dropped", "marked"):
        k_ns, k_ours = int(np.sum(ns_out == what)), int(np.sum(ours == what))
        if k_ns == 0 and k_ours == 0:
            continue
        rows.append(
            compare(
                SUITE,
                c.name,
                f"{what[:-2]} rate, our random numbers on ns-2's arrivals",
                k_ns / n,
                k_ours / n,
                kind="rel",
                tolerance=_stat_tol(k_ns),
                seeds=seeds,
                note=note,
            )
        )
    gaps_ns = np.diff(np.flatnonzero(ns_out != "accepted"))
    gaps_ours = np.diff(np.flatnonzero(ours != "accepted"))
    if len(gaps_ns) > 10 and len(gaps_ours) > 10:
        rows.append(
            compare(
                SUITE,
                c.name,
                "mean gap between drops or marks, packets",
                float(np.mean(gaps_ns)),
                float(np.mean(gaps_ours)),
                kind="rel",
                tolerance=_stat_tol(len(gaps_ns)),
                seeds=seeds,
            )
        )
    return rows


def run(out: Path, fast: bool) -> list[Row]:
    rows: list[Row] = []
    for c in CASES:
        if fast and not c.fast:
            continue
        rows.extend(run_case(c, out))
    return rows
