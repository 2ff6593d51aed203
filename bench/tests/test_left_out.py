"""An older reference binary refuses a field it does not know: `check_core` leaves the field
out of that side's copy of the scenario and checks again; the page names what was left out."""

import json
import stat
from pathlib import Path

from bench import measure, report
from bench.cases import Case
from bench.sides import Side

# A stand-in for an older benchmark binary: it refuses (as serde does, exit 101) the first
# field of its scenario JSON it does not know.
FAKE = """#!/usr/bin/env python3
import json, os, sys
KNOWN = {"name", "duration_s", "tcp", "mss", "rwnd"}
def walk(d):
    for k, v in d.items():
        if k not in KNOWN:
            sys.stderr.write(f"valid scenario JSON: unknown field `{k}`, expected one of ...")
            sys.exit(101)
        if isinstance(v, dict):
            walk(v)
walk(json.load(open(os.environ["AQMLAB_BENCH_SCENARIO"])))
print("bottleneck packets 1")
"""


def test_unknown_fields_are_left_out_of_that_sides_copy(tmp_path: Path):
    exe = tmp_path / "old-bench"
    exe.write_text(FAKE)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    scenario = tmp_path / "case.json"
    doc = {"name": "x", "duration_s": 1, "tcp": {"mss": 1448, "frto": True, "rwnd": 1}, "new": 2}
    scenario.write_text(json.dumps(doc))
    side = Side("ref", "reference", "abc1234", exe)
    case = Case("web", "a web case", "core", 10.0, scenario="x.toml")
    path, left_out = measure.check_core(tmp_path, case, side, scenario)
    assert sorted(left_out) == ["frto", "new"]
    assert path == tmp_path / "case-ref.json"
    assert json.loads(path.read_text()) == {
        "name": "x",
        "duration_s": 1,
        "tcp": {"mss": 1448, "rwnd": 1},
    }
    assert json.loads(scenario.read_text()) == doc, "this tree's file is left as it was"
    run = report.Run(
        ref=side, new=side, results={}, runs=1, quick=False, machine={}, date="", load_before="",
        load_after="", elapsed_s=0.0, rss_floor_mib=0.0, left_out={"web (reference)": left_out},
    )  # fmt: skip
    assert "web (reference): `new`, `frto`" in report.left_out_note(run) or (
        "web (reference): `frto`, `new`" in report.left_out_note(run)
    )
