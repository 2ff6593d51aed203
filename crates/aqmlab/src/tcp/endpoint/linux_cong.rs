//! The endpoint's hooks for Linux congestion control (`congestion_control` "linux_reno",
//! "cubic", and DCTCP, BBR and Prague, which run in the same framework; `tcp/cong.rs`,
//! `tcp/cubic.rs`): an ACK's delivered segments and RTT sample (`tcp_ack`, HyStart, DCTCP's
//! and AccECN's counts), window growth (the algorithm's `cong_avoid`), the retransmission
//! timeout (`tcp_enter_loss`), whether the sender is cwnd-limited after output
//! (`tcp_cwnd_validate`) and each data segment sent. Reached only with a Linux algorithm.

use super::{prr_mut, segments, Endpoint, Seg, MAX_CWND};
use crate::packet::{flags, Packet, MAX_SACK_BLOCKS, TS_SLOT};
use crate::tcp::config::{CongestionControl, TcpConfig, TimerModel};
use crate::tcp::ledbat::{Ledbat, NO_SAMPLE};
use crate::tcp::window_growth::slow_start;
use crate::units::Time;

/// A segment with LEDBAT's timestamp option arrived at `now`: as a receiver, the one-way
/// delay of its data (exact clocks: arrival minus the peer's send stamp) is the delay to
/// report next; as a sender, the delay it reports is a sample (RFC 6817 §2.4.2, libutp's
/// `reply_micro`). Out of line: LEDBAT connections only.
#[cold]
#[inline(never)]
fn ledbat_feedback(l: &mut Ledbat, now: Time, pkt: &Packet) {
    let (stamp, reply) = pkt.sack[TS_SLOT];
    if pkt.len > 0 {
        l.reply = now.saturating_sub(stamp);
    }
    if reply != NO_SAMPLE {
        l.on_sample(now, reply);
    }
}

impl Endpoint {
    /// An ACK arrived (not beyond snd_max): counts the segments it delivers, cumulatively or
    /// by SACK, and gives CUBIC its RTT sample (HyStart may end slow start). Returns the
    /// segments delivered.
    #[inline(never)]
    pub(super) fn linux_on_ack(&mut self, now: Time, cfg: &TcpConfig, pkt: &Packet) -> u32 {
        let mss = cfg.mss as u64;
        let snd_una = pkt.ack.max(self.snd_una);
        let snd_max = self.snd_max;
        let n = if self.sack_ok {
            (pkt.sack_n as usize).min(MAX_SACK_BLOCKS)
        } else {
            0
        };
        // DCTCP counts the ACK unless it is older than snd_una (Linux's `old_ack` path skips
        // `in_ack_event`).
        let dctcp_ack = (pkt.ack >= self.snd_una).then(|| self.ecn.echoed(pkt));
        let Some(lx) = self.linux.as_deref_mut() else {
            return 0;
        };
        let (acked, rtt) = lx.on_ack(now, snd_una, &pkt.sack[..n]);
        if self.ecn.acc.is_some() {
            // AccECN: new CE marks from the ACE field, on ACKs that deliver data (Linux
            // `tcp_accecn_process`: `FLAG_FORWARD_PROGRESS`; not older than snd_una).
            let progress = pkt.ack >= self.snd_una && (acked > 0 || pkt.ack > self.snd_una);
            self.ecn.on_ack_acc(pkt, acked, progress);
        }
        let rto_rtt = lx.rto_rtt;
        if let Some(c) = lx.cold.as_deref_mut() {
            if let (Some(l), true) = (c.ledbat.as_deref_mut(), pkt.has(flags::TS)) {
                ledbat_feedback(l, now, pkt);
            }
            if let (Some(d), Some(ece)) = (c.dctcp.as_mut(), dctcp_ack) {
                d.on_ack(acked, ece, snd_una, snd_max);
            }
        }
        if let (Some(rtt), Some(r)) = (rtt, lx.rack.as_mut()) {
            r.on_rtt_sample(rtt);
        }
        if let Some(rtt) = rtt {
            let exit = lx.on_rtt_sample(
                now,
                rtt,
                segments(self.cwnd, mss),
                segments(self.ssthresh, mss),
                snd_una,
                snd_max,
                (snd_max - snd_una).div_ceil(mss) as u32,
                (self.rto.srtt_s() * 1e6) as u64,
                mss,
            );
            if let Some(w) = exit {
                self.ssthresh = w as u64 * mss;
            }
        }
        if let (Some(r), TimerModel::Linux) = (rto_rtt, cfg.timer_model) {
            // snd_una after this ACK: Linux moves it before taking the sample.
            self.linux_rto_sample(r, snd_una);
        }
        acked
    }

