//! CUBIC (RFC 9438) as Linux computes it (`net/ipv4/tcp_cubic.c`, read in a Linux 6.17 tree),
//! and Linux's HyStart slow-start exit.
//!
//! Windows are in segments and times in Linux's units: jiffies for the cubic epoch (one jiffy
//! is the configuration's `tick_ms`, 1 ms for HZ = 1000) and microseconds for RTT samples.
//! The arithmetic is Linux's fixed point:
//!
//! - time since the epoch in 1/1024 s: `t = ((now − epoch_start) + ⌈delay_min⌉_jiffies)·1024 / HZ`
//!   (Linux adds the minimum RTT so that the target is one RTT ahead, RFC 9438 §4.2's
//!   `W_cubic(t + RTT)`);
//! - `K = ∛(2^40/410 · (W_max − cwnd))` in the same unit (eq. 2, C = 410/1024 ≈ 0.4);
//! - `target = W_max ± (410·|t − K|³ >> 40)` (eq. 1);
//! - `cnt = cwnd / (target − cwnd)` ACKed segments per one-segment increase (or `100·cwnd`
//!   when the target is not above cwnd), at most 20 while no loss has set `W_max` (5 % per
//!   RTT), at least 2 (the window grows at most by half per RTT: §4.2's `1.5·cwnd` bound);
//! - the Reno-friendly estimate (§4.3) `W_est` grows by one for every `(15·cwnd) >> 3` ACKed
//!   segments, `15 = ⌊⌊8·(1024 + 717)/3⌋/(1024 − 717)⌋`: α ≈ 8/15 ≈ 0.533 per RTT where RFC
//!   9438 has 3(1 − β)/(1 + β) ≈ 0.529 (and RFC 9438's switch to α = 1 above W_max is not in
//!   Linux); when it is above cwnd, `cnt ≤ cwnd / (W_est − cwnd)`;
//! - on a window reduction: `W_max = cwnd`, or `cwnd·(1024 + 717)/2048` (fast convergence,
//!   §4.7) if cwnd is below the previous `W_max`; `ssthresh = max(cwnd·717/1024, 2)`
//!   (β = 717/1024 ≈ 0.7, §4.6); the epoch ends (a new one starts at the next increase).
//!
//! One difference in the arithmetic: the cube root is exact here (the largest integer whose
//! cube does not exceed the argument); Linux approximates it with a 64-entry table and one
//! Newton–Raphson step (its comment: 0.195 % mean error), so our K may differ from Linux's by
//! that much (a few ms for K of a few seconds).

/// β = 717/1024 (Linux `beta`; RFC 9438 §4.1.1 β_cubic = 0.7).
pub const BETA: u64 = 717;
pub const BETA_SCALE: u64 = 1024;
/// 1024·C/RTT_ref with RTT_ref = 100 ms, Linux's `cube_rtt_scale` = `bic_scale`·10 = 41·10:
/// C = 410/1024 ≈ 0.4004.
pub const CUBE_RTT_SCALE: u64 = 410;
/// 2^40 / 410: `W_max − cwnd` times this is K³ in (1/1024 s)³ (Linux `cube_factor`).
pub const CUBE_FACTOR: u64 = (1 << 40) / CUBE_RTT_SCALE;
/// ACKs per unit of the Reno-friendly estimate, times 8/cwnd (Linux `beta_scale`).
pub const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// Time unit of the cubic function: 2^10 per second (Linux `BICTCP_HZ`).
const TIME_SHIFT: u32 = 10;
/// HyStart (Linux module parameters and constants).
pub const HYSTART_LOW_WINDOW: u32 = 16;
pub const HYSTART_ACK_DELTA_US: u64 = 2000;
pub const HYSTART_MIN_SAMPLES: u8 = 8;
pub const HYSTART_DELAY_MIN_US: u64 = 4000;
pub const HYSTART_DELAY_MAX_US: u64 = 16000;

/// C as the fixed point above makes it (410/1024), for comparisons with RFC 9438's eq. 1.
pub const C: f64 = CUBE_RTT_SCALE as f64 / 1024.0;

