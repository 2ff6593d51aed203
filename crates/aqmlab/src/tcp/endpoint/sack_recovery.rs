//! SACK loss recovery (RFC 6675 §5; ns-2 Full-TCP SACK, `SackFullTcpAgent`): its entry on a
//! duplicate ACK, the start that a SACK and a RACK recovery share, one retransmission from a
//! hole, and transmission while in recovery (NextSeg() over the scoreboard, `tcp/sack.rs`).

use super::{Endpoint, Outbox};
use crate::tcp::config::{SackVariant, TcpConfig};
use crate::tcp::deadline::{Deadline, Timing};
use crate::tcp::sack::NextSeg;
use crate::units::Time;

impl Endpoint {
    /// Enters SACK recovery on a duplicate ACK: RecoveryPoint = HighData, ssthresh = cwnd =
    /// half the window (RFC 6675 §5 step 4.2, with 4.4BSD's `max(min(cwnd, rwnd)/2, 2·MSS)`
    /// rounding as for Reno), retransmit the first unacknowledged segment (step 4.3); the
    /// caller's output() then sends what pipe allows (step 4.5 → C).
    ///
    /// In a window already reduced for ECE, cwnd and ssthresh stay as they are (RFC 3168
    /// §6.1.2; ns-2 SACK `dupack_action`: "don't cut cwnd again, but retransmit").
    pub(super) fn sack_enter_recovery(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        // The board already holds this ACK's blocks: the first lost segment is known.
        self.begin_loss_recovery(cfg, true);
        // ns-2 `dupack_action`: pipe = maxseq − highest_ack − SACKed bytes.
        self.board.ns2_pipe =
            (self.snd_max - self.snd_una) as i64 - self.board.sacked_bytes() as i64;
        let end = self.board.hole_end(self.snd_una, self.snd_max);
        let sent = self.sack_retransmit(now, cfg, self.snd_una, end, false, out);
        // ns-2's `fast_retransmit` calls `foutput` directly, not `send_much`, so this first
        // retransmission never passes through `sent()` and does not count in pipe_.
        self.board.ns2_pipe -= sent as i64;
    }

    /// The start of a SACK or RACK recovery: RecoveryPoint = HighData; ssthresh cut unless the
    /// window was already reduced for ECE (RFC 3168 §6.1.2); cwnd to ssthresh at once, or
    /// PRR's first step (`newly_lost`: this ACK marked a segment lost); the retransmission
    /// that follows restarts the timer and is never timed (Karn).
    pub(super) fn begin_loss_recovery(&mut self, cfg: &TcpConfig, newly_lost: bool) {
        self.in_recovery = true;
        self.recover = self.snd_max;
        let cut = !(self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una));
        if cut {
            self.ssthresh = self.cut_ssthresh(cfg);
        }
        if self.has_prr() {
            self.prr_enter_recovery(cfg, newly_lost);
        } else if cut && cfg.exact_halving && cfg.sack_variant == SackVariant::Ns2 {
            // ns-2.35 `SackFullTcpAgent::dupack_action`: `slowdown(CLOSE_SSTHRESH_HALF |
            // CLOSE_CWND_HALF)` with `precision_reduce_` sets cwnd_ = windowd()/2 exactly, a
            // fraction of a segment, and ssthresh_ = int(windowd()/2) (tcp.cc); 2.1b9 gives
            // both the whole half.
            self.cwnd = self.exact_half(cfg);
        } else if cut {
            self.cwnd = self.ssthresh;
        }
        self.ecn_reduced = false;
        self.counters.fast_retransmits += 1;
        self.ecn.on_reduction(self.snd_max, false);
        self.rexmt_at = Deadline::NONE;
        self.timing = Timing::NONE;
        self.board.start_recovery(self.snd_una);
    }

    /// Retransmits one segment from `seq`, stopping at `end` (a hole's end); returns the
    /// sequence space sent.
    pub(super) fn sack_retransmit(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        seq: u64,
        end: u64,
        rescue: bool,
        out: &mut Outbox,
    ) -> u64 {
        let onxt = self.snd_nxt;
        self.snd_nxt = seq;
        let sent = self
            .send_one(now, cfg, end - seq, out)
            .map_or(0, |(n, _)| n);
        self.snd_nxt = onxt.max(self.snd_nxt);
        if !rescue {
            // RFC 6675 (C.2): HighRxt = highest octet retransmitted; ns-2 moves h_seqno_ on.
            self.board.high_rxt = self.board.high_rxt.max(seq + sent);
            self.board.ns2_next = self.board.ns2_next.max(seq + sent);
        }
        self.board.ns2_pipe += sent as i64;
        sent
    }

    /// Transmission during SACK recovery (RFC 6675 §5 step C): while cwnd − pipe ≥ 1 SMSS
    /// (ns-2: while pipe < cwnd) send NextSeg(): lost holes first, then new data, then other
    /// holes below a SACK, then one rescue retransmission.
    pub(super) fn sack_output(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let mss = cfg.mss as u64;
        let thresh = cfg.dupack_threshold;
        let rfc = cfg.sack_variant == SackVariant::Rfc6675;
        // (B.2) SetPipe() from the scoreboard; ns-2 keeps its counter.
        let mut pipe = if rfc {
            self.board.set_pipe(self.snd_una, self.snd_max, thresh, mss) as i64
        } else {
            self.board.ns2_pipe
        };
        self.snd_nxt = self.snd_max;
        loop {
            let room = self.send_cwnd(cfg) as i64 - pipe;
            if (rfc && room < mss as i64) || room <= 0 {
                break;
            }
            // New data only within the receiver's window.
            let rwnd_room = (self.snd_una + cfg.rwnd as u64).saturating_sub(self.snd_max);
            let unsent =
                self.snd_max < self.app_end || (self.fin_queued && self.snd_max == self.app_end);
            let next = if rfc {
                self.board.next_seg_rfc6675(
                    self.snd_una,
                    self.snd_max,
                    self.recover,
                    unsent && rwnd_room > 0,
                    thresh,
                    mss,
                )
            } else {
                Some(self.board.next_seg_ns2(self.snd_una, self.snd_max))
            };
            let sent = match next {
                Some(NextSeg::Retransmit { seq, end, rescue }) => {
                    self.sack_retransmit(now, cfg, seq, end, rescue, out)
                },
                Some(NextSeg::NewData) => {
                    let sent = self
                        .send_one(now, cfg, rwnd_room, out)
                        .map_or(0, |(n, _)| n);
                    self.board.ns2_pipe += sent as i64;
                    sent
                },
                None => 0,
            };
            if sent == 0 {
                break;
            }
            pipe += sent as i64; // (C.4)
        }
        if self.ack_now {
            self.emit_ack(cfg, out);
        }
    }
}
