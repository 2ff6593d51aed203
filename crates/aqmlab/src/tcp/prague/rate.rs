//! TCP Prague 893e147's rate-based mode (`tcp_prague.c` note 6, "Pacing below minimum
//! congestion window of 2"; `prague_cwnd_mode` 2, its default, switches): once a flow has
//! seen CE and its cwnd is at most `prague_cwnd_transit` = 4 MTUs of `MTU_SYS`, the pacing
//! rate (`rate_bytes`) is what the module controls and the fractional window is derived
//! from it; above, the window is controlled and the rate derived from it
//! (`prague_cong_control`). In the rate-based mode, while RTT-independent:
//!
//! - growth (`prague_update_cwnd`): MTU_SYS per virtual RTT (max(target, SRTT),
//!   `prague_virtual_rtt`) per window of ACKed segments, so that the rate grows as a flow
//!   at the target RTT would, below 2 segments of window as above;
//! - CE (`prague_enter_cwr`): the rate less α/2 of it, at least `MINIMUM_RATE`; loss
//!   (`prague_enter_loss`): halved;
//! - pacing (`prague_update_pacing_rate`): the rate +3 % for the first half of each
//!   virtual RTT since the last α update and −3 % after (`RATE_OFFSET` 4/128);
//! - the window (`prague_pacing_rate_to_frac_cwnd`): rate × a slow EWMA of SRTT
//!   (`hsrtt_us`, gain 2^-7 per round), at least cwnd 2 as ever.
//!
//! The fixed point is the module's: a second is 2^23 units of 8 × µs (`RTT2SEC_SHIFT`, so
//! rate·srtt_us >> 23 is 4.9 % short of bytes per RTT, as in the module).

use super::{div_round, Prague, Sock, CWND_UNIT, MINIMUM_RATE, MTU_SYS, SHIFT_G};

/// `HSRTT_SHIFT`: `hsrtt_us` is 2^7 × its EWMA.
pub const HSRTT_SHIFT: u32 = 7;
/// `RTT2SEC_SHIFT`.
const RTT2SEC_SHIFT: u32 = 23;
/// `RATE_OFFSET` / 2^`OFFSET_UNIT`: ±4/128 ≈ 3 %.
const RATE_OFFSET: u128 = 4;
const OFFSET_UNIT: u32 = 7;
/// `prague_cwnd_transit`: the rate-based mode at or below 4 MTU_SYS of cwnd.
const CWND_TRANSIT_MTUS: u64 = 4;
/// `PRAGUE_ALPHA_BITS` of 893e147, for the CE response on the rate.
const ALPHA_BITS: u32 = super::ALPHA_BITS;

/// `DIV64_U64_ROUND_UP`.
#[inline]
fn div_up(x: u128, d: u128) -> u128 {
    x.div_ceil(d)
}

impl Prague {
    /// `prague_init`'s rate: MTU·8·10⁶/srtt_us · cwnd, at least `MINIMUM_RATE`
    /// (`MINIMUM_RATE` without an SRTT).
    pub(super) fn initial_rate(&self, s: &Sock) -> u64 {
        if s.srtt8 == 0 {
            return MINIMUM_RATE;
        }
        let per = 8_000_000u64 * self.p.mtu / s.srtt8;
        (per * s.cwnd as u64).max(MINIMUM_RATE)
    }

    /// `prague_frac_cwnd_to_pacing_rate`: MTU·8·10⁶/srtt_us × the fractional window, at
    /// least `MINIMUM_RATE`.
    pub(super) fn frac_to_rate(&self, s: &Sock) -> u64 {
        let mut rate = 8_000_000u128 * self.p.mtu as u128;
        if s.srtt8 > 0 {
            rate /= s.srtt8 as u128;
        }
        let r = (rate * self.frac_cwnd as u128) >> CWND_UNIT;
        (r.min(u64::MAX as u128) as u64).max(MINIMUM_RATE)
    }

    /// `prague_virtual_rtt` (8 × µs): the larger of the target and SRTT.
    #[inline]
    fn virtual_rtt(&self, s: &Sock) -> u64 {
        (self.p.target_us << 3).max(s.srtt8)
    }