    /// Window growth for `acked` segments ACKed (the algorithm's `cong_avoid`); none in the
    /// CWR state after an ECE reduction, until the data then outstanding is acknowledged.
    #[inline(never)]
    pub(super) fn linux_cong_avoid(&mut self, now: Time, cfg: &TcpConfig, acked: u32) {
        match cfg.congestion_control {
            CongestionControl::Bbr => return, // BBR sets cwnd itself (`cong_control`)
            CongestionControl::Ledbat => return self.ledbat_cong_avoid(cfg, acked),
            _ => {},
        }
        if self.prague().is_some() {
            return; // so does Prague (`prague_cong_control`, `paced_after_ack`)
        }
        if acked == 0 || (self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una)) {
            return;
        }
        let mss = cfg.mss as u64;
        let before = segments(self.cwnd, mss);
        let mut cwnd = before;
        let ssthresh = segments(self.ssthresh, mss);
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        if let Some(w) = lx.cong_avoid(now, &mut cwnd, ssthresh, acked, (MAX_CWND / mss) as u32) {
            self.ssthresh = w as u64 * mss; // HyStart++ ended slow start
        }
        if cwnd != before {
            self.cwnd = cwnd as u64 * mss;
        }
    }

    /// LEDBAT's window update for `acked` segments newly delivered (`tcp/ledbat.rs`):
    /// Linux's slow start while cwnd < ssthresh, ended (ssthresh = cwnd) once the queuing
    /// delay exceeds 0.9·TARGET (libutp); then RFC 6817's update, with the flight size before
    /// this ACK (outstanding now plus what it delivered). cwnd stays whole segments, the
    /// fraction kept by the controller.
    fn ledbat_cong_avoid(&mut self, cfg: &TcpConfig, acked: u32) {
        if acked == 0 || (self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una)) {
            return;
        }
        let mss = cfg.mss as u64;
        let mut cwnd = segments(self.cwnd, mss);
        let ssthresh = segments(self.ssthresh, mss);
        let clamp = (MAX_CWND / mss) as u32;
        let flight = (self.snd_max - self.snd_una) + acked as u64 * mss;
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        let limited = lx.is_cwnd_limited(cwnd, ssthresh);
        let Some(l) = lx.cold.as_deref_mut().and_then(|c| c.ledbat.as_deref_mut()) else {
            return;
        };
        let mut acked = acked;
        if cwnd < ssthresh {
            if l.ends_slow_start() {
                self.ssthresh = cwnd as u64 * mss;
            } else {
                if limited {
                    acked = slow_start(&mut cwnd, ssthresh, acked, clamp);
                }
                self.cwnd = cwnd as u64 * mss;
                if acked == 0 || !limited {
                    return;
                }
            }
        }
        let w = l.on_ack(cwnd as u64 * mss, acked as u64 * mss, flight, mss);
        self.cwnd = (w / mss).min(clamp as u64) * mss;
    }

    /// LEDBAT's timestamp option on a segment about to go out (not a SYN): the send stamp of
    /// its data (`on_data_sent`'s) and the one-way delay this end last measured.
    pub(super) fn ledbat_stamp(&self, seg: &mut Seg) {
        if let Some(lx) = self.linux.as_deref() {
            let stamp = if seg.len > 0 { lx.last_send_stamp() } else { 0 };
            let reply = lx
                .cold
                .as_deref()
                .and_then(|c| c.ledbat.as_deref())
                .map_or(NO_SAMPLE, |l| l.reply);
            seg.sack[TS_SLOT] = (stamp, reply);
            seg.flags |= flags::TS;
        }
    }

    /// A retransmission timeout under Linux's rules (`tcp_enter_loss`): ssthresh is cut only
    /// if no reduction was made in the current window of data — not in a fast recovery or ECE
    /// reduction still under way, nor at a repeated timeout before anything new is ACKed;
    /// cwnd = 1 segment (`tcp_packets_in_flight + 1` once everything outstanding is marked
    /// lost); CUBIC's state is reset. During the handshake nothing changes: Linux restores
    /// ssthresh when the connection is established and sets cwnd then.
    /// Returns whether ssthresh was cut (the undo's condition, `tcp/undo.rs`).
    pub(super) fn linux_on_rto(&mut self, now: Time, cfg: &TcpConfig, opening: bool) -> bool {
        if opening {
            return false;
        }
        let mss = cfg.mss as u64;
        let in_episode = self.snd_una < self.recover
            || (self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una));
        let cwnd = segments(self.cwnd, mss);
        let (snd_una, snd_max) = (self.snd_una, self.snd_max);
        let psock = self.prague().is_some().then(|| self.prague_sock(now, cfg));
        let Some(lx) = self.linux.as_deref_mut() else {
            return false;
        };
        let mut cut = false;
        if let (Some(p), Some(s)) = (lx.prague_mut(), psock) {
            // `prague_ssthresh` keeps ssthresh; `CA_EVENT_LOSS` halves the window (cwnd is
            // still the one before the timeout: `tcp_enter_loss` lowers it afterwards).
            p.enter_loss(&s);
            lx.cold_mut().prague_loss_high = snd_max;
        } else if !in_episode || snd_una > lx.loss_una {
            self.ssthresh = lx.ssthresh(cwnd) as u64 * mss;
            cut = true;
        }
        lx.on_rto(now, snd_una, snd_max);
        self.ecn_reduced = false;
        self.cwnd = mss;
        self.ecn.on_reduction(self.snd_max, false);
        cut
    }

    /// The end of `tcp_enter_loss` under BBR: `bbr_set_state(TCP_CA_Loss)`, after the
    /// segments were marked lost (its long-term sampling reads `tp->lost`).
    pub(super) fn bbr_enter_loss(&mut self, now: Time, cfg: &TcpConfig, opening: bool) {
        if opening || cfg.congestion_control != CongestionControl::Bbr {
            return;
        }
        let snd_max = self.snd_max;
        if let Some(lx) = self.linux.as_deref_mut() {
            lx.bbr_on_rto(now, snd_max);
        }
    }

    /// The application writes to an idle connection: Linux's `tcp_slow_start_after_idle_check`
    /// (include/net/tcp.h, called as the write queues new data, `tcp_skb_entail`) and
    /// `tcp_cwnd_restart` (net/ipv4/tcp_output.c, RFC 2861 §3). Nothing in flight, an
    /// algorithm without `cong_control`, and more than an RTO (in jiffies) since the last data
    /// segment: ssthresh = `tcp_current_ssthresh` (max(ssthresh, 3/4 cwnd) outside a cwnd
    /// reduction), then cwnd halves once per RTO elapsed while above the restart window
    /// min(IW, cwnd), and is at least that window.
    #[cold]
    pub(super) fn linux_idle_restart(&mut self, now: Time, cfg: &TcpConfig) {
        if !cfg.slow_start_after_idle
            || self.snd_max != self.snd_una
            || cfg.congestion_control == CongestionControl::Bbr
        {
            return;
        }
        let Some(lx) = self.linux.as_deref() else {
            return;
        };
        if lx.prague().is_some() {
            return; // `prague_cong_control`
        }
        let (mut delta, rto_j) = lx.idle_jiffies(now, self.rto.rto_ns(cfg, false));
        if delta <= rto_j {
            return;
        }
        let mss = cfg.mss as u64;
        let cwnd0 = segments(self.cwnd, mss);
        let in_reduction =
            self.in_recovery || (self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una));
        let ssthresh = segments(self.ssthresh, mss);
        let current = if in_reduction {
            ssthresh
        } else {
            ssthresh.max((cwnd0 >> 1) + (cwnd0 >> 2))
        };
        let restart = cfg.initial_window.min(cwnd0);
        let mut cwnd = cwnd0;
        loop {
            delta -= rto_j;
            if delta <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        if current != ssthresh {
            // (Kept as it is otherwise: slow start's unbounded value is not whole segments.)
            self.ssthresh = current as u64 * mss;
        }
        self.cwnd = cwnd.max(restart) as u64 * mss;
    }

    /// After a transmission attempt: Linux's record of whether the sender is cwnd-limited.
    #[inline(never)]
    pub(super) fn linux_after_output(&mut self, cfg: &TcpConfig, snd_max_before: u64) {
        let mss = cfg.mss as u64;
        let in_flight = (self.snd_nxt - self.snd_una).div_ceil(mss) as u32;
        let packets_out = (self.snd_max - self.snd_una).div_ceil(mss) as u32;
        let cwnd = segments(self.cwnd, mss);
        let (snd_una, snd_max) = (self.snd_una, self.snd_max);
        if let Some(lx) = self.linux.as_deref_mut() {
            let sent_new = snd_max > snd_max_before;
            lx.cwnd_validate(sent_new, in_flight, cwnd, packets_out, snd_una, snd_max);
        }
    }

    /// A data segment of `len` bytes at `seq` is about to go out (Linux senders only).
    #[inline(never)]
    pub(super) fn linux_on_send(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        seq: u64,
        len: u64,
        retransmit: bool,
    ) {
        // Nothing in flight before it (Linux `tcp_packets_in_flight() == 0`): outside
        // recovery, nothing between snd_una and the next byte to send.
        let idle = self.snd_nxt == self.snd_una && !self.in_recovery;
        if let Some(lx) = self.linux.as_deref_mut() {
            lx.on_data_sent(now, seq, len, retransmit, idle);
        }
        if let Some(p) = prr_mut(&mut self.linux) {
            p.on_sent(1);
        }
        if cfg.paced() {
            self.paced_on_send(now, cfg, seq, len, retransmit, idle);
        }
    }
}
