//! Delivery-rate estimation as Linux does it (`net/ipv4/tcp_rate.c`;
//! draft-cheng-iccrg-delivery-rate-estimation), for BBR only, and Linux's windowed min/max
//! filter (`lib/win_minmax.c`).
//!
//! Every data segment, when it is (re)transmitted, is stamped with the connection's
//! delivery state (`tcp_rate_skb_sent`): segments delivered so far (`delivered`), when the
//! last of them was delivered (`delivered_mstamp`), the send time of the segment most
//! recently delivered at that point (`first_tx_mstamp`), and whether the sender was
//! application-limited. When segments are delivered (cumulatively or SACKed), the most
//! recently sent of them gives the ACK's sample (`tcp_rate_skb_delivered`): segments
//! delivered since it was sent, over the longer of its send phase and its ACK phase
//! (`tcp_rate_gen`); a sample shorter than the connection's min RTT is invalid.
//!
//! Clocks are Linux's: microseconds (`tcp_mstamp`), here `now / 1000 + 1` so that 0 can
//! mean "none" as it does in Linux.

use crate::units::Time;

/// Linux's µs clock at `now` (ns), never 0.
#[inline]
pub fn mstamp(now: Time) -> u64 {
    now / 1000 + 1
}

/// One sample of a windowed min/max filter: time `t` (any unit), value `v`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    pub t: u64,
    pub v: u64,
}

/// Kathleen Nichols' windowed min/max filter as `lib/win_minmax.c` keeps it: the best,
/// second-best and third-best samples of the window, each from a later part of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// `minmax_get`.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// `minmax_reset`: all three samples become `(t, v)`.
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [MinmaxSample { t, v }; 3];
        v
    }

    /// `minmax_subwin_update`: ages the samples out of a window of length `win`.
    fn subwin_update(&mut self, win: u64, val: MinmaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample is out of the window: the next ones move up, and if the
            // second one is out too, once more.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window has passed without a second-best choice.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window without a third-best choice.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`: the max over the last `win` of time, with `v` measured at `t`.
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = MinmaxSample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = MinmaxSample { t, v };
        if v <= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

/// The delivery state a data segment was sent with (Linux's `tcp_skb_cb.tx`), and its own
/// last send time and end.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxState {
    /// Send time (µs stamp) of its last transmission (`skb_mstamp_ns`).
    pub sent_mstamp: u64,
    pub first_tx_mstamp: u64,
    /// 0 once it was counted by a SACK (`tcp_rate_skb_delivered`), so that its cumulative
    /// ACK does not count it again.
    pub delivered_mstamp: u64,
    pub delivered: u64,
    pub end_seq: u64,
    pub is_app_limited: bool,
    pub retransmitted: bool,
}

/// One ACK's rate sample (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `delivered_mstamp` of the segment that gave the sample (0: none).
    pub prior_mstamp: u64,
    /// `delivered` when that segment was sent.
    pub prior_delivered: u64,
    /// Segments delivered over the interval (−1: no valid sample).
    pub delivered: i64,
    /// The interval in µs (−1: not valid).
    pub interval_us: i64,
    /// Segments this ACK newly delivered (`acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost.
    pub losses: u32,
    /// The congestion control's RTT sample in µs (−1: none).
    pub rtt_us: i64,
    /// Segments in flight before the ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    /// Possibly delayed by the receiver (`FLAG_ACK_MAYBE_DELAYED`).
    pub is_ack_delayed: bool,
    /// End of the segment that gave the sample (`last_end_seq`).
    pub last_end_seq: u64,
}

/// `tcp_min_rtt` window: `sysctl_tcp_min_rtt_wlen` = 300 s, in µs.
pub const MIN_RTT_WLEN_US: u64 = 300_000_000;

