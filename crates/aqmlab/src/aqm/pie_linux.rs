//! PIE as Linux implements it (`include/net/pie.h`, `net/sched/sch_pie.c`: `pie_drop_early`,
//! `pie_process_dequeue`, `pie_calculate_probability`), in Linux's own fixed point, for the
//! per-flow controllers of FQ-PIE.
//!
//! The `pie` kind (`aqm/pie.rs`) follows RFC 8033 in floating point and stays as it is; Linux
//! differs from it in ways that change decisions, so this is a separate controller rather
//! than options of that one:
//!
//! * probability `prob` is an integer in units of `MAX_PROB = 2⁵⁶ − 1` and may exceed
//!   `MAX_PROB` (only a u64 wrap is caught), times are psched ticks (`ns >> 6`);
//! * α and β are integers in 1/16 s⁻¹ (`(alpha·MAX_PROB/PSCHED_TICKS_PER_SEC) >> 4`, so the
//!   defaults 2 and 20 are RFC 8033's 0.125 and 1.25), and the auto-tuning divides them by
//!   2 then by 4 per decade (RFC 8033 §5.2's 2, 8, 32, 128, 512, 2048) by right shifts;
//! * +2 % per update while the delay exceeds 250 ms; decay `prob −= prob/64` (not ×0.98),
//!   skipped when the delay is 0 with a backlog;
//! * the delay is the sojourn of the last dequeued packet (0 when that left the queue empty),
//!   updated at every dequeue and used by the "delay < target/2" test at enqueue;
//! * the burst allowance shrinks at dequeue by the time since the previous dequeue, and
//!   every controller variable except `prob` and the delays is reset (`pie_vars_init`) when
//!   both delays are below target/2 and `prob` is 0;
//! * the "fewer than 2 packets" test is `backlog < 2·mtu`, and de-randomisation
//!   (`accu_prob`, 0.85 and 8.5) is always on.
//!
//! Delay estimate: the timestamp one (`dq_rate_estimator off`, the default) or, with
//! `dq_rate_estimator`, Linux's departure-rate one (RFC 8033 §5.3 in Linux's form): a cycle
//! starts at a dequeue that leaves ≥ 16384 bytes (`QUEUE_THRESHOLD`); when 16384 bytes have
//! left, the rate `(bytes << 8) / ticks` (u32) enters `avg_dq_rate` with weight 1/8 (the
//! first as is), and each update takes `qdelay = (backlog << 8) / avg_dq_rate`.

use crate::rng::UniformSource;
use crate::units::{Time, MS};

/// Linux `MAX_PROB` (`U64_MAX >> BITS_PER_BYTE`): probability 1.
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks per second (`NSEC_PER_SEC >> PSCHED_SHIFT`, shift 6).
const TICKS_PER_SEC: u64 = 1_000_000_000 >> 6;
/// Bytes that start and end a departure-rate measurement (`QUEUE_THRESHOLD`).
const QUEUE_THRESHOLD: u64 = 16384;
/// Fixed-point shift of the departure rate (`PIE_SCALE`).
const PIE_SCALE: u32 = 8;

/// Linux `PSCHED_NS2TICKS`.
#[inline]
pub fn ticks(t: Time) -> u64 {
    t >> 6
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LinuxPieParams {
    /// ns (Linux keeps psched ticks; converted where compared).
    pub target: Time,
    pub tupdate: Time,
    /// 1/16 s⁻¹ (tc's integer).
    pub alpha: u32,
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    /// Delay from the departure rate instead of timestamps.
    pub dq_rate_estimator: bool,
    /// Bytes (Linux `psched_mtu`).
    pub mtu: u32,
}

/// Linux `struct pie_vars`; times in psched ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxPieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    /// Time of the previous dequeue; `None` is Linux's `DTIME_INVALID`.
    pub dq_tstamp: Option<u64>,
    pub prob: u64,
    pub accu_prob: u64,
    /// Bytes dequeued in the current rate measurement; `None` is `DQCOUNT_INVALID`.
    pub dq_count: Option<u64>,
    /// Bytes per tick, `<< PIE_SCALE`; 0 = no measurement yet.
    pub avg_dq_rate: u32,
}

impl Default for LinuxPieVars {
    /// Zeroed, then `pie_vars_init` (as `fq_pie_init` does).
    fn default() -> Self {
        let mut v = LinuxPieVars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
            dq_count: None,
            avg_dq_rate: 0,
        };
        v.init();
        v
    }
}

