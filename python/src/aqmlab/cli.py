"""The ``aqmlab`` command.

    aqmlab run SCENARIO.toml [--out DIR] [--seed N] [--set key.path=value ...]
               [--plots] [--calibrate] [--calibration FILE] [--force]
    aqmlab calibrate SCENARIO.toml [--points 5] [--duration S] [--warmup S] [--out FILE]
    aqmlab plots RESULTS_DIR [--out DIR] [--direction download|upload]
    aqmlab flent RESULTS_DIR [--out FILE.flent.gz] [--step S] [--max-flows N] [--aggregate]
                 [--time ISO]
    aqmlab stats RESULTS_DIR [--json | --over-time [--out FILE.csv]]
    aqmlab sweep SWEEP.toml [--out DIR] [--jobs N | --scheduler tcp://HOST:PORT]
                 [--set key.path=value ...] [--calibration FILE] [-q]
    aqmlab report STUDY_DIR [--out FILE] [--group-by AXIS ...] [--figures DIR]
    aqmlab reproduce A|B|C|D|L4S|household [--scale quick|full|smoke] [--out DIR]
                     [--jobs N | --scheduler ADDR] [--report-only]
    aqmlab rfc7928 [--aqm LIST | --queues FILE] [--sections LIST] [--scale full|quick|smoke]
                   [--out DIR] [--jobs N | --scheduler ADDR] [--repetitions N]
    aqmlab tune TUNE.toml --out DIR [--scale quick|full|smoke] [--jobs N | --scheduler ADDR]
    aqmlab validate SCENARIO.toml|SWEEP.toml [--seed N] [--set ...] [--print]
    aqmlab presets
    aqmlab queues

Every error is one line on stderr, ``error: ...``, and exit status 2 (130 when interrupted).
``aqmlab sweep`` exits with 1 when some runs failed (the others are done and catalogued),
``aqmlab validate SWEEP.toml`` when some cells would fail.
Set ``AQMLAB_DEBUG=1`` to get the Python traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from aqmlab.errors import ScenarioError

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = "aqmlab" if self.prog == "aqmlab" else f"aqmlab {self.prog.split()[-1]}"
        sys.stderr.write(f"error: {message} (see {command} --help)\n")
        sys.exit(EXIT_ERROR)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="aqmlab", description="Packet-level TCP/AQM simulator.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def execution_args(s: argparse.ArgumentParser) -> None:
        """Where a study's runs execute (`sweep`, `reproduce`, `rfc7928`, `tune`): one
        spelling everywhere, `-j/--jobs N` or `--scheduler ADDRESS`; `--workers` and `--dask`
        (the names some commands used) are kept as aliases."""
        where = s.add_mutually_exclusive_group()
        where.add_argument(
            "-j",
            "--jobs",
            "--workers",
            dest="jobs",
            type=int,
            default=None,
            help="local worker processes (default: one per core)",
        )
        where.add_argument(
            "--scheduler",
            "--dask",
            dest="scheduler",
            default=None,
            metavar="ADDRESS",
            help="run on the Dask cluster of this scheduler, e.g. tcp://HOST:8786 "
            "(the study directory must be visible to the workers at the same path)",
        )

    def budget_arg(s: argparse.ArgumentParser) -> None:
        s.add_argument(
            "--max-memory-gb",
            type=float,
            default=None,
            metavar="GB",
            help="refuse runs estimated to need more memory than this (default: "
            "AQMLAB_MAX_MEMORY_GB, else the machine's available memory)",
        )

    def progress_args(s: argparse.ArgumentParser) -> None:
        s.add_argument(
            "--progress-every",
            type=float,
            default=10.0,
            metavar="S",
            help="seconds between progress lines when stderr is not a terminal (default 10)",
        )
        s.add_argument("-q", "--quiet", action="store_true", help="print only the outcome")

    def calibration_arg(s: argparse.ArgumentParser) -> None:
        s.add_argument(
            "--calibration",
            default=None,
            metavar="FILE",
            help="calibration file for `load` entries (default: <scenario stem>.calibration.json "
            "in the current directory, else beside the scenario)",
        )

    def set_arg(s: argparse.ArgumentParser, what: str = "") -> None:
        s.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=f"override a scenario value{what}, e.g. --set queue.limit=50 (repeatable; "
            "values are TOML, bare words are strings)",
        )

    def scenario_args(s: argparse.ArgumentParser, what: str | None = None) -> None:
        s.add_argument("scenario", help=what or "scenario file (TOML, see docs/scenario.md)")
        s.add_argument("--seed", type=int, default=None, help="random seed (overrides the file)")
        set_arg(s)

    r = sub.add_parser("run", help="run a scenario and write its results")
    scenario_args(r)
    r.add_argument(
        "--out",
        default=None,
        help="results directory (default: results/<scenario file name without .toml>)",
    )
    r.add_argument(
        "--chunk-s", type=float, default=None, help="simulated seconds per chunk (default: auto)"
    )
    r.add_argument("-q", "--quiet", action="store_true", help="print no summary or progress")
    r.add_argument(
        "--plots",
        action="store_true",
        help="after the run, write the plots into OUT/plots and print the metrics table",
    )
    r.add_argument(
        "--calibrate",
        action="store_true",
        help="first calibrate the traffic entries that give a `load` and have no calibration "
        "(kept in OUT/calibration.json unless --calibration FILE is given)",
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="replace the results of an earlier run in --out (refused otherwise)",
    )
    r.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="POINT",
        help="capture packets to OUT/capture-POINT.pcap: download, upload (bottleneck egress; "
        "aliases reverse, forward), download_in, upload_in (its queue's arrivals) or host:N; "
        "repeatable "
        "(selections and snap length: [[trace.pcap]], docs/tracing.md)",
    )
    r.add_argument(
        "--trace-tcp",
        nargs="?",
        const="all",
        default=None,
        metavar="IDS",
        help="record the TCP state (cwnd, ssthresh, SRTT, RTO...) and segments of connections "
        "IDS (comma-separated ids; default all) to tcp_state and segments tables",
    )
    calibration_arg(r)
    budget_arg(r)

    c = sub.add_parser(
        "calibrate",
        help="measure the offered load of each Web traffic entry against its population",
    )
    scenario_args(c)
    c.add_argument("--points", type=int, default=5, help="populations measured (default 5)")
    c.add_argument(
        "--duration", type=float, default=None, help="simulated seconds per run (default: scenario)"
    )
    c.add_argument(
        "--warmup", type=float, default=None, help="warm-up seconds per run (default: scenario)"
    )
    c.add_argument(
        "--out",
        default=None,
        help="calibration file, or a directory for <scenario stem>.calibration.json (default: "
        "that name in the current directory)",
    )
    c.add_argument(
        "-j",
        "--jobs",
        "--workers",
        dest="workers",
        type=int,
        default=2,
        help="parallel simulation processes (default 2)",
    )
    c.add_argument("-q", "--quiet", action="store_true", help="print only the result")

    pl_ = sub.add_parser("plots", help="write the plots of a results directory, print its metrics")
    pl_.add_argument("results", help="results directory of `aqmlab run`")
    pl_.add_argument(
        "--out", default=None, help="directory for the PNG files (default RESULTS/plots)"
    )
    pl_.add_argument(
        "--direction",
        choices=("download", "upload", "forward", "reverse"),
        default=None,
        help="studied bottleneck direction: download (right -> left; alias reverse) or upload "
        "(alias forward); default: that of the Web responses",
    )

    pc = sub.add_parser(
        "plot-conn",
        help="plot one connection's time-sequence and cwnd graph (a run with --trace-tcp)",
    )
    pc.add_argument("results", help="results directory of `aqmlab run --trace-tcp`")
    pc.add_argument("conn", type=int, help="connection id (connections.conn_id)")
    pc.add_argument(
        "--side",
        choices=("client", "server"),
        default=None,
        help="the data sender to show (default: the side that sent more)",
    )
    pc.add_argument(
        "--out",
        default=None,
        help="PNG file, or a directory (default: RESULTS/plots/conn-<id>.png)",
    )

    fl = sub.add_parser(
        "flent",
        help="export a run's time series as a Flent data file (.flent.gz)",
        description="Write a run's time series as a Flent data file (test rrul_be_nflows) that "
        "Flent's GUI and plotter open: `flent -i FILE -p all_scaled -o out.png`. Upload = "
        "forward (left -> right), download = reverse. With a tcp_state table ([trace.tcp]) "
        "one TCP series per traced connection (with tcp_rtt and tcp_cwnd for Flent's tcp_rtt "
        "and tcp_cwnd plots); without, each direction's bottleneck throughput as one "
        "aggregate series. Ping = base RTT + both bottleneck queues' queueing delay. "
        "See docs/flent.md.",
    )
    fl.add_argument("results", help="results directory of `aqmlab run`")
    fl.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="output file, or a directory for <scenario name>.flent.gz (default: in RESULTS)",
    )
    fl.add_argument(
        "--step",
        type=float,
        default=None,
        metavar="S",
        help="Flent's STEP_SIZE: seconds between points of the common time grid (default 0.2, "
        "Flent's); each point is the time average over the step before it",
    )
    fl.add_argument(
        "--max-flows",
        type=int,
        default=None,
        metavar="N",
        help="with more traced connections than N, export the N that sent the most bytes "
        "(default 100)",
    )
    fl.add_argument(
        "--aggregate",
        action="store_true",
        help="export the per-direction aggregates even when the run has a tcp_state table",
    )
    fl.add_argument(
        "--time",
        default=None,
        metavar="ISO",
        help="Flent's TIME, the run's start, e.g. 2026-01-31T12:00:00Z (default: when the run "
        "was written, from its summary.json's modification time less its wall time)",
    )

    st = sub.add_parser(
        "stats", help="the bottleneck queues' statistics as `tc -s qdisc show` prints them"
    )
    st.add_argument("results", help="results directory of `aqmlab run`")
    mode = st.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    mode.add_argument(
        "--over-time",
        action="store_true",
        help="the statistics at every reporting interval as CSV (needs [trace] qdisc = true)",
    )
    st.add_argument(
        "--out",
        default=None,
        help="with --over-time: the CSV file, or a directory for qdisc_over_time.csv",
    )

    sw = sub.add_parser(
        "sweep", help="run (or resume) a study: a sweep file's runs, in parallel, catalogued"
    )
    sw.add_argument("sweep", help="sweep file (TOML, see docs/sweeps.md)")
    sw.add_argument("--out", default=None, help="study directory (default: results/<sweep name>)")
    set_arg(
        sw,
        " of the base scenario, after the sweep's `set` and before the axes (recorded in "
        "plan.json: a resume must give the same)",
    )
    execution_args(sw)
    budget_arg(sw)
    sw.add_argument(
        "--calibration",
        default=None,
        metavar="FILE",
        help="take missing `load` calibrations from FILE (default: the one beside the base "
        "scenario); the study keeps its own copy in DIR/calibration.json",
    )
    progress_args(sw)

    report_p = sub.add_parser(
        "report", help="write a study's HTML report (self-contained) and its figures"
    )
    report_p.add_argument("study", help="study directory of `aqmlab sweep`")
    report_p.add_argument(
        "--out", default=None, help="HTML file, or a directory for report.html (default: STUDY)"
    )
    report_p.add_argument(
        "--group-by",
        nargs="*",
        default=None,
        metavar="AXIS",
        help="axes whose labels get one figure each; the other axes become curves "
        "(default: every axis but the queue scheme; none: one figure, every cell a curve)",
    )
    report_p.add_argument(
        "--figures",
        default=None,
        metavar="DIR",
        help="folder for the figures as PNG and SVG (default: STUDY/figures)",
    )

    rp = sub.add_parser(
        "reproduce",
        help="re-run one of the four seed studies (A, B, C, D), the L4S pack or the household "
        "pack and write its report",
    )
    rp.add_argument(
        "study",
        help="A (Christiansen 2001), B (Le 2003), C (Weigle 2005), D (May 2000), L4S (the L4S "
        "test scenarios and Web users with Prague and CUBIC), household (video, calls, a game, "
        "pages and bulk on one access link, and Flent's RRUL, through today's queues)",
    )
    rp.add_argument(
        "--scale",
        default="quick",
        help="quick (the design, shortened: ~10 min on 2 cores; default), full (the paper's "
        "scale) or smoke (seconds; for tests)",
    )
    rp.add_argument("--out", default=None, help="directory (default: results/study-<X>-<scale>)")
    execution_args(rp)
    rp.add_argument(
        "--report-only", action="store_true", help="rewrite the report from the finished runs"
    )
    progress_args(rp)

    rf = sub.add_parser(
        "rfc7928",
        help="run the RFC 7928 characterization pack for a set of queues and write its report",
    )
    rf.add_argument(
        "--aqm",
        default=None,
        metavar="LIST",
        help="schemes, comma-separated, each NAME or NAME:key=value,... (e.g. "
        "codel:target_ms=5,interval_ms=100,pie; default "
        "droptail,red,ared,pie,codel,fq_codel,dualpi2)",
    )
    rf.add_argument(
        "--queues", default=None, metavar="FILE", help="TOML file of named queue tables"
    )
    rf.add_argument(
        "--sections",
        default=None,
        metavar="LIST",
        help="sections to run, comma-separated: transport, lbe, rtt_fairness, burst, video, "
        "congestion, varying_congestion, varying_capacity, traffic_mix, ecn, multi_aqm "
        "(default: all the core can run)",
    )
    rf.add_argument("--scale", default="quick", help="full, quick (default) or smoke")
    rf.add_argument("--out", default=None, help="directory (default: results/rfc7928-<scale>)")
    execution_args(rf)
    rf.add_argument(
        "--repetitions", type=int, default=None, help="repetitions per cell (default: the scale's)"
    )
    rf.add_argument(
        "--report-only", action="store_true", help="rewrite the report from the finished runs"
    )
    progress_args(rf)

    tu = sub.add_parser(
        "tune",
        help="search a queue's parameters for the best objective over a scenario's runs "
        "(docs/tune.md)",
    )
    tu.add_argument("tune", help="tune file (TOML, see docs/tune.md)")
    tu.add_argument("--out", required=True, help="directory (resumable: run the same command)")
    tu.add_argument(
        "--scale",
        default=None,
        help="a [scale.NAME] of the tune file (quick, full, smoke in the packaged ones; "
        "default: the [tune] table as it is)",
    )
    execution_args(tu)
    tu.add_argument("--no-report", action="store_true", help="write tune.json only")
    progress_args(tu)

    v = sub.add_parser(
        "validate", help="check a scenario, or a sweep file's whole plan, without running it"
    )
    scenario_args(v, "scenario file or sweep file (TOML, see docs/scenario.md, docs/sweeps.md)")
    v.add_argument(
        "--print",
        action="store_true",
        help="print the resolved scenario as JSON (for a sweep file: its plan, as plan.json)",
    )
    calibration_arg(v)

    sub.add_parser("presets", help="list the TCP presets and their parameters")
    sub.add_parser("queues", help="list the queue kinds and their defaults")
    return p


# --- summary -------------------------------------------------------------------------------


def _directions(core: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The core summary's per-direction blocks: forward = left -> right, reverse = right -> left."""
    return [(d, core[d]) for d in ("forward", "reverse") if isinstance(core.get(d), Mapping)]


