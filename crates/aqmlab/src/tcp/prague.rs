//! TCP Prague, the L4S team's Linux module `net/ipv4/tcp_prague.c` (L4STeam/linux, read
//! at commit 893e147; draft-briscoe-iccrg-prague-congestion-control), in the module's
//! fixed point, fractional-window mode (`cwnd_mode` 0):
//!
//! - α, the EWMA of the fraction of delivered segments that were CE-marked, with gain
//!   1/16 (`PRAGUE_SHIFT_G`), kept upscaled by 16 in units of 2^-24 (`PRAGUE_ALPHA_BITS`)
//!   so that its remainder carries over; it starts at 1 and is updated once per round
//!   (snd_una reaches the snd_nxt of the round's start) — once RTT-independent, no more
//!   often than every target RTT — and only once a CE mark has been seen
//!   (`prague_update_alpha`, `prague_should_update_ewma`);
//! - the window in units of 2^-20 segments (`frac_cwnd`, `CWND_UNIT`): per ACK it grows
//!   by the ACKed segments that were not CE-marked times `ai_ack_increase` / window, at
//!   least one unit; in slow start it follows cwnd; the first CE mark halves it
//!   (`prague_alpha_mode` 0); cwnd moves one segment per ACK towards it, rounded up, at
//!   least 2 (`MIN_CWND_RTT`), and ssthresh follows every step down (`prague_update_cwnd`);
//! - entering CWR (an ACK with new CE marks, at most once per window of data) takes
//!   α/2 of the window off, rounded to nearest (`prague_enter_cwr`); once
//!   RTT-independent, no more often than every target RTT;
//! - a loss (fast recovery or a timeout) halves the window and holds growth until the
//!   connection is back in the Open state (`prague_enter_loss`, `prague_ca_open`); ssthresh
//!   is left as it is (`prague_ssthresh`);
//! - RTT independence (`prague_ai_ack_increase`, `prague_rate_scaled_ai_ack_increase`):
//!   after `prague_rtt_transition` = 4 rounds out of slow start, a flow whose SRTT is below
//!   the target RTT (25 ms, `RTT_TARGET`) grows by (SRTT/target)² segments per window, i.e.
//!   one segment per target RTT, as a flow at the target RTT would; above 100 ms
//!   (`MAX_SCALED_RTT`) not scaled;
//! - the pacing rate: MTU·max(window, in flight)/SRTT, at least 12 500 B/s
//!   (`MINIMUM_RATE`), doubled while cwnd < ssthresh/2 (`prague_update_pacing_rate`).
//!
//! Not modelled: the rate-based mode below 4 MTUs of window (`prague_cwnd_mode` 2 switches
//! to it) with its ±3 % pacing offset and MTU reduction, the TSO burst limit (no TSO here),
//! undo (`prague_cwnd_undo`: the model has no spurious-loss detection).

use crate::units::Time;

/// `PRAGUE_ALPHA_BITS`: α's unit is 2^-24.
pub const ALPHA_BITS: u32 = 24;
/// `PRAGUE_MAX_ALPHA`: α = 1.
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// `PRAGUE_SHIFT_G`: g = 1/16.
pub const SHIFT_G: u32 = 4;
/// `CWND_UNIT`: the fractional window's unit is 2^-20 segments.
pub const CWND_UNIT: u32 = 20;
/// `ONE_CWND`.
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// `MIN_CWND_RTT`: the smallest cwnd the fractional window gives.
pub const MIN_CWND: u32 = 2;
/// `MINIMUM_RATE`: 100 kb/s in bytes per second.
pub const MINIMUM_RATE: u64 = 12_500;
/// `MTU_SYS`: the MTU the additive increase is normalized to.
pub const MTU_SYS: u64 = 1500;
/// `MAX_SCALED_RTT`: no RTT scaling above 100 ms (µs).
pub const MAX_SCALED_RTT_US: u64 = 100_000;

