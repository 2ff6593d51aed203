"""A study directory from Python (docs/sweeps.md, "Python API").

    from aqmlab.study import Study
    study = Study.open("results/compare")
    study.axes                      # ["queue", "load", "rep"]
    study.runs()                    # polars: one row per finished run, labels and metrics
    study.table("exchanges")        # every finished run's exchanges, with run_id and labels
    study.scenario(run_id)          # the resolved scenario of a run
    study.sql("SELECT queue, avg(utilization) FROM runs GROUP BY queue")

Everything is read from the catalog and the run directories; the catalog file is opened
read-only and closed at once, so a study can be read while its sweep is still running.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from aqmlab import scenario as sc
from aqmlab.runs import runner
from aqmlab.study import catalog, sweep

__all__ = ["Study"]

STATUSES = ("done", "failed", "pending")


class Study:
    """A study directory written by `aqmlab sweep`."""

    def __init__(self, directory: Path, runs: pl.DataFrame, axes: list[str], name: str) -> None:
        self.directory = directory
        self.name = name
        self._runs = runs
        self._axes = axes

    @classmethod
    def open(cls, directory: str | os.PathLike) -> Study:
        import duckdb

        d = Path(directory)
        path = d / catalog.CATALOG_FILE
        if not d.exists():
            # What Python raises for a path that is not there (and still one line).
            raise FileNotFoundError(
                errno.ENOENT, "not an aqmlab study directory (no such directory)", str(d)
            )
        if not path.is_file() and (d / sweep.PLAN_FILE).is_file():
            raise sc.ScenarioError(
                f"{d}: this study's sweep has not written its catalog yet (a new study's first "
                "comes after its first runs, or at its end); open it then"
            )
        if not path.is_file():
            raise sc.ScenarioError(
                f"{d}: not an aqmlab study directory (no {catalog.CATALOG_FILE}; "
                "run `aqmlab sweep SWEEP.toml --out DIR` first)"
            )
        con = duckdb.connect(str(path), read_only=True)
        try:
            runs = con.sql("SELECT * FROM runs").pl()
            axes = [r[0] for r in con.execute("SELECT name FROM axes ORDER BY position").fetchall()]
            name = con.execute("SELECT name FROM study").fetchone()[0]
        finally:
            con.close()
        return cls(d, runs, axes, name)

    def __repr__(self) -> str:
        counts = {s: self._runs.filter(pl.col("status") == s).height for s in STATUSES}
        shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        return f"Study({self.name!r}, {self.directory}, axes={self.axes}, runs: {shown or 'none'})"

    @property
    def axes(self) -> list[str]:
        """Axis names in file order, then "rep"."""
        return [*self._axes, "rep"]

    def runs(self, status: str | None = "done") -> pl.DataFrame:
        """One row per run with that `status` (done, failed, pending; None: all): `run_id,
        status, rep, seed`, the axis labels, `wall_time_s`, `error`, versions and the metrics
        (see aqmlab.study.catalog). The resolved scenarios are in `scenario(run_id)`."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"status = {status!r}: expected one of {', '.join(STATUSES)} or None")
        df = self._runs.drop("scenario")
        return df if status is None else df.filter(pl.col("status") == status)

    def run_dir(self, run_id: str) -> Path:
        return catalog.run_dir(self.directory, run_id)

    def results(self, run_id: str) -> runner.Results:
        """One run's `Results` (its summary and tables)."""
        return runner.Results.open(self.run_dir(run_id))

    def scenario(self, run_id: str) -> dict[str, Any]:
        """The resolved scenario a run used (or would use)."""
        row = self._runs.filter(pl.col("run_id") == run_id)
        if row.height == 0:
            raise KeyError(f"no run {run_id!r} in {self.directory}")
        return json.loads(row["scenario"][0])

    def tables(self) -> list[str]:
        """Names of the record tables the finished runs have."""
        names: set[str] = set()
        for rid in self.runs()["run_id"]:
            names.update(p.stem for p in self.run_dir(rid).glob("*.parquet"))
        return sorted(names)

    def table(self, name: str, columns: list[str] | None = None) -> pl.DataFrame:
        """Record table `name` of every finished run (plan order), with `run_id`, the axis
        labels and `rep` first. `columns` selects the table's own columns. Every row is
        returned, the warm-up's too: the report's figures keep the exchanges that started
        after it (`start_s >= warmup_s`; the run's `scenario(run_id)["warmup_s"]`)."""
        labels = self.runs().select(["run_id", *self.axes])
        parts = []
        for rid in labels["run_id"]:
            p = self.run_dir(rid) / f"{name}.parquet"
            if not p.is_file():
                continue
            frame = pl.scan_parquet(p)
            if columns is not None:
                frame = frame.select(columns)
            parts.append(frame.with_columns(pl.lit(rid).alias("run_id")))
        if not parts:
            have = ", ".join(self.tables()) or "none"
            raise KeyError(f"no table {name!r} in the finished runs; tables: {have}")
        data = pl.concat(parts, how="diagonal_relaxed").collect()
        own = [c for c in data.columns if c != "run_id"]
        keys = [c for c in labels.columns if c == "run_id" or c not in own]
        return labels.select(keys).join(data, on="run_id", how="inner", maintain_order="right")

    def sql(self, query: str) -> pl.DataFrame:
        """`query` run by DuckDB on the catalog (tables `runs`, `axes`, `study`; one view per
        record table), as a polars DataFrame."""
        import duckdb

        con = duckdb.connect(str(self.directory / catalog.CATALOG_FILE), read_only=True)
        try:
            path = str(self.directory.resolve()).replace("'", "''")
            con.execute(f"SET file_search_path = '{path}'")
            rel = con.sql(query)
            return rel.pl() if rel is not None else pl.DataFrame()
        finally:
            con.close()
