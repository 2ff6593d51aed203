//! Proportional Rate Reduction (RFC 9937, which obsoletes RFC 6937) as Linux 6.x runs it
//! (`net/ipv4/tcp_input.c`: `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`,
//! `tcp_end_cwnd_reduction`), for the Linux senders with `prr = true`.
//!
//! A reduction starts on entering SACK recovery or on an ECE (Linux's `TCP_CA_Recovery` and
//! `TCP_CA_CWR` states): ssthresh is cut by the algorithm as before, but cwnd is not set to it
//! at once. Instead every ACK that delivers data (cumulatively or by SACK) sets
//!
//! ```text
//! cwnd = in_flight + sndcnt
//! ```
//!
//! where, with `delta = ssthresh − in_flight`:
//!
//! - `delta < 0` (more in flight than ssthresh; the proportional part):
//!   `sndcnt = ⌈ssthresh · prr_delivered / RecoverFS⌉ − prr_out`;
//! - otherwise (the slow-start reduction bound, PRR-SSRB):
//!   `sndcnt = min(delta, max(prr_delivered − prr_out, newly_delivered) + safe)`, where `safe`
//!   is 1 when the ACK advanced snd_una and marked no new loss (RFC 9937's SafeACK; Linux
//!   `FLAG_SND_UNA_ADVANCED && !newly_lost`);
//! - at least one segment while nothing has been sent in the reduction yet (the fast
//!   retransmission is never held back).
//!
//! `sndcnt` may be negative in the proportional part before that floor; it then counts as 0.
//! The reduction ends with cwnd = ssthresh (`tcp_end_cwnd_reduction`): in recovery when the
//! cumulative ACK reaches the recovery point, in CWR once snd_una passes the snd_nxt of its
//! start.
//!
//! Where RFC 9937 and Linux differ, the model follows Linux:
//!
//! - RecoverFS is cwnd at the start of the reduction (`prior_cwnd`); RFC 9937 takes the
//!   FlightSize (snd.nxt − snd.una) there. Both are 20 segments in the RFC's examples.
//! - Everything is counted in whole segments (`tcp_packets_in_flight`, `newly_acked_sacked`);
//!   the RFC counts bytes and adds one SMSS in the SafeACK case.
//! - Linux sets cwnd = in_flight + sndcnt and lets the usual `in_flight < cwnd` test send;
//!   the RFC hands sndcnt to the sender as a quota. The two send the same segments.
//! - An ACK that delivers nothing leaves cwnd alone (`newly_acked_sacked <= 0` returns
//!   early), as the RFC's DeliveredData = 0 does.

/// The state of one reduction (Linux `prior_cwnd`, `prr_delivered`, `prr_out`).
#[derive(Clone, Debug, Default)]
pub struct Prr {
    /// In a reduction (Linux's CWR or Recovery state).
    pub active: bool,
    /// RecoverFS: cwnd (segments) when the reduction started (`prior_cwnd`).
    pub recover_fs: u32,
    /// Segments delivered since the reduction started (`prr_delivered`).
    pub delivered: u32,
    /// Segments sent since the reduction started (`prr_out`).
    pub out: u32,
    /// A CWR reduction (ECE) ends once snd_una passes this sequence number (Linux `high_seq`,
    /// snd_nxt at the start); None in a loss recovery, which the endpoint ends.
    pub cwr_end: Option<u64>,
    /// The ACK that started the reduction already had its `on_ack` (the entry sets cwnd
    /// before the fast retransmission goes out).
    pub entry_ack_done: bool,
    /// Reductions started (for records and tests).
    pub reductions: u64,
}

impl Prr {
    /// `tcp_init_cwnd_reduction`: a reduction starts from a window of `cwnd` segments.
    pub fn start(&mut self, cwnd: u32, cwr_end: Option<u64>) {
        self.active = true;
        self.recover_fs = cwnd.max(1);
        self.delivered = 0;
        self.out = 0;
        self.cwr_end = cwr_end;
        self.entry_ack_done = false;
        self.reductions += 1;
    }

