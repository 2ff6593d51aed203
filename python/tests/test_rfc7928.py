"""`aqmlab rfc7928` (docs/rfc7928.md): the --aqm parser's errors, the §2 metrics against
hand-computed values, the verdict rules, every section's sweep file at every scale, and the
pack end to end at smoke scale with its report in headless Chromium."""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import polars as pl
import pytest
from chromium_support import Chromium, find_chromium
from conftest import missing_figures, table_rows

from aqmlab import cli
from aqmlab.errors import ScenarioError
from aqmlab.rfc7928 import STUDY_DIR, core_has_hops, run_pack
from aqmlab.rfc7928 import metrics as mt
from aqmlab.rfc7928 import verdicts as vd
from aqmlab.rfc7928.queues import parse_aqm_list, read_queue_file, with_ecn
from aqmlab.rfc7928.sections import SECTIONS

# --- the --aqm parser ---------------------------------------------------------------------


def test_aqm_list_with_parameters():
    schemes = parse_aqm_list("droptail,codel:target_ms=5,interval_ms=100,pie")
    assert [s.label for s in schemes] == ["droptail", "codel(target_ms=5,interval_ms=100)", "pie"]
    assert schemes[1].queue == {"kind": "codel", "target_ms": 5, "interval_ms": 100}
    # The section's buffer unless the scheme sets its own limit.
    assert schemes[2].table(83) == {"kind": "pie", "limit": 83}
    assert parse_aqm_list("pie:limit=10")[0].table(83)["limit"] == 10
    # Linux's own queues by tc's words: sch_pie in packets; sch_red in bytes (the buffer's
    # 1500-byte packets) with tc-red(8)'s avpkt unless given.
    linux = parse_aqm_list("pie_linux,red_linux,red_linux:avpkt=1500,limit=90000")
    assert linux[0].table(83) == {"kind": "pie_linux", "limit": 83}
    assert linux[1].table(83) == {"kind": "red_linux", "limit": 124500, "avpkt": 1000}
    assert linux[2].table(83) == {"kind": "red_linux", "limit": 90000, "avpkt": 1500}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("codl", "'codl': unknown queue, allowed: droptail"),
        ("codel:target_ms", "expected NAME:key=value"),
        ("target_ms=5", "a parameter before any queue name"),
        ("codel,,pie", "empty entry"),
        ("codel,codel", "'codel' is listed twice"),
        ("codel:kind=pie", "kind: set by the queue's name"),
    ],
)
def test_aqm_list_errors_are_one_line(text, message):
    with pytest.raises(ScenarioError, match="--aqm") as e:
        parse_aqm_list(text)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_cli_names_a_bad_queue_parameter(capsys, tmp_path):
    assert cli.main(["rfc7928", "--aqm", "codel:taget_ms=5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --aqm codel(taget_ms=5): ") and "taget_ms" in err
    assert err.count("\n") == 1


def test_queue_file(tmp_path):
    f = tmp_path / "q.toml"
    f.write_text('[codel-10ms]\nkind = "codel"\ntarget_ms = 10.0\n[fifo]\nkind = "droptail"\n')
    assert [s.label for s in read_queue_file(f)] == ["codel-10ms", "fifo"]
    f.write_text('[x]\nkind = "nope"\n')
    with pytest.raises(ScenarioError, match=r"\[x\]\.kind: 'nope': unknown queue"):
        read_queue_file(f)


def test_ecn_switch_per_kind():
    assert with_ecn({"kind": "red"})["ecn"] == "rfc3168"
    assert with_ecn({"kind": "codel"})["ecn"] is True
    assert "ecn" not in with_ecn({"kind": "droptail"})
    assert with_ecn({"kind": "pie", "ecn": False})["ecn"] is False


# --- metrics against hand-computed values --------------------------------------------------


def test_jain_index():
    assert mt.jain([1.0, 1.0, 1.0, 1.0]) == 1.0
    assert mt.jain([3.0, 1.0]) == pytest.approx(16 / 20)  # (3+1)^2 / (2 (9+1))
    assert math.isnan(mt.jain([]))


def test_ellipse_axes():
    # x variance (1+1)/3, y variance (4+4)/3, no covariance: the major axis is vertical.
    e = mt.ellipse([-1, 1, 0, 0], [0, 0, -2, 2])
    assert (e["cx"], e["cy"]) == (0.0, 0.0)
    assert e["major"] == pytest.approx(math.sqrt(8 / 3))
    assert e["minor"] == pytest.approx(math.sqrt(2 / 3))
    assert abs(e["angle"]) % 180 == pytest.approx(90)
    # Points on y = x: covariance [[1, 1], [1, 1]], eigenvalues 2 and 0, at 45 degrees.
    e = mt.ellipse([0, 1, 2], [0, 1, 2])
    assert e["major"] == pytest.approx(math.sqrt(2)) and e["minor"] == pytest.approx(0, abs=1e-9)
    assert e["angle"] % 180 == pytest.approx(45)
    assert math.isnan(mt.ellipse([1.0], [2.0])["major"])


def test_drop_and_mark_probability():
    link = {"arrivals": 1000, "drops_early": 5, "drops_forced": 3, "drops_overflow": 2, "marks": 7}
    assert mt.drop_mark_probability(link) == pytest.approx((0.010, 0.007))
    assert all(math.isnan(x) for x in mt.drop_mark_probability({"arrivals": 0}))


def test_delay_quantiles_from_a_histogram():
    h = pl.DataFrame(
        {
            "delay_ms": [0.0, 1.0, 2.0, 50.0],
            "width_ms": [1.0, 1.0, 1.0, math.inf],  # the open last bin is left out
            "count": [50, 30, 20, 0],
        }
    )
    q = mt.delay_quantiles(h)
    assert q["delay_mean_ms"] == pytest.approx((0.5 * 50 + 1.5 * 30 + 2.5 * 20) / 100)
    assert (q["delay_p50_ms"], q["delay_p95_ms"], q["delay_p99_ms"]) == (1.0, 3.0, 3.0)


def test_chain_rows_are_read_per_hop():
    table = pl.DataFrame({"direction": ["forward"] * 3, "hop": [0, 1, 0], "count": [1, 2, 3]})
    assert mt.first_hop(table)["count"].to_list() == [1, 3]
    assert mt.first_hop(table.drop("hop")).height == 3  # a dumbbell's table as it is
    hop = {"arrivals": 200, "drops_early": 2, "marks": 1, "utilization": 0.9}
    summary = {
        "summary": {
            "hops": [{"hop": 1, "mbps": 10.0, "queue_forward": {"kind": "codel"}, "forward": hop}]
        }
    }
    (row,) = mt.hop_rows(summary)
    assert (row["hop"], row["queue"], row["drop prob"], row["mark prob"]) == (
        1,
        "codel",
        0.01,
        0.005,
    )
    assert mt.hop_rows({"summary": {}}) == []


class _FakeRun:
    """A run's results as `run_metrics` reads them: `summary` and tables by name."""

    def __init__(self, summary: dict, tables: dict[str, pl.DataFrame]):
        self.summary, self._tables = summary, tables

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self._tables[name]


def test_lbe_sources_and_share():
    # A source runs LEDBAT by its own `tcp` (preset name, or table), as the core resolves it
    # (`traffic_tcp`), or by the scenario's.
    bulk = {"kind": "bulk", "flows": 1}
    sc = {"traffic": [bulk, {**bulk, "tcp": "linux-ledbat"}], "tcp": {"preset": "linux-reno"}}
    assert mt.lbe_sources(sc) == [1]
    resolved = {"traffic": [bulk, bulk], "traffic_tcp": [None, {"congestion_control": "ledbat"}]}
    assert mt.lbe_sources(resolved) == [1]
    assert mt.lbe_sources({"traffic": [bulk], "tcp": {"preset": "linux-ledbat"}}) == [0]
    overridden = {
        "traffic": [{**bulk, "tcp": {"preset": "linux-ledbat", "congestion_control": "cubic"}}]
    }
    assert mt.lbe_sources(overridden) == []
    # 7.5 MB and 2.5 MB delivered in 10 s: 6 and 2 Mb/s, LEDBAT's share 2 / 8.
    conns = pl.DataFrame(
        {
            "source": [0, 1],
            "bytes_delivered_measured": [7_500_000, 2_500_000],
            "completed": [False, False],
            "start_s": [0.0, 0.0],
        }
    )
    run = _FakeRun({"summary": {"measured_s": 10.0, "forward": {}}}, {"connections": conns})
    m = mt.run_metrics(run, resolved)
    assert (m["source0_mbps"], m["lbe_mbps"]) == (pytest.approx(6.0), pytest.approx(2.0))
    assert m["lbe_share"] == pytest.approx(0.25)
    assert "lbe_share" not in mt.run_metrics(run, {"traffic": [bulk, bulk]})


def test_verdict_rules():
    base_d, base_g = [10.0, 11.0, 12.0], [9.0, 9.1, 8.9]
    assert vd.verdict(base_d, [2.0, 3.0, 2.5], base_g, [9.0, 9.05, 8.95]) == "better"
    assert vd.verdict(base_d, [2.0, 3.0, 2.5], base_g, [5.0, 5.1, 4.9]) == "trade-off"
    assert vd.verdict(base_d, [20.0, 21.0, 22.0], base_g, base_g) == "worse"
    assert vd.verdict(base_d, [10.5, 11.5, 11.0], base_g, [9.05, 8.95, 9.0]) == "≈ drop-tail"
    # Lower is better for completion times.
    assert vd.verdict(base_d, base_d, [1.0, 1.1, 0.9], [2.0, 2.1, 1.9], False) == "worse"
    assert vd.verdict([10.0], [2.0], [9.0], [9.0]) == "n/a"


# --- sweep files ----------------------------------------------------------------------------


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.key)
def test_sweep_file_validates_at_every_scale(section, capsys):
    if section.needs_hops and not core_has_hops():
        pytest.skip("the core has no chain of bottlenecks (topology.hops) yet")
    assert cli.main(["validate", str(STUDY_DIR / section.file)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("(scale ")[1].split(")")[0] for line in lines] == ["full", "quick", "smoke"]
    assert all(line.startswith("ok: ") and "0 failures" in line for line in lines)


def test_multi_aqm_is_left_out_without_hops(tmp_path):
    from aqmlab.rfc7928 import select_sections

    chosen, skipped = select_sections(None)
    keys = [s.key for s in chosen]
    assert ("multi_aqm" in keys) == core_has_hops()
    assert ("multi_aqm" in {k for k, _ in skipped}) != core_has_hops()


# --- end to end -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rfc7928") / "pack"
    outcome = run_pack(
        parse_aqm_list("droptail,codel"),
        "congestion,varying_congestion",
        "smoke",
        out,
        jobs=2,
        repetitions=2,
        quiet=True,
    )
    assert outcome.failed == 0 and outcome.runs == 8
    return outcome.report


def test_smoke_report_has_every_section(pack):
    html = pack.read_text(encoding="utf-8")
    caption = "Verdicts against drop-tail, counted over the scenarios of each section"
    assert table_rows(html, caption) == 2
    for rfc in ("8.2.2-8.2.4", "8.2.5"):
        cap = f"§{rfc}: verdict and numbers per scenario and scheme (means over repetitions)"
        assert table_rows(html, str(escape(cap))) == 1
    assert "baseline: delay" in html and "codel" in html
    assert "1-sigma" in html and "twice its standard error" in html
    assert "Packet scheduling is not a section" in html  # the sections not run, and why
    assert not missing_figures(
        pack.parent,
        "congestion_ellipses",
        "congestion_delay_cdf",
        "varying_congestion_ellipses",
        "varying_congestion_over_time",
    )
    # Resumable: the section's sweep run again finds every run done and runs nothing.
    from aqmlab.study import sweep

    again = sweep.run_sweep(
        pack.parent / "sweeps" / "congestion.toml", pack.parent / "congestion", jobs=1, quiet=True
    )
    assert (again.total, again.skipped, again.ran, again.failed) == (4, 4, 0, 0)


def test_lbe_section_reports_ledbat_share(tmp_path):
    """§5.4 end to end at smoke scale: NewReno and LEDBAT through drop-tail and CoDel, the
    share table one row per scheme, the section no longer among those not run."""
    outcome = run_pack(
        parse_aqm_list("droptail,codel"), "lbe", "smoke", tmp_path / "p", jobs=1, quiet=True
    )
    assert outcome.failed == 0 and outcome.runs == 2
    html = outcome.report.read_text(encoding="utf-8")
    cap = (
        "§5.4: the less-than-best-effort (LEDBAT, TARGET 100 ms) flow: its goodput and share "
        "(mean over repetitions)"
    )
    assert table_rows(html, cap) == 2
    assert "§5.4</td>" not in html.split("RFC 7928 sections not run")[-1]


def test_smoke_report_opens_cleanly_in_chromium(pack):
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium found (install Debian's chromium package; `make test` does)")
    browser = Chromium(binary)
    try:
        page = browser.open(pack, 1280, 900)
    finally:
        browser.close()
    assert page.console_errors == []
    assert page.failed_requests == []
    assert len(page.images) >= 5
    assert all(complete and w > 0 and h > 0 for complete, w, h in page.images)
    assert {url.split(":", 1)[0] for url in page.requests} <= {"file", "data"}
