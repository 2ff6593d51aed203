//! CAKE (Common Applications Kept Enhanced; Høiland-Jørgensen, Täht and Morton, "Piece of
//! CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN 2018,
//! arXiv 1804.07617; Linux `net/sched/sch_cake.c`), with tc-cake(8)'s parameters.
//!
//! * `tins`: Diffserv classes; `hash`: set-associative flow and host hashing; `flow`/`tin`:
//!   the DRR++ state; `cobalt`: the per-flow AQM; `shaper`: the deficit shaper and overhead
//!   compensation. This module is the scheduler that joins them (Linux `cake_enqueue`,
//!   `cake_dequeue`, `cake_drop`).
//! * The packet FIFOs live in `net::queue` (`Storage::Tins`, tin-major, 1024 per tin), which
//!   drives this scheduler: `classify` → `on_enqueued` → `overflow_victim`/
//!   `on_overflow_drop` at enqueue; `select` → `on_flow_empty` or `on_dequeue` at dequeue.

pub mod ack;
pub mod cobalt;
pub mod config;
pub mod flow;
pub mod hash;
mod overflow;
pub mod shaper;
pub mod tin;
pub mod tins;

use ack::AckFilter;
use cobalt::{CobaltParams, Signal};
use flow::{List, Set};
use hash::{host_hash, FlowMode, DST_SALT, QUEUES, SRC_SALT};
use overflow::OverflowHeap;
use shaper::{advance_tin, Overhead, Rate, Shaper};
use tin::{ewma, Tin};
use tins::Diffserv;

use super::{DropCause, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::units::{Time, MS};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CakeParams {
    /// Shaped rate in bytes/s (tc `bandwidth`, given in bits); 0 = unlimited. In the results
    /// as `bandwidth_mbps` (Mb/s, the project's unit for rates; 0 = unlimited), not as a bare
    /// number whose unit a reader would have to guess (issue 36).
    #[serde(rename = "bandwidth_mbps", serialize_with = "bytes_per_s_as_mbps")]
    pub bandwidth: u64,
    pub diffserv: Diffserv,
    pub flow_mode: FlowMode,
    /// tc `rtt` (COBALT's interval before the MTU adjustment).
    pub rtt: Time,
    pub target: Time,
    pub overhead: Overhead,
    /// tc `memlimit` in bytes of queued packets; `None`: Linux's automatic limit.
    pub memlimit: Option<u64>,
    /// Bytes (IP MTU; Linux's `psched_mtu` adds the 14-byte Ethernet header its lengths
    /// include).
    pub mtu: u32,
    /// Linux `sch->limit` (packets), which only caps the automatic memory limit.
    pub limit: u32,
    pub ack_filter: AckFilter,
    /// COBALT's `rec_inv_sqrt` starts at 0 (Linux `cobalt_vars_init`), not 1.0.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub linux_cobalt_init: bool,
}

/// A rate in bytes/s written as Mb/s.
fn bytes_per_s_as_mbps<S: serde::Serializer>(rate: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(*rate as f64 * 8e-6)
}

impl CakeParams {
    /// tc-cake defaults: unlimited, diffserv3, triple-isolate, rtt 100 ms, target 5 ms, no
    /// overhead, automatic memory limit, limit 10240.
    pub fn linux_defaults() -> Self {
        CakeParams {
            bandwidth: 0,
            diffserv: Diffserv::Diffserv3,
            flow_mode: FlowMode::TripleIsolate,
            rtt: 100 * MS,
            target: 5 * MS,
            overhead: Overhead::default(),
            memlimit: None,
            mtu: 1500,
            limit: 10240,
            ack_filter: AckFilter::NoAckFilter,
            linux_cobalt_init: false,
        }
    }
}

/// CAKE's random draws: 16 bits that dither a flow's quantum (Linux `get_random_u16` in
/// `cake_get_flow_quantum`) and 32 bits that BLUE compares with `p_drop` (`get_random_u32`
/// in `cobalt_should_drop`). `Rng` in simulations; a replay answers with the words the
/// kernel's code consumed (`schedule_replay`).
pub trait CakeRandom {
    fn bits16(&mut self) -> u64;
    fn bits32(&mut self) -> u32;
}

impl CakeRandom for Rng {
    #[inline]
    fn bits16(&mut self) -> u64 {
        self.next_u64() >> 48
    }

    #[inline]
    fn bits32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}

/// What the dequeue side should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Nothing queued.
    Idle,
    /// The shaper holds every packet until this time.
    Wait(Time),
    /// Serve this flow (tin, queue).
    Flow(usize, usize),
}

