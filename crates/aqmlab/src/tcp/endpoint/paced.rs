//! The endpoint's hooks for pacing (`tcp/pacing.rs`), delivery-rate estimation
//! (`tcp/rate.rs`) and BBR (`tcp/bbr.rs`): called from the endpoint only when the
//! configuration paces (`TcpConfig::paced`), so the other senders' paths are unchanged.

use super::super::bbr::{Bbr, BbrCtx, CaState, GSO_BYTES_CAP, MIN_TSO_RATE, TCP_INFINITE_SSTHRESH};
use super::super::config::{CongestionControl, SackVariant, TcpConfig};
use super::super::gso;
use super::super::pacing::pacing_rate_linux;
use super::super::prague::{self, PragueParams, Sock};
use super::super::rate::mstamp;
use super::{segments, Endpoint, Outbox, MAX_CWND};
use crate::packet::Packet;
use crate::tcp::deadline::Deadline;
use crate::units::Time;

/// The sender's state before an ACK is processed.
#[derive(Clone, Copy, Debug)]
pub(super) struct AckBefore {
    snd_una: u64,
    snd_max: u64,
    cwnd: u64,
    in_flight: u32,
    delivered: u64,
    /// For Prague: ssthresh, the recoveries and ECE reductions so far.
    ssthresh: u64,
    recoveries: u32,
    ecn_reductions: u64,
}

/// Prague's parameters from the configuration.
pub(super) fn prague_params(cfg: &TcpConfig) -> PragueParams {
    PragueParams {
        version: cfg.prague_version,
        rtt_scaling: cfg.prague_rtt_scaling,
        target_us: (cfg.prague_rtt_target_ms * 1000.0).round().max(1.0) as u64,
        transition: cfg.prague_rtt_transition,
        mtu: (cfg.mss + cfg.header_bytes) as u64,
    }
}

impl Endpoint {
    /// Seeds the congestion control's random stream (BBR's gain-cycle start phase); the
    /// simulator gives each connection its own (`rng::StreamKind::TcpBbr`).
    pub fn set_cc_seed(&mut self, seed: u64) {
        if let Some(c) = self
            .linux
            .as_deref_mut()
            .and_then(|l| l.cold.as_deref_mut())
        {
            c.cc_seed = seed;
        }
    }

    /// The socket as Prague reads it (`tcp/prague/`).
    pub(super) fn prague_sock(&self, now: Time, cfg: &TcpConfig) -> Sock {
        let mss = cfg.mss as u64;
        Sock {
            now_us: prague::us(now),
            srtt8: (self.rto.srtt_s() * 8e6) as u64,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            cwnd: segments(self.cwnd, mss),
            ssthresh: segments(self.ssthresh, mss),
            clamp: (MAX_CWND / mss) as u32,
            unsent: self.app_end > self.snd_nxt,
        }
    }

    /// Prague's state, once established with AccECN.
    pub fn prague(&self) -> Option<&prague::Prague> {
        self.linux.as_deref().and_then(|l| l.prague())
    }

    /// BBR's state, once the connection is established.
    pub fn bbr(&self) -> Option<&Bbr> {
        self.linux.as_deref().and_then(|l| l.bbr())
    }

    /// The pacing rate in bytes per second (`u64::MAX`: not set), if the sender paces.
    pub fn pacing_rate(&self) -> Option<u64> {
        self.linux
            .as_deref()
            .and_then(|l| l.pacer())
            .map(|p| p.rate)
    }

    /// Linux `tcp_packets_in_flight` in segments: RFC 6675's pipe during SACK recovery,
    /// else what was sent from snd_una less what was SACKed.
    pub(super) fn linux_in_flight(&self, cfg: &TcpConfig) -> u32 {
        let mss = cfg.mss as u64;
        if self.sack_recovery(cfg) && cfg.sack_variant == SackVariant::Rfc6675 {
            let pipe = self
                .board
                .set_pipe(self.snd_una, self.snd_max, cfg.dupack_threshold, mss);
            return pipe.div_ceil(mss) as u32;
        }
        let out = (self.snd_nxt - self.snd_una).div_ceil(mss);
        out.saturating_sub(self.board.sacked_bytes() / mss) as u32
    }

