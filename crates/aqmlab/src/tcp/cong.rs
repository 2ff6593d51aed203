//! Window growth and reduction as Linux's congestion-control framework does them
//! (`net/ipv4/tcp_cong.c`, `tcp_input.c`, `tcp_output.c`, `include/net/tcp.h`; read in a
//! Linux 6.17 tree), for `congestion_control = "linux_reno"` and `"cubic"`:
//!
//! - cwnd and ssthresh are whole segments; slow start while `cwnd < ssthresh`
//!   (`tcp_in_slow_start`), adding one segment per segment ACKed (`tcp_slow_start`: a delayed
//!   ACK of two segments adds two), the rest of the ACK going on to congestion avoidance;
//! - congestion avoidance counts ACKed segments in `snd_cwnd_cnt` and adds one segment per
//!   `w` of them (`tcp_cong_avoid_ai`), `w = cwnd` for Reno (`tcp_reno_cong_avoid`) and CUBIC's
//!   `cnt` (`tcp/cubic.rs`);
//! - the window grows only while the sender is cwnd-limited (`tcp_is_cwnd_limited`): the last
//!   transmission filled cwnd in the current window of data, or, in slow start, cwnd is below
//!   twice the most segments outstanding in it (`tcp_cwnd_validate`'s record);
//! - a reduction sets ssthresh from the algorithm (`max(cwnd/2, 2)` for Reno,
//!   `tcp_reno_ssthresh`) and clears `snd_cwnd_cnt`; a retransmission timeout reduces it only
//!   if no reduction was made in the current window (`tcp_enter_loss`), and sets cwnd to one
//!   segment.
//!
//! The ACKed-segment count and CUBIC's RTT samples come from a record of the data segments
//! outstanding (start, end, last send time, retransmitted, SACKed), kept only by these
//! senders. An ACK counts the segments newly delivered, cumulatively or by SACK (Linux's
//! `acked_sacked`, the growth of `tp->delivered`), and gives the RTT sample Linux hands the
//! algorithm (`ca_rtt_us`): from the newest segment newly SACKed, else from the newest one
//! newly ACKed if none of those was retransmitted, else — the Linux presets send timestamps —
//! from the timestamp echoed, at its 1 ms resolution, when the ACK moved snd_una.

use super::config::{CongestionControl, TcpConfig};
pub use super::cong_cold::LinuxCold;
use super::cubic::{AckContext, Cubic};
pub use super::dctcp::{update_alpha, Dctcp, DCTCP_MAX_ALPHA, DCTCP_SHIFT_G};
use super::hystart_pp::HystartPP;
use super::prr::Prr;
use super::rack::Rack;
use super::rate::mstamp;
use super::sent::{Sent, SentRecord};
use crate::units::{Time, SEC};

pub use super::window_growth::{cong_avoid_ai, slow_start};

/// Linux's per-connection congestion-control state.
#[derive(Clone, Debug)]
pub struct LinuxCong {
    cubic_on: bool,
    hystart: bool,
    /// One jiffy (the configuration's tick, ns) and jiffies per second. 32 bits: `tick_ms`
    /// is validated to [0.001, 1000] ms, so the tick is at most 10⁹ ns and HZ at most 10⁶
    /// (`tick32`; the state stays within 8 cache lines).
    tick: u32,
    hz: u32,
    /// `snd_cwnd_cnt`.
    pub cwnd_cnt: u32,
    /// `tcp_cwnd_validate`'s record of the current window: whether it was cwnd-limited, the
    /// most segments outstanding, and the sequence number that ends it.
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    /// Jiffy of the last data segment sent (`lsndtime`).
    lsndtime: u64,
    /// snd_una at the last retransmission timeout, while in its loss episode (Linux
    /// `TCP_CA_Loss`; `icsk_retransmits` is 0 again once snd_una moves past it);
    /// `NO_LOSS_EPISODE` outside one (a plain number, not an `Option`: 8 bytes fewer, and
    /// "snd_una beyond it" is false for the sentinel as it was for `None`).
    pub loss_una: u64,
    /// The data segments outstanding (`tcp/sent.rs`).
    pub(crate) sent: SentRecord,
    /// The most recently sent segment this ACK delivered: (send time, end, retransmitted)
    /// (RACK's input, `tcp_rack_advance`).
    pub(crate) newest_delivered: Option<(Time, u64, bool)>,
    /// Highest sequence SACKed so far (Linux `tcp_highest_sack_seq`), and whether the last
    /// ACK delivered a never-retransmitted segment below the value it had before that ACK
    /// (reordering, `tcp_check_sack_reordering`).
    pub(crate) high_sacked: u64,
    pub(crate) reordered: bool,
    /// The last ACK's sample for the RTO estimator (`on_ack`), if it gave one.
    pub rto_rtt: Option<Time>,
    /// The last send time stamped on a segment (`on_data_sent`).
    last_at: Time,
    pub cubic: Cubic,
    /// HyStart++ (`hystart_plus_plus`) runs in place of CUBIC's HyStart (its state:
    /// `LinuxCold::hspp`).
    hspp_on: bool,
    /// DCTCP, HyStart++, pacing, BBR, Prague and LEDBAT (`tcp/cong_cold.rs`): None for a
    /// configuration that uses none of them, so that a plain connection's ACKs read one
    /// pointer instead of their fields.
    pub cold: Option<Box<LinuxCold>>,
    /// PRR (`prr`, `tcp/prr.rs`) and RACK-TLP (`rack_tlp`, `tcp/rack.rs`), kept here with
    /// the rest of Linux's per-connection state: one allocation, whose lines an ACK reads
    /// together.
    pub prr: Option<Prr>,
    pub rack: Option<Rack>,
}

