"""The `_core` bindings themselves."""

from __future__ import annotations

import json
import tomllib

import pytest
from conftest import BASE

from aqmlab import _core
from aqmlab import scenario as sc


def _json(**overrides) -> str:
    s = sc.resolve(tomllib.loads(BASE), overrides=[f"{k}={v}" for k, v in overrides.items()])
    return sc.to_json(s)


def test_presets():
    names = _core.tcp_presets()
    assert "freebsd-2.2.8" in names and "ns2-weigle2005" in names
    p = _core.tcp_preset("freebsd-2.2.8")
    assert p["mss"] == 1460 and p["tick_ms"] == 500.0 and p["initial_window"] == 1
    with pytest.raises(ValueError, match=r'tcp\.preset = "nope"'):
        _core.tcp_preset("nope")
    assert _core.version()


def test_simulation_drive_loop():
    sim = _core.Simulation(_json())
    assert sim.now() == 0.0
    assert sim.end_time() == 5.0
    assert not sim.finished()
    seen: dict[str, int] = {}
    while not sim.finished():
        sim.run_until(sim.now() + 1.0)
        for name, cols in sim.drain().items():
            assert isinstance(cols, dict)
            lengths = {len(v) for v in cols.values()}
            assert len(lengths) <= 1, f"ragged table {name}"
            seen[name] = seen.get(name, 0) + (lengths.pop() if lengths else 0)
    assert sim.now() == 5.0
    sim.run_until(100.0)  # capped at the end
    assert sim.now() == 5.0
    last = sim.finish()
    assert isinstance(last, dict)
    assert isinstance(sim.summary(), dict)
    stats = sim.engine_stats()
    assert {"events", "sim_time_s"} <= set(stats)


def test_typed_drain_has_known_dtypes():
    sim = _core.Simulation(_json())
    sim.run_until(5.0)
    for batch in (sim.drain_typed(), sim.finish_typed()):
        for cols in batch.values():
            for dtype, values in cols.values():
                assert dtype in {"u64", "i64", "f64", "bool", "str"}
                assert isinstance(values, list)


@pytest.mark.parametrize(
    "bad",
    ["{", "[]", "null", json.dumps({"seed": 1})],
)
def test_bad_json_is_a_one_line_value_error(bad):
    with pytest.raises(ValueError) as e:
        _core.Simulation(bad)
    assert "\n" not in str(e.value)


def test_run_until_rejects_bad_times():
    sim = _core.Simulation(_json())
    for t in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            sim.run_until(t)


def test_script_loss_rejects_a_bad_link_and_two_kinds_at_once():
    sim = _core.Simulation(_json())
    with pytest.raises(ValueError, match=r"^script_loss: link = 999: expected a link id below"):
        sim.script_loss(999, 1)
    with pytest.raises(ValueError, match=r"^script_loss: ack = true with syn = true: expected"):
        sim.script_loss(0, 1, syn=True, ack=True)
    sim.script_loss(0, 1, ack=True, skip=2)  # one kind: accepted


def test_a_core_panic_is_a_one_line_runtime_error(capfd):
    with pytest.raises(RuntimeError) as e:
        _core._panic_for_tests()
    msg = str(e.value)
    assert "internal error in the simulator core" in msg and "deliberate panic" in msg
    assert "\n" not in msg
    assert capfd.readouterr().err == ""  # the default hook's message is not printed
