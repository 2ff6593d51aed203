"""The household pack (issue 37): its design (three plans, six queues with the L4S variant's
senders, every application present), and the smoke scale end to end (the per-application
comparison, the RRUL part and its Flent files)."""

from __future__ import annotations

from pathlib import Path

from aqmlab.analysis import flent_export as fe
from aqmlab.reproduce import household, reproduce, scaling, study_dir
from aqmlab.study import sweepfile

KINDS = ["dash", "video_call", "video_call", "voice", "game", "pages", "bulk", "bulk", "ping"]
QUEUES = ["fifo", "fq_codel", "cake", "pie", "dualpi2", "dualpi2+l4s"]


def _plan(tmp_path: Path, part: str, scale: str = "full") -> list[sweepfile.PlannedRun]:
    rel = household.PARTS[part]
    derived = scaling.derive(study_dir("household") / rel, scale, tmp_path / f"{part}.toml")
    return sweepfile.plan(sweepfile.read(derived), tmp_path / f"{part}-calibration.json")


def test_the_household_design(tmp_path):
    runs = _plan(tmp_path, "household")
    assert len(runs) == 3 * 6 * 10 and all(r.error is None for r in runs)
    prague = __import__("aqmlab").tcp_preset("linux-prague")["congestion_control"]
    for r in runs:
        s = r.scenario
        assert [t["kind"] for t in s["traffic"]] == KINDS
        down, up = s["topology"]["bottleneck_reverse_mbps"], s["topology"]["bottleneck_mbps"]
        assert up == down / 10 and r.labels["rate"] == f"{down:g}/{up:g} Mb/s"
        l4s = r.labels["qdisc"] == "dualpi2+l4s"
        tcps = s.get("traffic_tcp") or []
        # The TCP applications (video, pages, bulk) on Prague only in the L4S variant, and
        # the call's packets ECT(1) there.
        for i in (0, 5, 6, 7):
            cc = (tcps[i] if i < len(tcps) and tcps[i] else s["tcp"])["congestion_control"]
            assert (cc == prague) == l4s, (r.labels, i)
        assert all((s["traffic"][i]["ecn"] == "ect1") == l4s for i in (1, 2))
        assert s["queue"]["kind"] == {"fifo": "droptail", "dualpi2+l4s": "dualpi2"}.get(
            r.labels["qdisc"], r.labels["qdisc"]
        )
    assert {r.labels["qdisc"] for r in runs} == set(QUEUES)
    rrul = _plan(tmp_path, "rrul")
    assert len(rrul) == 3 * 6 * 10
    s = rrul[0].scenario
    assert [(t["kind"], t.get("direction"), t["flows"]) for t in s["traffic"]] == [
        ("bulk", "upload", 4),
        ("bulk", "download", 4),
        ("ping", None, 2),
    ]


def test_smoke_end_to_end(tmp_path):
    out = tmp_path / "hh"
    outcome = reproduce("household", "smoke", out, jobs=2, quiet=True)
    assert outcome.failed == 0 and outcome.runs == 6 + 4
    html = outcome.report.read_text(encoding="utf-8")
    assert "Who gains and who pays, per application" in html
    for app in ("video stream (DASH)", "video call", "voice call", "online game", "ping"):
        assert app in html, app
    assert "dualpi2+l4s against fifo" in html
    files = sorted((out / "rrul" / "flent").glob("*.flent.gz"))
    assert len(files) == 4
    doc = fe.read(files[0])
    series = doc["results"]
    assert sum(k.startswith("TCP upload BE::") for k in series) == 4
    assert sum(k.startswith("TCP download BE::") for k in series) == 4
    assert "Ping (ms) ICMP" in series and "Ping (ms) UDP BE" in series
    # The pings are the probes: one raw record per answered probe (0.2 s apart).
    raw = doc["raw_values"]["Ping (ms) ICMP"]
    assert len(raw) >= 25 and all(r["val"] > 0 for r in raw)