    /// `tcp_pacing_check` before a data segment: true if the pacer holds it (output then
    /// resumes at the pacing deadline). A pure ACK that is due goes out all the same.
    /// Retransmissions are paced (`tcp_xmit_retransmit_queue` checks the pacer), except
    /// those of NewReno and Reno recovery, which are sent once from a moved snd_nxt and
    /// would otherwise be lost until the retransmit timer.
    #[inline(never)]
    pub(super) fn pacing_hold(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        retransmit: bool,
        out: &mut Outbox,
    ) -> bool {
        if retransmit && self.in_recovery && !self.sack_recovery(cfg) {
            return false;
        }
        let Some(t) = self
            .linux
            .as_deref()
            .and_then(|l| l.pacer())
            .and_then(|p| p.hold_until(now))
        else {
            return false;
        };
        self.pace_at = Deadline::at(t);
        if self.ack_now {
            self.emit_ack(cfg, out);
        }
        true
    }

    /// A data segment leaves (after `LinuxCong::on_data_sent`): the pacer's next departure
    /// time; for BBR the segment's delivery state and `CA_EVENT_TX_START` (`idle`: nothing
    /// was in flight). Losses are counted where segments are marked lost (`count_lost`).
    #[inline(never)]
    pub(super) fn paced_on_send(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        seq: u64,
        len: u64,
        retransmit: bool,
        idle: bool,
    ) {
        let nothing_out = !retransmit && self.snd_max == self.snd_una;
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        if let Some(p) = lx.pacer_mut() {
            p.on_data_sent(now, len);
        }
        if lx.rate().is_none() {
            return;
        }
        lx.rate_on_sent(now, seq, len, retransmit, nothing_out);
        if idle {
            let jiffies = lx.jiffies(now);
            let Some(c) = lx.cold.as_deref_mut() else {
                return;
            };
            let r = c.rate.as_deref().expect("rate");
            let (app_limited, dm) = (r.app_limited != 0, r.delivered_mstamp);
            if let Some(b) = c.bbr.as_deref_mut() {
                if let Some(w) = b.on_tx_start(app_limited, mstamp(now), jiffies, dm, cwnd) {
                    self.cwnd = w as u64 * mss;
                }
                if let Some(p) = c.pacer.as_mut() {
                    p.rate = b.pacing_rate;
                }
            }
        }
    }

    /// `tcp_packets_in_flight` as BBR reads it: with RACK-TLP Linux's own count in every
    /// state (outstanding − SACKed − marked lost + retransmissions in flight,
    /// `SentRecord::rack_in_flight`), not RFC 6675's pipe; else `linux_in_flight`.
    pub(super) fn bbr_in_flight(&self, cfg: &TcpConfig) -> u32 {
        match self.linux.as_deref() {
            Some(lx) if self.rack_on() => lx.rack_in_flight(),
            _ => self.linux_in_flight(cfg),
        }
    }

