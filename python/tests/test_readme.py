"""The README's commands run as written, from a copy of the checkout's tracked example files.

Every fenced block of README.md is taken in order: `sh` lines run (an `.venv/bin/aqmlab`
command through this interpreter's `aqmlab`; a `make` target is checked to exist, since
`make test` itself runs this test), `toml` blocks are checked with `aqmlab validate`, and
`python` blocks run in one namespace, after the commands above them (they read what those
wrote). Long commands run in a short form (`SHORT_FORMS`); a short form that no longer matches
a README command fails the test, so the list cannot go stale. Every file the README links to
must exist.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# README command (as written, after `.venv/bin/aqmlab`) -> the arguments run instead, and why.
SHORT_FORMS = {
    # The reproduction at `quick` scale takes minutes; `smoke` runs the same code on a
    # thinned design (what the study tests run).
    "reproduce C --scale quick": "reproduce C --scale smoke",
}


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of each fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def commands(body: str) -> list[str]:
    """The command lines of an `sh` block, without their trailing comments."""
    out = []
    for line in body.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _outputs_sentence() -> str:
    """The README's list of a run's tables ("one Parquet table per record kind: ...")."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    m = re.search(r"one Parquet table per record kind: (.*?)\.", text)
    assert m, "README: the sentence listing a run's tables is gone"
    return m.group(1)


def test_readme_is_a_short_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines: keep it a front door"


def test_readme_links_exist():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert targets
    missing = [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def _tracked(path: str) -> list[str]:
    """Files under `path` that git tracks (all of them when this is not a git checkout):
    what a fresh clone has."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", path],
            capture_output=True,
            check=True,
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
    if files:
        return files
    return [str(p.relative_to(ROOT)) for p in (ROOT / path).rglob("*") if p.is_file()]


def _makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.M))


def _aqmlab(args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *shlex.split(args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_readme_commands_run_as_written(tmp_path, monkeypatch):
    for name in _tracked("examples"):
        dest = tmp_path / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, dest)
    monkeypatch.chdir(tmp_path)
    targets = _makefile_targets()
    namespace: dict = {"__name__": "readme"}
    used_short_forms: set[str] = set()
    ran = {"sh": 0, "toml": 0, "python": 0}
    for n, (lang, body) in enumerate(blocks(README.read_text(encoding="utf-8"))):
        if lang == "sh":
            for line in commands(body):
                if line.startswith("make "):
                    target = line.split()[1]
                    assert target in targets, f"README: `{line}`: no such Makefile target"
                    continue
                assert line.startswith(".venv/bin/aqmlab "), f"README: unexpected `{line}`"
                args = line.removeprefix(".venv/bin/aqmlab ")
                if args in SHORT_FORMS:
                    used_short_forms.add(args)
                    args = SHORT_FORMS[args]
                res = _aqmlab(args, tmp_path)
                assert res.returncode == 0, f"README: `{line}` failed:\n{res.stderr[-2000:]}"
                ran["sh"] += 1
        elif lang == "toml":
            scenario = tmp_path / f"readme_block_{n}.toml"
            scenario.write_text(body, encoding="utf-8")
            res = _aqmlab(f"validate {scenario}", tmp_path)
            assert res.returncode == 0, f"README's TOML block {n}: {res.stderr.strip()}"
            ran["toml"] += 1
        elif lang == "python":
            exec(compile(body, f"README.md block {n}", "exec"), namespace)
            ran["python"] += 1
    # The tables the README says a run writes are the tables its runs wrote.
    named = set(re.findall(r"`(\w+)`", _outputs_sentence()))
    written = {f.stem for f in (tmp_path / "results").glob("*/*.parquet")}
    assert written and named == written, (
        f"README names {sorted(named)}; runs wrote {sorted(written)}"
    )
    stale = set(SHORT_FORMS) - used_short_forms
    assert not stale, f"short forms of commands no longer in the README: {sorted(stale)}"
    assert all(ran.values()), f"README blocks run: {ran}"