#[derive(Clone, Debug)]
pub struct Cake {
    pub p: CakeParams,
    pub tins: Vec<Tin>,
    cur_tin: usize,
    pub shaper: Shaper,
    /// Bytes of queued packets, their peak, and the limit (Linux `buffer_used`,
    /// `buffer_max_used`, `buffer_limit`; Linux counts skb truesize).
    pub buffer_used: u64,
    pub buffer_max_used: u64,
    pub buffer_limit: u64,
    /// Source and destination host of each route (`learn_route`).
    route_hosts: Vec<(u32, u32)>,
    /// Packets queued.
    qlen: u32,
    /// Overflow drops (Linux `drop_overlimit`, summed over tins).
    pub drop_overlimit: u64,
    /// Which queue an overflow prunes (Linux's lazily kept max-heap).
    overflow: OverflowHeap,
    /// Dequeues the shaper held back, and arrivals to an empty queue it still held (Linux's
    /// `sch->qstats.overlimits` in `cake_dequeue` and `cake_enqueue`).
    pub overlimits: u64,
}

/// Linux `quantum_div[n] = 65535 / n`: a host's share of a flow quantum per bulk flow.
fn quantum_div(n: u32) -> u64 {
    65535 / n.max(1) as u64
}

impl Cake {
    pub fn new(p: CakeParams) -> Self {
        // Linux `cake_reconfigure` and `cake_set_rate`.
        let tins = p
            .diffserv
            .setup(p.bandwidth)
            .into_iter()
            .map(|s| {
                let rate = Rate::new(s.rate);
                let flow_quantum = if s.rate == 0 {
                    1514
                } else {
                    (s.rate >> 12).clamp(300, 1514) as u32
                };
                let mtu_time = rate.duration(p.mtu);
                let target = (mtu_time * 3 / 2).max(p.target);
                let interval = (p.rtt + target - p.target).max(2 * target);
                let cparams = CobaltParams {
                    interval,
                    target,
                    mtu_time,
                    p_inc: 1 << 24,
                    p_dec: 1 << 20,
                };
                let mut tin = Tin::new(rate, s.quantum, flow_quantum, cparams);
                if p.linux_cobalt_init {
                    for f in &mut tin.flows {
                        f.cvars.rec_inv_sqrt = 0;
                    }
                }
                tin
            })
            .collect();
        let buffer_limit = match p.memlimit {
            Some(m) => m,
            None => {
                // Four times the bandwidth-interval product, at least 4 MiB; unlimited when
                // unshaped; then at most `limit` MTUs.
                let auto = if p.bandwidth > 0 {
                    (p.bandwidth as u128 * p.rtt as u128 / 250_000_000).max(4 << 20) as u64
                } else {
                    u64::MAX
                };
                auto.min(p.limit as u64 * p.mtu as u64)
            },
        };
        Cake {
            shaper: Shaper {
                rate: Rate::new(p.bandwidth),
                ..Default::default()
            },
            tins,
            cur_tin: 0,
            buffer_used: 0,
            buffer_max_used: 0,
            buffer_limit,
            route_hosts: Vec::new(),
            qlen: 0,
            drop_overlimit: 0,
            overlimits: 0,
            overflow: OverflowHeap::default(),
            p,
        }
    }

    /// Storage slots: 1024 per tin.
    pub fn queues(&self) -> usize {
        self.tins.len() * QUEUES
    }

    /// Records the end hosts of `route` (the simulation calls this as routes are made).
    pub fn learn_route(&mut self, route: u32, src: u32, dst: u32) {
        let r = route as usize;
        if self.route_hosts.len() <= r {
            self.route_hosts.resize(r + 1, (u32::MAX, u32::MAX));
        }
        self.route_hosts[r] = (src, dst);
    }

    /// Tin and queue of an arriving packet (Linux `cake_select_tin`, `cake_hash`). aqmlab's
    /// packets carry no DSCP: every packet is DSCP 0 (`classify_dscp` takes one).
    pub fn classify(&mut self, pkt: &Packet) -> (usize, usize) {
        self.classify_dscp(pkt, 0)
    }

    pub fn classify_dscp(&mut self, pkt: &Packet, dscp: u8) -> (usize, usize) {
        let t = self.p.diffserv.tin_of(dscp);
        let (src, dst) = self
            .route_hosts
            .get(pkt.route as usize)
            .copied()
            .unwrap_or((u32::MAX, u32::MAX));
        let tin = &mut self.tins[t];
        let q = tin.table.lookup(
            &mut tin.flows,
            self.p.flow_mode,
            pkt.flow_hash,
            host_hash(src, SRC_SALT),
            host_hash(dst, DST_SALT),
        );
        (t, q)
    }

