"""Runs inside the user-mode Linux guest (uml/init.sh, booted by uml.py): loads the kernel
modules the bed needs, then runs each job of the job file with `bed.run`, exactly as the bed
runs in the host's kernel, and writes each job's outcome to the status file as it goes.

    python -m validation.linux.guest JOB.json

Standard library only (the guest runs the host's Python through hostfs; numpy and aqmlab stay
on the host, which compares the runs afterwards). Modules are loaded with finit_module(2)
directly: the host may have no kmod (`insmod`), and Debian's UML modules are plain `.ko`
files with their order in `modules.dep`.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from validation.linux import bed

SYS_FINIT_MODULE = 313  # x86-64
EEXIST = 17

# veth and htb for the bed; ipv6 because the bed writes net.ipv6 sysctls (IPv6 is a module
# here); the qdiscs and congestion controls the host kernel may lack.
# bridge and netem for the netem delay line (bed.BedConfig.delay).
MODULES = (
    "veth", "ipv6", "sch_htb", "sch_codel", "sch_fq_codel", "sch_pie", "sch_cake",
    "tcp_bbr", "tcp_dctcp", "bridge", "sch_netem", "sch_red",
)  # fmt: skip


def module_order(dep_text: str, names: tuple[str, ...]) -> list[str]:
    """The module files (paths relative to the modules directory) to load for `names`, each
    after the modules it depends on, each once (from `modules.dep`: `path: dep dep ...`)."""
    deps, by_name = {}, {}
    for line in dep_text.splitlines():
        if ":" not in line:
            continue
        path, rest = line.split(":", 1)
        deps[path] = rest.split()
        by_name[Path(path).name.split(".ko")[0]] = path
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for d in deps.get(path, []):
            visit(d)
        order.append(path)

    for n in names:
        if n not in by_name:
            raise KeyError(f"module {n} is not in modules.dep")
        visit(by_name[n])
    return order


def load_modules(moddir: Path, names: tuple[str, ...]) -> dict[str, str]:
    """Loads `names` and their dependencies; returns each file's outcome."""
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    for rel in module_order((moddir / "modules.dep").read_text(), names):
        fd = os.open(moddir / rel, os.O_RDONLY)
        try:
            rc = libc.syscall(SYS_FINIT_MODULE, fd, b"", 0)
            err = ctypes.get_errno()
        finally:
            os.close(fd)
        out[rel] = "loaded" if rc == 0 else ("already" if err == EEXIST else os.strerror(err))
    return out


# Each qdisc the bed can use, as bed.py adds it (qdiscs.tc_args), plus those it cannot.
QDISC_TRIALS = {
    "pfifo": ["pfifo", "limit", "100"],
    "codel": ["codel"],
    "fq_codel": ["fq_codel"],
    "pie": ["pie"],
    "cake": ["cake", "unlimited"],
    "fq_pie": ["fq_pie"],
    "dualpi2": ["dualpi2"],
    "red": ["red", "limit", "400000", "avpkt", "1000", "bandwidth", "10mbit"],
    "netem": ["netem", "delay", "20ms"],
    "htb": ["htb"],
}


def qdisc_trials() -> dict[str, str]:
    """Adds each qdisc of QDISC_TRIALS as the root of lo in a throwaway namespace: "ok" or
    tc's error. The evidence of what this kernel offers."""
    ns = f"aqlbcheck{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    out = {}
    try:
        for name, args in QDISC_TRIALS.items():
            p = subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *args],
                               capture_output=True, text=True)  # fmt: skip
            out[name] = "ok" if p.returncode == 0 else p.stderr.strip()
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"],
                           capture_output=True)  # fmt: skip
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    return out


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    status_path = Path(job["status"])
    status: dict = {"kernel": os.uname().release, "jobs": []}
    try:
        status["modules"] = load_modules(Path(job["modules"]), tuple(job.get("load", MODULES)))
    except (OSError, KeyError) as e:
        status["modules_error"] = str(e)
    status["congestion_control"] = (
        Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    )
    status["qdiscs"] = qdisc_trials()
    status_path.write_text(json.dumps(status, indent=1))
    print(f"guest: modules {status.get('modules')}; cc {status['congestion_control']}; "
          f"qdiscs {status['qdiscs']}", flush=True)  # fmt: skip
    for j in job["jobs"]:
        cfg = bed.BedConfig(**j["cfg"])
        started = time.monotonic()
        print(f"guest: {j['what']} ({cfg.seconds:g} s)", flush=True)
        entry = {"what": j["what"], "out": j["out"]}
        try:
            bed.run(cfg, Path(j["out"]), hard_timeout_s=j["hard_timeout_s"])
            entry["ok"] = True
        except Exception as e:  # every failure is reported to the host, the next job runs
            entry.update(ok=False, error=f"{type(e).__name__}: {e}")
            traceback.print_exc()
        entry["wall_s"] = time.monotonic() - started
        status["jobs"].append(entry)
        status_path.write_text(json.dumps(status, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
