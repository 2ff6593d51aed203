//! RACK-TLP loss detection (RFC 8985) as Linux 6.x runs it (`net/ipv4/tcp_recovery.c`:
//! `tcp_rack_advance`, `tcp_rack_reo_wnd`, `tcp_rack_detect_loss`, `tcp_rack_mark_lost`,
//! `tcp_rack_reo_timeout`; `tcp_output.c`: `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`; `tcp_input.c`: `tcp_process_tlp_ack`, `tcp_time_to_recover`), for
//! the Linux senders with `rack_tlp = true` on SACK connections.
//!
//! RACK: every ACK that delivers data (cumulatively or by SACK) records the most recently
//! sent segment delivered (RACK.xmit_ts, RACK.end_seq) and the RTT measured on it
//! (RACK.rtt); a retransmitted segment delivered sooner than min_RTT after its
//! retransmission is ambiguous and is ignored. A segment not yet delivered that was sent
//! before RACK.xmit_ts (or at the same time and ending earlier) is lost once
//! `RACK.rtt + reo_wnd` has passed since it was sent; if that time has not yet come, the RACK
//! reorder timer is set for the latest such segment (plus Linux's 2-jiffy `TCP_TIMEOUT_MIN`,
//! rounded up to jiffies).
//!
//! The reordering window (`tcp_rack_reo_wnd`): until reordering has been seen on the
//! connection, 0 in recovery, and 0 once `dupack_threshold` segments are SACKed (Linux's
//! `tcp_recovery` = 1, without `TCP_RACK_NO_DUPTHRESH`: this is how Linux keeps the classic
//! three-duplicate-ACK trigger under RACK); otherwise min(min_RTT/4 · reo_wnd_steps, SRTT).
//! Reordering is seen when a segment never retransmitted is delivered below the highest
//! SACKed sequence (`tcp_check_sack_reordering`). The model has no DSACK, so `reo_wnd_steps`
//! stays 1 (Linux widens it by one per round trip with DSACKs, `tcp_rack_update_reo_wnd`).
//!
//! Recovery starts when RACK has marked a segment lost (`tcp_time_to_recover`: with RACK on,
//! the loss must be proven; the RFC 6675 IsLost/DupThresh trigger is not used). In recovery
//! only segments RACK marked lost are retransmitted (`tcp_xmit_retransmit_queue`), then new
//! data, while `in_flight = packets_out − sacked − lost + retransmitted` is below cwnd.
//!
//! TLP: while the sender is in the Open or CWR state with data outstanding, a probe timer
//! (PTO) runs instead of the retransmission timer: PTO = 2·SRTT, plus `min_rto` when one
//! segment is in flight (the worst-case delayed ACK; Linux `tcp_rto_min_us`) else plus
//! `TCP_TIMEOUT_MIN` (2 jiffies), 1 s without an RTT sample, and never later than the
//! retransmission timer would fire. It is set again when new data goes out and on every ACK
//! that delivers data. When it fires, the probe is one new segment if the receiver's window
//! allows, sent whatever cwnd says, else a retransmission of the last segment sent; at most
//! one probe is outstanding (TLP.end_seq = snd_nxt after the probe, Linux `tlp_high_seq`),
//! and the retransmission timer restarts from the probe. An ACK above TLP.end_seq when the
//! probe was a retransmission means the probe repaired a loss: cwnd is reduced once
//! (ssthresh by the algorithm, cwnd = ssthresh: `tcp_init_cwnd_reduction` then
//! `tcp_end_cwnd_reduction`). A pure duplicate ACK at TLP.end_seq means both copies arrived
//! (Linux would see the receiver's DSACK; the model has none) and ends the episode without a
//! reduction.

use super::deadline::Deadline;
use super::sent::{SentRecord, Visit};
use crate::units::Time;

