"""Scenarios: TOML in, the core's JSON out (docs/scenario.md).

- `load`: reading a file, the defaults of omitted sections, presets, RTT and size
  distributions, the seed, validation;
- `overrides`: ``--set key.path=value`` (and switching a table's `kind`);
- `calibration`: stored load calibrations, and a `load` turned into a population;
- `unc_model`: the UNC workload's tables.

Every problem is a `ScenarioError` with one line: the field, the value and what is allowed.
"""

from aqmlab.errors import ScenarioError, one_line
from aqmlab.scenario.load import (
    DEFAULT_PRESET,
    DEFAULT_QUEUE,
    DEFAULT_SEED,
    DEFAULT_TOPOLOGY,
    DEFAULT_TRAFFIC,
    PYTHON_MEASURE_KEY,
    check_python_keys,
    load,
    load_cdf,
    load_rtt_cdf,
    load_with_calibration,
    read_toml,
    resolve,
    resolve_with_calibration,
    to_json,
    validate,
    with_defaults,
)
from aqmlab.scenario.overrides import apply_overrides, assign, override_list, set_value

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_QUEUE",
    "DEFAULT_SEED",
    "DEFAULT_TOPOLOGY",
    "DEFAULT_TRAFFIC",
    "PYTHON_MEASURE_KEY",
    "ScenarioError",
    "apply_overrides",
    "assign",
    "check_python_keys",
    "load",
    "load_cdf",
    "load_rtt_cdf",
    "load_with_calibration",
    "one_line",
    "override_list",
    "read_toml",
    "resolve",
    "resolve_with_calibration",
    "set_value",
    "to_json",
    "validate",
    "with_defaults",
]
