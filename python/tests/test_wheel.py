"""The built wheel installs and runs without a Rust toolchain and without the checkout.

`make test-wheel` builds the wheel (`make wheel`, into dist/) and runs this file with
AQMLAB_WHEEL set to it. The wheel goes into a fresh virtual environment (no system site
packages; its dependencies from the package index), and aqmlab runs from a folder outside
the checkout with the checkout off the path: a scenario through the command line and through
the Python API, and a reproduction (`--scale smoke`), which reads the package's data
(aqmlab/studies/**). Without AQMLAB_WHEEL the test skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
QUICKSTART = CHECKOUT / "examples" / "quickstart.toml"

pytestmark = pytest.mark.skipif(
    not os.environ.get("AQMLAB_WHEEL"),
    reason="no wheel given: `make test-wheel` builds one into dist/ and runs this test "
    "with AQMLAB_WHEEL set to it",
)


def _env(venv: Path) -> dict[str, str]:
    """The environment of a shell in which only `venv` is active (nothing of the checkout's
    virtual environment or path leaks in)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(args: list[str], venv: Path, cwd: Path, timeout: float = 600) -> str:
    p = subprocess.run(
        args, cwd=cwd, env=_env(venv), capture_output=True, text=True, timeout=timeout
    )
    assert p.returncode == 0, f"{' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}"
    return p.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(venv, work folder): the wheel installed in a fresh venv; a folder outside the checkout
    holding a copy of the quick-start scenario."""
    wheel = Path(os.environ["AQMLAB_WHEEL"]).resolve()
    assert wheel.is_file() and wheel.suffix == ".whl", f"AQMLAB_WHEEL={wheel}: not a wheel"
    root = tmp_path_factory.mktemp("wheel")
    assert not root.is_relative_to(CHECKOUT)
    venv = root / "venv"
    # The base interpreter, not the checkout's venv (whose site-packages hold aqmlab).
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
    work = root / "work"
    work.mkdir()
    _run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        venv,
        work,
        timeout=900,
    )
    shutil.copy(QUICKSTART, work / "q.toml")  # shortened by the tests (--set duration_s)
    return venv, work


def test_the_package_comes_from_the_wheel(installed):
    venv, work = installed
    where = _run(
        ["python", "-c", "import aqmlab, aqmlab._core as c; print(aqmlab.__file__, c.__file__)"],
        venv,
        work,
    ).split()
    site = venv / "lib"
    assert all(Path(w).resolve().is_relative_to(site.resolve()) for w in where), where
    assert where[1].endswith(".abi3.so")


def test_run_from_the_command_line(installed):
    venv, work = installed
    out = _run(
        ["aqmlab", "run", "q.toml", "--set", "duration_s=8", "--seed", "7", "--out", "res"],
        venv,
        work,
    )
    assert "results: res/" in out
    summary = json.loads((work / "res" / "summary.json").read_text(encoding="utf-8"))
    assert summary["seed"] == 7 and summary["scenario"]["duration_s"] == 8.0
    assert summary["engine_stats"]["events"] > 0
    assert summary["tables"]["connections"] == 40
    assert (work / "res" / "connections.parquet").is_file()


def test_run_from_python(installed):
    venv, work = installed
    code = (
        "import json, aqmlab\n"
        "r = aqmlab.run('q.toml', seed=3, overrides=['duration_s=6'])\n"
        "print(json.dumps({'seed': r.summary['seed'], 'rows': r.summary['tables'],"
        " 'n': r['connections'].height}))\n"
    )
    got = json.loads(_run(["python", "-c", code], venv, work))
    assert got["seed"] == 3 and got["n"] == 40 == got["rows"]["connections"]


def test_reproduce_reads_the_package_data(installed):
    venv, work = installed
    assert "smoke" in _run(["aqmlab", "reproduce", "--help"], venv, work)
    # Study B at smoke scale: its sweep files, base scenario, RTT distribution
    # (campus_rtt.csv) and calibration all come from aqmlab/studies/B in the wheel.
    out = _run(
        ["aqmlab", "reproduce", "B", "--scale", "smoke", "--out", "b", "--jobs", "2", "-q"],
        venv,
        work,
    )
    assert "0 failed" in out
    assert (work / "b" / "report.html").is_file()
    assert (work / "b" / "sweeps" / "main.toml").is_file()
