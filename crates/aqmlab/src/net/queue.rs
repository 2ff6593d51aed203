//! A router output queue: the one place that acts on an AQM's decisions and counts them.

use std::collections::VecDeque;

use crate::aqm::cake::ack::{self, AckFilter};
use crate::aqm::cake::Pick;
use crate::aqm::{Aqm, DropCause, QueueCounts, QueueLen, Verdict};
use crate::measure::histogram::DelayHistogram;
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
    /// Queueing delay (enqueue to start of transmission) of departing packets, when tracked
    /// (`Queue::track_sojourn`; the bottleneck queues are).
    pub sojourn: Option<Box<DelayHistogram>>,
    /// Largest occupancy ever reached (checked against the limit by tests).
    pub peak_packets: u32,
    pub peak_bytes: u64,
    /// Runs of consecutive drops of the aggregate, whatever their flows (a run ends at the next
    /// accepted packet): histogram by length (`measure::runs`).
    pub drop_runs: Vec<u64>,
    current_run: u32,
    /// Start of the measured period (the warm-up's end), and the drops after it of packets
    /// that had entered the queue before it (dropped at dequeue, or pushed out by an FQ-CoDel
    /// overflow). They are drops of the period but not of its arrivals, so a loss rate over
    /// the period leaves them out and stays within [0, 1].
    pub measured_from: Time,
    pub drops_of_earlier: u64,
}

