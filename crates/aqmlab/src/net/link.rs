//! A one-way link: an output queue, a transmitter of fixed rate and a propagation delay.
//!
//! A packet is serialized at the link's rate, then arrives at the far end `delay` later (plus
//! the connection's delay-box delay on links that leave a host). The queue holds packets
//! waiting; the one being serialized is on the link. Monitored links (the bottleneck) have one
//! event per packet when the last bit has been sent (`Simulation::tx_due`); the others
//! (`cut_through`) are drop-tail FIFOs computed analytically: a packet's start and end of
//! serialization are known when it is offered, so its arrival at the far end is scheduled at
//! once and the link has no event of its own.

use std::collections::VecDeque;

use super::framing::Framing;
use super::jitter::SendJitter;
use super::queue::Queue;
use crate::aqm::QueueLen;
use crate::packet::PktId;
use crate::rng::Rng;
use crate::units::{BitsPerSec, Time};

pub type LinkId = u32;

pub struct Link {
    pub rate: BitsPerSec,
    /// Link-layer framing: a packet's serialization time is that of its bytes on the wire.
    pub framing: Framing,
    pub delay: Time,
    pub queue: Queue,
    /// Packet being serialized, if any.
    pub in_service: Option<PktId>,
    /// Independent loss probability for packets on this link (lossy-path studies, tests).
    pub loss: f64,
    pub loss_rng: Rng,
    /// The link carries the per-flow delay box of its host (`[delay_box] placement`: the links
    /// leaving hosts, or those reaching them): a packet arrives `flow_delay` later.
    pub adds_flow_delay: bool,
    /// A host's uplink with `[delay_box] placement = "boxes"`: a packet leaves it carrying its
    /// receiver's box delay (`Simulation::hand_over_far_box`).
    pub hands_far_box: bool,
    /// The delay box releases packets on clock ticks (`[delay_box] tick_ms`).
    pub ticked_box: bool,
    /// `ticked_box || jitter.is_some()`: one test keeps the common path (exact delays, no
    /// jitter) as short as it was before either existed.
    pub emulated_host: bool,
    /// A host's send jitter before its interface (links leaving hosts; `topology.host_jitter_us`).
    /// Boxed: most runs have none, and the link's hot fields stay close together.
    pub jitter: Option<Box<SendJitter>>,
    /// Completed transmissions.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Packets lost to `loss`.
    pub lost: u64,
    /// Transmission time of every packet started so far (including the one in service).
    pub busy_time: Time,
    /// When the packet in service finishes.
    pub tx_end: Time,
    /// Size and serialization time of the packet in service (`bytes_sent_until`).
    pub tx_size: u32,
    pub tx_len: Time,
    /// The last two serialization times computed, by packet size, most recent first (most
    /// packets on a link have one of two sizes: a division per packet is worth saving).
    tx_memo: [(u32, Time); 2],
    /// Index of the bottleneck monitor watching this link, if any.
    pub monitor: Option<u8>,
    /// Scripted losses (tests, teaching): drop the next `count` packets that match.
    pub scripted: Vec<ScriptedLoss>,
    /// Cut-through scheduling (links without a monitor: the access links, drop-tail): a FIFO
    /// transmitter's schedule is known when a packet is offered (it starts when the link has
    /// sent everything accepted before it: `max(now, tx_end)`), so the packet's arrival at the
    /// far end is scheduled then, and the link needs no event and no stored queue. `waiting`
    /// keeps the start times of the packets that have not started yet (the ones a stored FIFO
    /// would hold), so drop-tail sees the exact occupancy. `in_service` is unused and
    /// `tx_end` says until when the link is busy. Same times as an end-of-serialization event
    /// per packet; only events at the very same nanosecond may run in another order.
    pub cut_through: bool,
    /// Observers of a bottleneck link (`sim/observe.rs`): a capture of the packets arriving
    /// at its queue; something watching the packets starting transmission (a capture, the
    /// per-source delays). Kept in the link, which the hot path has in hand, for its tests.
    pub tap_in: bool,
    pub observe_tx: bool,
    /// Cut-through links: (start of serialization, size) of accepted packets that start
    /// later than the last offer, in order, and their total bytes.
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    /// Rates in force before each change of `rate` (`set_rate`), as (time of the change, rate
    /// before it), for the mean capacity over a period; empty for a link whose rate never
    /// changed.
    rate_history: Vec<(Time, BitsPerSec)>,
}

/// Drops `count` packets carrying sequence number `seq` (a SYN when `syn`, else a data
/// segment), whatever their connection, after letting the first `skip` of them pass; with
/// `mark`, sets CE on them instead (as ns-2's error models with `markecn_`, whatever their ECN
/// capability). With `ack`, the packets are pure ACKs (no payload, SYN, FIN or RST) whose
/// acknowledgment number is `seq`. Each entry counts every matching packet, whether or not
/// another entry took it, so the n-th transmission of a segment (or the n-th ACK of a number,
/// duplicates sharing it) is `skip = n − 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedLoss {
    pub seq: u64,
    pub syn: bool,
    pub count: u32,
    pub mark: bool,
    pub ack: bool,
    pub skip: u32,
}

