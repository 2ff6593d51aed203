"""`python3 -m bench` end to end: a quick run of one short case, and its refusals.

The quick run uses this tree's benchmark binary as both sides (`--reference-bench`):
building the reference commit takes minutes and is `make bench`'s, not the test suite's."""

import subprocess
import sys
from pathlib import Path

from bench import build, cli
from bench.sides import base_env

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"


def test_quick_run_prints_the_section_and_writes_nothing():
    exe = build.bench_binary(ROOT, base_env(), "this tree")
    before = PAGE.read_text(encoding="utf-8")
    argv = ["--quick", "--no-write", "--cases", "greedy-reno", "--reference-bench", str(exe)]
    p = subprocess.run(
        [sys.executable, "-m", "bench", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "| 100 greedy flows, 100 Mb/s, FreeBSD Reno" in p.stdout
    assert "| `greedy-reno` |" in p.stdout  # the benchmark's own figures
    assert "10.0 s" in p.stdout  # the quick form's simulated duration
    assert "not written" in p.stderr
    assert PAGE.read_text(encoding="utf-8") == before


def test_unknown_case_is_one_line_and_builds_nothing(capsys):
    assert cli.main(["--cases", "nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("make bench: error: --cases: unknown nope")
    assert "\n" not in err


def test_reference_binary_is_for_core_cases_only(capsys):
    assert cli.main(["--cases", "anchor-run", "--reference-bench", "/bin/true"]) == 1
    assert "core only" in capsys.readouterr().err
