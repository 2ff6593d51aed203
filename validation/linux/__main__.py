"""Runs bulk TCP flows through a Linux dumbbell in network namespaces and compares them with
aqmlab's run of the same scenario.

    python -m validation.linux [--flows 1,4] [--cc reno,cubic] [--rtt 40 | 20-80]
                               [--qdisc pfifo,codel,fq_codel,pie,cake] [--kernel host | uml]
                               [--seconds 60] [--warmup 10] [--limit 100] [--repeat 3]
                               [--aqmlab-preset NAME | CC=NAME,...] [--aqmlab-tcp KEY=VALUE]
                               [--out DIR]
    python -m validation.linux --from DIR [--aqmlab-preset ...] [--out DIR2]

Needs root (namespaces, tc, ethtool); without it, says so and exits 0. `--kernel uml` runs
the bed inside user-mode Linux (Debian's `user-mode-linux`, Linux 6.1 with the AQM qdiscs
the host kernel may lack: uml.py). `--from` compares the
Linux runs recorded in DIR again (no root needed), e.g. with a new aqmlab preset. Writes, per
configuration, the raw samples and both sides' tables, and for all of them comparison.csv /
.parquet / .md (and bed_checks, noise with --repeat). Exit status 1 when a comparison is
outside its tolerance, 2 when the bed could not run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import polars as pl

from validation.linux import bed, fct, measure, model, qdiscs, uml, workload

HERE = Path(__file__).resolve().parent


def parse_list(text: str, kind=str) -> list:
    return [kind(x) for x in text.split(",") if x.strip()]


def parse_rtts(spec: str, n: int) -> list[float]:
    """`40` → every flow 40 ms; `20-80` → N values evenly spaced from 20 to 80 ms."""
    if "-" in spec:
        lo, hi = (float(x) for x in spec.split("-", 1))
        if not 0 < lo <= hi:
            raise ValueError(f"--rtt {spec}: expected LOW-HIGH with 0 < LOW ≤ HIGH")
        return [float(x) for x in np.linspace(lo, hi, n)] if n > 1 else [lo]
    v = float(spec)
    if v <= 0:
        raise ValueError(f"--rtt {spec}: expected a positive number of ms")
    return [v] * n


def parse_presets(text: str) -> dict[str, str]:
    """`NAME` (every cc) or `cc=NAME,cc=NAME` ("*" for the others)."""
    if "=" not in text:
        return {"*": text}
    out = {}
    for part in parse_list(text):
        cc, name = part.split("=", 1)
        out[cc.strip()] = name.strip()
    return out


def parse_tcp(items: list[str]) -> dict[str, object]:
    out = {}
    for item in items:
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = tomllib.loads(f"x = {v}")["x"]
        except tomllib.TOMLDecodeError:
            out[k.strip()] = v
    return out


def label(
    cc: str, n: int, rtt: str, limit: int, seconds: float, qdisc: str = "pfifo",
    web_load: float | None = None,
) -> str:  # fmt: skip
    """`reno-n4-rtt40-q100-60s` (pfifo, the bed's first and default), else the qdisc named:
    `reno-n4-rtt40-fq_codel-q10240-60s`; with short flows at 50 % load
    `cubic-n2-rtt40-web50-q100-60s`."""
    q = "" if qdisc == "pfifo" else f"{qdisc}-"
    w = f"web{web_load * 100:g}-" if web_load else ""
    return f"{cc}-n{n}-rtt{rtt}-{w}{q}q{limit}-{seconds:g}s"


def spec_label(spec: dict) -> str:
    return label(spec["cc"], spec["flows"], spec["rtt"], spec["limit"], spec["seconds"],
                 spec.get("qdisc", "pfifo"), spec.get("web_load"))  # fmt: skip


SCHEDULE = "schedule.csv"  # the short flows' schedule, in the configuration's folder


def replay_file(d: Path, spec: dict) -> str | None:
    """The short flows' schedule of configuration `spec` (folder `d`), or None."""
    return str((d / SCHEDULE).resolve()) if spec.get("web_load") else None


def write_schedule(d: Path, spec: dict) -> None:
    """The short flows' schedule (workload.py) from the configuration's seed, over its
    length."""
    law = workload.WebLaw(load=spec["web_load"], rate_mbit=spec["rate_mbit"])
    rows = workload.schedule(law, spec["seconds"], spec["seed"])
    workload.write(rows, d / SCHEDULE, law, spec["seed"])


def with_kernel_hz(spec: dict, tcp: dict) -> dict:
    """The TCP keys beside the preset, with the model's timer tick at the bed kernel's jiffy
    when the run records its HZ (`kernel_hz`: the UML guest's is 100, the linux-* presets
    assume 250) and nothing else chose a tick."""
    hz = spec.get("kernel_hz")
    if not hz or "tick_ms" in tcp:
        return tcp
    return {**tcp, "tick_ms": 1000.0 / hz}


def bed_config(spec: dict, out_dir: Path | None = None) -> bed.BedConfig:
    """The bed's configuration of a run (run.json's `spec`; `out_dir`: its folder, where the
    short flows' schedule is)."""
    qdisc = spec.get("qdisc", "pfifo")
    return bed.BedConfig(
        flows=spec["flows"], cc=spec["cc"], rtts_ms=spec["rtts_ms"],
        seconds=spec["seconds"], starts_s=spec["starts_s"], limit=spec["limit"],
        rate_mbit=spec["rate_mbit"], sample_ms=spec["sample_ms"], rt_prio=spec["rt_prio"],
        qdisc_args=qdiscs.tc_args(qdisc, spec["limit"]), delay=spec.get("delay_line", "agent"),
        burst_bytes=spec.get("burst_bytes", 1600), sysctls=bed.ecn_sysctls(spec["cc"]),
        web_schedule=(replay_file(out_dir, spec) or "") if out_dir else "",
    )  # fmt: skip


def _say(text: str) -> None:
    print(text, flush=True)


def _show(rows: list[measure.Row]) -> None:
    for r in rows:
        if r.passed is None and not r.metric.startswith(
            ("aggregate", "Jain", "utilisation", "cwnd correlation (sum")
        ):
            continue
        mark = {True: "ok  ", False: "FAIL", None: "    "}[r.passed]
        lin = "" if np.isnan(r.linux) else f"{r.linux:.4g}"
        _say(
            f"  {mark} {r.metric:<34} linux {lin:>10}  aqmlab {r.aqmlab:>10.4g}  "
            f"diff {r.difference:>8.3g}"
            + ("" if np.isnan(r.tolerance) else f"  tol {r.tolerance:g}")
        )


def compare(
    d: Path, spec: dict, preset: str, tcp: dict, fct_lines: list | None = None
) -> tuple[list, list, list]:
    """The aqmlab run of configuration `spec` (in `d`/aqmlab) against every Linux run
    recorded in `d` (linux, or linux-1, linux-2, …). Returns (comparison rows, per-run Linux
    metrics, per-run Linux cwnd tables); with short flows appends their FCT lines (per run
    and size class) to `fct_lines`."""
    fct_lines = [] if fct_lines is None else fct_lines
    doc = model.scenario(
        flows=spec["flows"],
        rtts_ms=spec["rtts_ms"],
        limit=spec["limit"],
        seconds=spec["seconds"],
        warmup=spec["warmup"],
        rate_mbit=spec["rate_mbit"],
        preset=preset,
        tcp=tcp,
        start_jitter_s=spec["start_jitter_s"],
        seed=spec["seed"],
        name=d.name,
        queue=qdiscs.aqmlab_queue(spec.get("qdisc", "pfifo"), spec["limit"]),
        replay_file=replay_file(d, spec),
    )
    m = model.run(doc, d / "aqmlab")
    ours = model.metrics(m, spec["rate_mbit"])
    (d / "aqmlab" / "metrics.json").write_text(json.dumps(ours, indent=1))
    web = spec.get("web_load")
    if web:
        conns = pl.read_parquet(d / "aqmlab" / "connections.parquet")
        ours_fct = fct.aqmlab(conns, model.REPLAY_SOURCE, spec["warmup"], spec["seconds"])
        (d / "aqmlab" / "fct.json").write_text(json.dumps(ours_fct, indent=1))
    described = preset + (" + " + ", ".join(f"{k}={v}" for k, v in tcp.items()) if tcp else "")
    if tcp == model.overrides_for(preset) and not preset.startswith("linux-"):
        described = f"{preset} + LINUX_APPROX"
    rows, lins, cwnds = [], [], []
    runs = sorted(p.parent for p in d.glob("linux*/meta.json"))
    for rd in runs:
        lin = measure.linux_metrics(rd, spec["warmup"], spec["seconds"], spec["rate_mbit"])
        (rd / "metrics.json").write_text(json.dumps(lin, indent=1))
        lc = measure.linux_cwnd(rd)
        lc.write_parquet(rd / "cwnd.parquet")
        per_flow, grid = measure.cwnd_comparison(lc, m.cwnd, spec["warmup"], spec["seconds"])
        grid.write_parquet(rd / "cwnd_grid.parquet")
        name = d.name if len(runs) == 1 else f"{d.name} {rd.name}"
        got = measure.comparison_rows(name, lin, ours, per_flow, spec["flows"], described)
        if web:
            lin_fct = fct.linux(rd, spec["warmup"], spec["seconds"])
            (rd / "fct.json").write_text(json.dumps(lin_fct, indent=1))
            lin["fct"] = lin_fct  # for the noise table over repeats
            got += fct.comparison_rows(name, lin_fct, ours_fct, described)
            fct_lines.extend(fct.summary(d.name, lin_fct, ours_fct, rd.name))
        rows += got
        lins.append(lin)
        cwnds.append(lc)
        _say(f"{name}: Linux {spec['cc']} against aqmlab {described}")
        _show(got)
    return rows, lins, cwnds


def run_linux(specs: list[dict], out: Path, tcp_for, kernel: str) -> int:
    """The Linux side of every configuration: run.json (with aqmlab's start times) and the
    bed's runs, in this kernel or all in one boot of user-mode Linux. 0, or the exit status."""
    jobs = []
    for spec in specs:
        name = spec_label(spec)
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        preset, tcp = tcp_for(spec["cc"])
        tcp = with_kernel_hz(spec, tcp)
        doc = model.scenario(
            flows=spec["flows"], rtts_ms=spec["rtts_ms"], limit=spec["limit"],
            seconds=spec["seconds"], warmup=spec["warmup"], rate_mbit=spec["rate_mbit"],
            preset=preset, tcp=tcp, start_jitter_s=spec["start_jitter_s"], seed=spec["seed"],
            queue=qdiscs.aqmlab_queue(spec["qdisc"], spec["limit"]),
        )  # fmt: skip
        spec["starts_s"] = model.start_times(doc)
        if spec.get("web_load"):
            write_schedule(d, spec)
        (d / "run.json").write_text(json.dumps(spec, indent=1))
        for k in range(spec["repeat"]):
            rd = d / ("linux" if spec["repeat"] == 1 else f"linux-{k + 1}")
            jobs.append((f"{name} run {k + 1}/{spec['repeat']}", bed_config(spec, d), rd))
    if kernel == "uml":
        try:
            failed = uml.run_jobs(jobs, out, say=_say)
        except KeyboardInterrupt:
            _say("validation.linux: interrupted; user-mode Linux is stopped")
            return 130
        except uml.UmlError as e:
            _say(f"validation.linux: user-mode Linux: {e}")
            return 2
        for what, err in failed:
            _say(f"validation.linux: {what}: {err}")
        return 2 if failed else 0
    for what, cfg, rd in jobs:
        _say(f"{what} ({cfg.seconds:g} s)")
        try:
            bed.run(cfg, rd, hard_timeout_s=cfg.seconds + 60.0)
        except KeyboardInterrupt:
            _say("validation.linux: interrupted; the bed is torn down")
            return 130
        except (bed.BedError, OSError, ValueError) as e:
            _say(f"validation.linux: {what}: {e}")
            return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m validation.linux", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--flows", default="1,4", help="numbers of flows, e.g. 1,4,16")
    ap.add_argument("--cc", default="reno,cubic", help="Linux congestion controls")
    ap.add_argument("--rtt", default="40", help="RTT in ms (40) or a spread over flows (20-80)")
    ap.add_argument("--seconds", type=float, default=60.0, help="scenario length")
    ap.add_argument("--warmup", type=float, default=10.0, help="excluded from the metrics")
    ap.add_argument(
        "--limit", type=int, default=None,
        help="bottleneck queue limit (packets; default: the qdisc's Linux default, pfifo 100)",
    )  # fmt: skip
    ap.add_argument(
        "--qdisc", default="pfifo",
        help=f"bottleneck qdiscs under the htb rate ({', '.join(qdiscs.NAMES)})",
    )  # fmt: skip
    ap.add_argument(
        "--delay-line", choices=("agent", "netem"), default="agent",
        help="the RTT: the user-space bridge (per-flow RTTs) or netem (one RTT; needs netem)",
    )  # fmt: skip
    ap.add_argument(
        "--burst", type=int, default=1600,
        help="htb burst and cburst (bytes; 1600: one frame, the link never sends faster)",
    )  # fmt: skip
    ap.add_argument(
        "--kernel", choices=("host", "uml"), default="host",
        help="run the bed in this machine's kernel or inside user-mode Linux (uml.py)",
    )  # fmt: skip
    ap.add_argument("--rate", type=float, default=10.0, help="bottleneck rate (Mb/s)")
    ap.add_argument(
        "--web", type=float, default=None, metavar="LOAD",
        help="short flows (workload.py) at this share of the link beside the --flows greedy "
        "ones, e.g. 0.5",
    )  # fmt: skip
    ap.add_argument("--repeat", type=int, default=1, help="Linux runs per configuration")
    ap.add_argument("--start-jitter", type=float, default=1.0, help="flows start within this")
    ap.add_argument("--seed", type=int, default=1, help="aqmlab seed (also the start times)")
    ap.add_argument("--sample-ms", type=float, default=10.0, help="sampling period")
    ap.add_argument(
        "--rt-prio", type=int, default=1, help="SCHED_FIFO priority of the delay line (0: off)"
    )
    ap.add_argument(
        "--aqmlab-preset",
        default=model.DEFAULT_PRESETS,
        help=f"aqmlab TCP preset, or per cc (default {model.DEFAULT_PRESETS}; another cc "
        f"gets {model.DEFAULT_PRESET})",
    )
    ap.add_argument(
        "--aqmlab-tcp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [tcp] key for aqmlab beside the preset (repeatable)",
    )
    ap.add_argument(
        "--no-approx",
        action="store_true",
        help="no Linux-like overrides beside a non-Linux preset (model.LINUX_APPROX)",
    )
    ap.add_argument("--out", type=Path, help="results directory (default: a new one in "
                    "validation/linux/results/)")  # fmt: skip
    ap.add_argument("--from", dest="source", type=Path, help="compare recorded Linux runs")
    args = ap.parse_args(argv)
    # Ctrl-C tears the bed down even when started with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)

    presets = parse_presets(args.aqmlab_preset)
    extra = parse_tcp(args.aqmlab_tcp)

    def tcp_for(cc: str) -> tuple[str, dict]:
        preset = presets.get(cc, presets.get("*", model.DEFAULT_PRESET))
        over = dict(extra) if args.no_approx else model.overrides_for(preset, extra)
        return preset, over

    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out or HERE / "results" / stamp
    if args.source is None:
        if os.geteuid() != 0:
            _say(
                "validation.linux: the Linux testbed needs root (network namespaces, tc, "
                "ethtool); nothing was run. Run it as root, or compare recorded runs with "
                "--from DIR."
            )
            return 0
        missing = bed.missing_tools() + (uml.missing() if args.kernel == "uml" else [])
        if missing:
            pkgs = sorted({uml.PACKAGES.get(t, t) for t in missing})
            _say(
                f"validation.linux: missing {', '.join(missing)} (apt-get install {' '.join(pkgs)})"
            )
            return 2
        try:
            flows = parse_list(args.flows, int)
            ccs = parse_list(args.cc)
            names = parse_list(args.qdisc)
            limits = {q: qdiscs.check(q, args.limit) for q in names}
            for q, cc in itertools.product(names, ccs):
                qdiscs.check_cc(q, cc, bed.ECN_CCS)
            if args.web is not None:
                workload.check(workload.WebLaw(load=args.web, rate_mbit=args.rate))
            specs = [
                {
                    "cc": cc,
                    "flows": n,
                    "rtt": args.rtt,
                    "rtts_ms": parse_rtts(args.rtt, n),
                    "qdisc": q,
                    "kernel": args.kernel,
                    "delay_line": args.delay_line,
                    "burst_bytes": args.burst,
                    "kernel_hz": uml.GUEST_HZ if args.kernel == "uml" else None,
                    "limit": limits[q],
                    "seconds": args.seconds,
                    "warmup": args.warmup,
                    "rate_mbit": args.rate,
                    "start_jitter_s": args.start_jitter,
                    "seed": args.seed,
                    "sample_ms": args.sample_ms,
                    "rt_prio": args.rt_prio,
                    "repeat": args.repeat,
                    "web_load": args.web,
                }
                for q, cc, n in itertools.product(names, ccs, flows)
            ]
        except ValueError as e:
            _say(f"validation.linux: {e}")
            return 2
        if not 0 <= args.warmup < args.seconds or args.start_jitter >= args.warmup:
            _say("validation.linux: expected 0 ≤ start jitter < warm-up < seconds")
            return 2
    else:
        specs = []
        for f in sorted(args.source.glob("*/run.json")):
            specs.append(json.loads(f.read_text()))
        if not specs:
            _say(f"validation.linux: no recorded runs (*/run.json) in {args.source}")
            return 2
        out = args.out or args.source
        if out.resolve() != args.source.resolve():
            # The recorded Linux runs come along, so that `out` holds both sides.
            shutil.copytree(args.source, out, dirs_exist_ok=True)

    if args.source is None:
        got = run_linux(specs, out, tcp_for, args.kernel)
        if got:
            return got

    all_rows, all_checks, all_noise, all_cwnd_noise, fct_lines = [], [], [], [], []
    for spec in specs:
        name = spec_label(spec)
        d = out / name
        preset, tcp = tcp_for(spec["cc"])
        rows, lins, cwnds = compare(d, spec, preset, with_kernel_hz(spec, tcp), fct_lines)
        all_rows += rows
        for rd in sorted(p.parent for p in d.glob("linux*/meta.json")):
            checks = measure.bed_checks(rd, bed.PORT_BASE)
            (rd / "bed_checks.json").write_text(json.dumps(checks, indent=1))
            all_checks += [
                {"config": name, "run": rd.name, "check": k, "value": str(v)}
                for k, v in checks.items()
            ]
        if len(lins) > 1:
            all_noise.append(measure.noise(name, lins))
            all_cwnd_noise.append(measure.cwnd_noise(name, cwnds, spec["warmup"], spec["seconds"]))
    table = measure.frame(all_rows)
    measure.write_table(table, out / "comparison")
    measure.write_table(measure.summary(table), out / "summary")
    if all_checks:
        measure.write_table(pl.DataFrame(all_checks), out / "bed_checks")
    if fct_lines:
        measure.write_table(pl.DataFrame(fct_lines), out / "fct")
    if all_noise:
        measure.write_table(pl.concat(all_noise), out / "noise")
        measure.write_table(pl.concat(all_cwnd_noise), out / "cwnd_noise")
    held = [r for r in all_rows if r.passed is not None]
    failed = [r for r in held if not r.passed]
    _say(f"{len(held)} comparisons held to a tolerance, {len(failed)} outside; results in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
