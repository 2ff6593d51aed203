"""One RFC 7928 quick pack (`--aqm codel,pie`) into OUT, without its report; prints one JSON
line: the runs, and the CPU of the driver and of its workers (reaped) from the sections'
start (`sweep.Backends.__enter__`) to the pool's close (`__exit__`), per run.

Run as a script by `bench/pack_runs.py`. Its imports of aqmlab stay under `__main__`: the
pool's workers are spawned and import this file as their main module, as they import the
`aqmlab` command's script (light) in a real pack.
"""

from __future__ import annotations

import contextlib
import json
import resource
import sys
import time


class _Done(Exception):
    """Raised at the pool's close: the report is left out."""


def _now() -> tuple[float, float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, time.perf_counter()


def main(out: str) -> None:
    from pathlib import Path

    from aqmlab import rfc7928
    from aqmlab.rfc7928 import queues
    from aqmlab.study import sweep

    marks: dict[str, tuple[float, float, float]] = {}
    enter, leave = sweep.Backends.__enter__, sweep.Backends.__exit__

    def entered(self):
        marks["start"] = _now()
        return enter(self)

    def left(self, *exc):
        leave(self, *exc)
        marks["end"] = _now()
        if exc[0] is None:
            raise _Done

    sweep.Backends.__enter__ = entered
    sweep.Backends.__exit__ = left
    with contextlib.suppress(_Done):
        rfc7928.run_pack(queues.parse_aqm_list("codel,pie"), scale="quick", out=out, quiet=True)
    n = len(list(Path(out).glob("*/runs/*/summary.json")))
    (d0, w0, t0), (d1, w1, t1) = marks["start"], marks["end"]
    ms = 1000.0 / max(n, 1)
    print(
        json.dumps(
            {
                "runs": n,
                "driver_ms": (d1 - d0) * ms,
                "workers_ms": (w1 - w0) * ms,
                "cpu_ms": (d1 - d0 + w1 - w0) * ms,
                "wall_s": t1 - t0,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
