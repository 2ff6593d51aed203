"""Studies: many runs of one scenario over axes (docs/sweeps.md).

- `sweepfile`: a sweep file expanded into the plan of a study (checked whole before any run);
- `sweep`: `aqmlab sweep`, running what is not finished and keeping the catalog;
- `execute`: where the runs execute (local processes or a Dask cluster);
- `progress`: the live progress display;
- `catalog`: the study's DuckDB catalog;
- `reader`: `Study`, a study directory from Python.
"""

from aqmlab.study.reader import Study

__all__ = ["Study"]