/// ⌊∛a⌋, exactly.
pub fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    // The float estimate is within one or two of the answer; settle it with exact cubes.
    let cube = |x: u64| (x as u128) * (x as u128) * (x as u128);
    while x > 0 && cube(x) > a as u128 {
        x -= 1;
    }
    while cube(x + 1) <= a as u128 {
        x += 1;
    }
    x
}

/// Why HyStart ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    /// The round's closely spaced ACKs spread over more than half the minimum RTT.
    AckTrain,
    /// The round's minimum RTT rose by more than clamp(delay_min/8, 4 ms, 16 ms).
    Delay,
}

/// The CUBIC state of one sender (Linux `struct bictcp`), windows in segments.
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// ACKed segments per one-segment increase of cwnd.
    pub cnt: u32,
    /// W_max: the window before the last reduction (after fast convergence); 0 before any.
    pub last_max_cwnd: u32,
    /// cwnd and time (jiffies) of the last full recomputation of `cnt`.
    last_cwnd: u32,
    last_time: u64,
    /// The window the cubic function returns to at K (`bic_origin_point`).
    pub origin: u32,
    /// K in 1/1024 s.
    pub k: u64,
    /// Smallest RTT sample (µs); 0 before any.
    pub delay_min_us: u64,
    /// Start of the current epoch (jiffies, never 0 as a time); 0 = no epoch.
    pub epoch_start: u64,
    /// ACKed segments not yet counted in `tcp_cwnd`.
    ack_cnt: u32,
    /// The Reno-friendly estimate W_est (segments).
    pub tcp_cwnd: u32,
    // --- HyStart ---
    sample_cnt: u8,
    pub found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    /// How and at which cwnd HyStart ended slow start (for inspection).
    pub hystart_exit: Option<(HystartExit, u32)>,
}

impl Cubic {
    /// Linux `bictcp_reset`: everything but the HyStart round (a connection's start and every
    /// retransmission timeout, `cubictcp_state(TCP_CA_Loss)`).
    pub fn reset(&mut self) {
        *self = Cubic {
            sample_cnt: self.sample_cnt,
            round_start_us: self.round_start_us,
            end_seq: self.end_seq,
            last_ack_us: self.last_ack_us,
            curr_rtt_us: self.curr_rtt_us,
            hystart_exit: self.hystart_exit,
            ..Cubic::default()
        };
    }

    /// Starts a HyStart round at `now_us` that ends when `snd_nxt` is acknowledged.
    pub fn hystart_reset(&mut self, now_us: u64, snd_nxt: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// The slow-start threshold after a congestion event at `cwnd` (Linux
    /// `cubictcp_recalc_ssthresh`): ends the epoch and records W_max.
    pub fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            ((cwnd as u64 * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * BETA / BETA_SCALE) as u32).max(2)
    }

    /// The sender resumes after an idle period (Linux `CA_EVENT_TX_START`): the epoch moves
    /// forward by the idle time, so that cwnd continues along the curve where it left it.
    pub fn on_tx_start(&mut self, now_j: u64, lsndtime_j: u64) {
        if self.epoch_start != 0 && now_j > lsndtime_j {
            self.epoch_start = (self.epoch_start + (now_j - lsndtime_j)).min(now_j);
        }
    }

    /// Recomputes `cnt` for a window of `cwnd` segments after `acked` segments are ACKed in
    /// congestion avoidance at jiffy `now_j` (Linux `bictcp_update`); `hz` jiffies per second.
    pub fn update(&mut self, cwnd: u32, acked: u32, now_j: u64, hz: u64) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && now_j - self.last_time <= hz / 32 {
            return;
        }
        // At most one recomputation per jiffy; a reduction (epoch 0) always forces one.
        if !(self.epoch_start != 0 && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            if self.epoch_start == 0 {
                self.epoch_start = now_j;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin = cwnd;
                } else {
                    let gap = (self.last_max_cwnd - cwnd) as u64;
                    self.k = cube_root(CUBE_FACTOR.wrapping_mul(gap));
                    self.origin = self.last_max_cwnd;
                }
            }
            let target = self.target(now_j, hz);
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                cwnd.wrapping_mul(100)
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // Reno-friendly region (RFC 9438 §4.3).
        let per_unit = ((cwnd as u64 * FRIENDLY_SCALE) >> 3).max(1) as u32;
        if self.ack_cnt > per_unit {
            let units = (self.ack_cnt - 1) / per_unit;
            self.ack_cnt -= units * per_unit;
            self.tcp_cwnd += units;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }

