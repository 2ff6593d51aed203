//! What the endpoint hands its caller: the segments to put on the wire (`Seg`, with the SACK
//! option's size by RFC 2018 and by ns-2 Full-TCP), the `Outbox` each call fills, and the
//! counters of the segments the endpoint sent (`Counters`).

use crate::packet::Ecn;
use crate::tcp::reassembly::SackBlocks;

/// A segment to put on the wire (header fields only; the caller builds the packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: u8,
    pub retransmit: bool,
    /// IP ECN codepoint (ECT(0) on new data of an ECN connection).
    pub ecn: Ecn,
    /// SACK blocks (RFC 2018), the first `sack_n` valid, most recent first.
    pub sack: SackBlocks,
    pub sack_n: u8,
    /// SACK-permitted option (SYN / SYN-ACK).
    pub sack_permitted: bool,
}

impl Seg {
    /// TCP option bytes beyond the fixed header: a SACK option of n blocks is 2 + 8·n bytes
    /// (RFC 2018 §3), padded to a 4-byte boundary with two NOPs as stacks send it, unless
    /// `padded` is false (ns-2 Full-TCP SACK: `sack_option_size_` 2 + `sack_block_size_` 8
    /// per block, no padding); the SACK-permitted option (2 bytes) is not counted (SYNs keep
    /// the bare header size).
    #[inline]
    pub fn option_bytes(&self, padded: bool) -> u32 {
        if self.sack_n == 0 {
            0
        } else {
            8 * self.sack_n as u32 + if padded { 4 } else { 2 }
        }
    }
}

/// What one call produced.
#[derive(Debug, Default)]
pub struct Outbox {
    pub segs: Vec<Seg>,
    /// In-order payload bytes newly delivered to the application.
    pub delivered: u64,
    /// The connection reached ESTABLISHED during this call.
    pub established: bool,
    /// The peer's FIN was received in order (end of stream).
    pub peer_closed: bool,
    /// The connection was given up (too many retransmissions or connection timeout).
    pub aborted: bool,
}

impl Outbox {
    pub fn clear(&mut self) {
        self.segs.clear();
        self.delivered = 0;
        self.established = false;
        self.peer_closed = false;
        self.aborted = false;
    }
}

/// Per-connection counters (segments this endpoint sent). The counts of events rarer than
/// a round trip are 32 bits (16 bytes fewer in every endpoint, docs/performance.md): SYN
/// and FIN retransmissions are bounded by the retry limits, a timeout waits at least the
/// minimum RTO, and a fast retransmit needs `dupack_threshold` duplicate ACKs, so none comes
/// near 2³² within a run (a timeout every millisecond would take 49 days).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub segments: u64,
    pub data_segments: u64,
    pub payload_bytes: u64,
    pub data_retransmits: u64,
    pub retransmitted_bytes: u64,
    pub syn_retransmits: u32,
    pub fin_retransmits: u32,
    pub timeouts: u32,
    pub fast_retransmits: u32,
}