/// The connection's delivery state (Linux `tcp_sock` fields).
#[derive(Clone, Debug)]
pub struct RateEstimator {
    /// `tp->delivered`: segments delivered, cumulatively or by SACK.
    pub delivered: u64,
    /// `tp->delivered_mstamp`: when `delivered` last grew.
    pub delivered_mstamp: u64,
    /// `tp->first_tx_mstamp`: send time of the segment most recently delivered (or of the
    /// first segment sent after an idle time).
    pub first_tx_mstamp: u64,
    /// `tp->app_limited`: 0, or the `delivered` count beyond which the application-limited
    /// bubble is gone. Starts "limited" (Linux's `~0U`, cleared by the first sample).
    pub app_limited: u64,
    app_limited_initial: bool,
    /// `tp->lost`: segments marked lost (`count_lost`).
    pub lost: u64,
    /// `tp->rate_delivered`, `rate_interval_us`, `rate_app_limited`: the last sample kept.
    pub rate_delivered: u64,
    pub rate_interval_us: u64,
    pub rate_app_limited: bool,
    /// `tp->rtt_min`: windowed min RTT (µs) over `MIN_RTT_WLEN_US`, keyed by µs stamps.
    pub rtt_min: Minmax,
    /// The sample of the last ACK.
    pub rs: RateSample,
    /// Segments marked lost since this ACK began (`tcp_ack`: `tp->lost` less its value on
    /// entry), the sample's `losses`; marks made outside an ACK (the retransmission timeout,
    /// RACK's reorder timer) are cleared by the next ACK's `start_ack` and reach no sample.
    pub pending_losses: u32,
}

impl Default for RateEstimator {
    fn default() -> Self {
        let mut rtt_min = Minmax::default();
        rtt_min.reset(0, u64::MAX);
        RateEstimator {
            delivered: 0,
            delivered_mstamp: 0,
            first_tx_mstamp: 0,
            app_limited: u64::MAX,
            app_limited_initial: true,
            lost: 0,
            rate_delivered: 0,
            rate_interval_us: 0,
            rate_app_limited: false,
            rtt_min,
            rs: RateSample::default(),
            pending_losses: 0,
        }
    }
}

impl RateEstimator {
    /// `tcp_min_rtt`: the windowed min RTT in µs (`u64::MAX`: none yet).
    #[inline]
    pub fn min_rtt_us(&self) -> u64 {
        self.rtt_min.get()
    }

    /// `tcp_update_rtt_min` with an RTT sample of `rtt_us` at µs stamp `now_us`.
    pub fn update_rtt_min(&mut self, now_us: u64, rtt_us: u64) {
        let rtt = rtt_us.max(1);
        self.rtt_min.running_min(MIN_RTT_WLEN_US, now_us, rtt);
    }

    /// `tcp_rate_skb_sent`: the stamp of a data segment ending at `end_seq` sent at
    /// `now_us`; `nothing_out`: no data was outstanding before it (`!tp->packets_out`).
    pub fn on_sent(
        &mut self,
        now_us: u64,
        end_seq: u64,
        nothing_out: bool,
        retransmitted: bool,
    ) -> TxState {
        if nothing_out {
            self.first_tx_mstamp = now_us;
            self.delivered_mstamp = now_us;
        }
        TxState {
            sent_mstamp: now_us,
            first_tx_mstamp: self.first_tx_mstamp,
            delivered_mstamp: self.delivered_mstamp,
            delivered: self.delivered,
            end_seq,
            is_app_limited: self.app_limited != 0,
            retransmitted,
        }
    }

    /// `tcp_rate_skb_delivered`: segment `tx` is delivered by the ACK whose sample is
    /// `self.rs`; `sacked`: by a SACK (it is then marked so that its cumulative ACK does not
    /// count it again). Counts it in `delivered` (Linux counts there in `tcp_sacktag_one`
    /// and `tcp_clean_rtx_queue`) unless a SACK counted it before.
    pub fn on_delivered(&mut self, tx: &mut TxState, sacked: bool) {
        if tx.delivered_mstamp == 0 {
            return;
        }
        self.delivered += 1;
        let rs = &mut self.rs;
        // `tcp_skb_sent_after`: sent later, or at the same time but ending later.
        let later = tx.sent_mstamp > self.first_tx_mstamp
            || (tx.sent_mstamp == self.first_tx_mstamp && tx.end_seq > rs.last_end_seq);
        if rs.prior_delivered == 0 || later {
            rs.prior_delivered = tx.delivered;
            rs.prior_mstamp = tx.delivered_mstamp;
            rs.is_app_limited = tx.is_app_limited;
            rs.is_retrans = tx.retransmitted;
            rs.last_end_seq = tx.end_seq;
            self.first_tx_mstamp = tx.sent_mstamp;
            // The send phase: from the first send of the flight to this send.
            rs.interval_us = tx.sent_mstamp as i64 - tx.first_tx_mstamp as i64;
        }
        if sacked {
            tx.delivered_mstamp = 0;
        }
    }

