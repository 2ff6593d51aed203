//! FQ-CoDel (RFC 8290; Linux `net/sched/sch_fq_codel.c`): flow queues served by deficit round
//! robin, each with its own CoDel state.
//!
//! * Classification: `flow = ⌊flow_hash·flows / 2³²⌋` (Linux `reciprocal_scale`; the sender sets
//!   `flow_hash`).
//! * Enqueue: the packet joins its flow's FIFO; a flow in neither list goes to the tail of
//!   `new_flows` with `deficit = quantum` (a flow that emptied but is still on `old_flows` is
//!   not new). When more than `limit` packets (or `memory_limit` bytes) are queued, packets are
//!   dropped from the **head** of the flow with the largest byte backlog until half of its
//!   backlog is gone or `drop_batch` packets were dropped; its CoDel `count` grows by the
//!   number dropped.
//! * Dequeue: take the head flow of `new_flows`, else of `old_flows`; if its `deficit ≤ 0`,
//!   `deficit += quantum` and move it to the tail of `old_flows`, repeat. Run CoDel on it; if
//!   it yields nothing (flow empty), a flow from `new_flows` moves to the tail of `old_flows`
//!   when that list is non-empty, otherwise the flow leaves the lists; repeat. Else
//!   `deficit −= size` and send.
//!
//! The packet FIFOs themselves live in `net::queue` (the one place that acts on decisions and
//! counts them); this module keeps the schedule, the per-flow backlogs and CoDel states.
//! Lists are fixed-capacity ring buffers (every operation is at a head or a tail), so the
//! scheduler allocates nothing per packet.

use std::collections::VecDeque;

use super::codel::{CodelParams, CodelState};
use super::{QueueLen, Verdict};
use crate::packet::Packet;
use crate::units::{Time, MS};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FqCodelParams {
    pub flows: u32,
    /// Bytes of credit per round.
    pub quantum: u32,
    /// Packets in all flows.
    pub limit: u32,
    /// Bytes in all flows (Linux counts buffer memory; here packet bytes).
    pub memory_limit: u64,
    pub drop_batch: u32,
    /// Per-flow CoDel (its `limit` is unused).
    pub codel: CodelParams,
}

