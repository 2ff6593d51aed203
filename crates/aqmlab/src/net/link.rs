//! A one-way link: an output queue, a transmitter of fixed rate and a propagation delay.
//!
//! A packet is serialized at the link's rate, then arrives at the far end `delay` later (plus
//! the connection's delay-box delay on links that leave a host). The queue holds packets
//! waiting; the one being serialized is on the link. Monitored links (the bottleneck) have one
//! event per packet, `TxDone`, when the last bit has been sent; the others schedule the
//! packet's arrival directly (`cut_through`).

use super::queue::Queue;
use crate::packet::PktId;
use crate::rng::Rng;
use crate::units::{BitsPerSec, Time};

pub type LinkId = u32;

pub struct Link {
    pub rate: BitsPerSec,
    pub delay: Time,
    pub queue: Queue,
    /// Packet being serialized, if any.
    pub in_service: Option<PktId>,
    /// Independent loss probability for packets on this link (lossy-path studies, tests).
    pub loss: f64,
    pub loss_rng: Rng,
    /// Links leaving a host add the connection's per-flow delay (delay box at the edge).
    pub adds_flow_delay: bool,
    /// Completed transmissions.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Packets lost to `loss`.
    pub lost: u64,
    /// Transmission time of every packet started so far (including the one in service).
    pub busy_time: Time,
    /// When the packet in service finishes.
    pub tx_end: Time,
    /// Last serialization time computed, by packet size (most packets on a link have one of
    /// two sizes: a 128-bit division per packet is worth saving).
    tx_memo: (u32, Time),
    /// Index of the bottleneck monitor watching this link, if any.
    pub monitor: Option<u8>,
    /// Scripted losses (tests, teaching): drop the next `count` packets that match.
    pub scripted: Vec<ScriptedLoss>,
    /// Cut-through scheduling (links without a monitor: the access links): a packet's arrival
    /// at the far end is scheduled when its transmission starts, and the link needs an event
    /// of its own (`TxDone`, "free") only when packets wait in its queue. `in_service` is then
    /// unused and `tx_end` says until when the link is busy. Same times as the two-event way
    /// (transmission end, then arrival); only events at the same nanosecond may run in
    /// another order.
    pub cut_through: bool,
    /// A cut-through link's "free" event is scheduled.
    pub free_pending: bool,
}

/// Drops the next `count` packets carrying sequence number `seq` (a SYN when `syn`, else a
/// data segment), whatever their connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedLoss {
    pub seq: u64,
    pub syn: bool,
    pub count: u32,
}

impl Link {
    /// Serialization time of a packet of `size` bytes (`BitsPerSec::tx_time`, memoised).
    #[inline]
    pub fn tx_time(&mut self, size: u32) -> Time {
        if self.tx_memo.0 != size {
            self.tx_memo = (size, self.rate.tx_time(size));
        }
        self.tx_memo.1
    }

    /// Time the transmitter has been busy up to `now` (exact: the packet in service counts
    /// only for the part already sent).
    pub fn busy_until(&self, now: Time) -> Time {
        match self.in_service {
            Some(_) => self.busy_time - self.tx_end.saturating_sub(now),
            None => self.busy_time,
        }
    }

    /// Whether a scripted loss takes this packet (and consumes one of its drops).
    #[inline]
    pub fn scripted_drop(&mut self, p: &crate::packet::Packet) -> bool {
        for s in self.scripted.iter_mut() {
            let kind = if s.syn {
                p.has(crate::packet::flags::SYN)
            } else {
                p.len > 0
            };
            if s.count > 0 && kind && p.seq == s.seq {
                s.count -= 1;
                return true;
            }
        }
        false
    }
}

impl Link {
    pub fn new(
        rate: BitsPerSec,
        delay: Time,
        queue: Queue,
        loss: f64,
        loss_rng: Rng,
        adds_flow_delay: bool,
    ) -> Self {
        Link {
            rate,
            delay,
            queue,
            in_service: None,
            loss,
            loss_rng,
            adds_flow_delay,
            tx_packets: 0,
            tx_bytes: 0,
            lost: 0,
            busy_time: 0,
            tx_end: 0,
            tx_memo: (u32::MAX, 0),
            monitor: None,
            scripted: Vec::new(),
            cut_through: false,
            free_pending: false,
        }
    }
}