    /// A new ACK starts: a fresh sample (`struct rate_sample rs = {}` in `tcp_ack`).
    #[inline]
    pub fn start_ack(&mut self) {
        self.rs = RateSample {
            rtt_us: -1,
            ..RateSample::default()
        };
        self.pending_losses = 0;
    }

    /// `n` segments newly marked lost (`tcp_mark_skb_lost` → `tcp_notify_skb_loss_event`,
    /// Linux 6.x `tcp_input.c`): `tp->lost` grows when a segment is marked — by RACK during an
    /// ACK or at its reorder timer, or at a retransmission timeout — not when it is sent again.
    #[inline]
    pub fn count_lost(&mut self, n: u32) {
        self.lost += n as u64;
        self.pending_losses += n;
    }

    /// `tcp_rate_gen` at µs stamp `now_us`, after the ACK's segments went through
    /// `on_delivered`: `acked` newly delivered, `lost` newly marked lost.
    pub fn gen(&mut self, now_us: u64, acked: u32, lost: u32) {
        // The application-limited bubble is gone once delivered passes its end.
        if self.app_limited != 0 && (self.app_limited_initial || self.delivered > self.app_limited)
        {
            self.app_limited = 0;
            self.app_limited_initial = false;
        }
        if acked > 0 {
            self.delivered_mstamp = now_us;
        }
        let min_rtt = self.min_rtt_us();
        let rs = &mut self.rs;
        rs.acked_sacked = acked;
        rs.losses = lost;
        if rs.prior_mstamp == 0 {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (self.delivered - rs.prior_delivered) as i64;
        // The longer of the send phase and the ACK phase.
        let snd_us = rs.interval_us;
        let ack_us = now_us as i64 - rs.prior_mstamp as i64;
        rs.interval_us = snd_us.max(ack_us);
        if rs.interval_us < 0 || (rs.interval_us as u64) < min_rtt {
            // Shorter than the min RTT: an ACK compression artefact, not a sample.
            rs.interval_us = -1;
            return;
        }
        if !rs.is_app_limited
            || rs.delivered as u128 * self.rate_interval_us as u128
                >= self.rate_delivered as u128 * rs.interval_us as u128
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`, when the application writes: less than a segment
    /// unsent, not cwnd-limited and no lost segment awaiting retransmission mark the
    /// connection application-limited until what is in flight now is delivered.
    pub fn check_app_limited(
        &mut self,
        unsent: u64,
        mss: u64,
        in_flight: u32,
        cwnd: u32,
        lost_pending: bool,
    ) {
        if unsent < mss && in_flight < cwnd && !lost_pending {
            self.mark_app_limited(in_flight);
        }
    }

    /// `tp->app_limited = (delivered + in_flight) ?: 1`.
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited_initial = false;
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windowed_max_ages_out() {
        let mut m = Minmax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 0, 100), 100);
        assert_eq!(m.running_max(10, 3, 50), 100);
        assert_eq!(m.running_max(10, 6, 70), 100);
        // The best sample (t = 0) leaves the window at t = 11: the next best takes over.
        assert_eq!(m.running_max(10, 11, 10), 70);
        // A larger sample replaces everything.
        assert_eq!(m.running_max(10, 12, 200), 200);
        let mut n = Minmax::default();
        n.reset(0, u64::MAX);
        assert_eq!(n.running_min(100, 0, 40), 40);
        assert_eq!(n.running_min(100, 50, 45), 40);
        assert_eq!(n.running_min(100, 101, 47), 45);
    }

    /// A hand-computed sequence: 4 segments sent 1 ms apart from idle at t = 1000 µs, then
    /// ACKs, a SACK and a cumulative ACK over a SACKed segment; each sample is the segments
    /// delivered since the most recently sent delivered segment went out, over the longer
    /// of its send phase and its ACK phase.
    #[test]
    fn delivery_rate_of_a_hand_computed_ack_sequence() {
        let mut r = RateEstimator::default();
        let mut tx: Vec<TxState> = (0..4u64)
            .map(|k| r.on_sent(1000 + 1000 * k, 100 * (k + 1), k == 0, false))
            .collect();
        // All sent before any ACK: the same delivery state, delivered = 0 at 1000 µs.
        assert!(tx
            .iter()
            .all(|t| t.delivered == 0 && t.delivered_mstamp == 1000));
        assert!(tx.iter().all(|t| t.first_tx_mstamp == 1000));
        // ACK of segment 0 at 41 000 µs: 1 segment over max(0, 40 000) µs.
        // (Its RTT sample reaches the min-RTT filter first, as in `tcp_ack`.)
        r.start_ack();
        r.on_delivered(&mut tx[0], false);
        r.update_rtt_min(41_000, 40_000);
        r.gen(41_000, 1, 0);
        assert_eq!((r.rs.delivered, r.rs.interval_us), (1, 40_000));
        assert!(
            r.rs.is_app_limited,
            "the first flight is application-limited"
        );
        // A new segment sent at 41 000 µs carries delivered = 1 at 41 000.
        let mut t4 = r.on_sent(41_000, 500, false, false);
        assert_eq!(
            (t4.delivered, t4.delivered_mstamp, t4.first_tx_mstamp),
            (1, 41_000, 1000)
        );
        // ACK of segments 1 and 2 (a delayed ACK) at 43 000 µs: the later one (sent at
        // 3000) gives the sample: delivered 3 − 0 over max(3000 − 1000, 43 000 − 1000).
        r.start_ack();
        r.on_delivered(&mut tx[1], false);
        r.on_delivered(&mut tx[2], false);
        r.gen(43_000, 2, 0);
        assert_eq!((r.rs.delivered, r.rs.interval_us), (3, 42_000));
        assert!(
            r.rs.is_app_limited,
            "segment 2 was sent in the first flight"
        );
        assert_eq!(r.app_limited, 0, "the bubble is gone after the first ACK");
        assert!(!t4.is_app_limited, "sent after it");
        // Segment 4 SACKed at 81 000 µs: 4 − 1 delivered over max(41 000 − 1000 = 40 000
        // send phase, 81 000 − 41 000 = 40 000).
        r.start_ack();
        r.on_delivered(&mut t4, true);
        r.gen(81_000, 1, 0);
        assert_eq!((r.rs.delivered, r.rs.interval_us), (3, 40_000));
        assert_eq!(t4.delivered_mstamp, 0, "SACKed: not counted again");
        // Then the cumulative ACK of 3 and 4: 4 was counted by its SACK, so 3 alone gives
        // the sample (the first segment of an ACK always does).
        r.start_ack();
        r.on_delivered(&mut tx[3], false);
        r.on_delivered(&mut t4, false);
        r.gen(82_000, 1, 0);
        assert_eq!(r.delivered, 5, "segment 4 counted once");
        // Segment 3 was sent with delivered = 0 at 1000 µs: 5 over max(send phase 4000 −
        // 1000, ACK phase 82 000 − 1000).
        assert_eq!((r.rs.delivered, r.rs.interval_us), (5, 81_000));
        // A sample shorter than the min RTT is invalid.
        let mut r2 = RateEstimator::default();
        r2.update_rtt_min(0, 40_000);
        let mut t = r2.on_sent(1000, 100, true, false);
        r2.start_ack();
        r2.on_delivered(&mut t, false);
        r2.gen(9000, 1, 0);
        assert_eq!(r2.rs.interval_us, -1, "8 ms < min RTT 40 ms");
    }
}
