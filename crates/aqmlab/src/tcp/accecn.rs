//! Accurate ECN (RFC 9768), the ACE counter only, as Linux 6.18's AccECN code has it
//! (`include/net/tcp_ecn.h`, `net/ipv4/tcp_input.c` `__tcp_accecn_process`).
//!
//! - Negotiation (§3.1): the client's SYN sets AE, CWR and ECE; an AccECN server answers
//!   with a SYN-ACK whose AE, CWR, ECE reflect the IP-ECN field of the SYN as it arrived
//!   (§3.1.1 Table 2; `tcp_accecn_reflector_flags`); a classic-ECN server answers ECE alone
//!   (RFC 3168) and a non-ECN one none, and the client falls back to that (§3.1.2 Table 3).
//!   The client's first ACK reflects the SYN-ACK's IP-ECN field the same way (§3.2.2.1).
//! - The ACE field (§3.2.2): AE·4 + CWR·2 + ECE counts CE-marked packets received, modulo
//!   8, from 5 (`TCP_ACCECN_CEP_INIT_OFFSET`); every ECT or CE packet after the handshake is
//!   counted, pure ACKs and retransmissions too (§3.2.2.2; `tcp_ecn_received_counters`).
//!   The receiver sends an ACK at once when 6 or more CE marks are unreported
//!   (`TCP_ACCECN_ACE_MAX_DELTA`), so that the field cannot wrap between two ACKs, and when
//!   a data packet's IP-ECN field differs from the previous data packet's: the
//!   change-triggered ACKs of §3.2.2.5.1 (Linux `tcp_ecn_received_counters` in
//!   `include/net/tcp_ecn.h`: `ecn_edge` sets `ICSK_ACK_NOW`; the L4S team's tree keeps the
//!   same `prev_ecnfield`). The first data packet sets the field without an ACK (Linux starts
//!   from the SYN's; the difference is at most one early ACK).
//! - The sender (§3.2.2.5): on an ACK that delivers data, the newly CE-marked packets are
//!   the ACE delta modulo 8; when more than 7 packets were delivered the field may have
//!   wrapped, and the sender assumes as many CE marks as are consistent with the delta and
//!   the packets delivered (§3.2.2.5.2, the conservative rule Linux uses without the
//!   option: `safe_delta = d − ((d − delta) mod 8)`).
//!
//! Not modelled: the AccECN TCP option (byte counters, §3.2.3) and anything that relies on
//! it (the option's demand for two ACKs after a change, `accecn_opt_demand`), and the checks
//! for middlebox interference (§3.2.2.3, §3.2.2.4).

use crate::packet::{flags, Ecn, Packet};

/// The ACE field's initial value (RFC 9768 §3.2.2.1; Linux `TCP_ACCECN_CEP_INIT_OFFSET`).
pub const CEP_INIT: u32 = 5;
/// The ACE field's modulus less one (`TCP_ACCECN_CEP_ACE_MASK`).
pub const ACE_MASK: u32 = 7;
/// CE marks not yet reported after which the receiver ACKs at once
/// (`TCP_ACCECN_ACE_MAX_DELTA`).
pub const ACE_MAX_DELTA: u32 = 6;

/// The ACE field of a segment: AE·4 + CWR·2 + ECE.
#[inline]
pub fn ace(pkt_flags: u8) -> u32 {
    ((pkt_flags & flags::AE != 0) as u32) << 2
        | ((pkt_flags & flags::CWR != 0) as u32) << 1
        | (pkt_flags & flags::ECE != 0) as u32
}

/// The flags that carry ACE value `v` (modulo 8).
#[inline]
pub fn ace_flags(v: u32) -> u8 {
    let v = v & ACE_MASK;
    (if v & 4 != 0 { flags::AE } else { 0 })
        | (if v & 2 != 0 { flags::CWR } else { 0 })
        | (if v & 1 != 0 { flags::ECE } else { 0 })
}

/// The ACE value that reflects an IP-ECN codepoint on the SYN-ACK or the client's first ACK
/// (RFC 9768 §3.1.1 Table 2, §3.2.2.1 Table 4): Not-ECT 0b010, ECT(1) 0b011, ECT(0)
/// 0b100, CE 0b110.
pub fn reflect(ecn: Ecn) -> u32 {
    match ecn {
        Ecn::NotEct => 0b010,
        Ecn::Ect1 => 0b011,
        Ecn::Ect0 => 0b100,
        Ecn::Ce => 0b110,
    }
}

/// What a SYN asks for (RFC 9768 §3.1.1; Linux `tcp_accecn_syn_requested`: any non-zero
/// ACE other than 0b011, RFC 3168's ECE+CWR, is an AccECN request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynRequest {
    None,
    Classic,
    AccEcn,
}

