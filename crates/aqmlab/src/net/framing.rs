//! Link-layer framing: the bytes a link puts on the wire for one IP packet.
//!
//! A packet's `size` is its IP datagram (payload, TCP/UDP and IP headers). A link with framing
//! serializes more than that, and its transmitter is busy for the longer time:
//!
//! `wire(ip) = max(ip + frame_overhead, min_frame) + gap_overhead`
//!
//! Ethernet (IEEE 802.3 §3.1.1, §3.2.10 and §4.4.2): a frame is the destination and source
//! addresses and the type (14 bytes), the payload and the frame check sequence (4 bytes), at
//! least 64 bytes (payloads shorter than 46 bytes are padded); on the wire each frame is also
//! preceded by the preamble and start-of-frame delimiter (8 bytes) and followed by the minimum
//! inter-packet gap (96 bit times = 12 bytes). So a full 1,500-byte IP packet occupies 1,538
//! bytes of transmission time (2.5 % more) and a 40-byte pure ACK 84 bytes (2.1 times).
//! No VLAN tag: the testbeds' router-to-router segments were plain point-to-point Ethernet.
//!
//! `Custom` adds a fixed number of bytes to every packet (PPP, ATM cells approximated, a
//! shaper's overhead compensation), with no minimum frame.

use serde::{Deserialize, Serialize};

/// IEEE 802.3: destination, source, type (14) + FCS (4).
pub const ETHERNET_FRAME_OVERHEAD: u32 = 18;
/// IEEE 802.3 minimum frame (header, payload padded to 46 bytes, FCS).
pub const ETHERNET_MIN_FRAME: u32 = 64;
/// IEEE 802.3: preamble + start-of-frame delimiter (8) + minimum inter-packet gap (12).
pub const ETHERNET_GAP_OVERHEAD: u32 = 20;

/// A link's framing as a scenario gives it: `"none"`, `"ethernet"` or
/// `{ overhead_bytes = N }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged, deny_unknown_fields)]
pub enum FramingConfig {
    Named(FramingName),
    Custom {
        /// Bytes added on the wire to every IP packet.
        overhead_bytes: u32,
    },
}

impl Default for FramingConfig {
    fn default() -> Self {
        FramingConfig::Named(FramingName::None)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FramingName {
    None,
    Ethernet,
}

/// Framing resolved to its arithmetic (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framing {
    pub frame_overhead: u32,
    pub min_frame: u32,
    pub gap_overhead: u32,
}

impl Framing {
    pub const NONE: Framing = Framing {
        frame_overhead: 0,
        min_frame: 0,
        gap_overhead: 0,
    };

    pub const ETHERNET: Framing = Framing {
        frame_overhead: ETHERNET_FRAME_OVERHEAD,
        min_frame: ETHERNET_MIN_FRAME,
        gap_overhead: ETHERNET_GAP_OVERHEAD,
    };

    pub fn new(cfg: FramingConfig) -> Self {
        match cfg {
            FramingConfig::Named(FramingName::None) => Framing::NONE,
            FramingConfig::Named(FramingName::Ethernet) => Framing::ETHERNET,
            FramingConfig::Custom { overhead_bytes } => Framing {
                frame_overhead: 0,
                min_frame: 0,
                gap_overhead: overhead_bytes,
            },
        }
    }

    /// Bytes of transmission time an IP packet of `ip_bytes` takes on the link.
    #[inline]
    pub fn wire_bytes(self, ip_bytes: u32) -> u32 {
        (ip_bytes.saturating_add(self.frame_overhead))
            .max(self.min_frame)
            .saturating_add(self.gap_overhead)
    }

    pub fn is_none(self) -> bool {
        self == Framing::NONE
    }
}

impl FramingConfig {
    /// The framing's name in messages and summaries.
    pub fn describe(self) -> String {
        match self {
            FramingConfig::Named(FramingName::None) => "none".into(),
            FramingConfig::Named(FramingName::Ethernet) => "ethernet".into(),
            FramingConfig::Custom { overhead_bytes } => format!("{overhead_bytes} bytes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frame counts computed by hand from IEEE 802.3: 8 preamble/SFD + 14 header + payload
    /// (padded to 46) + 4 FCS + 12 inter-packet gap.
    #[test]
    fn ethernet_wire_bytes_by_hand() {
        let e = Framing::ETHERNET;
        assert_eq!(e.wire_bytes(1500), 8 + 14 + 1500 + 4 + 12); // 1,538
        assert_eq!(e.wire_bytes(1460 + 40), 1538);
        assert_eq!(e.wire_bytes(40), 8 + 14 + 46 + 4 + 12); // a pure ACK: 84
        assert_eq!(e.wire_bytes(46), 84); // exactly the minimum payload
        assert_eq!(e.wire_bytes(47), 85);
        assert_eq!(e.wire_bytes(0), 84);
        assert_eq!(e.wire_bytes(1040), 1078);
    }

    #[test]
    fn none_and_custom() {
        assert_eq!(Framing::NONE.wire_bytes(40), 40);
        assert!(Framing::new(FramingConfig::default()).is_none());
        let ppp = Framing::new(FramingConfig::Custom { overhead_bytes: 8 });
        assert_eq!(ppp.wire_bytes(40), 48);
        assert_eq!(ppp.wire_bytes(1500), 1508);
        assert_eq!(Framing::NONE.wire_bytes(u32::MAX), u32::MAX);
        assert_eq!(Framing::ETHERNET.wire_bytes(u32::MAX), u32::MAX);
    }

    #[test]
    fn parses_names_and_overheads() {
        let p = |s: &str| serde_json::from_str::<FramingConfig>(s);
        assert_eq!(
            p("\"ethernet\"").unwrap(),
            FramingConfig::Named(FramingName::Ethernet)
        );
        assert_eq!(
            p("\"none\"").unwrap(),
            FramingConfig::Named(FramingName::None)
        );
        assert_eq!(
            p("{\"overhead_bytes\": 24}").unwrap(),
            FramingConfig::Custom { overhead_bytes: 24 }
        );
        assert!(p("\"token_ring\"").is_err());
        assert!(p("{\"overhead\": 24}").is_err());
    }
}