    /// The cubic function's window at jiffy `now_j` plus the minimum RTT, in Linux's
    /// fixed point (segments, wrapping as Linux's 32-bit arithmetic does far from K).
    pub fn target(&self, now_j: u64, hz: u64) -> u32 {
        let delay_j = (self.delay_min_us * hz).div_ceil(1_000_000);
        let t = ((now_j - self.epoch_start + delay_j) << TIME_SHIFT) / hz;
        let offs = t.abs_diff(self.k);
        let delta = (CUBE_RTT_SCALE
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> (10 + 3 * TIME_SHIFT)) as u32;
        if t < self.k {
            self.origin.wrapping_sub(delta)
        } else {
            self.origin.wrapping_add(delta)
        }
    }

    /// An RTT sample of `delay_us` (Linux `cubictcp_acked`): keeps the minimum, and runs
    /// HyStart while in slow start. Returns the new slow-start threshold (segments) when
    /// HyStart ends slow start. `ctx` is the sender's state as the ACK arrived.
    pub fn on_rtt_sample(&mut self, delay_us: u64, ctx: &AckContext) -> Option<u32> {
        // No samples in the first second of an epoch (just after a recovery).
        if self.epoch_start != 0 && ctx.now_j - self.epoch_start < ctx.hz {
            return None;
        }
        let delay = delay_us.max(1);
        if self.delay_min_us == 0 || delay < self.delay_min_us {
            self.delay_min_us = delay;
        }
        if !self.found && ctx.hystart && ctx.cwnd < ctx.ssthresh {
            return self.hystart_update(delay, ctx);
        }
        None
    }

    /// Linux `hystart_update`.
    fn hystart_update(&mut self, delay: u64, ctx: &AckContext) -> Option<u32> {
        if ctx.snd_una > self.end_seq {
            self.hystart_reset(ctx.now_us, ctx.snd_nxt);
        }
        if ctx.cwnd < HYSTART_LOW_WINDOW {
            return None;
        }
        let mut exit = None;
        // ACK train: ACKs no more than 2 ms apart for longer than half the minimum RTT
        // (plus Linux's allowance for TSO/GRO bursts) since the round began.
        if ctx.now_us - self.last_ack_us <= HYSTART_ACK_DELTA_US {
            self.last_ack_us = ctx.now_us;
            let threshold = (self.delay_min_us + ctx.ack_delay_us) >> 1;
            if ctx.now_us - self.round_start_us > threshold {
                exit = Some(HystartExit::AckTrain);
            }
        }
        // Delay increase: the minimum of the round's samples (from the 9th on) above
        // delay_min + clamp(delay_min/8, 4 ms, 16 ms).
        self.curr_rtt_us = self.curr_rtt_us.min(delay);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.curr_rtt_us > self.delay_min_us + thresh && exit.is_none() {
                exit = Some(HystartExit::Delay);
            }
        }
        let how = exit?;
        self.found = true;
        self.hystart_exit = Some((how, ctx.cwnd));
        Some(ctx.cwnd)
    }
}

/// The sender's state that CUBIC's per-ACK hooks read.
#[derive(Clone, Copy, Debug)]
pub struct AckContext {
    pub now_us: u64,
    pub now_j: u64,
    pub hz: u64,
    /// cwnd and ssthresh in segments, before this ACK's increase.
    pub cwnd: u32,
    pub ssthresh: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Linux `hystart_ack_delay` (µs).
    pub ack_delay_us: u64,
    /// HyStart is on.
    pub hystart: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_root_is_exact() {
        for a in [0u64, 1, 7, 8, 9, 26, 27, 28, 1000, 999, 1 << 40, u64::MAX] {
            let x = cube_root(a) as u128;
            assert!(x * x * x <= a as u128 && (x + 1).pow(3) > a as u128, "{a}");
        }
        let mut a = 1u64;
        while a < u64::MAX / 3 {
            let x = cube_root(a) as u128;
            assert!(x * x * x <= a as u128 && (x + 1).pow(3) > a as u128, "{a}");
            a = a * 3 + 1;
        }
    }

