//! Explicit Congestion Notification at the end systems (RFC 3168 §6.1).
//!
//! Negotiation: the client's SYN carries ECE and CWR (an "ECN-setup SYN"), the server answers
//! with ECE alone on its SYN-ACK (§6.1.1). Once both sides have agreed, new data segments are
//! ECT(0); SYNs, pure ACKs and retransmissions never are (§6.1.4, §6.1.5).
//! Receiver: after a CE data segment, ECE is set on every ACK until a segment with CWR
//! arrives (§6.1.3). Sender: an ECE ACK halves the window at most once per window of data,
//! never causes a retransmission, and the next new data segment after any window reduction
//! carries CWR (§6.1.2).
//! With `congestion_control = "dctcp"` the receiver's ECE follows RFC 8257 §3.2 instead
//! (`Endpoint::dctcp_receive`, through `ece`/`set_ece`).

use crate::packet::{flags, Ecn, Packet};

#[derive(Clone, Debug, Default)]
pub struct EcnState {
    /// Both ends agreed to use ECN on this connection.
    pub ok: bool,
    /// Receiver: set ECE on outgoing ACKs.
    ece_pending: bool,
    /// Sender: the next new data segment carries CWR.
    cwr_pending: bool,
    /// Sender: no new ECN reduction until data beyond this sequence number is acknowledged
    /// ("at most once per window").
    recover: u64,
    /// Window reductions made for ECE.
    pub reductions: u64,
    /// CE-marked data segments received.
    pub ce_received: u64,
}

impl EcnState {
    /// Flags for our SYN (client) or SYN-ACK (server).
    pub fn syn_flags(&self, enabled: bool, syn_ack: bool) -> u8 {
        match (enabled, syn_ack) {
            (false, _) => 0,
            (true, false) => flags::ECE | flags::CWR,
            (true, true) if self.ok => flags::ECE,
            (true, true) => 0,
        }
    }

    /// Server: an ECN-setup SYN arrived.
    pub fn on_syn(&mut self, enabled: bool, syn: &Packet) {
        self.ok = enabled && syn.has(flags::ECE) && syn.has(flags::CWR);
    }

    /// Client: the SYN-ACK confirms ECN (ECE set, CWR clear).
    pub fn on_syn_ack(&mut self, enabled: bool, syn_ack: &Packet) {
        self.ok = enabled && syn_ack.has(flags::ECE) && !syn_ack.has(flags::CWR);
    }

    /// Receiver side of an arriving segment: CWR ends the echo, then CE on data starts it.
    pub fn on_receive(&mut self, pkt: &Packet) {
        if !self.ok {
            return;
        }
        if pkt.has(flags::CWR) {
            self.ece_pending = false;
        }
        if pkt.len > 0 && pkt.ecn == Ecn::Ce {
            self.ce_received += 1;
            self.ece_pending = true;
        }
    }

    /// Receiver: whether our ACKs carry ECE.
    #[inline]
    pub fn ece(&self) -> bool {
        self.ece_pending
    }

    /// Receiver: ECE on our ACKs from now on, or not (DCTCP, `Endpoint::dctcp_receive`).
    #[inline]
    pub fn set_ece(&mut self, on: bool) {
        self.ece_pending = on;
    }

    /// Whether an arriving ACK asks this sender to reduce its window now: ECE set, and the
    /// ACK acknowledges data sent after the last reduction.
    pub fn should_reduce(&self, pkt: &Packet) -> bool {
        self.ok && pkt.has(flags::ECE) && pkt.ack > self.recover
    }

    /// Whether the cumulative ACK `snd_una` has not yet passed the data outstanding at the
    /// last reduction (ns-2: `highest_ack_ <= recover_`).
    #[inline]
    pub fn within_reduced_window(&self, snd_una: u64) -> bool {
        snd_una <= self.recover
    }

    /// Whether an arriving ACK echoes congestion (ECE on an ECN connection).
    #[inline]
    pub fn echoed(&self, pkt: &Packet) -> bool {
        self.ok && pkt.has(flags::ECE)
    }

    /// Records a window reduction (for ECE when `for_ece`, or for a loss): CWR goes on the
    /// next new data, and ECE is ignored until data sent from now on is acknowledged.
    pub fn on_reduction(&mut self, snd_max: u64, for_ece: bool) {
        if self.ok {
            self.cwr_pending = true;
            self.recover = snd_max;
            if for_ece {
                self.reductions += 1;
            }
        }
    }

    /// ECN flags and codepoint for an outgoing segment of the synchronized states.
    /// CWR rides the next new data segment, or with `cwr_on_retransmit` the next data
    /// segment of any kind (ns-2.35).
    pub fn on_send(&mut self, len: u32, retransmit: bool, cwr_on_retransmit: bool) -> (u8, Ecn) {
        if !self.ok {
            return (0, Ecn::NotEct);
        }
        let mut f = 0;
        if self.ece_pending {
            f |= flags::ECE;
        }
        let new_data = len > 0 && !retransmit;
        if self.cwr_pending && (new_data || (len > 0 && cwr_on_retransmit)) {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        (f, if new_data { Ecn::Ect0 } else { Ecn::NotEct })
    }
}
