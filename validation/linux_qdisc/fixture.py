"""The kernel's logs for disciplines no installable package carries (kernel.EXTERNAL: DualPI2),
committed so that the comparison runs where the kernel's source cannot be had (CI reaches
package registries only).

`fixtures/<qdisc>.jsonl.gz` holds one JSON object per case: the case's name, everything its
schedule and the harness's input depend on (`case_key`), and the kernel harness's log lines.
`fixtures/<qdisc>.meta.json` says where they came from: the upstream file (its git blob and the
commit it was read at), the uapi header's blob, the digest of our harness and shim files, the
repository commit they were made at, and the command that makes them again:

    make linux-qdisc-fixtures AQMLAB_DUALPI2_SOURCE=/path/to/linux [AQMLAB_DUALPI2_UPSTREAM=...]
    python -m validation.linux_qdisc.fixture [--upstream torvalds/linux@COMMIT]

The suite replays each case's schedule through our model and compares it with the stored
log; where the source is available it also runs the harness and checks that the stored log
is still what the harness writes (`current`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from validation.linux_qdisc import kernel, schedule

if TYPE_CHECKING:
    from validation.linux_qdisc.compare import Case

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"


class FixtureMismatch(RuntimeError):
    """The fixture has no log for a case, or one made for other parameters."""


def path(qdisc: str) -> Path:
    return FIXTURES / f"{qdisc}.jsonl.gz"


def meta_path(qdisc: str) -> Path:
    return FIXTURES / f"{qdisc}.meta.json"


def case_key(case: Case) -> dict[str, object]:
    """What the kernel's log of a case depends on besides the harness: the schedule's
    parameters and the tc attributes."""
    return {
        "qdisc": case.qdisc,
        "pattern": case.pattern,
        "seed": case.seed,
        "seconds": case.seconds,
        "rate_bps": case.rate_bps,
        "tick_first_ns": case.tick_first_ns,
        "tick_period_ns": case.tick_period_ns,
        "attrs": case.attrs,
    }


def harness_digest(qdisc: str) -> str:
    """sha256 of our side of the harness (its .c, harness.h, attrs.h, the shim)."""
    h = hashlib.sha256()
    for f in kernel.harness_files(qdisc):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def load(qdisc: str) -> list[dict]:
    """The stored cases."""
    with gzip.open(path(qdisc), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def meta(qdisc: str) -> dict:
    return json.loads(meta_path(qdisc).read_text())


def kernel_log(case: Case, stored: list[dict] | None = None) -> list[str]:
    """The stored kernel log of `case`'s schedule and attributes (cases that differ only on
    our side share one); FixtureMismatch when there is none."""
    stored = load(case.qdisc) if stored is None else stored
    key = case_key(case)
    for rec in stored:
        if rec["key"] == key:
            return rec["kernel"]
    raise FixtureMismatch(
        f"{path(case.qdisc).name} has no log for case {case.name} ({key}): regenerate it"
    )


def run_kernel(case: Case, workdir: Path) -> list[str]:
    """The harness's log for `case` now (needs the source: KernelSourceMissing otherwise)."""
    sched = schedule.generate(
        case.pattern,
        seed=case.seed,
        seconds=case.seconds,
        rate_bps=case.rate_bps,
        tick_first_ns=case.tick_first_ns,
        tick_period_ns=case.tick_period_ns,
    )
    return kernel.run(case.qdisc, sched.harness_text(case.attrs), sched.words_bytes(), workdir)


def _git_head() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write(qdisc: str, cases: list[Case], workdir: Path, upstream: str | None) -> Path:
    """Runs the harness on every case and writes the fixture and its metadata (gzip without
    a timestamp, so that the same logs give the same bytes)."""
    root = kernel.source_dir(qdisc)
    src_rel = kernel.SOURCES[qdisc][0]
    _, headers = kernel.EXTERNAL[qdisc]
    buf = io.StringIO()
    done: list[dict] = []
    for case in cases:
        if case_key(case) in done:
            continue
        done.append(case_key(case))
        rec = {"name": case.name, "key": case_key(case), "kernel": run_kernel(case, workdir)}
        buf.write(json.dumps(rec, separators=(",", ":")) + "\n")
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with (
        open(path(qdisc), "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
    ):
        gz.write(buf.getvalue().encode())
    blob = kernel.git_blob((root / src_rel).read_bytes())
    old = meta(qdisc) if meta_path(qdisc).exists() else {}
    if upstream is None and old.get("source", {}).get("git_blob") == blob:
        upstream = old["source"].get("upstream")
    info = {
        "source": {"file": src_rel, "git_blob": blob, "upstream": upstream or "unknown"},
        "headers": {p: kernel.git_blob((root / p).read_bytes()) for p in headers.values()},
        "harness_sha256": harness_digest(qdisc),
        "made_at_commit": _git_head(),
        "cases": sorted({c.name for c in cases}),
        "regenerate": (
            "make linux-qdisc-fixtures AQMLAB_DUALPI2_SOURCE=<kernel tree, Linux >= 6.17> "
            "(or: python -m validation.linux_qdisc.fixture --upstream torvalds/linux@<commit>)"
        ),
    }
    meta_path(qdisc).write_text(json.dumps(info, indent=2) + "\n")
    return path(qdisc)


def main(argv: list[str] | None = None) -> int:
    from validation.suites import linux_qdisc

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", default=os.environ.get("AQMLAB_DUALPI2_UPSTREAM"))
    ap.add_argument("--out", type=Path, default=Path("out/validation/fixtures"))
    args = ap.parse_args(argv)
    for qdisc in kernel.EXTERNAL:
        cases = [c for c, _ in linux_qdisc.CASES if c.qdisc == qdisc]
        try:
            p = write(qdisc, cases, args.out, args.upstream)
        except kernel.KernelSourceMissing as e:
            print(f"fixture {qdisc}: {e}", file=sys.stderr)
            return 2
        print(f"{p}: {len(load(qdisc))} logs for {len(cases)} cases, {p.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
