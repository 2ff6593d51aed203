"""Sweep files: parsing, expansion into runs, seeds, and clear errors for malformed files."""

from __future__ import annotations

import itertools
import re

import pytest
from conftest import BASE, cli
from sweep_support import write_sweep

from aqmlab import ScenarioError
from aqmlab.study import sweepfile

GRID = """\
[sweep]
name = "grid"
scenario = "base.toml"
repetitions = 2
seed = 40
set = { duration_s = 3.0, "topology.bottleneck_mbps" = 5.0 }

[[axis]]
name = "queue"
field = "queue"
values = [
    { kind = "droptail", limit = 20 },
    { kind = "red", limit = 60, min_th = 5.0, max_th = 15.0 },
]
labels = ["DT", "RED"]

[[axis]]
name = "flows"
field = "traffic.0.flows"
values = [2, 4, 8]
"""


def _plan(tmp_path, body, base=BASE):
    sweep = sweepfile.read(write_sweep(tmp_path, body, base))
    return sweep, sweepfile.plan(sweep, tmp_path / "calibration.json")


def test_grid_expansion_order_labels_and_values(tmp_path):
    sweep, runs = _plan(tmp_path, GRID)
    assert sweep.columns == ["queue", "flows", "rep"]
    assert len(runs) == 2 * 2 * 3
    # Repetition by repetition, then the grid with the last axis fastest.
    expected = [
        (rep, q, f) for rep, q, f in itertools.product(range(2), ["DT", "RED"], ["2", "4", "8"])
    ]
    assert [(r.rep, r.labels["queue"], r.labels["flows"]) for r in runs] == expected
    for r in runs:
        s = r.scenario
        assert s["duration_s"] == 3.0 and s["topology"]["bottleneck_mbps"] == 5.0  # `set`
        assert s["traffic"][0]["flows"] == int(r.labels["flows"])
        assert s["queue"]["kind"] == {"DT": "droptail", "RED": "red"}[r.labels["queue"]]
        assert s["tcp"]["rwnd"] > 0  # resolved: the preset is expanded
        assert r.error is None
    assert len({r.run_id for r in runs}) == len(runs)


def test_seed_depends_only_on_rep(tmp_path):
    _, runs = _plan(tmp_path, GRID)
    for r in runs:
        assert r.seed == r.scenario["seed"] == sweepfile.run_seed(40, r.rep) == 40 + r.rep
    by_rep = {rep: {r.seed for r in runs if r.rep == rep} for rep in (0, 1)}
    assert by_rep == {0: {40}, 1: {41}}


def test_run_id_is_the_hash_of_the_resolved_scenario(tmp_path):
    _, runs = _plan(tmp_path, GRID)
    for r in runs:
        assert r.run_id == sweepfile.run_id(r.scenario) == r.scenario_hash[:12]
    # Changing anything in the scenario, the seed included, changes the id.
    s = dict(runs[0].scenario)
    s["seed"] += 1
    assert sweepfile.run_id(s) != runs[0].run_id


def test_zipped_axis_moves_fields_together(tmp_path):
    body = """\
[sweep]
scenario = "base.toml"

[[axis]]
name = "red"
zip = { "queue.min_th" = [5.0, 15.0], "queue.max_th" = [15.0, 45.0] }
labels = ["5/15", "15/45"]
"""
    base = BASE.replace('kind = "droptail"\nlimit = 50', 'kind = "red"\nlimit = 100')
    sweep, runs = _plan(tmp_path, body, base)
    assert sweep.name == "sweep"  # default: the file's stem
    got = [
        (r.labels["red"], r.scenario["queue"]["min_th"], r.scenario["queue"]["max_th"])
        for r in runs
    ]
    assert got == [("5/15", 5.0, 15.0), ("15/45", 15.0, 45.0)]


def test_default_labels():
    assert sweepfile.default_label(0.9) == "0.9"
    assert sweepfile.default_label(2.0) == "2.0"
    assert sweepfile.default_label("pie") == "pie"
    assert sweepfile.default_label({"kind": "droptail", "limit": 148}) == "droptail(limit=148)"
    assert sweepfile.default_label({"kind": "codel"}) == "codel"
    assert sweepfile.default_label([1, 2]) == "[1,2]"
    assert sweepfile.default_label(True) == "true"


