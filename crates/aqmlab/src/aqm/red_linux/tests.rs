//! Hand-computed traces of Linux's RED in its fixed point.

use super::*;
use crate::aqm::QueueLen;
use crate::packet::{Ecn, Packet};

/// Uniform numbers that are the given u32 words (as the replay's recorded words).
struct Words(Vec<u32>);

impl UniformSource for Words {
    fn uniform(&mut self) -> f64 {
        self.0.remove(0) as f64 / 4_294_967_296.0
    }
}

/// min 3000, max 9000 B, Wlog 2 (W = 1/4), max_P = 0.5 (2³¹), Scell_log 10, a table that
/// halves after 1024 µs (Stab[1] = 1) and is 0 (linear) below.
fn opt() -> TcRedOpt {
    let mut stab = [0u8; 256];
    stab[1] = 1;
    stab[2] = 3;
    TcRedOpt {
        limit: 20_000,
        qth_min: 3000,
        qth_max: 9000,
        wlog: 2,
        plog: 0,
        scell_log: 10,
        max_p: 1 << 31,
        stab,
        ecn: false,
        harddrop: false,
        nodrop: false,
        adaptive: false,
    }
}

fn pkt(ecn: Ecn) -> Packet {
    Packet {
        size: 1000,
        ecn,
        ..Default::default()
    }
}

fn q(bytes: u64) -> QueueLen {
    QueueLen {
        packets: (bytes / 1000) as u32,
        bytes,
    }
}

#[test]
fn parms_as_red_set_parms() {
    let r = RedLinux::new(opt());
    // Thresholds << Wlog; delta 6000; max_P/delta = 2147483648/6000 = 357 913;
    // targets min + 2·1200, min + 3·1200; Scell_max = 255 << 10.
    assert_eq!((r.p.qth_min, r.p.qth_max), (12_000, 36_000));
    assert_eq!(r.p.qth_delta, 6000);
    assert_eq!((r.p.target_min, r.p.target_max), (5400, 6600));
    assert_eq!(r.p.scell_max, 261_120);
    assert_eq!(r.p.max_p_reciprocal, Reciprocal::new(357_913));
    assert_eq!(r.v.qcount, -1);
    // The reciprocal divides exactly: 4 000 000 000 / 357 913 = 11 175.8 → 11 175.
    assert_eq!(r.p.max_p_reciprocal.divide(4_000_000_000), 11_175);
    assert_eq!(Reciprocal::new(1).divide(123), 123);
    assert_eq!(Reciprocal::new(7).divide(u32::MAX), u32::MAX / 7);
    // Without max_P: (2³² − 1) >> Plog 10, × delta, wrapping in u32.
    let mut o = opt();
    o.max_p = 0;
    o.plog = 10;
    assert_eq!(RedParms::new(&o).max_p, (u32::MAX >> 10).wrapping_mul(6000));
}

#[test]
fn average_in_fixed_point_and_idle_decay() {
    let mut r = RedLinux::new(opt());
    let mut no = Words(vec![]);
    // qavg += backlog − qavg >> 2: 0 → 8000 (backlog 8000) → 8000 − 2000 + 8000 = 14 000
    // → 14000 − 3500 + 8000 = 18 500 (4625 B; min is 3000 B = 12 000 scaled).
    assert_eq!(
        r.on_enqueue(1000, &pkt(Ecn::NotEct), q(8000), &mut no),
        Verdict::Pass
    );
    assert_eq!(r.v.qavg, 8000);
    assert_eq!(r.v.qcount, -1, "below min");
    // Idle from t = 1 ms: an arrival at 1.5 ms: 500 µs, Stab[500 >> 10 = 0] = 0, linear:
    // 8000·500 >> 10 = 3906 < 4000: 8000 − 3906 = 4094.
    r.on_idle(1_000_000);
    assert_eq!(r.calc_qavg(1_500_000, 0), 4094);
    // 900 µs: 8000·900 >> 10 = 7031 ≥ 4000: floored at half, 4000.
    assert_eq!(r.calc_qavg(1_900_000, 0), 4000);
    // 1100 µs: Stab[1] = 1: 8000 >> 1; 2100 µs: Stab[2] = 3: 1000. Beyond Scell_max
    // (261 120 µs) the index stays 255 (Stab 0 here: linear, half).
    assert_eq!(r.calc_qavg(2_100_000, 0), 4000);
    assert_eq!(r.calc_qavg(3_100_000, 0), 1000);
    assert_eq!(r.calc_qavg(10_000_000_000, 0), 4000);
    // A second empty dequeue does not move the start; the arrival ends the idle period.
    r.on_idle(1_800_000);
    assert_eq!(r.v.qidlestart, 1_000_000);
    r.on_enqueue(3_100_000, &pkt(Ecn::NotEct), q(0), &mut no);
    assert_eq!((r.v.qavg, r.v.qidlestart), (1000, 0));
    // An idle start at t = 0 is none (the kernel's ktime 0 means "not idle").
    let mut z = RedLinux::new(opt());
    z.on_idle(0);
    assert_eq!(z.v.qidlestart, 0);
}

