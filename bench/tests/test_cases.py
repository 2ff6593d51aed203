"""The case table: files that exist, names --cases can use, run cases with their core."""

from pathlib import Path

import pytest

from bench import cases
from bench.errors import BenchError

ROOT = Path(__file__).resolve().parents[2]


def test_scenario_files_exist_and_keys_are_unique():
    keys = [c.key for c in cases.CASES]
    assert len(keys) == len(set(keys))
    for c in cases.CASES:
        if c.scenario:
            assert (ROOT / c.scenario).is_file(), c.scenario
        if c.core:
            assert cases.BY_KEY[c.core].kind == "core"


def test_select_keeps_table_order_and_brings_a_run_case_its_core():
    got = [c.key for c in cases.select("anchor-run, greedy-bbr")]
    assert got == ["greedy-bbr", "anchor-core", "anchor-run"]
    assert len(cases.select(None)) == len(cases.CASES)


def test_unknown_case_is_one_line_naming_it():
    with pytest.raises(BenchError, match="unknown nope") as e:
        cases.select("greedy-reno,nope")
    assert "\n" not in str(e.value)