impl LinuxPieVars {
    /// `pie_vars_init`: burst allowance 150 ms, no dequeue time, no accumulated probability,
    /// no rate measurement.
    fn init(&mut self) {
        self.burst_time = ticks(150 * MS);
        self.dq_tstamp = None;
        self.accu_prob = 0;
        self.dq_count = None;
        self.avg_dq_rate = 0;
    }

    /// The probability as a fraction (may exceed 1, as Linux's may).
    pub fn prob_f64(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// `pie_drop_early`: whether the arriving packet of `size` bytes is selected, with
    /// `backlog` bytes already queued (the flow's, for FQ-PIE).
    pub fn drop_early(
        &mut self,
        p: &LinuxPieParams,
        backlog: u64,
        size: u32,
        rng: &mut impl UniformSource,
    ) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < ticks(p.target) / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * p.mtu as u64 {
            return false;
        }
        let local = if p.bytemode && size <= p.mtu {
            size as u64 * (self.prob / p.mtu as u64)
        } else {
            self.prob
        };
        if local == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.wrapping_add(local);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        // Linux draws 64 random bits and compares the top 56 with the probability.
        let rnd = (rng.uniform() * (1u64 << 56) as f64) as u64;
        if rnd < local {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue`: a packet of `size` bytes enqueued at `enqueued_at` leaves at
    /// `now`, `backlog` bytes remain (the flow's, for FQ-PIE).
    pub fn on_dequeue(
        &mut self,
        p: &LinuxPieParams,
        now: Time,
        enqueued_at: Time,
        size: u32,
        backlog: u64,
    ) {
        let now = ticks(now);
        let dtime = if p.dq_rate_estimator {
            match self.measure_rate(now, size, backlog) {
                Some(dtime) => dtime,
                None => return,
            }
        } else {
            self.qdelay = now.saturating_sub(ticks(enqueued_at));
            // Linux keeps `dtime` in a u32.
            let dtime = self.dq_tstamp.map_or(0, |t| (now - t) as u32 as u64);
            self.dq_tstamp = Some(now);
            if backlog == 0 {
                self.qdelay = 0;
            }
            dtime
        };
        if dtime == 0 {
            return;
        }
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// The departure-rate half of `pie_process_dequeue`: the ticks the finished measurement
    /// took, if one finished with this packet.
    fn measure_rate(&mut self, now: u64, size: u32, backlog: u64) -> Option<u64> {
        if backlog >= QUEUE_THRESHOLD && self.dq_count.is_none() {
            self.dq_tstamp = Some(now);
            self.dq_count = Some(0);
        }
        let count = self.dq_count.as_mut()?;
        *count += size as u64;
        if *count < QUEUE_THRESHOLD {
            return None;
        }
        // Linux computes in u32: `dtime`, `count << PIE_SCALE`, then the division.
        let dtime = (now - self.dq_tstamp.unwrap_or(now)) as u32;
        if dtime == 0 {
            return None;
        }
        let rate = ((*count as u32) << PIE_SCALE) / dtime;
        self.avg_dq_rate = if self.avg_dq_rate == 0 {
            rate
        } else {
            self.avg_dq_rate - (self.avg_dq_rate >> 3) + (rate >> 3)
        };
        if backlog < QUEUE_THRESHOLD {
            self.dq_count = None;
        } else {
            self.dq_count = Some(0);
            self.dq_tstamp = Some(now);
        }
        Some(dtime as u64)
    }

    /// `pie_calculate_probability`, run every `tupdate`.
    pub fn calculate_probability(&mut self, p: &LinuxPieParams, backlog: u64) {
        let target = ticks(p.target);
        let (qdelay, qdelay_old) = if p.dq_rate_estimator {
            self.qdelay_old = self.qdelay;
            // u32 in Linux: `(backlog << PIE_SCALE) / avg_dq_rate`, 0 without a rate.
            let d = ((backlog as u32) << PIE_SCALE)
                .checked_div(self.avg_dq_rate)
                .unwrap_or(0) as u64;
            (d, self.qdelay_old)
        } else {
            (self.qdelay, self.qdelay_old)
        };
        // A zero delay with a backlog means a very short queue: no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (p.alpha as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        let mut beta = (p.beta as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        // RFC 8033 §5.2 auto-tuning by shifts: /2 below 10 %, then /4 per decade down to 1e-6.
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // Linux mixes u64 and s64 here; two's-complement wrapping gives its signed result.
        let mut delta = alpha.wrapping_mul(qdelay.wrapping_sub(target)) as i64;
        delta = delta.wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)) as i64);
        let oldprob = self.prob;
        // Steps of at most 2 % once at 10 %.
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // Non-linear increase above 250 ms.
        if qdelay > ticks(250 * MS) {
            delta += (MAX_PROB / 50) as i64;
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        // Two updates in a row with no delay: −1/64.
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        if self.qdelay < target / 2
            && self.qdelay_old < target / 2
            && self.prob == 0
            && (!p.dq_rate_estimator || self.avg_dq_rate > 0)
        {
            self.init();
        }
        if !p.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};

    fn params() -> LinuxPieParams {
        LinuxPieParams {
            target: 15 * MS,
            tupdate: 15 * MS,
            alpha: 2,
            beta: 20,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
            mtu: 1500,
        }
    }

    #[test]
    fn constants_and_scaling() {
        // 2⁵⁶ − 1; 15 ms = 234 375 ticks of 64 ns; 150 ms = 2 343 750.
        assert_eq!(MAX_PROB, 72_057_594_037_927_935);
        assert_eq!(ticks(15 * MS), 234_375);
        assert_eq!(LinuxPieVars::default().burst_time, 2_343_750);
    }

    #[test]
    fn probability_trace_by_hand() {
        // MAX_PROB/TICKS_PER_SEC = ⌊72057594037927935 / 15625000⌋ = 4 611 686 018.
        // alpha = 2·4611686018 >> 4 = 576 460 752; beta = 20·4611686018 >> 4 = 5 764 607 522.
        // prob = 0 (< 1e-6): >>1 then >>2 five times (power 100 … 1e6): >> 11 →
        // alpha 281 474, beta 2 814 749.
        let p = params();
        let mut v = LinuxPieVars {
            burst_time: 0,
            ..Default::default()
        };
        // 1) qdelay 40 ms = 625 000 ticks, qdelay_old 0, backlog 30 000 B:
        //    delta = 281474·(625000 − 234375) + 2814749·625000
        //          = 109 950 781 250 + 1 759 218 125 000 = 1 869 168 906 250 (≈ 2.594e-5).
        v.qdelay = ticks(40 * MS);
        v.calculate_probability(&p, 30_000);
        assert_eq!(v.prob, 1_869_168_906_250);
        assert_eq!(v.qdelay_old, 625_000);
        // 2) Same delay: 1e-5 ≤ prob < 1e-4 → >> 1 then >> 2 three times (power 100, 1000,
        //    10000; prob ≥ MAX_PROB/1e5 stops): >> 7: alpha 4 503 599, beta 45 035 996;
        //    delta = 4503599·390625 = 1 759 218 359 375 → prob 3 628 387 265 625.
        v.calculate_probability(&p, 30_000);
        assert_eq!(v.prob, 3_628_387_265_625);
        // 3) prob 0.15·MAX_PROB (no scaling), qdelay 200 ms = 3 125 000 ticks, old 625 000:
        //    delta = 576460752·2890625 + 5764607522·2500000 ≫ 2 %: capped to
        //    (MAX_PROB/100)·2 = 1 441 151 880 758 558.
        let p15 = MAX_PROB / 100 * 15;
        v.prob = p15;
        v.qdelay = ticks(200 * MS);
        v.calculate_probability(&p, 30_000);
        assert_eq!(v.prob, p15 + 1_441_151_880_758_558);
        // 4) Above 250 ms (300 ms = 4 687 500 ticks): capped 2 % plus another MAX_PROB/50
        //    (1 441 151 880 758 558 + 1 441 151 880 758 558).
        let before = v.prob;
        v.qdelay = ticks(300 * MS);
        v.calculate_probability(&p, 30_000);
        assert_eq!(v.prob, before + 2 * 1_441_151_880_758_558);
    }

    #[test]
    fn decay_only_with_no_delay_and_no_backlog_signal() {
        let p = params();
        // prob = 0.5, both delays 0, empty queue: delta = −576460752·234375 =
        // −135 107 988 750 000; then prob −= prob/64.
        let half = MAX_PROB / 2;
        let mut v = LinuxPieVars {
            prob: half,
            ..Default::default()
        };
        v.calculate_probability(&p, 0);
        let after = half - 135_107_988_750_000;
        assert_eq!(v.prob, after - after / 64);
        // Same but with bytes queued (delay 0 = a very short queue): no decay.
        let mut w = LinuxPieVars {
            prob: half,
            ..Default::default()
        };
        w.calculate_probability(&p, 1000);
        assert_eq!(w.prob, after);
    }

    #[test]
    fn burst_allowance_drains_with_dequeue_gaps_and_rearms() {
        let p = params();
        let mut v = LinuxPieVars::default();
        // First dequeue: no previous one, no reduction (dtime 0).
        v.on_dequeue(&p, 10 * MS, 0, 1500, 3000);
        assert_eq!(v.burst_time, 2_343_750);
        assert_eq!(v.qdelay, ticks(10 * MS)); // 156 250
                                              // 100 ms later: −1 562 500 ticks → 781 250.
        v.on_dequeue(&p, 110 * MS, 100 * MS, 1500, 3000);
        assert_eq!(v.burst_time, 781_250);
        // Another 100 ms: floor at 0.
        v.on_dequeue(&p, 210 * MS, 200 * MS, 1500, 0);
        assert_eq!(v.burst_time, 0);
        assert_eq!(v.qdelay, 0, "the flow emptied");
        // Selection is blocked while burst_time > 0; now it is 0.
        // Re-arm: prob 0 and both delays below 7.5 ms at an update → pie_vars_init.
        v.qdelay_old = 0;
        v.calculate_probability(&p, 0);
        assert_eq!(v.burst_time, 2_343_750);
        assert_eq!(v.dq_tstamp, None);
    }

    #[test]
    fn drop_early_guards_and_derandomisation() {
        let p = params();
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let mut v = LinuxPieVars {
            burst_time: 0,
            qdelay: ticks(20 * MS),
            prob: MAX_PROB / 10 * 3, // 0.3
            ..Default::default()
        };
        // Fewer than 2 MTU (3000 B) queued in the flow: never.
        assert!(!v.drop_early(&p, 2999, 1500, &mut g));
        assert_eq!(v.accu_prob, 0);
        // 0.3, 0.6 accumulated: below 0.85 → accepted without a draw.
        assert!(!v.drop_early(&p, 3000, 1500, &mut g));
        assert!(!v.drop_early(&p, 3000, 1500, &mut g));
        assert_eq!(v.accu_prob, 2 * (MAX_PROB / 10 * 3));
        // At ≥ 8.5 accumulated: selected without a draw (and not reset here).
        v.accu_prob = MAX_PROB / 2 * 17;
        assert!(v.drop_early(&p, 3000, 1500, &mut g));
        // Delay below target/2 with prob < 0.2: never.
        v.qdelay = ticks(7 * MS);
        v.prob = MAX_PROB / 10;
        assert!(!v.drop_early(&p, 100_000, 1500, &mut g));
        // Burst allowance left: never.
        v.qdelay = ticks(20 * MS);
        v.burst_time = 1;
        v.prob = MAX_PROB;
        assert!(!v.drop_early(&p, 100_000, 1500, &mut g));
    }

    #[test]
    fn departure_rate_estimate_by_hand() {
        let mut p = params();
        p.dq_rate_estimator = true;
        let mut v = LinuxPieVars::default();
        // 20 packets of 1000 B queued, one leaves every 1 ms (15 625 ticks). The first
        // dequeue leaves 19 000 ≥ 16 384: the cycle starts there (t = 0); the 17th, at
        // t = 16 ms, brings the count to 17 000 ≥ 16 384: dtime = 250 000 ticks,
        // rate = (17000 << 8) / 250000 = 4 352 000 / 250 000 = 17 (u32); 3000 B remain
        // (< 16 384): the cycle ends. The burst allowance loses dtime: 2 343 750 → 2 093 750.
        let mut backlog = 20_000u64;
        for k in 0..17u64 {
            backlog -= 1000;
            v.on_dequeue(&p, k * MS, 0, 1000, backlog);
        }
        assert_eq!(v.avg_dq_rate, 17);
        assert_eq!(v.dq_count, None);
        assert_eq!(v.burst_time, 2_093_750);
        // Update with 3000 B: qdelay = (3000 << 8) / 17 = 768 000 / 17 = 45 176 ticks
        // (2.89 ms; the true 3 ms is 46 875 — Linux's integer rate).
        v.calculate_probability(&p, 3000);
        assert_eq!(v.qdelay, 45_176);
        // A second measurement at twice the rate (34 by the same sums over 8 ms) enters
        // with weight 1/8: 17 − 2 + 4 = 19.
        let mut backlog = 20_000u64;
        for k in 0..17u64 {
            backlog -= 1000;
            v.on_dequeue(&p, 100 * MS + k * MS / 2, 0, 1000, backlog);
        }
        assert_eq!(v.avg_dq_rate, 19);
    }
}
