"""The benchmark binary is found in cargo's JSON messages."""

import json
from pathlib import Path

import pytest

from bench.build import executable, reference_tree
from bench.errors import BenchError


def artifact(name: str, kind: str, exe: str | None) -> str:
    return json.dumps(
        {
            "reason": "compiler-artifact",
            "target": {"name": name, "kind": [kind]},
            "executable": exe,
        }
    )


def test_finds_the_throughput_bench_among_other_messages():
    messages = "\n".join(
        [
            artifact("aqmlab", "lib", None),
            artifact("throughput", "bench", "/t/release/deps/throughput-1d56"),
            json.dumps({"reason": "build-finished", "success": True}),
            "not json: a line cargo's progress may leave",
        ]
    )
    assert executable(messages) == Path("/t/release/deps/throughput-1d56")


def test_no_executable_is_an_error():
    with pytest.raises(BenchError, match="no executable"):
        executable(artifact("aqmlab", "lib", None))


def test_unknown_reference_commit_is_one_line_and_checks_out_nothing():
    root = Path(__file__).resolve().parents[2]
    with pytest.raises(BenchError, match="no such commit") as e:
        reference_tree(root, "0123456789abcdef0123")
    assert "\n" not in str(e.value)
    assert not (root / ".bench" / "ref-0123456").exists()
