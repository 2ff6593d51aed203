"""aqmlab's L4S pack against the L4S test suite's published figures (github.com/heistp/l4s-tests):
the data (`s1_table.csv`, `readme_figures.csv`, README.md says where each number comes from),
the runs of our side (`ours.py`), the comparison (`compare.py`) and docs/validation.md's
section "Against the L4S test suite" (`section.py`). `python -m validation.l4s` runs it."""
