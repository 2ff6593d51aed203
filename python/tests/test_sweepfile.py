"""Sweep files: parsing, expansion into runs, seeds, and clear errors for malformed files."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from conftest import BASE, cli, edit
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


# --- the schema: every malformed field is one line with its path, value and what is allowed ---


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[sweep]\nscenario = "base.toml"\nrepetitions = true\n',
            "sweep.repetitions = true: expected an integer >= 1",
        ),
        (
            '[sweep]\nscenario = "base.toml"\nrepetitions = 2.0\n',
            "sweep.repetitions = 2.0: expected an integer >= 1",
        ),
        ("[sweep]\nscenario = 3\n", "sweep.scenario = 3: expected a file path"),
        (
            '[sweep]\nscenario = "base.toml"\nname = ""\n',
            'sweep.name = "": expected a non-empty string',
        ),
        (
            '[sweep]\nscenario = "base.toml"\nset = 3\n',
            'sweep.set = 3: expected a table { "dotted.path" = value }',
        ),
        ("sweep = 3\n", "sweep = 3: expected the [sweep] table"),
        ("[base]\nduration_s = 1.0\n", "sweep.toml: missing the [sweep] table"),
        (
            '[sweep]\nscenario = "base.toml"\n[scale.quick]\nrepetitions = 1\n',
            "unknown top-level key 'scale'; allowed: [sweep], [base], [[axis]]",
        ),
        ('[sweep]\nscenario = "base.toml"\n[axis]\nname = "x"\n', "axis"),
        (
            '[sweep]\nscenario = "base.toml"\n[[axis]]\nname = "x y"\nfield = "queue.limit"\n'
            "values = [1]\n",
            'axis[0].name = "x y": expected a name (letters, digits, _ and -)',
        ),
        (
            '[sweep]\nscenario = "base.toml"\n[[axis]]\nfield = "queue.limit"\nvalues = [1]\n',
            "axis[0].name: missing, expected a name (letters, digits, _ and -)",
        ),
        (
            '[sweep]\nscenario = "base.toml"\n[[axis]]\nname = "x"\nfield = "queue.limit"\n'
            'values = [1, 2]\nlabels = ["a", 3]\n',
            "axis[0].labels[1] = 3: expected a non-empty string",
        ),
        (
            '[sweep]\nscenario = "base.toml"\n[[axis]]\nname = "x"\nfield = "queue.limit"\n'
            "values = 5\n",
            "values = 5: expected a list of values",
        ),
        (
            '[sweep]\nscenario = "base.toml"\n[[axis]]\nname = "x"\nzip = { "queue.limit" = 5 }\n',
            'zip."queue.limit" = 5: expected a list',
        ),
    ],
)
def test_schema_errors_name_the_field_its_value_and_what_is_allowed(tmp_path, body, message):
    with pytest.raises(ScenarioError) as e:
        sweepfile.read(write_sweep(tmp_path, body))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


# --- `aqmlab validate SWEEPFILE`: the whole plan, nothing run ---------------------------------


def test_validate_plans_a_sweep_file_without_running_it(tmp_path):
    p = write_sweep(tmp_path, GRID)
    r = cli("validate", p)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"ok: {p}: sweep grid: 6 cells × 2 repetitions = 12 runs, 0 failures planned"
    ]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["base.toml", "sweep.toml"]
    r = cli("validate", p, "--print")
    plan = json.loads(r.stdout)
    assert plan["format"] == "aqmlab-plan" and len(plan["runs"]) == 12


def test_validate_reports_the_cells_that_would_fail(tmp_path):
    body = '[sweep]\nscenario = "base.toml"\n\n[[axis]]\nname = "limit"\nfield = "queue.limit"\n'
    p = write_sweep(tmp_path, body + "values = [20, -5]\n")
    r = cli("validate", p)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("failed: limit=-5 rep=0: queue.limit")
    assert lines[-1] == f"{p}: sweep sweep: 2 cells × 1 repetition = 2 runs, 1 failure planned"
    r = cli("validate", p, "--set", "duration_s=-1.0")
    assert r.returncode == 1 and r.stdout.splitlines()[-1].endswith("2 failures planned")


def test_validate_a_malformed_sweep_file_is_one_line(tmp_path):
    p = write_sweep(tmp_path, '[sweep]\nscenario = "base.toml"\nsets = {}\n')
    r = cli("validate", p)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "error: sweep.sets: unknown key, allowed: name, scenario, repetitions, seed, set"
    ]
    r = cli("validate", write_sweep(tmp_path, GRID), "--seed", "3")
    assert r.returncode == 2
    assert r.stderr.startswith("error: --seed 3: a sweep sets its own seeds")


def test_validate_counts_the_calibrations_a_sweep_would_measure(tmp_path):
    base = edit(BASE, 'kind = "bulk"\nflows = 6\nstart_jitter_s = 0.5', 'kind = "mah"\nload = 0.5')
    body = '[sweep]\nscenario = "base.toml"\n\n[[axis]]\nname = "limit"\nfield = "queue.limit"\n'
    p = write_sweep(tmp_path, body + "values = [20, 40]\n", base)
    r = cli("validate", p)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"ok: {p}: sweep sweep: 2 cells × 1 repetition = 2 runs, 0 failures planned, "
        "1 calibration to measure"
    ]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["base.toml", "sweep.toml"]


# --- `aqmlab sweep --set` ---------------------------------------------------------------------


def test_cli_set_applies_after_the_file_set_and_before_the_axes(tmp_path):
    cli_set = ["duration_s=2.0", "rtt.kind=constant", "rtt.rtt_ms=20.0"]
    sweep = sweepfile.read(write_sweep(tmp_path, GRID), overrides=cli_set)
    runs = sweepfile.plan(sweep, tmp_path / "calibration.json")
    assert len(runs) == 12 and all(r.error is None for r in runs)
    for r in runs:
        assert r.scenario["duration_s"] == 2.0  # over the file's `set`
        assert r.scenario["topology"]["bottleneck_mbps"] == 5.0  # the file's `set`
        assert r.scenario["rtt"] == {"kind": "constant", "rtt_ms": 20.0}  # kind switched
        assert r.scenario["traffic"][0]["flows"] == int(r.labels["flows"])  # the axis
    assert sweepfile.plan_document(sweep, runs)["cli_set"] == cli_set


def test_cli_set_that_every_cell_overwrites_is_an_error(tmp_path):
    with pytest.raises(ScenarioError) as e:
        sweepfile.read(write_sweep(tmp_path, GRID), overrides=["queue.limit=5"])
    assert str(e.value) == (
        "--set queue.limit=5: the axis 'queue' sets queue in every cell, "
        "which replaces this value; change the axis instead"
    )


def test_validate_checks_every_scale_of_a_study_sweep_file():
    root = Path(__file__).resolve().parents[2]
    p = root / "python" / "src" / "aqmlab" / "studies" / "D" / "greedy.toml"
    r = cli("validate", p)
    assert r.returncode == 0, r.stderr
    assert [line.split(": sweep ")[0] for line in r.stdout.splitlines()] == [
        f"ok: {p} (scale {s})" for s in ("full", "quick", "smoke")
    ]


SWEEP_DIR = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
SWEEP_EXAMPLES = sorted(SWEEP_DIR.glob("*.toml"))


@pytest.mark.parametrize("example", SWEEP_EXAMPLES, ids=[p.stem for p in SWEEP_EXAMPLES])
def test_example_sweeps_plan_without_failures(example: Path):
    proc = cli("validate", example)
    assert proc.returncode == 0, proc.stderr
    assert "0 failures planned" in proc.stdout


def test_tcp_example_compares_the_linux_stacks_under_three_queues():
    plan = sweepfile.check(sweepfile.read(SWEEP_DIR / "tcp_cc.toml")).runs
    cells = {(r.labels["tcp"], r.labels["queue"], r.labels["load"]) for r in plan}
    assert {c[0] for c in cells} == {"Reno", "CUBIC", "BBR"}
    assert {c[1] for c in cells} == {"DropTail", "CoDel", "FQ-CoDel"}
    presets = {r.scenario["tcp"]["congestion_control"] for r in plan if r.scenario}
    assert presets == {"linux_reno", "cubic", "bbr"}