    /// The reduction is over (`tcp_end_cwnd_reduction`, or a timeout).
    pub fn end(&mut self) {
        self.active = false;
        self.cwr_end = None;
        self.entry_ack_done = false;
    }

    /// `segs` segments (new data or retransmissions) went out during the reduction.
    #[inline]
    pub fn on_sent(&mut self, segs: u32) {
        if self.active {
            self.out = self.out.saturating_add(segs);
        }
    }

    /// `tcp_cwnd_reduction` for an ACK that delivered `newly` segments, with `in_flight`
    /// segments in flight after it (`tcp_packets_in_flight`); `una_advanced`: it moved snd_una;
    /// `newly_lost`: it made the sender mark a segment lost. Returns the new cwnd in segments,
    /// or None when the ACK delivered nothing (cwnd unchanged).
    pub fn on_ack(
        &mut self,
        newly: u32,
        newly_lost: bool,
        una_advanced: bool,
        in_flight: u32,
        ssthresh: u32,
    ) -> Option<u32> {
        if !self.active || newly == 0 {
            return None;
        }
        self.delivered = self.delivered.saturating_add(newly);
        let delta = ssthresh as i64 - in_flight as i64;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part, rounded up: ⌈ssthresh · prr_delivered / RecoverFS⌉ − prr_out.
            let rfs = self.recover_fs as u64;
            let share = (ssthresh as u64 * self.delivered as u64).div_ceil(rfs);
            share as i64 - self.out as i64
        } else {
            // PRR-SSRB: catch up on what was delivered and not yet sent, grow by one segment
            // on a SafeACK, but never beyond ssthresh.
            let mut n = (self.delivered as i64 - self.out as i64).max(newly as i64);
            if una_advanced && !newly_lost {
                n += 1;
            }
            n.min(delta)
        };
        sndcnt = sndcnt.max(if self.out == 0 { 1 } else { 0 });
        Some((in_flight as i64 + sndcnt).clamp(0, u32::MAX as i64) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9937 §8, example 1: cwnd = inflight = 20, segment 0 lost, ssthresh 10 at entry.
    /// ACKs 1 and 2 are duplicate ACKs answered by Limited Transmit (cwnd 20, inflight 19);
    /// ACK 3 starts recovery. ACKs 1–19 SACK the first flight, 20 and 21 the two Limited
    /// Transmit segments, 22 is the full cumulative ACK (cwnd = ssthresh = 10, the endpoint's
    /// `prr_end_recovery`). The RFC's inflight row is the input, its cwnd row the expected
    /// output, and the RFC's sends (cwnd − inflight) are counted in prr_out.
    ///
    /// One ACK differs: at ACK 19 inflight equals ssthresh (10). Linux's test for the
    /// proportional part is strict (`delta < 0`), so it takes the SSRB branch, whose bound
    /// ssthresh − inflight = 0 sends nothing (cwnd 10); the RFC's table still takes the
    /// proportional share there, ⌈10·17/20⌉ − 8 = 1 (cwnd 11). The model follows Linux: in
    /// this round it sends 12 segments where the table shows 13.
    #[test]
    fn rfc9937_example_1_single_loss() {
        // The RFC's rows for ACKs 3..=21 (recovery): cwnd and inflight.
        let cwnd_rfc: [u32; 19] = [
            19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10,
        ];
        let inflight_rfc: [u32; 19] = [
            18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9,
        ];
        let mut prr = Prr::default();
        prr.start(20, None);
        let mut sends = 0;
        for k in 0..cwnd_rfc.len() {
            let ack = k + 3;
            let inflight = inflight_rfc[k];
            // Each ACK of the example delivers one segment and does not move snd_una.
            if ack == 19 {
                let proportional = (10 * (prr.delivered + 1)).div_ceil(20) - prr.out;
                assert_eq!(inflight + proportional, cwnd_rfc[k], "the RFC's share");
            }
            let cwnd = prr.on_ack(1, false, false, inflight, 10).unwrap();
            if ack == 19 {
                assert_eq!(cwnd, 10, "Linux: SSRB at inflight = ssthresh");
            } else {
                assert_eq!(cwnd, cwnd_rfc[k], "cwnd after ACK {ack}");
            }
            // What the RFC's sender transmits, so that later rows stay comparable.
            let sent = cwnd_rfc[k] - inflight;
            prr.on_sent(sent);
            sends += sent;
            // The table is consistent: the next ACK's inflight is this one's plus what was
            // sent, less the segment it delivers.
            if k + 1 < cwnd_rfc.len() {
                assert_eq!(inflight_rfc[k + 1], inflight + sent - 1, "ACK {}", ack + 1);
            }
        }
        // The RFC's R and nine N's between ACKs 3 and 21 (with the two Limited Transmit
        // segments before and the one after ACK 22, the table's 13).
        assert_eq!(sends, 10);
        assert_eq!(prr.delivered, 19);
    }

    /// RFC 9937 §8, example 2 (RFC 6937 §6's second example): segments 0–14 lost, cwnd 20,
    /// ssthresh 10. The 16th segment's ACK (the third duplicate, after two answered by Limited
    /// Transmit) starts recovery with 15 segments presumed lost: inflight 4, below ssthresh, so
    /// PRR-SSRB sends one segment per segment delivered (the SACK-only ACKs are not SafeACKs):
    /// cwnd 5, inflight 4, one retransmission per ACK for the whole round trip.
    #[test]
    fn rfc9937_example_2_burst_loss() {
        let mut prr = Prr::default();
        prr.start(20, None);
        let mut inflight = 4;
        for k in 0..15 {
            let cwnd = prr.on_ack(1, false, false, inflight, 10).unwrap();
            assert_eq!(cwnd, 5, "ACK {k}");
            prr.on_sent(cwnd - inflight);
            inflight = cwnd - 1;
            assert_eq!(inflight, 4);
        }
        assert_eq!(prr.out, 15);
    }

    /// The SSRB bound: pipe below ssthresh grows by one extra segment per SafeACK (snd_una
    /// advanced, no new loss), to at most ssthresh; without the SafeACK it only conserves.
    #[test]
    fn slow_start_reduction_bound() {
        let mut prr = Prr::default();
        prr.start(20, None);
        // First ACK: nothing sent yet, delivered 2, inflight 4.
        assert_eq!(prr.on_ack(2, false, true, 4, 10), Some(4 + 3));
        prr.on_sent(3);
        // delivered 4, out 3: max(1, 2) + 1 = 3.
        assert_eq!(prr.on_ack(2, false, true, 5, 10), Some(8));
        prr.on_sent(3);
        // A new loss on this ACK: no extra segment: max(6 − 6, 2) = 2.
        assert_eq!(prr.on_ack(2, true, true, 6, 10), Some(8));
        prr.on_sent(2);
        // Capped by ssthresh − inflight.
        assert_eq!(prr.on_ack(5, false, true, 9, 10), Some(10));
        // Nothing delivered: no change.
        assert_eq!(prr.on_ack(0, false, true, 9, 10), None);
    }

    /// The first ACK of a reduction always lets one segment go (the fast retransmission),
    /// even when the proportional share rounds to zero; later ACKs may send none.
    #[test]
    fn first_segment_is_never_held() {
        let mut prr = Prr::default();
        prr.start(100, None);
        // ⌈10·1/100⌉ = 1 − 0 = 1.
        assert_eq!(prr.on_ack(1, false, false, 90, 10), Some(91));
        prr.on_sent(1);
        // ⌈10·2/100⌉ − 1 = 0.
        assert_eq!(prr.on_ack(1, false, false, 90, 10), Some(90));
        // Proportional share below prr_out: floored at 0.
        prr.on_sent(5);
        assert_eq!(prr.on_ack(1, false, false, 90, 10), Some(90));
        assert!(!Prr::default().active);
        assert_eq!(Prr::default().on_ack(1, false, false, 1, 10), None);
    }
}
