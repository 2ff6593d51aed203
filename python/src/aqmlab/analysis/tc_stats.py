"""A run's bottleneck queues as `tc -s qdisc show` prints them (`aqmlab stats RUN`).

The numbers are the core's (`summary.json` `summary.qdisc_forward`/`qdisc_reverse`, counted
from the start of the run as tc counts, warm-up included); the first line shows the
discipline's parameters from the resolved scenario in tc's words, for the kinds with a Linux
qdisc, and aqmlab's kind and keys for the others (PI, REM). `over_time` reads the `qdisc`
table of `[trace] qdisc = true` as one row per instant and direction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

__all__ = ["DIRECTIONS", "format_qdisc", "format_run", "over_time", "qdisc_stats"]

DIRECTIONS = ("forward", "reverse")

# tc's name of each aqmlab kind (RED, gentle RED and ARED are all Linux `red`).
TC_KIND = {"red": "red", "gred_i": "red", "ared": "red", "codel": "codel", "pie": "pie"}
TC_KIND |= {"fq_codel": "fq_codel", "fq_pie": "fq_pie", "dualpi2": "dualpi2", "cake": "cake"}
TC_KIND["red_linux"] = "red"  # Linux's own RED, with tc's keys
TC_KIND["pie_linux"] = "pie"  # Linux's own PIE (sch_pie), with tc's keys


def qdisc_stats(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The statistics per direction from a run's `summary.json`."""
    core = summary.get("summary", {})
    return {d: dict(core.get(f"qdisc_{d}") or {}) for d in DIRECTIONS}


def _time(us: float) -> str:
    """A duration in µs as iproute2's `sprint_time` writes it (3 significant digits)."""
    sign, us = ("-", -us) if us < 0 else ("", us)
    if us >= 1e6:
        return f"{sign}{us / 1e6:.3g}s"
    if us >= 1e3:
        return f"{sign}{us / 1e3:.3g}ms"
    return f"{sign}{us:.0f}us"


def _ms(v: float) -> str:
    return _time(v * 1e3)


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _options(queue: Mapping[str, Any], in_force: Mapping[str, Any], st: Mapping) -> tuple[str, str]:
    """The parameters as tc's first line gives them (approximately) for the kind."""
    kind = queue.get("kind", "?")
    q = _resolved(queue, in_force)
    words: list[str] = []

    def add(key: str, word: str, fmt: Callable[[Any], str] = _num) -> None:
        if key in q:
            words.extend([word, fmt(q[key])])

    def flag(key: str, word: str) -> None:
        if q.get(key) not in (None, False, "off"):
            words.append(word)

    if kind == "droptail":
        unit = "b" if q.get("unit") == "bytes" else "p"
        return ("bfifo" if unit == "b" else "pfifo"), f"limit {q.get('limit')}{unit}"
    if kind == "red_linux":
        # tc's keys; the thresholds tc sent (its defaults applied), max_P as tc prints it.
        words += [f"limit {in_force.get('limit', q.get('limit'))}b"]
        words += [f"min {in_force.get('qth_min')}b", f"max {in_force.get('qth_max')}b"]
        for key in ("ecn", "harddrop", "adaptive", "nodrop"):
            flag(key, key)
        if "probability" in st:
            words.append(f"probability {_num(st['probability'])}")
        return "red", " ".join(words)
    if TC_KIND.get(kind) == "red":
        unit = "b" if q.get("queue_in_bytes") else "p"
        red = in_force.get("red", in_force)
        words += [f"limit {q.get('limit')}{unit}"]
        for key, word in (("min_th", "min"), ("max_th", "max")):
            v = q.get(key, red.get(key))
            if v is not None:
                words.append(f"{word} {_num(v)}{unit}")
        flag("ecn", "ecn")
        if kind == "ared":
            words.append("adaptive")
        flag("gentle", "gentle")
        max_p = st.get("max_p", q.get("max_p"))
        if max_p is not None:
            words.append(f"probability {_num(max_p)}")
    elif kind in ("codel", "pie", "pie_linux", "fq_codel", "fq_pie", "dualpi2"):
        words.append(f"limit {q.get('limit')}p")
        add("flows", "flows")
        add("quantum", "quantum")
        add("target_ms", "target", _ms)
        add("interval_ms", "interval", _ms)
        add("t_update_ms", "tupdate", _ms)
        add("tupdate_ms", "tupdate", _ms)
        add("alpha", "alpha")
        add("beta", "beta")
        add("memory_limit", "memory_limit", lambda v: f"{v}b")
        add("ce_threshold_ms", "ce_threshold", _ms)
        add("coupling_factor", "coupling_factor")
        add("step_thresh_ms", "step_thresh", _ms)
        flag("ecn", "ecn")
        flag("bytemode", "bytemode")
        flag("byte_mode", "bytemode")
        flag("dq_rate_estimator", "dq_rate_estimator")
        if q.get("estimator") == "departure_rate":
            words.append("dq_rate_estimator")
    elif kind == "cake":
        add("bandwidth", "bandwidth")
        add("diffserv", "")
        add("isolation", "")
        add("rtt_ms", "rtt", _ms)
        add("framing", "")
        add("ack_filter", "")
        words = [w for w in words if w]
    else:  # no Linux qdisc: aqmlab's own keys
        words += [f"{k} {_num(v)}" for k, v in q.items() if k != "kind" and _scalar(v)]
    return TC_KIND.get(kind, kind), " ".join(words)