    /// The packet of `size` bytes was appended to queue (`t`, `i`) (Linux `cake_enqueue`
    /// after classification). A flow that becomes new gets its quantum from
    /// `cake_get_flow_quantum`, dithered by 16 random bits like every quantum Linux hands out.
    pub fn on_enqueued(
        &mut self,
        now: Time,
        t: usize,
        i: usize,
        size: u32,
        rng: &mut impl CakeRandom,
    ) {
        let (dsrc, ddst) = (self.p.flow_mode.dual_src(), self.p.flow_mode.dual_dst());
        let qempty = self.qlen == 0;
        let b = &mut self.tins[t];
        // A shaper schedule left in the past restarts now.
        if b.tin_backlog == 0 {
            b.time_next_packet = b.time_next_packet.max(now);
            if qempty && self.shaper.on_arrival_to_empty(now) {
                self.overlimits += 1;
            }
        }
        self.qlen += 1;
        b.stats.packets += 1;
        b.stats.bytes += size as u64;
        b.backlogs[i] += size;
        b.tin_backlog += size as u64;
        self.buffer_used += size as u64;
        self.buffer_max_used = self.buffer_max_used.max(self.buffer_used);
        match b.flows[i].set {
            Set::None | Set::Decaying => {
                if b.flows[i].set == Set::Decaying {
                    b.decaying_flow_count -= 1;
                }
                b.move_tail(i, List::New);
                b.flows[i].set = Set::Sparse;
                b.sparse_flow_count += 1;
                let load = b.host_load(i, dsrc, ddst);
                let dither = rng.bits16();
                b.flows[i].deficit =
                    ((b.flow_quantum as u64 * quantum_div(load) + dither) >> 16) as i32;
            },
            Set::SparseWait => {
                // Empty but already in the bulk rotation: now bulk.
                b.flows[i].set = Set::Bulk;
                b.sparse_flow_count -= 1;
                b.bulk_flow_count += 1;
                b.host_bulk(i, dsrc, ddst, true);
            },
            Set::Sparse | Set::Bulk => {},
        }
        let tins = &self.tins;
        self.overflow
            .after_enqueue(&|t, q| tins.get(t).map_or(0, |b| b.backlogs[q]), t, i);
    }

    /// An ACK made redundant by the one just appended to queue (`t`, `i`) was taken out of
    /// it (the ACK filter; Linux counts it in `ack_drops`, not the tin's drops).
    pub fn on_ack_dropped(&mut self, t: usize, i: usize, size: u32) {
        let b = &mut self.tins[t];
        b.backlogs[i] -= size;
        b.tin_backlog -= size as u64;
        self.buffer_used -= size as u64;
        self.qlen -= 1;
        b.stats.ack_drops += 1;
    }

    /// Over the memory limit: the queue (tin, index) whose head is dropped next, Linux's
    /// `cake_drop` choice (`overflow::OverflowHeap`: the longest queue as its lazily kept
    /// heap sees it).
    pub fn overflow_victim(&mut self) -> Option<(usize, usize)> {
        if self.buffer_used <= self.buffer_limit {
            return None;
        }
        let tins = &self.tins;
        Some(
            self.overflow
                .victim(&|t, q| tins.get(t).map_or(0, |b| b.backlogs[q])),
        )
    }

    /// The head of queue (`t`, `i`), `size` bytes, was dropped for overflow: BLUE's
    /// queue-full event on that flow.
    pub fn on_overflow_drop(&mut self, now: Time, t: usize, i: usize, size: u32) {
        let b = &mut self.tins[t];
        let cp = b.cparams;
        if b.flows[i].cvars.queue_full(&cp, now) {
            b.unresponsive_flow_count += 1;
        }
        b.backlogs[i] -= size;
        b.tin_backlog -= size as u64;
        self.buffer_used -= size as u64;
        self.qlen -= 1;
        b.flows[i].dropped += 1;
        b.stats.drops += 1;
        self.drop_overlimit += 1;
        let tins = &self.tins;
        self.overflow
            .after_drop(&|t, q| tins.get(t).map_or(0, |b| b.backlogs[q]));
    }