impl FqCodelParams {
    /// Linux `fq_codel_init` defaults (quantum 1514 B, 32 MB memory limit, drop batch 64,
    /// CoDel target 5 ms / interval 100 ms, MTU 1514, ECN on) with `flows` buckets and a
    /// `limit`-packet buffer.
    pub fn linux_defaults(flows: u32, limit: u32) -> Self {
        FqCodelParams {
            flows,
            quantum: 1514,
            limit,
            memory_limit: 32 << 20,
            drop_batch: 64,
            codel: CodelParams {
                target: 5 * MS,
                interval: 100 * MS,
                mtu: 1514,
                ecn: true,
                limit,
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Clone, Debug)]
pub struct FqCodel {
    pub p: FqCodelParams,
    pub codel: Vec<CodelState>,
    pub deficit: Vec<i64>,
    pub backlog: Vec<u64>,
    list: Vec<List>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Overflow batch in progress: (flow, packets left to drop at most, bytes still to drop).
    batch: Option<(u32, u32, u64)>,
    batch_dropped: u32,
    /// Flows that were new when they got their first packet (RFC 8290 "new flow count").
    pub new_flow_count: u64,
    pub overflow_batches: u64,
}

impl FqCodel {
    pub fn new(p: FqCodelParams) -> Self {
        let n = p.flows as usize;
        FqCodel {
            codel: vec![CodelState::default(); n],
            deficit: vec![0; n],
            backlog: vec![0; n],
            list: vec![List::None; n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            batch: None,
            batch_dropped: 0,
            new_flow_count: 0,
            overflow_batches: 0,
            p,
        }
    }

    pub fn flows(&self) -> usize {
        self.p.flows as usize
    }

    #[inline]
    pub fn classify(&self, pkt: &Packet) -> usize {
        ((pkt.flow_hash as u64 * self.p.flows as u64) >> 32) as usize
    }

    /// The packet was appended to `flow`'s FIFO.
    #[inline]
    pub fn on_enqueued(&mut self, flow: usize, size: u32) {
        self.backlog[flow] += size as u64;
        if self.list[flow] == List::None {
            self.list[flow] = List::New;
            self.new_flows.push_back(flow as u32);
            self.deficit[flow] = self.p.quantum as i64;
            self.new_flow_count += 1;
        }
    }

    /// After an enqueue: the flow whose head packet must be dropped next, if over a limit.
    /// Call repeatedly (dropping the head each time and reporting it with `on_head_dropped`)
    /// until `None`; one batch per enqueue, as Linux.
    pub fn overflow_victim(&mut self, q: QueueLen) -> Option<usize> {
        match self.batch {
            None => {
                if q.packets <= self.p.limit && q.bytes <= self.p.memory_limit {
                    return None;
                }
                let (fat, &bytes) = self
                    .backlog
                    .iter()
                    .enumerate()
                    .max_by_key(|&(i, b)| (*b, std::cmp::Reverse(i)))?;
                if bytes == 0 {
                    return None;
                }
                self.overflow_batches += 1;
                self.batch = Some((fat as u32, self.p.drop_batch, bytes / 2));
                self.batch_dropped = 0;
                Some(fat)
            },
            Some((flow, left, bytes_left)) => {
                if left == 0 || bytes_left == 0 || self.backlog[flow as usize] == 0 {
                    self.codel[flow as usize].count += self.batch_dropped;
                    self.batch = None;
                    None
                } else {
                    Some(flow as usize)
                }
            },
        }
    }

    /// The head of `flow` was dropped by the overflow batch.
    pub fn on_head_dropped(&mut self, flow: usize, size: u32) {
        self.backlog[flow] -= size as u64;
        self.batch_dropped += 1;
        if let Some((f, left, bytes_left)) = &mut self.batch {
            debug_assert_eq!(*f as usize, flow);
            *left -= 1;
            *bytes_left = bytes_left.saturating_sub(size as u64);
        }
    }

    /// The flow to serve next (DRR), or `None` when no flow is active.
    #[inline]
    pub fn select(&mut self) -> Option<usize> {
        loop {
            let (flow, from_new) = match self.new_flows.front() {
                Some(&f) => (f as usize, true),
                None => (*self.old_flows.front()? as usize, false),
            };
            if self.deficit[flow] <= 0 {
                self.deficit[flow] += self.p.quantum as i64;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(flow as u32);
                self.list[flow] = List::Old;
                continue;
            }
            return Some(flow);
        }
    }

    /// The selected flow had no packet: CoDel's empty handling and the list move.
    #[inline]
    pub fn on_flow_empty(&mut self, flow: usize) {
        self.codel[flow].on_empty();
        match self.list[flow] {
            List::New => {
                self.new_flows.pop_front();
                if self.old_flows.is_empty() {
                    self.list[flow] = List::None;
                } else {
                    self.old_flows.push_back(flow as u32);
                    self.list[flow] = List::Old;
                }
            },
            List::Old => {
                self.old_flows.pop_front();
                self.list[flow] = List::None;
            },
            List::None => unreachable!("selected flow is on a list"),
        }
    }

    /// CoDel decision for the head packet of `flow`; `q_after` is the total occupancy.
    #[inline]
    pub fn on_dequeue(
        &mut self,
        flow: usize,
        now: Time,
        pkt: &Packet,
        q_after: QueueLen,
    ) -> Verdict {
        self.backlog[flow] -= pkt.size as u64;
        let v = self.codel[flow].on_dequeue(&self.p.codel, now, pkt, q_after);
        if v != Verdict::Pass && v != Verdict::Mark {
            return v;
        }
        self.deficit[flow] -= pkt.size as i64;
        v
    }

    /// Number of flows on either list.
    pub fn active_flows(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(flows: u32) -> FqCodelParams {
        FqCodelParams::linux_defaults(flows, 10240)
    }

    #[test]
    fn classify_spreads_hashes_over_flows() {
        let fq = FqCodel::new(params(1024));
        let p = |h| Packet {
            flow_hash: h,
            ..Default::default()
        };
        assert_eq!(fq.classify(&p(0)), 0);
        assert_eq!(fq.classify(&p(u32::MAX)), 1023);
        assert_eq!(fq.classify(&p(1 << 31)), 512);
    }

    #[test]
    fn emptied_old_flow_leaves_new_flow_goes_to_old() {
        let mut fq = FqCodel::new(params(4));
        fq.on_enqueued(1, 100);
        fq.on_enqueued(2, 100);
        assert_eq!(fq.select(), Some(1));
        // Flow 1 empty while old_flows is empty: it leaves the lists.
        fq.on_flow_empty(1);
        assert_eq!(fq.active_flows(), 1);
        assert_eq!(fq.select(), Some(2));
    }
}
