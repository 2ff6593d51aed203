//! TCP Prague as L4STeam/linux b256dae had it (module version 0.5, 2020-08-04: the kernel
//! of the L4S test suite's testbed, github.com/heistp/l4s-tests README "Test Setup"):
//! where its `net/ipv4/tcp_prague.c` differs from 893e147 (`tcp/prague/mod.rs`).
//!
//! - The window is Linux's integer cwnd with a carry `cwnd_cnt` in 2^-20 segments
//!   (`prague_update_cwnd`): per ACK the carry grows by the segments ACKed and not newly
//!   CE-marked times `ai_ack_increase`/cwnd (rounded; at least one unit per segment), a CE
//!   response or a loss takes from it, and cwnd steps one segment per ACK while the carry
//!   is a whole segment or more either way; at the 2-segment floor (`MIN_CWND`) the rest of
//!   a reduction is dropped (`cwnd_cnt` = 0).
//! - With internal pacing (no `fq` qdisc: the testbed's veths have none) a sender that is
//!   not cwnd-limited still grows while it has unsent data ("a poor man's attempt at
//!   bypassing" the pacer's pre-emption of the cwnd-limited check).
//! - α in 2^-20 (`PRAGUE_ALPHA_BITS` 20), starting at 1; no halving at the first mark.
//! - RTT independence is the module parameter `prague_rtt_scaling`, `RTT_CONTROL_NONE` by
//!   default; `RTT_CONTROL_RATE` computes in 128-µs units (`RTT_UNIT` 7), target 15 ms,
//!   after 100 rounds (`DEFAULT_RTT_TRANSITION`).
//! - The pacing rate is MTU·max(cwnd, in flight)/SRTT, the integer cwnd, doubled (before
//!   the division) while cwnd < ssthresh/2; no minimum.

use super::{Prague, Sock, CWND_UNIT, MIN_CWND, ONE_CWND, SHIFT_G};

/// `PRAGUE_ALPHA_BITS` of b256dae.
pub const ALPHA_BITS_2020: u32 = 20;
/// `RTT_UNIT`: b256dae keeps RTTs in 2^7 µs.
const RTT_UNIT: u32 = 7;
/// `MAX_SCALED_RTT` as b256dae compares it: 100 000, against an RTT in 128-µs units.
const MAX_SCALED_RTT_2020: u64 = 100_000;

/// `US2RTT`: µs to 128-µs units.
#[inline]
pub fn rtt_units(us: u64) -> u64 {
    us >> RTT_UNIT
}

impl Prague {
    /// `prague_ai_ack_increase` with `RTT_CONTROL_RATE` (`prague_rate_scaled_ai_ack_increase`)
    /// in b256dae's 128-µs units: (rtt/target)² of a segment, rounded to nearest.
    pub(super) fn rate_scaled_increase_2020(&self, srtt8: u64) -> u64 {
        let rtt = rtt_units(srtt8 >> 3);
        let target = rtt_units(self.p.target_us);
        if rtt == 0 || rtt > MAX_SCALED_RTT_2020 || rtt >= target {
            return ONE_CWND;
        }
        let x = ((rtt as u128) << CWND_UNIT) * rtt as u128;
        let d = target as u128 * target as u128;
        ((x + (d >> 1)) / d) as u64
    }

    /// `prague_update_cwnd` of b256dae. `cwnd_limited`: `tcp_is_cwnd_limited`. Returns cwnd
    /// and ssthresh.
    pub(super) fn update_cwnd_2020(
        &mut self,
        s: &Sock,
        acked: u32,
        ce: u32,
        cwnd_limited: bool,
    ) -> (u32, u32) {
        let (mut cwnd, mut ssthresh) = (s.cwnd, s.ssthresh);
        let mut acked = acked as i64;
        if ce > 0 {
            // `rs->is_ece`: the marks newly reported (`delivered_ce - acked_ce`) are taken
            // off; nothing else happens at the first one.
            self.saw_ce = true;
            acked -= ce as i64;
        }
        // Not cwnd-limited, internal pacing: grow all the same while data waits.
        if acked > 0 && !self.in_loss && (cwnd_limited || s.unsent) {
            let mut acked = acked as u32;
            if cwnd < ssthresh {
                acked =
                    super::super::window_growth::slow_start(&mut cwnd, ssthresh, acked, s.clamp);
                if acked == 0 {
                    self.update_ai(s.srtt8);
                    return (cwnd, ssthresh);
                }
            }
            let mut increase = acked as u64 * self.ai_ack_increase;
            if cwnd > 0 {
                increase = (increase + (cwnd as u64 >> 1)) / cwnd as u64;
            }
            self.cwnd_cnt += increase.max(acked as u64) as i64;
        }
        if self.cwnd_cnt <= -(ONE_CWND as i64) {
            self.cwnd_cnt += ONE_CWND as i64;
            cwnd -= 1;
            if cwnd < MIN_CWND {
                cwnd = MIN_CWND;
                // "No point in applying further reductions".
                self.cwnd_cnt = 0;
            }
            ssthresh = cwnd;
            self.update_ai(s.srtt8);
        } else if self.cwnd_cnt >= ONE_CWND as i64 {
            self.cwnd_cnt -= ONE_CWND as i64;
            cwnd = (cwnd + 1).min(s.clamp);
            self.update_ai(s.srtt8);
        }
        (cwnd, ssthresh)
    }

    /// `prague_enter_cwr` of b256dae: α/2 of cwnd, rounded to nearest, off the carry.
    pub(super) fn enter_cwr_2020(&mut self, s: &Sock) {
        let alpha = self.upscaled_alpha >> SHIFT_G;
        let r = (alpha as u128 * ((s.cwnd as u128) << CWND_UNIT) + (1u128 << ALPHA_BITS_2020))
            >> (ALPHA_BITS_2020 + 1);
        self.cwnd_cnt -= r as i64;
    }

    /// `prague_enter_loss` of b256dae: half of cwnd and half of the carry off the carry.
    pub(super) fn enter_loss_2020(&mut self, s: &Sock) {
        self.cwnd_cnt -= ((s.cwnd as i64) << (CWND_UNIT - 1)) + (self.cwnd_cnt >> 1);
        self.update_ai(s.srtt8);
    }

    /// `prague_update_pacing_rate` of b256dae (bytes per second).
    pub(super) fn pacing_rate_2020(&self, s: &Sock, in_flight: u32) -> u64 {
        let mut rate = 8_000_000u128 * self.p.mtu as u128;
        if s.cwnd < s.ssthresh / 2 {
            rate <<= 1;
        }
        if s.srtt8 > 0 {
            rate /= s.srtt8 as u128;
        }
        let w = s.cwnd.max(in_flight) as u128;
        (rate * w).min(u64::MAX as u128) as u64
    }
}
