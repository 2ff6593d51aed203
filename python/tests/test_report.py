"""The study report (`aqmlab report`, `aqmlab.report.write_report`) on tiny studies: one
self-contained HTML file, the summary table against the catalog, figures as PNG and SVG,
determinism, grouping, studies without exchanges, failed runs, and the command's errors."""

from __future__ import annotations

import base64
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import cli
from report_support import (
    image_sources,
    make_bulk_study,
    make_one_rep_study,
    make_web_study,
    tables,
)

from aqmlab.report import study_layout, study_plots, write_report
from aqmlab.scenario import ScenarioError
from aqmlab.study import Study, sweepfile

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def web(tmp_path_factory) -> Path:
    return make_web_study(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def web_report(web) -> str:
    figures = web / "figures"
    figures.mkdir()
    (figures / "stale.png").write_bytes(b"from an earlier report")
    (figures / "notes.txt").write_text("the user's own file", encoding="utf-8")
    path = write_report(web)
    assert path == web / "report.html"
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def bulk(tmp_path_factory) -> Path:
    return make_bulk_study(tmp_path_factory.mktemp("bulk"))


@pytest.fixture(scope="module")
def one(tmp_path_factory) -> Path:
    """One repetition per cell, `load =` calibrated by the sweep, no connection table."""
    return make_one_rep_study(tmp_path_factory.mktemp("one"))


@pytest.fixture(scope="module")
def one_report(one) -> str:
    return write_report(one).read_text(encoding="utf-8")


def _summary(html: str, marker: str) -> list[list[str]]:
    return next(t for t in tables(html) if marker in t[0])


# Student's t_{0.975, 1}: the 95 % interval of a mean of two repetitions.
T_975_1 = 12.706204736174698


def _mean_ci(values: list[float], digits: int) -> str:
    """How the report prints two repetitions, computed by hand: mean ± the half-width of the
    95 % Student t confidence interval, t × sd / sqrt(n)."""
    a, b = values
    sd = abs(a - b) / math.sqrt(2)
    return f"{(a + b) / 2:,.{digits}f} ± {T_975_1 * sd / math.sqrt(2):,.{digits}f}"


def _per_run(study: Study, q: float) -> dict[str, float]:
    """run_id -> the q-quantile (linear interpolation) of its completed exchanges started
    after the 1-s warm-up, by hand with numpy."""
    ex = study.table("exchanges")
    ex = ex.filter(ex["completed"] & (ex["start_s"] >= 1.0))
    return {
        rid: float(np.quantile(part["response_time_s"].to_numpy(), q))
        for (rid,), part in ex.partition_by("run_id", as_dict=True).items()
    }


def test_the_report_is_one_self_contained_file(web_report):
    html = web_report
    assert "<script" not in html and "<link" not in html and "url(" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!data:image/png;base64,)""", html)
    sources = image_sources(html)
    assert len(sources) >= 6
    for src in sources:
        png = base64.b64decode(src.removeprefix("data:image/png;base64,"), validate=True)
        assert png.startswith(PNG_MAGIC)
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width > 300 and height > 200


def test_the_summary_table_holds_each_cell_mean_and_spread(web, web_report):
    rows = _summary(web_report, "throughput (Mb/s)")
    header, body = rows[0], rows[1:]
    assert header[:3] == ["load", "queue", "runs"]
    # One convention (issue 36): rates in Mb/s, shares in %.
    for column in ("throughput (Mb/s)", "utilization (%)", "loss rate (%)", "completed exchanges"):
        assert column in header
    # Ordered like the figures: by load (one figure each), then by scheme (the curves).
    assert [r[:3] for r in body] == [
        ["0.5", "DT", "2"],
        ["0.5", "RED", "2"],
        ["1.0", "DT", "2"],
        ["1.0", "RED", "2"],
    ]
    shown = {
        "median_response_s": ("median response (s)", 3),
        "exchanges_completed": ("completed exchanges", 0),
    }
    runs = Study.open(web).runs()
    for row in body:
        cell = runs.filter((runs["load"] == row[0]) & (runs["queue"] == row[1]))
        for column, (name, digits) in shown.items():
            assert row[header.index(name)] == _mean_ci(cell[column].to_list(), digits)
    caption = re.search(r"<caption>(Per cell[^<]*)</caption>", web_report).group(1)
    assert "95 % confidence interval" in caption and "Student t" in caption


def test_the_ranking_then_the_cdfs_come_first_then_the_summary(web, web_report):
    html = web_report
    sources = image_sources(html)
    first = [base64.b64decode(s.removeprefix("data:image/png;base64,")) for s in sources[:3]]
    assert first[0] == (web / "figures" / "response_time_ranking_load_0.5.png").read_bytes()
    assert first[2] == (web / "figures" / "response_time_cdf_load_0.5.png").read_bytes()
    marks = (">Response times at a glance<", "p90 response", ">Response times<", "Per cell")
    order = [html.index(s) for s in (*marks, ">Response-time tails<")]
    assert order == sorted(order)


def test_the_ranking_gives_paired_differences(web, web_report):
    """Issue 36: every scheme ran the same seeds; the report pairs them by repetition."""
    assert "Paired differences of the median response time" in web_report
    rows = _summary(web_report, "− baseline")
    header = rows[0]
    assert header[-3:] == ["scheme", "− baseline", "− the one ranked above"]
    assert all(
        r[-2].endswith(("lower", "higher", "cannot be told apart", "no interval)"))
        for r in rows[1:]
    )


def test_the_ranking_sorts_schemes_by_median_response_time_with_intervals(web, web_report):
    rows = _summary(web_report, "p90 response (s)")
    header, body = rows[0], rows[1:]
    assert header == ["load", "rank", "queue", "runs", "median response (s)", "p90 response (s)"]
    study = Study.open(web)
    runs = study.runs()
    p50, p90 = _per_run(study, 0.5), _per_run(study, 0.9)
    want = []
    for load in ("0.5", "1.0"):
        cells = []
        for queue in ("DT", "RED"):
            ids = runs.filter((runs["load"] == load) & (runs["queue"] == queue))["run_id"]
            cells.append((queue, [p50[r] for r in ids], [p90[r] for r in ids]))
        cells.sort(key=lambda c: sum(c[1]) / 2)
        for rank, (queue, med, top) in enumerate(cells, 1):
            shown = [_interval(v) for v in (med, top)]
            want.append([load, str(rank), queue, "2", *shown])
    assert body == want
    # The median is the summary table's, a mean of the runs' medians (Study A's column).
    for load, _, queue, _, med, _ in body:
        cell = runs.filter((runs["load"] == load) & (runs["queue"] == queue))
        assert med.startswith(f"{cell['median_response_s'].mean():.3f} [")
    caption = re.search(r"<caption>(Ranked by[^<]*)</caption>", web_report).group(1)
    assert "95 % confidence interval" in caption and "Student t" in caption


def _interval(values: list[float]) -> str:
    """mean [low, high], the 95 % Student t interval of two values, three decimals."""
    a, b = values
    mean, half = (a + b) / 2, T_975_1 * abs(a - b) / 2
    return f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]"


def test_one_repetition_says_there_is_no_interval(one, one_report):
    html = one_report
    assert "± 0.000" not in html and "sd 0.000" not in html
    summary = _summary(html, "throughput (Mb/s)")
    assert all("±" not in cell for row in summary[1:] for cell in row)
    ranking = _summary(html, "p90 response (s)")
    assert all("[" not in cell for row in ranking[1:] for cell in row)
    captions = [
        c for c in re.findall(r"<caption>([^<]*)</caption>", html) if c.startswith(("Per", "Ra"))
    ]
    assert [c.split(" ")[0] for c in captions] == ["Ranked", "Per"]
    for caption in captions:
        assert "no interval (1 repetition)" in caption, caption
    # The metric plots say it too, instead of drawing zero-length error bars.
    metrics = html.split(">Metrics against load<")[1]
    assert "no interval (1 repetition)" in metrics.split("<figure")[0]
    # The report needs neither the connection table nor the arrival series.
    study = Study.open(one)
    assert "connections" not in study.tables() and study.table("arrivals").height == 0


def test_the_load_basis_is_explained_next_to_the_summary(one, one_report, web_report):
    html = one_report
    after = html.split("Per cell")[1].split("<h2")[0]
    notes = re.findall(r'<p class="note">([^<]*)</p>', after)
    (note,) = [n for n in notes if n.startswith("Load and utilization")]
    note = note.replace("&#34;", '"').replace("&#39;", "'")
    for words in ("offered load", "uncongested", "calibration", "utilization", "busy"):
        assert words in note, words
    # The calibration's points against its fitted line, in per cent of the capacity.
    (entry,) = json.loads((one / "calibration.json").read_text())["entries"].values()
    off = [
        100 * (p["load_mbps"] - entry["slope_mbps"] * p["population"]) / entry["capacity_mbps"]
        for p in entry["points"]
    ]
    assert f"{min(off):+.1f} % to {max(off):+.1f} %" in note
    # The utilization each load reached, over the schemes.
    runs = Study.open(one).runs()
    for load in ("0.5", "0.9"):
        u = runs.filter(runs["load"] == load)["utilization"]
        assert f"load {load}: {100 * u.min():.1f}–{100 * u.max():.1f} %" in note
    # A study whose load axis sets the population directly has no calibration to explain.
    assert "Load and utilization" not in web_report


def test_the_main_job_keeps_repetitions_and_only_the_tables_its_report_reads():
    main = sweepfile.read(Path(__file__).parents[2] / "examples" / "sweeps" / "main.toml")
    assert main.repetitions >= 5  # a Student t interval with at least 4 degrees of freedom
    assert main.overrides["measure.connections"] is False
    assert main.overrides["measure.burst_bin_ms"] == 0


def test_figures_are_written_as_png_and_svg(web, web_report):
    figures = web / "figures"
    assert not (figures / "stale.png").exists()  # an earlier report's figure is gone
    assert (figures / "notes.txt").exists()  # anything else stays
    pngs = {p.stem for p in figures.glob("*.png")}
    assert pngs == {p.stem for p in figures.glob("*.svg")}
    assert len(pngs) == len(image_sources(web_report))
    for load in ("0.5", "1.0"):
        for kind in (
            "response_time_ranking",
            "response_time_cdf",
            "response_time_ccdf",
            "queue_delay_cdf",
        ):
            assert f"{kind}_load_{load}" in pngs
    assert {"metrics_vs_load", "queue_traces"} <= pngs
    for stem in pngs:
        assert (figures / f"{stem}.png").read_bytes().startswith(PNG_MAGIC)
        assert ET.parse(figures / f"{stem}.svg").getroot().tag.endswith("svg")


def test_the_report_command_writes_the_same_report_again(web, web_report, tmp_path):
    out = tmp_path / "again.html"
    r = cli("report", web, "--out", out, "--figures", tmp_path / "figures")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"report: {out}"
    assert out.read_text(encoding="utf-8") == web_report
    for p in sorted((tmp_path / "figures").iterdir()):
        assert p.read_bytes() == (web / "figures" / p.name).read_bytes(), p.name


def test_study_plots_read_the_study_themselves(web):
    study = Study.open(web)
    fig = study_plots.response_time_cdf(study, where={"load": "1.0"})
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert list(lines) == ["DT", "RED"]
    ex = study.table("exchanges")
    for label, line in lines.items():
        # Completed exchanges of that cell started after the 1-s warm-up, by hand.
        rt = ex.filter(
            (ex["load"] == "1.0") & (ex["queue"] == label) & ex["completed"] & (ex["start_s"] >= 1)
        )["response_time_s"].to_list()
        assert line.get_xdata()[-1] == 2.0
        assert line.get_ydata()[-1] == pytest.approx(sum(t <= 2.0 for t in rt) / len(rt))

    runs = study.runs()
    fig = study_plots.metrics_vs_load(study)
    utilization = fig.axes[0]
    assert utilization.get_ylabel() == "utilization (%)"
    for line in utilization.get_lines():
        label = line.get_label()
        if label.startswith("_"):
            continue
        want = [
            100
            * runs.filter((runs["queue"] == label) & (runs["load"] == load))["utilization"].mean()
            for load in ("0.5", "1.0")
        ]
        assert list(line.get_xdata()) == [0.5, 1.0]
        assert list(line.get_ydata()) == pytest.approx(want)

    chosen = study_plots.representative_runs(study)
    assert list(chosen) == ["DT", "RED"]
    for label, run_id in chosen.items():
        row = runs.filter(runs["run_id"] == run_id).row(0, named=True)
        assert (row["queue"], row["load"], row["rep"]) == (label, "1.0", 0)


def test_group_by_chooses_the_figures_and_the_curves(web):
    study = Study.open(web)
    default = study_layout.layout(study)
    assert (default.group_by, default.curves) == (("load",), ("queue",))
    by_queue = study_layout.layout(study, ["queue"])
    assert (by_queue.group_by, by_queue.curves) == (("queue",), ("load",))
    assert study_layout.groups(study.runs(), by_queue.group_by) == [
        {"queue": "DT"},
        {"queue": "RED"},
    ]
    fig = study_plots.response_time_cdf(study, {"queue": "RED"}, curves=by_queue.curves)
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == ["0.5", "1.0"]
    assert fig.axes[0].get_title() == "Response time CDF: queue = RED"


def test_group_by_names_an_axis(web):
    with pytest.raises(
        ScenarioError,
        match=r"--group-by bogus: not an axis of the study "
        r"\(axes: queue, load, rep\)",
    ):
        write_report(web, group_by=["bogus"])


def test_a_study_without_exchanges_shows_goodput_loss_and_delay(bulk):
    html = write_report(bulk).read_text(encoding="utf-8")
    rows = _summary(html, "TCP goodput (Mb/s)")
    header, body = rows[0], rows[1:]
    assert "median response (s)" not in header and "queueing delay p99 (ms)" in header
    assert [r[:2] for r in body] == [["15", "1"], ["60", "1"]]  # the failed cell has no row
    runs = Study.open(bulk).runs()
    for row in body:
        goodput = runs.filter(runs["buffer"] == row[0])["tcp_goodput_mbps"][0]
        assert row[header.index("TCP goodput (Mb/s)")] == f"{goodput:,.3f}"
    assert ">Response times<" not in html
    stems = {p.stem for p in (bulk / "figures").glob("*.png")}
    assert stems == {"metrics_by_cell", "queue_traces", "queue_delay_cdf"}


def test_failed_runs_are_listed_with_their_errors(bulk):
    html = (bulk / "report.html").read_text(encoding="utf-8")
    failed = Study.open(bulk).runs(status="failed").row(0, named=True)
    rows = _summary(html, "error")
    assert rows[0] == ["run_id", "buffer", "rep", "error"]
    assert rows[1] == [failed["run_id"], "-3", "0", failed["error"]]
    assert "queue.limit" in failed["error"]


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_report_of_a_non_study_is_a_one_line_error(tmp_path, make):
    target = tmp_path / "nothing"
    if make == "empty":
        target.mkdir()
    r = cli("report", target)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"error: {target}: not an aqmlab study directory")
    assert not (target / "report.html").exists()


def test_report_with_an_unknown_axis_is_a_one_line_error(web):
    r = cli("report", web, "--group-by", "speed")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--group-by speed: not an axis of the study" in r.stderr
