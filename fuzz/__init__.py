"""Fuzzing aqmlab with generated scenarios: valid-looking and boundary-valued scenarios of
every queue, TCP, RTT and traffic kind, each run (or refused) in an isolated worker and
checked against the properties every run must keep (`properties`). `python -m fuzz` runs a
long campaign; `fuzz/tests` the bounded slice in `make test`, driven by Hypothesis."""
