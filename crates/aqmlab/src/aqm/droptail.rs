//! Drop-tail (FIFO with a finite buffer).
//!
//! An arriving packet is dropped when it would not fit: in packet mode when `limit` packets
//! are already queued, in byte mode when the queued bytes plus the packet would exceed `limit`
//! bytes. The packet being transmitted is not in the queue (it is on the link), as in ns-2
//! and in a BSD/dummynet interface queue, so the buffer holds `limit` packets waiting plus
//! one in service. (ns-2's DropTail admits only `limit − 1` waiting; see docs/queues.md.)

use super::{DropCause, QueueLen, QueueUnit, Verdict};
use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::Time;

#[derive(Clone, Debug, serde::Serialize)]
pub struct DropTail {
    pub limit: u64,
    pub unit: QueueUnit,
}

impl DropTail {
    pub fn new(limit: u64, unit: QueueUnit) -> Self {
        DropTail { limit, unit }
    }

    #[inline]
    pub fn on_enqueue(
        &mut self,
        _now: Time,
        pkt: &Packet,
        q: QueueLen,
        _rng: &mut impl UniformSource,
    ) -> Verdict {
        let full = match self.unit {
            QueueUnit::Packets => q.packets as u64 >= self.limit,
            QueueUnit::Bytes => q.bytes + pkt.size as u64 > self.limit,
        };
        if full {
            Verdict::Drop(DropCause::Overflow)
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};

    fn pkt(size: u32) -> Packet {
        Packet {
            size,
            ..Default::default()
        }
    }

    #[test]
    fn packet_limit_admits_exactly_limit_packets() {
        let mut d = DropTail::new(3, QueueUnit::Packets);
        let mut r = Rng::stream(0, StreamKind::Test, 0);
        let q = |n| QueueLen {
            packets: n,
            bytes: n as u64 * 1500,
        };
        assert_eq!(d.on_enqueue(0, &pkt(1500), q(2), &mut r), Verdict::Pass);
        assert_eq!(
            d.on_enqueue(0, &pkt(1500), q(3), &mut r),
            Verdict::Drop(DropCause::Overflow)
        );
    }

    #[test]
    fn byte_limit_counts_the_arriving_packet() {
        let mut d = DropTail::new(3000, QueueUnit::Bytes);
        let mut r = Rng::stream(0, StreamKind::Test, 0);
        let q = QueueLen {
            packets: 1,
            bytes: 1500,
        };
        assert_eq!(d.on_enqueue(0, &pkt(1500), q, &mut r), Verdict::Pass);
        assert_eq!(
            d.on_enqueue(0, &pkt(1501), q, &mut r),
            Verdict::Drop(DropCause::Overflow)
        );
    }
}
