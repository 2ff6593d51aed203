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
//! With `accecn` the handshake may agree on Accurate ECN instead (RFC 9768, `tcp/accecn.rs`):
//! then `acc` holds its counters, the ACE field replaces ECE/CWR on every segment, and an
//! ACK "echoes congestion" when the ACE field shows new CE marks.

use super::accecn::{self, AccEcn, Mode, SynRequest};
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
    /// Accurate ECN's counters, once the handshake agreed on it (`accecn` only).
    pub acc: Option<Box<AccEcn>>,
    /// Server: the ACE value of our SYN-ACK under AccECN, reflecting the SYN's codepoint.
    synack_ace: u32,
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

    /// Flags for an AccECN end's SYN (AE, CWR and ECE: RFC 9768 §3.1.1) or SYN-ACK (the
    /// reflection of the SYN's codepoint under AccECN, else as `syn_flags`).
    pub fn syn_flags_acc(&self, syn_ack: bool) -> u8 {
        match (syn_ack, self.acc.is_some()) {
            (false, _) => flags::AE | flags::CWR | flags::ECE,
            (true, true) => accecn::ace_flags(self.synack_ace),
            (true, false) => self.syn_flags(true, true),
        }
    }

    /// Server: an ECN-setup SYN arrived.
    pub fn on_syn(&mut self, enabled: bool, syn: &Packet) {
        self.ok = enabled && syn.has(flags::ECE) && syn.has(flags::CWR);
    }

    /// Server with `accecn` (RFC 9768 §3.1.1; Linux `tcp_ecn_create_request`): an AccECN
    /// SYN agrees on AccECN, an RFC 3168 SYN on classic ECN unless `no_classic` (Prague:
    /// `TCP_CONG_NO_FALLBACK_RFC3168`), anything else on no ECN.
    pub fn on_syn_acc(&mut self, no_classic: bool, syn: &Packet) {
        self.acc = None;
        match accecn::syn_request(syn) {
            SynRequest::AccEcn => {
                self.ok = true;
                self.synack_ace = accecn::reflect(syn.ecn);
                self.acc = Some(Box::default());
            },
            SynRequest::Classic => self.ok = !no_classic,
            SynRequest::None => self.ok = false,
        }
    }

    /// Client: the SYN-ACK confirms ECN (ECE set, CWR clear).
    pub fn on_syn_ack(&mut self, enabled: bool, syn_ack: &Packet) {
        self.ok = enabled && syn_ack.has(flags::ECE) && !syn_ack.has(flags::CWR);
    }

    /// Client with `accecn` (RFC 9768 §3.1.2; Linux `tcp_ecn_rcv_synack`): the SYN-ACK's
    /// AE, CWR, ECE select AccECN (our first ACK then reflects its codepoint), classic ECN
    /// (refused with `no_classic`, Prague) or none.
    pub fn on_syn_ack_acc(&mut self, no_classic: bool, syn_ack: &Packet) {
        self.acc = None;
        match accecn::synack_mode(syn_ack) {
            Mode::AccEcn => {
                self.ok = true;
                self.acc = Some(Box::new(AccEcn {
                    first_ack: Some(accecn::reflect(syn_ack.ecn)),
                    ..Default::default()
                }));
            },
            Mode::Classic => self.ok = !no_classic,
            Mode::None => self.ok = false,
        }
    }

    /// AccECN receiver (after the handshake): every ECT or CE packet counts, CE into the ACE
    /// counter. True if an ACK should go at once (6 marks unreported).
    #[inline]
    pub fn on_receive_acc(&mut self, pkt: &Packet) -> bool {
        let Some(a) = self.acc.as_deref_mut() else {
            return false;
        };
        if pkt.len > 0 && pkt.ecn == Ecn::Ce {
            self.ce_received += 1;
        }
        a.on_receive(pkt.ecn, pkt.len > 0)
    }

    /// AccECN sender: the ACE field of an ACK that delivered `delivered` segments, with
    /// `progress` when it acknowledged or SACKed new data; returns the new CE marks.
    #[inline]
    pub fn on_ack_acc(&mut self, pkt: &Packet, delivered: u32, progress: bool) -> u32 {
        match self.acc.as_deref_mut() {
            Some(a) => a.on_ack(accecn::ace(pkt.flags), delivered, progress),
            None => 0,
        }
    }

    /// New CE marks the last ACK reported (AccECN), 0 otherwise.
    #[inline]
    pub fn ace_delta(&self) -> u32 {
        self.acc.as_deref().map_or(0, |a| a.delta)
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
        self.echoed(pkt) && pkt.ack > self.recover
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
        match self.acc.as_deref() {
            None => self.ok && pkt.has(flags::ECE),
            Some(a) => a.delta > 0,
        }
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
        let new_data = len > 0 && !retransmit;
        if let Some(a) = self.acc.as_deref_mut() {
            // AccECN: the ACE counter on every segment, no CWR (RFC 9768 §3.2.2); ECT(0) on
            // new data as RFC 3168 (Prague sets ECT(1) on every segment, `Endpoint`).
            return (a.on_send(), if new_data { Ecn::Ect0 } else { Ecn::NotEct });
        }
        let mut f = 0;
        if self.ece_pending {
            f |= flags::ECE;
        }
        if self.cwr_pending && (new_data || (len > 0 && cwr_on_retransmit)) {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        (f, if new_data { Ecn::Ect0 } else { Ecn::NotEct })
    }
}
