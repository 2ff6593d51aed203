//! The endpoint's hooks for F-RTO and the undo of a spurious timeout (`tcp/undo.rs`, which
//! cites Linux 6.1's `tcp_enter_loss`, `tcp_process_loss`, `tcp_try_undo_loss`,
//! `tcp_undo_cwnd_reduction`): where the timeout arms it, where an ACK in the Loss state
//! reaches it (`tcp_fastretrans_alert` calls `tcp_process_loss` after the ACK has been
//! counted and before RACK marks losses on it), and where output sends new data first
//! (`tcp_xmit_recovery` with `REXMIT_NEW`). A child module of `endpoint`; reached only when
//! the connection runs the kernel's loss state (`linux_loss_state`) with `frto` on.

use super::{rack_mut, segments, Endpoint, Outbox, MAX_CWND};
use crate::packet::{Packet, MAX_SACK_BLOCKS};
use crate::tcp::config::{CongestionControl, TcpConfig};
use crate::tcp::undo::{Frto, LossAck, LossStep};
use crate::units::Time;

/// An ACK's flags for `tcp_process_loss`, read before the ACK is counted
/// (`frto_scan_ack`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Scanned {
    /// `FLAG_ORIG_SACK_ACKED`.
    orig_acked: bool,
    /// `FLAG_DATA_SACKED`.
    data_sacked: bool,
    /// The newest segment never retransmitted that the ACK delivers: (send time, end).
    newest_clean: Option<(Time, u64)>,
}

/// What the timeout saw before it changed anything (`frto_before_rto`).
pub(super) struct BeforeRto {
    /// F-RTO's arming condition (`tcp_enter_loss`: `new_recovery || icsk_retransmits`).
    arm: bool,
    /// cwnd and `tcp_current_ssthresh` (bytes), kept if ssthresh is cut.
    cwnd: u64,
    current_ssthresh: u64,
}

#[inline]
fn frto_mut(linux: &mut Option<Box<crate::tcp::cong::LinuxCong>>) -> Option<&mut Frto> {
    linux.as_deref_mut().and_then(|l| l.frto_mut())
}

