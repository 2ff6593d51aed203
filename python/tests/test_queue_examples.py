"""Every queue manager's example scenario runs from the CLI, and the parameters in force
(defaults and automatic settings included) are reported in summary.json."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from conftest import cli

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "queues").glob("*.toml"))


def test_there_is_an_example_per_queue_manager():
    kinds = {tomllib.loads(p.read_text())["queue"]["kind"] for p in EXAMPLES}
    assert kinds == {
        "droptail",
        "red",
        "gred_i",
        "ared",
        "pi",
        "rem",
        "codel",
        "pie",
        "fq_codel",
        "dualpi2",
        "cake",
        "fq_pie",
        "red_linux",
        "pie_linux",
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_reports_its_parameters(tmp_path: Path, example: Path):
    kind = tomllib.loads(example.read_text())["queue"]["kind"]
    out = tmp_path / "res"
    proc = cli("run", example, "--out", out, "--set", "duration_s=8", "--set", "warmup_s=2")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())["summary"]
    for direction in ("queue_forward", "queue_reverse"):
        q = summary[direction]
        assert q["kind"] == kind
        assert isinstance(q["params"], dict) and q["params"]
    rev = summary["reverse"]
    assert rev["tx_packets"] > 0 and 0.5 < rev["utilization"] <= 1.0
    assert summary["connections_started"] > 0
