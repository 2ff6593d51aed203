"""Malformed scenarios: one clear line naming the field, exit status 2, no complete output."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BASE, cli, edit, looks_complete, write_scenario

# (id, scenario text, extra CLI args, substrings the error line must contain)
CASES = [
    ("unknown-top-level", "bogus = 1\n" + BASE, [], ["bogus", "unknown field"]),
    (
        "unknown-in-topology",
        edit(BASE, "left_hosts = 3", "left_hosts = 3\nleft_hostz = 4"),
        [],
        ["topology.left_hostz", "unknown field"],
    ),
    (
        "unknown-in-queue",
        edit(BASE, "limit = 50", "limit = 50\nlimt = 3"),
        [],
        ["queue.limt", "unknown field"],
    ),
    (
        "unknown-in-traffic",
        edit(BASE, "flows = 6", "flows = 6\nflowz = 6"),
        [],
        ["traffic[0].flowz", "unknown field"],
    ),
    (
        "unknown-in-tcp",
        edit(BASE, 'preset = "freebsd-2.2.8"', 'preset = "freebsd-2.2.8"\nmsss = 1000'),
        [],
        ["tcp.msss", "unknown field"],
    ),
    (
        "negative-rate",
        edit(BASE, "bottleneck_mbps = 10.0", "bottleneck_mbps = -10"),
        [],
        ["topology.bottleneck_mbps = -10", "expected a number > 0"],
    ),
    (
        "zero-capacity",
        edit(BASE, "limit = 50", "limit = 0"),
        [],
        ["queue.limit = 0", "expected"],
    ),
    (
        "zero-access-rate",
        edit(BASE, "access_mbps = 100.0", "access_mbps = 0"),
        [],
        ["topology.access_mbps = 0"],
    ),
    (
        "rtt-min-above-max",
        edit(BASE, "min_ms = 10.0", "min_ms = 200.0"),
        [],
        ["rtt.max_ms = 100", "rtt.min_ms"],
    ),
    (
        "warmup-not-below-duration",
        edit(BASE, "warmup_s = 1.0", "warmup_s = 5.0"),
        [],
        ["warmup_s = 5", "less than duration_s"],
    ),
    (
        "missing-empirical-rtt-file",
        edit(
            BASE,
            'kind = "uniform"\nmin_ms = 10.0\nmax_ms = 100.0',
            'kind = "empirical"\nfile = "nope.csv"',
        ),
        [],
        ['rtt.file = "nope.csv"', "not found"],
    ),
    ("malformed-toml", edit(BASE, "limit = 50", "limit = = 50"), [], ["invalid TOML"]),
    (
        "wrong-type-in-queue",
        edit(BASE, "limit = 50", 'limit = "lots"'),
        [],
        ['queue.limit = "lots"', "expected a whole number"],
    ),
    (
        "wrong-type-in-struct",
        edit(BASE, "left_hosts = 3", 'left_hosts = "three"'),
        [],
        ['topology.left_hosts = "three"', "expected a whole number"],
    ),
    # serde's words never reach the user (issue 36): each names the field, the value as
    # written and what is allowed.
    (
        "untagged-weight",
        edit(BASE, 'kind = "droptail"\nlimit = 50', 'kind = "red"\nlimit = 50\nw_q = "auto_slow"'),
        [],
        ['queue.w_q = "auto_slow"', '"auto_1s"', '"auto_rtt"'],
    ),
    (
        "enum-given-a-boolean",
        edit(BASE, 'kind = "droptail"\nlimit = 50', 'kind = "red"\nlimit = 50\necn = true'),
        [],
        ["queue.ecn = true", "`rfc3168`", "`mark_p`"],
    ),
    (
        "tag-given-a-number",
        edit(BASE, 'kind = "droptail"', "kind = 3"),
        [],
        ["queue.kind = 3", "`droptail`", "`fq_codel`"],
    ),
    (
        "table-given-a-number",
        BASE,
        ["--set", "topology=3"],
        ["topology = 3", "expected a table"],
    ),
    (
        "framing-unknown",
        BASE,
        ["--set", 'topology.bottleneck_framing="atm"'],
        ['topology.bottleneck_framing = "atm"', '"ethernet"', "overhead_bytes"],
    ),
    (
        "float-given-a-boolean",
        BASE,
        ["--set", "duration_s=true"],
        ["duration_s = true", "a number"],
    ),
    (
        "unknown-queue-kind",
        edit(BASE, 'kind = "droptail"', 'kind = "fancy"'),
        [],
        ['queue.kind = "fancy"', "droptail"],
    ),
    (
        "unknown-preset",
        edit(BASE, 'preset = "freebsd-2.2.8"', 'preset = "linux-9"'),
        [],
        ['tcp.preset = "linux-9"', "freebsd-2.2.8"],
    ),
    ("bad-set-through-value", BASE, ["--set", "seed.x=1"], ["--set seed.x", "seed"]),
    ("bad-set-index", BASE, ["--set", "traffic[3].flows=1"], ["traffic[3]", "out of range"]),
    ("bad-set-unknown-key", BASE, ["--set", "topology.bogus=1"], ["topology.bogus"]),
    ("bad-set-no-equals", BASE, ["--set", "queue.limit"], ["--set queue.limit", "key.path=value"]),
    (
        "empty-traffic",
        "traffic = []\n" + BASE.split("[[traffic]]")[0],
        [],
        ["traffic", "at least one"],
    ),
    (
        "missing-required",
        edit(BASE, "limit = 50\n", ""),
        [],
        ["queue.limit", "missing"],
    ),
    ("non-finite", edit(BASE, "duration_s = 5.0", "duration_s = nan"), [], ["duration_s = nan"]),
    (
        "negative-flows",
        edit(BASE, "flows = 6", "flows = -1"),
        [],
        ["traffic[0].flows", "-1"],
    ),
]


def _check_error(proc, must_contain):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: "), err
    for s in must_contain:
        assert s in err, f"{s!r} not in {err!r}"


@pytest.mark.parametrize(
    ("text", "args", "must"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_run_rejects_bad_scenario(tmp_path: Path, text, args, must):
    scen = write_scenario(tmp_path, text)
    out = tmp_path / "out"
    proc = cli("run", scen, "--out", out, *args)
    _check_error(proc, must)
    assert not out.exists()
    assert not any(looks_complete(p) for p in tmp_path.iterdir())


@pytest.mark.parametrize(
    ("text", "args", "must"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_validate_rejects_bad_scenario(tmp_path: Path, text, args, must):
    scen = write_scenario(tmp_path, text)
    _check_error(cli("validate", scen, *args), must)


def test_missing_scenario_file(tmp_path: Path):
    _check_error(cli("run", tmp_path / "absent.toml", "--out", tmp_path / "o"), ["absent.toml"])


def test_malformed_rtt_file(tmp_path: Path):
    (tmp_path / "rtt.csv").write_text("rtt_ms,cdf\n10,0.1\nabc\n100,1\n")
    text = edit(
        BASE,
        'kind = "uniform"\nmin_ms = 10.0\nmax_ms = 100.0',
        'kind = "empirical"\nfile = "rtt.csv"',
    )
    scen = write_scenario(tmp_path, text)
    _check_error(cli("validate", scen), ['rtt.file = "rtt.csv"', "line 3"])


def test_bad_empirical_cdf_is_checked_by_the_core(tmp_path: Path):
    (tmp_path / "rtt.csv").write_text("10 0.5\n20 0.4\n30 1.0\n")
    text = edit(
        BASE,
        'kind = "uniform"\nmin_ms = 10.0\nmax_ms = 100.0',
        'kind = "empirical"\nfile = "rtt.csv"',
    )
    _check_error(cli("validate", write_scenario(tmp_path, text)), ["rtt.points[1]"])


def test_bad_cli_usage_is_one_line(tmp_path: Path):
    _check_error(cli("run"), ["scenario"])
    _check_error(cli("run", "x.toml", "--seed", "abc"), ["--seed"])


def test_out_that_is_not_results_is_left_alone(tmp_path: Path, scenario_file: Path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    _check_error(cli("run", scenario_file, "--out", out), ["not an aqmlab results directory"])
    assert (out / "notes.txt").read_text() == "keep me"


def test_unknown_option_points_at_help(tmp_path: Path, scenario_file: Path):
    proc = cli("validate", scenario_file, "--bogus")
    _check_error(proc, ["--bogus", "(see aqmlab --help)"])


@pytest.mark.parametrize(
    ("args", "must"),
    [
        (["reproduce", "E"], ["E", "A", "D"]),
        (["reproduce", "A", "--scale", "huge"], ["huge", "quick", "full"]),
        (["reproduce"], ["study"]),
    ],
    ids=["unknown-study", "unknown-scale", "no-study"],
)
def test_reproduce_rejects_bad_arguments(tmp_path: Path, args, must):
    out = tmp_path / "out"
    proc = cli(*args, "--out", out)
    _check_error(proc, must)
    assert not out.exists()
