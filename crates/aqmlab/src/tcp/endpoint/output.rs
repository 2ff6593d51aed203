//! Transmission (4.4BSD's `tcp_output`; ns-2 Full-TCP's `send_much` and `foutput`): the
//! window output may fill (ns-2's in whole segments), the segment loop (with ns-2 NewReno's
//! burst limit after a partial ACK), one segment's body (Nagle, RFC 896, and sender
//! silly-window avoidance; the FIN; Karn's timing; the retransmission timer), the SACK blocks
//! on what a receiver sends (RFC 2018 §4), pure ACKs, the ECN codepoints DCTCP and Prague
//! put on every segment, and the counters of what was sent.

use super::{ack_clock, Endpoint, Outbox, Seg, State};
use crate::packet::{flags, Ecn, MAX_SACK_BLOCKS};
use crate::tcp::config::{CongestionControl, NewRenoVariant, Recovery, TcpConfig, TimerModel};
use crate::tcp::deadline::{Deadline, Timing};
use crate::units::Time;

/// ns-2 `Agent/TCP/FullTcp/Newreno set recov_maxburst_ 2` (tcl/lib/ns-default.tcl).
const NS2_RECOV_MAXBURST: u32 = 2;

impl Endpoint {
    pub(super) fn output(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let snd_max_before = self.snd_max;
        self.output_segments(now, cfg, out);
        if cfg.congestion_control != CongestionControl::Reno {
            self.linux_after_output(cfg, snd_max_before);
            if self.has_rack() {
                self.rack_after_output(now, cfg, snd_max_before);
            }
        }
    }

    /// The congestion window that output may fill, in bytes. ns-2 counts its window in whole
    /// segments: `TcpAgent::window()` is `(int)cwnd_` and `FullTcpAgent::foutput`,
    /// `send_allowed` and `SackFullTcpAgent::send_allowed` multiply it by `maxseg_`
    /// (ns-2.35 tcp/tcp.cc, tcp/tcp-full.cc), so a window of 2.5 segments sends two. The
    /// BSD and Linux models send the byte window as their kernels do.
    #[inline]
    pub(super) fn send_cwnd(&self, cfg: &TcpConfig) -> u64 {
        if cfg.timer_model == TimerModel::Ns2 {
            let mss = cfg.mss as u64;
            self.cwnd / mss * mss
        } else {
            self.cwnd
        }
    }

    /// Sends what the window allows (tcp_output's loop).
    #[inline]
    fn output_segments(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        if self.in_linux_loss_state(cfg) {
            self.rack_output(now, cfg, out);
            return;
        }
        if self.sack_recovery(cfg) {
            if self.has_rack() {
                self.rack_output(now, cfg, out);
            } else {
                self.sack_output(now, cfg, out);
            }
            return;
        }
        // ns-2 NewReno: after a partial ACK, at most `recov_maxburst_` segments per call
        // (`send_much`'s maxburst).
        let mut burst = if self.partial_seen
            && self.in_recovery
            && cfg.newreno_variant == NewRenoVariant::Ns2
            && self.recovery(cfg) == Recovery::NewReno
        {
            NS2_RECOV_MAXBURST
        } else {
            u32::MAX
        };
        loop {
            // The window: min(cwnd, rwnd) less what is outstanding from snd_una to snd_nxt.
            let win = self.send_cwnd(cfg).min(cfg.rwnd as u64);
            let usable = win.saturating_sub(self.snd_nxt - self.snd_una);
            match self.send_one(now, cfg, usable, out) {
                Some((_, false)) => {},
                _ => return,
            }
            burst -= 1;
            if burst == 0 {
                return;
            }
        }
    }

