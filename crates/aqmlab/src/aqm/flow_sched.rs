//! The flow-queue scheduler shared by FQ-CoDel and FQ-PIE: hashing into buckets and deficit
//! round robin over a list of new flows and a list of old flows.
//!
//! Both Linux qdiscs run the same scheduler (RFC 8290 §4; Linux `fq_codel_enqueue`/
//! `fq_codel_dequeue` and `fq_pie_qdisc_enqueue`/`fq_pie_qdisc_dequeue`):
//!
//! * Classification: `flow = ⌊flow_hash·flows / 2³²⌋` (Linux `reciprocal_scale`; the sender
//!   sets `flow_hash`).
//! * Enqueue: a flow in neither list goes to the tail of `new_flows` with `deficit = quantum`
//!   and counts as a new flow (a flow that emptied but is still on `old_flows` is not new).
//! * Dequeue: take the head flow of `new_flows`, else of `old_flows`; if its `deficit ≤ 0`,
//!   `deficit += quantum` and move it to the tail of `old_flows`, repeat. A selected flow
//!   found empty moves from `new_flows` to the tail of `old_flows` when that list is
//!   non-empty (so that old flows are not starved), otherwise it leaves the lists; repeat.
//!   A sent packet costs its flow `deficit −= size`.
//!
//! The lists are fixed-capacity ring buffers (every operation is at a head or a tail), so
//! the scheduler allocates nothing per packet. What each discipline does per flow (CoDel at
//! dequeue, PIE at enqueue) stays in its own module.

use std::collections::VecDeque;

use crate::packet::Packet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Clone, Debug)]
pub struct FlowScheduler {
    /// Bytes of credit per round.
    pub quantum: u32,
    pub deficit: Vec<i64>,
    /// Bytes queued per flow.
    pub backlog: Vec<u64>,
    list: Vec<List>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Flows that were new when they got a packet (tc's `new_flow_count`).
    pub new_flow_count: u64,
}

impl FlowScheduler {
    pub fn new(flows: u32, quantum: u32) -> Self {
        let n = flows as usize;
        FlowScheduler {
            quantum,
            deficit: vec![0; n],
            backlog: vec![0; n],
            list: vec![List::None; n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            new_flow_count: 0,
        }
    }

    pub fn flows(&self) -> usize {
        self.backlog.len()
    }

    #[inline]
    pub fn classify(&self, pkt: &Packet) -> usize {
        ((pkt.flow_hash as u64 * self.flows() as u64) >> 32) as usize
    }

    /// The packet was appended to `flow`'s FIFO.
    #[inline]
    pub fn on_enqueued(&mut self, flow: usize, size: u32) {
        self.backlog[flow] += size as u64;
        if self.list[flow] == List::None {
            self.list[flow] = List::New;
            self.new_flows.push_back(flow as u32);
            self.deficit[flow] = self.quantum as i64;
            self.new_flow_count += 1;
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
                self.deficit[flow] += self.quantum as i64;
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

    /// The selected flow had no packet: the list move.
    #[inline]
    pub fn on_flow_empty(&mut self, flow: usize) {
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

    /// Number of flows on either list.
    pub fn active_flows(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }

    /// The flows on `new_flows` and on `old_flows`, each list in order (head first).
    pub fn lists(
        &self,
    ) -> (
        impl Iterator<Item = usize> + '_,
        impl Iterator<Item = usize> + '_,
    ) {
        (
            self.new_flows.iter().map(|&f| f as usize),
            self.old_flows.iter().map(|&f| f as usize),
        )
    }

    /// Whether `flow` is on either list.
    pub fn is_listed(&self, flow: usize) -> bool {
        self.list[flow] != List::None
    }

    /// tc's `new_flows_len` and `old_flows_len`.
    pub fn list_lens(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_spreads_hashes_over_flows() {
        let s = FlowScheduler::new(1024, 1514);
        let p = |h| Packet {
            flow_hash: h,
            ..Default::default()
        };
        assert_eq!(s.classify(&p(0)), 0);
        assert_eq!(s.classify(&p(u32::MAX)), 1023);
        assert_eq!(s.classify(&p(1 << 31)), 512);
    }

    #[test]
    fn emptied_old_flow_leaves_new_flow_goes_to_old() {
        let mut s = FlowScheduler::new(4, 1514);
        s.on_enqueued(1, 100);
        s.on_enqueued(2, 100);
        assert_eq!(s.select(), Some(1));
        // Flow 1 empty while old_flows is empty: it leaves the lists.
        s.on_flow_empty(1);
        assert_eq!(s.active_flows(), 1);
        assert_eq!(s.select(), Some(2));
    }

    #[test]
    fn new_flows_first_then_drr_by_quantum() {
        // Quantum 1500. Flow 0 and 1 arrive; flow 0 sends 1000 + 1000 B, flow 1 500 B each.
        let mut s = FlowScheduler::new(4, 1500);
        s.on_enqueued(0, 1000);
        s.on_enqueued(1, 500);
        // Flow 0 is new (1500 credit): sends 1000 → 500 left, still served first.
        assert_eq!(s.select(), Some(0));
        s.deficit[0] -= 1000;
        assert_eq!(s.select(), Some(0));
        s.deficit[0] -= 1000; // −500: exhausted
                              // Flow 0 moves to old with −500 + 1500 = 1000; flow 1 (new) is next.
        assert_eq!(s.select(), Some(1));
        assert_eq!(s.deficit[0], 1000);
        assert_eq!(s.list_lens(), (1, 1));
        // A third flow arriving now goes before the old flow 0.
        s.on_enqueued(2, 100);
        s.deficit[1] -= 1500; // flow 1 exhausted: to old with 0 + 1500
        assert_eq!(s.select(), Some(2));
        assert_eq!(s.deficit[1], 1500);
        assert_eq!(s.new_flow_count, 3);
    }
}