/// `LinuxCong::loss_una` outside a timeout's loss episode.
pub const NO_LOSS_EPISODE: u64 = u64::MAX;

/// A configuration's tick in 32 bits: within [1, 10⁹] ns for every validated configuration
/// (`tick_ms` in [0.001, 1000]); an unvalidated larger one is clamped.
fn tick32(tick: Time) -> u32 {
    tick.clamp(1, u32::MAX as u64) as u32
}

impl LinuxCong {
    pub fn new(cfg: &TcpConfig) -> Self {
        let tick = tick32(cfg.tick());
        LinuxCong {
            cubic_on: cfg.congestion_control == CongestionControl::Cubic,
            hystart: cfg.hystart,
            tick,
            hz: (SEC / tick as u64).max(1) as u32,
            cwnd_cnt: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            lsndtime: 0,
            loss_una: NO_LOSS_EPISODE,
            sent: SentRecord::default(),
            rto_rtt: None,
            last_at: 0,
            newest_delivered: None,
            high_sacked: 0,
            reordered: false,
            cubic: Cubic::default(),
            hspp_on: cfg.hystart_plus_plus,
            cold: LinuxCold::needed(cfg).then(|| Box::new(LinuxCold::new(cfg))),
            prr: cfg.prr.then(Prr::default),
            rack: cfg.rack_tlp.then(Rack::default),
        }
    }

    /// Bytes this state holds on the heap besides itself: the record of segments and the
    /// cold part (`tcp/cong_cold.rs`) with what it holds.
    pub fn heap_bytes(&self) -> usize {
        self.sent.heap_bytes()
            + self
                .cold
                .as_deref()
                .map_or(0, |c| std::mem::size_of::<LinuxCold>() + c.heap_bytes())
    }

    /// The cold part, made if the configuration did not (it makes it whenever it can need
    /// it: `LinuxCold::needed`).
    #[cold]
    pub fn cold_mut(&mut self) -> &mut LinuxCold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// The pacer, BBR, Prague, LEDBAT, DCTCP's state and the rate estimator, where the
    /// connection has them (`LinuxCold`).
    #[inline]
    pub fn pacer(&self) -> Option<&crate::tcp::pacing::Pacer> {
        self.cold.as_deref().and_then(|c| c.pacer.as_ref())
    }
    #[inline]
    pub fn pacer_mut(&mut self) -> Option<&mut crate::tcp::pacing::Pacer> {
        self.cold.as_deref_mut().and_then(|c| c.pacer.as_mut())
    }
    #[inline]
    pub fn bbr(&self) -> Option<&crate::tcp::bbr::Bbr> {
        self.cold.as_deref().and_then(|c| c.bbr.as_deref())
    }
    #[inline]
    pub fn prague(&self) -> Option<&crate::tcp::prague::Prague> {
        self.cold.as_deref().and_then(|c| c.prague.as_deref())
    }
    #[inline]
    pub fn prague_mut(&mut self) -> Option<&mut crate::tcp::prague::Prague> {
        self.cold
            .as_deref_mut()
            .and_then(|c| c.prague.as_deref_mut())
    }
    #[inline]
    pub fn rate(&self) -> Option<&crate::tcp::rate::RateEstimator> {
        self.cold.as_deref().and_then(|c| c.rate.as_deref())
    }
    #[inline]
    pub fn frto(&self) -> Option<&crate::tcp::undo::Frto> {
        self.cold.as_deref().and_then(|c| c.frto.as_deref())
    }
    #[inline]
    pub fn frto_mut(&mut self) -> Option<&mut crate::tcp::undo::Frto> {
        self.cold.as_deref_mut().and_then(|c| c.frto.as_deref_mut())
    }
    #[inline]
    pub fn dctcp(&self) -> Option<&Dctcp> {
        self.cold.as_deref().and_then(|c| c.dctcp.as_ref())
    }
    #[inline]
    fn hspp_mut(&mut self) -> Option<&mut HystartPP> {
        self.cold.as_deref_mut().and_then(|c| c.hspp.as_mut())
    }