impl QueueStats {
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }

    /// The counters tc's statistics are derived from (`Aqm::qdisc_stats`).
    pub fn counts(&self) -> QueueCounts {
        QueueCounts {
            arrivals: self.arrivals,
            drops_early: self.drops_early,
            drops_forced: self.drops_forced,
            drops_overflow: self.drops_overflow,
            marks: self.marks,
            peak_packets: self.peak_packets,
        }
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
            crate::measure::runs::count_run(&mut self.drop_runs, self.current_run as u64);
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

/// Where the queued packets wait: one FIFO, one FIFO per flow (FQ-CoDel, FQ-PIE), or DualPI2's C and
/// L FIFOs (indices `dualpi2::C`, `dualpi2::L`). The deques keep their capacity, so
/// steady-state operation does not allocate.
enum Storage {
    Fifo(VecDeque<PktId>),
    Flows(Vec<VecDeque<PktId>>),
    Dual([VecDeque<PktId>; 2]),
    /// CAKE: 1024 queues per tin, tin-major.
    Tins(Vec<VecDeque<PktId>>),
}

/// Drops the head of `q` for overflow: counted, freed; returns its id and size.
#[inline]
fn drop_head(
    q: &mut VecDeque<PktId>,
    store: &mut PacketStore,
    len: &mut QueueLen,
    stats: &mut QueueStats,
) -> (PktId, u32) {
    let vid = q.pop_front().expect("victim flow has packets");
    let vp = store.get(vid);
    let vsize = vp.size;
    len.packets -= 1;
    len.bytes -= vsize as u64;
    stats.count_drop(DropCause::Overflow, vsize);
    if vp.enqueued_at < stats.measured_from {
        stats.drops_of_earlier += 1;
    }
    store.free(vid);
    (vid, vsize)
}

/// What `Queue::pick_scheduled` found: a packet and the discipline's verdict on it, a flow
/// found empty (pick again), or nothing to send now.
enum Picked {
    Packet(PktId, Verdict),
    Again,
    Nothing,
}

pub struct Queue {
    pub aqm: Aqm,
    storage: Storage,
    len: QueueLen,
    pub stats: QueueStats,
    pub rng: Rng,
    /// Set when a dequeue found packets but a shaper (CAKE's) holds them: the time to ask
    /// again. The link takes it (`take_wake`); other disciplines never set it.
    wake_at: Option<Time>,
}

impl Queue {
    pub fn new(aqm: Aqm, rng: Rng) -> Self {
        let storage = match (&aqm, aqm.flow_buckets()) {
            (_, Some(n)) => Storage::Flows((0..n).map(|_| VecDeque::new()).collect()),
            (Aqm::DualPi2(_), None) => Storage::Dual([VecDeque::new(), VecDeque::new()]),
            (Aqm::Cake(c), None) => {
                Storage::Tins((0..c.queues()).map(|_| VecDeque::new()).collect())
            },
            _ => Storage::Fifo(VecDeque::new()),
        };
        Queue {
            aqm,
            storage,
            len: QueueLen::default(),
            stats: QueueStats::default(),
            rng,
            wake_at: None,
        }
    }

    /// The time a shaper asked to be served again after the last dequeue returned `None`
    /// with packets queued (CAKE's `bandwidth`), cleared by the call.
    #[inline]
    pub fn take_wake(&mut self) -> Option<Time> {
        self.wake_at.take()
    }

    /// Records the queueing delay of every departing packet (0.1 ms bins up to 2 s).
    pub fn track_sojourn(&mut self) {
        self.stats.sojourn = Some(Box::new(DelayHistogram::new(
            100 * crate::units::US,
            20_000,
        )));
    }

    #[inline]
    pub fn len(&self) -> QueueLen {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len.packets == 0
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
                let size = pkt.size;
                self.len.packets += 1;
                self.len.bytes += size as u64;
                self.stats.end_run();
                let offer = match &mut self.storage {
                    Storage::Fifo(fifo) => {
                        fifo.push_back(id);
                        Offer::Queued
                    },
                    _ => self.enqueue_scheduled(now, id, store),
                };
                // After any overflow drop, so the peak never exceeds the limit.
                self.stats.peak_packets = self.stats.peak_packets.max(self.len.packets);
                self.stats.peak_bytes = self.stats.peak_bytes.max(self.len.bytes);
                offer
            },
            Verdict::Drop(cause) => {
                self.stats.count_drop(cause, pkt.size);
                store.free(id);
                Offer::Dropped(cause)
            },
        }
    }

    /// `dequeue`'s choice of the next packet for the disciplines with their own storage
    /// (FQ-CoDel, FQ-PIE, DualPI2, CAKE) and the discipline's verdict on it. Out of line, as
    /// `enqueue_scheduled`, so that the single-FIFO path stays short.
    #[inline(never)]
    fn pick_scheduled(&mut self, now: Time, store: &mut PacketStore, first: &mut bool) -> Picked {
        let (id, verdict) = match &mut self.storage {
            Storage::Fifo(_) => unreachable!("FIFO storage is handled by dequeue"),
            Storage::Flows(flows) => {
                let Some(flow) = self.aqm.fq_select() else {
                    self.aqm.on_idle(now);
                    return Picked::Nothing;
                };
                let Some(id) = flows[flow].pop_front() else {
                    self.aqm.fq_flow_empty(flow);
                    return Picked::Again;
                };
                let pkt = store.get(id);
                self.len.packets -= 1;
                self.len.bytes -= pkt.size as u64;
                (id, self.aqm.fq_dequeue(flow, now, pkt, self.len))
            },
            Storage::Dual(queues) => {
                let Aqm::DualPi2(dp) = &mut self.aqm else {
                    unreachable!("dual storage belongs to DualPI2")
                };
                let Some(class) = dp.select(queues[0].len(), queues[1].len()) else {
                    self.aqm.on_idle(now);
                    return Picked::Nothing;
                };
                let id = queues[class]
                    .pop_front()
                    .expect("selected queue has packets");
                let next_head = queues[class].front().map(|&n| store.get(n).enqueued_at);
                let pkt = store.get(id);
                self.len.packets -= 1;
                self.len.bytes -= pkt.size as u64;
                let v = dp.on_dequeue(class, now, pkt, self.len, next_head, &mut self.rng);
                (id, v)
            },
            Storage::Tins(queues) => {
                let Aqm::Cake(cake) = &mut self.aqm else {
                    unreachable!("tin storage belongs to CAKE")
                };
                let (tin, q) = match cake.select(now, *first, &mut self.rng) {
                    Pick::Flow(t, q) => (t, q),
                    Pick::Wait(t) => {
                        self.wake_at = Some(t);
                        return Picked::Nothing;
                    },
                    Pick::Idle => return Picked::Nothing,
                };
                *first = false;
                let k = tin * crate::aqm::cake::hash::QUEUES + q;
                let Some(id) = queues[k].pop_front() else {
                    cake.on_flow_empty(now, tin, q);
                    return Picked::Again;
                };
                let pkt = store.get(id);
                self.len.packets -= 1;
                self.len.bytes -= pkt.size as u64;
                let more = !queues[k].is_empty();
                (id, cake.on_dequeue(now, tin, q, pkt, more, &mut self.rng))
            },
        };
        Picked::Packet(id, verdict)
    }

    /// `enqueue` for the disciplines with their own storage (FQ-CoDel, FQ-PIE, CAKE,
    /// DualPI2), once the packet is accepted and counted. Kept out of line so that the
    /// single-FIFO path of `enqueue`, every packet of the historic queues, stays short.
    #[inline(never)]
    fn enqueue_scheduled(&mut self, now: Time, id: PktId, store: &mut PacketStore) -> Offer {
        let pkt = store.get(id);
        let size = pkt.size;
        match &mut self.storage {
            Storage::Fifo(_) => unreachable!("FIFO storage is handled by enqueue"),
            Storage::Flows(flows) => {
                let flow = self.aqm.fq_enqueued(pkt);
                flows[flow].push_back(id);
                // FQ-CoDel's overflow: drop from the head of the fattest flow (possibly
                // this one).
                let mut offer = Offer::Queued;
                while let Some(victim) = self.aqm.fq_overflow_victim(self.len) {
                    let (vid, vsize) =
                        drop_head(&mut flows[victim], store, &mut self.len, &mut self.stats);
                    self.aqm.fq_head_dropped(victim, vsize);
                    if vid == id {
                        offer = Offer::Dropped(DropCause::Overflow);
                    }
                }
                offer
            },
            Storage::Tins(queues) => {
                let Aqm::Cake(cake) = &mut self.aqm else {
                    unreachable!("tin storage belongs to CAKE")
                };
                let (tin, q) = cake.classify(pkt);
                let k = tin * crate::aqm::cake::hash::QUEUES + q;
                queues[k].push_back(id);
                cake.on_enqueued(now, tin, q, size, &mut self.rng);
                if cake.p.ack_filter != AckFilter::NoAckFilter {
                    let aggressive = cake.p.ack_filter == AckFilter::AckFilterAggressive;
                    let fifo = &queues[k];
                    let earlier = fifo.iter().take(fifo.len() - 1).map(|&e| store.get(e));
                    if let Some(pos) = ack::victim(store.get(id), earlier, aggressive) {
                        let vid = queues[k].remove(pos).expect("victim is queued");
                        let vp = store.get(vid);
                        let vsize = vp.size;
                        self.len.packets -= 1;
                        self.len.bytes -= vsize as u64;
                        self.stats.count_drop(DropCause::Forced, vsize);
                        if vp.enqueued_at < self.stats.measured_from {
                            self.stats.drops_of_earlier += 1;
                        }
                        store.free(vid);
                        cake.on_ack_dropped(tin, q, vsize);
                    }
                }
                // Over the memory limit: drop heads of the longest queue (any tin).
                let mut offer = Offer::Queued;
                while let Some((vt, vq)) = cake.overflow_victim() {
                    let vk = vt * crate::aqm::cake::hash::QUEUES + vq;
                    let (vid, vsize) =
                        drop_head(&mut queues[vk], store, &mut self.len, &mut self.stats);
                    cake.on_overflow_drop(now, vt, vq, vsize);
                    if vid == id {
                        offer = Offer::Dropped(DropCause::Overflow);
                    }
                }
                offer
            },
            Storage::Dual(queues) => {
                let Aqm::DualPi2(dp) = &self.aqm else {
                    unreachable!("dual storage belongs to DualPI2")
                };
                queues[dp.enqueue_class()].push_back(id);
                Offer::Queued
            },
        }
    }

    /// Offers a packet to a FIFO that is computed analytically (a cut-through link): `waiting`
    /// is the occupancy a stored FIFO would have now. The packet is not stored; an accepted
    /// one is counted as departed at once (its departure time is already known), a dropped one
    /// is freed. Drop-tail only: the packet's sojourn is not tracked and nothing acts at
    /// dequeue.
    #[inline]
    pub fn offer_fifo(
        &mut self,
        now: Time,
        id: PktId,
        store: &mut PacketStore,
        waiting: QueueLen,
    ) -> Offer {
        debug_assert!(self.stats.sojourn.is_none());
        let Aqm::DropTail(droptail) = &mut self.aqm else {
            unreachable!("cut-through links are drop-tail")
        };
        let pkt = store.get_mut(id);
        let size = pkt.size;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += size as u64;
        // The drop-tail test itself, inlined (not through `Aqm::on_enqueue`'s dispatch): this
        // runs for every packet on every access link.
        match droptail.on_enqueue(now, pkt, waiting, &mut self.rng) {
            Verdict::Drop(cause) => {
                self.stats.count_drop(cause, size);
                store.free(id);
                Offer::Dropped(cause)
            },
            _ => {
                pkt.enqueued_at = now;
                self.stats.end_run();
                self.stats.peak_packets = self.stats.peak_packets.max(waiting.packets + 1);
                self.stats.peak_bytes = self.stats.peak_bytes.max(waiting.bytes + size as u64);
                self.stats.departures += 1;
                self.stats.departure_bytes += size as u64;
                Offer::Queued
            },
        }
    }

    /// Takes the next packet to transmit, applying dequeue-time decisions (CoDel). Packets
    /// dropped at the head are freed and counted; `None` means the queue is (now) empty, which
    /// starts an idle period.
    #[inline]
    pub fn dequeue(&mut self, now: Time, store: &mut PacketStore) -> Option<PktId> {
        // CAKE serves decaying flows first only on the first pick of a dequeue.
        let mut first = true;
        loop {
            let (id, verdict) = match &mut self.storage {
                Storage::Fifo(fifo) => {
                    let Some(id) = fifo.pop_front() else {
                        self.aqm.on_idle(now);
                        return None;
                    };
                    // The next packet to leave has waited behind this one and is likely cold;
                    // it is needed at the end of this one's serialization.
                    if let Some(&next) = fifo.front() {
                        store.prefetch(next);
                    }
                    let pkt = store.get(id);
                    self.len.packets -= 1;
                    self.len.bytes -= pkt.size as u64;
                    (id, self.aqm.on_dequeue(now, pkt, self.len, &mut self.rng))
                },
                _ => match self.pick_scheduled(now, store, &mut first) {
                    Picked::Packet(id, verdict) => (id, verdict),
                    Picked::Again => continue,
                    Picked::Nothing => return None,
                },
            };
            let pkt = store.get_mut(id);
            match verdict {
                Verdict::Pass => {},
                Verdict::Mark => {
                    debug_assert!(pkt.ecn.is_ect(), "AQM marked a non-ECT packet");
                    pkt.ecn = Ecn::Ce;
                    self.stats.marks += 1;
                },
                Verdict::Drop(cause) => {
                    self.stats.count_drop(cause, pkt.size);
                    if pkt.enqueued_at < self.stats.measured_from {
                        self.stats.drops_of_earlier += 1;
                    }
                    store.free(id);
                    continue;
                },
            }
            self.stats.departures += 1;
            self.stats.departure_bytes += pkt.size as u64;
            if let Some(h) = &mut self.stats.sojourn {
                h.add(now - pkt.enqueued_at);
            }
            return Some(id);
        }
    }
}
