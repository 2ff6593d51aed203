//! Loss recovery of the classic stacks on duplicate and partial ACKs: Reno's fast retransmit
//! and fast recovery (RFC 5681 §3.2; 4.4BSD `tcp_input`), NewReno (RFC 6582; ns-2 Full-TCP
//! `NewRenoFullTcpAgent`, `dupack_action`, `pack_action`), Limited Transmit (RFC 3042), a
//! loss in a window already reduced for ECE (RFC 3168 §6.1.2; ns-2 `dupack_action`), and the
//! entry into SACK recovery (RFC 6675 §5; ns-2 SACK), which `sack_recovery.rs` carries on.

use super::{Endpoint, Outbox, MAX_CWND};
use crate::tcp::config::{NewRenoVariant, Recovery, SackVariant, TcpConfig, TimerModel};
use crate::tcp::deadline::{Deadline, Timing};
use crate::units::Time;

impl Endpoint {
    /// Loss-recovery hook for a duplicate ACK: Reno fast retransmit and fast recovery
    /// (RFC 5681 §3.2; 4.4BSD tcp_input).
    pub(super) fn on_dupack(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let mss = cfg.mss as u64;
        self.dupacks += 1;
        match self.recovery(cfg) {
            Recovery::Sack => {
                // Entry (RFC 6675 §5 steps 1–2; ns-2 `dupack_action`): DupThresh duplicate
                // ACKs, or (RFC 6675) IsLost(HighACK + 1); not again before the cumulative ACK
                // reaches the last RecoveryPoint (RFC 6675 §5.1, ns-2 `bug_fix_`).
                // With RACK-TLP, recovery starts only when RACK has marked a loss
                // (`linux_recovery_ack`).
                let trigger = !self.has_rack()
                    && match cfg.sack_variant {
                        SackVariant::Rfc6675 => {
                            self.dupacks >= cfg.dupack_threshold
                                || self.board.first_is_lost(
                                    self.snd_una,
                                    self.snd_max,
                                    cfg.dupack_threshold,
                                    mss,
                                )
                        },
                        SackVariant::Ns2 => self.dupacks == cfg.dupack_threshold,
                    };
                // ns-2 `SackFullTcpAgent::dupack_action`: `highest_ack_ > recover_`, strictly
                // beyond the old snd_max (`recover_` is `maxseq_`, the highest sequence + 1).
                let recovered = match cfg.sack_variant {
                    SackVariant::Ns2 => self.snd_una > self.recover,
                    SackVariant::Rfc6675 => self.snd_una >= self.recover,
                };
                if trigger && !self.in_recovery && recovered {
                    self.sack_enter_recovery(now, cfg, out);
                } else if !trigger && self.limited_transmit_due(cfg) {
                    self.limited_transmit(now, cfg, out); // RFC 6675 §5 allows it too
                }
            },
            Recovery::Reno | Recovery::NewReno if self.limited_transmit_due(cfg) => {
                self.limited_transmit(now, cfg, out);
            },
            Recovery::Reno | Recovery::NewReno => {
                self.ns2_skip_output =
                    cfg.timer_model == TimerModel::Ns2 && self.dupacks == cfg.dupack_threshold;
                // NewReno enters only if the cumulative ACK has reached `recover` (RFC 6582
                // §3.2 step 2: no second reduction for losses of the same window). ns-2
                // Full-TCP, Reno and NewReno alike (`FullTcpAgent::dupack_action`, bug_fix_
                // true): only if `highest_ack_ > recover_` — strictly beyond snd_max as it was,
                // `recover_` being `maxseq_`, the highest sequence sent + 1 — or if the last
                // reduction was itself a fast retransmit; so after a timeout the duplicates
                // that go-back-N's repeated segments draw from the peer, ACKing exactly the
                // old snd_max, retransmit nothing.
                let may_enter = if cfg.timer_model == TimerModel::Ns2 {
                    self.snd_una > self.recover || self.ns2_after_fast_rexmit
                } else {
                    cfg.recovery == Recovery::Reno || self.snd_una >= self.recover
                };
                let after_ecn = self.ecn_reduced && self.ecn.within_reduced_window(self.snd_una);
                if self.dupacks == cfg.dupack_threshold && !self.in_recovery && after_ecn {
                    self.ecn_loss_retransmit(now, cfg, out);
                } else if self.dupacks == cfg.dupack_threshold && !self.in_recovery && may_enter {
                    self.ecn_reduced = false;
                    self.ns2_after_fast_rexmit = true;
                    self.in_recovery = true;
                    self.partial_seen = false;
                    self.recover = self.snd_max;
                    let onxt = self.snd_nxt;
                    self.ssthresh = self.cut_ssthresh(cfg);
                    // Retransmit the missing segment alone: timer restarted, no RTT timing.
                    self.rexmt_at = Deadline::NONE;
                    self.timing = Timing::NONE;
                    self.snd_nxt = self.snd_una;
                    self.cwnd = mss;
                    self.counters.fast_retransmits += 1;
                    self.ecn.on_reduction(self.snd_max, false);
                    self.output(now, cfg, out);
                    // Inflate by the segments that have left the network.
                    self.cwnd = self.ssthresh + self.dupacks as u64 * mss;
                    if onxt > self.snd_nxt {
                        self.snd_nxt = onxt;
                    }
                } else if self.dupacks == cfg.dupack_threshold
                    && !self.in_recovery
                    && cfg.timer_model == TimerModel::Ns2
                {
                    // ns-2 refused the fast retransmit (`bug_fix_`) but has already set
                    // `fastrecov_`: nothing is sent and ssthresh stays, yet the later
                    // duplicates inflate cwnd (`extra_ack`), the next ACK below `recover_` is a
                    // partial ACK (`pack_action`: NewReno retransmits, cwnd = ssthresh) and a
                    // full one retracts an inflated cwnd to ssthresh — our recovery's own
                    // rules, entered without its retransmission.
                    self.in_recovery = true;
                    self.partial_seen = false;
                } else if self.dupacks > cfg.dupack_threshold && self.in_recovery {
                    self.cwnd = (self.cwnd + mss).min(MAX_CWND);
                }
            },
        }
    }

