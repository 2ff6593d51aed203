"""Studies: many runs of one scenario over axes (docs/sweeps.md).

- `sweepfile`: a sweep file expanded into the plan of a study (checked whole before any run);
- `sweep`: `aqmlab sweep`, running what is not finished and keeping the catalog;
- `execute`: where the runs execute (local processes or a Dask cluster);
- `progress`: the live progress display;
- `catalog`: the study's DuckDB catalog;
- `reader`: `Study`, a study directory from Python.
"""

__all__ = ["Study"]


def __getattr__(name: str):
    # `Study` on first use: a sweep's worker imports this package (its task lives in
    # `execute`) and needs none of the reader's polars, pyarrow and DuckDB.
    if name == "Study":
        from aqmlab.study.reader import Study

        return Study
    raise AttributeError(f"module 'aqmlab.study' has no attribute {name!r}")
