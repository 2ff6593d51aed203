//! TCP Prague, the L4S team's Linux module `net/ipv4/tcp_prague.c`
//! (draft-briscoe-iccrg-prague-congestion-control), in two versions (`PragueVersion`), each
//! read at its L4STeam/linux commit:
//!
//! - **893e147** (module 0.7, the default): the fixed-point fractional window (`frac_cwnd`,
//!   this file) and, once RTT-independent with a window of at most 4 MTUs, the rate-based
//!   mode (`prague_cwnd_mode` 2, `tcp/prague/rate.rs`);
//! - **b256dae** (module 0.5, 2020-08-04, the kernel of the L4S test suite's testbed): an
//!   integer cwnd with a carry in 2^-20 segments, α in 2^-20 (`tcp/prague/b256dae.rs`).
//!
//! Common to both (this file):
//!
//! - α, the EWMA of the fraction of delivered segments that were CE-marked, with gain
//!   1/16 (`PRAGUE_SHIFT_G`), kept upscaled by 16 so that its remainder carries over
//!   (`PRAGUE_ALPHA_BITS`: 24 in 893e147, 20 in b256dae), updated once per round
//!   (snd_una reaches the snd_nxt of the round's start) — once RTT-independent, no more
//!   often than every target RTT — and only once a CE mark has been seen
//!   (`prague_update_alpha`, `prague_should_update_ewma`). Its start: 0 in 893e147
//!   (`prague_alpha_mode` 0, whose first CE mark halves the window instead), 1 in b256dae;
//! - a CE response on entering CWR (an ACK with new CE marks, at most once per window of
//!   data) of α/2 of the window, rounded to nearest (`prague_enter_cwr`); once
//!   RTT-independent, no more often than every target RTT;
//! - a loss (fast recovery or a timeout) halves the window and holds growth until the
//!   connection is back in the Open state (`prague_enter_loss`, `prague_ca_open`); ssthresh
//!   is left as it is (`prague_ssthresh`);
//! - RTT independence (`prague_ai_ack_increase`, `prague_rate_scaled_ai_ack_increase`):
//!   after `prague_rtt_transition` rounds out of slow start, a flow whose SRTT is below the
//!   target RTT grows by (SRTT/target)² segments per window, i.e. one segment per target
//!   RTT, as a flow at the target RTT would; above 100 ms (`MAX_SCALED_RTT`) not scaled.
//!   Always on in 893e147 (key `prague_rtt_scaling`); a module parameter in b256dae, off
//!   by default (`RTT_CONTROL_NONE`);
//! - the pacing rate: MTU·max(window, in flight)/SRTT (`prague_update_pacing_rate`),
//!   doubled while cwnd < ssthresh/2.
//!
//! Not modelled: the MTU reduction of 893e147 for windows below 2 MTUs at the virtual RTT
//! (`prague_update_alpha`, `prague_pacing_rate_to_max_mtu`: below about 1 Mb/s at RTTs up
//! to 25 ms), the TSO burst limit (no TSO here), undo (`prague_cwnd_undo`: the model has no
//! spurious-loss detection), b256dae's classic-ECN detection (`prague_ecn_fallback`, 0 =
//! off by default: it only logs).

pub mod b256dae;
pub mod rate;

use super::config::PragueVersion;
use crate::units::Time;

/// `PRAGUE_ALPHA_BITS` of 893e147: α's unit is 2^-24 (b256dae: `ALPHA_BITS_2020`).
pub const ALPHA_BITS: u32 = 24;
/// `PRAGUE_MAX_ALPHA` of 893e147: α = 1.
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// `PRAGUE_SHIFT_G`: g = 1/16.
pub const SHIFT_G: u32 = 4;
/// `CWND_UNIT`: the fractional window's unit is 2^-20 segments.
pub const CWND_UNIT: u32 = 20;
/// `ONE_CWND`.
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// `MIN_CWND_RTT` (893e147), `MIN_CWND` (b256dae): the smallest cwnd.
pub const MIN_CWND: u32 = 2;
/// `MINIMUM_RATE` (893e147): 100 kb/s in bytes per second.
pub const MINIMUM_RATE: u64 = 12_500;
/// `MTU_SYS`: the MTU the additive increase is normalized to.
pub const MTU_SYS: u64 = 1500;
/// `MAX_SCALED_RTT`: no RTT scaling above 100 ms (µs).
pub const MAX_SCALED_RTT_US: u64 = 100_000;