    /// Whether this duplicate ACK is one of the first DupThresh − 1, which Limited Transmit
    /// (RFC 3042 §2) answers with new data.
    #[inline]
    fn limited_transmit_due(&self, cfg: &TcpConfig) -> bool {
        cfg.limited_transmit && !self.in_recovery && self.dupacks < cfg.dupack_threshold
    }

    /// RFC 3042 §2: one previously unsent segment, if the receiver's window allows it and
    /// the outstanding data stays within cwnd + 2·SMSS (cwnd + the duplicates so far); cwnd
    /// is not changed.
    fn limited_transmit(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        if self.snd_nxt != self.snd_max {
            return; // only new data
        }
        let mss = cfg.mss as u64;
        let allowed = (self.cwnd + self.dupacks as u64 * mss).min(cfg.rwnd as u64);
        let usable = allowed.saturating_sub(self.snd_max - self.snd_una).min(mss);
        if usable > 0 {
            self.send_one(now, cfg, usable, out);
        }
    }

    /// A loss found by duplicate ACKs in the window already reduced for ECE. RFC 3168 §6.1.2:
    /// react to congestion at most once per window, so the segment is fast-retransmitted and
    /// recovery runs, but ssthresh is not reduced again (cwnd = ssthresh + the duplicates, as
    /// at any entry). ns-2 Full-TCP (`dupack_action`, `last_cwnd_action_ == CWND_ACTION_ECN`)
    /// instead halves cwnd once more, keeps ssthresh and does not inflate: the ns-2 model
    /// follows ns-2.
    fn ecn_loss_retransmit(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let mss = cfg.mss as u64;
        self.in_recovery = true;
        self.ns2_after_fast_rexmit = true; // ns-2 `fast_retransmit`
        self.partial_seen = false;
        self.ecn_reduced = false;
        self.recover = self.snd_max;
        let onxt = self.snd_nxt;
        let after = match cfg.timer_model {
            _ if self.linux.is_some() => self.ssthresh + self.dupacks as u64 * mss,
            TimerModel::Ns2 if cfg.exact_halving => self.exact_half(cfg),
            TimerModel::Ns2 => (self.cwnd.min(cfg.rwnd as u64) / 2 / mss).max(1) * mss,
            TimerModel::Bsd | TimerModel::Linux => self.ssthresh + self.dupacks as u64 * mss,
        };
        self.rexmt_at = Deadline::NONE;
        self.timing = Timing::NONE;
        self.snd_nxt = self.snd_una;
        self.cwnd = mss;
        self.counters.fast_retransmits += 1;
        self.output(now, cfg, out);
        self.cwnd = after;
        if !(cfg.exact_halving && cfg.timer_model == TimerModel::Ns2) {
            self.ns2_cwnd_bytes = u64::MAX; // ns-2's double is `after` only when exact
        }
        if onxt > self.snd_nxt {
            self.snd_nxt = onxt;
        }
    }