# Parameters in force (`summary.queue_*.params`) that are times in ns, for the scenario's `_ms`.
_NS_TIMES = ("target", "interval", "t_update", "tupdate", "step_thresh")


def _resolved(queue: Mapping[str, Any], in_force: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's keys, completed by the parameters in force where it leaves a default.
    RED's in force come first: its limit and thresholds are then in bytes or packets as the
    queue counts them (`queue_in_bytes`), as Linux's red counts bytes. PI and REM (no tc
    counterpart) show the scenario's keys only."""
    q = {k: v for k, v in queue.items() if v is not None}
    if TC_KIND.get(q.get("kind")) == "red":
        red = in_force.get("red", in_force)
        q |= {k: v for k, v in red.items() if k in ("limit", "min_th", "max_th", "queue_in_bytes")}
    elif q.get("kind") not in TC_KIND:
        return q
    for k, v in in_force.get("red", in_force).items():
        if k in _NS_TIMES and f"{k}_ms" not in q and isinstance(v, int):
            q[f"{k}_ms"] = v / 1e6
        elif k not in q and k not in _NS_TIMES and _scalar(v):
            q[k] = v
    return q


def _scalar(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool))


HEADER = (
    "sent_bytes",
    "sent_packets",
    "dropped",
    "overlimits",
    "requeues",
    "backlog_bytes",
    "backlog_packets",
    "marks",
    "tx_packets",
    "tx_bytes",
)

# The xstats lines per tc kind: (key, how to write the value); `None` starts a new line.
_T = _time
XSTATS: dict[str, list[tuple[str, Callable[[Any], str]] | None]] = {
    "red": [("marked", _num), ("early", _num), ("pdrop", _num), ("other", _num)],
    "codel": [
        ("count", _num),
        ("lastcount", _num),
        ("ldelay", _T),
        ("dropping", _num),
        ("drop_next", _T),
        None,
        ("maxpacket", _num),
        ("ecn_mark", _num),
        ("drop_overlimit", _num),
    ],
    "pie": [
        ("prob", _num),
        ("delay", _T),
        ("avg_dq_rate", _num),
        None,
        ("pkts_in", _num),
        ("overlimit", _num),
        ("dropped", _num),
        ("maxq", _num),
        ("ecn_mark", _num),
    ],
}


def format_qdisc(direction: str, queue: Mapping, in_force: Mapping, st: Mapping) -> str:
    """One direction's qdisc in tc's layout."""
    name, opts = _options(queue, in_force, st)
    g = {k: st.get(k, 0) for k in HEADER}
    lines = [
        f"qdisc {name} 0: dev {direction} root {opts}".rstrip(),
        f" Sent {g['sent_bytes']} bytes {g['sent_packets']} pkt (dropped {g['dropped']}, "
        f"overlimits {g['overlimits']} requeues {g['requeues']})",
        f" backlog {g['backlog_bytes']}b {g['backlog_packets']}p requeues {g['requeues']}",
    ]
    layout = XSTATS.get(name, [])
    shown = {item[0] for item in layout if item} | {"max_p", "probability"}  # tc's options
    line: list[str] = []
    for item in [*layout, None]:
        if item is None:
            if line:
                lines.append("  " + " ".join(line))
            line = []
        elif item[0] in st:
            line.append(f"{item[0]} {item[1](st[item[0]])}")
    # The rest (other kinds' fields, CAKE's tins) as `key value`, tins one line each.
    rest = {k: v for k, v in st.items() if k not in HEADER and k not in shown}
    flat = [f"{k} {_num(v)}" for k, v in rest.items() if not isinstance(v, (list, dict))]
    if flat:
        lines.append("  " + " ".join(flat))
    for i, tin in enumerate(rest.get("tins") or []):
        lines.append(f"  tin {i}: " + " ".join(f"{k} {_num(v)}" for k, v in tin.items()))
    return "\n".join(lines)


def format_run(summary: Mapping[str, Any]) -> str:
    """Both directions of a run, forward first, as `tc -s qdisc show` would list them."""
    scenario = summary.get("scenario", {})
    core = summary.get("summary", {})
    stats = qdisc_stats(summary)
    out = []
    for d in DIRECTIONS:
        queue = scenario.get("queue_reverse") if d == "reverse" else None
        queue = queue or scenario.get("queue", {})
        in_force = (core.get(f"queue_{d}") or {}).get("params") or {}
        out.append(format_qdisc(d, queue, in_force, stats[d]))
    return "\n".join(out)


def over_time(qdisc: pl.DataFrame) -> pl.DataFrame:
    """The `qdisc` table (long form) as one row per instant and direction, a column per
    field, in time order."""
    wide = qdisc.pivot(on="field", index=["t_s", "direction"], values="value")
    return wide.sort(["t_s", "direction"])
