"""Differential validation of aqmlab against ns-2.35 (docs/validation.md).

`python -m validation` runs the suites (see `__main__`); `validation/ns2/` holds the Tcl
scripts ns-2 runs, `suites/` the comparisons, `results.csv` the last full run's rows.
"""
