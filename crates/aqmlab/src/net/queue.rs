//! A router output queue: the one place that acts on an AQM's decisions and counts them.

use std::collections::VecDeque;

use crate::aqm::{Aqm, DropCause, QueueLen, Verdict};
use crate::packet::{Ecn, PacketStore, PktId};
use crate::rng::Rng;
use crate::units::Time;

/// Counters of one queue. Every packet offered is counted exactly once as enqueued or dropped,
/// and every enqueued packet once as departed or dropped at dequeue (or still queued).
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub drop_bytes: u64,
    pub marks: u64,
    /// Largest occupancy ever reached (checked against the limit by tests).
    pub peak_packets: u32,
    pub peak_bytes: u64,
    /// Runs of consecutive drops (a run ends at the next accepted packet): histogram by length,
    /// index = run length (index 0 unused), the last bin collects longer runs.
    pub drop_runs: Vec<u64>,
    current_run: u32,
}

impl QueueStats {
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }

    fn count_drop(&mut self, cause: DropCause, bytes: u32) {
        match cause {
            DropCause::Early => self.drops_early += 1,
            DropCause::Forced => self.drops_forced += 1,
            DropCause::Overflow => self.drops_overflow += 1,
        }
        self.drop_bytes += bytes as u64;
        self.current_run += 1;
    }

    fn end_run(&mut self) {
        if self.current_run > 0 {
            const MAX_RUN: usize = 64;
            let idx = (self.current_run as usize).min(MAX_RUN);
            if self.drop_runs.len() <= idx {
                self.drop_runs.resize(MAX_RUN + 1, 0);
            }
            self.drop_runs[idx] += 1;
            self.current_run = 0;
        }
    }
}

/// What happened to a packet offered to the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Queued,
    Dropped(DropCause),
}

pub struct Queue {
    pub aqm: Aqm,
    fifo: VecDeque<PktId>,
    len: QueueLen,
    pub stats: QueueStats,
    pub rng: Rng,
}

impl Queue {
    pub fn new(aqm: Aqm, rng: Rng) -> Self {
        Queue {
            aqm,
            fifo: VecDeque::new(),
            len: QueueLen::default(),
            stats: QueueStats::default(),
            rng,
        }
    }

    #[inline]
    pub fn len(&self) -> QueueLen {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// Offers an arriving packet. A dropped packet is freed here.
    #[inline]
    pub fn enqueue(&mut self, now: Time, id: PktId, store: &mut PacketStore) -> Offer {
        let pkt = store.get_mut(id);
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += pkt.size as u64;
        let verdict = self.aqm.on_enqueue(now, pkt, self.len, &mut self.rng);
        match verdict {
            Verdict::Pass | Verdict::Mark => {
                if verdict == Verdict::Mark {
                    debug_assert!(pkt.ecn.is_ect(), "AQM marked a non-ECT packet");
                    pkt.ecn = Ecn::Ce;
                    self.stats.marks += 1;
                }
                pkt.enqueued_at = now;
                self.len.packets += 1;
                self.len.bytes += pkt.size as u64;
                self.fifo.push_back(id);
                self.stats.peak_packets = self.stats.peak_packets.max(self.len.packets);
                self.stats.peak_bytes = self.stats.peak_bytes.max(self.len.bytes);
                self.stats.end_run();
                Offer::Queued
            },
            Verdict::Drop(cause) => {
                self.stats.count_drop(cause, pkt.size);
                store.free(id);
                Offer::Dropped(cause)
            },
        }
    }

    /// Takes the next packet to transmit, applying dequeue-time decisions (CoDel). Packets
    /// dropped at the head are freed and counted; `None` means the queue is (now) empty, which
    /// starts an idle period.
    #[inline]
    pub fn dequeue(&mut self, now: Time, store: &mut PacketStore) -> Option<PktId> {
        while let Some(id) = self.fifo.pop_front() {
            let pkt = store.get_mut(id);
            self.len.packets -= 1;
            self.len.bytes -= pkt.size as u64;
            match self.aqm.on_dequeue(now, pkt, self.len, &mut self.rng) {
                Verdict::Pass => {},
                Verdict::Mark => {
                    pkt.ecn = Ecn::Ce;
                    self.stats.marks += 1;
                },
                Verdict::Drop(cause) => {
                    self.stats.count_drop(cause, pkt.size);
                    store.free(id);
                    continue;
                },
            }
            self.stats.departures += 1;
            self.stats.departure_bytes += pkt.size as u64;
            return Some(id);
        }
        self.aqm.on_idle(now);
        None
    }
}
