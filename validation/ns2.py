"""Finding and running ns-2.35 (the reference implementation).

The binary is `ns` on the PATH, or the one `AQMLAB_NS2` names. `make validate` and `make test`
install Debian's `ns2` package when it is missing and they can (root with apt-get); when they
cannot, the suites say so in one line and stop (`Ns2Missing`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent / "ns2"


class Ns2Missing(RuntimeError):
    """ns-2 is not installed and could not be found."""


class Ns2Failed(RuntimeError):
    """An ns-2 script exited with an error."""


def binary() -> str:
    """Path of the ns-2 binary, or `Ns2Missing` with what to do."""
    name = os.environ.get("AQMLAB_NS2", "ns")
    path = shutil.which(name)
    if path is None:
        raise Ns2Missing(
            f"ns-2 not found (looked for {name!r} on the PATH): install Debian's ns2 package "
            "(`apt-get install ns2`, which `make validate` does when run as root), or set "
            "AQMLAB_NS2 to the binary"
        )
    return path


def run(script: str, params: str, outdir: Path, timeout_s: float = 600.0) -> Path:
    """Runs `validation/ns2/<script>` with a parameter file holding `params` (Tcl), writing
    into `outdir`; returns `outdir`."""
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    params_file = outdir / "params.tcl"
    params_file.write_text(params)
    cmd = [binary(), str(SCRIPTS / script), str(params_file), str(outdir)]
    try:
        proc = subprocess.run(
            cmd, cwd=outdir, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as e:
        raise Ns2Failed(f"ns {script} ran past {timeout_s:.0f} s ({outdir})") from e
    (outdir / "ns.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise Ns2Failed(f"ns {script} exited with {proc.returncode}: {' | '.join(tail)}")
    return outdir


def stamped(params: str, *scripts: str) -> str:
    """`params` headed by a comment with the digest of the scripts it is for (each one and
    `common.tcl`, which they all source): a changed script makes the parameter file differ,
    so a resumed suite (`sims.unchanged`) runs it again."""
    h = hashlib.sha256()
    for name in (*scripts, "common.tcl"):
        h.update((SCRIPTS / name).read_bytes())
    return f"# {' '.join(scripts)} {h.hexdigest()[:16]}\n{params}"


def tcl_array(name: str, values: dict[str, object]) -> str:
    """`array set NAME {...}` for a parameter file (lists become Tcl lists)."""
    parts = []
    for k, v in values.items():
        if isinstance(v, list | tuple):
            v = "{" + " ".join(str(x) for x in v) + "}"
        elif isinstance(v, bool):
            v = int(v)
        parts.append(f"    {k} {v}")
    return f"array set {name} {{\n" + "\n".join(parts) + "\n}\n"