    /// New data at snd_nxt is about to leave under BBR, the pacer permitting: the size of the
    /// GSO skb it starts (`tcp/gso.rs`: `min(max_segs, cwnd quota)`, within `usable` bytes
    /// and the data written), set on the pacer; false when Linux would hold the skb for the
    /// next ACK (`tcp_tso_should_defer`). True at once for the rest of an skb under way.
    pub(super) fn bbr_gso_start(&mut self, now: Time, cfg: &TcpConfig, usable: u64) -> bool {
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        let in_flight = self.bbr_in_flight(cfg);
        let recovering = self.in_recovery || self.in_linux_loss_state(cfg);
        let unsent = self.app_end.saturating_sub(self.snd_nxt);
        let send_win = (self.snd_una + cfg.rwnd as u64).saturating_sub(self.snd_nxt);
        let srtt_us8 = (self.rto.srtt_s() * 8e6) as u64;
        let fin = self.fin_queued;
        let Some(lx) = self.linux.as_deref_mut() else {
            return true;
        };
        let min_rtt = lx.rate().map_or(u64::MAX, |r| r.min_rtt_us());
        let head_sent = (lx.sent.len() > 0).then(|| lx.sent.get(0).at);
        let Some(p) = lx.pacer_mut() else {
            return true;
        };
        if p.in_skb(now) {
            return true;
        }
        // `bbr_min_tso_segs`, then `tcp_tso_segs` (the veth's gso_max_segs, 65535, never
        // binds).
        let min_tso = if p.rate < MIN_TSO_RATE >> 3 { 1 } else { 2 };
        let max_segs = gso::tso_autosize(p.rate, min_rtt, mss, min_tso);
        let quota = gso::cwnd_quota(cwnd, in_flight).max(1);
        let room = (usable / mss).clamp(1, u32::MAX as u64) as u32;
        let data = (unsent / mss).clamp(1, u32::MAX as u64) as u32;
        let segs = max_segs.min(quota).min(room).min(data);
        // The unsent skb (`tcp_xmit_size_goal`: the GSO size, at most half the window): one
        // of a single segment is never deferred (`tcp_write_xmit` checks Nagle instead).
        let goal = (GSO_BYTES_CAP.min(cfg.rwnd as u64 / 2) / mss).max(1) * mss;
        let skb_len = unsent.min(goal);
        if segs < max_segs && skb_len > mss && !p.push_one {
            let check = gso::DeferCheck {
                recovering,
                now,
                wstamp: p.wstamp,
                cwnd,
                in_flight,
                mss,
                max_segs,
                send_win,
                snd_wnd: cfg.rwnd as u64,
                skb_len,
                more_queued: unsent > skb_len,
                fin: fin && unsent <= skb_len,
                head_sent,
                srtt_us8,
            };
            if gso::should_defer(&check) {
                return false;
            }
        }
        p.skb_segs = segs;
        true
    }

    /// `tcp_rate_check_app_limited` when the application writes (BBR).
    pub(super) fn rate_check_app_limited(&mut self, cfg: &TcpConfig) {
        let mss = cfg.mss as u64;
        let unsent = self.app_end.saturating_sub(self.snd_nxt);
        let in_flight = self.bbr_in_flight(cfg);
        let cwnd = segments(self.cwnd, mss);
        let lost_pending = self.in_recovery;
        if let Some(r) = self
            .linux
            .as_deref_mut()
            .and_then(|l| l.cold.as_deref_mut())
            .and_then(|c| c.rate.as_deref_mut())
        {
            r.check_app_limited(unsent, mss, in_flight, cwnd, lost_pending);
        }
    }

