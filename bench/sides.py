"""The two sides compared, and the environment each one's children get."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Side:
    key: str  # "ref" or "new"
    name: str  # "reference" or "this tree", as the report says
    commit: str  # short hash, and a note when the tree has uncommitted changes
    bench: Path  # the benchmark binary
    # The folder put on PYTHONPATH for the whole command (the reference's package, ahead of
    # this tree's editable install); None: .venv's own `aqmlab`.
    package: Path | None = None


def base_env() -> dict[str, str]:
    """The caller's environment without what would change what a child does: the benchmark's
    own variables (a stray AQMLAB_BENCH_SECONDS would shorten every case) and PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AQMLAB_BENCH_")}
    env.pop("PYTHONPATH", None)
    # A panic's message then ends stderr, where the error report reads it; no backtrace.
    env["RUST_BACKTRACE"] = "0"
    return env


def bench_env(extra: Mapping[str, str]) -> dict[str, str]:
    return {**base_env(), **extra}


def python_env(side: Side) -> dict[str, str]:
    env = base_env()
    if side.package is not None:
        env["PYTHONPATH"] = os.fspath(side.package)
    return env
