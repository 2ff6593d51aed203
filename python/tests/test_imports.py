"""What a run imports. `aqmlab run` and a sweep's worker need the core's extension and the
standard library only: polars, pyarrow, numpy, DuckDB, matplotlib and tqdm cost 0.25 s of
start-up and about 100 MB of resident memory together (pyarrow.parquet alone about 100 MB),
which is more than the whole ns-2 anchor run may take (docs/performance.md). They are
imported where a table is read, a catalog written or a figure drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("polars", "pyarrow", "numpy", "duckdb", "matplotlib", "tqdm", "pandas", "dask")

_LOADED = f"""
import json, sys
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
print(json.dumps(heavy))
"""


def _heavy_after(code: str, cwd: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", code + _LOADED],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_aqmlab_run_imports_no_heavy_library(tmp_path: Path):
    (tmp_path / "s.toml").write_text(
        'duration_s = 3.0\nwarmup_s = 1.0\n[[traffic]]\nkind = "packmime"\nrate = 10.0\n'
    )
    code = (
        "from aqmlab.cli import main\n"
        "assert main(['run', 's.toml', '--out', 'r', '--seed', '2']) == 0\n"
        "assert main(['run', 's.toml', '--out', 'r2', '--set', 'trace.tcp={}', '-q']) == 0\n"
    )
    assert _heavy_after(code, tmp_path) == []
    assert (tmp_path / "r" / "summary.json").is_file()


def test_a_sweep_worker_imports_no_heavy_library(tmp_path: Path):
    """What a local worker process loads (its task lives in `aqmlab.study.execute`) and what
    one run costs it on top."""
    code = (
        "from aqmlab.study import execute\n"
        "r = execute.execute_run('0' * 12, {'duration_s': 2.0}, 'run', lambda m: None)\n"
        "assert r['ok'], r\n"
    )
    assert _heavy_after(code, tmp_path) == []


def test_import_aqmlab_stays_light(tmp_path: Path):
    """`import aqmlab` (the CLI's first import) loads none of them; `aqmlab.Study` and
    `aqmlab.study_plots` still work, importing theirs on first use."""
    assert _heavy_after("import aqmlab\nimport aqmlab.study\n", tmp_path) == []
    loaded = _heavy_after("import aqmlab\naqmlab.Study\n", tmp_path)
    assert "polars" in loaded