    /// The connection is established: BBR starts (`bbr_init`: its min RTT from the
    /// handshake's sample, its pacing rate from the initial window and SRTT), or the pacing
    /// rate is set from cwnd and SRTT (`tcp_rcv_state_process` calls
    /// `tcp_update_pacing_rate`).
    pub(super) fn paced_on_established(&mut self, now: Time, cfg: &TcpConfig) {
        let mss = cfg.mss as u64;
        let srtt8 = (self.rto.srtt_s() * 8e6) as u64;
        let cwnd = segments(self.cwnd, mss);
        let ssthresh = segments(self.ssthresh, mss);
        let min_rtt_sample = self.min_rtt_sample;
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        if cfg.congestion_control == CongestionControl::Bbr {
            let jiffies = lx.jiffies(now);
            let c = lx.cold_mut();
            let seed = c.cc_seed;
            let r = c.rate.as_deref_mut().expect("rate");
            if min_rtt_sample > 0 {
                r.update_rtt_min(mstamp(now), (min_rtt_sample / 1000).max(1));
            }
            let b = Bbr::new(mss, cwnd, r.min_rtt_us(), srtt8, mstamp(now), jiffies, seed);
            if let Some(p) = c.pacer.as_mut() {
                p.rate = b.pacing_rate;
            }
            c.bbr = Some(Box::new(b));
            self.ssthresh = TCP_INFINITE_SSTHRESH as u64 * mss;
        } else if cfg.congestion_control == CongestionControl::Prague {
            // `prague_init` sets the pacing rate (`prague_update_pacing_rate`), which paces
            // if an SRTT is known; the `prague-reno` fallback does not pace
            // (`prague_release`: `SK_PACING_NONE`).
            let s = self.prague_sock(now, cfg);
            let Some(c) = self
                .linux
                .as_deref_mut()
                .and_then(|l| l.cold.as_deref_mut())
            else {
                return;
            };
            if let Some(pr) = c.prague.as_deref_mut() {
                let rate = pr.update_pacing_rate(&s, 0);
                if let (Some(p), true) = (c.pacer.as_mut(), srtt8 > 0) {
                    p.rate = rate;
                }
            }
        } else if let Some(p) = lx.pacer_mut() {
            p.rate = pacing_rate_linux(mss, cwnd, ssthresh, 0, srtt8);
        }
    }

    /// The sender's state before an ACK (for `paced_after_ack`).
    pub(super) fn paced_ack_state(&self, cfg: &TcpConfig) -> AckBefore {
        let rate = self.linux.as_deref().and_then(|l| l.rate());
        AckBefore {
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            cwnd: self.cwnd,
            in_flight: rate.map_or(0, |_| self.bbr_in_flight(cfg)),
            delivered: rate.map_or(0, |r| r.delivered),
            ssthresh: self.ssthresh,
            recoveries: self.counters.fast_retransmits,
            ecn_reductions: self.ecn.reductions,
        }
    }

    /// After an ACK, as Linux's `tcp_ack` ends (`tcp_rate_gen`, `tcp_cong_control`): BBR's
    /// `bbr_main` sets cwnd (from the cwnd before the ACK: loss recovery's own changes do
    /// not apply to BBR, which bypasses PRR), ssthresh and the pacing rate; the other
    /// algorithms' pacing rate follows cwnd (`tcp_update_pacing_rate`). Not for ACKs older
    /// than snd_una or with nothing outstanding (Linux's `old_ack`, `no_queue`).
    #[inline(never)]
    pub(super) fn paced_after_ack(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        pkt: &Packet,
        b: AckBefore,
    ) {
        if pkt.ack < b.snd_una || pkt.ack > b.snd_max || b.snd_max == b.snd_una {
            return;
        }
        let mss = cfg.mss as u64;
        let srtt8 = (self.rto.srtt_s() * 8e6) as u64;
        if cfg.congestion_control == CongestionControl::Prague {
            self.prague_after_ack(now, cfg, b);
            return;
        }
        if cfg.congestion_control != CongestionControl::Bbr {
            let cwnd = segments(self.cwnd, mss);
            let ssthresh = segments(self.ssthresh, mss);
            let packets_out = (self.snd_max - self.snd_una).div_ceil(mss) as u32;
            if let Some(p) = self.linux.as_deref_mut().and_then(|l| l.pacer_mut()) {
                p.rate = pacing_rate_linux(mss, cwnd, ssthresh, packets_out, srtt8);
            }
            return;
        }
        let in_flight = self.bbr_in_flight(cfg);
        let snd_una = self.snd_una;
        let in_recovery = self.in_recovery;
        let acked_bytes = pkt.ack - b.snd_una;
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        let (jiffies, hz) = (lx.jiffies(now), lx.hz());
        let Some(c) = lx.cold.as_deref_mut() else {
            return;
        };
        if c.bbr.is_none() {
            return;
        }
        let state = match c.bbr_loss_high {
            Some(h) if snd_una < h => CaState::Loss,
            _ => {
                c.bbr_loss_high = None;
                if in_recovery {
                    CaState::Recovery
                } else {
                    CaState::Open
                }
            },
        };
        let ctx = BbrCtx {
            now_us: mstamp(now),
            jiffies,
            hz,
            now_ns: now,
            wstamp_ns: c.pacer.as_ref().map_or(0, |p| p.wstamp),
            cwnd: segments(b.cwnd, mss),
            clamp: (MAX_CWND / mss) as u32,
            in_flight,
            state,
        };
        let r = c.rate.as_deref_mut().expect("rate");
        let acked = (r.delivered - b.delivered) as u32;
        let losses = std::mem::take(&mut r.pending_losses);
        r.gen(ctx.now_us, acked, losses);
        r.rs.prior_in_flight = b.in_flight;
        // `FLAG_ACK_MAYBE_DELAYED`: one segment, cumulatively, less than an MSS.
        r.rs.is_ack_delayed = acked == 1 && pkt.sack_n == 0 && acked_bytes > 0 && acked_bytes < mss;
        let bbr = c.bbr.as_deref_mut().expect("bbr");
        let cwnd = bbr.on_ack(&ctx, r, srtt8);
        self.cwnd = cwnd as u64 * mss;
        self.ssthresh = bbr.ssthresh as u64 * mss;
        if let Some(p) = c.pacer.as_mut() {
            p.rate = bbr.pacing_rate;
        }
    }