/// The module's parameters (`TcpConfig`: `prague_rtt_scaling`, `prague_rtt_target_ms`,
/// `prague_rtt_transition`).
#[derive(Clone, Copy, Debug)]
pub struct PragueParams {
    /// RTT independence on (the module's only mode since it dropped `prague_rtt_scaling`:
    /// `RTT_CONTROL_RATE`); off: `RTT_CONTROL_NONE` of module version 0.6.
    pub rtt_scaling: bool,
    /// `prague_rtt_target`, µs.
    pub target_us: u64,
    /// `prague_rtt_transition`: rounds out of slow start before RTT independence.
    pub transition: u32,
    /// Bytes on the wire per full segment (`tcp_mss_to_mtu`).
    pub mtu: u64,
}

#[derive(Clone, Debug)]
pub struct Prague {
    pub p: PragueParams,
    /// α·16 in units of 2^-24 (`upscaled_alpha`).
    pub upscaled_alpha: u64,
    /// The window in 2^-20 segments (`frac_cwnd`).
    pub frac_cwnd: u64,
    /// Window growth per ACKed segment and window, 2^-20 units (`ai_ack_increase`).
    pub ai_ack_increase: u64,
    /// Rounds since slow start ended (`round`).
    pub round: u32,
    /// The round ends when snd_una reaches this (`next_seq`).
    pub next_seq: u64,
    /// Segments delivered and delivered CE-marked, in all and at the round's start
    /// (`tp->delivered`, `tp->delivered_ce`, `old_delivered`, `old_delivered_ce`).
    pub delivered: u64,
    pub delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// Last α update and last CWR reduction, µs (`alpha_stamp`, `cwr_stamp`).
    alpha_stamp: u64,
    cwr_stamp: u64,
    /// A CE mark has been seen (`saw_ce`).
    pub saw_ce: bool,
    /// In a loss reduction: no growth until Open (`in_loss`).
    pub in_loss: bool,
    /// α updates and CWR reductions made (for records).
    pub alpha_updates: u64,
    pub cwr_cuts: u64,
}

/// The state the module reads from the socket at each call.
#[derive(Clone, Copy, Debug)]
pub struct Sock {
    pub now_us: u64,
    /// `tp->srtt_us`: 8 × the smoothed RTT in µs (0: none yet).
    pub srtt8: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub clamp: u32,
}

impl Sock {
    #[inline]
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// `DIV64_U64_ROUND_CLOSEST`.
#[inline]
fn div_round(x: u128, d: u128) -> u128 {
    (x + d / 2) / d
}

impl Prague {
    /// `prague_init` when the connection is established with AccECN.
    pub fn new(p: PragueParams, s: &Sock) -> Self {
        let mut pr = Prague {
            p,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            frac_cwnd: (s.cwnd as u64) << CWND_UNIT,
            ai_ack_increase: ONE_CWND,
            round: 0,
            next_seq: s.snd_nxt,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            alpha_stamp: s.now_us,
            cwr_stamp: 0,
            saw_ce: false,
            in_loss: false,
            alpha_updates: 0,
            cwr_cuts: 0,
        };
        pr.new_round(s);
        pr
    }

    /// α in units of 2^-24 (`upscaled_alpha >> PRAGUE_SHIFT_G`).
    #[inline]
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// `prague_is_rtt_indep`.
    pub fn is_rtt_indep(&self, s: &Sock) -> bool {
        self.p.rtt_scaling && !s.in_slow_start() && self.round >= self.p.transition
    }

    /// `prague_rate_scaled_ai_ack_increase` for `srtt8` (8 × µs): (rtt/target)² of a
    /// segment, rounded to nearest, if rtt is below the target.
    pub fn rate_scaled_increase(&self, srtt8: u64) -> u64 {
        let target = self.p.target_us << 3;
        if srtt8 >= target {
            return ONE_CWND;
        }
        let x = ((srtt8 as u128) << CWND_UNIT) * srtt8 as u128;
        div_round(x, target as u128 * target as u128) as u64
    }

