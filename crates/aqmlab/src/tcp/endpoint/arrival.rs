//! A segment arrives (segment arrival, 4.4BSD's `tcp_input`; ns-2 Full-TCP's `recv`): what
//! each state does with it, the handshake's end, and the ACK's processing: data newly
//! acknowledged, duplicates handed to loss recovery (`recovery.rs`), the retransmission timer
//! (RFC 6298 (5.2)/(5.3), ns-2's `newack`), ns-2's header prediction, and the RTT samples
//! (Karn's rule; BSD's and ns-2's tick clocks, Linux's estimator in `tcp/rtt.rs`). The payload
//! goes on to `receive.rs`, the transmission that follows to `output.rs`.

use super::paced::prague_params;
use super::{ack_clock, Endpoint, Outbox, State};
use crate::packet::{flags, Packet, MAX_SACK_BLOCKS};
use crate::tcp::config::{
    CongestionControl, NewRenoVariant, Recovery, SackVariant, TcpConfig, TimerModel,
};
use crate::tcp::deadline::{Deadline, Timing};
use crate::tcp::prague::Prague;
use crate::units::Time;

impl Endpoint {
    pub fn on_segment(&mut self, now: Time, cfg: &TcpConfig, pkt: &Packet, out: &mut Outbox) {
        let handshake_ack = self.state == State::SynRcvd;
        match self.state {
            State::Closed | State::TimeWait if !pkt.has(flags::FIN) => return,
            State::Closed => return,
            // ns-2 Full-TCP ignores every FIN segment in LAST_ACK, unacknowledged
            // (tcp-full.cc `recv`: "we've already received a FIN, so ignore all retransmitted
            // FINs", M. Weigle 7/23/02); BSD acknowledges a duplicate FIN.
            State::LastAck if pkt.has(flags::FIN) && cfg.timer_model == TimerModel::Ns2 => return,
            State::Listen => {
                if pkt.has(flags::SYN) && !pkt.has(flags::ACK) {
                    self.rcv_nxt = pkt.seq + 1;
                    if cfg.accecn {
                        self.ecn
                            .on_syn_acc(cfg.congestion_control == CongestionControl::Prague, pkt);
                    } else {
                        self.ecn.on_syn(cfg.ecn, pkt);
                    }
                    self.sack_ok = cfg.recovery == Recovery::Sack && pkt.sack_permitted;
                    self.state = State::SynRcvd;
                    self.output(now, cfg, out);
                }
                return;
            },
            State::SynSent => {
                if pkt.has(flags::SYN) && pkt.has(flags::ACK) && pkt.ack == 1 {
                    self.rcv_nxt = pkt.seq + 1;
                    if cfg.accecn {
                        let prague = cfg.congestion_control == CongestionControl::Prague;
                        self.ecn.on_syn_ack_acc(prague, pkt);
                    } else {
                        self.ecn.on_syn_ack(cfg.ecn, pkt);
                    }
                    self.sack_ok = cfg.recovery == Recovery::Sack && pkt.sack_permitted;
                    self.ack_of_handshake(now, cfg);
                    self.state = State::Established;
                    out.established = true;
                    // tcp_input sends the handshake's ACK at once (TF_ACKNOW).
                    self.ack_now = true;
                    self.output(now, cfg, out);
                }
                return;
            },
            State::SynRcvd => {
                if pkt.has(flags::SYN) && !pkt.has(flags::ACK) {
                    // The client retransmitted its SYN: our SYN-ACK was lost or is late.
                    // ns-2 Full-TCP trims the SYN as a duplicate, which sets TF_ACKNOW, and
                    // drops a segment without ACK (`recv`: `goto drop`): only its own timer
                    // sends the SYN-ACK again, and the ACK owed goes with the next output.
                    if cfg.timer_model == TimerModel::Ns2 {
                        self.ack_now = true;
                        return;
                    }
                    // Otherwise answer with the SYN-ACK again (FreeBSD's syncache,
                    // `syncache_add` on a known entry; Linux's request socket).
                    self.snd_nxt = self.snd_una;
                    self.output(now, cfg, out);
                    return;
                }
                if !pkt.has(flags::ACK) || pkt.ack < 1 {
                    return;
                }
                self.ack_of_handshake(now, cfg);
                if cfg.ack_of_syn_opens_cwnd {
                    // 4.4BSD tcp_input: SYN_RECEIVED falls into the ESTABLISHED ACK processing
                    // with snd_una = iss, so the ACK of our SYN is an ACK of new data (acked = 1)
                    // and opens the congestion window by one segment (slow start).
                    self.open_cwnd(cfg);
                }
                self.state = if self.fin_queued {
                    State::FinWait1
                } else {
                    State::Established
                };
                out.established = true;
                // Fall through: the ACK may carry data, and may acknowledge more than the SYN.
            },
            _ => {},
        }

        if pkt.has(flags::SYN) {
            // A retransmitted SYN-ACK: our handshake ACK was lost. Acknowledge again.
            self.ack_now = true;
            self.output(now, cfg, out);
            return;
        }
        if cfg.congestion_control == CongestionControl::Dctcp {
            self.dctcp_receive(cfg, pkt, out);
        } else if self.ecn.acc.is_some() {
            // AccECN (RFC 9768 §3.2.2.2; Linux `tcp_ecn_received_counters`): every packet's
            // CE counts; an ACK goes at once when 6 marks are unreported.
            if self.ecn.on_receive_acc(pkt) {
                self.ack_now = true;
            }
        } else {
            let echoing = self.ecn.ece();
            self.ecn.on_receive(pkt);
            if let (false, true, Some(a)) = (echoing, self.ecn.ece(), self.lack.as_mut()) {
                // Linux `__tcp_ecn_check_ce`: the sender may have a small window now.
                a.enter_quickack(2, &ack_clock(cfg));
            }
        }
        if pkt.has(flags::ACK) {
            let before = cfg.paced().then(|| self.paced_ack_state(cfg));
            self.process_ack(now, cfg, pkt, out);
            if let Some(b) = before {
                self.paced_after_ack(now, cfg, pkt, b);
            }
            if handshake_ack {
                // Linux processes the handshake's ACK before the algorithm starts
                // (`tcp_rcv_state_process`: `tcp_ack`, then `tcp_init_transfer`): DCTCP's
                // first window starts after it.
                if let Some(lx) = self.linux.as_deref_mut() {
                    lx.restart_dctcp(self.snd_nxt);
                }
            }
        }
        self.process_payload(now, cfg, pkt, out);
        let skip = std::mem::take(&mut self.ns2_skip_output);
        if self.state != State::Closed && !skip {
            self.output(now, cfg, out);
        }
    }

