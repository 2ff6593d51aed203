"""The ``aqmlab`` command.

    aqmlab run SCENARIO.toml [--out DIR] [--seed N] [--set key.path=value ...]
    aqmlab validate SCENARIO.toml [--seed N] [--set ...] [--print]
    aqmlab presets

Every error is one line on stderr, ``error: ...``, and exit status 2 (130 when interrupted).
Set ``AQMLAB_DEBUG=1`` to get the Python traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see aqmlab {self.prog.split()[-1]} --help)\n")
        sys.exit(EXIT_ERROR)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="aqmlab", description="Packet-level TCP/AQM simulator.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def scenario_args(s: argparse.ArgumentParser) -> None:
        s.add_argument("scenario", help="scenario file (TOML, see docs/scenario.md)")
        s.add_argument("--seed", type=int, default=None, help="random seed (overrides the file)")
        s.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a scenario value, e.g. --set queue.limit=50 (repeatable; "
            "values are TOML, bare words are strings)",
        )

    r = sub.add_parser("run", help="run a scenario and write its results")
    scenario_args(r)
    r.add_argument(
        "--out", default=None, help="results directory (default: results/<scenario name>)"
    )
    r.add_argument(
        "--chunk-s", type=float, default=None, help="simulated seconds per chunk (default: auto)"
    )
    r.add_argument("-q", "--quiet", action="store_true", help="print no summary or progress")

    v = sub.add_parser("validate", help="check a scenario without running it")
    scenario_args(v)
    v.add_argument("--print", action="store_true", help="print the resolved scenario as JSON")

    sub.add_parser("presets", help="list the TCP presets and their parameters")
    return p


# --- summary -------------------------------------------------------------------------------


def _directions(core: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The core summary's per-direction blocks: forward = left -> right, reverse = right -> left."""
    return [(d, core[d]) for d in ("forward", "reverse") if isinstance(core.get(d), Mapping)]


def _pct(v: Any) -> str:
    return f"{100 * v:.2f} %" if isinstance(v, int | float) else "-"


def _num(v: Any, unit: str, fmt: str = ".2f") -> str:
    return f"{v:{fmt}} {unit}" if isinstance(v, int | float) else "-"


def format_summary(results) -> str:
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
    rows = [("bottleneck", "throughput", "utilization", "loss", "mean queue")]
    for direction, d in _directions(core):
        rows.append(
            (
                direction,
                _num(d.get("throughput_mbps"), "Mb/s"),
                _pct(d.get("utilization")),
                _pct(d.get("loss_rate")),
                _num(d.get("mean_queue_pkts"), "pkt", ".1f"),
            )
        )
    if len(rows) == 1:
        rows.append(("(none reported)", "-", "-", "-", "-"))
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
    from aqmlab import runner

    out = args.out
    if out is None:
        out = os.path.join("results", Path(args.scenario).stem)
    progress = None
    if not args.quiet and sys.stderr.isatty():
        progress = runner._default_progress(sys.stderr)
    results = runner.run(
        args.scenario,
        seed=args.seed,
        out=out,
        progress=progress,
        overrides=args.overrides,
        chunk_s=args.chunk_s,
    )
    if not args.quiet:
        print(format_summary(results))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from aqmlab import scenario as sc

    resolved = sc.load(args.scenario, overrides=args.overrides, seed=args.seed)
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


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by hand
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    debug = os.environ.get("AQMLAB_DEBUG", "") not in ("", "0")
    args = _parser().parse_args(argv)
    if args.version:
        from aqmlab import __version__

        print(f"aqmlab {__version__}")
        return 0
    commands = {"run": _cmd_run, "validate": _cmd_validate, "presets": _cmd_presets}
    if args.command not in commands:
        _parser().print_help(sys.stderr)
        return EXIT_ERROR
    if threading_main():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
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
        msg = " ".join(str(e).split()) or type(e).__name__
        if not isinstance(e, ValueError | RuntimeError | OSError):
            msg = f"{type(e).__name__}: {msg}"
        sys.stderr.write(f"error: {msg}\n")
        return EXIT_ERROR


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