impl Endpoint {
    /// The state `tcp_enter_loss` reads before it acts: whether F-RTO may be armed (no
    /// Recovery or Loss under way, or a repeated timeout with snd_una where the last one left
    /// it), and the window an undo would restore. None without F-RTO.
    pub(super) fn frto_before_rto(&self, cfg: &TcpConfig) -> Option<BeforeRto> {
        let lx = self.linux.as_deref()?;
        lx.frto()?;
        if !self.linux_loss_state(cfg) {
            return None;
        }
        let new_recovery = !self.in_recovery && !self.in_linux_loss_state(cfg);
        let repeated = lx.loss_una == self.snd_una;
        // `tcp_current_ssthresh`: ssthresh in a cwnd reduction (CWR, Recovery), else at least
        // three quarters of cwnd.
        let mss = cfg.mss as u64;
        let in_reduction =
            self.in_recovery || (self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una));
        let cwnd = segments(self.cwnd, mss);
        let current_ssthresh = if in_reduction {
            self.ssthresh
        } else {
            self.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) as u64 * mss)
        };
        Some(BeforeRto {
            arm: new_recovery || repeated,
            cwnd: self.cwnd,
            current_ssthresh,
        })
    }

    /// The end of `tcp_enter_loss`: the undo's values if ssthresh was cut (`cut`), F-RTO
    /// armed or not.
    pub(super) fn frto_enter_loss(&mut self, b: BeforeRto, cut: bool) {
        if let Some(f) = frto_mut(&mut self.linux) {
            f.enter_loss(cut.then_some((b.cwnd, b.current_ssthresh)), b.arm);
        }
    }

    /// Whether this ACK reaches `tcp_process_loss` with F-RTO armed: in the Loss state (read
    /// first: F-RTO's own state is a separate allocation, touched only in that state).
    #[inline]
    pub(super) fn frto_armed(&self, cfg: &TcpConfig) -> bool {
        self.in_linux_loss_state(cfg)
            && self
                .linux
                .as_deref()
                .and_then(|l| l.frto())
                .is_some_and(|f| f.armed)
    }

    /// Before the ACK is counted: whether it will newly deliver, cumulatively or by SACK, a
    /// segment never retransmitted that ends at or below `high_seq` (`FLAG_ORIG_SACK_ACKED`,
    /// set in `tcp_clean_rtx_queue` and `tcp_sacktag_one`), and whether it newly SACKs
    /// anything (`FLAG_DATA_SACKED`); and the newest segment never retransmitted that it
    /// delivers, on which the kernel's RACK advances (`tcp_rack_advance` is called for every
    /// segment delivered; the model's RACK otherwise reads only the newest one, which after
    /// a timeout is the retransmission, too recent to count). Walks the record: only in the
    /// Loss state with F-RTO armed.
    #[cold]
    pub(super) fn frto_scan_ack(&self, pkt: &Packet) -> Scanned {
        let mut sc = Scanned::default();
        let Some(lx) = self.linux.as_deref() else {
            return sc;
        };
        let high = self.bbr_loss_high();
        let sent = &lx.sent;
        let mut note = |i: usize| {
            let s = sent.get(i);
            if s.sacked || s.rexmit {
                return;
            }
            sc.orig_acked |= s.end() <= high;
            if sc.newest_clean.is_none_or(|(at, _)| s.at > at) {
                sc.newest_clean = Some((s.at, s.end()));
            }
        };
        let mut i = 0;
        while i < sent.len() && sent.get(i).end() <= pkt.ack {
            note(i);
            i += 1;
        }
        if self.sack_ok {
            let n = (pkt.sack_n as usize).min(MAX_SACK_BLOCKS);
            for &(start, end) in &pkt.sack[..n] {
                let mut k = sent.first_ending_after(start.max(pkt.ack));
                while k < sent.len() && sent.get(k).end() <= end {
                    let s = sent.get(k);
                    if s.start >= start && !s.sacked {
                        sc.data_sacked = true;
                        note(k);
                    }
                    k += 1;
                }
            }
        }
        sc
    }

    /// `tcp_process_loss` for an ACK counted with F-RTO armed (`frto_scan_ack`'s flags);
    /// `una_before`: snd_una before it.
    #[cold]
    pub(super) fn frto_on_ack(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        pkt: &Packet,
        una_before: u64,
        sc: Scanned,
    ) {
        let high = self.bbr_loss_high();
        let a = LossAck {
            una_advanced: self.snd_una > una_before,
            orig_acked: sc.orig_acked,
            data_sacked: sc.data_sacked,
            dupack: pkt.len == 0 && pkt.ack == una_before && self.snd_max > una_before,
            recovered: self.snd_una >= high,
            sent_beyond_high: self.snd_max > high,
            can_send_new: self.has_unsent() && self.rwnd_room(cfg) > 0,
        };
        if let (Some((at, end)), Some(r)) = (sc.newest_clean, rack_mut(&mut self.linux)) {
            r.advance(now, at, end, false);
        }
        let Some(f) = frto_mut(&mut self.linux) else {
            return;
        };
        match f.on_ack(a) {
            LossStep::Undo => self.undo_loss(cfg),
            LossStep::NewDataFirst => {
                // `tp->high_seq = tp->snd_nxt`.
                let snd_max = self.snd_max;
                if let Some(lx) = self.linux.as_deref_mut() {
                    lx.cold_mut().bbr_loss_high = Some(snd_max);
                }
            },
            LossStep::Conventional => {},
        }
    }

    /// `tcp_try_undo_loss(frto_undo = true)`: `tcp_undo_cwnd_reduction(unmark_loss)`, then
    /// the Open state with `icsk_retransmits` = 0 (here: no loss episode, no timeout
    /// pending on this snd_una, recovery may be entered again at once).
    fn undo_loss(&mut self, cfg: &TcpConfig) {
        let bbr = cfg.congestion_control == CongestionControl::Bbr;
        let (cwnd, ssthresh) = (self.cwnd, self.ssthresh);
        let Some(lx) = self.linux.as_deref_mut() else {
            return;
        };
        lx.sent.unmark_lost();
        if let Some(r) = lx.rack.as_mut() {
            r.advanced = true; // RACK looks at what is outstanding again
        }
        if let Some(c) = lx.cold.as_deref_mut() {
            if let (Some(b), Some(r)) = (c.bbr.as_deref_mut(), c.rate.as_deref()) {
                b.on_undo(r); // `bbr_undo_cwnd`
            }
            c.bbr_loss_high = None;
        }
        lx.loss_una = crate::tcp::cong::NO_LOSS_EPISODE;
        let Some(f) = lx.frto_mut() else {
            return;
        };
        let (cwnd, ssthresh) = f.undo_window(cwnd, ssthresh, !bbr);
        self.cwnd = cwnd.min(MAX_CWND);
        self.ssthresh = ssthresh;
        self.recover = self.snd_una;
    }

    /// `tcp_xmit_recovery` with `REXMIT_NEW` (step 2.b): new data while fewer than cwnd
    /// segments are in flight, before any retransmission. Returns true if new data went
    /// beyond `high_seq` (nothing is retransmitted now); false sends on as conventional
    /// recovery, with F-RTO ended if nothing new could go.
    pub(super) fn frto_send_new_first(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        out: &mut Outbox,
    ) -> bool {
        let Some(f) = frto_mut(&mut self.linux) else {
            return false;
        };
        if !std::mem::take(&mut f.rexmit_new) {
            return false;
        }
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        while let Some(lx) = self.linux.as_deref() {
            let room = self.rwnd_room(cfg);
            if lx.rack_in_flight() >= cwnd || !self.has_unsent() || room == 0 {
                break;
            }
            self.snd_nxt = self.snd_max;
            if self
                .send_one(now, cfg, room, out)
                .is_none_or(|(n, _)| n == 0)
            {
                break;
            }
        }
        let high = self.bbr_loss_high();
        if self.snd_max > high {
            return true;
        }
        if let Some(f) = frto_mut(&mut self.linux) {
            f.armed = false;
        }
        false
    }

    /// Data written and not yet sent (the FIN included).
    fn has_unsent(&self) -> bool {
        self.snd_max < self.app_end || (self.fin_queued && self.snd_max == self.app_end)
    }

    /// Room the receiver's window leaves past snd_max.
    fn rwnd_room(&self, cfg: &TcpConfig) -> u64 {
        (self.snd_una + cfg.rwnd as u64).saturating_sub(self.snd_max)
    }

    /// F-RTO's counters (spurious timeouts undone, new data sent first, real losses).
    pub fn frto_state(&self) -> Option<&Frto> {
        self.linux.as_deref().and_then(|l| l.frto())
    }
}

impl Endpoint {
    /// The timeout's `high_seq` (snd_max at the timeout, or where F-RTO moved it), 0 outside
    /// a loss episode.
    fn bbr_loss_high(&self) -> u64 {
        self.linux
            .as_deref()
            .and_then(|l| l.cold.as_deref())
            .and_then(|c| c.bbr_loss_high)
            .unwrap_or(0)
    }
}
