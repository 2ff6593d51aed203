//! F-RTO after a retransmission timeout and the undo of a spurious timeout's reduction, as
//! Linux runs them (`tcp_frto` = 2: RFC 5682's SACK-enhanced F-RTO, §3). Read in Linux 6.1,
//! `net/ipv4/tcp_input.c`:
//!
//! - `tcp_enter_loss` (at the timeout): if ssthresh is cut, the values before the cut are
//!   kept for an undo (`prior_ssthresh` = `tcp_current_ssthresh`, `prior_cwnd` = cwnd,
//!   `tcp_init_undo`); F-RTO is armed (`tp->frto`) if no loss recovery was under way
//!   (`new_recovery`: the state was below Recovery) or this is a repeated timeout on the same
//!   snd_una (`icsk_retransmits` > 0; RFC 5682 §3.2); `high_seq` = snd_nxt.
//! - `tcp_process_loss` (each ACK in the Loss state; `Frto::on_ack` here), in its order:
//!   1. the ACK moved snd_una and `tcp_may_undo` holds → undo (`tcp_try_undo_loss(false)`);
//!   2. with F-RTO armed: the ACK newly delivered (cumulatively or by SACK) a segment never
//!      retransmitted that ends at or below `high_seq` (`FLAG_ORIG_SACK_ACKED`) → the
//!      timeout was spurious: undo (`tcp_try_undo_loss(true)`, RFC 5682 step 3.b);
//!   3. new data went out after step 2.b (`snd_nxt` > `high_seq`): a SACK of new data or a
//!      duplicate ACK means the loss was real: F-RTO ends (step 3.a), conventional recovery;
//!   4. otherwise, the first ACK that moves snd_una without completing the episode: send
//!      new data first (`REXMIT_NEW`, step 2.b; `tcp_xmit_recovery` pushes pending frames
//!      and falls back to retransmitting only if nothing new could go), if there is unsent
//!      data and room in the receiver's window; else F-RTO ends;
//!   5. once snd_una reaches `high_seq` the episode ends (`tcp_try_undo_recovery`, step 2.a).
//! - `tcp_undo_cwnd_reduction(unmark_loss = true)`: every segment's lost mark is cleared
//!   (`lost_out` = 0), RACK looks again at what is outstanding (`rack.advanced`), and if
//!   ssthresh had been cut cwnd = the algorithm's `undo_cwnd` and ssthresh = `prior_ssthresh`
//!   if that is larger; `undo_cwnd` is Reno's max(cwnd, `prior_cwnd`) for Reno and CUBIC
//!   (`tcp_reno_undo_cwnd`, `cubictcp.undo_cwnd` in `tcp_cubic.c`) and, for BBR, cwnd as it
//!   is, with its full-bandwidth detection and long-term sampling started again
//!   (`bbr_undo_cwnd`, `tcp_bbr.c`); the state is Open (`icsk_retransmits` = 0), and BBR,
//!   leaving Loss, restores cwnd to at least what it was before (`bbr_set_cwnd_to_recover_
//!   or_restore`).
//!
//! Not modelled: `tcp_may_undo`'s two tests need the echoed timestamp of the ACK
//! (`tcp_packet_delayed`: TSecr before `retrans_stamp`) or DSACK (`undo_retrans` reaching
//! 0), and the model carries neither: step 1 never undoes, nor does the Recovery state's undo
//! (`tcp_try_undo_recovery`, `tcp_try_undo_partial`, `tcp_try_undo_dsack`). A spurious
//! timeout whose ACK acknowledges only the retransmitted segment (nothing never retransmitted
//! below `high_seq`) is therefore not undone here, where the kernel's timestamps would undo
//! it.

/// F-RTO's and the undo's state for one connection (Linux `tp->frto`, `high_seq`'s role in
/// F-RTO, `prior_cwnd`, `prior_ssthresh`, `undo_marker`, the pending `REXMIT_NEW`).
#[derive(Clone, Debug, Default)]
pub struct Frto {
    /// F-RTO is armed (`tp->frto`).
    pub armed: bool,
    /// Step 2.b decided: the next output sends new data before any retransmission.
    pub rexmit_new: bool,
    /// cwnd and ssthresh (bytes) before the timeout's cut (`prior_cwnd`, `prior_ssthresh`);
    /// `prior_ssthresh` = 0: no cut to undo.
    pub prior_cwnd: u64,
    pub prior_ssthresh: u64,
    /// Timeouts found spurious and undone (`LINUX_MIB_TCPSPURIOUSRTOS`).
    pub spurious_rtos: u64,
    /// Step 2.b taken: new data sent first after a timeout.
    pub new_data_first: u64,
    /// Step 3.a taken: the loss was real.
    pub real_losses: u64,
}

