"""The bed's choice of bottleneck qdisc and its user-mode Linux runner, in the parts that run
without root or a guest: both sides of each qdisc set to the same values, the labels and
configurations of the runs, the guest's module order and job file, UML's command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import aqmlab
from aqmlab import scenario as sc
from validation.linux import __main__ as cli
from validation.linux import bed, guest, model, qdiscs, uml


def _ms(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)ms", text)
    assert m, text
    return float(m.group(1))


def _opt(args: list[str], key: str) -> str:
    return args[args.index(key) + 1]


@pytest.mark.parametrize("name", qdiscs.NAMES)
def test_each_qdisc_is_a_valid_aqmlab_queue(name: str) -> None:
    limit = qdiscs.check(name, None)
    doc = model.scenario(flows=2, rtts_ms=[40.0, 40.0], limit=limit, seconds=5.0, warmup=2.0,
                         queue=qdiscs.aqmlab_queue(name, limit))  # fmt: skip
    resolved = sc.resolve(doc)
    aqmlab.validate(resolved)
    # RED's limit is its bfifo's bytes: the packets given, in whole packets of 1500 bytes.
    per = qdiscs.AQMLAB_PACKET_BYTES if resolved["queue"]["kind"] == "red_linux" else 1
    assert resolved["queue"]["limit"] == limit * per
    assert qdiscs.tc_args(name, limit)[0] == qdiscs.TC_KIND.get(name, name)


def test_both_sides_get_the_same_parameters() -> None:
    for name in ("codel", "fq_codel"):
        tc, q = qdiscs.tc_args(name, 777), qdiscs.aqmlab_queue(name, 777)
        assert int(_opt(tc, "limit")) == q["limit"] == 777
        assert _ms(_opt(tc, "target")) == q["target_ms"] == 5.0
        assert _ms(_opt(tc, "interval")) == q["interval_ms"] == 100.0
        assert "noecn" in tc and q["ecn"] is False
    tc, q = qdiscs.tc_args("fq_codel", 10240), qdiscs.aqmlab_queue("fq_codel", 10240)
    for key in ("flows", "quantum", "memory_limit", "drop_batch"):
        assert int(_opt(tc, key)) == q[key]
    tc, q = qdiscs.tc_args("pie", 1000), qdiscs.aqmlab_queue("pie", 1000)
    assert q["kind"] == "pie_linux"
    assert _ms(_opt(tc, "target")) == q["target_ms"] and _ms(_opt(tc, "tupdate")) == q["tupdate_ms"]
    # Both in tc's units, 1/16 s⁻¹ (pie_calculate_probability).
    assert int(_opt(tc, "alpha")) == q["alpha"] and int(_opt(tc, "beta")) == q["beta"]
    assert "no_dq_rate_estimator" in tc and q["dq_rate_estimator"] is False
    tc, q = qdiscs.tc_args("cake", 10240), qdiscs.aqmlab_queue("cake", 10240)
    assert "unlimited" in tc and q["bandwidth"] == "unlimited"
    assert "besteffort" in tc and q["diffserv"] == "besteffort"
    assert "flows" in tc and q["isolation"] == "flows"
    assert _ms(_opt(tc, "rtt")) == q["rtt_ms"] and q["target_ms"] == q["rtt_ms"] / 20
    assert int(_opt(tc, "overhead")) == q["overhead"] == 14


def test_limits() -> None:
    assert qdiscs.check("pfifo", None) == 100
    assert qdiscs.check("fq_codel", None) == 10240
    assert qdiscs.check("codel", 300) == 300
    with pytest.raises(ValueError, match="fixed"):
        qdiscs.check("cake", 100)
    with pytest.raises(ValueError, match="expected one of"):
        qdiscs.check("fq_pie", None)
    with pytest.raises(ValueError):
        qdiscs.check("codel", 0)


def test_labels_and_bed_configurations() -> None:
    # pfifo keeps the names of the runs recorded before the qdisc was a choice.
    assert cli.label("reno", 4, "40", 100, 60.0) == "reno-n4-rtt40-q100-60s"
    assert cli.label("reno", 4, "40", 1000, 60.0, "codel") == "reno-n4-rtt40-codel-q1000-60s"
    spec = {"cc": "cubic", "flows": 2, "rtt": "40", "rtts_ms": [40.0, 40.0], "limit": 100,
            "seconds": 60.0, "starts_s": [0.1, 0.2], "rate_mbit": 10.0, "sample_ms": 10.0,
            "rt_prio": 1}  # fmt: skip
    assert cli.spec_label(spec) == "cubic-n2-rtt40-q100-60s"  # an old run.json: pfifo
    assert cli.bed_config(spec).qdisc_args == ["pfifo", "limit", "100"]
    spec.update(qdisc="fq_codel", limit=10240)
    cfg = cli.bed_config(spec)
    assert cfg.qdisc_args == qdiscs.tc_args("fq_codel", 10240) and cfg.start_margin_s == 1.5
    # The model's jiffy follows the kernel's HZ when the run records it (UML: 100).
    assert cli.with_kernel_hz(spec, {}) == {}
    spec["kernel_hz"] = 100
    assert cli.with_kernel_hz(spec, {}) == {"tick_ms": 10.0}
    assert cli.with_kernel_hz(spec, {"tick_ms": 1}) == {"tick_ms": 1}


def test_guest_loads_dependencies_first() -> None:
    dep = (
        "kernel/net/ipv6/ipv6.ko: kernel/lib/crc-ccitt.ko\n"
        "kernel/lib/crc-ccitt.ko:\n"
        "kernel/net/sched/sch_cake.ko:\n"
        "kernel/drivers/net/veth.ko:\n"
    )
    assert guest.module_order(dep, ("veth", "ipv6", "sch_cake", "ipv6")) == [
        "kernel/drivers/net/veth.ko",
        "kernel/lib/crc-ccitt.ko",
        "kernel/net/ipv6/ipv6.ko",
        "kernel/net/sched/sch_cake.ko",
    ]
    with pytest.raises(KeyError):
        guest.module_order(dep, ("sch_fq_pie",))


def test_uml_command_and_job_file(tmp_path: Path, monkeypatch) -> None:
    cmd = uml.command(tmp_path, tmp_path / "job.json", "aqlb1")
    assert cmd[0] == "linux.uml"
    assert {"rootfstype=hostfs", "rootflags=/", "con0=null,fd:1"} <= set(cmd)
    assert f"init={uml.BOOT / 'init.sh'}" in cmd and f"AQLB_JOB={tmp_path / 'job.json'}" in cmd
    assert (uml.BOOT / "init.sh").stat().st_mode & 0o111  # the kernel execs it
    monkeypatch.setattr(uml, "modules_dirs", lambda: [Path("/m/6.1.176")])
    cfg = bed.BedConfig(flows=1, cc="reno", rtts_ms=[40.0], seconds=30.0, starts_s=[0.0],
                        qdisc_args=qdiscs.tc_args("codel", 1000))  # fmt: skip
    doc = uml.job_document([("x run 1/1", cfg, tmp_path / "r")], tmp_path / "status.json")
    j = doc["jobs"][0]
    assert doc["modules"] == "/m/6.1.176" and j["out"] == str((tmp_path / "r").resolve())
    assert j["cfg"]["start_margin_s"] == uml.GUEST_START_MARGIN_S
    assert bed.BedConfig(**json.loads(json.dumps(j["cfg"]))).qdisc_args[0] == "codel"
    assert j["hard_timeout_s"] == 30.0 + 60.0 + uml.GUEST_START_MARGIN_S


def test_netem_delay_line_counters() -> None:
    from validation.linux import measure

    tc = json.dumps([
        {"kind": "netem", "handle": "8009:", "drops": 0, "packets": 120},
        {"kind": "netem", "handle": "800a:", "drops": 2, "packets": 80},
        {"kind": "noqueue", "handle": "0:"},
    ])  # fmt: skip
    assert measure._netem_checks(tc) == {
        "delay line": "netem",
        "delay line drops": 2,
        "delay line packets": 200,
    }
    assert measure._netem_checks("") == {"delay line": "netem (no counters)"}


def test_netem_delay_line_needs_one_rtt() -> None:
    cfg = bed.BedConfig(flows=2, cc="reno", rtts_ms=[20.0, 80.0], seconds=30.0,
                        starts_s=[0.0, 0.1], delay="netem")  # fmt: skip
    with pytest.raises(bed.BedError, match="one RTT"):
        bed.Bed(cfg)._netem_delay()
