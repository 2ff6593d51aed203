"""Linux's queue disciplines, decision by decision (docs/validation.md, "Linux qdiscs").

Each case generates a schedule (validation/linux_qdisc/schedule.py), runs it through the
kernel's own discipline code built in user space from Debian's linux-source package
(validation/linux_qdisc/kernel.py) and through ours (`aqmlab._core.replay_schedule`), both
reading the same random words, and compares every decision and the state after every event
(validation/linux_qdisc/compare.py). Two rows per case: decisions that differ, and events
after which some compared state differs. Both must be zero unless the case documents a
difference (`expected` and `why`): then the count must be exactly the documented one, so
that a change in it is looked at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from aqmlab import _core
from validation.linux_qdisc import compare, kernel
from validation.linux_qdisc.compare import Case
from validation.results import Row, row_maker

SUITE = "linux_qdisc"
MS_NS = 1_000_000


@dataclass
class Known:
    """A documented difference: the counts the case shows, and why they are not fixed."""

    decisions: int = 0
    states: int = 0
    why: str = ""


def _codel(pattern: str, *, ecn: bool, limit: int = 1000, fast: bool = False, seed: int = 1):
    attrs = {"limit": limit, "ecn": int(ecn)}
    # Our mtu is the kernel's psched_mtu: 1500 + the 14-byte Ethernet header.
    ours = {"kind": "codel", "limit": limit, "ecn": ecn, "mtu": 1514}
    name = f"codel-{pattern}{'-ecn' if ecn else ''}{'-limit' + str(limit) if limit != 1000 else ''}"
    return Case(name, "codel", pattern, attrs, ours, seed=seed, fast=fast)


def _fq_codel(pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, **kw):
    """FQ-CoDel with tc attributes `kw` (tc's names and units) and the same in our keys."""
    attrs = {k: v for k, v in kw.items()}
    ours: dict[str, object] = {"kind": "fq_codel"}
    for k, v in kw.items():
        if k == "ce_threshold":
            ours["ce_threshold_ms"] = v / 1000
        elif k == "ecn":
            ours["ecn"] = bool(v)
        else:
            ours[k] = v
    return Case(
        f"fq_codel-{pattern}{suffix}", "fq_codel", pattern, attrs, ours, seed=seed, fast=fast
    )


# Linux's PIE timer: first run HZ/2 after the qdisc is created (pie_init, fq_pie_init), then
# every tupdate (15 ms, 15 jiffies at HZ 1000).
PIE_TICKS = {"tick_first_ns": 500 * MS_NS, "tick_period_ns": 15 * MS_NS}


def _pie_case(name, kernel_kind, ours, pattern, suffix, *, fast, seed, kw) -> Case:
    """A case of the PIE family: tc attributes `kw`, ours `ours` with the same keys (the
    switches as booleans), the kernel's u64 draws and PIE's timer."""
    ours = dict(ours)
    for k, v in kw.items():
        ours[k] = bool(v) if k in ("ecn", "bytemode", "dq_rate_estimator") else v
    return Case(
        f"{name}-{pattern}{suffix}",
        kernel_kind,
        pattern,
        dict(kw),
        ours,
        seed=seed,
        fast=fast,
        draw="u64_top56",
        **PIE_TICKS,
    )


def _fq_pie(pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, **kw):
    """FQ-PIE with tc attributes `kw`; ours with the kernel's device MTU (psched_mtu 1514)
    as quantum and MTU, which tc cannot set."""
    ours = {"kind": "fq_pie", "quantum": 1514, "mtu": 1514}
    return _pie_case("fq_pie", "fq_pie", ours, pattern, suffix, fast=fast, seed=seed, kw=kw)


def _pie_linux(pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, **kw):
    """sch_pie against our `pie_linux` kind (aqm/sch_pie.rs: Linux's PIE of pie_linux.rs on
    the whole queue, FQ-PIE's path with one flow in sch_pie's mode), with the kernel's device
    MTU (psched_mtu 1514), which tc cannot set."""
    ours = {"kind": "pie_linux", "mtu": 1514}
    return _pie_case("pie_linux", "pie", ours, pattern, suffix, fast=fast, seed=seed, kw=kw)


# CAKE: besteffort (one tin; the harness's packets carry no DSCP) and per-flow isolation
# (`flows`: the kernel hashes skb->hash, as our model hashes the packet's flow hash; host
# isolation would need addresses), with the kernel's device MTU.
CAKE_BESTEFFORT, CAKE_FLOWS = 3, 4


def _cake(
    pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, linux_init=True, **kw
):
    """CAKE; with `linux_init` our COBALT starts `rec_inv_sqrt` at 0 as Linux does (the
    model's default, 1.0, is a documented deviation, pinned by its own case)."""
    attrs = {"diffserv": CAKE_BESTEFFORT, "flow_mode": CAKE_FLOWS}
    ours: dict[str, object] = {
        "kind": "cake",
        "diffserv": "besteffort",
        "isolation": "flows",
        "mtu": 1514,
    }
    if linux_init:
        ours["linux_cobalt_init"] = True
    if "bandwidth" in kw:
        attrs["bandwidth"] = kw["bandwidth"] // 8  # bytes/s
        ours["bandwidth"] = str(kw["bandwidth"])  # bit/s
    if "memory" in kw:
        attrs["memory"] = kw["memory"]
        ours["memlimit"] = kw["memory"]
    return Case(f"cake-{pattern}{suffix}", "cake", pattern, attrs, ours, seed=seed, fast=fast)


CAKE_INIT = (
    "our COBALT starts rec_inv_sqrt at 1.0 (a deliberate, documented deviation: Linux's "
    "cobalt_vars_init zeroes it, so a never-used queue's first signal is immediate, against "
    "its own comment and CoDel's interval); with linux_cobalt_init the same schedule has "
    "0 differences (cake-cbr)"
)


# Our `pie` kind is RFC 8033 in floating point (aqm/pie.rs), not Linux's PIE; Linux's PIE is
# our pie_linux.rs, which FQ-PIE uses per flow (the fq_pie and pie_linux cases). The `pie`
# kind's differences from sch_pie are by design; its cases show how far apart the two are on
# the same schedule, pinned so that a change is looked at.
PIE_RFC = (
    "our `pie` kind follows RFC 8033 in floating point (aqm/pie.rs: probability 0-1, ×0.98 "
    "decay, burst allowance by tupdate, ECN up to 10 % in its own scale); Linux's PIE is "
    "pie_linux.rs, checked through the pie_linux and fq_pie cases"
)


def _pie(pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, **kw):
    ours: dict[str, object] = {"kind": "pie", "estimator": "timestamp", "mtu": 1514}
    if kw.get("ecn"):
        ours["ecn"] = True
    return Case(
        f"pie-{pattern}{suffix}",
        "pie",
        pattern,
        dict(kw),
        ours,
        seed=seed,
        fast=fast,
        draw="u64_top56",
        **PIE_TICKS,
    )


# DualPI2 (Linux 6.17+, sch_dualpi2.c): the kernel's logs come from the committed fixture
# (validation/linux_qdisc/fixture.py) unless AQMLAB_DUALPI2_SOURCE names the source. tc's
# attributes in tc's units (µs, Hz × 256, %); ours the same in our keys, with the kernel's
# device MTU (psched_mtu 1514, the credit's scale and the 2-MTU floor) and, unless `model`,
# Linux's integer probability and rolls (linux_fixed_point). The timer first runs tupdate
# after creation (t = 0), then every tupdate.
DUALPI2_OURS = {
    "limit": ("limit", 1),
    "target": ("target_ms", 1e-3),
    "tupdate": ("tupdate_ms", 1e-3),
    "alpha": ("alpha", 1 / 256),
    "beta": ("beta", 1 / 256),
    "step_thresh_us": ("step_thresh_ms", 1e-3),
    "coupling": ("coupling_factor", 1),
    "c_protection": ("c_protection", 1),
}
DUALPI2_SWITCHES = {"drop_overload": "drop_on_overload", "drop_early": "drop_enqueue"}


def _dualpi2(
    pattern: str, suffix: str = "", *, fast=False, seed=1, seconds=3.0, model=False, **kw
) -> Case:
    ours: dict[str, object] = {"kind": "dualpi2", "mtu": 1514}
    # Linux's integers are the default; `model` asks for RFC 9332's f64 arithmetic.
    ours["linux_fixed_point"] = not model
    for k, v in kw.items():
        if k in DUALPI2_SWITCHES:
            ours[DUALPI2_SWITCHES[k]] = bool(v)
        else:
            key, scale = DUALPI2_OURS[k]
            ours[key] = v * scale if scale != 1 else v
    tupdate_ns = kw.get("tupdate", 16_000) * 1000
    return Case(
        f"dualpi2-{pattern}{suffix}",
        "dualpi2",
        pattern,
        dict(kw),
        ours,
        seconds=seconds,
        seed=seed,
        fast=fast,
        tick_first_ns=tupdate_ns,
        tick_period_ns=tupdate_ns,
    )


DUALPI2_F64 = (
    "`dualpi2` with linux_fixed_point = false keeps p′ in f64 with α = 0.16 and β = 3.2 per "
    "second (RFC 9332's arithmetic, aqm/dualpi2.rs); Linux keeps a u32 p′ with α and β "
    "rounded to 1/256 Hz and then "
    "truncated by dualpi2_scale_alpha_beta (effective 0.16007 and 3.19778 Hz): from the first "
    "update the probabilities differ in their last bits, and the rolls near a threshold then "
    "go the other way; on this schedule no decision differs and p′ differs after 8409 of "
    "8636 events; on the other fixture schedules 393 to 1304 decisions differ from the first "
    "roll that goes the other way (docs/validation.md); with linux_fixed_point the same "
    "schedule has 0 differences (dualpi2-cbr)"
)

# RED (sch_red.c) against our `red_linux` kind: the kernel gets what tc would send for our
# keys (tc.rs's derivation, through `_core.queue_params`: tc_red_qopt, max_P, the idle table
# in 32 words of 8 bytes); the flags as current tc sends them (TCA_RED_FLAGS), except with
# `adaptive`, which only arms the kernel's timer when it comes in tc_red_qopt.flags (tc before
# TCA_RED_FLAGS): those cases send the flags there. The timer first runs HZ/2 after the qdisc
# is created (t = 0), then every HZ/2.
RED_FLAGS = {"ecn": 1, "harddrop": 2, "adaptive": 4, "nodrop": 8}  # TC_RED_* (pkt_sched.h)
RED_TICKS = {"tick_first_ns": 500 * MS_NS, "tick_period_ns": 500 * MS_NS}


def red_attrs(ours: dict[str, object], rate_bps: float = 10e6) -> dict[str, int]:
    """The harness attributes for our `red_linux` table: what tc sends the kernel."""
    p = _core.queue_params(json.dumps(ours), rate_bps, 1000)["params"]
    attrs = {k: p[k] for k in ("limit", "qth_min", "qth_max", "Wlog", "Plog", "Scell_log")}
    attrs["max_P"] = p["max_P"]
    stab = bytes(p["stab"])
    for i in range(32):
        attrs[f"stab{i}"] = int.from_bytes(stab[8 * i : 8 * i + 8], "little")
    flags = sum(bit for k, bit in RED_FLAGS.items() if p[k])
    attrs["qopt_flags" if p["adaptive"] else "flags"] = flags
    return attrs


def _red(pattern: str, suffix: str = "", *, fast: bool = False, seed: int = 1, **kw) -> Case:
    """sch_red with our keys `kw` (tc's names: limit, min, max, avpkt in bytes, ...)."""
    ours: dict[str, object] = {"kind": "red_linux", "avpkt": 1000, **kw}
    ticks = RED_TICKS if kw.get("adaptive") else {}
    return Case(
        f"red_linux-{pattern}{suffix}",
        "red",
        pattern,
        red_attrs(ours),
        ours,
        seed=seed,
        fast=fast,
        **ticks,
    )


RED_TC = {"limit": 400_000, "min": 30_000, "max": 90_000}


def _red_current_tc_adaptive(pattern: str) -> Case:
    """`adaptive` as current tc sends it (in TCA_RED_FLAGS, tc_red_qopt.flags 0) against our
    `adaptive = false`: Linux 6.1 shows the flag but never arms its timer (`t off` at every
    timer instant, as our replay says for a discipline without one)."""
    ours: dict[str, object] = {"kind": "red_linux", "avpkt": 1000, **RED_TC}
    attrs = red_attrs(ours)
    attrs["flags"] |= RED_FLAGS["adaptive"]
    name = f"red_linux-{pattern}-adaptive-current-tc"
    return Case(name, "red", pattern, attrs, ours, **RED_TICKS)


CASES: list[tuple[Case, Known]] = [
    (_codel("cbr", ecn=True, fast=True), Known()),
    (_codel("onoff", ecn=False), Known()),
    (_codel("manyflow", ecn=True, limit=100), Known()),
    (_codel("web", ecn=False, fast=True), Known()),
    (_fq_codel("cbr", fast=True), Known()),
    (_fq_codel("onoff"), Known()),
    (_fq_codel("manyflow", "-16flows-limit200", flows=16, limit=200, fast=True), Known()),
    (_fq_codel("web", "-memory200k-noecn", memory_limit=200_000, ecn=0), Known()),
    (_fq_codel("manyflow", "-ce1ms", ce_threshold=1000, fast=True), Known()),
    (
        _fq_codel(
            "cbr", "-ce1ms-ect1", ce_threshold=1000, ce_threshold_selector=1, ce_threshold_mask=1
        ),
        Known(),
    ),
    (_fq_pie("cbr", fast=True), Known()),
    (_fq_pie("onoff", "-ecn", ecn=1), Known()),
    (_fq_pie("onoff", "-ecn-prob50", ecn=1, ecn_prob=50), Known()),
    (_fq_pie("manyflow", "-16flows-limit300-ecn", flows=16, limit=300, ecn=1, fast=True), Known()),
    (_fq_pie("web", "-bytemode", bytemode=1), Known()),
    (_fq_pie("cbr", "-dq_rate", dq_rate_estimator=1), Known()),
    (_pie_linux("cbr", fast=True), Known()),
    (_pie_linux("onoff", "-ecn", ecn=1), Known()),
    (_pie_linux("manyflow", "-limit200-bytemode", limit=200, bytemode=1), Known()),
    (_pie_linux("web", "-dq_rate-ecn", dq_rate_estimator=1, ecn=1), Known()),
    (_cake("cbr", fast=True), Known()),
    (_cake("manyflow"), Known()),
    (_cake("onoff", "-8mbit", bandwidth=8_000_000), Known()),
    (_cake("web", "-memory200k", memory=200_000), Known()),
    (_cake("cbr", "-model-init", linux_init=False), Known(1620, 11552, CAKE_INIT)),
    (_pie("cbr"), Known(4425, 9972, PIE_RFC)),
    (_pie("onoff", "-ecn", ecn=1), Known(5858, 11290, PIE_RFC)),
    (_dualpi2("cbr", fast=True), Known()),
    (_dualpi2("onoff"), Known()),
    (_dualpi2("manyflow", "-drop_early", drop_early=1, fast=True), Known()),
    (_dualpi2("web", "-overflow-limit300", drop_overload=0, limit=300), Known()),
    (
        _dualpi2("cbr", "-c30-k3-step2ms", c_protection=30, coupling=3, step_thresh_us=2000),
        Known(),
    ),
    (
        _dualpi2("onoff", "-gains", alpha=80, beta=1200, target=5000, tupdate=10_000),
        Known(),
    ),
    (_dualpi2("cbr", "-model-f64", model=True), Known(0, 8409, DUALPI2_F64)),
    (_red("cbr", fast=True, **RED_TC), Known()),
    (_red("onoff", "-ecn", ecn=True, **RED_TC), Known()),
    (_red("manyflow", "-ecn-harddrop", ecn=True, harddrop=True, **RED_TC), Known()),
    (_red("web", "-defaults", limit=200_000), Known()),
    (_red("cbr", "-adaptive", adaptive=True, fast=True, **RED_TC), Known()),
    (_red("web", "-adaptive-ecn", adaptive=True, ecn=True, **RED_TC), Known()),
    (_red("onoff", "-ecn-nodrop", ecn=True, nodrop=True, **RED_TC), Known()),
    (_red("cbr", "-limit60k-burst40", limit=60_000, min=20_000, max=50_000, burst=40), Known()),
    (_red("manyflow", "-prob10-bw8", probability=0.1, bandwidth_mbps=8.0, **RED_TC), Known()),
    (
        _red("onoff", "-wide-prob10", limit=500_000, min=20_000, max=300_000, probability=0.1),
        Known(),
    ),
    (_red_current_tc_adaptive("cbr"), Known()),
]


def rows_of(res: compare.Result, known: Known) -> list[Row]:
    c = res.case
    row = row_maker(SUITE, c.name, str(c.seed))
    version = f"Linux {res.kernel_version}"
    first = res.first_decision_diff or "none"
    note = f"{version}; {res.events} events; first difference: {first}"
    if known.why:
        note += f"; documented: {known.why}"
    keys = ", ".join(res.state_keys)
    detail = ", ".join(f"{k} {n}" for k, n in res.key_diffs.most_common())
    state_note = f"{version}; compared: {keys}"
    if res.kernel_only:
        state_note += f"; not compared (kernel only): {', '.join(res.kernel_only)}"
    if detail:
        state_note += f"; differing: {detail}; first: {res.first_state_diff}"
    checks = [
        ("decisions differing", known.decisions, res.decision_diffs, note),
        ("events with a state difference", known.states, res.state_lines_differing, state_note),
    ]
    if res.fixture_current is not None:
        # The source is here: the committed kernel log must be what the harness writes now.
        text = f"{version}; fixture {'current' if res.fixture_current else 'STALE: regenerate'}"
        checks.append(("fixture differs from the harness", 0, int(not res.fixture_current), text))
    # Each count is pinned: zero, or a documented difference's exact number.
    return [
        row(metric, want, got, kind="given", difference=abs(got - want), tol=0, note=text)
        for metric, want, got, text in checks
    ]


# Schedules of a full run: each case with these seeds (a documented difference is pinned for
# seed 1 only); the fast subset runs seed 1 of the fast cases.
FULL_SEEDS = (1, 2, 3)


def run(out: Path, *, fast: bool, only: str | None = None) -> list[Row]:
    """Every case (or the fast ones; `only`: the cases of one harness). Without Debian's
    package a full run raises kernel.KernelSourceMissing; the fast subset then runs the cases
    whose kernel log is committed (kernel.EXTERNAL, from the fixture) and says so in a line."""
    try:
        kernel.tarball()
        have_package = True
    except kernel.KernelSourceMissing as e:
        if only not in kernel.EXTERNAL and (not fast or only is not None):
            raise
        print(f"{SUITE}: {e}; only the cases of {', '.join(kernel.EXTERNAL)} (fixture) run")
        have_package = False
    work = out / SUITE
    rows: list[Row] = []
    for case, known in CASES:
        if fast and not case.fast:
            continue
        if only is not None and case.qdisc != only:
            continue
        if not have_package and case.qdisc not in kernel.EXTERNAL:
            continue
        # A fixture case runs its committed schedule only (seed 1; the fixture's size).
        one = fast or known.why or case.qdisc in kernel.EXTERNAL
        seeds = (case.seed,) if one else FULL_SEEDS
        for seed in seeds:
            c = replace(case, seed=seed, name=case.name + ("" if seed == 1 else f"-s{seed}"))
            rows.extend(rows_of(compare.run_case(c, work), known))
    return rows