    /// `prague_ai_ack_increase`.
    fn update_ai(&mut self, srtt8: u64) {
        self.ai_ack_increase = if !self.p.rtt_scaling
            || self.round < self.p.transition
            || srtt8 == 0
            || srtt8 > MAX_SCALED_RTT_US << 3
        {
            ONE_CWND
        } else {
            self.rate_scaled_increase(srtt8)
        };
    }

    /// `prague_new_round`.
    fn new_round(&mut self, s: &Sock) {
        self.next_seq = s.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !s.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.p.transition;
            }
        }
        self.update_ai(s.srtt8);
    }

    /// The cwnd the fractional window gives (`prague_frac_cwnd_to_snd_cwnd`).
    pub fn target_cwnd(&self, clamp: u32) -> u32 {
        let c = (self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT;
        (c.min(u32::MAX as u64) as u32).max(MIN_CWND).min(clamp)
    }

    /// `prague_cong_control` after an ACK that delivered `acked` segments, `ce` of them newly
    /// reported CE-marked (`rs->acked_sacked`, `rs->ece_delta`): the window, then α at the
    /// end of a round. Returns cwnd and ssthresh.
    pub fn on_ack(&mut self, s: &Sock, acked: u32, ce: u32, cwnd_limited: bool) -> (u32, u32) {
        self.delivered += acked as u64;
        self.delivered_ce += ce as u64;
        let (cwnd, ssthresh) = self.update_cwnd(s, acked, ce, cwnd_limited);
        let s = Sock {
            cwnd,
            ssthresh,
            ..*s
        };
        if self.should_update_ewma(&s) {
            self.update_alpha(&s);
        }
        (cwnd, ssthresh)
    }

    /// `prague_update_cwnd`.
    fn update_cwnd(&mut self, s: &Sock, acked: u32, ce: u32, cwnd_limited: bool) -> (u32, u32) {
        let (mut cwnd, mut ssthresh) = (s.cwnd, s.ssthresh);
        let mut acked = acked as i64;
        if ce > 0 {
            if !self.saw_ce {
                // `prague_alpha_mode` 0: half the window at the first mark.
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= ce as i64;
        }
        if acked > 0 && !self.in_loss && cwnd_limited {
            let mut acked = acked as u32;
            if cwnd < ssthresh {
                acked = super::window_growth::slow_start(&mut cwnd, ssthresh, acked, s.clamp);
                self.frac_cwnd = (cwnd as u64) << CWND_UNIT;
                if acked == 0 {
                    self.update_ai(s.srtt8);
                    return (cwnd, ssthresh);
                }
            }
            let mut inc = acked as u128 * self.ai_ack_increase as u128;
            if self.frac_cwnd > 0 {
                inc = div_round(inc << CWND_UNIT, self.frac_cwnd as u128);
            }
            let inc = (inc * MTU_SYS as u128 / self.p.mtu.max(1) as u128) as u64;
            self.frac_cwnd += inc.max(acked as u64);
        }
        let target = self.target_cwnd(s.clamp);
        if cwnd > target {
            cwnd -= 1;
            ssthresh = cwnd;
            self.update_ai(s.srtt8);
        } else if cwnd < target {
            cwnd += 1;
            self.update_ai(s.srtt8);
        }
        (cwnd, ssthresh)
    }

    /// `prague_target_rtt_elapsed` (since the last α update).
    fn target_rtt_elapsed(&self, now_us: u64) -> bool {
        self.p.target_us <= now_us.saturating_sub(self.alpha_stamp)
    }

    /// `prague_should_update_ewma`.
    pub fn should_update_ewma(&self, s: &Sock) -> bool {
        s.snd_una >= self.next_seq && (!self.is_rtt_indep(s) || self.target_rtt_elapsed(s.now_us))
    }

    /// `prague_update_alpha`: α ← α − α/16 + F/16 (upscaled: A ← A − A/16 + F), F the
    /// fraction of the round's delivered segments that were CE-marked, in 2^-24; then a new
    /// round.
    fn update_alpha(&mut self, s: &Sock) {
        if self.saw_ce {
            let mut f = self.delivered_ce - self.old_delivered_ce;
            if f > 0 {
                let acked = (self.delivered - self.old_delivered).max(1);
                f = (f << ALPHA_BITS) / acked;
            }
            let a = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + f;
            self.alpha_stamp = s.now_us;
            self.upscaled_alpha = a.min(MAX_ALPHA << SHIFT_G);
            self.alpha_updates += 1;
        }
        self.new_round(s);
    }

    /// `prague_enter_cwr`: the window less α/2 of it, rounded to nearest.
    pub fn enter_cwr(&mut self, s: &Sock) {
        if self.is_rtt_indep(s) && self.p.target_us > s.now_us.saturating_sub(self.cwr_stamp) {
            return;
        }
        self.cwr_stamp = s.now_us;
        let r =
            (self.alpha() as u128 * self.frac_cwnd as u128 + MAX_ALPHA as u128) >> (ALPHA_BITS + 1);
        self.frac_cwnd -= r as u64;
        self.cwr_cuts += 1;
    }

    /// `prague_enter_loss` (fast recovery, or a timeout's `CA_EVENT_LOSS`).
    pub fn enter_loss(&mut self) {
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
    }

    /// `prague_ca_open`.
    pub fn ca_open(&mut self) {
        self.in_loss = false;
    }

    /// `prague_update_pacing_rate` (bytes per second): MTU·8·10⁶/srtt_us ·
    /// max(window, in flight), at least `MINIMUM_RATE`, doubled while cwnd < ssthresh/2.
    pub fn pacing_rate(&self, s: &Sock, in_flight: u32) -> u64 {
        let mut rate = 8_000_000u128 * self.p.mtu as u128;
        if s.srtt8 > 0 {
            rate /= s.srtt8 as u128;
        }
        let w = (self.frac_cwnd >> CWND_UNIT).max(in_flight as u64);
        let mut rate = (rate * w as u128).max(MINIMUM_RATE as u128);
        if s.cwnd < s.ssthresh / 2 {
            rate <<= 1;
        }
        rate.min(u64::MAX as u128) as u64
    }
}

/// Time in µs for the module's stamps.
#[inline]
pub fn us(now: Time) -> u64 {
    now / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PragueParams {
        PragueParams {
            rtt_scaling: true,
            target_us: 25_000,
            transition: 4,
            mtu: 1500,
        }
    }

    fn sock(cwnd: u32, ssthresh: u32, una: u64, nxt: u64, now_us: u64) -> Sock {
        Sock {
            now_us,
            srtt8: 8 * 10_000,
            snd_una: una,
            snd_nxt: nxt,
            cwnd,
            ssthresh,
            clamp: 100_000,
        }
    }

    /// α over five rounds of 10 segments with 0, 5, 10, 2, 0 marks, in the module's fixed
    /// point (A = 16α·2^24 = 2^28 at first): A − A/16 + marks·2^24/10, by hand:
    /// round 0 (no mark yet): not updated, 268 435 456;
    /// round 1, 5 of 10: 268 435 456 − 16 777 216 + 8 388 608 = 260 046 848 (α 0.96875);
    /// round 2, 10 of 10: 260 046 848 − 16 252 928 + 16 777 216 = 260 571 136;
    /// round 3, 2 of 10: 260 571 136 − 16 285 696 + 3 355 443 = 247 640 883;
    /// round 4, none: 247 640 883 − 15 477 555 = 232 163 328 (α ≈ 0.865).
    /// (Without RTT scaling, so that α is updated every round.)
    #[test]
    fn alpha_trajectory() {
        let mut pp = params();
        pp.rtt_scaling = false;
        let mut p = Prague::new(pp, &sock(100, 50, 0, 0, 0));
        let marks = [0u32, 5, 10, 2, 0];
        let want = [
            268_435_456u64,
            260_046_848,
            260_571_136,
            247_640_883,
            232_163_328,
        ];
        let mut seq = 0;
        for (r, (&m, &w)) in marks.iter().zip(&want).enumerate() {
            // The round: 10 segments outstanding from seq to seq + 10.
            p.next_seq = seq + 10;
            for k in 0..10u64 {
                let ce = (k < m as u64) as u32;
                let s = sock(100, 50, seq + k + 1, seq + 20, 1000 * (r as u64 * 10 + k));
                p.on_ack(&s, 1, ce, false);
            }
            assert_eq!(p.upscaled_alpha, w, "round {r}");
            seq += 10;
        }
        assert_eq!(p.alpha_updates, 4);
    }

    /// A CWR reduction with α = 1/2 (2^23) from a window of 40 segments: (40·2^20·2^23 +
    /// 2^24) shifted right by 25 = 10·2^20 off: 30 segments; cwnd then steps down one
    /// segment per ACK, ssthresh with it, and stops at 30.
    #[test]
    fn cwnd_after_a_marked_round() {
        let mut p = Prague::new(params(), &sock(40, 20, 0, 0, 0));
        p.upscaled_alpha = (MAX_ALPHA / 2) << SHIFT_G;
        p.saw_ce = true;
        p.enter_cwr(&sock(40, 20, 0, 100, 0));
        assert_eq!(p.frac_cwnd, 30 << CWND_UNIT);
        let (mut cwnd, mut ss) = (40, 20);
        for _ in 0..15 {
            // No growth (not cwnd-limited): only the steps.
            (cwnd, ss) = p.on_ack(&sock(cwnd, ss, 0, 100, 0), 1, 0, false);
        }
        assert_eq!((cwnd, ss), (30, 30));
        // α = 0.3: (0.3·2^24 truncated = 5 033 164) · 30·2^20 + 2^24 >> 25 = 4 718 591 (just
        // under 4.5 segments): 25.5 segments, cwnd 26.
        p.upscaled_alpha = (MAX_ALPHA * 3 / 10) << SHIFT_G;
        p.enter_cwr(&sock(30, 30, 0, 100, 0));
        let cut = ((MAX_ALPHA * 3 / 10) as u128 * (30u128 << 20) + (1 << 24)) >> 25;
        assert_eq!(cut, 4_718_591);
        assert_eq!(p.frac_cwnd, (30 << 20) - 4_718_591);
        assert_eq!(p.target_cwnd(1000), 26);
    }

    /// Additive increase without RTT scaling: 1/W per ACKed segment (each ACK adds
    /// 2^20·2^20/frac, rounded: the first 52 429 = 2^20/20, then a little less as the
    /// window grows). cwnd is the window rounded up: 21 after the first ACK, 22 once 21
    /// ACKs have added a whole segment (20 of them add ≈ 0.976). A CE-marked segment adds
    /// nothing.
    #[test]
    fn additive_increase() {
        let mut pp = params();
        pp.rtt_scaling = false;
        let mut p = Prague::new(pp, &sock(20, 10, 0, 0, 0));
        let (mut cwnd, mut ss) = (20u32, 10u32);
        (cwnd, ss) = p.on_ack(&sock(cwnd, ss, 0, 1000, 0), 1, 0, true);
        assert_eq!(p.frac_cwnd, (20 << 20) + 52_429);
        assert_eq!(cwnd, 21, "rounded up");
        let mut acks = 1;
        while cwnd == 21 {
            (cwnd, ss) = p.on_ack(&sock(cwnd, ss, 0, 1000, 0), 1, 0, true);
            acks += 1;
        }
        assert_eq!(acks, 21, "one segment per window of ACKs");
        assert_eq!(cwnd, 22);
        let before = p.frac_cwnd;
        p.saw_ce = true;
        p.on_ack(&sock(cwnd, ss, 0, 1000, 0), 1, 1, true);
        assert_eq!(p.frac_cwnd, before);
    }

    /// RTT independence: at SRTT 5 ms against the 25 ms target a segment per window becomes
    /// (5/25)² = 1/25 of one (2^20/25 = 41 943.04 → 41 943); at 10 ms (1/6.25) 167 772;
    /// at 25 ms or more unscaled; not before 4 rounds out of slow start.
    #[test]
    fn rtt_scaling_numbers() {
        let p = Prague::new(params(), &sock(20, 10, 0, 0, 0));
        assert_eq!(p.rate_scaled_increase(8 * 5_000), 41_943);
        assert_eq!(p.rate_scaled_increase(8 * 10_000), 167_772);
        assert_eq!(p.rate_scaled_increase(8 * 25_000), ONE_CWND);
        assert_eq!(p.rate_scaled_increase(8 * 40_000), ONE_CWND);
        // `new` counted round 1 (not in slow start: 20 ≥ 10); rounds 2, 3 unscaled, the 4th
        // scaled.
        let mut p = Prague::new(params(), &sock(20, 10, 0, 0, 0));
        assert_eq!(p.round, 1);
        for r in 2..=4u32 {
            let s = sock(20, 10, p.next_seq, p.next_seq + 20, r as u64 * 10_000);
            p.on_ack(&s, 0, 0, false);
            assert_eq!(p.round, r);
            let want = if r < 4 { ONE_CWND } else { 167_772 };
            assert_eq!(p.ai_ack_increase, want, "round {r}");
        }
        assert!(p.is_rtt_indep(&sock(20, 10, 0, 0, 0)));
        // Once RTT-independent, a second CWR within the 25 ms target does nothing.
        let mut q = p.clone();
        q.enter_cwr(&sock(20, 10, 0, 0, 100_000));
        let f = q.frac_cwnd;
        q.enter_cwr(&sock(20, 10, 0, 0, 110_000));
        assert_eq!(q.frac_cwnd, f);
        q.enter_cwr(&sock(20, 10, 0, 0, 125_000));
        assert!(q.frac_cwnd < f);
    }

    /// The first mark halves the window; a loss halves it and holds growth until Open.
    #[test]
    fn first_mark_and_loss() {
        let mut p = Prague::new(params(), &sock(20, 10, 0, 0, 0));
        p.on_ack(&sock(20, 10, 0, 100, 0), 2, 1, true);
        assert!(p.saw_ce);
        assert_eq!(p.frac_cwnd >> CWND_UNIT, 10);
        p.frac_cwnd = 40 << CWND_UNIT;
        p.enter_loss();
        assert_eq!(p.frac_cwnd, 20 << CWND_UNIT);
        p.on_ack(&sock(20, 10, 0, 100, 0), 3, 0, true);
        assert_eq!(p.frac_cwnd, 20 << CWND_UNIT, "no growth in loss");
        p.ca_open();
        p.on_ack(&sock(20, 10, 0, 100, 0), 3, 0, true);
        assert!(p.frac_cwnd > 20 << CWND_UNIT);
    }

    /// Pacing: 1500 B · 8·10⁶ / (8·10 000) = 150 000 B/s per segment of window; 30
    /// segments: 4.5 MB/s; doubled below ssthresh/2.
    #[test]
    fn pacing_rate() {
        let mut p = Prague::new(params(), &sock(30, 10, 0, 0, 0));
        p.frac_cwnd = 30 << CWND_UNIT;
        assert_eq!(p.pacing_rate(&sock(30, 10, 0, 0, 0), 0), 4_500_000);
        assert_eq!(p.pacing_rate(&sock(30, 10, 0, 0, 0), 40), 6_000_000);
        assert_eq!(p.pacing_rate(&sock(30, 100, 0, 0, 0), 0), 9_000_000);
    }
}