pub fn syn_request(syn: &Packet) -> SynRequest {
    match ace(syn.flags) {
        0 => SynRequest::None,
        0b011 => SynRequest::Classic,
        _ => SynRequest::AccEcn,
    }
}

/// The mode a SYN-ACK gives an AccECN client (RFC 9768 §3.1.2 Table 3; Linux
/// `tcp_ecn_rcv_synack`): 0b000 no ECN, 0b001 classic ECN, 0b111 no ECN (a reflector that
/// echoes the SYN's flags), 0b101 classic ECN (reserved: RFC 3168's ECE with AE set); every
/// other value AccECN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Classic,
    AccEcn,
}

pub fn synack_mode(syn_ack: &Packet) -> Mode {
    match ace(syn_ack.flags) {
        0b000 | 0b111 => Mode::None,
        0b001 | 0b101 => Mode::Classic,
        _ => Mode::AccEcn,
    }
}

/// One end's AccECN state (both roles).
#[derive(Clone, Debug, Default)]
pub struct AccEcn {
    /// Receiver: CE-marked packets received (`received_ce`; the ACE field sends it + 5).
    pub received_ce: u32,
    /// Receiver: CE marks not yet reported on an ACK (`received_ce_pending`, at most 15).
    pub pending: u32,
    /// Client: the ACE value of our first ACK, reflecting the SYN-ACK's codepoint.
    pub first_ack: Option<u32>,
    /// Sender: CE-marked packets inferred from the ACE field (`delivered_ce`).
    pub delivered_ce: u64,
    /// Sender: newly CE-marked packets inferred from the last ACK (`rs->ece_delta`).
    pub delta: u32,
    /// Receiver: the IP-ECN field of the last data packet (`prev_ecnfield`).
    pub prev: Option<Ecn>,
}

impl AccEcn {
    /// A packet arrived after the handshake (`tcp_ecn_received_counters`): CE counted if it
    /// carries an ECN-capable codepoint; `data`: it carries data. Returns true if the
    /// receiver should ACK at once (6 marks unreported, or a data packet whose ECN field
    /// differs from the last one's).
    pub fn on_receive(&mut self, ecn: Ecn, data: bool) -> bool {
        if ecn == Ecn::Ce {
            self.received_ce = self.received_ce.wrapping_add(1);
            self.pending = (self.pending + 1).min(0xf);
        }
        let mut edge = false;
        if data {
            edge = self.prev.is_some_and(|p| p != ecn);
            self.prev = Some(ecn);
        }
        self.pending >= ACE_MAX_DELTA || edge
    }

    /// The ACE flags of an outgoing segment (`tcp_accecn_set_ace`); the marks are reported.
    pub fn on_send(&mut self) -> u8 {
        if let Some(v) = self.first_ack.take() {
            return ace_flags(v);
        }
        self.pending = 0;
        ace_flags(self.received_ce.wrapping_add(CEP_INIT))
    }

    /// An ACK that delivered `delivered` packets (new cumulative or SACKed data: Linux's
    /// `FLAG_FORWARD_PROGRESS`; no inference otherwise) with ACE `ace`: the newly CE-marked
    /// packets (`__tcp_accecn_process`), added to `delivered_ce` and kept in `delta`.
    pub fn on_ack(&mut self, ace: u32, delivered: u32, progress: bool) -> u32 {
        self.delta = if progress {
            infer_ce(ace, self.delivered_ce, delivered)
        } else {
            0
        };
        self.delivered_ce += self.delta as u64;
        self.delta
    }
}

