//! TCP-internal pacing as Linux does it when no `sch_fq` qdisc paces for TCP
//! (`tcp_needs_internal_pacing`; `net/ipv4/tcp_output.c`, read in a Linux 6.x tree):
//!
//! - the socket keeps an earliest departure time, `tcp_wstamp_ns`; a data segment (new or
//!   retransmitted) may leave only once the clock has reached it (`tcp_pacing_check`),
//!   otherwise transmission stops and a timer (`pacing_timer`, `tcp_pace_kick`) restarts
//!   output at that time — here a deadline of the endpoint (`next_deadline`);
//! - a segment leaving at `now` sets the departure time to `max(wstamp, now)` and then
//!   advances it by `len / rate`, where `len` is the payload, less a credit of up to half
//!   that interval for the time the segment left after its scheduled departure
//!   (`tcp_update_skb_after_send`); the first 10 data segments of the connection are not
//!   paced ("original sch_fq does not pace first 10 MSS": `data_segs_out >= 10`);
//! - pure ACKs are never held (`tcp_send_ack` does not check the pacer);
//! - without TSO every segment is one MSS: `len` is the segment's payload.
//!
//! The rate (`sk_pacing_rate`, bytes per second) is set after every ACK by the congestion
//! control: BBR's own (`bbr_set_pacing_rate`), or for the others `tcp_update_pacing_rate`
//! (`tcp_input.c`), `pacing_rate_linux`.

use crate::units::{Time, SEC};

