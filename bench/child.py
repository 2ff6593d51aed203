"""One measured child process: its wall time, CPU time and peak memory as the kernel counts
them (`os.wait4`'s resource usage), and what it printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.errors import BenchError


@dataclass(frozen=True)
class Child:
    wall_s: float  # from just before the fork to the reaping
    cpu_s: float  # user + system, the process's and its reaped descendants' (a pack's workers)
    peak_mib: float  # ru_maxrss: the largest resident set of the process or a descendant
    stdout: str


def run(
    argv: Sequence[str | os.PathLike],
    env: Mapping[str, str],
    cwd: Path,
    what: str,
) -> Child:
    """Runs `argv` to its end and measures it; a non-zero exit is a BenchError naming `what`
    and the last line the child wrote to stderr."""
    # Output goes to files, not pipes: nothing to drain while the child runs, so the parent
    # sleeps in wait4 and adds no work of its own to the machine being measured.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        p = subprocess.Popen(
            [os.fspath(a) for a in argv],
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        # wait4 rather than Popen.wait: the same reaping, with the child's rusage.
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if p.returncode != 0:
        raise BenchError(f"{what}: exit status {p.returncode}: {reason(stderr)}")
    return Child(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_mib=usage.ru_maxrss / 1024.0,  # Linux counts it in KiB
        stdout=stdout,
    )


def reason(stderr: str) -> str:
    """The line of `stderr` that says why: a Rust panic's message (the line after "panicked
    at", the last ones being a note about backtraces), else the last line written."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for i, ln in enumerate(lines[:-1]):
        if "panicked at" in ln:
            return lines[i + 1]
    return lines[-1] if lines else "(no message)"


def floor_mib() -> float:
    """ru_maxrss of a child that does nothing (`true`): the least any child can show, the
    kernel keeping the high-water mark of the memory it had before exec (this driver's)."""
    true = shutil.which("true") or "/bin/true"
    return run([true], os.environ, Path.cwd(), "true").peak_mib