    /// The send stamp of the last data segment sent (`on_data_sent`): LEDBAT's timestamp.
    #[inline]
    pub fn last_send_stamp(&self) -> Time {
        self.last_at
    }

    /// Becomes a copy of `t` (a template's new state) keeping its own buffers' capacity
    /// (`tcp/template.rs`): the same state as `t.clone()`.
    pub fn renew_from(&mut self, t: &LinuxCong) {
        let segs = self.sent.take_buffer();
        let old_cold = self.cold.take();
        *self = t.clone();
        self.sent.adopt_buffer(segs);
        if let (Some(mut old), Some(new)) = (old_cold, self.cold.as_deref_mut()) {
            if new.rate_tx.is_empty() {
                old.rate_tx.clear();
                new.rate_tx = std::mem::take(&mut old.rate_tx);
            }
        }
    }

    /// Jiffies per second.
    #[inline]
    pub fn hz(&self) -> u64 {
        self.hz as u64
    }

    /// A retransmission timeout under BBR (`tcp_enter_loss` → `bbr_set_state(TCP_CA_Loss)`),
    /// after `ssthresh` saved cwnd: the loss episode lasts until snd_una reaches `snd_max`.
    pub fn bbr_on_rto(&mut self, now: Time, snd_max: u64) {
        let c = self.cold_mut();
        c.bbr_loss_high = Some(snd_max);
        if let (Some(b), Some(r)) = (c.bbr.as_deref_mut(), c.rate.as_deref()) {
            b.on_loss_state(r, mstamp(now));
        }
    }

    /// Stamps a data segment with the delivery state (`tcp_rate_skb_sent`), BBR only: a new
    /// one is appended in step with `sent`, a retransmission restamps the segments it covers.
    /// `nothing_out`: no data was outstanding before it.
    pub fn rate_on_sent(
        &mut self,
        now: Time,
        seq: u64,
        len: u64,
        retransmit: bool,
        nothing_out: bool,
    ) {
        let Some(LinuxCold {
            rate: Some(r),
            rate_tx,
            ..
        }) = self.cold.as_deref_mut()
        else {
            return;
        };
        let now_us = mstamp(now);
        let end = seq + len;
        if !retransmit {
            let tx = r.on_sent(now_us, end, nothing_out, false);
            rate_tx.push_back(tx);
        } else {
            let first = self.sent.first_ending_after(seq);
            // `sent` and `rate_tx` index for index.
            #[allow(clippy::needless_range_loop)]
            for i in first..self.sent.len() {
                let s = self.sent.get(i);
                if s.start >= end {
                    break;
                }
                rate_tx[i] = r.on_sent(now_us, s.end(), false, true);
            }
        }
    }

    /// Linux's jiffies at `now`: whole ticks, counted from 1 so that 0 can mean "unset" as
    /// it does for CUBIC's epoch.
    #[inline]
    pub fn jiffies(&self, now: Time) -> u64 {
        now / self.tick as u64 + 1
    }

