"""Shared helpers: a small valid scenario, and the CLI run as a subprocess (real core)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Small enough to stay fast on 2 cores once the engine runs: 5 simulated seconds, 6 flows.
BASE = """\
name = "test"
seed = 7
duration_s = 5.0
warmup_s = 1.0

[topology]
bottleneck_mbps = 10.0
bottleneck_delay_ms = 1.0
access_mbps = 100.0
access_delay_ms = 1.0
access_queue_packets = 10000
left_hosts = 3
right_hosts = 3

[queue]
kind = "droptail"
limit = 50

[tcp]
preset = "freebsd-2.2.8"

[rtt]
kind = "uniform"
min_ms = 10.0
max_ms = 100.0

[[traffic]]
kind = "bulk"
flows = 6
start_jitter_s = 0.5
"""


def write_scenario(directory: Path, text: str = BASE, name: str = "scenario.toml") -> Path:
    p = directory / name
    p.write_text(text, encoding="utf-8")
    return p


def edit(text: str, old: str, new: str) -> str:
    assert old in text, f"test bug: {old!r} not in the base scenario"
    return text.replace(old, new, 1)


def cli(*args: str | os.PathLike, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "AQMLAB_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def table_rows(html: str, caption: str) -> int:
    """Body rows of the report table with that caption (htmldoc's layout)."""
    m = re.search(r"<table><caption>" + re.escape(caption) + r"</caption>(.*?)</table>", html)
    assert m, f"no table {caption!r}"
    return m.group(1).count("<tr>") - 1  # minus the header


def missing_figures(report_dir: Path, *names: str) -> list[str]:
    """The figure names (PNG stems under `report_dir/figures`) a report did not write."""
    have = {p.stem for p in (report_dir / "figures").glob("*.png")}
    return [n for n in names if n not in have]


def looks_complete(path: Path) -> bool:
    """A directory some reader could take for finished results."""
    return path.is_dir() and (path / "summary.json").exists()


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    return write_scenario(tmp_path)