    /// The SYN (or SYN-ACK) we sent is acknowledged.
    fn ack_of_handshake(&mut self, now: Time, cfg: &TcpConfig) {
        self.snd_una = self.snd_una.max(1);
        self.snd_nxt = self.snd_nxt.max(1);
        let mut sampled = false;
        if let Some((seq, start)) = self.timing.get() {
            if seq == 0 && cfg.rtt_sample_from_syn {
                if cfg.timer_model == TimerModel::Linux && self.counters.syn_retransmits > 0 {
                    // Linux after a retransmitted SYN or SYN-ACK: no sample from the send
                    // time (Karn; `tcp_synack_rtt_meas` passes -1 once `num_retrans` > 0),
                    // but one from the timestamp echo, in the TS clock's milliseconds
                    // (`tcp_ack_update_rtt`: delta of two ms stamps, at least 1). It also
                    // clears the backoff, which a server's new socket never had
                    // (`tcp_create_openreq_child`: the request socket kept its timeouts).
                    self.linux_rto_sample(ts_echo_rtt(start, now), self.snd_una);
                } else {
                    self.rtt_sample(now, cfg, start);
                }
                sampled = true;
            }
        }
        self.timing = Timing::NONE;
        // BSD clears t_rxtshift only in tcp_xmit_timer: after a retransmitted SYN or SYN-ACK
        // (no sample, Karn) the backed-off t_rxtcur times the first data. ns-2 `newack` resets
        // t_backoff_ on any ACK of new sequence space.
        if sampled || cfg.timer_model == TimerModel::Ns2 {
            self.rto.reset_backoff();
        }
        self.rexmt_at = Deadline::NONE;
        self.dupacks = 0;
        let psock = (cfg.congestion_control == CongestionControl::Prague && self.ecn.acc.is_some())
            .then(|| self.prague_sock(now, cfg));
        if let Some(lx) = self.linux.as_deref_mut() {
            // Linux `tcp_init_transfer`: the algorithm starts now; cwnd is the initial window,
            // or 1 segment after more than one retransmitted SYN (or SYN-ACK). A reduction of
            // ssthresh during the handshake is undone (`tcp_init_metrics`), so the timeouts of
            // the handshake leave it alone (`on_retransmit_timeout`).
            let dctcp = cfg.congestion_control == CongestionControl::Dctcp;
            lx.on_established(now, self.snd_nxt, dctcp);
            if let Some(s) = psock {
                // `prague_init`; without AccECN the module hands over to `prague-reno`.
                lx.cold_mut().prague = Some(Box::new(Prague::new(prague_params(cfg), &s)));
            }
            if self.counters.syn_retransmits > 1 {
                self.cwnd = cfg.mss as u64;
            }
            if cfg.paced() {
                self.paced_on_established(now, cfg);
            }
        }
    }

