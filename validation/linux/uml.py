"""The bed inside user-mode Linux: Debian's `user-mode-linux` (Linux 6.1 as an ordinary process,
with the qdisc and TCP modules the host kernel here lacks: fq_codel, cake, pie, codel, netem,
dctcp…) booted once for a list of bed runs.

The guest's root is the host's / through hostfs (its Python, iproute2, ethtool and this
checkout); its init (uml_boot/init.sh) mounts a tmpfs on /run, loads the modules
(`guest.py`), runs `bed.run` for each job, exactly the code the host's bed runs, writing the
raw samples straight into the results directory, and powers off. The host then compares the
runs with aqmlab as it compares its own. Nothing of the guest touches the host's network: the
namespaces, veths and qdiscs are the guest kernel's.

Booting needs nothing special here (host 6.18, AMD EPYC with AVX-512). An earlier try saw the
guest's first process die with SIGSEGV; that was not reproduced: init (a shell script) and the
host's Python run, and UML's PTRACE_{GET,SET}REGSET(NT_X86_XSTATE) calls, logged with a
preload shim, all succeed with 2432 bytes, the host's full user XSAVE size (a UML whose buffer
were smaller would get EFAULT from SETREGSET and kill the process with SIGSEGV).

The guest's clock: UML keeps time with host timers (its own HZ is 100; hrtimers for pacing,
htb and netem), and runs as one host process plus one per guest address space, every guest
system call and page fault a ptrace round trip: the agents are slower to start
(`GUEST_START_MARGIN_S`) and use more CPU than on the host.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

from validation.linux import bed

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BOOT = HERE / "uml_boot"
UML = "linux.uml"
MODULES_ROOT = Path("/usr/lib/uml/modules")
PACKAGES = {"ip": "iproute2", "tc": "iproute2", "ss": "iproute2", UML: "user-mode-linux"}
GUEST_MEM = "1024M"
GUEST_HZ = 100  # CONFIG_HZ of Debian's UML 6.1 (its config.gz): jiffies of 10 ms
GUEST_START_MARGIN_S = 8.0  # time zero after the agents' start (bed.BedConfig.start_margin_s)
BOOT_ALLOWANCE_S = 120.0  # boot, module loading and power-off


class UmlError(RuntimeError):
    pass


def missing() -> list[str]:
    """Tools the user-mode Linux bed needs beyond the bed's own."""
    out = [t for t in (UML,) if shutil.which(t) is None]
    if not modules_dirs():
        out.append(f"{MODULES_ROOT}/<version>")
    return out


def modules_dirs() -> list[Path]:
    return sorted(p for p in MODULES_ROOT.glob("*") if (p / "modules.dep").exists())


def command(tmp: Path, job: Path, umid: str, mem: str = GUEST_MEM) -> list[str]:
    """linux.uml's command line: hostfs root, our init, console on stdout, no other
    terminals; the `AQLB_*` words reach init as its environment."""
    return [
        UML, f"mem={mem}", f"umid={umid}", f"uml_dir={tmp}",
        "root=/dev/root", "rootfstype=hostfs", "rootflags=/", "rw",
        f"init={BOOT / 'init.sh'}", "con=null", "ssl=null", "con0=null,fd:1",
        f"AQLB_REPO={REPO}", f"AQLB_PYTHON={sys.executable}", f"AQLB_JOB={job}",
    ]  # fmt: skip


def job_document(jobs: list[tuple[str, bed.BedConfig, Path]], status: Path) -> dict:
    """The guest's job file: each run's BedConfig (start margin raised for the guest), its
    results directory and hard timeout."""
    out = []
    for what, cfg, rd in jobs:
        c = asdict(cfg)
        c["start_margin_s"] = max(cfg.start_margin_s, GUEST_START_MARGIN_S)
        out.append(
            {
                "what": what,
                "cfg": c,
                "out": str(Path(rd).resolve()),
                "hard_timeout_s": cfg.seconds + 60.0 + c["start_margin_s"],
            }
        )
    return {"modules": str(modules_dirs()[-1]), "status": str(status), "jobs": out}