    /// The next flow to serve, or why none (Linux `cake_dequeue` up to the packet
    /// retrieval). `first`: the first pick of this dequeue (decaying flows go first then).
    pub fn select(&mut self, now: Time, first: bool, rng: &mut impl CakeRandom) -> Pick {
        if self.qlen == 0 {
            return Pick::Idle;
        }
        if let Some(t) = self.shaper.hold_until(now) {
            self.overlimits += 1;
            return Pick::Wait(t);
        }
        if self.shaper.rate.unlimited() {
            // Unshaped: DRR across tins by tin quantum.
            let n = self.tins.len();
            let (mut wrapped, mut empty) = (false, true);
            loop {
                let b = &mut self.tins[self.cur_tin];
                if b.tin_deficit >= 0 && b.active() {
                    break;
                }
                if b.tin_deficit <= 0 {
                    b.tin_deficit += b.tin_quantum as i32;
                }
                if b.active() {
                    empty = false;
                }
                self.cur_tin += 1;
                if self.cur_tin >= n {
                    self.cur_tin = 0;
                    if wrapped {
                        if empty {
                            return Pick::Idle;
                        }
                    } else {
                        wrapped = true;
                    }
                }
            }
        } else {
            // Shaped: the highest-priority tin within its share, else the earliest due.
            let mut best: Option<(usize, i64)> = None;
            for (t, b) in self.tins.iter().enumerate() {
                if b.active() {
                    let to_pkt = b.time_next_packet as i64 - now as i64;
                    if to_pkt <= 0 || best.is_none_or(|(_, bt)| to_pkt <= bt) {
                        best = Some((t, to_pkt));
                    }
                }
            }
            match best {
                Some((t, _)) => self.cur_tin = t,
                None => return Pick::Idle,
            }
        }
        let (dsrc, ddst) = (self.p.flow_mode.dual_src(), self.p.flow_mode.dual_dst());
        let t = self.cur_tin;
        let b = &mut self.tins[t];
        let mut first = first;
        loop {
            let head = if first && !b.decaying_flows.is_empty() {
                &b.decaying_flows
            } else if !b.new_flows.is_empty() {
                &b.new_flows
            } else if !b.old_flows.is_empty() {
                &b.old_flows
            } else if !b.decaying_flows.is_empty() {
                &b.decaying_flows
            } else {
                return Pick::Idle;
            };
            let i = *head.front().expect("non-empty list") as usize;
            first = false;
            if b.flows[i].deficit > 0 {
                return Pick::Flow(t, i);
            }
            // DRR++: out of credit. A sparse flow with packets becomes bulk; an empty one
            // is kept counted as sparse (SparseWait) while it rotates with the bulk flows.
            if b.flows[i].set == Set::Sparse {
                if b.backlogs[i] > 0 {
                    b.sparse_flow_count -= 1;
                    b.bulk_flow_count += 1;
                    b.flows[i].set = Set::Bulk;
                    b.host_bulk(i, dsrc, ddst, true);
                } else {
                    b.flows[i].set = Set::SparseWait;
                }
            }
            let load = b.host_load(i, dsrc, ddst);
            // Dithered by 16 random bits so rounding does not accumulate (Linux).
            let dither = rng.bits16();
            b.flows[i].deficit +=
                ((b.flow_quantum as u64 * quantum_div(load) + dither) >> 16) as i32;
            b.move_tail(i, List::Old);
        }
    }

    /// The selected flow had no packet: COBALT's empty event; the flow decays or leaves.
    pub fn on_flow_empty(&mut self, now: Time, t: usize, i: usize) {
        let (dsrc, ddst) = (self.p.flow_mode.dual_src(), self.p.flow_mode.dual_dst());
        let b = &mut self.tins[t];
        let cp = b.cparams;
        if b.flows[i].cvars.queue_empty(&cp, now) {
            b.unresponsive_flow_count = b.unresponsive_flow_count.saturating_sub(1);
        }
        let set = b.flows[i].set;
        if !b.flows[i].cvars.at_rest(now) {
            b.move_tail(i, List::Decaying);
            match set {
                Set::Bulk => {
                    b.bulk_flow_count -= 1;
                    b.host_bulk(i, dsrc, ddst, false);
                    b.decaying_flow_count += 1;
                },
                Set::Sparse | Set::SparseWait => {
                    b.sparse_flow_count -= 1;
                    b.decaying_flow_count += 1;
                },
                Set::Decaying | Set::None => {},
            }
            b.flows[i].set = Set::Decaying;
        } else {
            b.move_tail(i, List::None);
            match set {
                Set::Sparse | Set::SparseWait => b.sparse_flow_count -= 1,
                Set::Bulk => {
                    b.bulk_flow_count -= 1;
                    b.host_bulk(i, dsrc, ddst, false);
                },
                Set::Decaying => b.decaying_flow_count -= 1,
                Set::None => {},
            }
            b.flows[i].set = Set::None;
        }
    }

