"""The E-model of `aqmlab.analysis.voice` against worked values: G.107's default R, the MOS
curve's points (G.107 Annex B), Cole & Rosenbluth's delay impairment and G.107's Ie,eff with
G.113's codec values, each computed by hand from the equations in the comments."""

import math

import pytest

from aqmlab.analysis import voice


def test_zero_impairment_gives_g107s_default_rating():
    # No delay, no loss, G.711 (Ie = 0): R = 93.2 (G.107's default).
    assert voice.r_factor(0.0, 0.0, "g711") == pytest.approx(93.2)
    # MOS(93.2) = 1 + 0.035·93.2 + 93.2·33.2·6.8·7e-6 = 1 + 3.262 + 0.147285824.
    assert voice.mos(93.2) == pytest.approx(4.409285824)


def test_mos_curve_points():
    assert voice.mos(-5.0) == 1.0
    assert voice.mos(0.0) == 1.0
    # R = 50: 1 + 1.75 + 50·(−10)·50·7e-6 = 2.75 − 0.175.
    assert voice.mos(50.0) == pytest.approx(2.575)
    # R = 60: the cubic term vanishes: 1 + 2.1.
    assert voice.mos(60.0) == pytest.approx(3.1)
    assert voice.mos(100.0) == pytest.approx(4.5)
    assert voice.mos(120.0) == 4.5
    assert math.isnan(voice.mos(math.nan))


def test_delay_impairment_has_its_knee_at_177_3_ms():
    # Cole & Rosenbluth eq. 5: 0.024·150 = 3.6; 0.024·200 + 0.11·22.7 = 4.8 + 2.497.
    assert voice.delay_impairment(150.0) == pytest.approx(3.6)
    assert voice.delay_impairment(200.0) == pytest.approx(7.297)
    assert voice.delay_impairment(177.3) == pytest.approx(0.024 * 177.3)


def test_loss_impairment_with_g113_codec_values():
    # G.711 with PLC (Bpl = 25.1): 1 % → 95·1/(1 + 25.1); 5 % → 95·5/(5 + 25.1).
    assert voice.effective_equipment_impairment(0.0, 25.1, 1.0) == pytest.approx(95 / 26.1)
    assert voice.effective_equipment_impairment(0.0, 25.1, 5.0) == pytest.approx(475 / 30.1)
    # G.729A: Ie = 11 at no loss; at 2 %: 11 + 84·2/(2 + 19).
    assert voice.r_factor(0.0, 0.0, "g729a") == pytest.approx(82.2)
    assert voice.r_factor(0.0, 2.0, "g729a") == pytest.approx(93.2 - 11 - 8.0)
    # A call: 150 ms mouth to ear, 1 % lost, G.711: 93.2 − 3.6 − 3.6398...
    assert voice.r_factor(150.0, 1.0) == pytest.approx(93.2 - 3.6 - 95 / 26.1)
    # Opus has no G.113 values: no score unless given.
    assert math.isnan(voice.r_factor(100.0, 0.0, "opus_fb"))
    assert voice.r_factor(100.0, 0.0, "opus_fb", ie=0.0, bpl=20.0) == pytest.approx(90.8)


def test_summary_metrics_from_a_summary():
    s = {
        "voice": {
            "codec": "g711",
            "delivered": 990,
            "lost": 10,
            "late": 0,
            "mouth_to_ear_ms": 150.0,
        }
    }
    m = voice.summary_metrics({"summary": s})
    assert m["voice.ppl_percent"] == pytest.approx(1.0)
    assert m["voice.r_factor"] == pytest.approx(93.2 - 3.6 - 95 / 26.1)
    assert m["voice.mos"] == pytest.approx(voice.mos(m["voice.r_factor"]))
    assert voice.summary_metrics({"summary": {}}) == {}


def test_bursty_loss_impairs_more_than_random_loss():
    # Got 80, missed 20 in 4 runs: p = 4/80, q = 4/20, BurstR = 1/(0.05 + 0.2) = 4.
    assert voice.burst_ratio(80, 20, 4) == pytest.approx(4.0)
    # 20 %: Ie,eff = 95·20/(20/4 + 25.1) bursty, 95·20/(20 + 25.1) random (G.711).
    bursty = voice.effective_equipment_impairment(0.0, 25.1, 20.0, 4.0)
    assert bursty == pytest.approx(1900 / 30.1)
    assert voice.effective_equipment_impairment(0.0, 25.1, 20.0) == pytest.approx(1900 / 45.1)
    # Isolated losses (every run one packet, 1 % lost): p = 0.01·100/99, q = 1: BurstR ≈ 1.
    assert voice.burst_ratio(990, 10, 10) == pytest.approx(1 / (10 / 990 + 1))
    assert voice.burst_ratio(100, 0, 0) == 1.0
    s = {
        "voice": {
            "codec": "g711",
            "delivered": 90,
            "lost": 10,
            "late": 10,
            "bursts": 4,
            "mouth_to_ear_ms": 0.0,
        }
    }
    m = voice.summary_metrics(s)
    assert m["voice.burst_r"] == pytest.approx(4.0)
    assert m["voice.r_factor"] == pytest.approx(93.2 - 1900 / 30.1)