    /// The connection is established (`tcp_init_transfer` → the algorithm's `init`): CUBIC
    /// starts afresh and HyStart's first round ends at `snd_nxt`.
    pub fn on_established(&mut self, now: Time, snd_nxt: u64, dctcp: bool) {
        // "Prevent spurious tcp_cwnd_restart() on first data packet" (tcp_input.c, as the
        // handshake completes on either side).
        self.lsndtime = self.jiffies(now);
        self.cwnd_cnt = 0;
        if dctcp {
            self.cold_mut().dctcp = Some(Dctcp::new(snd_nxt));
        }
        self.cubic = Cubic::default();
        self.cubic.hystart_reset(now / 1000, snd_nxt);
        if self.hspp_on {
            self.cold_mut().hspp = Some(HystartPP::new(snd_nxt));
        } else if let Some(c) = self.cold.as_deref_mut() {
            c.hspp = None;
        }
    }

    /// Jiffies since the last data segment was sent (`tcp_jiffies32 - lsndtime`), and `rto`
    /// in jiffies (`icsk_rto`).
    pub fn idle_jiffies(&self, now: Time, rto: Time) -> (i64, i64) {
        let idle = self.jiffies(now).saturating_sub(self.lsndtime);
        (idle as i64, rto.div_ceil(self.tick as u64) as i64)
    }

    /// A segment carrying `len` bytes of data from `seq` goes out; `idle`: nothing was in
    /// flight (Linux `CA_EVENT_TX_START`, which moves CUBIC's epoch past the idle time).
    pub fn on_data_sent(&mut self, now: Time, seq: u64, len: u64, retransmit: bool, idle: bool) {
        if len == 0 {
            return;
        }
        let now_j = self.jiffies(now);
        if idle && self.cubic_on {
            self.cubic.on_tx_start(now_j, self.lsndtime);
        }
        self.lsndtime = now_j;
        // Send times strictly increase in transmission order: segments sent in one event get
        // stamps a nanosecond apart, so that "sent after" (RACK, RFC 8985 §6.2) follows the
        // order of transmission. Ties broken by sequence number (the RFC's rule for a
        // clock too coarse to separate a burst) would make a retransmission sent right after
        // new data in the same instant look older than it, and RACK would mark it lost one
        // RTT later although it arrives.
        let now = now.max(self.last_at + 1);
        self.last_at = now;
        if !retransmit {
            self.sent.push(seq, len, now);
        } else {
            self.sent.retransmit(seq, seq + len, now);
        }
    }

