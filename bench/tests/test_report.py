"""The section's figures: per-packet costs, the targets' ratios, passed-on lines, the pack."""

from pathlib import Path

import pytest

from bench import cases, ratios, report
from bench.measure import Sample
from bench.output import Figure, Output
from bench.results import CaseResult, cpu_per_packet
from bench.sides import Side


def core_sample(cpu_s: float, packets: float, extra_line: float | None = None) -> Sample:
    figures = {
        "bottleneck packets": Figure(packets, ""),
        "bottleneck packets/wall-s": Figure(packets / cpu_s, ""),
        "simulated s/wall-s": Figure(60 / cpu_s, ""),
        "loss rate (data dir.)": Figure(0.01, ""),
    }
    if extra_line is not None:
        figures["memory per open connection"] = Figure(extra_line, "B")
    return Sample(cpu_s * 1.01, cpu_s, 5.0, Output("bench", 60.0, figures))


def result(key: str, ref: list[Sample], new: list[Sample]) -> CaseResult:
    return CaseResult(cases.BY_KEY[key], samples={"ref": ref, "new": new})


@pytest.fixture
def run() -> report.Run:
    reno = result(
        "greedy-reno",
        [core_sample(0.20, 1e6), core_sample(0.22, 1e6), core_sample(0.21, 1e6)],
        [core_sample(0.10, 1e6, 900), core_sample(0.12, 1e6, 900), core_sample(0.11, 1e6, 900)],
    )
    cubic = result(
        "greedy-cubic",
        [core_sample(0.60, 1e6)] * 3,
        [core_sample(0.22, 1e6, 950)] * 3,
    )
    pack = {"runs": 10.0, "whole CPU per run": 0.12, "core CPU per run": 0.03, "report CPU": 8.0}
    rfc = result(
        "rfc7928",
        [Sample(25.0, 26.0, 200.0, extra=pack)],
        [Sample(14.0, 14.0, 150.0, extra={**pack, "whole CPU per run": 0.04})],
    )
    machine = {k: k for k in ("cpu", "cores", "memory", "os", "kernel", "rustc", "python")}
    return report.Run(
        ref=Side("ref", "reference", "79242fd", Path("ref")),
        new=Side("new", "this tree", "abc1234", Path("new")),
        results={r.case.key: r for r in (reno, cubic, rfc)},
        runs=3,
        quick=False,
        machine=machine,
        date="2026-01-01",
        load_before="1.00, 1.00, 1.00",
        load_after="1.00, 1.00, 1.00",
        elapsed_s=600.0,
        rss_floor_mib=15.0,
    )


def test_cpu_per_packet():
    assert cpu_per_packet(core_sample(0.2, 1e6)) == pytest.approx(2e-7)
    assert cpu_per_packet(Sample(1.0, 1.0, 1.0)) is None  # no packets line


def test_modern_stack_ratio_per_side(run):
    got = {r.num: v for r, v in ratios.compute(run.results, "ref")}
    assert got["greedy-cubic"].ratio == pytest.approx(0.60 / 0.21)
    got = {r.num: v for r, v in ratios.compute(run.results, "new")}
    assert got["greedy-cubic"].ratio == pytest.approx(0.22 / 0.11)
    # Ratios whose cases were not measured are left out, not shown empty.
    assert "web1g-cubic" not in got


def test_pack_ratio_is_whole_over_core_per_run(run):
    got = {r.num: v for r, v in ratios.compute(run.results, "new")}
    assert got["rfc7928"].ratio == pytest.approx(0.04 / 0.03)


def test_section_has_the_tables_and_passes_on_new_lines(run):
    text = report.render(run)
    assert "| 100 greedy flows" in text
    assert "0.210 s (0.200–0.220)" in text  # reference CPU: median (min–max)
    assert "×0.524" in text  # paired CPU ratio of greedy-reno: 0.11 / 0.21
    assert "210 → 110 ns" in text  # CPU per bottleneck packet
    assert "memory per open connection" in text
    assert "— → 900 B" in text  # a line only the new binary prints
    assert "×2.857 (600 / 210 ns)" in text  # cubic / Reno per packet, reference
    assert "through the whole command 120 → 40.0 ms" in text
    assert text.endswith("\n") and "\n\n\n" not in text


def test_packets_shown_once_when_equal_and_both_when_not(run):
    assert "| `greedy-reno` | 1,000,000 |" in report.render(run)
    run.results["greedy-reno"].samples["new"] = [core_sample(0.1, 2e6)]
    assert "| `greedy-reno` | 1,000,000 → 2,000,000 |" in report.render(run)


def test_number_format():
    assert report.num(0.171) == "0.171"
    assert report.num(12.34) == "12.3"
    assert report.num(1390.2) == "1,390"
    assert report.num(None) == "—"
    assert report.num(0) == "0"