    /// COBALT's decision for the head packet of (`t`, `i`), just removed; `more`: the flow
    /// still has packets (the last one is never dropped). A passing packet is charged to the
    /// flow's and tin's deficits and the shapers at its adjusted length.
    pub fn on_dequeue(
        &mut self,
        now: Time,
        t: usize,
        i: usize,
        pkt: &Packet,
        more: bool,
        rng: &mut impl CakeRandom,
    ) -> Verdict {
        let b = &mut self.tins[t];
        b.backlogs[i] -= pkt.size;
        b.tin_backlog -= pkt.size as u64;
        self.buffer_used -= pkt.size as u64;
        self.qlen -= 1;
        let cp = b.cparams;
        let sojourn = now.saturating_sub(pkt.enqueued_at);
        let ect = pkt.ecn != Ecn::NotEct;
        let sig = b.flows[i]
            .cvars
            .should_drop(&cp, now, sojourn, ect, 0, || rng.bits32());
        if sig == Signal::Drop && more {
            b.flows[i].dropped += 1;
            b.stats.drops += 1;
            return Verdict::Drop(DropCause::Early);
        }
        let marked = b.flows[i].cvars.ecn_marked;
        b.stats.marks += marked as u64;
        b.stats.avge_delay = ewma(b.stats.avge_delay, sojourn, 8);
        let up = if sojourn > b.stats.peak_delay { 2 } else { 8 };
        b.stats.peak_delay = ewma(b.stats.peak_delay, sojourn, up);
        let down = if sojourn < b.stats.base_delay { 2 } else { 8 };
        b.stats.base_delay = ewma(b.stats.base_delay, sojourn, down);
        let len = self.p.overhead.adjusted_len(pkt.size);
        advance_tin(&mut b.time_next_packet, &b.rate, len, now);
        self.shaper.advance(len, false);
        b.flows[i].deficit -= len as i32;
        // Unused while shaped, where it only falls: it wraps as Linux's s32 does.
        b.tin_deficit = b.tin_deficit.wrapping_sub(len as i32);
        self.overflow.after_dequeue();
        if marked && pkt.ecn.is_ect() {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    /// Flows with packets or decaying state, over all tins (the queue trace's probe).
    pub fn active_flows(&self) -> usize {
        self.tins
            .iter()
            .map(|b| (b.sparse_flow_count + b.bulk_flow_count + b.decaying_flow_count) as usize)
            .sum()
    }

    /// tc's statistics: per tin in tc's order (`tins`), delays in µs, and the global
    /// `capacity_estimate` (bytes/s, the configured rate as Linux reports without autorate)
    /// and `memory_used` (peak bytes queued).
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        let tins: Vec<serde_json::Value> = self
            .p
            .diffserv
            .stats_order()
            .iter()
            .map(|&t| {
                let b = &self.tins[t];
                let s = &b.stats;
                let w = &b.table.ways;
                serde_json::json!({
                    "thresh": b.rate.bytes_per_sec,
                    "target_us": b.cparams.target / 1000,
                    "interval_us": b.cparams.interval / 1000,
                    "av_delay": s.avge_delay / 1000,
                    "sp_delay": s.base_delay / 1000,
                    "pk_delay": s.peak_delay / 1000,
                    "pkts": s.packets,
                    "bytes": s.bytes,
                    "drops": s.drops,
                    "marks": s.marks,
                    "ack_drops": s.ack_drops,
                    "sp_flows": b.sp_flows(),
                    "bk_flows": b.bulk_flow_count,
                    "un_flows": b.unresponsive_flow_count,
                    "way_inds": w.hits,
                    "way_miss": w.misses,
                    "way_cols": w.collisions,
                    "quantum": b.flow_quantum,
                })
            })
            .collect();
        let mut m = serde_json::Map::new();
        m.insert("capacity_estimate".into(), self.p.bandwidth.into());
        m.insert(
            "memory_limit".into(),
            self.buffer_limit.min(u32::MAX as u64).into(),
        );
        m.insert("memory_used".into(), self.buffer_max_used.into());
        m.insert("tins".into(), tins.into());
        m
    }
}

#[cfg(test)]
mod sched_tests;