/// The RACK and TLP state of one connection.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment delivered (0, 0: none).
    pub xmit_ts: Time,
    pub end_seq: u64,
    /// RACK.rtt (ns).
    pub rtt: Time,
    /// RACK.xmit_ts moved since the last loss detection (`rack.advanced`).
    pub advanced: bool,
    /// Smallest RTT sample seen (ns; 0: none). Linux keeps a 5-minute windowed minimum
    /// (`tcp_min_rtt_wlen` = 300 s); connections here are shorter or stationary.
    pub min_rtt: Time,
    /// Reordering was seen on the connection (`reord_seen`).
    pub reord_seen: bool,
    /// The RACK reorder timer (`ICSK_TIME_REO_TIMEOUT`).
    pub reo_at: Deadline,
    /// The tail loss probe timer (`ICSK_TIME_LOSS_PROBE`).
    pub tlp_at: Deadline,
    /// TLP.end_seq (`tlp_high_seq`): snd_nxt after the outstanding probe.
    pub tlp_high_seq: Option<u64>,
    /// The outstanding probe was a retransmission (`tlp_retrans`).
    pub tlp_retrans: bool,
    /// The current ACK delivered data: the probe timer is set again after output
    /// (`FLAG_SET_XMIT_TIMER`), unless the reorder timer was set.
    pub rearm: bool,
    /// Segments the current ACK delivered (set by the endpoint, read by PRR).
    pub acked: u32,
    /// Counters: probes sent, probe-detected losses (cwnd reductions), reorder-timer
    /// expiries, segments marked lost. The first three count expiries of one connection's
    /// RACK timers, each at least two jiffies (`TCP_TIMEOUT_MIN`) after the event that
    /// armed it: 32 bits would take over 2 hours of one connection at the smallest tick
    /// (1 µs) and over 90 days at Linux's 1 ms, and keep Linux's state within 8 lines.
    pub probes: u32,
    pub probe_recoveries: u32,
    pub reo_timeouts: u32,
    pub marked_lost: u64,
}