/// What an ACK in the Loss state carries, as `tcp_ack` flags it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossAck {
    /// snd_una moved (`FLAG_SND_UNA_ADVANCED`).
    pub una_advanced: bool,
    /// A segment never retransmitted, ending at or below `high_seq`, newly ACKed or SACKed
    /// (`FLAG_ORIG_SACK_ACKED`).
    pub orig_acked: bool,
    /// Something newly SACKed (`FLAG_DATA_SACKED`).
    pub data_sacked: bool,
    /// A duplicate ACK (`num_dupack` > 0).
    pub dupack: bool,
    /// snd_una reached `high_seq` (`recovered`).
    pub recovered: bool,
    /// New data was sent since `high_seq` was set (`after(snd_nxt, high_seq)`).
    pub sent_beyond_high: bool,
    /// Unsent data and room in the receiver's window (`!tcp_write_queue_empty` and
    /// `after(tcp_wnd_end, snd_nxt)`).
    pub can_send_new: bool,
}

/// `tcp_process_loss`'s decision for one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossStep {
    /// The timeout was spurious: undo its reduction (step 3.b).
    Undo,
    /// Send new data first; `high_seq` = snd_nxt (step 2.b).
    NewDataFirst,
    /// Retransmit what is marked lost (conventional recovery, `REXMIT_LOST`), or nothing
    /// more to do if the episode is over.
    Conventional,
}

impl Frto {
    /// `tcp_enter_loss`: `cut`: ssthresh was cut now (its values before the cut are kept);
    /// `arm`: F-RTO's condition (`new_recovery || icsk_retransmits`) and the sysctl.
    pub fn enter_loss(&mut self, cut: Option<(u64, u64)>, arm: bool) {
        if let Some((cwnd, ssthresh)) = cut {
            self.prior_cwnd = cwnd;
            self.prior_ssthresh = ssthresh;
        }
        self.armed = arm;
        self.rexmit_new = false;
    }

    /// `tcp_process_loss` for one ACK (module comment, steps 2 to 5; step 1 is not
    /// modelled).
    pub fn on_ack(&mut self, a: LossAck) -> LossStep {
        if self.armed {
            if a.orig_acked {
                self.armed = false;
                self.rexmit_new = false;
                self.spurious_rtos += 1;
                return LossStep::Undo;
            }
            if a.sent_beyond_high {
                if a.data_sacked || a.dupack {
                    self.armed = false;
                    self.real_losses += 1;
                }
            } else if a.una_advanced && !a.recovered {
                if a.can_send_new {
                    self.rexmit_new = true;
                    self.new_data_first += 1;
                    return LossStep::NewDataFirst;
                }
                self.armed = false;
            }
        }
        if a.recovered {
            self.armed = false;
            self.rexmit_new = false;
        }
        LossStep::Conventional
    }

    /// `tcp_undo_cwnd_reduction`'s window: (cwnd, ssthresh) after the undo, from those now
    /// and the algorithm's `undo_cwnd` (`reno`: max(cwnd, prior_cwnd); else cwnd as it is).
    /// The undo is done: `prior_ssthresh` is spent.
    pub fn undo_window(&mut self, cwnd: u64, ssthresh: u64, reno: bool) -> (u64, u64) {
        if self.prior_ssthresh == 0 {
            return (cwnd, ssthresh);
        }
        let cwnd = if reno {
            cwnd.max(self.prior_cwnd)
        } else {
            cwnd
        };
        let ssthresh = ssthresh.max(self.prior_ssthresh);
        self.prior_ssthresh = 0;
        (cwnd, ssthresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn armed() -> Frto {
        let mut f = Frto::default();
        f.enter_loss(Some((20_000, 30_000)), true);
        f
    }

    #[test]
    fn original_data_acked_is_a_spurious_timeout() {
        let mut f = armed();
        let a = LossAck {
            una_advanced: true,
            orig_acked: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(a), LossStep::Undo);
        assert!(!f.armed);
        assert_eq!(f.spurious_rtos, 1);
        // `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd); ssthresh back to prior_ssthresh.
        assert_eq!(f.undo_window(2_000, 10_000, true), (20_000, 30_000));
        // Spent: a second undo changes nothing.
        assert_eq!(f.undo_window(2_000, 10_000, true), (2_000, 10_000));
    }

    #[test]
    fn first_advance_sends_new_data_then_a_sack_of_it_means_real_loss() {
        let mut f = armed();
        let first = LossAck {
            una_advanced: true,
            can_send_new: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(first), LossStep::NewDataFirst);
        assert!(f.rexmit_new && f.armed);
        let dup = LossAck {
            dupack: true,
            data_sacked: true,
            sent_beyond_high: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(dup), LossStep::Conventional);
        assert!(!f.armed);
        assert_eq!(f.real_losses, 1);
    }

    #[test]
    fn nothing_new_to_send_falls_back_to_conventional_recovery() {
        let mut f = armed();
        let a = LossAck {
            una_advanced: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(a), LossStep::Conventional);
        assert!(!f.armed);
    }

    #[test]
    fn unarmed_never_undoes_and_no_cut_restores_nothing() {
        let mut f = Frto::default();
        f.enter_loss(None, false);
        let a = LossAck {
            una_advanced: true,
            orig_acked: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(a), LossStep::Conventional);
        assert_eq!(f.undo_window(5_000, 7_000, true), (5_000, 7_000));
    }
}
