//! The timers (4.4BSD's `tcp_timer`): the pacer's release (`tcp_pace_kick`), the delayed
//! ACK, RACK-TLP's reorder and probe timers (`linux_recovery.rs`), and the retransmission
//! timeout (RFC 6298, RFC 5681 §3.1; 4.4BSD `tcp_timers`, ns-2 Full-TCP `timeout_action`,
//! Linux `tcp_enter_loss` in `linux_cong.rs`), after which the connection may be given up.

use super::{ack_clock, Endpoint, Outbox, State};
use crate::tcp::config::{TcpConfig, TimerModel, NEVER};
use crate::tcp::deadline::{Deadline, Timing};
use crate::units::Time;

impl Endpoint {
    pub fn on_timer(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        if let Some(t) = self.pace_at.get() {
            if t <= now {
                // `tcp_pace_kick`: the pacer releases the next segment.
                self.pace_at = Deadline::NONE;
                if self.state != State::Closed {
                    self.output(now, cfg, out);
                }
            }
        }
        if let Some(t) = self.delack_at.get() {
            if t <= now {
                self.delack_at = Deadline::NONE;
                self.ack_now = true;
                let rto = self.rto.rto_ticks();
                if let Some(a) = self.lack.as_mut() {
                    a.timeout = 0;
                    a.on_timer(rto, &ack_clock(cfg));
                }
                self.output(now, cfg, out);
            }
        }
        if self.has_rack() {
            self.rack_timers(now, cfg, out);
        }
        if let Some(t) = self.rexmt_at.get() {
            if t <= now {
                self.rexmt_at = Deadline::NONE;
                self.on_retransmit_timeout(now, cfg, out);
            }
        }
    }

    fn on_retransmit_timeout(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        let opening = self.opening();
        // "never" is infinity: the cast saturates at Time::MAX.
        let connect_limit = (cfg.connect_timeout_s * 1e9) as Time;
        if self.rto.shift.saturating_add(1) > cfg.max_retries
            || (opening && now - self.opened_at >= connect_limit)
        {
            self.abort(out);
            return;
        }
        self.counters.timeouts += 1;
        let syn_sent = self.state == State::SynSent;
        // BSD clears SRTT after TCP_MAXRXTSHIFT/4 timeouts (3); ns-2 `rtt_backoff` when the
        // backoff passes 8, also after 3: so 3 for connections that never give up.
        let reset_after = if cfg.max_retries == NEVER {
            3
        } else {
            cfg.max_retries / 4
        };
        self.rto.on_timeout(cfg, syn_sent, reset_after);
        // RFC 5681 §3.1 (eq. 4) as coded in 4.4BSD: ssthresh = max(min(cwnd, rwnd)/2, 2·MSS),
        // cwnd = 1 MSS (loss window), go back to the first unacknowledged byte. A SYN or
        // SYN-ACK timeout lowers ssthresh too (4.4BSD tcp_timers and ns-2 `timeout_action`
        // do not look at the state): with at most the initial window it becomes 2 segments,
        // and the connection starts at ssthresh. cwnd stays at the initial window, which
        // both stacks set again when the handshake completes.
        // ns-2 Full-TCP `timeout_action`: if the last window reduction was for ECE
        // (`last_cwnd_action_ == CWND_ACTION_ECN`) only cwnd closes (`CLOSE_CWND_ONE`):
        // ssthresh stays, and so does that last action, for later timeouts too.
        let kernel_loss_state = !opening && self.linux_loss_state(cfg);
        if self.linux.is_some() {
            let frto = (!opening).then(|| self.frto_before_rto(cfg)).flatten();
            let cut = self.linux_on_rto(now, cfg, opening);
            if !opening && (self.has_prr() || self.has_rack()) {
                self.linux_recovery_on_rto(now, kernel_loss_state);
            }
            if kernel_loss_state {
                // `tcp_enter_loss`: cwnd = `tcp_packets_in_flight` + 1 once the marks are made.
                let in_flight = self.linux.as_deref().map_or(0, |l| l.rack_in_flight());
                self.cwnd = (in_flight as u64 + 1) * cfg.mss as u64;
            }
            if let Some(b) = frto {
                self.frto_enter_loss(b, cut);
            }
            self.bbr_enter_loss(now, cfg, opening);
        } else {
            if !(cfg.timer_model == TimerModel::Ns2 && self.ecn_reduced) {
                self.ssthresh = self.halved_window(cfg);
                self.ecn_reduced = false;
            }
            if !opening {
                self.cwnd = cfg.mss as u64;
                self.ecn.on_reduction(self.snd_max, false);
            }
        }
        self.dupacks = 0;
        // Leave fast recovery; NewReno does not fast-retransmit again until the data sent so
        // far is acknowledged (RFC 6582 §3.2 step 4 after a timeout).
        self.in_recovery = false;
        self.ns2_after_fast_rexmit = false; // CWND_ACTION_TIMEOUT (or ECN, which it keeps)
        self.recover = self.snd_max;
        // RFC 2018 §8 / ns-2 `clear_on_timeout_`: forget what was SACKed (the receiver may have
        // reneged); go-back-N resends it. ACKs arriving later fill the scoreboard again.
        // Linux keeps its SACK marks and resends only what is marked lost (`rack_output`).
        if !kernel_loss_state {
            self.board.clear();
            self.snd_nxt = self.snd_una;
        }
        self.timing = Timing::NONE; // Karn: never time a retransmission
        self.rexmt_at = Deadline::at(self.rto.timer_deadline(cfg, now, syn_sent));
        self.output(now, cfg, out);
    }

    fn abort(&mut self, out: &mut Outbox) {
        self.state = State::Closed;
        self.rexmt_at = Deadline::NONE;
        self.delack_at = Deadline::NONE;
        out.aborted = true;
    }
}