    /// An ACK with cumulative acknowledgment `ack` (snd_una after it) and SACK `blocks`:
    /// returns the segments newly delivered (Linux `acked_sacked`) and the algorithm's RTT
    /// sample (module comment). With delivery-rate sampling (BBR) each segment newly
    /// delivered also goes through `tcp_rate_skb_delivered`, and the sample — the rate
    /// sample's `rtt_us`, which feeds `tcp_min_rtt` — has no timestamp fallback: the model
    /// echoes the send time of the newest segment ACKed, which after a spurious
    /// retransmission (go-back-N after a timeout) is that retransmission's and would give
    /// samples of a millisecond that corrupt BBR's min RTT (Linux's TSecr echoes the segment
    /// that made the receiver ACK); such an ACK gives BBR no sample (Karn). The sample is
    /// completed by `RateEstimator::gen`.
    pub fn on_ack(&mut self, now: Time, ack: u64, blocks: &[(u64, u64)]) -> (u32, Option<Time>) {
        if self.sent.len() == 0 && blocks.is_empty() && self.rate().is_none() {
            // Nothing outstanding and nothing SACKed (a receiver's data, mostly): nothing is
            // delivered and there is no sample; what follows would find the same.
            self.newest_delivered = None;
            self.reordered = false;
            self.rto_rtt = None;
            return (0, None);
        }
        let (mut rate, rate_tx) = match self.cold.as_deref_mut() {
            Some(LinuxCold {
                rate: Some(r),
                rate_tx,
                ..
            }) => (Some(&mut **r), Some(rate_tx)),
            _ => (None, None),
        };
        if let Some(r) = rate.as_mut() {
            r.start_ack();
        }
        let mut delivered = 0u32;
        let mut sack_sent: Option<Time> = None;
        // The oldest clean segment newly SACKed and newly ACKed (`first_sackt`,
        // `first_ackt`): the RTO estimator's sample (`rto_rtt`).
        let mut sack_first: Option<Time> = None;
        let mut newest: Option<(Time, u64, bool)> = None;
        let prior_fack = self.high_sacked;
        let mut reordered = false;
        let mut note = |s: &Sent| {
            if newest.is_none_or(|(t, e, _)| s.at > t || (s.at == t && s.end() > e)) {
                newest = Some((s.at, s.end(), s.rexmit));
            }
            reordered |= !s.rexmit && s.start < prior_fack;
        };
        let mut high_sacked = prior_fack;
        let mut rate_tx = rate_tx;
        self.sent.sack(ack, blocks, |i, s| {
            delivered += 1;
            high_sacked = high_sacked.max(s.end());
            note(s);
            if !s.rexmit {
                sack_sent = sack_sent.max(Some(s.at));
                sack_first = Some(sack_first.map_or(s.at, |t| t.min(s.at)));
            }
            if let (Some(r), Some(tx)) = (rate.as_mut(), rate_tx.as_deref_mut()) {
                r.on_delivered(&mut tx[i], true);
            }
        });
        let (mut popped, mut rexmit) = (0u32, false);
        let (mut newest_clean, mut newest_any): (Option<Time>, Time) = (None, 0);
        let mut oldest_clean: Option<Time> = None;
        self.sent.pop_acked(ack, |s| {
            popped += 1;
            rexmit |= s.rexmit;
            newest_any = newest_any.max(s.at);
            if !s.sacked {
                delivered += 1;
                note(s);
                if !s.rexmit {
                    newest_clean = Some(s.at);
                    oldest_clean = oldest_clean.or(Some(s.at));
                }
            }
            if let (Some(r), Some(txs)) = (rate.as_mut(), rate_tx.as_deref_mut()) {
                let mut tx = txs.pop_front().expect("in step with sent");
                r.on_delivered(&mut tx, false);
            }
        });
        // The echoed timestamp: millisecond clock, at least 1 ms.
        let ts_rtt = || {
            let ms = (now / 1_000_000)
                .saturating_sub(newest_any / 1_000_000)
                .max(1);
            ms * 1_000_000
        };
        self.newest_delivered = newest;
        self.high_sacked = high_sacked;
        self.reordered = reordered;
        let clean = if let Some(t) = sack_sent {
            Some(now - t)
        } else if let (Some(t), false) = (newest_clean, rexmit) {
            Some(now - t)
        } else {
            None
        };
        // `tcp_ack_update_rtt`: the oldest clean segment cumulatively ACKed unless
        // retransmitted data was ACKed, else the oldest newly SACKed, else the timestamp.
        self.rto_rtt = match (oldest_clean, rexmit, sack_first) {
            (Some(t), false, _) => Some(now - t),
            (_, _, Some(t)) => Some(now - t),
            _ if popped > 0 => Some(ts_rtt()),
            _ => None,
        };
        if let Some(r) = rate {
            if let Some(t) = clean {
                let us = (t / 1000).max(1);
                r.rs.rtt_us = us as i64;
                r.update_rtt_min(mstamp(now), us);
            }
            return (delivered, clean);
        }
        let rtt = clean.or_else(|| (popped > 0).then(ts_rtt));
        (delivered, rtt)
    }

    /// CUBIC's per-ACK RTT hook (`cubictcp_acked`); returns a new ssthresh (segments) when
    /// HyStart ends slow start. `srtt_us` and `packets_out` feed Linux's ACK-train allowance
    /// (`hystart_ack_delay`).
    #[allow(clippy::too_many_arguments)]
    pub fn on_rtt_sample(
        &mut self,
        now: Time,
        rtt: Time,
        cwnd: u32,
        ssthresh: u32,
        snd_una: u64,
        snd_nxt: u64,
        packets_out: u32,
        srtt_us: u64,
        mss: u64,
    ) -> Option<u32> {
        if let Some(h) = self.hspp_mut() {
            h.on_ack(snd_una, snd_nxt);
            h.on_rtt(rtt, cwnd);
        }
        if !self.cubic_on {
            return None;
        }
        let ctx = AckContext {
            now_us: now / 1000,
            now_j: self.jiffies(now),
            hz: self.hz as u64,
            cwnd,
            ssthresh,
            snd_una,
            snd_nxt,
            ack_delay_us: hystart_ack_delay_us(mss, cwnd, ssthresh, packets_out, srtt_us),
            hystart: self.hystart && !self.hspp_on,
        };
        self.cubic.on_rtt_sample(rtt / 1000, &ctx)
    }