/// Newly CE-marked packets from the ACE field `ace` of an ACK that delivered `d` packets,
/// the sender having counted `delivered_ce` so far: the delta modulo 8, and if more than 7
/// packets were delivered the largest count consistent with it, d − ((d − delta) mod 8)
/// (RFC 9768 §3.2.2.5.2; `__tcp_accecn_process` without the option).
pub fn infer_ce(ace: u32, delivered_ce: u64, d: u32) -> u32 {
    let corrected = ace.wrapping_sub(CEP_INIT);
    let delta = corrected.wrapping_sub(delivered_ce as u32) & ACE_MASK;
    if d <= ACE_MASK {
        return delta;
    }
    d - (d.wrapping_sub(delta) & ACE_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ace_bits_round_trip() {
        for v in 0..8 {
            assert_eq!(ace(ace_flags(v)), v);
        }
        assert_eq!(ace_flags(5), flags::AE | flags::ECE);
        assert_eq!(ace_flags(13), ace_flags(5), "modulo 8");
    }

    /// 11 CE marks, each ACKed on its own: ACE goes 5, 6, 7, 0, 1, …, 7, 0 and the sender
    /// infers one mark per ACK, 11 in all.
    #[test]
    fn ace_counts_across_a_wrap() {
        let (mut rx, mut tx) = (AccEcn::default(), AccEcn::default());
        assert_eq!(ace(rx.on_send()), 5, "initial value");
        let mut seen = vec![];
        for _ in 0..11 {
            assert!(!rx.on_receive(Ecn::Ce, true));
            let a = ace(rx.on_send());
            seen.push(a);
            assert_eq!(tx.on_ack(a, 1, true), 1);
        }
        assert_eq!(seen, [6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0]);
        assert_eq!(tx.delivered_ce, 11);
        // A non-CE packet, then an ACK of it: no new mark.
        rx.on_receive(Ecn::Ect1, true);
        assert_eq!(tx.on_ack(ace(rx.on_send()), 1, true), 0);
    }

    /// Six unreported CE marks ask for an ACK at once.
    #[test]
    fn six_pending_marks_force_an_ack() {
        let mut rx = AccEcn::default();
        for k in 1..=5 {
            assert!(!rx.on_receive(Ecn::Ce, true), "{k}");
        }
        assert!(rx.on_receive(Ecn::Ce, true));
        rx.on_send();
        assert_eq!(rx.pending, 0);
    }

    /// Change-triggered ACKs (`tcp_ecn_received_counters`, `ecn_edge`): data ECT(1), ECT(1),
    /// CE, CE, ECT(1) ask for an ACK at the first CE and back at ECT(1), not in between; a
    /// pure ACK's field neither asks nor counts as the last data packet's.
    #[test]
    fn ecn_changes_force_an_ack() {
        let mut rx = AccEcn::default();
        let got: Vec<bool> = [Ecn::Ect1, Ecn::Ect1, Ecn::Ce, Ecn::Ce, Ecn::Ect1]
            .iter()
            .map(|&e| rx.on_receive(e, true))
            .collect();
        assert_eq!(got, [false, false, true, false, true]);
        assert!(!rx.on_receive(Ecn::NotEct, false));
        assert!(!rx.on_receive(Ecn::Ect1, true));
    }

    /// The wrap rule on a stretch ACK. The sender has counted 0 (ACE 5 expected); the ACK
    /// carries ACE 7 (delta 2). Delivering ≤ 7 packets: 2. Delivering 10: 10 − ((10 − 2)
    /// mod 8) = 10; 12 packets: 12 − (10 mod 8) = 10; 20 packets: 20 − (18 mod 8) = 18.
    /// No progress: nothing inferred.
    #[test]
    fn stretch_ack_safety_rule() {
        assert_eq!(infer_ce(7, 0, 7), 2);
        assert_eq!(infer_ce(7, 0, 10), 10);
        assert_eq!(infer_ce(7, 0, 12), 10);
        assert_eq!(infer_ce(7, 0, 20), 18);
        // Delta 0 on 9 delivered: 9 − (9 mod 8) = 8 (a full wrap assumed).
        assert_eq!(infer_ce(5, 0, 9), 8);
        // Counted 6 so far (ACE 11 mod 8 = 3 expected); ACE 4 → delta 1.
        assert_eq!(infer_ce(4, 6, 3), 1);
        let mut tx = AccEcn::default();
        assert_eq!(tx.on_ack(7, 3, false), 0);
        assert_eq!(tx.delivered_ce, 0);
    }

    #[test]
    fn handshake_codepoints() {
        let p = |f: u8| Packet {
            flags: f,
            ..Default::default()
        };
        assert_eq!(
            syn_request(&p(flags::AE | flags::CWR | flags::ECE)),
            SynRequest::AccEcn
        );
        assert_eq!(
            syn_request(&p(flags::CWR | flags::ECE)),
            SynRequest::Classic
        );
        assert_eq!(syn_request(&p(0)), SynRequest::None);
        assert_eq!(synack_mode(&p(flags::ECE)), Mode::Classic);
        assert_eq!(synack_mode(&p(0)), Mode::None);
        assert_eq!(
            synack_mode(&p(flags::AE | flags::CWR | flags::ECE)),
            Mode::None
        );
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(
                synack_mode(&p(ace_flags(reflect(e)))),
                Mode::AccEcn,
                "{e:?}"
            );
        }
        assert_eq!(ace_flags(reflect(Ecn::Ect1)), flags::CWR | flags::ECE);
        assert_eq!(ace_flags(reflect(Ecn::Ect0)), flags::AE);
    }
}
