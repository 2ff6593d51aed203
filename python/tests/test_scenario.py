"""Scenario resolution: presets, overrides, empirical RTT files, seeds."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from conftest import BASE, cli, edit, write_scenario

import aqmlab
from aqmlab import scenario as sc


def test_preset_then_overrides(tmp_path: Path):
    text = edit(BASE, 'preset = "freebsd-2.2.8"', 'preset = "ns2-weigle2005"\nrwnd = 65535')
    s = sc.load(write_scenario(tmp_path, text))
    ns2 = aqmlab.tcp_preset("ns2-weigle2005")
    assert s["tcp"] == {**ns2, "rwnd": 65535}
    assert "preset" not in s["tcp"]


def test_former_preset_name_warns_and_means_weigle2005(tmp_path: Path):
    text = edit(BASE, 'preset = "freebsd-2.2.8"', 'preset = "ns2-fulltcp"')
    with pytest.warns(FutureWarning, match="ns2-weigle2005"):
        s = sc.load(write_scenario(tmp_path, text))
    assert s["tcp"] == aqmlab.tcp_preset("ns2-weigle2005")


def test_ns2_35_preset_never_gives_up_and_never_round_trips(tmp_path: Path):
    text = edit(BASE, 'preset = "freebsd-2.2.8"', 'preset = "ns2.35-fulltcp"')
    s = sc.load(write_scenario(tmp_path, text))
    assert s["tcp"]["max_retries"] == "never"
    assert s["tcp"]["connect_timeout_s"] == "never"
    assert (s["tcp"]["mss"], s["tcp"]["rwnd"], s["tcp"]["delack_segments"]) == (536, 10720, 1)
    sc.validate(s)
    s = sc.load(write_scenario(tmp_path), overrides=['tcp.max_retries="never"'])
    sc.validate(s)
    bad = sc.load(write_scenario(tmp_path), overrides=['tcp.max_retries="sometimes"'])
    with pytest.raises(sc.ScenarioError, match="never"):
        sc.validate(bad)


def test_default_preset_when_tcp_absent(tmp_path: Path):
    text = edit(BASE, '[tcp]\npreset = "freebsd-2.2.8"\n', "")
    s = sc.load(write_scenario(tmp_path, text))
    assert s["tcp"] == aqmlab.tcp_preset(sc.DEFAULT_PRESET)


def test_set_overrides_are_toml_typed(tmp_path: Path):
    s = sc.load(
        write_scenario(tmp_path),
        overrides=[
            "queue.limit=80",
            "topology.bottleneck_mbps=2.5",
            "tcp.delayed_ack=false",
            "tcp.backoff=[1, 2, 4]",
            "traffic[0].flows=3",
            "traffic.0.direction=upload",  # bare word: a string
            'name="quoted name"',
            "tcp.preset=ns2-weigle2005",
            "measure.interval_s=0.5",  # creates the [measure] table
        ],
    )
    assert s["queue"]["limit"] == 80
    assert s["topology"]["bottleneck_mbps"] == 2.5
    assert s["tcp"]["delayed_ack"] is False
    assert s["tcp"]["backoff"] == [1, 2, 4]
    assert s["tcp"]["mss"] == aqmlab.tcp_preset("ns2-weigle2005")["mss"]
    assert s["traffic"][0]["flows"] == 3
    assert s["traffic"][0]["direction"] == "upload"
    assert s["name"] == "quoted name"
    assert s["measure"] == {"interval_s": 0.5}
    sc.validate(s)


def test_seed_argument_wins_and_default_exists(tmp_path: Path):
    assert sc.load(write_scenario(tmp_path))["seed"] == 7
    assert sc.load(write_scenario(tmp_path), seed=99)["seed"] == 99
    text = edit(BASE, "seed = 7\n", "")
    assert sc.load(write_scenario(tmp_path, text))["seed"] == sc.DEFAULT_SEED
    with pytest.raises(sc.ScenarioError, match="seed"):
        sc.load(write_scenario(tmp_path), seed=-1)


def test_empirical_rtt_file_relative_to_scenario(tmp_path: Path):
    sub = tmp_path / "scen"
    sub.mkdir()
    (sub / "rtt.csv").write_text("# measured\nrtt_ms,cdf\n5, 0.0\n20, 0.5\n200, 1.0\n")
    text = edit(
        BASE,
        'kind = "uniform"\nmin_ms = 10.0\nmax_ms = 100.0',
        'kind = "empirical"\nfile = "rtt.csv"',
    )
    s = sc.load(write_scenario(sub, text))
    assert s["rtt"] == {
        "kind": "empirical",
        "points": [[5.0, 0.0], [20.0, 0.5], [200.0, 1.0]],
        "source": "rtt.csv",
    }
    sc.validate(s)


def test_a_traffic_source_takes_its_own_tcp_and_rtt(tmp_path: Path):
    """`[[traffic]] tcp` (a preset name, or a table like [tcp]) and `rtt` become the core's
    per-source lists; other sources keep [tcp] and [rtt]; errors name the source's field."""
    sub = tmp_path / "scen"
    sub.mkdir()
    (sub / "rtt.csv").write_text("rtt_ms,cdf\n5, 0.0\n200, 1.0\n")
    doc = tomllib.loads(BASE)
    doc["traffic"] = [
        {**doc["traffic"][0]},
        {"kind": "bulk", "flows": 2, "tcp": "linux-dctcp"},
        {
            "kind": "bulk",
            "flows": 1,
            "tcp": {"preset": "linux-cubic", "rwnd": 65535},
            "rtt": {"kind": "empirical", "file": "rtt.csv"},
        },
    ]
    s = sc.resolve(doc, base_dir=sub)
    assert all("tcp" not in t and "rtt" not in t for t in s["traffic"])
    assert s["traffic_tcp"] == [
        None,
        aqmlab.tcp_preset("linux-dctcp"),
        {**aqmlab.tcp_preset("linux-cubic"), "rwnd": 65535},
    ]
    assert s["traffic_rtt"] == [
        None,
        None,
        {"kind": "empirical", "points": [[5.0, 0.0], [200.0, 1.0]], "source": "rtt.csv"},
    ]
    sc.validate(s)
    assert sc.resolve(s) == s
    doc["traffic"][1]["tcp"] = "no-such-stack"
    with pytest.raises(sc.ScenarioError, match=r"^traffic\[1\]\.tcp\.preset = "):
        sc.resolve(doc, base_dir=sub)
    doc["traffic"][1]["tcp"] = {"preset": "linux-dctcp", "mss": 0}
    with pytest.raises(sc.ScenarioError, match=r"^traffic\[1\]\.tcp\.mss = 0"):
        sc.validate(sc.resolve(doc, base_dir=sub))


