"""A scenario table's `file` key: a path read by the Python layer (an empirical law's CDF, a
replay source's connections), relative to the scenario file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aqmlab.errors import ScenarioError, show_value


def take_file(
    table: dict[str, Any], field: str, expected: str, other: str, both: str, base_dir: Path
) -> tuple[str, Path]:
    """Removes `file` from `table` and returns it with its path. One-line errors start with
    `field` (the key's path): a value that is not a path names `expected`, and a table that
    also gives `other` (what the file stands for) gets `both`."""
    file = table.pop("file")
    if not isinstance(file, str) or not file:
        raise ScenarioError(f"{field} = {show_value(file)}: expected a path to {expected}")
    if other in table:
        raise ScenarioError(f"{field}: {both}")
    p = Path(file)
    return file, p if p.is_absolute() else base_dir / p