/// Linux `sysctl_tcp_pacing_ss_ratio` (percent): the pacing rate in slow start.
pub const PACING_SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio` (percent): the pacing rate in congestion avoidance.
pub const PACING_CA_RATIO: u64 = 120;
/// Data segments sent before pacing starts (`tcp_update_skb_after_send`).
pub const UNPACED_SEGMENTS: u64 = 10;
/// `sk_pacing_rate` before anything sets it (`~0UL`): no pacing.
pub const UNLIMITED: u64 = u64::MAX;

/// The pacer of one connection.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// `sk_pacing_rate`, bytes per second (`UNLIMITED`: not paced).
    pub rate: u64,
    /// `tcp_wstamp_ns`: the earliest departure time of the next data segment.
    pub wstamp: Time,
    /// `data_segs_out`: data segments sent, retransmissions included.
    pub data_segs_out: u64,
    /// Segments of the skb the next data segment starts (GSO, `tcp/gso.rs`; 1 otherwise),
    /// and of the skb under way: those still to leave, at `skb_at`, with its first segment.
    pub skb_segs: u32,
    skb_left: u32,
    skb_at: Time,
    /// A tail loss probe is being sent (`push_one`): no GSO deferral.
    pub push_one: bool,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer {
            rate: UNLIMITED,
            wstamp: 0,
            data_segs_out: 0,
            skb_segs: 1,
            skb_left: 0,
            skb_at: 0,
            push_one: false,
        }
    }
}

impl Pacer {
    /// `tcp_pacing_check`: the time a data segment may leave if it may not leave at `now`.
    /// The other segments of a GSO skb leave with its first one.
    #[inline]
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        if self.in_skb(now) {
            return None;
        }
        (self.wstamp > now).then_some(self.wstamp)
    }

    /// A GSO skb is under way: its first segment left at `now`, others are still to go.
    #[inline]
    pub fn in_skb(&self, now: Time) -> bool {
        self.skb_left > 0 && self.skb_at == now
    }

    /// A data segment of `len` payload bytes leaves at `now` (`__tcp_transmit_skb`: the
    /// departure stamp, then `tcp_update_skb_after_send`). The first segment of a GSO skb of
    /// `skb_segs` segments stands for the whole skb (`len` each): one departure, the time
    /// advanced by the skb's length; the others then only leave.
    pub fn on_data_sent(&mut self, now: Time, len: u64) {
        if self.in_skb(now) {
            self.skb_left -= 1;
            return;
        }
        let segs = std::mem::replace(&mut self.skb_segs, 1).max(1);
        (self.skb_left, self.skb_at) = (segs - 1, now);
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        self.data_segs_out += segs as u64;
        if self.rate != UNLIMITED && self.rate > 0 && self.data_segs_out >= UNPACED_SEGMENTS {
            let bytes = len as u128 * segs as u128;
            let mut len_ns = (bytes * SEC as u128 / self.rate as u128) as u64;
            let credit = self.wstamp - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.wstamp += len_ns;
        }
    }

    /// A pure ACK leaves at `now`: it is not held, but moves the departure time up to now,
    /// as any segment does in `__tcp_transmit_skb` (and so uses up the credit).
    #[inline]
    pub fn on_ack_sent(&mut self, now: Time) {
        self.wstamp = self.wstamp.max(now);
    }
}

/// Linux `tcp_update_pacing_rate` in its integer arithmetic: `mss · cwnd' / SRTT` scaled by
/// 200 % while `cwnd < ssthresh / 2` and by 120 % otherwise, `cwnd' = max(cwnd,
/// packets_out)`; `srtt_us8` is Linux's `srtt_us`, 8 × SRTT in µs (0: no sample yet, the
/// rate is then not divided, as in Linux). Bytes per second.
pub fn pacing_rate_linux(
    mss: u64,
    cwnd: u32,
    ssthresh: u32,
    packets_out: u32,
    srtt_us8: u64,
) -> u64 {
    // mss · (USEC_PER_SEC / 100 << 3): the << 3 undoes srtt_us's scaling, the / 100 the
    // ratio's percent.
    let mut rate = mss as u128 * ((1_000_000 / 100) << 3);
    rate *= if cwnd < ssthresh / 2 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    } as u128;
    rate *= cwnd.max(packets_out) as u128;
    if srtt_us8 > 0 {
        rate /= srtt_us8 as u128;
    }
    rate.min(UNLIMITED as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The departure times of back-to-back segments: the first 10 free, then len/rate apart.
    #[test]
    fn intervals_are_len_over_rate_after_ten_segments() {
        let mut p = Pacer {
            rate: 1_250_000, // 10 Mb/s
            ..Default::default()
        };
        let mut now = 1_000;
        for _ in 0..9 {
            assert_eq!(p.hold_until(now), None);
            p.on_data_sent(now, 1448);
        }
        assert_eq!(p.wstamp, now, "nine segments: no departure time set");
        p.on_data_sent(now, 1448);
        // 1448 B at 1.25 MB/s: 1 158 400 ns.
        assert_eq!(p.wstamp, now + 1_158_400);
        assert_eq!(p.hold_until(now), Some(now + 1_158_400));
        // Sent exactly at its time: no credit, the next one interval later.
        now += 1_158_400;
        assert_eq!(p.hold_until(now), None);
        p.on_data_sent(now, 1448);
        assert_eq!(p.wstamp, now + 1_158_400);
        // Sent 300 µs late: 300 µs of credit come off the next interval...
        now += 1_158_400 + 300_000;
        p.on_data_sent(now, 1448);
        assert_eq!(p.wstamp, now + 1_158_400 - 300_000);
        // ...but never more than half of it.
        now = p.wstamp + 5_000_000;
        p.on_data_sent(now, 1448);
        assert_eq!(p.wstamp, now + 1_158_400 / 2);
        // A pure ACK moves the departure time to now.
        let t = p.wstamp + 10;
        p.on_ack_sent(t);
        assert_eq!(p.wstamp, t);
    }

    /// A GSO skb of 2 segments: both leave at once, the next skb one 2-segment interval
    /// later (`tcp_update_skb_after_send` on the skb's length); a segment that is not part
    /// of it (another instant) is paced again.
    #[test]
    fn a_gso_skb_is_paced_as_one() {
        let now = 1_000_000;
        let mut p = Pacer {
            rate: 1_250_000,
            wstamp: now,
            data_segs_out: 20,
            ..Default::default()
        };
        p.skb_segs = 2;
        assert_eq!(p.hold_until(now), None);
        p.on_data_sent(now, 1448);
        assert_eq!(p.hold_until(now), None, "the skb's second segment");
        p.on_data_sent(now, 1448);
        assert_eq!(p.data_segs_out, 22);
        assert_eq!(p.wstamp, now + 2 * 1_158_400);
        assert_eq!(p.hold_until(now), Some(now + 2 * 1_158_400));
        // Back to single segments.
        let t = p.wstamp;
        p.on_data_sent(t, 1448);
        assert_eq!(p.wstamp, t + 1_158_400);
        // An skb cut short (one segment of 2 sent): nothing leaves unpaced later.
        p.skb_segs = 2;
        let t = p.wstamp;
        p.on_data_sent(t, 1448);
        assert_eq!(p.hold_until(t + 1), Some(t + 2 * 1_158_400));
    }

    #[test]
    fn linux_pacing_rate() {
        // 10 segments of 1448 B per 100 ms (srtt_us = 8·100 000): 144 800 B/s, ×2 in slow
        // start, ×1.2 in congestion avoidance.
        assert_eq!(pacing_rate_linux(1448, 10, 1000, 0, 800_000), 289_600);
        assert_eq!(pacing_rate_linux(1448, 10, 20, 0, 800_000), 173_760);
        assert_eq!(pacing_rate_linux(1448, 10, 20, 15, 800_000), 260_640);
    }
}
