"""A `replay` source's connections file (`[[traffic]] kind = "replay", file = "..."`,
docs/scenario.md): a CSV with a header naming its columns, one connection per row.

Required columns: ``start_s`` (non-decreasing), ``request_bytes``, ``response_bytes``;
optional: ``server_delay_s``, ``rtt_ms``, ``client_rtt_ms``. The columns become the entry's
``connections`` table (the core checks the values and names the bad row); ``source`` records
the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aqmlab.errors import ScenarioError, os_problem, show_value
from aqmlab.scenario.files import take_file

REQUIRED = ("start_s", "request_bytes", "response_bytes")
OPTIONAL = ("server_delay_s", "rtt_ms", "client_rtt_ms")
INTEGER = frozenset({"request_bytes", "response_bytes"})
# 10 million rows (the core's bound) are about 400 MB of CSV: larger files are refused
# before they are read, so a wrong path cannot fill the memory.
MAX_FILE_BYTES = 1 << 30


def resolve_entries(doc: dict[str, Any], base_dir: Path) -> None:
    """Reads each replay entry's `file` into its `connections` (paths relative to
    `base_dir`)."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list):
        return
    for i, entry in enumerate(traffic):
        if not isinstance(entry, dict) or entry.get("kind") != "replay" or "file" not in entry:
            continue
        entry = dict(entry)
        where = f"traffic[{i}].file"
        file, p = take_file(
            entry,
            where,
            "a CSV file",
            "connections",
            "give either file or connections, not both",
            base_dir,
        )
        entry["connections"] = read_connections(p, f"{where} = {show_value(file)}")
        entry.setdefault("source", file)
        traffic[i] = entry


def read_connections(path: Path, where: str) -> dict[str, list]:
    """The file's columns as lists; a missing, oversized or malformed file is a one-line
    `ScenarioError` starting with `where`."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ScenarioError(f"{where}: file not found (looked for {path})") from None
    except OSError as e:
        raise ScenarioError(f"{where}: cannot read ({os_problem(e, path)})") from None
    if size > MAX_FILE_BYTES:
        raise ScenarioError(f"{where}: {size} bytes, expected a file of at most 1 GiB")
    # Here, not at the top: every scenario load imports this module, few have replay files.
    import polars as pl

    try:
        df = pl.read_csv(path, comment_prefix="#", infer_schema_length=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ScenarioError(f"{where}: not a CSV file with a header ({first[:120]})") from None
    names = [c.strip() for c in df.columns]
    missing = [c for c in REQUIRED if c not in names]
    unknown = [c for c in names if c not in REQUIRED + OPTIONAL]
    if missing or unknown:
        problem = f"missing column {missing[0]}" if missing else f"unknown column {unknown[0]!r}"
        raise ScenarioError(
            f"{where}: {problem}; expected a header with {', '.join(REQUIRED)} "
            f"and optionally {', '.join(OPTIONAL)}"
        )
    df = df.rename(dict(zip(df.columns, names, strict=True)))
    out: dict[str, list] = {}
    for name in names:
        dtype = pl.Int64 if name in INTEGER else pl.Float64
        col = df[name].str.strip_chars().cast(dtype, strict=False)
        bad = (col.is_null() & df[name].is_not_null()) | df[name].is_null()
        if bad.any():
            row = int(bad.arg_max())
            kind = "an integer" if name in INTEGER else "a number"
            raise ScenarioError(f"{where}: row {row + 1}: {name} is not {kind}")
        if name in INTEGER and (col < 0).any():
            row = int((col < 0).arg_max())
            raise ScenarioError(f"{where}: row {row + 1}: {name} is negative")
        out[name] = col.to_list()
    return out