    #[inline]
    fn rtt_sample(&mut self, now: Time, cfg: &TcpConfig, start: Time) {
        let measured = now - start;
        if cfg.timer_model == TimerModel::Linux {
            self.linux_rto_sample(measured, self.snd_una);
            return;
        }
        let ticks = self.rto.sample_ticks(cfg.timer_model, start, now);
        self.rto.on_sample(cfg.timer_model, ticks);
        self.note_rtt(measured);
    }

    fn note_rtt(&mut self, measured: Time) {
        if self.min_rtt_sample == 0 || measured < self.min_rtt_sample {
            self.min_rtt_sample = measured;
        }
    }

    /// An RTT sample for Linux's estimator (µs clock), `snd_una` as the ACK that gave it
    /// leaves it; it clears the backoff (`tcp_ack_update_rtt`).
    pub(super) fn linux_rto_sample(&mut self, measured: Time, snd_una: u64) {
        self.rto
            .on_sample_linux((measured / 1000) as i64, snd_una, self.snd_max);
        self.rto.reset_backoff();
        self.note_rtt(measured);
    }

    fn process_ack(&mut self, now: Time, cfg: &TcpConfig, pkt: &Packet, out: &mut Outbox) {
        if !self.has_prr() && !self.has_rack() {
            self.process_ack_base(now, cfg, pkt, out);
        } else {
            self.linux_recovery_ack(now, cfg, pkt, out);
        }
    }

    pub(super) fn process_ack_base(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        pkt: &Packet,
        out: &mut Outbox,
    ) {
        let ack = pkt.ack;
        if ack > self.snd_max {
            // Acknowledges data never sent: answer with an ACK (RFC 793 p. 72).
            self.ack_now = true;
            return;
        }
        let linux_acked = if cfg.congestion_control != CongestionControl::Reno {
            self.linux_on_ack(now, cfg, pkt)
        } else {
            0
        };
        self.ack_delivered = linux_acked;
        let sack = self.recovery(cfg) == Recovery::Sack;
        let mut new_sack = false;
        if sack && ack >= self.snd_una {
            // RFC 6675 Update(): every ACK's blocks go into the scoreboard.
            let blocks = &pkt.sack[..(pkt.sack_n as usize).min(MAX_SACK_BLOCKS)];
            new_sack = self.board.update(ack, self.snd_max, blocks);
            if self.in_recovery
                && cfg.sack_variant == SackVariant::Ns2
                && (pkt.len == 0 || ack > self.snd_una)
            {
                // ns-2 Full-TCP: every ACK in recovery means a segment left the network.
                self.board.ns2_pipe -= cfg.mss as i64;
            }
        }
        if ack <= self.snd_una {
            // 4.4BSD's duplicate-ACK test: no data, no window change (our windows are
            // constant), the ACK equals snd_una, data outstanding and the timer running.
            // RFC 6675 §2 counts an ACK as a duplicate only if it SACKs new data.
            let dup = pkt.len == 0
                && !pkt.has(flags::FIN)
                && ack == self.snd_una
                && self.snd_max > self.snd_una
                && self.rexmt_at.is_some();
            let rfc6675 = sack && cfg.sack_variant == SackVariant::Rfc6675;
            if dup && (new_sack || !rfc6675) {
                self.on_dupack(now, cfg, out);
            } else if !dup {
                self.dupacks = 0;
            }
            return;
        }

        // New data acknowledged.
        let acked = ack - self.snd_una;
        // ns-2 Full-TCP opens cwnd only for ACKs that arrive in ESTABLISHED (`last_state_`)
        // and that its header prediction does not take.
        let ns2_hold = cfg.timer_model == TimerModel::Ns2
            && (!self.ns2_established() || self.ns2_predicted(cfg, pkt));
        // ns-2 Full-TCP `newack` restarts the timer (`set_rtx_timer`) before it takes the RTT
        // sample and resets t_backoff_: the restarted timer uses the RTO and backoff that were
        // in force before this ACK.
        let ns2_restart =
            (cfg.timer_model == TimerModel::Ns2).then(|| self.rto.timer_deadline(cfg, now, false));
        let partial = self.on_recovery_ack(cfg, ack);
        if !partial {
            self.dupacks = 0;
        }
        // The Linux model with Linux congestion control samples every ACK in
        // `linux_on_ack` instead of timing one segment at a time.
        let karn = cfg.timer_model != TimerModel::Linux || self.linux.is_none();
        if let (Some((seq, start)), true) = (self.timing.get(), karn) {
            if ack > seq {
                self.rtt_sample(now, cfg, start);
                self.timing = Timing::NONE;
                self.rto.reset_backoff(); // tcp_xmit_timer clears t_rxtshift
            }
        }
        if cfg.timer_model == TimerModel::Ns2 {
            // ns-2 Full-TCP newack(): backoff reset on any new ACK, sample or not.
            self.rto.reset_backoff();
        }
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        // RFC 6298 (5.2)/(5.3): stop the timer when everything is acknowledged, else restart it
        // — except on NewReno's later partial ACKs (RFC 6582 §3.2 step 5: only the first
        // partial ACK of a recovery restarts it). ns-2 Full-TCP restarts it on every ACK that
        // advances (`newack`: `else if (progress) set_rtx_timer()`), partial or not, so a
        // recovery repairing one loss per RTT never times out while its ACKs keep coming.
        let restart_on_partial = cfg.timer_model == TimerModel::Ns2;
        if self.snd_una == self.snd_max {
            self.rexmt_at = Deadline::NONE;
        } else if !partial || !self.partial_seen || restart_on_partial {
            self.rexmt_at = Deadline::at(
                ns2_restart.unwrap_or_else(|| self.rto.timer_deadline(cfg, now, false)),
            );
        }
        if partial && sack {
            // SACK recovery goes on: the caller's output() sends what pipe allows. ns-2
            // counts a partial ACK as one more segment gone (`pack_action`) and restarts its
            // hole search at the new cumulative ACK.
            if cfg.sack_variant == SackVariant::Ns2 {
                self.board.ns2_pipe -= cfg.mss as i64;
                self.board.ns2_next = self.board.ns2_next.max(ack);
            }
        } else if partial && cfg.newreno_variant == NewRenoVariant::Ns2 {
            self.partial_seen = true;
            self.ns2_newreno_partial_ack(now, cfg, out);
        } else if partial {
            self.partial_seen = true;
            self.newreno_partial_ack(now, cfg, acked, out);
        } else if self.ecn.should_reduce(pkt) {
            self.ecn_reduce(cfg);
        } else if !self.ecn.echoed(pkt) && !ns2_hold {
            // An ECE ACK never opens the window, whether or not it reduces it (ns-2 Full-TCP
            // `if (!ect_ || !ecnecho) opencwnd()`; Linux holds cwnd in its CWR state).
            if cfg.congestion_control == CongestionControl::Reno {
                self.open_cwnd(cfg);
            } else {
                self.linux_cong_avoid(now, cfg, linux_acked);
            }
        }

        if self.fin_queued && self.snd_una > self.app_end {
            // Our FIN is acknowledged.
            self.state = match self.state {
                State::FinWait1 => State::FinWait2,
                State::Closing => State::TimeWait,
                State::LastAck => State::Closed,
                s => s,
            };
        }
    }