def _session_pids(sid: int) -> list[int]:
    """Processes of session `sid` (the UML process and every host process it made)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) == sid:  # state ppid pgrp session
                pids.append(int(d.name))
    return pids


def _kill_session(sid: int) -> None:
    for pid in _session_pids(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class _LoadLog:
    """Writes the host's load average every `period_s` while the guest runs (a thread): the
    guest's timing depends on the CPU the host leaves it."""

    def __init__(self, path: Path, period_s: float = 10.0) -> None:
        self.path, self.period_s = path, period_s
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        with self.path.open("w") as f:
            f.write("unix_s,load1,load5,load15\n")
            while True:
                one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
                f.write(f"{time.time():.0f},{one},{five},{fifteen}\n")
                f.flush()
                if self.stop.wait(self.period_s):
                    return

    def __enter__(self) -> _LoadLog:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(5)


def run_jobs(jobs: list[tuple[str, bed.BedConfig, Path]], out: Path, *, say=print) -> list:
    """Boots user-mode Linux once for `jobs` (what, BedConfig, results dir). Returns the
    (what, error) of each job that failed or never ran. The guest's console goes to
    `out`/uml-<time>-console.log, its status to uml-<time>-status.json, the host's load while
    it ran to uml-<time>-host-load.csv (one set per boot: several boots may share `out`)."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = out / f"uml-{stamp}-console.log"
    saved = out / f"uml-{stamp}-status.json"
    # UML's memory is a file it maps from TMPDIR: a tmpfs (/dev/shm) keeps it in RAM. Not the
    # job directory: the guest mounts its own /dev over the host's.
    shm_root = "/dev/shm" if Path("/dev/shm").is_dir() else None
    tmp = Path(tempfile.mkdtemp(prefix="aqlb-uml-"))
    shm = Path(tempfile.mkdtemp(prefix="aqlb-uml-mem-", dir=shm_root))
    status = tmp / "status.json"
    proc, rc = None, None
    try:
        job = tmp / "job.json"
        doc = job_document(jobs, status)
        job.write_text(json.dumps(doc, indent=1))
        timeout = BOOT_ALLOWANCE_S + sum(
            j["hard_timeout_s"] + bed.probe_allowance_s(cfg)
            for j, (_, cfg, _) in zip(doc["jobs"], jobs, strict=True)
        )
        env = {**os.environ, "TMPDIR": str(shm)}
        say(f"user-mode Linux: {len(jobs)} runs in one boot (at most {timeout:.0f} s); "
            f"console in {log}")  # fmt: skip
        load = _LoadLog(out / f"uml-{stamp}-host-load.csv")
        with log.open("w") as f, load:
            proc = subprocess.Popen(
                command(tmp, job, f"aqlb{os.getpid()}"),
                stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, cwd=tmp,
            )  # fmt: skip
            try:
                rc = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                raise UmlError(f"the guest ran past {timeout:.0f} s; stopped") from None
    finally:
        if proc is not None:
            _kill_session(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            deadline = time.monotonic() + 5
            while _session_pids(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        if status.exists():
            shutil.copy(status, saved)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
    got = json.loads(saved.read_text()) if saved.exists() else {}
    if not got:
        raise UmlError(f"the guest wrote no status (exit {rc}); see {log}")
    done = {j["what"]: j for j in got.get("jobs", [])}
    failed = []
    for what, _, _ in jobs:
        j = done.get(what)
        if j is None:
            failed.append((what, f"never ran (guest exit {rc}; see {log})"))
        elif not j["ok"]:
            failed.append((what, j["error"]))
    return failed


def main(argv: list[str] | None = None) -> int:
    """`python -m validation.linux.uml`: boots the guest with no runs and prints what its
    kernel offers (modules loaded, congestion controls, which qdiscs tc can add)."""
    out = Path(argv[0] if argv else tempfile.mkdtemp(prefix="aqlb-uml-probe-"))
    if os.geteuid() != 0 or missing():
        print(f"validation.linux.uml: needs root and {', '.join(missing()) or 'nothing'}")
        return 2
    failed = run_jobs([], out)
    status = sorted(out.glob("uml-*-status.json"))[-1]
    print(json.dumps(json.loads(status.read_text()), indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
