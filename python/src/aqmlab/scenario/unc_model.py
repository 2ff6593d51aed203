"""The UNC HTTP model's distributions for a `kind = "unc"` traffic entry.

UNC's DiRT group publishes the empirical distributions behind Smith, Hernández-Campos, Jeffay
and Ott, "What TCP/IP protocol headers can tell us about the web" (SIGMETRICS 2001; the
1999-2000 traces Le et al. 2003 used) and Hernández-Campos, Jeffay and Smith (MASCOTS 2003;
2001 and 2003 traces) at http://www.cs.unc.edu/Research/dirt/proj/http-model/, as CDF files:
`value  Pr{X <= value}` per line after a `#` header (optionally gzipped). Their license allows
local use but not redistribution, so aqmlab ships none of them: a user who has them points an
entry at them, and every element without a file falls back to a documented substitute
(docs/workload.md).

    distributions = "unc-http-model/1999"                  # a directory: files found by name
    distributions = { dir = "...", think_time = "x.cdf" }  # or per element

In a directory the files are recognised by UNC's names: `*top_req_sizes*`,
`*emb_req_sizes*`, `*top_rsp_sizes*`, `*emb_rsp_sizes*`, `*obj_page*` (objects per page, the
top-level one included), `*think_times*` (milliseconds, as UNC's files give them); files for
`persistent_requests` and `consecutive_pages` are named per element in the table form. Without
a `distributions` key, the environment variable `AQMLAB_UNC_HTTP_MODEL` (a directory) is used
when set. The loaded points are stored in the resolved scenario (`summary.json`), thinned to a
few thousand points without moving the CDF by more than 1/4000 or the value by more than 5 %
between kept points.
"""

from __future__ import annotations

import gzip
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aqmlab.errors import ScenarioError, os_problem

__all__ = ["ELEMENTS", "ENV", "load_distributions", "read_unc_cdf", "thin"]

ENV = "AQMLAB_UNC_HTTP_MODEL"
# element -> (UNC file-name pattern or None, unit factor to the core's unit)
ELEMENTS: dict[str, tuple[str | None, float]] = {
    "top_request": ("top_req_sizes", 1.0),
    "embedded_request": ("emb_req_sizes", 1.0),
    "top_response": ("top_rsp_sizes", 1.0),
    "embedded_response": ("emb_rsp_sizes", 1.0),
    "objects_per_page": ("obj_page", 1.0),
    "think_time": ("think_times", 1e-3),  # UNC's think times are in milliseconds
    "persistent_requests": (None, 1.0),
    "consecutive_pages": (None, 1.0),
}
# The core's key for each element (think times in seconds).
CORE_KEY = {k: ("think_time_s" if k == "think_time" else k) for k in ELEMENTS}
MAX_CDF_STEP = 1 / 4000
MAX_VALUE_RATIO = 1.05