    /// ns-2's ESTABLISHED: ours, or our FIN_WAIT_1 before the FIN is sent (ours begins when
    /// the application closes, ns-2's when the FIN goes out).
    fn ns2_established(&self) -> bool {
        match self.state {
            State::Established => true,
            State::FinWait1 => self.snd_max <= self.app_end,
            _ => false,
        }
    }

    /// Whether ns-2 Full-TCP's header prediction takes this ACK of new data (`predict_ok`
    /// and the pure-ACK test of `recv`): established, a bare in-order ACK without ECE or SACK
    /// blocks, not retransmitting, not in recovery, not acknowledging everything, and cwnd at
    /// least the receiver's window. That path updates the timers only: cwnd does not grow
    /// while the receiver's window is the limit.
    fn ns2_predicted(&self, cfg: &TcpConfig, pkt: &Packet) -> bool {
        self.ns2_established()
            && pkt.len == 0
            && pkt.flags & (flags::SYN | flags::FIN) == 0
            && pkt.sack_n == 0
            && !self.ecn.echoed(pkt)
            && pkt.seq == self.rcv_nxt
            && self.snd_nxt == self.snd_max
            && !self.in_recovery
            && pkt.ack < self.snd_max
            && self.cwnd >= cfg.rwnd as u64
    }
}

/// An RTT from a timestamp echo (Linux `tcp_ack_update_rtt`): the TS clock ticks in ms
/// (`TCP_TS_HZ` = 1000, `tcp_time_stamp` = the µs clock / 1000), the sample is the difference
/// of the two stamps, at least one tick.
fn ts_echo_rtt(sent: Time, now: Time) -> Time {
    const TS_TICK: Time = 1_000_000;
    (now / TS_TICK - sent / TS_TICK).max(1) * TS_TICK
}