def test_resolve_is_idempotent(tmp_path: Path):
    s = sc.load(write_scenario(tmp_path))
    assert sc.resolve(s) == s
    assert sc.to_json(sc.resolve(s)) == sc.to_json(s)


def test_validate_names_the_field():
    s = sc.resolve(tomllib.loads(BASE), overrides=["rtt.max_ms=1"])
    with pytest.raises(sc.ScenarioError) as e:
        sc.validate(s)
    assert str(e.value).startswith("rtt.max_ms = 1: expected")


def test_examples_are_valid():
    root = Path(__file__).resolve().parents[2]
    examples = sorted((root / "examples").glob("*.toml"))
    assert examples
    for p in examples:
        sc.validate(sc.load(p))


# --- defaults a newcomer expects (docs/scenario.md, "A minimal scenario") -----------------

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.toml"


def test_a_minimal_dict_runs_with_the_documented_defaults():
    res = aqmlab.run({"duration_s": 1.0})
    s = res.summary["scenario"]
    quick = tomllib.loads(QUICKSTART.read_text(encoding="utf-8"))
    assert s["topology"] == quick["topology"]  # the quickstart's dumbbell
    assert s["queue"] == {"kind": "droptail", "limit": 100}
    assert s["traffic"] == [{"kind": "bulk", "flows": 40, "start_jitter_s": 1.0}]
    assert s["tcp"] == aqmlab.tcp_preset(sc.DEFAULT_PRESET)
    assert s["seed"] == sc.DEFAULT_SEED
    assert res.summary["summary"]["connections_started"] == 40


def test_a_minimal_toml_file_resolves_like_the_minimal_dict(tmp_path: Path):
    p = write_scenario(tmp_path, "duration_s = 10.0\n")
    assert sc.load(p) == sc.resolve({"duration_s": 10.0})
    sc.validate(sc.load(p))


def test_a_partial_topology_takes_the_other_keys_from_the_defaults(tmp_path: Path):
    s = sc.resolve({"duration_s": 10.0, "topology": {"bottleneck_mbps": 100.0}})
    assert s["topology"]["bottleneck_mbps"] == 100.0
    assert s["topology"]["left_hosts"] == 8 and s["topology"]["access_mbps"] == 100.0
    # An override on a minimal scenario lands on the defaults, never instead of them.
    s = sc.resolve({"duration_s": 10.0}, overrides=["queue.limit=30", "topology.left_hosts=2"])
    assert s["queue"] == {"kind": "droptail", "limit": 30}
    assert s["topology"]["left_hosts"] == 2 and s["topology"]["right_hosts"] == 8
    sc.validate(s)


def test_duration_stays_required():
    with pytest.raises(sc.ScenarioError, match=r"^duration_s: missing \(required\)$"):
        sc.validate(sc.resolve({}))