    /// Linux's precomputed constants from its module parameters (beta 717, bic_scale 41).
    #[test]
    fn fixed_point_constants() {
        assert_eq!(FRIENDLY_SCALE, 15);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert!((C - 0.4).abs() < 1e-3);
    }

    /// RFC 9438 §4.6 / Linux: ssthresh = max(⌊cwnd·717/1024⌋, 2); W_max = cwnd, or with fast
    /// convergence (§4.7) ⌊cwnd·1741/2048⌋ when cwnd is below the last W_max.
    #[test]
    fn reduction_and_fast_convergence() {
        let mut c = Cubic::default();
        assert_eq!(c.recalc_ssthresh(100), 70);
        assert_eq!(c.last_max_cwnd, 100);
        // Below W_max: the flow is losing ground, W_max is set lower still.
        assert_eq!(c.recalc_ssthresh(90), 63);
        assert_eq!(c.last_max_cwnd, 90 * 1741 / 2048); // 76
                                                       // Above the (reduced) W_max: W_max = cwnd.
        assert_eq!(c.recalc_ssthresh(120), 84);
        assert_eq!(c.last_max_cwnd, 120);
        assert_eq!(c.recalc_ssthresh(2), 2);
        assert_eq!(c.recalc_ssthresh(1), 2);
        assert_eq!(c.epoch_start, 0);
    }

    /// The fixed-point target against RFC 9438's eq. 1–2, W_cubic(t) = C·(t − K)³ + W_max with
    /// K = ∛((W_max − cwnd_epoch)/C): equal up to Linux's truncations (t and K in 1/1024 s,
    /// the cube shifted down by 40 bits, K from an integer cube root).
    #[test]
    fn target_follows_the_closed_form() {
        let hz = 1000;
        for &(w_max, rtt_ms) in &[(100u32, 100u64), (1000, 20), (30, 200), (5000, 10)] {
            let mut c = Cubic {
                last_max_cwnd: w_max,
                delay_min_us: rtt_ms * 1000,
                ..Cubic::default()
            };
            let cwnd_epoch = w_max * 717 / 1024;
            let start = 1_000; // jiffy
            c.update(cwnd_epoch, 1, start, hz);
            let k = ((w_max - cwnd_epoch) as f64 / C).cbrt();
            assert!(
                (c.k as f64 / 1024.0 - k).abs() < 2.0 / 1024.0,
                "K {} vs {k}",
                c.k
            );
            for ms in (0..20_000).step_by(137) {
                let t = (ms + rtt_ms) as f64 * 1e-3;
                let exact = C * (t - k).powi(3) + w_max as f64;
                let got = c.target(start + ms, hz) as f64;
                // t and K each lose < 1/1024 s: the cube's slope times 2/1024 s, plus one
                // segment of truncation.
                let slope = 3.0 * C * (t - k).powi(2);
                let tol = 1.0 + slope * 2.0 / 1024.0 + 1e-9 * exact.abs();
                if exact < 1e6 {
                    assert!(
                        (got - exact).abs() <= tol,
                        "W_max {w_max} RTT {rtt_ms} ms t {t}: {got} vs {exact} (tol {tol})"
                    );
                }
            }
        }
    }