def _direction_label(row: str) -> str:
    """`reverse` -> `download (right → left)`; a chain's `hop 1 forward` likewise."""
    from aqmlab.scenario.direction_names import label

    head, _, last = row.rpartition(" ")
    return f"{head} {label(last)}".strip()


def _hop_directions(core: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A chain's per-hop blocks (`summary.hops`, absent for the dumbbell) as
    (`hop k forward`, block) rows; the dumbbell's two directions otherwise."""
    hops = core.get("hops")
    if not isinstance(hops, list) or not hops:
        return _directions(core)
    return [
        (f"hop {h.get('hop', k)} {d}", h[d])
        for k, h in enumerate(hops)
        for d in ("forward", "reverse")
        if isinstance(h, Mapping) and isinstance(h.get(d), Mapping)
    ]


def chain_description(resolved: Mapping[str, Any]) -> str:
    """One line on a scenario's chain of bottlenecks, or "" for the dumbbell: each hop's rate,
    delay and queue, the cross hosts, and the sources that cross one hop only."""
    topo = resolved.get("topology") or {}
    hops = topo.get("hops") or []
    if not hops:
        return ""
    queue = resolved.get("queue") or {}
    parts = [
        f"hop 0 {topo.get('bottleneck_mbps')} Mb/s {topo.get('bottleneck_delay_ms')} ms "
        f"{queue.get('kind', '?')}"
    ]
    for k, h in enumerate(hops, 1):
        mbps = h.get("mbps", topo.get("bottleneck_mbps"))
        delay = h.get("delay_ms", topo.get("bottleneck_delay_ms"))
        kind = (h.get("queue") or queue).get("kind", "?")
        parts.append(f"hop {k} {mbps} Mb/s {delay} ms {kind}")
    crossing = [
        f"traffic[{i}] at hop {hop}"
        for i, hop in enumerate(resolved.get("traffic_hop") or [])
        if hop is not None
    ]
    line = f"chain of {len(hops) + 1} hops: " + ", ".join(parts)
    line += f"; {topo.get('cross_hosts', 0)} cross hosts per hop end"
    if crossing:
        line += "; cross traffic: " + ", ".join(crossing)
    return line


def _pct(v: Any) -> str:
    return f"{100 * v:.2f} %" if isinstance(v, int | float) else "-"


def _num(v: Any, unit: str, fmt: str = ".2f") -> str:
    return f"{v:{fmt}} {unit}" if isinstance(v, int | float) else "-"


def _what_ran(scenario: dict) -> list[str]:
    """The stack and queue lines of a run summary (`aqmlab.scenario.stack`)."""
    from aqmlab.scenario import stack

    queue = stack.describe_queue(scenario.get("queue") or {})
    reverse = scenario.get("queue_reverse")
    if reverse:
        queue += f"; reverse: {stack.describe_queue(reverse)}"
    stacks = stack.describe_stacks(scenario) if scenario.get("tcp") else []
    lines = [f"TCP: {'; '.join(stacks)}"] if stacks else []
    if scenario.get("queue"):
        lines.append(f"queue: {queue}")
    note = stack.ecn_note(scenario)
    return [*lines, f"note: {note}"] if note else lines


def format_summary(results) -> str:
    from aqmlab.analysis.kinds import MIX_KINDS

    s = results.summary
    core = s.get("summary") or {}
    stats = s.get("engine_stats") or {}
    wall = s.get("wall_time_s") or 0.0
    sim_t = stats.get("sim_time_s") or s["scenario"].get("duration_s", 0.0)
    name = s["scenario"].get("name") or Path(s.get("scenario_file") or "scenario").stem
    lines = [
        f"aqmlab {s['version']['aqmlab']} · {name} · seed {s['seed']} · "
        f"{sim_t:g} s simulated in {wall:.2f} s wall"
    ]
    lines += _what_ran(s["scenario"])
    # The queue in packets (what drop-tail and RED people read) and its delay in ms (what
    # CoDel, PIE and L4S people read): the mean of each.
    rows = [("bottleneck", "throughput", "utilization", "loss", "mean queue", "delay")]
    for direction, d in _hop_directions(core):
        rows.append(
            (
                _direction_label(direction),
                _num(d.get("throughput_mbps"), "Mb/s"),
                _pct(d.get("utilization")),
                _pct(d.get("loss_rate")),
                _num(d.get("mean_queue_pkts"), "pkt", ".1f"),
                _num(d.get("delay_mean_ms"), "ms", ".1f"),
            )
        )
    if len(rows) == 1:
        rows.append(("(none reported)", "-", "-", "-", "-", "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        lines.append(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    lines.append(
        "connections: (started after warm-up) "
        f"{core.get('connections_started', '-')} started, "
        f"{core.get('connections_completed', '-')} completed, "
        f"{core.get('connections_aborted', '-')} aborted, "
        f"{core.get('connections_unfinished', '-')} unfinished"
    )
    kinds = {t.get("kind") for t in s["scenario"].get("traffic") or []}
    if kinds & set(MIX_KINDS):
        from aqmlab.analysis import metrics  # reads the record tables (polars)

        lines.append(metrics.format_mix_metrics(metrics.mix_metrics(results)))
    elif "tcp_goodput_mbps" in core:
        # Per direction, by what it carries: a sum of both read as one link's goodput
        # (20.45 Mb/s on a 20 Mb/s link, issue 36).
        down, up = core.get("tcp_goodput_reverse_mbps"), core.get("tcp_goodput_forward_mbps")
        if isinstance(down, int | float) and isinstance(up, int | float):
            lines.append(
                f"TCP goodput (after warm-up): download {down:.3f} Mb/s, upload {up:.3f} Mb/s"
            )
        else:
            lines.append(f"TCP goodput (after warm-up): {core['tcp_goodput_mbps']:.3f} Mb/s")
    from aqmlab.analysis import pages  # standard library only

    if (line := pages.format_line(core)) is not None:
        lines.append(line)
    events = stats.get("events")
    if wall > 0:
        ev = f"{events / wall:,.0f} events/s" if isinstance(events, int | float) else "- events/s"
        lines.append(f"engine: {events or 0:,} events, {ev}, {sim_t / wall:,.1f} sim s/wall s")
    if results.directory is not None:
        tables = ", ".join(f"{t} ({s['tables'].get(t, 0):,} rows)" for t in results.tables)
        lines.append(f"results: {results.directory}/ summary.json {tables}".rstrip())
    return "\n".join(lines)


# --- commands ------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from aqmlab.runs import runner

    out = args.out
    if out is None:
        # The file's stem is one path component; one starting with "." (the stem of
        # "..toml" is ".") would be results/ itself, or hidden like a run in progress.
        stem = Path(args.scenario).stem
        if not stem or stem.startswith("."):
            raise ScenarioError(
                f"{args.scenario}: no default results directory for a file name starting "
                "with '.'; give --out DIR"
            )
        out = os.path.join("results", stem)
    progress = None
    if not args.quiet and sys.stderr.isatty():
        progress = runner._default_progress(sys.stderr)
    calibration = _calibrate_missing(args) if args.calibrate else args.calibration
    results = runner.run(
        args.scenario,
        seed=args.seed,
        out=out,
        progress=progress,
        overrides=[*args.overrides, *_trace_overrides(args)],
        chunk_s=args.chunk_s,
        calibration=calibration,
        announce=None if args.quiet else lambda m: print(m, file=sys.stderr),
        replace=args.force,
    )
    if not args.quiet:
        print(format_summary(results))
        for c in results.summary.get("calibration") or []:
            pop = "users" if "users" in c else "rate"
            print(
                f"calibration: traffic[{c['traffic_index']}] load {c['load']:g} -> "
                f"{pop} = {c[pop]:g} (slope {c['slope_mbps']:.4g} Mb/s, R² {c['r2']:.4f}, "
                f"{c['file']})"
            )
    if args.plots:
        _write_plots(results, Path(out) / "plots", None, quiet=args.quiet)
    return 0


def _out_file(out: str | None, default_name: str) -> Path | None:
    """`--out` of a command that writes one file (calibrate, plot-conn, flent, stats, report):
    a file, or — the convention of every other command — a directory, which then gets the
    command's default file name (issue 36). None when not given."""
    if out is None:
        return None
    p = Path(out)
    return p / default_name if p.is_dir() or out.endswith(os.sep) else p


def _trace_overrides(args: argparse.Namespace) -> list[str]:
    """`--pcap` and `--trace-tcp` as `--set` overrides of `[trace]`."""
    sets = []
    if args.pcap:
        caps = []
        for point in args.pcap:
            name, _, host = point.partition(":")
            if name == "host":
                if not host.isdigit():
                    raise ScenarioError(f"--pcap {point}: expected host:N, N a host number")
                caps.append(f'{{point = "host", host = {host}}}')
            else:
                from aqmlab.scenario.direction_names import capture_point

                caps.append(f"{{point = {json.dumps(capture_point(name))}}}")
        sets.append(f"trace.pcap=[{', '.join(caps)}]")
    if args.trace_tcp is not None:
        if args.trace_tcp == "all":
            sets.append("trace.tcp={}")
        else:
            ids = [i.strip() for i in args.trace_tcp.split(",")]
            if not all(i.isdigit() for i in ids):
                raise ScenarioError(
                    f"--trace-tcp {args.trace_tcp}: expected connection ids like 0,3,7"
                )
            sets.append(f"trace.tcp={{connections = [{', '.join(ids)}]}}")
    return sets


def _calibrate_missing(args: argparse.Namespace) -> Any:
    """`run --calibrate`: the calibrations the run's `load` entries lack, measured. With
    `--calibration FILE` they are added to FILE; otherwise the found ones and the new ones are
    kept in memory and the run stores them in its own directory (never beside the scenario)."""
    from aqmlab import scenario as sc
    from aqmlab.runs.calibrate import calibrate
    from aqmlab.scenario import calibration as cal

    resolved = sc.load(args.scenario, overrides=args.overrides, seed=args.seed, loads=False)
    path = Path(args.calibration) if args.calibration else cal.lookup_path(args.scenario)
    todo = cal.missing(resolved, path)
    if not todo:
        return path
    log = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr))
    _, done = calibrate(
        args.scenario,
        out=path,
        overrides=args.overrides,
        seed=args.seed,
        only=todo,
        log=log,
        save=args.calibration is not None,
    )
    if args.calibration is not None:
        return path
    return {**cal.stored_in(path), **{c.key: c for c in done}}


