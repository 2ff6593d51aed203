"""A run's results as they are read back: `summary.json` and one table per Parquet file (or
the tables of a run kept in memory), loaded on first use as polars DataFrames."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.errors import ScenarioError, os_problem

if TYPE_CHECKING:  # imported where a table is read: a run writing its results needs neither
    import pyarrow as pa

__all__ = ["SUMMARY_FILE", "Results", "read_summary"]

SUMMARY_FILE = "summary.json"


def read_summary(directory: Path) -> dict[str, Any]:
    """`directory/summary.json`; a missing or unreadable one is a one-line `ScenarioError`
    naming the file (and the line where it stops being JSON, never its content)."""
    path = directory / SUMMARY_FILE
    if not directory.is_dir():
        problem = "no such directory" if not directory.exists() else "not a directory"
        raise ScenarioError(f"{directory}: not an aqmlab results directory ({problem})")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{directory}: not an aqmlab results directory (no {SUMMARY_FILE})"
        raise ScenarioError(msg) from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read ({os_problem(e, path)})") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not UTF-8 text (damaged)") from None
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: line {e.lineno}: not valid JSON (damaged)") from None
    if not isinstance(summary, dict):
        raise ScenarioError(f"{path}: expected a JSON object (damaged)")
    return summary


class Results:
    """The outcome of a run: `summary` (dict) and one polars DataFrame per table, as
    attributes (`results.connections`) or items (`results["queue"]`), loaded on first use."""

    def __init__(
        self,
        summary: dict[str, Any],
        directory: Path | None = None,
        memory: Mapping[str, pa.Table] | None = None,
        captures: Mapping[str, bytes] | None = None,
        file_columns: Mapping[str, list[tuple[str, str]]] | None = None,
    ) -> None:
        self.summary = summary
        self.directory = directory
        # The columns (name, kind) of each Parquet file, as the run that wrote them knows
        # them; None when the results were read back (a study's catalog uses them to skip
        # reading every file's schema: `study.catalog`).
        self.file_columns = dict(file_columns) if file_columns is not None else None
        self._memory = dict(memory or {})
        self._captures = dict(captures or {})
        self._frames: dict[str, Any] = {}

    @classmethod
    def open(cls, directory: str | os.PathLike) -> Results:
        """Loads the results of an earlier run."""
        d = Path(directory)
        return cls(read_summary(d), directory=d)

    @property
    def tables(self) -> list[str]:
        if self.directory is not None:
            return sorted(p.stem for p in self.directory.glob("*.parquet"))
        return sorted(self._memory)

    def capture(self, name: str) -> bytes:
        """The pcap file `name` (e.g. "capture-forward.pcap") of a traced run."""
        if self.directory is not None:
            p = self.directory / name
            if not p.is_file():
                raise KeyError(f"no capture {name!r}")
            return p.read_bytes()
        if name not in self._captures:
            raise KeyError(f"no capture {name!r}; captures: {', '.join(self._captures) or 'none'}")
        return self._captures[name]

    def path(self, name: str) -> Path:
        if self.directory is None:
            raise ValueError("these results are in memory (run without out=...)")
        return self.directory / f"{name}.parquet"

    def arrow(self, name: str) -> pa.Table:
        if self.directory is not None:
            import pyarrow.parquet as pq

            p = self.path(name)
            if not p.is_file():
                raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables) or 'none'}")
            return pq.read_table(p)
        if name not in self._memory:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables) or 'none'}")
        return self._memory[name]

    def __getitem__(self, name: str):
        import polars as pl

        if name not in self._frames:
            if self.directory is not None:
                if not self.path(name).is_file():
                    raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables) or 'none'}")
                self._frames[name] = pl.read_parquet(self.path(name))
            else:
                self._frames[name] = pl.from_arrow(self.arrow(name))
        return self._frames[name]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e)) from None

    def __repr__(self) -> str:
        where = str(self.directory) if self.directory is not None else "memory"
        return f"Results({where}, tables={self.tables})"