#[test]
fn mark_decisions_by_hand() {
    let mut o = opt();
    o.ecn = true;
    let mut r = RedLinux::new(o);
    // Put qavg at 20 000 (5000 B: 2000 B = 8000 scaled above min): (20000 − 12000) >> 2 = 2000.
    r.v.qavg = 20_000;
    let b = q(5000); // keeps qavg at 20 000: 20000 + 5000 − 5000
                     // Words: 4 000 000 000 / 357 913 = 11 175 → qR; 1 000 000 000 / 357 913 = 2793.
    let mut w = Words(vec![4_000_000_000, 1_000_000_000]);
    // 1st arrival in range: qcount −1 → 0, draws qR = 11 175, passes.
    assert_eq!(r.on_enqueue(0, &pkt(Ect0), b, &mut w), Verdict::Pass);
    assert_eq!((r.v.qcount, r.v.qr), (0, 11_175));
    // qcount 1..5: 2000·k < 11 175 → pass; qcount 6: 12 000 ≥ 11 175 → prob mark, qR redrawn.
    for k in 1..=5 {
        assert_eq!(r.on_enqueue(0, &pkt(Ect0), b, &mut w), Verdict::Pass, "{k}");
    }
    assert_eq!(r.on_enqueue(0, &pkt(Ect0), b, &mut w), Verdict::Mark);
    assert_eq!((r.v.qcount, r.v.qr), (0, 2793));
    assert_eq!((r.stats.prob_mark, r.stats.overlimits), (1, 1));
    // qcount 1: 2000 < 2793; qcount 2: 4000 ≥ 2793 → a Not-ECT packet: dropped (no nodrop).
    r.on_enqueue(0, &pkt(Ecn::NotEct), b, &mut Words(vec![]));
    let mut w = Words(vec![0]);
    assert_eq!(
        r.on_enqueue(0, &pkt(Ecn::NotEct), b, &mut w),
        Verdict::Drop(DropCause::Early)
    );
    assert_eq!((r.stats.prob_drop, r.v.qr), (1, 0));
    // At max (qavg ≥ 36 000): a hard mark; ECT is marked, CE stays CE (counted), Not-ECT
    // dropped; with harddrop every one is dropped.
    r.v.qavg = 40_000;
    let full = q(10_000);
    assert_eq!(r.on_enqueue(0, &pkt(Ect1), full, &mut w), Verdict::Mark);
    assert_eq!(r.on_enqueue(0, &pkt(Ecn::Ce), full, &mut w), Verdict::Pass);
    assert_eq!(r.stats.forced_mark, 2);
    assert_eq!(
        r.on_enqueue(0, &pkt(Ecn::NotEct), full, &mut w),
        Verdict::Drop(DropCause::Forced)
    );
    r.opt.harddrop = true;
    assert_eq!(
        r.on_enqueue(0, &pkt(Ect0), full, &mut w),
        Verdict::Drop(DropCause::Forced)
    );
    assert_eq!((r.stats.forced_drop, r.v.qcount), (2, -1));
    assert_eq!(r.stats.overlimits, 2 + 4);
    // The bfifo (a 1500-B limit): RED lets it through (qavg 1000 < min), then
    // 1000 queued + 1000 > 1500 → pdrop; with 500 queued it fits exactly.
    let mut o = opt();
    o.limit = 1500;
    let mut r = RedLinux::new(o);
    assert_eq!(
        r.on_enqueue(0, &pkt(Ect0), q(1000), &mut w),
        Verdict::Drop(DropCause::Overflow)
    );
    assert_eq!(r.on_enqueue(0, &pkt(Ect0), q(500), &mut w), Verdict::Pass);
    assert_eq!(r.stats.pdrop, 1);
}

use crate::packet::Ecn::{Ect0, Ect1};

#[test]
fn nodrop_queues_not_ect_but_counts_overlimits() {
    let mut o = opt();
    o.ecn = true;
    o.nodrop = true;
    let mut r = RedLinux::new(o);
    r.v.qavg = 40_000;
    let v = r.on_enqueue(0, &pkt(Ecn::NotEct), q(10_000), &mut Words(vec![]));
    assert_eq!(v, Verdict::Pass);
    assert_eq!((r.stats.overlimits, r.stats.forced_drop), (1, 0));
}

#[test]
fn adaptive_max_p_steps() {
    let mut o = opt();
    o.adaptive = true;
    o.max_p = 100_000_000; // 2.3 %
                           // Without `adaptive` there is no timer: a tick changes nothing.
    let mut fixed = RedLinux::new(opt());
    fixed.v.qavg = 32_000;
    fixed.on_tick(500 * MS);
    assert_eq!((fixed.tick_period(), fixed.p.max_p), (None, 1 << 31));
    let mut r = RedLinux::new(o);
    assert_eq!(r.tick_period(), Some(500 * MS));
    // Average 8000 B (32 000 scaled) > target_max 6600: + min(1 % = 42 949 673, max_P/4
    // = 25 000 000) → 125 000 000; divisor round(125e6/6000) = 20 833.
    r.v.qavg = 32_000;
    r.on_tick(500 * MS);
    assert_eq!(r.p.max_p, 125_000_000);
    assert_eq!(r.p.max_p_reciprocal, Reciprocal::new(20_833));
    // Average 1000 B < target_min 5400: ×0.9 as (max_P/10)·9 = 112 500 000.
    r.v.qavg = 4000;
    r.on_tick(1000 * MS);
    assert_eq!(r.p.max_p, 112_500_000);
    // Idle: the decayed average is used (4000 >> 3 after 2100 µs), without storing it.
    r.on_idle(1000 * MS);
    r.on_tick(1000 * MS + 2_100_000);
    assert_eq!(r.p.max_p, 101_250_000);
    assert_eq!(r.v.qavg, 4000);
}