def _write_plots(results, out: Path, direction: str | None, quiet: bool = False) -> None:
    from aqmlab.analysis import metrics
    from aqmlab.report import plots

    files = plots.write_plots(results, out, direction=direction)
    if not quiet:
        print(metrics.format_metrics(metrics.metrics(results, direction)))
        print(f"plots: {', '.join(str(f) for f in files) or 'none (no exchanges or arrivals)'}")


def _cmd_plot_conn(args: argparse.Namespace) -> int:
    from aqmlab.report.tcp_plot import connection_figure
    from aqmlab.runs.results import Results

    results = Results.open(args.results)
    fig = connection_figure(results, args.conn, args.side)
    name = f"conn-{args.conn}.png"
    out = _out_file(args.out, name) or Path(args.results) / "plots" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    print(out)
    return 0


def _cmd_plots(args: argparse.Namespace) -> int:
    from aqmlab.runs import runner

    results = runner.Results.open(args.results)
    out = Path(args.out) if args.out else Path(args.results) / "plots"
    from aqmlab.scenario.direction_names import canonical

    _write_plots(results, out, canonical(args.direction) if args.direction else None)
    return 0


def _cmd_flent(args: argparse.Namespace) -> int:
    from aqmlab.analysis import flent_export

    step = flent_export.DEFAULT_STEP_S if args.step is None else args.step
    max_flows = flent_export.DEFAULT_MAX_FLOWS if args.max_flows is None else args.max_flows
    time = None if args.time is None else flent_export.parse_time(args.time)
    done = flent_export.export(
        args.results,
        args.out,
        step_s=step,
        time=time,
        max_flows=max_flows,
        aggregate=args.aggregate,
    )
    flows = (
        f"{done.upload_streams} upload and {done.download_streams} download flows"
        if done.mode == "per_flow"
        else "aggregate throughput per direction (bottleneck table)"
    )
    print(f"{done.path}: Flent test {flent_export.FLENT_TEST}, {flows}, {done.points} points")
    for note in done.notes:
        print(f"  note: {note}")


