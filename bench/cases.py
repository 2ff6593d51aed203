"""The work `make bench` measures: the rows of issue 34's table, each run the same way by the
reference commit and by this tree.

A case is one of three kinds: `core`, the benchmark binary (`cargo bench -p aqmlab --bench
throughput`) on its built-in scenario or on a scenario file resolved to JSON; `run`, the whole
`aqmlab run` command on a scenario file, set against the `core` case of the same file; and
`rfc7928`, the whole `aqmlab rfc7928` pack, set against the core on each of its runs."""

from __future__ import annotations

from dataclasses import dataclass

from bench.errors import BenchError

# The commit whose figures issue 34's table calls "today": the state before the issue's work.
REFERENCE = "79242fd"

# The Web cases' FreeBSD form: Study B's own hosts (FreeBSD 4.x, 16 KB receive window), in
# place of the files' linux-cubic.
FREEBSD = ('tcp={preset="freebsd-4.x",rwnd=16384}',)

WEB_100M = "bench/web_100m_cubic.toml"
WEB_1G = "bench/web_1g_cubic.toml"
ANCHOR = "bench/packmime_ns2_anchor.toml"


@dataclass(frozen=True)
class Case:
    key: str  # its name for --cases
    label: str  # the work, as the table names it
    kind: str  # "core", "run" or "rfc7928"
    quick_seconds: float  # simulated seconds under --quick (rfc7928: unused, smoke scale)
    seconds: float | None = None  # AQMLAB_BENCH_SECONDS of the full run; None: the scenario's
    tcp: str | None = None  # AQMLAB_BENCH_TCP: a preset for the built-in scenario
    scenario: str | None = None  # a scenario file (else the built-in greedy scenario)
    sets: tuple[str, ...] = ()  # `--set` overrides of the scenario file
    core: str | None = None  # "run": the core case it is set against

    @property
    def builtin(self) -> bool:
        return self.scenario is None and self.kind == "core"


CASES = (
    Case(
        "greedy-reno",
        "100 greedy flows, 100 Mb/s, FreeBSD Reno (the built-in benchmark)",
        "core",
        10.0,
    ),
    Case("greedy-cubic", "100 greedy flows, linux-cubic", "core", 10.0, tcp="linux-cubic"),
    Case("greedy-bbr", "100 greedy flows, linux-bbr", "core", 10.0, tcp="linux-bbr"),
    Case(
        "web100-freebsd",
        "Study B's Web users, 100 Mb/s, 98 %, freebsd-4.x",
        "core",
        4.0,
        scenario=WEB_100M,
        sets=FREEBSD,
    ),
    Case(
        "web100-cubic", "Study B's Web users, 100 Mb/s, linux-cubic", "core", 4.0, scenario=WEB_100M
    ),
    Case(
        "web1g-freebsd",
        "the Web users ×10 on 1 Gb/s (69,300 per side), freebsd-4.x",
        "core",
        2.0,
        scenario=WEB_1G,
        sets=FREEBSD,
    ),
    Case("web1g-cubic", "the Web users ×10 on 1 Gb/s, linux-cubic", "core", 2.0, scenario=WEB_1G),
    # The 300-s form shows whether the cost per packet grows with simulated time; its quick
    # form stays twice as long as the 40-s case's.
    Case(
        "web1g-cubic-300",
        "the Web users ×10 on 1 Gb/s, linux-cubic, 300 s",
        "core",
        4.0,
        seconds=300.0,
        scenario=WEB_1G,
    ),
    Case(
        "anchor-core", "ns-2.35's two-way PackMime anchor: the core", "core", 20.0, scenario=ANCHOR
    ),
    Case(
        "anchor-run",
        "the anchor: the whole command `aqmlab run`",
        "run",
        20.0,
        scenario=ANCHOR,
        core="anchor-core",
    ),
    Case("rfc7928", "RFC 7928 quick pack, `--aqm codel,pie`: the whole command", "rfc7928", 0.0),
)

BY_KEY = {c.key: c for c in CASES}


def select(keys: str | None) -> list[Case]:
    """The cases named in `keys` (comma-separated, in the table's order), all when None. A
    `run` case brings its core case: its figures are ratios to it."""
    if keys is None:
        return list(CASES)
    wanted = {k.strip() for k in keys.split(",") if k.strip()}
    unknown = sorted(wanted - BY_KEY.keys())
    if unknown:
        raise BenchError(f"--cases: unknown {', '.join(unknown)}; known: {', '.join(BY_KEY)}")
    for k in list(wanted):
        if BY_KEY[k].core:
            wanted.add(BY_KEY[k].core)
    return [c for c in CASES if c.key in wanted]


def rfc7928_args(quick: bool) -> list[str]:
    """The pack's arguments: the quick scale as issue 34 measured it, the smoke scale (the
    same sections, a thinned design) under --quick."""
    return ["--aqm", "codel,pie", "--scale", "smoke" if quick else "quick"]
