"""The bounded slice of the fuzzer in `make test`: Hypothesis drives the scenario generator
(`fuzz.generate`, through a random source it controls, so a failure shrinks and replays);
each scenario runs in an isolated worker and must finish with every property intact or be
refused with one clean line. The long campaign is `python -m fuzz` (docs/reliability.md)."""

from __future__ import annotations

import concurrent.futures as cf
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import campaign, generate, properties

EXAMPLES = 500  # about half a minute on 2 cores


@pytest.fixture(scope="module")
def worker():
    with cf.ProcessPoolExecutor(max_workers=1, initializer=campaign._init_worker) as pool:
        yield pool


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.randoms(use_true_random=False))
def test_generated_scenarios_finish_or_are_refused_cleanly(worker, r):
    doc = generate.scenario(r)
    o = worker.submit(campaign.run_scenario, 0, doc, r.random() < 0.1).result(
        timeout=campaign.TIME_BOUND_S + 60
    )
    assert o.kind in campaign.GOOD, f"{o.kind}: {o.detail}\n{json.dumps(doc)}"


def _summary(tmp_path: Path, **forward) -> Path:
    side = {
        "loss_rate": 0.1,
        "utilization": 0.9,
        "utilization_ip": 0.9,
        "delay_p50_ms": 1.0,
        "delay_p90_ms": 2.0,
        "delay_p99_ms": 3.0,
        "delay_max_ms": 3.0,
        "max_queue_pkts": 10,
        "arrivals": 100,
        "departures": 90,
        "drops_early": 0,
        "drops_forced": 0,
        "drops_overflow": 10,
    }
    q = {"kind": "droptail", "params": {"limit": 50, "unit": "packets"}}
    summary = {
        "forward": {**side, **forward},
        "reverse": side,
        "queue_forward": q,
        "queue_reverse": q,
    }
    (tmp_path / "summary.json").write_text(json.dumps({"summary": summary}))
    return tmp_path


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("loss_rate", 1.125, "loss_rate = 1.125 outside"),
        ("utilization_ip", 1.05, "utilization_ip = 1.05 outside"),
        ("delay_p50_ms", 4.0, "not ordered"),
        ("max_queue_pkts", 51, "above the limit"),
        ("arrivals", 1000, "beyond the queue's capacity"),
    ],
)
def test_the_properties_catch_what_they_name(tmp_path, field, value, words):
    assert properties.check_run(_summary(tmp_path)) == []
    bad = properties.check_run(_summary(tmp_path, **{field: value}))
    assert any(words in b for b in bad), bad
