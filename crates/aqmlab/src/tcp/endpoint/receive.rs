//! The receiving side: payload that arrives in order, out of order (held for reassembly, a
//! duplicate ACK at once: RFC 5681 §4.2) or again, the peer's FIN, and when to acknowledge:
//! the delayed-ACK rules of 4.4BSD (`tcp_output`'s window-update test) and ns-2.35 Full-TCP
//! (`need_send`, `segsperack_`), Linux's (`tcp_event_data_recv`, `__tcp_ack_snd_check`,
//! `tcp_send_delayed_ack`; the engine in `tcp/delack.rs`), and DCTCP's receiver (RFC 8257
//! §3.2).

use super::{ack_clock, Endpoint, Outbox, State, NO_FIN};
use crate::packet::{flags, Ecn, Packet};
use crate::tcp::config::{DelackClock, TcpConfig, TimerModel};
use crate::tcp::deadline::Deadline;
use crate::tcp::delack::MAX_QUICKACKS;
use crate::tcp::rtt::linux_timer_expiry;
use crate::units::Time;

impl Endpoint {
    pub(super) fn process_payload(
        &mut self,
        now: Time,
        cfg: &TcpConfig,
        pkt: &Packet,
        out: &mut Outbox,
    ) {
        let seq = pkt.seq;
        let len = pkt.len as u64;
        if len > 0 {
            let end = seq + len;
            if end <= self.rcv_nxt {
                self.ack_now = true; // a duplicate: re-acknowledge
                if let Some(a) = self.lack.as_mut() {
                    // Linux `tcp_data_queue`: a retransmission received means the sender
                    // may be stalled; ACK the next segments at once.
                    a.enter_quickack(MAX_QUICKACKS, &ack_clock(cfg));
                }
            } else if seq <= self.rcv_nxt {
                let had_holes = !self.reasm.is_empty();
                let old = self.rcv_nxt;
                self.rcv_nxt = self.reasm.advance(end);
                out.delivered += self.rcv_nxt - old;
                if self.lack.is_some() {
                    self.linux_data_received(now, cfg, had_holes, self.rcv_nxt - old);
                } else if had_holes || !cfg.delayed_ack {
                    self.ack_now = true;
                } else {
                    // BSD acknowledges when the window has advanced by two full segments
                    // (tcp_output's window-update test), ns-2.35 Full-TCP by one
                    // (`need_send`, `segsperack_`); otherwise at the delayed-ACK timer.
                    self.unacked_bytes = add_unacked(self.unacked_bytes, self.rcv_nxt - old);
                    if self.unacked_bytes as u64 >= cfg.delack_segments as u64 * cfg.mss as u64 {
                        self.ack_now = true;
                    } else if self.delack_at.is_none() {
                        let iv = cfg.delack_interval();
                        self.delack_at = Deadline::at(match cfg.delack_clock {
                            _ if cfg.timer_model == TimerModel::Linux => {
                                let tick = cfg.tick().max(1);
                                linux_timer_expiry(now, iv.div_ceil(tick), tick)
                            },
                            DelackClock::Global => (now / iv + 1) * iv,
                            DelackClock::Connection => now + iv,
                        });
                    }
                }
            } else {
                // Out of order: hold it and send a duplicate ACK at once (RFC 5681 §4.2).
                self.reasm.insert(seq, end);
                self.ack_now = true;
            }
        }
        if pkt.has(flags::FIN) {
            let fin_seq = seq + len;
            if fin_seq < self.rcv_nxt {
                self.ack_now = true; // retransmitted FIN
            } else {
                self.peer_fin_seq = fin_seq;
            }
        }
        // The FIN in order (`NO_FIN` never equals a sequence number in use).
        if self.peer_fin_seq == self.rcv_nxt {
            self.peer_fin_seq = NO_FIN;
            self.rcv_nxt += 1;
            self.ack_now = true;
            out.peer_closed = true;
            self.state = match self.state {
                State::Established | State::SynRcvd => State::CloseWait,
                State::FinWait1 => {
                    if self.snd_una > self.app_end {
                        State::TimeWait
                    } else {
                        State::Closing
                    }
                },
                State::FinWait2 => State::TimeWait,
                s => s,
            };
        }
    }

    /// In-order data arrived under the Linux model (`tcp_event_data_recv`, then
    /// `__tcp_ack_snd_check` and `tcp_send_delayed_ack`): ACK at once in quick-ACK mode, when
    /// a hole was filled, or when more than one full segment is unacknowledged; else arm the
    /// delayed-ACK timer for the ATO, keeping an earlier deadline, and ACK at once if that
    /// deadline is within a quarter of the ATO.
    fn linux_data_received(&mut self, now: Time, cfg: &TcpConfig, had_holes: bool, advanced: u64) {
        let clock = ack_clock(cfg);
        let tick = cfg.tick().max(1);
        let now_j = now / tick;
        let rto = self.rto.rto_ticks();
        let srtt = ((self.rto.srtt_s() * 1e9) as Time).div_ceil(tick);
        let Some(a) = self.lack.as_mut() else {
            return;
        };
        a.on_data(now_j, rto, &clock);
        // `rcv_nxt - rcv_wup`: in-order bytes since the last ACK.
        self.unacked_bytes = add_unacked(self.unacked_bytes, advanced);
        if had_holes || !cfg.delayed_ack || a.in_quickack() {
            self.ack_now = true;
            return;
        }
        if self.unacked_bytes > cfg.mss {
            self.ack_now = true;
            return;
        }
        let ato = a.delay(srtt, &clock);
        let timeout = now_j + ato;
        if a.timeout != 0 {
            if a.timeout <= now_j + (ato >> 2) {
                self.ack_now = true;
                return;
            }
            if timeout >= a.timeout {
                return;
            }
        }
        a.timeout = timeout;
        self.delack_at = Deadline::at(linux_timer_expiry(now, ato, tick));
    }

    /// DCTCP's receiver (RFC 8257 §3.2; Linux `dctcp_ece_ack_update`): ECE on our ACKs
    /// follows the CE state of the last new data segment (ECT or CE) that arrived, whatever
    /// CWR says. When that state changes, a delayed ACK still pending goes out first with the
    /// old state, for the data before this segment, and this segment is acknowledged at once.
    pub(super) fn dctcp_receive(&mut self, cfg: &TcpConfig, pkt: &Packet, out: &mut Outbox) {
        if !self.ecn.ok
            || pkt.len == 0
            || pkt.ecn == Ecn::NotEct
            || pkt.seq + pkt.len as u64 <= self.rcv_nxt
        {
            return;
        }
        let ce = pkt.ecn == Ecn::Ce;
        if ce {
            self.ecn.ce_received += 1;
        }
        if ce != self.ecn.ece() {
            if self.delack_at.is_some() {
                self.emit_ack(cfg, out);
            }
            self.ack_now = true;
            self.ecn.set_ece(ce);
        }
    }
}

/// `Endpoint::unacked_bytes` after `bytes` more, saturating at `u32::MAX`.
#[inline]
fn add_unacked(unacked: u32, bytes: u64) -> u32 {
    (unacked as u64 + bytes).min(u32::MAX as u64) as u32
}