    /// Sends one segment at `snd_nxt` with at most `usable` payload bytes (tcp_output's body),
    /// or a pure ACK if one is due and no data may go. Returns the sequence space sent and
    /// whether output must stop after it (SYN or FIN), or None if no segment carrying
    /// sequence space went out.
    pub(super) fn send_one(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        usable: u64,
        out: &mut Outbox,
    ) -> Option<(u64, bool)> {
        let mss = cfg.mss as u64;
        let (syn, mut fl) = match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent if cfg.accecn => (true, flags::SYN | self.ecn.syn_flags_acc(false)),
            State::SynSent => (true, flags::SYN | self.ecn.syn_flags(cfg.ecn, false)),
            State::SynRcvd if cfg.accecn => {
                (true, flags::SYN | flags::ACK | self.ecn.syn_flags_acc(true))
            },
            State::SynRcvd => (
                true,
                flags::SYN | flags::ACK | self.ecn.syn_flags(cfg.ecn, true),
            ),
            _ => (false, flags::ACK),
        };
        let retransmit = self.snd_nxt < self.snd_max;
        let mut len: u64 = 0;
        if syn {
            if self.snd_nxt > 0 {
                // SYN already out; only a bare ACK could be due, and none is before the
                // handshake completes.
                return None;
            }
        } else {
            let data_end = self.app_end;
            let avail = data_end.saturating_sub(self.snd_nxt);
            len = avail.min(mss).min(usable);
            // The FIN rides on the segment that carries the last byte (or goes alone once all
            // data is out), until it is acknowledged.
            // With `fin_when_idle` (ns-2) a first FIN needs an idle connection; a FIN
            // already sent rides its retransmissions either way.
            let fin_allowed =
                !cfg.fin_when_idle || self.snd_max == self.snd_una || self.snd_max > data_end;
            let fin_fits =
                |len: u64| self.fin_queued && fin_allowed && self.snd_nxt + len == data_end;
            if len > 0 && len < mss {
                // Nagle (RFC 896) and sender silly-window avoidance, as in tcp_output: a
                // partial segment goes only if it is a retransmission, if it carries the FIN,
                // if it empties the buffer while nothing is outstanding (or Nagle is off), or
                // if it is at least half the peer's window.
                let idle = self.snd_max == self.snd_una;
                let ok = retransmit
                    || fin_fits(len)
                    || (len == avail && (idle || !cfg.nagle))
                    || len >= cfg.rwnd as u64 / 2;
                if !ok {
                    len = 0;
                }
            }
            if fin_fits(len) {
                fl |= flags::FIN;
            } else if len == 0 {
                if self.ack_now {
                    self.emit_ack(cfg, out); // a pure ACK does not advance snd_nxt
                }
                return None;
            }
        }
        if len > 0 && cfg.paced() && self.pacing_hold(now, cfg, retransmit, out) {
            return None;
        }
        if len > 0
            && !retransmit
            && cfg.congestion_control == CongestionControl::Bbr
            && !self.bbr_gso_start(now, cfg, usable)
        {
            // Linux holds the skb for the next ACK (`tcp_tso_should_defer`).
            if self.ack_now {
                self.emit_ack(cfg, out);
            }
            return None;
        }
        let seq = self.snd_nxt;
        if cfg.congestion_control != CongestionControl::Reno && len > 0 {
            self.linux_on_send(now, cfg, seq, len, retransmit);
        }
        if let (Some(a), true) = (self.lack.as_mut(), len > 0) {
            a.on_data_sent(now / cfg.tick().max(1));
        }
        let (ecn_flags, mut ecn) = if syn {
            (0, Ecn::NotEct)
        } else {
            self.ecn
                .on_send(len as u32, retransmit, cfg.cwr_on_retransmit)
        };
        if self.dctcp_ect(cfg, syn) {
            ecn = Ecn::Ect0;
        } else if self.prague_ect(cfg, syn) {
            ecn = Ecn::Ect1;
        }
        let seg = Seg {
            seq,
            ack: self.rcv_nxt,
            len: len as u32,
            flags: fl | ecn_flags,
            retransmit,
            ecn,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            sack_n: 0,
            // The client offers SACK if it runs SACK recovery; the server answers in kind.
            sack_permitted: syn
                && cfg.recovery == Recovery::Sack
                && (self.state == State::SynSent || self.sack_ok),
        };
        self.push_seg(cfg, seg, out);
        let seg_len = len + syn as u64 + (fl & flags::FIN != 0) as u64;
        // Time this new segment (Karn). Linux times every copy of its SYN or SYN-ACK: the
        // ACK that answers one echoes that copy's timestamp (`tcp_ack_update_rtt`'s TSecr
        // sample, which Karn's rule does not forbid), and copies go at least a second apart,
        // so the copy answered is the last one sent.
        let echoed = syn && cfg.timer_model == TimerModel::Linux;
        if (self.timing.is_none() && !retransmit || echoed) && seg_len > 0 {
            self.timing = Timing::of(seq, now);
        }
        self.snd_nxt += seg_len;
        if self.snd_nxt > self.snd_max {
            self.snd_max = self.snd_nxt;
        }
        if self.rexmt_at.is_none() && self.snd_nxt > self.snd_una {
            let syn_sent = self.state == State::SynSent;
            self.rexmt_at = Deadline::at(self.rto.timer_deadline(cfg, now, syn_sent));
        }
        Some((seg_len, syn || fl & flags::FIN != 0))
    }

    /// RFC 2018 §4: a SACK-enabled receiver with data held out of order reports it on every
    /// segment it sends.
    fn fill_sack(&self, cfg: &TcpConfig, seg: &mut Seg) {
        if self.sack_ok && !self.reasm.is_empty() {
            seg.sack_n = self
                .reasm
                .sack_blocks(cfg.sack_max_blocks as usize, &mut seg.sack);
        }
    }

    /// DCTCP sends every segment ECT(0) — SYNs, pure ACKs and retransmissions too: Linux
    /// `dctcp_init` sets ECT in the socket's TOS (`INET_ECN_xmit`) for the handshake and keeps
    /// it when ECN is agreed, clearing it otherwise (fallback to Reno, `INET_ECN_dontxmit`).
    #[inline]
    fn dctcp_ect(&self, cfg: &TcpConfig, syn: bool) -> bool {
        cfg.congestion_control == CongestionControl::Dctcp
            && if syn { cfg.ecn } else { self.ecn.ok }
    }

    /// Prague sends every segment ECT(1) — SYNs, pure ACKs and retransmissions too (RFC 9331
    /// §4.1; `tcp_prague.c` note 8, "ECT_1 on non-data packets like SYN, pure ACKs"), once
    /// AccECN is agreed; without it none (`prague_release`: `INET_ECN_dontxmit`).
    #[inline]
    fn prague_ect(&self, cfg: &TcpConfig, syn: bool) -> bool {
        cfg.congestion_control == CongestionControl::Prague
            && if syn { cfg.ecn } else { self.ecn.acc.is_some() }
    }

    pub(super) fn emit_ack(&mut self, cfg: &TcpConfig, out: &mut Outbox) {
        let (ecn_flags, mut ecn) = self.ecn.on_send(0, false, false);
        if self.dctcp_ect(cfg, false) {
            ecn = Ecn::Ect0;
        } else if self.prague_ect(cfg, false) {
            ecn = Ecn::Ect1;
        }
        let seg = Seg {
            seq: self.snd_nxt,
            ack: self.rcv_nxt,
            len: 0,
            flags: flags::ACK | ecn_flags,
            retransmit: false,
            ecn,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            sack_n: 0,
            sack_permitted: false,
        };
        self.push_seg(cfg, seg, out);
    }

    /// Puts a segment in the outbox: SACK blocks added (not on SYNs), counted; it carries an
    /// acknowledgment, so no ACK is pending any more.
    fn push_seg(&mut self, cfg: &TcpConfig, mut seg: Seg, out: &mut Outbox) {
        if seg.flags & flags::SYN == 0 {
            self.fill_sack(cfg, &mut seg);
            if cfg.congestion_control == CongestionControl::Ledbat {
                self.ledbat_stamp(&mut seg);
            }
        }
        self.account(&seg);
        if let Some(a) = self.lack.as_mut() {
            a.on_ack_sent(&ack_clock(cfg));
            a.timeout = 0;
        }
        out.segs.push(seg);
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.delack_at = Deadline::NONE;
    }

    fn account(&mut self, seg: &Seg) {
        let c = &mut self.counters;
        c.segments += 1;
        if seg.len > 0 {
            c.data_segments += 1;
            c.payload_bytes += seg.len as u64;
        }
        if seg.retransmit {
            if seg.flags & flags::SYN != 0 {
                c.syn_retransmits += 1;
            } else if seg.len > 0 {
                c.data_retransmits += 1;
                c.retransmitted_bytes += seg.len as u64;
            } else if seg.flags & flags::FIN != 0 {
                c.fin_retransmits += 1;
            }
        }
    }
}