impl Link {
    /// Serialization time of an IP packet of `size` bytes: that of its bytes on the wire
    /// (`Framing::wire_bytes`, `BitsPerSec::tx_time`), memoised for the two sizes seen last:
    /// most links carry full data segments and pure ACKs in turn, which a single entry would
    /// miss every time (a 64-bit division each).
    #[inline]
    pub fn tx_time(&mut self, size: u32) -> Time {
        let [recent, older] = &mut self.tx_memo;
        if recent.0 != size {
            if older.0 == size {
                std::mem::swap(recent, older);
            } else {
                *older = *recent;
                *recent = (size, self.rate.tx_time(self.framing.wire_bytes(size)));
            }
        }
        recent.1
    }

    /// Time the transmitter has been busy up to `now` (exact: the packet in service, and on a
    /// cut-through link those accepted after it, count only for the part already sent; the
    /// link is busy without a gap from `now` to `tx_end`).
    pub fn busy_until(&self, now: Time) -> Time {
        self.busy_time - self.tx_end.saturating_sub(now)
    }

    /// IP bytes sent by `now`: the completed packets, and the packet in service for the part
    /// of it already on the wire. Throughput over a period is then at most the rate: counting
    /// a packet whole when it completes would credit a period with bytes sent before it began
    /// (one packet at 64 kb/s is a tenth of a 2-s period).
    pub fn bytes_sent_until(&self, now: Time) -> f64 {
        let mut b = self.tx_bytes as f64;
        if self.in_service.is_some() && self.tx_len > 0 {
            // A packet whose serialization ended at `now` but whose end has not been
            // processed yet (another event at the same instant came first) counts whole.
            let left = self.tx_end.saturating_sub(now).min(self.tx_len);
            b += self.tx_size as f64 * (self.tx_len - left) as f64 / self.tx_len as f64;
        }
        b
    }

    /// Occupancy at `now` of a cut-through link's (virtual) queue: accepted packets whose
    /// serialization starts after `now`. A packet starting exactly at `now` is on the link.
    #[inline]
    pub fn waiting_at(&mut self, now: Time) -> QueueLen {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= size as u64;
        }
        QueueLen {
            packets: self.waiting.len() as u32,
            bytes: self.waiting_bytes,
        }
    }

    /// A cut-through link accepted a packet of `size` bytes at `now`: it starts serializing
    /// at `max(now, tx_end)`; returns that start and the end of serialization. The link's
    /// counters (`tx_packets`, `tx_bytes`, `busy_time`) count it at once.
    #[inline]
    pub fn schedule_fifo(&mut self, now: Time, size: u32) -> (Time, Time) {
        self.schedule_fifo_from(now, now, size)
    }

    /// `schedule_fifo` of a packet accepted at `now` that can start no earlier than `ready`
    /// (≥ `now`, and not earlier than the `ready` of the packet before: a host's send jitter).
    #[inline(always)]
    pub fn schedule_fifo_from(&mut self, now: Time, ready: Time, size: u32) -> (Time, Time) {
        let tx = self.tx_time(size);
        let start = ready.max(self.tx_end);
        if start > now {
            self.waiting.push_back((start, size));
            self.waiting_bytes += size as u64;
        }
        self.tx_end = start + tx;
        self.busy_time += tx;
        self.tx_packets += 1;
        self.tx_bytes += size as u64;
        (start, self.tx_end)
    }

    /// Whether a scripted loss takes this packet (and consumes one of its drops); a scripted
    /// mark sets CE and lets it pass.
    #[inline]
    pub fn scripted_drop(&mut self, p: &mut crate::packet::Packet) -> bool {
        use crate::packet::flags::{FIN, RST, SYN};
        let pure_ack = p.len == 0 && !p.has(SYN) && !p.has(FIN) && !p.has(RST);
        let mut dropped = false;
        for s in self.scripted.iter_mut() {
            let matches = if s.ack {
                pure_ack && p.ack == s.seq
            } else if s.syn {
                p.has(SYN) && p.seq == s.seq
            } else {
                p.len > 0 && p.seq == s.seq
            };
            if !matches || s.count == 0 {
                continue;
            }
            if s.skip > 0 {
                s.skip -= 1;
                continue;
            }
            s.count -= 1;
            if s.mark {
                p.ecn = crate::packet::Ecn::Ce;
            } else {
                dropped = true;
            }
        }
        dropped
    }
}