def _cmd_stats(args: argparse.Namespace) -> int:
    from aqmlab.analysis import tc_stats
    from aqmlab.runs.results import Results

    results = Results.open(args.results)
    if args.json:
        print(json.dumps(tc_stats.qdisc_stats(results.summary), indent=2))
    elif args.over_time:
        if "qdisc" not in results.tables:
            raise ScenarioError(f"{args.results}: no qdisc table (run with [trace] qdisc = true)")
        wide = tc_stats.over_time(results["qdisc"])
        if args.out:
            wide.write_csv(_out_file(args.out, "qdisc_over_time.csv"))
        else:
            sys.stdout.write(wide.write_csv())
    else:
        print(tc_stats.format_run(results.summary))
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from aqmlab.runs.calibrate import calibrate

    if args.points < 2:
        raise ValueError(f"--points {args.points}: expected at least 2")
    log = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr))
    path, done = calibrate(
        args.scenario,
        points=args.points,
        duration_s=args.duration,
        warmup_s=args.warmup,
        out=_out_file(args.out, f"{Path(args.scenario).stem}.calibration.json"),
        overrides=args.overrides,
        seed=args.seed,
        workers=args.workers,
        log=log,
    )
    for c in done:
        fi = c.intercept_fit
        print(
            f"traffic[{c.traffic_index}] {c.kind}: load = {c.slope_mbps:.6g} Mb/s × {c.population}"
            f" (R² {c.r2:.4f}); with intercept: {fi['slope_mbps']:.6g} × {c.population} "
            f"{fi['intercept_mbps']:+.4g} Mb/s (R² {fi['r2']:.4f}); other direction "
            f"{c.other_slope_mbps:.6g} Mb/s × {c.population}; key {c.key}"
        )
        for pt in c.points:
            print(
                f"    {c.population} = {pt['population']:<10g} {pt['load_mbps']:10.4f} Mb/s"
                f"  ({100 * pt['load_fraction']:.1f} % of {c.capacity_mbps:g} Mb/s)"
            )
        print(
            f"    {c.population} for 100 % of {c.capacity_mbps:g} Mb/s: "
            f"{c.population_for(1.0):,.0f} (its responses alone); "
            f"{c.population_for(1.0, two_way=True):,.0f} per side with the other side's "
            "requests and ACKs (two-way, both sides alike)"
        )
    print(f"calibration: {path}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from aqmlab.study import sweep

    resume = " ".join(
        shlex.quote(a)
        for a in [
            "aqmlab",
            "sweep",
            args.sweep,
            *(["--out", args.out] if args.out else []),
            *(x for item in args.overrides for x in ("--set", item)),
        ]
    )
    try:
        outcome = sweep.run_sweep(
            args.sweep,
            args.out,
            overrides=args.overrides,
            scheduler=args.scheduler,
            jobs=args.jobs,
            calibration=args.calibration,
            quiet=args.quiet,
            interval_s=args.progress_every,
        )
    except sweep.SweepInterrupted as e:
        o = e.outcome
        if o.total == 0:
            sys.stderr.write(f"\ninterrupted before any run started; resume with: {resume}\n")
        else:
            sys.stderr.write(
                f"\ninterrupted: {o.done} of {o.total} runs done, {o.failed} failed, "
                f"{o.pending} not run (no partial run is kept); resume with: {resume}\n"
            )
        return EXIT_INTERRUPTED
    for run_id, where, error in outcome.failures:
        print(f"failed: {run_id} ({where}): {error}")
    print(
        f"sweep: {outcome.total} runs: {outcome.done} done ({outcome.ran} run now, "
        f"{outcome.skipped} already done), {outcome.failed} failed; "
        f"catalog {outcome.directory / 'catalog.duckdb'}"
    )
    return 1 if outcome.failed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from aqmlab import report

    path = report.write_report(
        args.study,
        _out_file(args.out, "report.html"),
        group_by=args.group_by,
        figure_dir=args.figures,
    )
    print(f"report: {path}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from aqmlab import reproduce
    from aqmlab.study import sweep

    resume = f"aqmlab reproduce {args.study} --scale {args.scale}" + (
        f" --out {args.out}" if args.out else ""
    )
    try:
        outcome = reproduce.reproduce(
            args.study,
            args.scale,
            args.out,
            jobs=args.jobs,
            scheduler=args.scheduler,
            quiet=args.quiet,
            interval_s=args.progress_every,
            report_only=args.report_only,
        )
    except sweep.SweepInterrupted:
        sys.stderr.write(f"\ninterrupted (no partial run is kept); resume with: {resume}\n")
        return EXIT_INTERRUPTED
    for run_id, where, error in outcome.failures:
        print(f"failed: {run_id} ({where}): {error}")
    print(
        f"study {outcome.study} ({outcome.scale}): {outcome.runs} runs, {outcome.failed} failed, "
        f"{outcome.wall_s:.0f} s; report {outcome.report}"
    )
    return 1 if outcome.failed else 0


def _cmd_rfc7928(args: argparse.Namespace) -> int:
    from aqmlab import rfc7928
    from aqmlab.rfc7928 import queues
    from aqmlab.study import sweep

    if args.aqm is not None and args.queues is not None:
        raise ScenarioError("--aqm and --queues: give one of the two")
    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError(f"--jobs {args.jobs}: expected at least 1")
    if args.queues is not None:
        schemes = queues.read_queue_file(args.queues)
    else:
        schemes = queues.parse_aqm_list(args.aqm or queues.DEFAULT_AQMS)
    try:
        outcome = rfc7928.run_pack(
            schemes,
            args.sections,
            args.scale,
            args.out,
            jobs=args.jobs,
            scheduler=args.scheduler,
            repetitions=args.repetitions,
            quiet=args.quiet,
            interval_s=args.progress_every,
            report_only=args.report_only,
        )
    except sweep.SweepInterrupted:
        sys.stderr.write("\ninterrupted (no partial run is kept); run the same command to resume\n")
        return EXIT_INTERRUPTED
    for run_id, where, error in outcome.failures:
        print(f"failed: {run_id} ({where}): {error}")
    for key, why in outcome.skipped:
        print(f"not run: {key}: {why}")
    print(
        f"rfc7928 ({outcome.scale}): {len(outcome.sections)} sections, {outcome.runs} runs, "
        f"{outcome.failed} failed, {outcome.wall_s:.0f} s; report {outcome.report}"
    )
    return 1 if outcome.failed else 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from aqmlab.study.sweep import SweepInterrupted
    from aqmlab.tune import driver

    resume = " ".join(
        shlex.quote(a)
        for a in [
            "aqmlab",
            "tune",
            args.tune,
            "--out",
            args.out,
            *(["--scale", args.scale] if args.scale else []),
        ]
    )
    try:
        doc = driver.run_tune(
            args.tune,
            args.out,
            scale=args.scale,
            jobs=args.jobs,
            scheduler=args.scheduler,
            quiet=args.quiet,
            interval_s=args.progress_every,
            report=not args.no_report,
        )
    except (SweepInterrupted, KeyboardInterrupt):
        sys.stderr.write(
            f"\ninterrupted: every finished run and told trial is kept; resume with: {resume}\n"
        )
        return EXIT_INTERRUPTED
    print(driver.summary_text(doc, Path(args.out)))
    return 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# At most this many failing cells are listed one per line by `aqmlab validate SWEEP.toml`.
MAX_FAILURES_SHOWN = 20


def _validate_sweep(args: argparse.Namespace, scales: Sequence[str]) -> int:
    """The whole plan of a sweep file (of each scale of a study's sweep file), checked
    without running anything: 0 when every run would start, 1 when some cells would fail
    (listed), 2 for a malformed file."""
    import tempfile

    from aqmlab.study import sweepfile

    if args.seed is not None:
        raise ScenarioError(
            f"--seed {args.seed}: a sweep sets its own seeds (sweep.seed + rep); "
            "change sweep.seed in the file"
        )
    source = Path(args.calibration) if args.calibration else None
    status, plans = 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        for scale in scales or [None]:
            path = args.scenario
            if scale is not None:  # a study's sweep file: each of its scales
                from aqmlab.reproduce import scaling

                path = scaling.derive(args.scenario, scale, Path(tmp) / f"{scale}.toml")
            sw = sweepfile.read(path, overrides=args.overrides)
            checked = sweepfile.check(sw, calibration_source=source)
            runs, failures = checked.runs, checked.failures
            status = max(status, 1 if failures else 0)
            if args.print:
                plans[scale] = sweepfile.plan_document(sw, runs)
                continue
            for r in failures[:MAX_FAILURES_SHOWN]:
                where = " ".join([*(f"{k}={v}" for k, v in r.labels.items()), f"rep={r.rep}"])
                print(f"failed: {where}: {r.error}")
            if len(failures) > MAX_FAILURES_SHOWN:
                print(f"... and {len(failures) - MAX_FAILURES_SHOWN} more failures")
            cells = len(runs) // sw.repetitions
            line = (
                f"{args.scenario}{f' (scale {scale})' if scale else ''}: sweep {sw.name}: "
                f"{_plural(cells, 'cell')} × {_plural(sw.repetitions, 'repetition')} = "
                f"{_plural(len(runs), 'run')}, {_plural(len(failures), 'failure')} planned"
            )
            if checked.to_measure:
                line += f", {_plural(len(checked.to_measure), 'calibration')} to measure"
            print(line if failures else f"ok: {line}")
    if args.print:
        shown = plans.get(None, plans)
        print(json.dumps(shown, indent=1, ensure_ascii=False))
    return status


def _cmd_validate(args: argparse.Namespace) -> int:
    from aqmlab import scenario as sc

    doc = sc.read_toml(args.scenario)
    if "sweep" in doc:
        scales = []
        if "scale" in doc:  # a study's sweep file (aqmlab reproduce): every scale
            from aqmlab.reproduce import scaling

            scales = scaling.scales(args.scenario)
        return _validate_sweep(args, scales)
    resolved = sc.load(
        args.scenario, overrides=args.overrides, seed=args.seed, calibration=args.calibration
    )
    sc.validate(resolved)
    if args.print:
        print(json.dumps(resolved, indent=2, ensure_ascii=False))
    else:
        q = resolved.get("queue", {}).get("kind", "?")
        traffic = resolved.get("traffic", [])
        print(
            f"ok: {args.scenario}: {resolved.get('duration_s')} s, queue {q}, "
            f"{len(traffic)} traffic entr{'y' if len(traffic) == 1 else 'ies'}, "
            f"seed {resolved['seed']}"
        )
        chain = chain_description(resolved)
        if chain:
            print(f"  {chain}")
    return 0


def _cmd_presets(_args: argparse.Namespace) -> int:
    from aqmlab import _core

    names = list(_core.tcp_presets())
    presets = {n: _core.tcp_preset(n) for n in names}
    keys = list(presets[names[0]].keys()) if names else []
    rows = [["", *names]]
    rows += [[k, *(json.dumps(presets[n].get(k)) for n in names)] for k in keys]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return 0


def _cmd_queues(_args: argparse.Namespace) -> int:
    """Each queue kind with its defaults as the core fills them (docs/queues.md): what a
    `[queue] kind = "..."` table gets for every key it leaves out."""
    from aqmlab import _core

    for kind, table, required in _core.queue_kinds():
        print(kind)
        keys = [k for k in table if k != "kind"]
        width = max((len(k) for k in keys), default=0)
        for k in keys:
            if k in required:
                shown = "(required)"
            elif table[k] is None:
                shown = "(derived: docs/queues.md)"  # set from other keys or the link
            else:
                shown = json.dumps(table[k])
            print(f"  {k.ljust(width)}  {shown}")
    return 0


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by hand
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    debug = os.environ.get("AQMLAB_DEBUG", "") not in ("", "0")
    args = _parser().parse_args(argv)
    if args.version:
        from aqmlab import __version__

        print(f"aqmlab {__version__}")
        return 0
    commands = {
        "run": _cmd_run,
        "validate": _cmd_validate,
        "presets": _cmd_presets,
        "queues": _cmd_queues,
        "calibrate": _cmd_calibrate,
        "plots": _cmd_plots,
        "plot-conn": _cmd_plot_conn,
        "flent": _cmd_flent,
        "stats": _cmd_stats,
        "sweep": _cmd_sweep,
        "report": _cmd_report,
        "reproduce": _cmd_reproduce,
        "rfc7928": _cmd_rfc7928,
        "tune": _cmd_tune,
    }
    if args.command not in commands:
        _parser().print_help(sys.stderr)
        return EXIT_ERROR
    if threading_main():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if getattr(args, "max_memory_gb", None) is not None:
            # Through the environment, so that a sweep's worker processes see it too.
            from aqmlab.runs import budget

            budget.memory_budget(args.max_memory_gb)  # checks the value
            os.environ[budget.ENV] = repr(args.max_memory_gb)
        return commands[args.command](args)
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write("\nerror: interrupted (no results written)\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except BaseException as e:  # a core panic arrives as RuntimeError; never a traceback
        if debug or isinstance(e, SystemExit):
            raise
        from aqmlab.scenario import one_line

        sys.stderr.write(f"error: {one_line(e)}\n")
        return EXIT_ERROR


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