/// The module's parameters (`TcpConfig`: `prague_version`, `prague_rtt_scaling`,
/// `prague_rtt_target_ms`, `prague_rtt_transition`).
#[derive(Clone, Copy, Debug)]
pub struct PragueParams {
    pub version: PragueVersion,
    /// RTT independence on (`RTT_CONTROL_RATE`); off: `RTT_CONTROL_NONE`.
    pub rtt_scaling: bool,
    /// `prague_rtt_target`, µs.
    pub target_us: u64,
    /// `prague_rtt_transition`: rounds out of slow start before RTT independence.
    pub transition: u32,
    /// Bytes on the wire per full segment (`tcp_mss_to_mtu`).
    pub mtu: u64,
}

impl PragueParams {
    /// `PRAGUE_ALPHA_BITS` of the version.
    #[inline]
    pub fn alpha_bits(&self) -> u32 {
        match self.version {
            PragueVersion::V893e147 => ALPHA_BITS,
            PragueVersion::Vb256dae => b256dae::ALPHA_BITS_2020,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Prague {
    pub p: PragueParams,
    /// α·16 in units of 2^-ALPHA_BITS (`upscaled_alpha`).
    pub upscaled_alpha: u64,
    /// 893e147: the window in 2^-20 segments (`frac_cwnd`).
    pub frac_cwnd: u64,
    /// b256dae: the carry towards the next cwnd step, 2^-20 segments (`cwnd_cnt`).
    pub cwnd_cnt: i64,
    /// 893e147: the rate in bytes per second (`rate_bytes`), which the rate-based mode
    /// controls; in the window mode it follows the window.
    pub rate_bytes: u64,
    /// 893e147: 2^7 × an EWMA (gain 2^-7, once per round) of `srtt_us` (`hsrtt_us`).
    pub hsrtt: u64,
    /// 893e147: the rate-based mode (`cwnd_mode` 1; `prague_cwnd_mode` 2 switches).
    pub rate_mode: bool,
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
    pub(super) alpha_stamp: u64,
    pub(super) cwr_stamp: u64,
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
    /// Data written but not yet sent (`!tcp_write_queue_empty`; b256dae's growth check).
    pub unsent: bool,
}

impl Sock {
    #[inline]
    pub(super) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// `DIV64_U64_ROUND_CLOSEST`.
#[inline]
pub(super) fn div_round(x: u128, d: u128) -> u128 {
    (x + d / 2) / d
}

impl Prague {
    /// `prague_init` when the connection is established with AccECN.
    pub fn new(p: PragueParams, s: &Sock) -> Self {
        let v893 = p.version == PragueVersion::V893e147;
        let mut pr = Prague {
            p,
            // 893e147, `prague_alpha_mode` 0: α starts at 0 (the first mark halves the
            // window); b256dae: at 1.
            upscaled_alpha: if v893 {
                0
            } else {
                (1 << p.alpha_bits()) << SHIFT_G
            },
            frac_cwnd: (s.cwnd as u64) << CWND_UNIT,
            cwnd_cnt: 0,
            rate_bytes: 0,
            hsrtt: if s.srtt8 > 0 {
                s.srtt8 << rate::HSRTT_SHIFT
            } else {
                1 << (rate::HSRTT_SHIFT + 3)
            },
            rate_mode: false,
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
        if v893 {
            pr.rate_bytes = pr.initial_rate(s);
        }
        pr.new_round(s);
        pr
    }

    /// α in units of 2^-ALPHA_BITS (`upscaled_alpha >> PRAGUE_SHIFT_G`).
    #[inline]
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// `prague_is_rtt_indep`.
    pub fn is_rtt_indep(&self, s: &Sock) -> bool {
        self.p.rtt_scaling && !s.in_slow_start() && self.round >= self.p.transition
    }

    /// The target RTT as the version compares it with elapsed µs: 893e147 keeps µs,
    /// b256dae 128-µs units (`RTT2US(prague_target_rtt)`).
    #[inline]
    pub(super) fn target_elapsed_us(&self) -> u64 {
        match self.p.version {
            PragueVersion::V893e147 => self.p.target_us,
            PragueVersion::Vb256dae => b256dae::rtt_units(self.p.target_us) << 7,
        }
    }

    /// `prague_rate_scaled_ai_ack_increase` of 893e147 for `srtt8` (8 × µs): (rtt/target)²
    /// of a segment, rounded to nearest, if rtt is below the target.
    pub fn rate_scaled_increase(&self, srtt8: u64) -> u64 {
        let target = self.p.target_us << 3;
        if srtt8 >= target {
            return ONE_CWND;
        }
        let x = ((srtt8 as u128) << CWND_UNIT) * srtt8 as u128;
        div_round(x, target as u128 * target as u128) as u64
    }

    /// `prague_ai_ack_increase`.
    pub(super) fn update_ai(&mut self, srtt8: u64) {
        self.ai_ack_increase = if !self.p.rtt_scaling || self.round < self.p.transition {
            ONE_CWND
        } else {
            match self.p.version {
                PragueVersion::V893e147 if srtt8 == 0 || srtt8 > MAX_SCALED_RTT_US << 3 => ONE_CWND,
                PragueVersion::V893e147 => self.rate_scaled_increase(srtt8),
                PragueVersion::Vb256dae => self.rate_scaled_increase_2020(srtt8),
            }
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
    /// reported CE-marked (`rs->acked_sacked`, `rs->ece_delta`), `in_flight` now
    /// (`tcp_packets_in_flight`): the window, α at the end of a round, the pacing rate and
    /// (893e147) the switch between the window and the rate-based mode. Returns cwnd,
    /// ssthresh and the pacing rate (bytes per second).
    pub fn cong_control(
        &mut self,
        s: &Sock,
        acked: u32,
        ce: u32,
        cwnd_limited: bool,
        in_flight: u32,
    ) -> (u32, u32, u64) {
        let (cwnd, ssthresh) = self.on_ack(s, acked, ce, cwnd_limited);
        let s = Sock {
            cwnd,
            ssthresh,
            ..*s
        };
        let rate = self.update_pacing_rate(&s, in_flight);
        if self.p.version == PragueVersion::V893e147 {
            self.switch_mode(&s);
        }
        (cwnd, ssthresh, rate)
    }

    /// The window and α of `cong_control` (`prague_update_cwnd`, `prague_update_alpha`).
    /// Returns cwnd and ssthresh.
    pub fn on_ack(&mut self, s: &Sock, acked: u32, ce: u32, cwnd_limited: bool) -> (u32, u32) {
        self.delivered += acked as u64;
        self.delivered_ce += ce as u64;
        let (cwnd, ssthresh) = match self.p.version {
            PragueVersion::V893e147 => self.update_cwnd(s, acked, ce, cwnd_limited),
            PragueVersion::Vb256dae => self.update_cwnd_2020(s, acked, ce, cwnd_limited),
        };
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

    /// `prague_update_cwnd` of 893e147.
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
            if self.rate_mode && self.is_rtt_indep(s) {
                self.rate_mode_increase(s, acked);
            } else {
                let mut inc = acked as u128 * self.ai_ack_increase as u128;
                if self.frac_cwnd > 0 {
                    inc = div_round(inc << CWND_UNIT, self.frac_cwnd as u128);
                }
                let inc = (inc * MTU_SYS as u128 / self.p.mtu.max(1) as u128) as u64;
                self.frac_cwnd += inc.max(acked as u64);
                let rate = self.frac_to_rate(s);
                self.rate_bytes = (self.rate_bytes + acked as u64).max(rate);
            }
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
        self.target_elapsed_us() <= now_us.saturating_sub(self.alpha_stamp)
    }

    /// `prague_should_update_ewma`.
    pub fn should_update_ewma(&self, s: &Sock) -> bool {
        s.snd_una >= self.next_seq && (!self.is_rtt_indep(s) || self.target_rtt_elapsed(s.now_us))
    }

    /// `prague_update_alpha`: α ← α − α/16 + F/16 (upscaled: A ← A − A/16 + F), F the
    /// fraction of the round's delivered segments that were CE-marked, in 2^-ALPHA_BITS; then
    /// (893e147) the SRTT's slow EWMA and, in both, a new round.
    fn update_alpha(&mut self, s: &Sock) {
        if self.saw_ce {
            let bits = self.p.alpha_bits();
            let mut f = self.delivered_ce - self.old_delivered_ce;
            if f > 0 {
                let acked = (self.delivered - self.old_delivered).max(1);
                f = (f << bits) / acked;
            }
            let a = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + f;
            self.alpha_stamp = s.now_us;
            self.upscaled_alpha = a.min((1 << bits) << SHIFT_G);
            self.alpha_updates += 1;
        }
        if self.p.version == PragueVersion::V893e147 {
            self.update_hsrtt(s);
        }
        self.new_round(s);
    }

    /// `prague_enter_cwr`: the window (or, in the rate-based mode, the rate) less α/2 of it,
    /// rounded to nearest.
    pub fn enter_cwr(&mut self, s: &Sock) {
        if self.is_rtt_indep(s)
            && self.target_elapsed_us() > s.now_us.saturating_sub(self.cwr_stamp)
        {
            return;
        }
        self.cwr_stamp = s.now_us;
        self.cwr_cuts += 1;
        match self.p.version {
            PragueVersion::Vb256dae => self.enter_cwr_2020(s),
            PragueVersion::V893e147 if self.rate_mode && self.is_rtt_indep(s) => {
                self.rate_mode_cwr(s)
            },
            PragueVersion::V893e147 => {
                let r = (self.alpha() as u128 * self.frac_cwnd as u128 + MAX_ALPHA as u128)
                    >> (ALPHA_BITS + 1);
                self.frac_cwnd -= r as u64;
                self.rate_bytes = self.frac_to_rate(s);
            },
        }
    }

    /// `prague_enter_loss` (fast recovery, or a timeout's `CA_EVENT_LOSS`).
    pub fn enter_loss(&mut self, s: &Sock) {
        match self.p.version {
            PragueVersion::Vb256dae => self.enter_loss_2020(s),
            PragueVersion::V893e147 if self.rate_mode && self.is_rtt_indep(s) => {
                self.rate_mode_loss(s)
            },
            PragueVersion::V893e147 => {
                self.frac_cwnd -= self.frac_cwnd >> 1;
                self.rate_bytes = self.frac_to_rate(s);
            },
        }
        self.in_loss = true;
    }

    /// `prague_ca_open`.
    pub fn ca_open(&mut self) {
        self.in_loss = false;
    }

    /// `prague_update_pacing_rate` (bytes per second).
    pub fn update_pacing_rate(&mut self, s: &Sock, in_flight: u32) -> u64 {
        let rate = match self.p.version {
            PragueVersion::Vb256dae => return self.pacing_rate_2020(s, in_flight),
            PragueVersion::V893e147 if self.rate_mode && self.is_rtt_indep(s) => {
                self.rate_mode_pacing(s)
            },
            PragueVersion::V893e147 => {
                // MTU·8·10⁶/srtt_us · max(⌊window⌋, in flight), at least `MINIMUM_RATE`.
                let mut rate = 8_000_000u128 * self.p.mtu as u128;
                if s.srtt8 > 0 {
                    rate /= s.srtt8 as u128;
                }
                let w = (self.frac_cwnd >> CWND_UNIT).max(in_flight as u64);
                let rate = (rate * w as u128)
                    .max(MINIMUM_RATE as u128)
                    .min(u64::MAX as u128) as u64;
                self.rate_bytes = rate;
                rate
            },
        };
        if s.cwnd < s.ssthresh / 2 {
            rate.saturating_mul(2)
        } else {
            rate
        }
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
            version: PragueVersion::V893e147,
            rtt_scaling: true,
            target_us: 25_000,
            transition: 4,
            mtu: 1500,
        }
    }

    /// b256dae at its defaults (`linux-prague-2020`): no RTT scaling, target 15 ms,
    /// transition 100.
    fn params_2020() -> PragueParams {
        PragueParams {
            version: PragueVersion::Vb256dae,
            rtt_scaling: false,
            target_us: 15_000,
            transition: 100,
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
            unsent: false,
        }
    }

    /// Five rounds of 10 segments with 0, 5, 10, 2, 0 marks: α after each, as the upscaled
    /// A = 16α in 2^-ALPHA_BITS, A ← A − A/16 + marks·2^ALPHA_BITS/10 from the first mark on.
    fn alpha_rounds(pp: PragueParams) -> (Vec<u64>, u64) {
        let mut p = Prague::new(pp, &sock(100, 50, 0, 0, 0));
        let marks = [0u32, 5, 10, 2, 0];
        let mut got = vec![];
        let mut seq = 0;
        for (r, &m) in marks.iter().enumerate() {
            // The round: 10 segments outstanding from seq to seq + 10.
            p.next_seq = seq + 10;
            for k in 0..10u64 {
                let ce = (k < m as u64) as u32;
                let s = sock(100, 50, seq + k + 1, seq + 20, 1000 * (r as u64 * 10 + k));
                p.on_ack(&s, 1, ce, false);
            }
            got.push(p.upscaled_alpha);
            seq += 10;
        }
        (got, p.alpha_updates)
    }

    /// 893e147 (`prague_alpha_mode` 0: α starts at 0), by hand in 2^-24:
    /// round 0 (no mark yet): 0; round 1, 5 of 10: 0 + 8 388 608;
    /// round 2, 10 of 10: 8 388 608 − 524 288 + 16 777 216 = 24 641 536;
    /// round 3, 2 of 10: 24 641 536 − 1 540 096 + 3 355 443 = 26 456 883;
    /// round 4, none: 26 456 883 − 1 653 555 = 24 803 328 (α ≈ 0.092).
    /// b256dae (α starts at 1, 2^-20 units, A = 2^24 at first):
    /// 16 777 216 → 16 777 216 − 1 048 576 + 524 288 = 16 252 928 → 16 252 928 − 1 015 808 +
    /// 1 048 576 = 16 285 696 → 16 285 696 − 1 017 856 + 209 715 = 15 477 555 →
    /// 15 477 555 − 967 347 = 14 510 208 (α ≈ 0.865).
    /// (Without RTT scaling, so that α is updated every round.)
    #[test]
    fn alpha_trajectory() {
        let mut pp = params();
        pp.rtt_scaling = false;
        let (a, n) = alpha_rounds(pp);
        assert_eq!(a, [0, 8_388_608, 24_641_536, 26_456_883, 24_803_328]);
        assert_eq!(n, 4);
        let (a, n) = alpha_rounds(params_2020());
        assert_eq!(
            a,
            [16_777_216, 16_252_928, 16_285_696, 15_477_555, 14_510_208]
        );
        assert_eq!(n, 4);
    }

    /// 893e147: the first mark halves the window (α 0 then takes nothing off at the CWR it
    /// also starts); b256dae: no halving, the CWR with α = 1 takes half.
    #[test]
    fn first_mark() {
        let mut p = Prague::new(params(), &sock(20, 10, 0, 0, 0));
        p.enter_cwr(&sock(20, 10, 0, 100, 0));
        assert_eq!(p.frac_cwnd, 20 << CWND_UNIT, "α = 0: no cut");
        p.on_ack(&sock(20, 10, 0, 100, 0), 2, 1, true);
        assert!(p.saw_ce);
        assert_eq!(p.frac_cwnd >> CWND_UNIT, 10);
        let mut p = Prague::new(params_2020(), &sock(20, 10, 0, 0, 0));
        p.enter_cwr(&sock(20, 10, 0, 100, 0));
        assert_eq!(p.cwnd_cnt, -(10 << CWND_UNIT));
        let (cwnd, ss) = p.on_ack(&sock(20, 10, 0, 100, 0), 2, 1, false);
        assert!(p.saw_ce);
        assert_eq!((cwnd, ss), (19, 19), "one step down per ACK");
        assert_eq!(p.cwnd_cnt, -(9 << CWND_UNIT));
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

    /// b256dae's window, by hand (`prague_update_cwnd`, `prague_enter_cwr` of b256dae):
    /// at cwnd 10 each ACKed segment adds (2^20 + 5)/10 = 104 858 to the carry; the 10th
    /// makes 1 048 580, a whole segment: cwnd 11, carry 4. A CWR at α = 1/2 (2^19) takes
    /// (2^19·11·2^20 + 2^20) >> 21 = 2 883 584 (2.75 segments): carry −2 883 580, then one
    /// step down per ACK while a whole segment is owed: 10 (−1 835 004), 9 (−786 428), and
    /// 9 stays. Not cwnd-limited, the carry grows only while data waits (internal pacing).
    #[test]
    fn window_2020() {
        let mut p = Prague::new(params_2020(), &sock(10, 5, 0, 0, 0));
        let mut s = sock(10, 5, 0, 1000, 0);
        s.unsent = true;
        let mut cwnd = 10;
        for k in 1..=10 {
            (cwnd, _) = p.on_ack(&Sock { cwnd, ..s }, 1, 0, false);
            if k == 9 {
                assert_eq!((cwnd, p.cwnd_cnt), (10, 943_722));
            }
        }
        assert_eq!((cwnd, p.cwnd_cnt), (11, 4));
        p.upscaled_alpha = (1 << 19) << SHIFT_G;
        p.enter_cwr(&Sock { cwnd, ..s });
        assert_eq!(p.cwnd_cnt, 4 - 2_883_584);
        s.unsent = false;
        let mut ss = 5;
        let mut steps = vec![];
        for _ in 0..3 {
            (cwnd, ss) = p.on_ack(
                &Sock {
                    cwnd,
                    ssthresh: ss,
                    ..s
                },
                1,
                0,
                false,
            );
            steps.push((cwnd, ss, p.cwnd_cnt));
        }
        assert_eq!(
            steps,
            [(10, 10, -1_835_004), (9, 9, -786_428), (9, 9, -786_428)]
        );
        // At the floor the rest of a reduction is dropped.
        p.cwnd_cnt = -3 << CWND_UNIT;
        let (cwnd, ss) = p.on_ack(
            &Sock {
                cwnd: 2,
                ssthresh: 2,
                ..s
            },
            1,
            0,
            false,
        );
        assert_eq!((cwnd, ss, p.cwnd_cnt), (2, 2, 0));
        // A loss: half of cwnd and half of the carry (arithmetic shift) off the carry.
        p.cwnd_cnt = -5;
        p.enter_loss(&Sock { cwnd: 10, ..s });
        assert_eq!(p.cwnd_cnt, -5 - (5 << CWND_UNIT) - (-3));
        assert!(p.in_loss);
    }

    /// b256dae's `RTT_CONTROL_RATE` in 128-µs units: SRTT 10 ms = 78, target 15 ms = 117:
    /// (78·2^20·78 + 117²/2) / 117² = 466 034; at or above the target, unscaled.
    #[test]
    fn rtt_scaling_2020() {
        let p = Prague::new(params_2020(), &sock(10, 5, 0, 0, 0));
        assert_eq!(p.rate_scaled_increase_2020(8 * 10_000), 466_034);
        assert_eq!(p.rate_scaled_increase_2020(8 * 15_000), ONE_CWND);
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
        q.upscaled_alpha = (MAX_ALPHA / 2) << SHIFT_G;
        q.enter_cwr(&sock(20, 10, 0, 0, 100_000));
        let f = q.frac_cwnd;
        q.enter_cwr(&sock(20, 10, 0, 0, 110_000));
        assert_eq!(q.frac_cwnd, f);
        q.enter_cwr(&sock(20, 10, 0, 0, 125_000));
        assert!(q.frac_cwnd < f);
    }

    /// A loss halves the window and holds growth until Open.
    #[test]
    fn loss() {
        let mut p = Prague::new(params(), &sock(20, 10, 0, 0, 0));
        p.frac_cwnd = 40 << CWND_UNIT;
        p.enter_loss(&sock(40, 10, 0, 100, 0));
        assert_eq!(p.frac_cwnd, 20 << CWND_UNIT);
        p.on_ack(&sock(20, 10, 0, 100, 0), 3, 0, true);
        assert_eq!(p.frac_cwnd, 20 << CWND_UNIT, "no growth in loss");
        p.ca_open();
        p.on_ack(&sock(20, 10, 0, 100, 0), 3, 0, true);
        assert!(p.frac_cwnd > 20 << CWND_UNIT);
    }

    /// Pacing: 1500 B · 8·10⁶ / (8·10 000) = 150 000 B/s per segment of window; 30
    /// segments: 4.5 MB/s; doubled below ssthresh/2. b256dae: the integer cwnd, and no
    /// minimum.
    #[test]
    fn pacing_rate() {
        let mut p = Prague::new(params(), &sock(30, 10, 0, 0, 0));
        p.frac_cwnd = 30 << CWND_UNIT;
        assert_eq!(p.update_pacing_rate(&sock(30, 10, 0, 0, 0), 0), 4_500_000);
        assert_eq!(p.rate_bytes, 4_500_000);
        assert_eq!(p.update_pacing_rate(&sock(30, 10, 0, 0, 0), 40), 6_000_000);
        assert_eq!(p.update_pacing_rate(&sock(30, 100, 0, 0, 0), 0), 9_000_000);
        let mut p = Prague::new(params_2020(), &sock(10, 5, 0, 0, 0));
        assert_eq!(p.update_pacing_rate(&sock(10, 5, 0, 0, 0), 12), 1_800_000);
        assert_eq!(p.update_pacing_rate(&sock(3, 10, 0, 0, 0), 0), 900_000);
    }

    /// 893e147's rate-based mode, by hand from `tcp_prague.c` (SRTT 10 ms, srtt_us =
    /// 80 000; the `hsrtt_us` EWMA equal to it; target 25 ms: virtual RTT 200 000):
    ///
    /// - cwnd 4 (6000 B ≤ 4·1500) after a mark: the rate-based mode, the window from the
    ///   rate 300 000 B/s: ⌈(300 000·80 000 >> 3)/1500⌉ = 2 000 000 (1.91 segments);
    /// - one ACKed segment: increase (1500 << 23)/200 000 = 62 914, over the rate's window
    ///   ⌈300 000·200 000/(1500 << 23)⌉ = 5: +12 583 → 312 583 B/s; window
    ///   ⌈(312 583·80 000 >> 3)/1500⌉ = 2 083 887;
    /// - pacing ±(4·312 583) >> 7 = 9 768: 322 351 in the first half virtual RTT
    ///   (12 500 µs) after the α update, 302 815 after;
    /// - a CWR at α = 1/2: (312 583·2^23) >> 25 = 78 145 off: 234 438, window 1 562 920;
    ///   then a loss halves it: 117 219, window 781 460 (cwnd stays 2);
    /// - cwnd 5 (7500 B): back to the window mode, the rate from the window.
    #[test]
    fn rate_based_mode() {
        let mut p = Prague::new(params(), &sock(4, 2, 0, 0, 0));
        p.round = 4;
        p.saw_ce = true;
        p.rate_bytes = 300_000;
        p.hsrtt = 80_000 << super::rate::HSRTT_SHIFT;
        p.alpha_stamp = 0;
        let s = sock(4, 2, 0, 100, 5_000);
        assert!(p.is_rtt_indep(&s));
        p.switch_mode(&s);
        assert!(p.rate_mode);
        assert_eq!(p.frac_cwnd, 2_000_000);
        let (cwnd, _) = p.on_ack(&s, 1, 0, true);
        assert_eq!(p.rate_bytes, 312_583);
        assert_eq!(p.frac_cwnd, 2_083_887);
        assert_eq!(cwnd, 3, "one step down toward ⌈1.99⌉ = 2");
        assert_eq!(p.update_pacing_rate(&s, 0), 322_351);
        assert_eq!(
            p.update_pacing_rate(&sock(4, 2, 0, 100, 20_000), 0),
            302_815
        );
        p.upscaled_alpha = (MAX_ALPHA / 2) << SHIFT_G;
        p.enter_cwr(&sock(4, 2, 0, 100, 30_000));
        assert_eq!((p.rate_bytes, p.frac_cwnd), (234_438, 1_562_920));
        p.enter_loss(&sock(4, 2, 0, 100, 30_000));
        assert_eq!((p.rate_bytes, p.frac_cwnd), (117_219, 781_460));
        assert_eq!(p.target_cwnd(1000), MIN_CWND);
        p.frac_cwnd = 5 << CWND_UNIT;
        p.switch_mode(&sock(5, 2, 0, 100, 30_000));
        assert!(!p.rate_mode);
        assert_eq!(p.rate_bytes, 750_000, "150 000 B/s per segment × 5");
        // `hsrtt_us` ← hsrtt + srtt_us − hsrtt/2^7: with SRTT 20 ms, 10 240 000 + 160 000
        // − 80 000.
        let mut q = Prague::new(params(), &sock(4, 2, 0, 0, 0));
        q.update_hsrtt(&Sock {
            srtt8: 160_000,
            ..sock(4, 2, 0, 0, 0)
        });
        assert_eq!(q.hsrtt, 10_320_000);
    }
}