    /// Segments in flight as Linux counts them with RACK (`tcp_packets_in_flight`):
    /// outstanding, less SACKed, less marked lost, plus retransmissions in flight.
    pub fn rack_in_flight(&self) -> u32 {
        self.sent.rack_in_flight()
    }

    /// Segments SACKed (`sacked_out`).
    pub fn sacked_out(&self) -> u32 {
        self.sent.counts().sacked
    }

    /// The first segment marked lost and not retransmitted since: `(start, end)`.
    pub fn first_lost(&mut self) -> Option<(u64, u64)> {
        self.sent.first_lost()
    }

    /// Whether a segment not SACKed is marked lost (`lost_out > 0`).
    pub fn any_lost(&self) -> bool {
        self.sent.counts().lost > 0
    }

    /// The last segment sent: `(start, end)` (the tail loss probe's retransmission).
    pub fn last_segment(&self) -> Option<(u64, u64)> {
        self.sent.last_segment()
    }

    /// A retransmission timeout marks every segment not SACKed lost (`tcp_timeout_mark_lost`),
    /// counted in `tp->lost` (BBR) but in no ACK's sample.
    pub fn mark_all_lost(&mut self) {
        let n = self.sent.mark_all_lost();
        if let Some(r) = self.cold.as_deref_mut().and_then(|c| c.rate.as_deref_mut()) {
            r.count_lost(n);
        }
    }

    /// A retransmission timeout in the loss state Linux runs with RACK
    /// (`SentRecord::mark_timed_out_lost`): segments sent within RACK's RTT stay in flight.
    pub fn mark_timed_out_lost(&mut self, now: Time) {
        let rtt = self.rack.as_ref().map_or(0, |r| r.rtt);
        let n = self.sent.mark_timed_out_lost(now, rtt);
        if let Some(r) = self.cold.as_deref_mut().and_then(|c| c.rate.as_deref_mut()) {
            r.count_lost(n);
        }
    }

    /// `tcp_is_cwnd_limited`.
    #[inline]
    pub fn is_cwnd_limited(&self, cwnd: u32, ssthresh: u32) -> bool {
        self.is_cwnd_limited || (cwnd < ssthresh && cwnd < 2 * self.max_packets_out)
    }

    /// The algorithm's `cong_avoid` for `acked` segments ACKed at `now`. Returns a new
    /// ssthresh (segments) when HyStart++ ends slow start.
    pub fn cong_avoid(
        &mut self,
        now: Time,
        cwnd: &mut u32,
        ssthresh: u32,
        acked: u32,
        clamp: u32,
    ) -> Option<u32> {
        if !self.is_cwnd_limited(*cwnd, ssthresh) {
            return None;
        }
        let mut acked = acked;
        if *cwnd < ssthresh {
            if let Some(h) = self.hspp_mut().filter(|h| h.active()) {
                let (add, over) = h.growth(acked, false);
                if over {
                    h.exited_at = Some(*cwnd);
                    return Some(*cwnd);
                }
                *cwnd = cwnd.saturating_add(add).min(ssthresh).min(clamp);
                return None;
            }
            acked = slow_start(cwnd, ssthresh, acked, clamp);
            if acked == 0 {
                return None;
            }
        }
        let w = if self.cubic_on {
            let now_j = self.jiffies(now);
            self.cubic.update(*cwnd, acked, now_j, self.hz as u64);
            self.cubic.cnt
        } else {
            *cwnd
        };
        cong_avoid_ai(cwnd, &mut self.cwnd_cnt, w, acked, clamp);
        None
    }

    /// The algorithm's `ssthresh` at a reduction from `cwnd` segments (fast retransmit, ECE,
    /// timeout); the counter of congestion avoidance starts again (`tcp_init_cwnd_reduction`).
    pub fn ssthresh(&mut self, cwnd: u32) -> u32 {
        self.cwnd_cnt = 0;
        self.loss_una = NO_LOSS_EPISODE;
        if let Some(h) = self.hspp_mut() {
            h.stop();
        }
        if let Some(b) = self.cold.as_deref_mut().and_then(|c| c.bbr.as_deref_mut()) {
            return b.on_reduction(cwnd);
        }
        if self.cubic_on {
            self.cubic.recalc_ssthresh(cwnd)
        } else {
            (cwnd >> 1).max(2)
        }
    }