    /// Before any loss (W_max = 0, e.g. after HyStart or the initial ssthresh), cnt is at most
    /// 20 (5 % per RTT), and never below 2 (at most +50 % per RTT).
    #[test]
    fn cnt_is_capped_at_20_without_w_max_and_floored_at_2() {
        let mut c = Cubic::default();
        c.update(100, 1, 10, 1000);
        assert_eq!(c.origin, 100);
        assert_eq!(
            c.cnt, 20,
            "target = cwnd at the origin: 100·cwnd capped to 20"
        );
        // Far in the convex region the target races ahead: cnt floors at 2.
        let mut c = Cubic {
            last_max_cwnd: 100,
            ..Cubic::default()
        };
        c.update(70, 1, 10, 1000);
        c.update(71, 1, 10 + 30_000, 1000);
        assert_eq!(c.cnt, 2);
        // With W_max set, the plateau near K gives a very small increase (cnt well above 20).
        let mut c = Cubic {
            last_max_cwnd: 100,
            delay_min_us: 100_000,
            ..Cubic::default()
        };
        c.update(70, 1, 10, 1000);
        let k_ms = c.k * 1000 / 1024;
        c.update(99, 1, 10 + k_ms - 100, 1000);
        assert!(c.cnt > 20, "cnt {} near K", c.cnt);
    }

    /// A sender driven one RTT at a time, cwnd-limited: every segment of the window is ACKed
    /// once per RTT, two per ACK (delayed ACKs), through Linux's `tcp_cong_avoid_ai`.
    fn drive(c: &mut Cubic, cwnd: &mut u32, rtts: u32, rtt_ms: u64, start_j: u64) -> Vec<u32> {
        let mut cnt_acc = 0u32;
        let mut hist = Vec::new();
        for r in 0..rtts as u64 {
            let w = *cwnd;
            for i in 0..w.div_ceil(2) {
                let now = start_j + r * rtt_ms + (i as u64 * rtt_ms) / w as u64;
                let acked = 2.min(w - 2 * i);
                c.update(*cwnd, acked, now, 1000);
                crate::tcp::cong::cong_avoid_ai(cwnd, &mut cnt_acc, c.cnt, acked, u32::MAX);
            }
            hist.push(*cwnd);
        }
        hist
    }

    /// Short RTT, small window: the cubic curve is nearly flat for K ≈ 2.5 s (1250 RTTs), and
    /// the Reno-friendly estimate (α = 8/15 per RTT) sets the pace: about 0.53 segments per RTT.
    #[test]
    fn reno_friendly_region_takes_over_at_small_bdp() {
        let mut c = Cubic {
            last_max_cwnd: 20,
            delay_min_us: 2000,
            ..Cubic::default()
        };
        let mut cwnd = 14; // 20·0.7
        let hist = drive(&mut c, &mut cwnd, 300, 2, 1000);
        let growth = (hist[299] - hist[0]) as f64 / 299.0;
        assert!(
            (growth - 8.0 / 15.0).abs() < 0.03,
            "{growth} segments per RTT (Reno-friendly 0.533)"
        );
        // The cubic curve alone would still be below W_max = 20 by then (600 ms into an
        // epoch with K = 2.47 s: W_cubic = 17.4), where cwnd has passed 150.
        let t = 0.6;
        let k = (6.0f64 / C).cbrt();
        let w_cubic = C * (t - k).powi(3) + 20.0;
        assert!(w_cubic < 18.0 && hist[299] > 150, "{w_cubic} {}", hist[299]);
    }

    /// Long RTT, large window: the cubic function sets the pace and cwnd tracks the closed form
    /// W_cubic(t) (eq. 1), t from the epoch's start, within a few segments.
    #[test]
    fn cubic_region_tracks_the_closed_form() {
        let w_max = 500u32;
        let mut c = Cubic {
            last_max_cwnd: w_max,
            delay_min_us: 100_000,
            ..Cubic::default()
        };
        let mut cwnd = w_max * 717 / 1024;
        let hist = drive(&mut c, &mut cwnd, 150, 100, 1000);
        let k = ((w_max as f64 - (w_max * 717 / 1024) as f64) / C).cbrt();
        for (r, &w) in hist.iter().enumerate() {
            // After round r the window has grown toward the target of one RTT ahead.
            let t = (r as f64 + 1.0) * 0.1;
            let exact = C * (t - k).powi(3) + w_max as f64;
            let tol = 2.0 + 0.02 * exact;
            assert!(
                (w as f64 - exact).abs() <= tol,
                "round {r}: cwnd {w} vs W_cubic {exact:.1}"
            );
        }
    }