def test_inline_base_table(tmp_path):
    nested = re.sub(r"^\[(\[?)", r"[\1base.", BASE, flags=re.MULTILINE)
    body = '[sweep]\nname = "inline"\n\n[base]\n' + nested
    p = tmp_path / "inline.toml"
    p.write_text(body, encoding="utf-8")
    sweep = sweepfile.read(p)
    runs = sweepfile.plan(sweep, tmp_path / "c.json")
    assert len(runs) == 1 and runs[0].scenario["traffic"][0]["flows"] == 6


def test_a_bad_value_in_one_cell_is_planned_as_a_failure(tmp_path):
    body = """\
[sweep]
scenario = "base.toml"

[[axis]]
name = "limit"
field = "queue.limit"
values = [20, -5]
"""
    _, runs = _plan(tmp_path, body)
    assert runs[0].error is None
    assert runs[1].error is not None and "queue.limit" in runs[1].error and "-5" in runs[1].error


MALFORMED = [
    (
        '[[axis]]\nname = "x"\nfield = "queue.bogus"\nvalues = [1]\n',
        "queue.bogus: unknown field",
    ),
    ('[[axis]]\nname = "x"\nfield = "topology.nope"\nvalues = [1, 2]\n', "topology.nope"),
    ('[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = []\n', "axis 'x': no values"),
    (
        '[[axis]]\nname = "x"\nzip = { "queue.limit" = [1, 2], "duration_s" = [1.0] }\n',
        "zipped lists differ in length (queue.limit: 2, duration_s: 1)",
    ),
    (
        '[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = [10, 20]\nlabels = ["a"]\n',
        "axis 'x'.labels: 1 labels for 2 values",
    ),
    (
        '[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = [10, 20]\nlabels = ["a", "a"]\n',
        "'a' appears twice",
    ),
    ('[[axis]]\nname = "seed"\nfield = "queue.limit"\nvalues = [10]\n', "reserved"),
    ('[[axis]]\nname = "x"\nvalues = [10]\n', "give either `field` and `values`, or `zip`"),
    (
        '[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = [1]\nstep = 2\n',
        "axis[0].step: unknown key",
    ),
    (
        '[[axis]]\nname = "x"\nfield = "traffic.3.flows"\nvalues = [1]\n',
        "traffic[3] is out of range (traffic has 1 entries)",
    ),
    (
        '[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = [50, 50]\nlabels = ["a", "b"]\n',
        "resolve to the same scenario",
    ),
    (
        '[[axis]]\nname = "x"\nfield = "queue.limit"\nvalues = [1]\n'
        '[[axis]]\nname = "x"\nfield = "duration_s"\nvalues = [1.0]\n',
        "two axes have this name",
    ),
    (
        '[[axis]]\nname = "s"\nfield = "seed"\nvalues = [1, 2]\n',
        "the seed is set by the sweep",
    ),
]


@pytest.mark.parametrize(("axes", "message"), MALFORMED)
def test_malformed_axes_are_clear_errors(tmp_path, axes, message):
    body = '[sweep]\nscenario = "base.toml"\n\n' + axes
    with pytest.raises(ScenarioError) as e:
        _plan(tmp_path, body)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (
            'scenario = "base.toml"\nrepetitions = 0',
            "sweep.repetitions = 0: expected an integer >= 1",
        ),
        ('scenario = "base.toml"\nseed = -1', "sweep.seed = -1"),
        ('scenario = "missing.toml"', 'sweep.scenario = "missing.toml": no such scenario file'),
        ('name = "x"', 'give either `scenario = "FILE"` or an inline [base] table'),
        ('scenario = "base.toml"\nsets = {}', "sweep.sets: unknown key"),
        ('scenario = "base.toml"\nset = { "queue.nope" = 1 }', "queue.nope: unknown field"),
        ('scenario = "base.toml"\nset = { "queue..x" = 1 }', 'sweep.set."queue..x"'),
        ('scenario = "base.toml"\nset = { seed = 3 }', "the seed is set by the sweep"),
    ],
)
def test_malformed_sweep_tables_are_clear_errors(tmp_path, head, message):
    with pytest.raises(ScenarioError) as e:
        _plan(tmp_path, f"[sweep]\n{head}\n")
    assert message in str(e.value)


def test_cli_reports_a_malformed_sweep_in_one_line(tmp_path):
    p = write_sweep(
        tmp_path,
        '[sweep]\nscenario = "base.toml"\n'
        '[[axis]]\nname = "q"\nfield = "queue.bogus"\nvalues = [1]\n',
    )
    r = cli("sweep", p, "--out", tmp_path / "study")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "queue.bogus: unknown field" in lines[0]
    assert not (tmp_path / "study").exists()
