"""Flent from the Python registry in a virtual environment of its own, made once and kept in
`~/.cache/aqmlab-test-flent/flent-<version>-py<major.minor>` (or `$AQMLAB_FLENT_CACHE`), so
that reruns start at once. `flent_command()` gives the command that runs Flent, or `None` with the
reason when it cannot be had (no registry, no venv module): the tests that need it skip.

Set `AQMLAB_FLENT=/path/to/flent` to use a Flent installed some other way.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLENT_VERSION = "2.3.0"
PACKAGES = (f"flent=={FLENT_VERSION}", "matplotlib")


def cache_dir() -> Path:
    root = os.environ.get("AQMLAB_FLENT_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "aqmlab-test-flent"
    return base / f"flent-{FLENT_VERSION}-py{sys.version_info.major}.{sys.version_info.minor}"


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@functools.cache
def flent_command() -> tuple[list[str] | None, str]:
    """(the command that runs Flent, "") or (None, why not). Installs on the first call.

    Flent runs as `<venv>/bin/python -m flent`: unlike the venv's `bin/flent` script, whose
    first line names the interpreter by absolute path, that survives the venv being built
    under a temporary name and renamed into the cache (so a broken install is never cached).
    """
    given = os.environ.get("AQMLAB_FLENT")
    if given:
        found = shutil.which(given)
        return ([found], "") if found else (None, f"AQMLAB_FLENT={given} not found")
    venv = cache_dir()
    command = [str(venv / "bin" / "python"), "-m", "flent"]
    if (venv / "bin" / "python").is_file() and _works(command):
        return command, ""
    venv.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".install-", dir=venv.parent))
    try:
        made = _run([sys.executable, "-m", "venv", str(work)], timeout=300)
        if made.returncode != 0:
            return None, f"python -m venv failed: {_last_line(made.stderr)}"
        pip = [str(work / "bin" / "python"), "-m", "pip", "install", "-q"]
        try:
            # Fail fast without a registry: 15 s per connection, one retry.
            quick = ["--disable-pip-version-check", "--timeout", "15", "--retries", "1"]
            got = _run([*pip, *quick, *PACKAGES], timeout=600)
        except subprocess.TimeoutExpired:
            return None, "pip install flent timed out (registry unreachable?)"
        if got.returncode != 0:
            return None, f"pip install {' '.join(PACKAGES)} failed: {_last_line(got.stderr)}"
        if venv.exists() and not _works(command):
            shutil.rmtree(venv, ignore_errors=True)  # a broken one, not another session's
        with contextlib.suppress(OSError):  # another session put its own there first
            work.rename(venv)
        if _works(command):
            return command, ""
        return None, "flent installed but `python -m flent --version` fails"
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def _works(command: list[str]) -> bool:
    try:
        return _run([*command, "--version"], timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_flent(
    command: list[str], *args: str | os.PathLike, cwd: Path
) -> subprocess.CompletedProcess:
    """Flent, headless (matplotlib's Agg backend), without the user's rc file or the
    aqmlab source path (Flent's interpreter is not ours)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(MPLBACKEND="Agg", HOME=str(cwd), MPLCONFIGDIR=str(cwd / ".mpl"))
    return subprocess.run(
        [*command, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][-300:] if lines else "(no message)"
