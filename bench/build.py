"""The binaries and packages the two sides run: this tree's benchmark binary, and the reference
commit's benchmark binary and Python package, built in a git worktree under .bench/.

The reference is built with its own target directory, so that it never invalidates this
tree's build (and the other way round); both are reused by cargo when up to date, so a second
`make bench` builds nothing. Builds print cargo's progress to stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path

from bench.errors import BenchError

BENCH_BUILD = ["cargo", "bench", "-p", "aqmlab", "--bench", "throughput", "--no-run"]


def git(root: Path, *args: str) -> str:
    p = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise BenchError(f"git {' '.join(args)}: {msg[0]}")
    return p.stdout.strip()


def executable(messages: str) -> Path:
    """The benchmark binary's path in cargo's `--message-format=json` output (the last
    `compiler-artifact` of the `throughput` bench that names an executable)."""
    exe = None
    for line in messages.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        target = msg.get("target") or {}
        if (
            msg.get("reason") == "compiler-artifact"
            and target.get("name") == "throughput"
            and "bench" in target.get("kind", [])
            and msg.get("executable")
        ):
            exe = Path(msg["executable"])
    if exe is None:
        raise BenchError("cargo named no executable for the throughput benchmark")
    return exe


def bench_binary(workspace: Path, env: Mapping[str, str], what: str) -> Path:
    """Builds (or finds up to date) the benchmark binary of the workspace at `workspace`."""
    print(f"make bench: building {what}'s benchmark binary", file=sys.stderr, flush=True)
    p = subprocess.run(
        [*BENCH_BUILD, "--message-format=json-render-diagnostics"],
        cwd=workspace,
        env=dict(env),
        stdout=subprocess.PIPE,
        text=True,
    )
    if p.returncode != 0:
        raise BenchError(f"cargo could not build {what}'s benchmark (exit status {p.returncode})")
    return executable(p.stdout)


def reference_tree(root: Path, commit: str) -> tuple[Path, str]:
    """The reference commit checked out in .bench/ref-<hash> (added as a git worktree, or the
    one already there) and its full hash."""
    try:
        full = git(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    except BenchError:
        raise BenchError(
            f"--reference {commit}: no such commit here (a shallow clone? git fetch --unshallow)"
        ) from None
    tree = root / ".bench" / f"ref-{full[:7]}"
    if (tree / ".git").exists():
        if git(tree, "rev-parse", "HEAD") != full:
            raise BenchError(f"{tree} is not at {full[:7]}: remove it (rm -rf {tree})")
        return tree, full
    git(root, "worktree", "prune")  # forget a worktree whose folder was removed
    tree.parent.mkdir(exist_ok=True)
    git(root, "worktree", "add", "--detach", "--quiet", str(tree), full)
    return tree, full


def reference_env(tree: Path) -> dict[str, str]:
    """The environment of the reference's builds: its own target directory."""
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(tree / "target")
    return env


def reference_package(tree: Path, maturin: Path) -> Path:
    """The reference's Python package (its extension built in release, as `make bootstrap`
    builds this tree's), unpacked into a folder for PYTHONPATH; returns that folder.

    A wheel rather than a second virtual environment: the reference then runs with this
    tree's .venv and its dependencies, and only `aqmlab` itself differs."""
    wheels = tree.parent / f"{tree.name}-wheel"
    site = tree.parent / f"{tree.name}-python"
    shutil.rmtree(wheels, ignore_errors=True)
    print("make bench: building the reference's Python package", file=sys.stderr, flush=True)
    p = subprocess.run(
        [str(maturin), "build", "--release", "--quiet", "--out", str(wheels)],
        cwd=tree / "python",
        env=reference_env(tree),
    )
    found = sorted(wheels.glob("aqmlab-*.whl"))
    if p.returncode != 0 or len(found) != 1:
        raise BenchError(f"maturin could not build the reference's wheel (in {tree / 'python'})")
    shutil.rmtree(site, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as z:
        z.extractall(site)
    return site
