"""The machine and toolchain a measurement ran on, for the report: figures from another
machine are not comparable, and a shared machine's load says how far to trust them."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def _first(path: str, key: str) -> str | None:
    """The value of the first `key: value` line of a /proc file."""
    try:
        for ln in Path(path).read_text(encoding="utf-8").splitlines():
            k, _, v = ln.partition(":")
            if k.strip() == key:
                return v.strip()
    except OSError:
        pass
    return None


def _os_name() -> str:
    try:
        for ln in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            if ln.startswith("PRETTY_NAME="):
                return ln.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _rustc() -> str:
    try:
        p = subprocess.run(["rustc", "--version"], capture_output=True, text=True)
        return p.stdout.strip() or "rustc (unknown version)"
    except OSError:
        return "rustc (not found)"


def describe() -> dict[str, str]:
    mem_kib = (_first("/proc/meminfo", "MemTotal") or "0 kB").split()[0]
    return {
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor() or "unknown",
        "cores": str(os.cpu_count() or "?"),
        "memory": f"{int(mem_kib) / 1024**2:.0f} GiB",
        "os": _os_name(),
        "kernel": platform.release(),
        "rustc": _rustc(),
        "python": platform.python_version(),
    }


def load() -> str:
    """The 1-, 5- and 15-minute load averages."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