impl Link {
    /// The link's rate becomes `rate` at `now` (a capacity step, as a shaper reconfigured
    /// mid-run: `tc qdisc change ... htb rate`). The packet in service finishes at the rate it
    /// started with; the next starts at the new one.
    pub fn set_rate(&mut self, now: Time, rate: BitsPerSec) {
        self.rate_history.push((now, self.rate));
        self.rate = rate;
        self.tx_memo = [(u32::MAX, 0); 2];
    }

    /// Mean rate over `[from, to)` in Mb/s, weighting each rate by the time it was in force:
    /// the capacity the period offered. The current rate when it never changed.
    pub fn mean_mbps(&self, from: Time, to: Time) -> f64 {
        if self.rate_history.is_empty() || to <= from {
            return self.rate.mbps();
        }
        let mut bits_ns = 0u128; // Σ rate · overlap, bit/s · ns
        let mut start = 0;
        let pieces = self
            .rate_history
            .iter()
            .copied()
            .chain(std::iter::once((Time::MAX, self.rate)));
        for (end, rate) in pieces {
            let (lo, hi) = (start.max(from), end.min(to));
            if hi > lo {
                bits_ns += rate.0 as u128 * (hi - lo) as u128;
            }
            start = end;
        }
        bits_ns as f64 / (to - from) as f64 * 1e-6
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
            framing: Framing::NONE,
            delay,
            queue,
            in_service: None,
            tx_size: 0,
            tx_len: 0,
            loss,
            loss_rng,
            adds_flow_delay,
            hands_far_box: false,
            ticked_box: false,
            emulated_host: false,
            jitter: None,
            tx_packets: 0,
            tx_bytes: 0,
            lost: 0,
            busy_time: 0,
            tx_end: 0,
            tx_memo: [(u32::MAX, 0); 2],
            monitor: None,
            scripted: Vec::new(),
            cut_through: false,
            tap_in: false,
            observe_tx: false,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            rate_history: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::config::AqmConfig;
    use crate::aqm::QueueUnit;
    use crate::rng::StreamKind;
    use crate::units::MS;

    /// After a step from 10 to 2 Mb/s at 1 s, a 1500-byte packet takes 6 ms instead of 1.2 ms;
    /// the mean capacity over [0.5 s, 2 s) is (10·0.5 + 2·1)/1.5 Mb/s.
    #[test]
    fn a_rate_step_changes_serialization_and_mean_capacity() {
        let q = Queue::new(
            AqmConfig::Droptail {
                limit: 10,
                unit: QueueUnit::Packets,
            }
            .build(BitsPerSec::from_mbps(10.0), 1500),
            Rng::stream(1, StreamKind::Queue, 0),
        );
        let mut l = Link::new(
            BitsPerSec::from_mbps(10.0),
            0,
            q,
            0.0,
            Rng::stream(1, StreamKind::LinkLoss, 0),
            false,
        );
        assert_eq!(l.tx_time(1500), 1_200_000);
        assert_eq!(l.mean_mbps(0, 1000 * MS), 10.0);
        l.set_rate(1000 * MS, BitsPerSec::from_mbps(2.0));
        assert_eq!(l.tx_time(1500), 6_000_000);
        let mean = l.mean_mbps(500 * MS, 2000 * MS);
        assert!((mean - 7.0 / 1.5).abs() < 1e-12, "{mean}");
        assert_eq!(l.mean_mbps(1000 * MS, 3000 * MS), 2.0);
    }

    /// Scripted ACK losses name an ACK by its number and its place among the pure ACKs of that
    /// number (`skip`); each entry counts every such ACK, even one another entry took, and
    /// data segments, SYNs and FINs carrying the number never count.
    #[test]
    fn scripted_ack_losses_count_their_place_among_duplicates() {
        use crate::packet::{flags, Packet};
        let mut l = cut_through_8mbps();
        let entry = |skip| ScriptedLoss {
            seq: 1000,
            syn: false,
            count: 1,
            mark: false,
            ack: true,
            skip,
        };
        l.scripted = vec![entry(0), entry(2)];
        let ack = |a: u64, fl: u8, len: u32| Packet {
            ack: a,
            flags: flags::ACK | fl,
            len,
            ..Packet::default()
        };
        let mut fates = Vec::new();
        for mut p in [
            ack(1000, 0, 536),        // data carrying the number: not an ACK
            ack(1000, flags::FIN, 0), // a FIN: not a pure ACK
            ack(999, 0, 0),           // another number
            ack(1000, 0, 0),          // 1st: the first entry's
            ack(1000, 0, 0),          // 2nd
            ack(1000, 0, 0),          // 3rd: the second entry's (it counted the 1st too)
            ack(1000, 0, 0),          // 4th: both entries spent
        ] {
            fates.push(l.scripted_drop(&mut p));
        }
        assert_eq!(fates, [false, false, false, true, false, true, false]);
    }

    /// A data segment's n-th transmission is `skip = n − 1`: entries for the 1st and 3rd
    /// transmissions of one segment take exactly those, and a mark entry sets CE on the
    /// packet it names without dropping it.
    #[test]
    fn scripted_data_losses_name_a_transmission() {
        use crate::packet::{Ecn, Packet};
        let mut l = cut_through_8mbps();
        let entry = |skip, mark| ScriptedLoss {
            seq: 5000,
            syn: false,
            count: 1,
            mark,
            ack: false,
            skip,
        };
        l.scripted = vec![entry(0, false), entry(2, false), entry(3, true)];
        let mut fates = Vec::new();
        for _ in 0..5 {
            let mut p = Packet {
                seq: 5000,
                len: 536,
                ..Packet::default()
            };
            fates.push((l.scripted_drop(&mut p), p.ecn == Ecn::Ce));
        }
        let expected = [(true, false), (false, false), (true, false), (false, true)];
        assert_eq!(fates[..4], expected);
        assert_eq!(fates[4], (false, false));
    }

    /// A cut-through 8 Mb/s link (1,000 bytes: 1 ms) with a drop-tail queue of 10 packets.
    fn cut_through_8mbps() -> Link {
        let rate = BitsPerSec::from_mbps(8.0);
        let aqm = AqmConfig::Droptail {
            limit: 10,
            unit: QueueUnit::Packets,
        }
        .build(rate, 1000);
        let q = Queue::new(aqm, Rng::stream(0, StreamKind::Test, 0));
        let mut l = Link::new(rate, 0, q, 0.0, Rng::stream(0, StreamKind::Test, 1), false);
        l.cut_through = true;
        l
    }

    /// Bytes sent by an instant: completed packets, the one in service pro rata, and whole
    /// once its serialization has ended even if its end is not processed yet. Over any
    /// period the difference is at most rate × period.
    #[test]
    fn bytes_sent_count_the_packet_in_service_pro_rata() {
        let mut l = cut_through_8mbps();
        l.tx_bytes = 3000;
        assert_eq!(l.bytes_sent_until(5 * MS), 3000.0);
        l.in_service = Some(0);
        (l.tx_size, l.tx_len, l.tx_end) = (1000, MS, 6 * MS);
        assert_eq!(l.bytes_sent_until(5 * MS), 3000.0);
        assert_eq!(l.bytes_sent_until(5 * MS + MS / 4), 3250.0);
        assert_eq!(l.bytes_sent_until(6 * MS), 4000.0);
        assert_eq!(l.bytes_sent_until(7 * MS), 4000.0);
    }

    /// A cut-through link's FIFO: back-to-back starts, the occupancy a stored queue would
    /// have (packets starting exactly now are on the link), busy time up to any instant.
    #[test]
    fn cut_through_fifo_schedule_and_occupancy() {
        let mut l = cut_through_8mbps();
        assert_eq!(l.schedule_fifo(0, 1000), (0, MS));
        assert_eq!(l.schedule_fifo(0, 1000), (MS, 2 * MS));
        assert_eq!(l.schedule_fifo(0, 500), (2 * MS, 2 * MS + MS / 2));
        assert_eq!(l.waiting_at(0).packets, 2);
        assert_eq!(l.waiting_at(0).bytes, 1500);
        assert_eq!(l.waiting_at(MS).packets, 1);
        assert_eq!(l.busy_until(MS + MS / 2), MS + MS / 2);
        assert_eq!(l.waiting_at(2 * MS).packets, 0);
        // Idle from 2.5 ms to 4 ms: the next packet starts when offered.
        assert_eq!(l.schedule_fifo(4 * MS, 1000), (4 * MS, 5 * MS));
        assert_eq!(l.waiting_at(4 * MS).packets, 0);
        assert_eq!(l.busy_until(10 * MS), 3 * MS + MS / 2);
        assert_eq!((l.tx_packets, l.tx_bytes), (4, 3500));
    }

    /// With Ethernet framing a packet takes the transmission time of its frame: at 8 Mb/s a
    /// 1,000-byte IP packet is 1,038 bytes on the wire (1.038 ms), a 40-byte ACK 84 (84 µs);
    /// the link counts IP bytes and is busy for the wire time.
    #[test]
    fn framing_stretches_serialization_not_ip_bytes() {
        let mut l = cut_through_8mbps();
        l.framing = Framing::ETHERNET;
        let us = crate::units::US;
        assert_eq!(l.schedule_fifo(0, 1000), (0, 1038 * us));
        assert_eq!(l.schedule_fifo(0, 40), (1038 * us, 1122 * us));
        assert_eq!(l.busy_until(10 * MS), 1122 * us);
        assert_eq!((l.tx_packets, l.tx_bytes), (2, 1040));
    }
}