    /// DCTCP starts again (`dctcp_init`) with its first window at `snd_nxt`, if it runs.
    pub fn restart_dctcp(&mut self, snd_nxt: u64) {
        if let Some(d) = self.cold.as_deref_mut().and_then(|c| c.dctcp.as_mut()) {
            *d = Dctcp::new(snd_nxt);
        }
    }

    /// The `ssthresh` at an ECE reduction: DCTCP's `dctcp_ssthresh` (cwnd·α/2 off), else the
    /// algorithm's usual one. For a loss DCTCP halves (`dctcp_react_to_loss`, RFC 8257 §3.5),
    /// as `ssthresh` does.
    pub fn ssthresh_ece(&mut self, cwnd: u32) -> u32 {
        match self.dctcp() {
            Some(d) => {
                let w = d.ssthresh(cwnd);
                self.cwnd_cnt = 0;
                self.loss_una = NO_LOSS_EPISODE;
                if let Some(h) = self.hspp_mut() {
                    h.stop();
                }
                w
            },
            None => self.ssthresh(cwnd),
        }
    }

    /// A retransmission timeout (`tcp_enter_loss`, after the ssthresh decision): CUBIC's state
    /// is reset on entering the Loss state (`cubictcp_state`), HyStart starts a new round.
    pub fn on_rto(&mut self, now: Time, snd_una: u64, snd_max: u64) {
        self.cwnd_cnt = 0;
        if let Some(h) = self.hspp_mut() {
            h.stop();
        }
        self.loss_una = snd_una;
        if self.cubic_on {
            self.cubic.reset();
            self.cubic.hystart_reset(now / 1000, snd_max);
        }
    }

    /// After a transmission attempt (`tcp_write_xmit` → `tcp_cwnd_validate`): `sent_new`,
    /// new data went out; `in_flight`, segments in flight after it; `packets_out`, segments
    /// outstanding.
    pub fn cwnd_validate(
        &mut self,
        sent_new: bool,
        in_flight: u32,
        cwnd: u32,
        packets_out: u32,
        snd_una: u64,
        snd_max: u64,
    ) {
        let limited = in_flight >= cwnd;
        if !(sent_new || limited) {
            return;
        }
        if snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = snd_max;
        }
    }
}