    /// Loss-recovery hook for an ACK of new data (before snd_una moves); true for a NewReno
    /// partial ACK, which keeps fast recovery going.
    pub(super) fn on_recovery_ack(&mut self, cfg: &TcpConfig, ack: u64) -> bool {
        if !self.in_recovery {
            return false;
        }
        match self.recovery(cfg) {
            Recovery::Reno => {
                // Reno leaves fast recovery on the first new ACK and deflates the window to
                // ssthresh (RFC 5681 §3.2 step 6).
                self.cwnd = self.cwnd.min(self.ssthresh);
                self.in_recovery = false;
                false
            },
            Recovery::NewReno if ack >= self.recover => {
                self.cwnd = match cfg.newreno_variant {
                    // Full ACK (RFC 6582 §3.2 step 6, option 1): cwnd = min(ssthresh,
                    // max(FlightSize, SMSS) + SMSS); leave fast recovery.
                    NewRenoVariant::Rfc6582 => {
                        let mss = cfg.mss as u64;
                        let flight = self.snd_max - ack;
                        self.ssthresh.min(flight.max(mss) + mss)
                    },
                    // ns-2 `FullTcpAgent::pack_action`: retract an inflated window.
                    NewRenoVariant::Ns2 => self.cwnd.min(self.ssthresh),
                };
                self.in_recovery = false;
                self.partial_seen = false;
                false
            },
            Recovery::NewReno => true,
            // RFC 6675 §5 (A): recovery ends when the cumulative ACK covers RecoveryPoint;
            // cwnd was set to ssthresh on entry and never inflated, so it stays.
            Recovery::Sack if ack >= self.recover => {
                self.in_recovery = false;
                self.prr_end_recovery();
                false
            },
            Recovery::Sack => true,
        }
    }

    /// NewReno partial ACK (RFC 6582 §3.2 step 5): retransmit the first unacknowledged
    /// segment, deflate cwnd by the data acknowledged and add back one SMSS if at least one
    /// SMSS was acknowledged; new data goes out if the window then allows (the caller's output).
    pub(super) fn newreno_partial_ack(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        acked: u64,
        out: &mut Outbox,
    ) {
        let mss = cfg.mss as u64;
        let (onxt, ocwnd) = (self.snd_nxt, self.cwnd);
        self.timing = Timing::NONE;
        self.snd_nxt = self.snd_una;
        self.cwnd = mss;
        self.output(now, cfg, out);
        self.snd_nxt = self.snd_nxt.max(onxt);
        self.cwnd = ocwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
        self.cwnd = self.cwnd.max(mss);
    }

    /// ns-2 Full-TCP NewReno partial ACK (`NewRenoFullTcpAgent::pack_action`):
    /// `fast_retransmit(highest_ack_)` sends the first unacknowledged segment and sets
    /// `recover_ = maxseq_`; then `cwnd_ = ssthresh_`, no window opening, and bursts of at
    /// most `recov_maxburst_` until the full ACK (`output`). `foutput` leaves `t_seqno_`
    /// where it was (at least the ACK, `newack`), so after a timeout, when go-back-N had not
    /// yet passed the ACK, the next `send_much` sends the same segment again.
    pub(super) fn ns2_newreno_partial_ack(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let onxt = self.snd_nxt;
        self.ns2_after_fast_rexmit = true;
        self.timing = Timing::NONE;
        self.recover = self.snd_max;
        self.snd_nxt = self.snd_una;
        self.send_one(now, cfg, cfg.mss as u64, out);
        self.snd_nxt = onxt;
        self.cwnd = self.ssthresh;
    }
}