/// RACK's "sent after" order (`tcp_skb_sent_after`): later send time, or the same time and a
/// higher end sequence.
#[inline]
fn sent_after(t1: Time, t2: Time, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// `tcp_rack_advance` for the most recently sent segment an ACK delivered: sent at `at`,
    /// ending at `end`, `rexmit` if it was retransmitted.
    pub fn advance(&mut self, now: Time, at: Time, end: u64, rexmit: bool) {
        let rtt = now.saturating_sub(at);
        if rexmit && rtt < self.min_rtt {
            // Possibly the ACK of the original transmission: ambiguous.
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(at, self.xmit_ts, end, self.end_seq) {
            self.xmit_ts = at;
            self.end_seq = end;
        }
    }

    /// Folds in an RTT sample (`tcp_update_rtt_min`).
    pub fn on_rtt_sample(&mut self, rtt: Time) {
        if rtt > 0 && (self.min_rtt == 0 || rtt < self.min_rtt) {
            self.min_rtt = rtt;
        }
    }

    /// `tcp_rack_reo_wnd`: the reordering window (ns). `sacked_out` segments are SACKed,
    /// `reordering` is the duplicate threshold (`tp->reordering`, 3), `srtt` the smoothed RTT.
    pub fn reo_wnd(&self, in_recovery: bool, sacked_out: u32, reordering: u32, srtt: Time) -> Time {
        if !self.reord_seen && (in_recovery || sacked_out >= reordering) {
            return 0;
        }
        (self.min_rtt / 4).min(srtt)
    }

    /// `tcp_rack_detect_loss` over the record of outstanding segments (`sent`): marks lost
    /// every segment, not delivered and not already marked lost without a retransmission
    /// since, that was sent before RACK.xmit_ts and has waited RACK.rtt + `reo_wnd`. Returns
    /// the segments newly marked lost and, if some segment sent before RACK.xmit_ts has yet
    /// to wait, the longest such wait (ns, ≥ 1). As Linux, the walk follows the segments in
    /// send order (`tcp/sent.rs`) and stops at the first one sent after RACK.xmit_ts.
    pub(crate) fn detect_loss(
        &mut self,
        now: Time,
        sent: &mut SentRecord,
        reo_wnd: Time,
    ) -> (u32, Option<Time>) {
        let mut wait: Option<Time> = None;
        let (xmit_ts, end_seq, rtt) = (self.xmit_ts, self.end_seq, self.rtt);
        let lost = sent.rack_walk(|s| {
            if !sent_after(xmit_ts, s.at, end_seq, s.end()) {
                return Visit::Stop;
            }
            // Linux 6.x: lost once `rtt + reo_wnd − elapsed` (tcp_rack_skb_timeout) is ≤ 0.
            let deadline = s.at + rtt + reo_wnd;
            if deadline <= now {
                Visit::MarkLost
            } else {
                let w = deadline - now;
                wait = Some(wait.map_or(w, |x: Time| x.max(w)));
                Visit::Keep
            }
        });
        self.marked_lost += lost as u64;
        (lost, wait)
    }

    /// The reorder timer's deadline for a wait of `wait` ns at `now`: rounded up to jiffies
    /// of `tick`, plus `TCP_TIMEOUT_MIN` (2 jiffies) (`tcp_rack_mark_lost`).
    pub fn reo_deadline(now: Time, wait: Time, tick: Time) -> Time {
        now + wait.div_ceil(tick) * tick + 2 * tick
    }

    /// `tcp_schedule_loss_probe`'s timeout (ns) from `now`: `srtt` (0: no sample yet),
    /// `packets_out` segments outstanding, `rto_min`, the time left to the retransmission
    /// timer `rto_left` (None: not running), on a clock of `tick`.
    pub fn probe_timeout(
        srtt: Time,
        packets_out: u32,
        rto_min: Time,
        rto_left: Option<Time>,
        tick: Time,
    ) -> Time {
        let mut t = if srtt > 0 {
            let extra = if packets_out == 1 { rto_min } else { 2 * tick };
            (2 * srtt + extra).div_ceil(tick) * tick
        } else {
            crate::units::SEC // TCP_TIMEOUT_INIT
        };
        if let Some(left) = rto_left.filter(|&l| l > 0) {
            t = t.min(left);
        }
        t
    }

    /// `tcp_process_tlp_ack` for an ACK of `ack`: `una_advanced`, it moved snd_una; `dup`, it is
    /// a pure duplicate (no data, nothing newly SACKed, snd_una unchanged). Returns true when
    /// the probe repaired a loss (the caller reduces cwnd).
    pub fn on_probe_ack(&mut self, ack: u64, una_advanced: bool, dup: bool) -> bool {
        let Some(high) = self.tlp_high_seq else {
            return false;
        };
        if ack < high {
            return false;
        }
        if !self.tlp_retrans {
            // A probe of new data was acknowledged.
            self.tlp_high_seq = None;
        } else if ack > high {
            // Acknowledged beyond the probe without a duplicate: the original was lost.
            self.tlp_high_seq = None;
            self.probe_recoveries += 1;
            return true;
        } else if dup && !una_advanced {
            // Original and probe both arrived.
            self.tlp_high_seq = None;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    /// Segments 0..5 sent 1 ms apart from t = 0; RTT 100 ms. Segment 3 (sent at 3 ms) is
    /// SACKed at 103 ms: segments 0–2 were sent before it. With a window of 25 ms (min_RTT/4)
    /// segment k is lost at k + 100 + 25 ms: none at 103 or 110 ms, when the timer must wait
    /// for the latest of them (segment 2: 127 − 110 = 17 ms; the timer adds 2 jiffies).
    #[test]
    fn loss_after_the_reordering_window_and_the_timer() {
        let mut lx = crate::tcp::cong::LinuxCong::new(&crate::tcp::config::TcpConfig::linux_reno());
        for k in 0..5 {
            lx.on_data_sent(k * MS, 1 + k * 100, 100, false, k == 0);
        }
        let mut r = Rack::default();
        r.on_rtt_sample(100 * MS);
        assert_eq!(lx.on_ack(103 * MS, 1, &[(301, 401)]).0, 1);
        let (at, end, rexmit) = lx.newest_delivered.unwrap();
        r.advance(103 * MS, at, end, rexmit);
        assert_eq!((r.rtt, r.xmit_ts, r.end_seq), (100 * MS, 3 * MS, 401));
        let wnd = r.reo_wnd(false, lx.sacked_out(), 3, 100 * MS);
        assert_eq!(wnd, 25 * MS);
        assert_eq!(
            r.detect_loss(103 * MS, &mut lx.sent, wnd),
            (0, Some(24 * MS))
        );
        assert_eq!(
            r.detect_loss(110 * MS, &mut lx.sent, wnd),
            (0, Some(17 * MS))
        );
        assert_eq!(Rack::reo_deadline(110 * MS, 17 * MS, MS), 129 * MS);
        // At 126 ms segment 0 (deadline 125) is lost, 1 (126) too (nothing left to wait);
        // 2 waits 1 ms more.
        assert_eq!(r.detect_loss(126 * MS, &mut lx.sent, wnd), (2, Some(MS)));
        assert_eq!(lx.first_lost(), Some((1, 101)));
        assert_eq!(lx.rack_in_flight(), 5 - 1 - 2);
        // Already lost and not retransmitted: not counted again.
        assert_eq!(r.detect_loss(200 * MS, &mut lx.sent, wnd), (1, None));
        assert_eq!(
            lx.rack_in_flight(),
            1,
            "segment 4 was sent after RACK.xmit_ts"
        );
        // Segment 0 retransmitted at 200 ms: in flight again; lost again once a segment sent
        // after it is delivered and its RTT has passed.
        lx.on_data_sent(200 * MS, 1, 100, true, false);
        assert_eq!(
            (lx.rack_in_flight(), lx.first_lost()),
            (2, Some((101, 201)))
        );
        assert_eq!(lx.sent.counts(), lx.sent.recount());
    }

    /// Without reordering seen, three SACKed segments (or recovery) close the window: the
    /// classic duplicate-ACK threshold. After reordering, min_RTT/4 bounded by SRTT.
    #[test]
    fn reordering_window() {
        let mut r = Rack::default();
        r.on_rtt_sample(40 * MS);
        r.on_rtt_sample(80 * MS);
        assert_eq!(r.min_rtt, 40 * MS);
        assert_eq!(r.reo_wnd(false, 2, 3, 50 * MS), 10 * MS);
        assert_eq!(r.reo_wnd(false, 3, 3, 50 * MS), 0);
        assert_eq!(r.reo_wnd(true, 0, 3, 50 * MS), 0);
        r.reord_seen = true;
        assert_eq!(r.reo_wnd(true, 5, 3, 50 * MS), 10 * MS);
        assert_eq!(r.reo_wnd(false, 0, 3, 5 * MS), 5 * MS);
    }

    /// A retransmission delivered sooner than min_RTT after it was sent may be the original's
    /// ACK: RACK ignores it.
    #[test]
    fn ambiguous_retransmission_is_ignored() {
        let mut r = Rack::default();
        r.on_rtt_sample(100 * MS);
        r.advance(150 * MS, 100 * MS, 501, true);
        assert!(!r.advanced);
        r.advance(250 * MS, 100 * MS, 501, true);
        assert!(r.advanced && r.rtt == 150 * MS && r.xmit_ts == 100 * MS);
        // An older segment does not move xmit_ts back, but its RTT is taken.
        r.advance(260 * MS, 90 * MS, 401, false);
        assert_eq!((r.rtt, r.xmit_ts, r.end_seq), (170 * MS, 100 * MS, 501));
    }

    #[test]
    fn probe_timeout() {
        // 2·SRTT + 2 ms with several segments out; + 200 ms with one.
        assert_eq!(
            Rack::probe_timeout(50 * MS, 5, 200 * MS, None, MS),
            102 * MS
        );
        assert_eq!(
            Rack::probe_timeout(50 * MS, 1, 200 * MS, None, MS),
            300 * MS
        );
        // Never after the retransmission timer.
        assert_eq!(
            Rack::probe_timeout(50 * MS, 1, 200 * MS, Some(250 * MS), MS),
            250 * MS
        );
        // No RTT sample: 1 s.
        assert_eq!(Rack::probe_timeout(0, 3, 200 * MS, None, MS), 1000 * MS);
        // Rounded up to the jiffy.
        assert_eq!(Rack::probe_timeout(MS / 3, 5, 200 * MS, None, MS), 3 * MS);
    }

    #[test]
    fn probe_acks() {
        let mut r = Rack {
            tlp_high_seq: Some(1001),
            tlp_retrans: true,
            ..Default::default()
        };
        assert!(!r.on_probe_ack(901, true, false), "below the probe");
        assert!(
            !r.on_probe_ack(1001, true, false),
            "the probe's ACK: not yet known"
        );
        assert_eq!(r.tlp_high_seq, Some(1001));
        assert!(
            !r.on_probe_ack(1001, false, true),
            "a duplicate: both arrived"
        );
        assert_eq!(r.tlp_high_seq, None);
        r.tlp_high_seq = Some(1001);
        assert!(
            r.on_probe_ack(1201, true, false),
            "beyond: the original was lost"
        );
        assert_eq!((r.tlp_high_seq, r.probe_recoveries), (None, 1));
        r.tlp_high_seq = Some(1001);
        r.tlp_retrans = false;
        assert!(!r.on_probe_ack(1001, true, false));
        assert_eq!(r.tlp_high_seq, None, "new-data probe acknowledged");
    }
}