/// Linux `hystart_ack_delay`: the ACK-train threshold's allowance for TSO/GRO batching,
/// min(1 ms, 4·GSO size / pacing rate), with a 64 KB GSO size and the pacing rate of
/// `tcp_update_pacing_rate` (200 % of cwnd/SRTT below half ssthresh, 120 % above). Without
/// an SRTT the rate is not divided by it, as in Linux: the allowance is then negligible.
pub fn hystart_ack_delay_us(
    mss: u64,
    cwnd: u32,
    ssthresh: u32,
    packets_out: u32,
    srtt_us: u64,
) -> u64 {
    const GSO_MAX_SIZE: u128 = 65_536;
    let ratio: u128 = if cwnd < ssthresh / 2 { 200 } else { 120 };
    let w = cwnd.max(packets_out) as u128;
    // Linux: mss·(USEC_PER_SEC/100 << 3)·ratio·w / srtt_us, srtt_us holding 8·SRTT in µs.
    let mut rate = mss as u128 * 80_000 * ratio * w;
    if srtt_us > 0 {
        rate /= 8 * srtt_us as u128;
    }
    if rate == 0 {
        return 1000;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / rate).min(1000) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segments sent in one event are stamped in transmission order: new data at t, then a
    /// retransmission of an older segment at the same t is the later one (RACK's "sent
    /// after"), a nanosecond apart.
    #[test]
    fn send_stamps_follow_transmission_order() {
        let mut lx = LinuxCong::new(&TcpConfig::linux_cubic());
        let t = 5 * SEC;
        lx.on_data_sent(t - 1000, 1, 1448, false, true);
        lx.on_data_sent(t, 1449, 1448, false, false);
        lx.on_data_sent(t, 1, 1448, true, false);
        assert_eq!((lx.sent.get(0).at, lx.sent.get(1).at), (t + 1, t));
        assert!(lx.sent.get(0).rexmit && !lx.sent.get(1).rexmit);
    }

    #[test]
    fn slow_start_spills_over_into_congestion_avoidance() {
        let mut cwnd = 10;
        assert_eq!(slow_start(&mut cwnd, 100, 2, u32::MAX), 0);
        assert_eq!(cwnd, 12);
        assert_eq!(slow_start(&mut cwnd, 13, 2, u32::MAX), 1);
        assert_eq!(cwnd, 13);
    }

    /// Reno's congestion avoidance: one segment per cwnd segments ACKed, with delayed ACKs
    /// (two per ACK) too.
    #[test]
    fn additive_increase_counts_segments() {
        let (mut cwnd, mut cnt) = (10, 0);
        for _ in 0..5 {
            cong_avoid_ai(&mut cwnd, &mut cnt, 10, 2, u32::MAX);
        }
        assert_eq!((cwnd, cnt), (11, 0));
        for _ in 0..11 {
            cong_avoid_ai(&mut cwnd, &mut cnt, 11, 1, u32::MAX);
        }
        assert_eq!((cwnd, cnt), (12, 0));
        // Credit above a new, smaller w: applied one segment at a time.
        let (mut cwnd, mut cnt) = (20, 15);
        cong_avoid_ai(&mut cwnd, &mut cnt, 10, 1, u32::MAX);
        assert_eq!((cwnd, cnt), (21, 1));
    }

    #[test]
    fn cwnd_limited_record() {
        let cfg = TcpConfig::linux_reno();
        let mut lx = LinuxCong::new(&cfg);
        // Application-limited: 3 segments out of a window of 10.
        lx.cwnd_validate(true, 3, 10, 3, 1, 3000);
        assert!(!lx.is_cwnd_limited(10, 5));
        // In slow start cwnd may still grow to twice what was outstanding.
        assert!(lx.is_cwnd_limited(5, 100));
        assert!(!lx.is_cwnd_limited(6, 100));
        lx.cwnd_validate(true, 10, 10, 10, 1, 10_000);
        assert!(lx.is_cwnd_limited(10, 5));
        // The record holds for the window it was made in, even if less is sent later...
        lx.cwnd_validate(true, 4, 10, 4, 5000, 12_000);
        assert!(lx.is_cwnd_limited(10, 5));
        // ...and is replaced once that window is acknowledged.
        lx.cwnd_validate(true, 4, 10, 4, 10_000, 14_000);
        assert!(!lx.is_cwnd_limited(10, 5));
    }

    #[test]
    fn delivered_segments_and_rtt_samples() {
        const MS: Time = 1_000_000;
        let cfg = TcpConfig::linux_cubic();
        let mut lx = LinuxCong::new(&cfg);
        for k in 0..6u64 {
            lx.on_data_sent(k * MS, 1 + k * 100, 100, false, k == 0);
        }
        // Segment 2 is retransmitted at 5.5 ms.
        lx.on_data_sent(5 * MS + MS / 2, 201, 100, true, false);
        assert_eq!(
            lx.on_ack(10 * MS, 201, &[]),
            (2, Some(9 * MS)),
            "newest of 0, 1"
        );
        assert_eq!(lx.on_ack(11 * MS, 250, &[]), (0, None), "a partial segment");
        // Segment 4 SACKed: delivered, and its sample is taken (sent at 4 ms).
        assert_eq!(lx.on_ack(12 * MS, 201, &[(401, 501)]), (1, Some(8 * MS)));
        assert_eq!(lx.on_ack(12 * MS, 201, &[(401, 501)]), (0, None), "not new");
        // The ACK of 2 (retransmitted), 3 and 4 (SACKed): 2 delivered, no sequence sample;
        // the echoed timestamp is the retransmission's: 14 − 5 ms.
        assert_eq!(lx.on_ack(14 * MS + 1, 501, &[]), (2, Some(9 * MS)));
        assert_eq!(lx.on_ack(20 * MS, 601, &[]), (1, Some(15 * MS)));
    }

    #[test]
    fn ack_delay_allowance() {
        // 10 segments of 1448 B per 100 ms at 200 %: 290 kB/s → capped at 1 ms.
        assert_eq!(hystart_ack_delay_us(1448, 10, u32::MAX, 0, 100_000), 1000);
        // 1000 segments per 1 ms: 2.9 GB/s → 65536·4/2.9e9 s ≈ 90 µs.
        let d = hystart_ack_delay_us(1448, 1000, u32::MAX, 0, 1000);
        assert!((85..95).contains(&d), "{d}");
    }
}