    /// `prague_pacing_rate_to_frac_cwnd`: ⌈rate · RTT / MTU⌉ in 2^-20 segments, the RTT
    /// being `hsrtt_us`'s EWMA (SRTT while it is 0).
    pub(super) fn rate_to_frac(&self, s: &Sock) -> u64 {
        let h = self.hsrtt >> HSRTT_SHIFT;
        let rtt = if h > 0 { h } else { s.srtt8 };
        let x = (self.rate_bytes as u128 * rtt as u128) >> (RTT2SEC_SHIFT - CWND_UNIT);
        div_up(x, self.p.mtu.max(1) as u128).min(u64::MAX as u128) as u64
    }

    /// `prague_update_cwnd`, rate-based branch: the rate grows by MTU_SYS per virtual RTT
    /// spread over a window of ACKs; the window follows the rate.
    pub(super) fn rate_mode_increase(&mut self, s: &Sock, acked: u32) {
        let vrtt = self.virtual_rtt(s) as u128;
        let increase = ((acked as u128 * MTU_SYS as u128) << RTT2SEC_SHIFT) / vrtt;
        let divisor = (self.p.mtu as u128) << RTT2SEC_SHIFT;
        let new_cwnd = div_up(self.rate_bytes as u128 * vrtt, divisor);
        if new_cwnd > 0 {
            self.rate_bytes += div_round(increase, new_cwnd) as u64;
        }
        self.frac_cwnd = (self.frac_cwnd + acked as u64).max(self.rate_to_frac(s));
    }

    /// `prague_enter_cwr`, rate-based branch: the rate less α/2 of it.
    pub(super) fn rate_mode_cwr(&mut self, s: &Sock) {
        let alpha = self.upscaled_alpha >> SHIFT_G;
        let reduction = ((self.rate_bytes as u128 * alpha as u128) >> (ALPHA_BITS + 1)) as u64;
        self.rate_bytes = self.rate_bytes.saturating_sub(reduction).max(MINIMUM_RATE);
        self.frac_cwnd = self.rate_to_frac(s);
    }

    /// `prague_enter_loss`, rate-based branch: the rate halved.
    pub(super) fn rate_mode_loss(&mut self, s: &Sock) {
        self.rate_bytes -= self.rate_bytes >> 1;
        self.frac_cwnd = self.rate_to_frac(s);
    }

    /// `prague_update_pacing_rate`, rate-based branch: the rate +3 % until half a virtual
    /// RTT has passed since the last α update (`prague_half_virtual_rtt_elapsed`), −3 %
    /// after.
    pub(super) fn rate_mode_pacing(&self, s: &Sock) -> u64 {
        let offset = ((RATE_OFFSET * self.rate_bytes as u128) >> OFFSET_UNIT) as u64;
        let half_vrtt_us = self.virtual_rtt(s) >> (3 + 1);
        if half_vrtt_us <= s.now_us.saturating_sub(self.alpha_stamp) {
            self.rate_bytes - offset
        } else {
            self.rate_bytes + offset
        }
    }

    /// `prague_update_alpha`'s last step: `hsrtt_us` ← hsrtt_us + srtt_us − hsrtt_us/2^7.
    pub(super) fn update_hsrtt(&mut self, s: &Sock) {
        self.hsrtt = self.hsrtt + s.srtt8 - (self.hsrtt >> HSRTT_SHIFT);
    }

    /// `prague_cong_control`'s switch (`cwnd_mode_transit`): the rate-based mode once CE
    /// has been seen and cwnd is at most 4 MTU_SYS (the window then follows the rate),
    /// else the window mode (the rate follows the window).
    pub(super) fn switch_mode(&mut self, s: &Sock) {
        let cwnd_bytes = s.cwnd as u64 * self.p.mtu;
        if self.saw_ce && cwnd_bytes <= CWND_TRANSIT_MTUS * MTU_SYS {
            self.rate_mode = true;
            self.frac_cwnd = self.rate_to_frac(s);
        } else {
            self.rate_mode = false;
            self.rate_bytes = self.frac_to_rate(s);
        }
    }
}