def read_unc_cdf(path: Path, where: str) -> list[tuple[float, float]]:
    """(value, cdf) rows of a UNC CDF file (plain or .gz); `#` lines and a count line are
    skipped."""
    try:
        raw = path.read_bytes()
        # Latin-1 never fails: the header comments of UNC's files are not all UTF-8.
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("latin-1")
    except FileNotFoundError:
        raise ScenarioError(f"{where}: file not found (looked for {path})") from None
    except OSError as e:  # gzip.BadGzipFile is one: no strerror, its message names no data
        problem = os_problem(e, path) if e.strerror else " ".join(str(e).split())
        raise ScenarioError(f"{where}: cannot read {path} ({problem})") from None
    except EOFError:
        raise ScenarioError(f"{where}: cannot read {path} (truncated gzip data)") from None
    points: list[tuple[float, float]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        cells = line.split("#", 1)[0].split()
        if not cells:
            continue
        if len(cells) == 1 and not points:
            continue  # UNC's files give the number of rows first
        try:
            x, c = float(cells[0]), float(cells[1])
            if len(cells) != 2 or not (math.isfinite(x) and math.isfinite(c)):
                raise ValueError
        except (ValueError, IndexError):
            raise ScenarioError(
                f"{where}: line {lineno} of {path.name}: expected two numbers (value, cdf)"
            ) from None
        points.append((x, c))
    if len(points) < 2:
        raise ScenarioError(f"{where}: {path.name}: expected at least 2 (value, cdf) rows")
    return points


def thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Keeps a point when the CDF has risen by `MAX_CDF_STEP` or the value by `MAX_VALUE_RATIO`
    since the last kept one (and the first and last points): the sampler interpolates
    linearly between points, so the CDF moves by at most one step and the heavy tail keeps
    its values (its mean) within a few per cent."""
    if len(points) <= 2:
        return list(points)
    out = [points[0]]
    for i in range(1, len(points) - 1):
        x, c = points[i]
        lx, lc = out[-1]
        nx = points[i + 1][0]
        if c - lc >= MAX_CDF_STEP or (lx > 0 and nx > lx * MAX_VALUE_RATIO) or lx <= 0 < x:
            out.append((x, c))
    out.append(points[-1])
    return out


def _find(directory: Path, pattern: str, where: str) -> Path | None:
    hits = sorted(p for p in directory.iterdir() if pattern in p.name and p.is_file())
    if len(hits) > 1:
        names = ", ".join(p.name for p in hits)
        raise ScenarioError(f"{where}: several files match {pattern!r} in {directory}: {names}")
    return hits[0] if hits else None


def load_distributions(spec: Any, base_dir: Path, where: str) -> dict[str, Any]:
    """The core's `distributions` table for a `distributions` value (a directory, or a table
    of `dir` and per-element files), with a `source` description."""
    if isinstance(spec, str):
        spec = {"dir": spec}
    if not isinstance(spec, Mapping):
        raise ScenarioError(
            f"{where} = {spec!r}: expected a directory of UNC CDF files or a table of files"
        )
    unknown = sorted(set(spec) - {"dir", *ELEMENTS})
    if unknown:
        raise ScenarioError(
            f"{where}.{unknown[0]}: unknown key, allowed: dir, {', '.join(ELEMENTS)}"
        )
    directory = None
    if "dir" in spec:
        directory = Path(str(spec["dir"]))
        if not directory.is_absolute():
            directory = base_dir / directory
        if not directory.is_dir():
            raise ScenarioError(f"{where}.dir = {spec['dir']!r}: not a directory ({directory})")
    out: dict[str, Any] = {}
    found = []
    for element, (pattern, factor) in ELEMENTS.items():
        path = None
        if element in spec:
            path = Path(str(spec[element]))
            if not path.is_absolute():
                path = (directory or base_dir) / path
        elif directory is not None and pattern is not None:
            path = _find(directory, pattern, where)
        if path is None:
            continue
        pts = read_unc_cdf(path, f"{where}.{element}")
        pts = [(x * factor, c) for x, c in pts]
        out[CORE_KEY[element]] = [list(p) for p in thin(pts)]
        found.append(f"{element}={path.name}")
    if not found:
        raise ScenarioError(f"{where}: no UNC distribution file found in {spec!r}")
    out["source"] = f"{directory or base_dir}: " + ", ".join(found)
    return out


def resolve_entries(doc: dict[str, Any], base_dir: Path) -> None:
    """Replaces each `unc` entry's `distributions` by the loaded points (or loads the
    directory named by `AQMLAB_UNC_HTTP_MODEL` when the entry has none). Entries already
    resolved (points present) are left as they are."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list):
        return
    env = os.environ.get(ENV)
    for i, entry in enumerate(traffic):
        if not isinstance(entry, dict) or entry.get("kind") != "unc":
            continue
        spec = entry.get("distributions")
        if spec is None and env:
            spec = {"dir": env}
        if spec is None or (isinstance(spec, Mapping) and _is_resolved(spec)):
            continue
        traffic[i] = {
            **entry,
            "distributions": load_distributions(spec, base_dir, f"traffic[{i}].distributions"),
        }


def _is_resolved(spec: Mapping[str, Any]) -> bool:
    return any(isinstance(v, list) for v in spec.values()) or set(spec) == {"source"}