    fn ctx(now_us: u64, cwnd: u32, snd_una: u64) -> AckContext {
        AckContext {
            now_us,
            now_j: now_us / 1000 + 1,
            hz: 1000,
            cwnd,
            ssthresh: u32::MAX,
            snd_una,
            snd_nxt: snd_una + 100,
            ack_delay_us: 0,
            hystart: true,
        }
    }

    /// HyStart's delay test: from the 9th sample of a round, the round's minimum RTT above
    /// delay_min + clamp(delay_min/8, 4 ms, 16 ms) ends slow start at the current cwnd.
    #[test]
    fn hystart_exits_on_a_delay_increase() {
        for (base_ms, thresh_ms) in [(50u64, 6.25f64), (20, 4.0), (300, 16.0)] {
            let mut c = Cubic::default();
            c.hystart_reset(0, 0);
            let base = base_ms * 1000;
            // Round 1: samples at the base RTT, spaced 3 ms (no ACK train).
            for i in 0..12 {
                assert_eq!(c.on_rtt_sample(base, &ctx(i * 3000 + 1, 20, 1)), None);
            }
            assert_eq!(c.delay_min_us, base);
            // Round 2 (snd_una passed end_seq): RTT just below the threshold, no exit...
            let below = base + (thresh_ms * 1000.0) as u64;
            let mut t = 100_000;
            for i in 0..12 {
                t += 3000;
                let r = c.on_rtt_sample(below, &ctx(t, 30, 200 + i));
                assert_eq!(r, None, "base {base_ms} ms: at +{thresh_ms} ms");
            }
            // ...round 3 just above it: exit on the 9th sample.
            for i in 0..9 {
                t += 3000;
                let r = c.on_rtt_sample(below + 1, &ctx(t, 40, 400 + i));
                assert_eq!(r.is_some(), i == 8, "sample {i}");
            }
            assert_eq!(c.hystart_exit, Some((HystartExit::Delay, 40)));
            assert!(c.found);
        }
    }

    /// Below `hystart_low_window` (16 segments) HyStart does not act, but rounds still start.
    #[test]
    fn hystart_waits_for_16_segments() {
        let mut c = Cubic::default();
        c.hystart_reset(0, 0);
        for i in 0..30 {
            let r = c.on_rtt_sample(if i < 3 { 10_000 } else { 80_000 }, &ctx(i * 3000, 15, i));
            assert_eq!(r, None);
        }
        assert!(!c.found);
    }

    /// The ACK-train test: ACKs ≤ 2 ms apart spanning more than delay_min/2 since the round
    /// started.
    #[test]
    fn hystart_ack_train() {
        let mut c = Cubic::default();
        c.hystart_reset(0, 0);
        assert_eq!(c.on_rtt_sample(40_000, &ctx(1, 20, 1)), None); // round starts, min 40 ms
        let mut exit = None;
        for i in 1..40u64 {
            // ACKs 1 ms apart: the train passes 20 ms after the round began.
            if let Some(w) = c.on_rtt_sample(40_000, &ctx(1 + i * 1000, 20, 2)) {
                exit = Some(i);
                assert_eq!(w, 20);
                break;
            }
        }
        assert_eq!(exit, Some(21));
        assert_eq!(c.hystart_exit, Some((HystartExit::AckTrain, 20)));
    }

    /// An idle period shifts the epoch by its length (never past now).
    #[test]
    fn tx_start_after_idle_shifts_the_epoch() {
        let mut c = Cubic {
            epoch_start: 1000,
            ..Cubic::default()
        };
        c.on_tx_start(5000, 3000);
        assert_eq!(c.epoch_start, 3000);
        c.on_tx_start(5000, 1000);
        assert_eq!(c.epoch_start, 5000);
        let mut idle = Cubic::default();
        idle.on_tx_start(5000, 3000);
        assert_eq!(idle.epoch_start, 0, "no epoch: nothing to shift");
    }
}
