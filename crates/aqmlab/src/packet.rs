//! Packets and the slab that holds them.
//!
//! Packets live in one `PacketStore` and travel through the network as `PktId` indices, so
//! that forwarding copies four bytes, not a header, and no packet is allocated on the hot path
//! once the slab has grown to the peak number in flight.

use crate::units::Time;

pub type PktId = u32;

/// TCP header flags (RFC 793 §3.1, RFC 3168 §6.1 for ECE/CWR, RFC 9768 §3.2.1 for AE).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const ACK: u8 = 0x10;
    /// AE, Accurate ECN's third bit of the ACE field (RFC 9768 §3.2.1: bit 7 of the 12-bit
    /// flags field, formerly NS). The packet keeps one flag byte; URG (0x20) is never set by
    /// the model, so AE takes its place and the header's layout is unchanged.
    pub const AE: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
    /// The model's mark of a TCP timestamp option carrying LEDBAT's one-way-delay feedback
    /// (`tcp/ledbat.rs`) in the packet's last SACK slot (`TS_SLOT`): the option's room in a
    /// real header, where it leaves space for three SACK blocks. The bit is PSH's, which the
    /// model never sets otherwise.
    pub const TS: u8 = 0x08;
}

/// The SACK slot a LEDBAT segment's timestamp option rides in (`flags::TS`): (the sender's
/// timestamp of the data, the one-way delay of the last data segment the sender of this
/// segment received, `ledbat::NO_SAMPLE` if none).
pub const TS_SLOT: usize = MAX_SACK_BLOCKS - 1;

/// The IP ECN field (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// Transport carried by a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Proto {
    #[default]
    Tcp,
    Udp,
}

/// Maximum number of SACK blocks a packet can carry (RFC 2018 allows 4 without timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// One packet. Sequence numbers are 64-bit byte offsets from the connection's ISS (= 0), so
/// they never wrap within a simulation.
///
/// Layout (`repr(C)`, two cache lines, line-aligned): every field that forwarding reads (route,
/// hop, size, connection, queue timestamps) and the TCP header fields are in the first line;
/// the SACK blocks, read only at the receiving endpoint, fill the second. A packet that waits
/// in a queue has usually left the processor caches by the time it moves on, so each hop
/// costs one line, not two or three.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub struct Packet {
    /// Connection (or UDP flow) index.
    pub conn: u32,
    /// Generation of the connection slot, so a late packet of an ended connection is ignored.
    pub gen: u32,
    /// Route index in the topology's route table, and the position along it.
    pub route: u32,
    /// Bytes on the wire: payload + IP/TCP headers (+ options).
    pub size: u32,
    /// Time the packet entered the queue it is in (sojourn time for CoDel/PIE).
    pub enqueued_at: Time,
    /// Extra one-way delay the connection's delay box adds at the first link (ns).
    pub flow_delay: Time,
    pub seq: u64,
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    /// Hash of the flow's 5-tuple surrogate, for flow-queueing disciplines.
    pub flow_hash: u32,
    pub hop: u8,
    /// True when travelling from the connection's initiator (client) to its acceptor (server).
    pub to_server: bool,
    pub proto: Proto,
    pub flags: u8,
    pub ecn: Ecn,
    pub sack_n: u8,
    /// SACK-permitted option (RFC 2018 §2), on SYN and SYN-ACK only.
    pub sack_permitted: bool,
    /// True for a retransmitted segment (for accounting only; TCP does not read it).
    pub retransmit: bool,
    /// SACK blocks `[start, end)`, most recent first (RFC 2018 §4); the first `sack_n` count.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

const _: () = assert!(std::mem::size_of::<Packet>() == 128);
const _: () = assert!(std::mem::offset_of!(Packet, sack) == 64);

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Copies every field of `p` but the SACK blocks (the packet's second cache line).
    #[inline(always)]
    fn set_header(&mut self, p: &Packet) {
        const HEADER: usize = std::mem::offset_of!(Packet, sack);
        // SAFETY: `Packet` is `repr(C)` plain data (asserted above: the SACK blocks start at
        // byte 64 and nothing follows them). Copying the bytes before them from one valid
        // packet into another gives each of those fields a valid value and leaves `sack` as
        // it was; the two references cannot overlap (`&mut self`).
        unsafe {
            std::ptr::copy_nonoverlapping(
                p as *const Packet as *const u8,
                self as *mut Packet as *mut u8,
                HEADER,
            );
        }
    }

    /// `(slot << 1 | receiving side) + 1` of a TCP packet's connection, or 0 for a UDP
    /// packet (the event list's `owner`).
    #[inline]
    pub fn owner(&self) -> u32 {
        match self.proto {
            Proto::Tcp => (self.conn << 1 | self.to_server as u32) + 1,
            Proto::Udp => 0,
        }
    }

    /// Sequence space the segment occupies: payload plus one each for SYN and FIN.
    #[inline]
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.has(flags::SYN) as u64 + self.has(flags::FIN) as u64
    }
}

/// Slab of packets with a free list.
#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: usize,
    peak: usize,
}

impl PacketStore {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(id) = self.free.pop() {
            let slot = &mut self.slots[id as usize];
            if (p.sack_n | (p.flags & flags::TS)) == 0 {
                // Only the first cache line: the SACK blocks are read only when `sack_n` > 0
                // (or LEDBAT's timestamp option rides in their last slot, `flags::TS`), and
                // not writing the second line spares a store miss on most packets. The slot
                // keeps an older packet's (valid, unread) blocks.
                slot.set_header(&p);
            } else {
                *slot = p;
            }
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }

    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Asks the processor to bring the first line of packet `id` (the forwarding fields) into
    /// cache: a hint, with no effect on results. For a packet that will be handled a few events
    /// from now, after waiting in a queue long enough to leave the caches.
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.slots.get(id as usize) {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch never faults and has no effect on memory contents.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const Packet as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }

    /// Packets currently allocated (in queues, on links or in delay boxes).
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn peak(&self) -> usize {
        self.peak
    }
}