def test_defaults_change_nothing_in_a_scenario_that_gives_every_section():
    files = sorted(ROOT.glob("examples/**/*.toml")) + sorted(
        ROOT.glob("python/src/aqmlab/studies/*/*.toml")
    )
    # Sweep files and tune files (studies/tune/, docs/tune.md) are not scenarios.
    scenarios = [p for p in files if not {"sweep", "tune"} & set(sc.read_toml(p))]
    assert len(scenarios) >= 15
    for p in scenarios:
        doc = sc.read_toml(p)
        assert sc.with_defaults(doc) == doc, p


# --- switching a `kind` by an override ------------------------------------------------------


def test_switching_the_queue_kind_gives_the_new_kinds_defaults():
    """`--set queue.kind=fq_codel` kept drop-tail's `limit = 100` (issue 36): FQ-CoDel ran
    with a limit that was never its own."""
    s = sc.load(QUICKSTART, overrides=["queue.kind=fq_codel"])
    assert s["queue"] == {"kind": "fq_codel"}
    s = sc.load(QUICKSTART, overrides=["queue.kind=fq_codel", "queue.limit=100"])
    assert s["queue"] == {"kind": "fq_codel", "limit": 100}


def test_switching_the_queue_kind_keeps_what_the_new_kind_requires():
    s = sc.load(QUICKSTART, overrides=["queue.kind=red"])
    assert s["queue"] == {"kind": "red", "limit": 100}  # `unit` dropped, `limit` kept
    sc.validate(s)
    s = sc.load(QUICKSTART, overrides=["queue.kind=red", "queue.min_th=5.0"])
    assert s["queue"] == {"kind": "red", "limit": 100, "min_th": 5.0}


def test_a_key_typed_in_the_same_command_is_kept_and_reported():
    s = sc.load(QUICKSTART, overrides=["queue.unit=bytes", "queue.kind=red"])
    assert s["queue"]["unit"] == "bytes"
    with pytest.raises(sc.ScenarioError, match=r"^queue\.unit: unknown field"):
        sc.validate(s)


def test_switching_other_kinds():
    s = sc.load(QUICKSTART, overrides=["rtt.kind=constant", "rtt.rtt_ms=50.0"])
    assert s["rtt"] == {"kind": "constant", "rtt_ms": 50.0}
    s = sc.load(QUICKSTART, overrides=["rtt.kind=none"])
    assert s["rtt"] == {"kind": "none"}
    s = sc.load(QUICKSTART, overrides=["traffic[0].kind=udp_cbr", "traffic[0].share=0.5"])
    # The new kind's own defaults (issue 36): only what it requires (`flows`) is kept.
    assert s["traffic"][0] == {"kind": "udp_cbr", "flows": 40, "share": 0.5}
    sc.validate(s)
    # A Web source keeps `load` (resolved by the calibration, not by the core).
    s = sc.load(
        QUICKSTART, overrides=["traffic[0].kind=packmime", "traffic[0].load=0.5"], loads=False
    )
    assert s["traffic"][0] == {"kind": "packmime", "load": 0.5}
    # The reverse queue, and a table nested in a tagged one (an ftp source's size law).
    s = sc.load(
        QUICKSTART,
        overrides=[
            'queue_reverse={kind="codel", limit=200, target_ms=5.0}',
            "queue_reverse.kind=pie",
            'traffic[0]={kind="ftp", sessions=4, size={kind="pareto", mean_bytes=1e5, shape=1.5}}',
            "traffic[0].size.kind=exponential",
        ],
    )
    assert s["queue_reverse"] == {"kind": "pie", "limit": 200, "target_ms": 5.0}
    assert s["traffic"][0]["size"] == {"kind": "exponential", "mean_bytes": 1e5}
    sc.validate(s)


def test_the_accepted_keys_come_from_the_core():
    from aqmlab.scenario import overrides

    assert overrides.kind_keys(["queue"], "droptail") == {"limit", "unit"}
    assert {"min_th", "max_th", "w_q", "limit"} <= overrides.kind_keys(["queue"], "red")
    assert overrides.kind_keys(["rtt"], "uniform") == {"min_ms", "max_ms"}
    assert overrides.kind_keys(["rtt"], "none") == set()
    assert overrides.kind_keys(["queue"], "fancy") is None  # validation names the kinds


def test_cli_run_switches_the_queue_kind(tmp_path: Path):
    out = tmp_path / "res"
    proc = cli(
        "run", QUICKSTART, "--set", "queue.kind=red", "--set", "duration_s=2.0",
        "--set", "warmup_s=0.5", "--out", out, "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenario"]["queue"] == {"kind": "red", "limit": 100}
