"""`aqmlab tune`: the search finds a known optimum through the same code as a real tune (TPE,
halving, finalists, intervals, held-out seeds), gives the same result from the same file and
after an interruption, rejects bad tune files in one line, reuses catalogued runs when
resumed, and writes a report that opens cleanly in headless Chromium."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from chromium_support import Chromium, find_chromium
from conftest import cli
from report_support import WEB_BASE
from tune_support import BOWL_TUNE, OPTIMUM, SIM_TUNE, BowlEvaluator, truth, write_tune

from aqmlab import scenario as sc
from aqmlab.study import catalog
from aqmlab.tune import driver

# Stated tolerance: the winner within a factor 1.5 of the optimum in every parameter (the bowl
# rises by log(1.5)^2 = 0.16 per parameter there, about the noise of one 900-s run).
FACTOR = 1.5


def _bowl(tmp: Path, name: str, evaluator: BowlEvaluator | None = None) -> dict:
    path = write_tune(tmp, BOWL_TUNE, WEB_BASE)
    return driver.run_tune(
        path, tmp / name, evaluator=evaluator or BowlEvaluator(), quiet=True, report=False
    )


@pytest.fixture(scope="module")
def bowl(tmp_path_factory) -> dict:
    return _bowl(tmp_path_factory.mktemp("bowl"), "out")


def test_the_search_finds_the_known_optimum(bowl):
    w = bowl["winner"]
    for field, best in OPTIMUM.items():
        assert abs(math.log(w["settings"][field] / best)) <= math.log(FACTOR), (field, w)
    # The held-out interval covers the winner's true value; the finalist seeds chose it, so
    # only the held-out seeds give an unbiased estimate.
    held = w["heldout_interval"]
    assert held["n"] == 4 and held["low"] <= truth(w["settings"]) <= held["high"], held
    # The paired difference against the baseline covers the true difference and is much
    # narrower than the unpaired one (the shared noise cancels: common random numbers).
    far = truth({"queue.min_th": 5, "queue.max_th": 15, "queue.max_p": 0.1})
    comp = bowl["comparisons"][0]["heldout"]
    paired, unpaired = comp["paired"], comp["unpaired"]
    assert paired["low"] <= truth(w["settings"]) - far <= paired["high"], paired
    assert paired["half_width"] < 0.5 * unpaired["half_width"]
    # Halving: ⌈36/3^r⌉ trials at each rung, the finalists on training + finalist seeds.
    assert bowl["rungs"]["sizes"] == [36, 12, 4]
    assert len(w["final"]["seeds"]) == 7


def test_same_file_same_trials_and_after_an_interruption(bowl, tmp_path):
    again = _bowl(tmp_path, "again")
    params = [t["settings"] for t in bowl["trials"]]
    assert [t["settings"] for t in again["trials"]] == params
    assert again["winner"] == bowl["winner"]
    # Interrupted in the fourth batch (asked, not told), then resumed: the same search.
    with pytest.raises(KeyboardInterrupt):
        _bowl(tmp_path, "cut", BowlEvaluator(interrupt_after=3))
    assert driver.journal_trials(tmp_path / "cut") == 16
    resumed = _bowl(tmp_path, "cut")
    assert [t["settings"] for t in resumed["trials"]] == params
    assert resumed["winner"]["settings"] == bowl["winner"]["settings"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("low = 2\n", "low = 200\n", "param[0].high = 150: expected a number > low (200)"),
        ("trials = 36", "trails = 36", "tune.trails: unknown key, allowed: seeds,"),
        (
            'minimize = "p50_response_s"',
            'minimize = "p50"',
            'objective.minimize = "p50": unknown metric, allowed: p50_response_s,',
        ),
        (
            "heldout_seeds = [101,",
            "heldout_seeds = [4,",
            "tune.heldout_seeds = [4, 102, 103, "
            "104]: seed 4 is also in tune.finalist_seeds; the seed sets must be disjoint",
        ),
        (
            '"utilization >= 0.9"',
            '"utilization => 0.9"',
            'objective.constraints[0] = "utilization => 0.9": expected "METRIC >= number"',
        ),
        (
            "duration_s = [100.0, 300.0, 900.0]",
            "duration_s = [100.0, 50.0]",
            "tune.rungs.duration_s = [100.0, 50.0]: expected increasing lengths > warmup_s (10)",
        ),
        (
            'scenario = "base.toml"',
            'scenario = "A:nope.toml"',
            'tune.scenario = "A:nope.toml": no file nope.toml in the packaged study A',
        ),
        ("trials = 36", "trials = 0", "tune.trials = 0: expected an integer in 1..10000"),
        (
            "queue.min_th < queue.max_th",
            "queue.min_th < queue.limit",
            "queue.limit is not a [[param]] field",
        ),
    ],
)
def test_bad_tune_files_are_one_line_errors(tmp_path, old, new, message):
    assert old in BOWL_TUNE
    path = write_tune(tmp_path, BOWL_TUNE.replace(old, new, 1), WEB_BASE)
    with pytest.raises(sc.ScenarioError) as e:
        driver.run_tune(path, tmp_path / "out", evaluator=BowlEvaluator(), quiet=True)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_resume_with_another_search_space_is_refused(bowl, tmp_path):
    path = write_tune(tmp_path, BOWL_TUNE, WEB_BASE)
    driver.run_tune(path, tmp_path / "o", evaluator=BowlEvaluator(), quiet=True, report=False)
    path.write_text(BOWL_TUNE.replace("high = 0.5", "high = 0.9"), encoding="utf-8")
    with pytest.raises(sc.ScenarioError, match=r"made with another params; resume with"):
        driver.run_tune(path, tmp_path / "o", evaluator=BowlEvaluator(), quiet=True)


# --- through the simulator ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """A tiny real tune run three times into one directory: 3 trials, then 5, then 5 again."""
    d = tmp_path_factory.mktemp("tiny")
    out = d / "out"
    first = driver.run_tune(
        write_tune(d, SIM_TUNE.format(trials=3), WEB_BASE),
        out,
        jobs=1,
        quiet=True,
        report=False,
    )
    dirs_first = {p.name for p in (out / catalog.RUNS_DIR).iterdir()}
    second = driver.run_tune(
        write_tune(d, SIM_TUNE.format(trials=5), WEB_BASE), out, jobs=1, quiet=True
    )
    dirs_second = {p.name for p in (out / catalog.RUNS_DIR).iterdir()}
    third = driver.run_tune(d / "tune.toml", out, jobs=1, quiet=True, report=False)
    return {
        "out": out,
        "first": first,
        "second": second,
        "third": third,
        "dirs_first": dirs_first,
        "dirs_second": dirs_second,
    }


def test_a_resumed_tune_reuses_every_catalogued_run(tiny):
    first, second, third = tiny["first"], tiny["second"], tiny["third"]
    assert first["runs_made_now"] == len(tiny["dirs_first"]) > 0
    # More trials: only the runs not made before are made (each of the first three trials'
    # runs at the first rung is read back).
    new = tiny["dirs_second"] - tiny["dirs_first"]
    assert second["runs_made_now"] == len(new) > 0
    first_rung = {rid for t in first["trials"] for rid in t["rungs"]["0"]["run_ids"]}
    assert first_rung <= tiny["dirs_first"] and not first_rung & new
    assert len(second["trials"]) == 5
    # The same command once more: nothing runs, the same outcome.
    assert third["runs_made_now"] == 0
    assert third["winner"] == second["winner"] and third["trials"] == second["trials"]
    # Every run is in the catalog.
    assert len(catalog.read_runs(tiny["out"])) == len(tiny["dirs_second"])
    doc = json.loads((tiny["out"] / "tune.json").read_text())
    names = [b["name"] for b in doc["baselines"]]
    assert names == ["defaults", "Floyd 1997"]
    assert all(b["heldout_interval"]["n"] == 1 for b in doc["baselines"])


def test_the_report_opens_cleanly_in_chromium(tiny):
    report = tiny["out"] / "report.html"
    html = report.read_text(encoding="utf-8")
    for heading in (
        "Best settings",
        "Against the baselines",
        "Response surface",
        "Search history",
        "Method and limits",
    ):
        assert f">{heading}</h2>" in html, heading
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium found (install Debian's chromium package; `make test` does)")
    b = Chromium(binary)
    try:
        page = b.open(report, 1280, 900)
    finally:
        b.close()
    assert page.console_errors == [] and page.failed_requests == []
    # comparison, 3 objective-vs-parameter, 3 heat maps, history
    assert len(page.images) == 8
    assert all(complete and w > 0 and h > 0 for complete, w, h in page.images), page.images


def test_the_command_line_error_is_one_line(tmp_path):
    path = write_tune(tmp_path, BOWL_TUNE.replace("low = 2\n", "low = 200\n", 1), WEB_BASE)
    r = cli("tune", path, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert r.stderr == "error: param[0].high = 150: expected a number > low (200)\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["study_a_red_90", "study_a_codel_90", "study_a_pie_90"])
def test_the_packaged_tune_files_plan_at_every_scale(name, tmp_path):
    from aqmlab.tune import search, tunefile
    from aqmlab.tune.evaluate import StudyEvaluator

    path = tunefile.studies_dir() / "tune" / f"{name}.toml"
    scales = tunefile.read(path).scales
    assert scales == ["full", "quick", "smoke"]
    for scale in scales:
        tune = tunefile.read(path, scale)
        assert tune.baselines and tune.heldout_seeds
        # The middle of the space and every baseline, planned by the core (nothing runs).
        StudyEvaluator(tune, tmp_path, backend=None).check(search.check_requests(tune))
    assert not any(tmp_path.iterdir())