    /// Prague after an ACK (`prague_cong_control`, which Linux calls instead of the usual
    /// growth and PRR): the state changes this ACK made (`prague_state`: fast recovery
    /// entered → `prague_enter_loss`, an ECE reduction → `prague_enter_cwr`, back to Open →
    /// `prague_ca_open`), then the window from the cwnd and ssthresh before the ACK (what
    /// loss recovery or PRR set is replaced, as Linux never applies them to it), then the
    /// pacing rate. Without AccECN (`prague-reno`) Linux Reno's changes stand, unpaced.
    fn prague_after_ack(&mut self, now: Time, cfg: &TcpConfig, b: AckBefore) {
        let mss = cfg.mss as u64;
        if self.prague().is_none() {
            return;
        }
        let delivered = self.ack_delivered;
        let ce = self.ecn.ace_delta();
        // A recovery entered on this ACK, also where the same ACK ended the one before:
        // Linux's `tcp_fastretrans_alert` then sets Open (`tcp_try_undo_recovery`) and
        // Recovery again (`tcp_enter_recovery`), and `prague_state` sees both.
        let entered_recovery = self.counters.fast_retransmits > b.recoveries;
        let entered_cwr = self.ecn.reductions > b.ecn_reductions;
        let in_flight = self.linux_in_flight(cfg);
        let mut s = self.prague_sock(now, cfg);
        s.cwnd = segments(b.cwnd, mss);
        s.ssthresh = segments(b.ssthresh, mss);
        let (snd_una, snd_max, in_recovery) = (self.snd_una, self.snd_max, self.in_recovery);
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        let limited = lx.is_cwnd_limited(s.cwnd, s.ssthresh);
        let Some(c) = lx.cold.as_deref_mut() else {
            return;
        };
        let high = c.prague_loss_high;
        let Some(p) = c.prague.as_deref_mut() else {
            return;
        };
        if entered_recovery {
            p.enter_loss(&s);
            c.prague_loss_high = snd_max;
        } else if entered_cwr {
            p.enter_cwr(&s);
        } else if p.in_loss && !in_recovery && snd_una >= high {
            p.ca_open();
        }
        let (cwnd, ssthresh, rate) = p.cong_control(&s, delivered, ce, limited, in_flight);
        if let Some(pc) = c.pacer.as_mut() {
            pc.rate = rate;
        }
        self.cwnd = cwnd as u64 * mss;
        self.ssthresh = ssthresh as u64 * mss;
    }
}
