"""Scales of a study's sweep file: repetitions, merged overrides, thinned axes, errors."""

from pathlib import Path

import pytest

from aqmlab import scenario as sc
from aqmlab.reproduce import scaling
from aqmlab.study import sweepfile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

STUDY = """
[sweep]
name = "s"
scenario = "base.toml"
repetitions = 3
set = { duration_s = 100.0, warmup_s = 10.0 }

[[axis]]
name = "queue"
field = "queue"
values = [{ kind = "droptail", limit = 30 }, { kind = "droptail", limit = 60 }, { kind = "red" }]
labels = ["DT-30", "DT-60", "RED"]

[[axis]]
name = "lim"
zip = { "topology.bottleneck_mbps" = [10.0, 20.0], "duration_s" = [5.0, 6.0] }

[scale.quick]
repetitions = 1
set = { duration_s = 20.0 }
keep = { queue = ["RED", "DT-30"], lim = ["20.0,6.0"] }
"""


@pytest.fixture
def study_file(tmp_path):
    (tmp_path / "base.toml").write_text((EXAMPLES / "quickstart.toml").read_text())
    f = tmp_path / "study.toml"
    f.write_text(STUDY)
    return f


def test_full_is_the_file(study_file, tmp_path):
    assert scaling.scales(study_file) == ["full", "quick"]
    sw = sweepfile.read(scaling.derive(study_file, "full", tmp_path / "o" / "full.toml"))
    assert sw.repetitions == 3 and sw.overrides == {"duration_s": 100.0, "warmup_s": 10.0}
    assert [a.labels for a in sw.axes] == [("DT-30", "DT-60", "RED"), ("10.0,5.0", "20.0,6.0")]
    assert sw.base_file == (study_file.parent / "base.toml").resolve()


def test_quick_thins_and_shortens(study_file, tmp_path):
    sw = sweepfile.read(scaling.derive(study_file, "quick", tmp_path / "o" / "quick.toml"))
    assert sw.repetitions == 1
    assert sw.overrides == {"duration_s": 20.0, "warmup_s": 10.0}
    # kept in file order, whatever the order of `keep`
    assert sw.axes[0].labels == ("DT-30", "RED")
    assert sw.axes[0].points == (({"kind": "droptail", "limit": 30},), ({"kind": "red"},))
    assert sw.axes[1].fields == ("topology.bottleneck_mbps", "duration_s")
    assert sw.axes[1].points == ((20.0, 6.0),)


@pytest.mark.parametrize(
    "scale_table, message",
    [
        ("", "no scale 'tiny' (offered: full, quick)"),
        ('[scale.tiny]\nkeep = { nope = ["x"] }', "scale.tiny.keep.nope: no such axis"),
        ('[scale.tiny]\nkeep = { queue = ["DT-99"] }', "no label 'DT-99'"),
        ("[scale.tiny]\nrepeat = 2", "scale.tiny.repeat: unknown key"),
    ],
)
def test_errors(study_file, tmp_path, scale_table, message):
    study_file.write_text(STUDY + "\n" + scale_table)
    with pytest.raises(sc.ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scaling.derive(study_file, "tiny", tmp_path / "o" / "tiny.toml")


def test_toml_writer_round_trip(tmp_path):
    doc = {
        "sweep": {"name": "a b", "set": {"queue.limit": 5, "x": [1.5, True, 'q"']}},
        "axis": [{"name": "n", "field": "f", "values": [{"kind": "red", "w": 0.002}]}],
    }
    p = tmp_path / "t.toml"
    p.write_text(scaling.to_toml(doc))
    assert sc.read_toml(p) == doc
