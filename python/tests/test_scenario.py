"""Scenario resolution: presets, overrides, empirical RTT files, seeds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from conftest import BASE, edit, write_scenario

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
