//! One CAKE tin: its flow queues' DRR++ state, hash table, COBALT parameters, shaper
//! schedule and tc statistics (Linux `struct cake_tin_data`).

use std::collections::VecDeque;

use super::cobalt::CobaltParams;
use super::flow::{Flow, List, Set};
use super::hash::{FlowTable, QUEUES};
use super::shaper::Rate;
use crate::units::Time;

/// tc's per-tin counters (`tc -s qdisc show dev … ` under each tin).
#[derive(Clone, Copy, Debug, Default)]
pub struct TinStats {
    pub packets: u64,
    pub bytes: u64,
    pub drops: u64,
    pub marks: u64,
    pub ack_drops: u64,
    /// EWMAs of the sojourn (ns): average (1/256), peak and base (1/4 towards, 1/256 away).
    pub avge_delay: u64,
    pub peak_delay: u64,
    pub base_delay: u64,
}

#[derive(Clone, Debug)]
pub struct Tin {
    pub flows: Vec<Flow>,
    pub backlogs: Vec<u32>,
    pub table: FlowTable,
    pub flow_quantum: u32,
    pub cparams: CobaltParams,
    pub new_flows: VecDeque<u16>,
    pub old_flows: VecDeque<u16>,
    pub decaying_flows: VecDeque<u16>,
    pub sparse_flow_count: u32,
    pub bulk_flow_count: u32,
    pub decaying_flow_count: u32,
    pub unresponsive_flow_count: u32,
    pub rate: Rate,
    pub time_next_packet: Time,
    pub tin_quantum: u32,
    pub tin_deficit: i32,
    pub tin_backlog: u64,
    pub stats: TinStats,
}

/// Linux `cake_ewma`: `avg += (sample − avg) / 2^shift` in its integer form.
pub fn ewma(avg: u64, sample: u64, shift: u32) -> u64 {
    avg - (avg >> shift) + (sample >> shift)
}

impl Tin {
    pub fn new(rate: Rate, tin_quantum: u32, flow_quantum: u32, cparams: CobaltParams) -> Self {
        Tin {
            flows: vec![Flow::default(); QUEUES],
            backlogs: vec![0; QUEUES],
            table: FlowTable::default(),
            flow_quantum,
            cparams,
            new_flows: VecDeque::with_capacity(QUEUES),
            old_flows: VecDeque::with_capacity(QUEUES),
            decaying_flows: VecDeque::with_capacity(QUEUES),
            sparse_flow_count: 0,
            bulk_flow_count: 0,
            decaying_flow_count: 0,
            unresponsive_flow_count: 0,
            rate,
            time_next_packet: 0,
            tin_quantum,
            tin_deficit: 0,
            tin_backlog: 0,
            stats: TinStats::default(),
        }
    }

    /// Flows with packets to send (sparse and bulk; Linux's test for an active tin).
    pub fn active(&self) -> bool {
        self.sparse_flow_count + self.bulk_flow_count > 0
    }

    fn list_mut(&mut self, l: List) -> &mut VecDeque<u16> {
        match l {
            List::New => &mut self.new_flows,
            List::Old => &mut self.old_flows,
            List::Decaying => &mut self.decaying_flows,
            List::None => unreachable!("no list"),
        }
    }

    /// Moves flow `i` to the tail of `to` (Linux `list_move_tail`/`list_add_tail`).
    pub fn move_tail(&mut self, i: usize, to: List) {
        let from = self.flows[i].list;
        if from != List::None {
            let l = self.list_mut(from);
            // The flow is usually at the head (the one being served).
            if l.front() == Some(&(i as u16)) {
                l.pop_front();
            } else if let Some(pos) = l.iter().position(|&f| f as usize == i) {
                l.remove(pos);
            }
        }
        if to != List::None {
            self.list_mut(to).push_back(i as u16);
        }
        self.flows[i].list = to;
    }

    /// Per-host bulk counts up or down for flow `i` (dual/triple modes).
    pub fn host_bulk(&mut self, i: usize, src: bool, dst: bool, up: bool) {
        let (s, d) = (
            self.flows[i].srchost as usize,
            self.flows[i].dsthost as usize,
        );
        let step = |c: &mut u16| {
            *c = if up {
                c.saturating_add(1)
            } else {
                c.saturating_sub(1)
            };
        };
        if src {
            step(&mut self.table.hosts[s].src_bulk);
        }
        if dst {
            step(&mut self.table.hosts[d].dst_bulk);
        }
    }

    /// Bulk flows of the busier of the flow's hosts (at least 1; Linux `host_load`).
    pub fn host_load(&self, i: usize, src: bool, dst: bool) -> u32 {
        let f = &self.flows[i];
        let mut load = 1u32;
        if src {
            load = load.max(self.table.hosts[f.srchost as usize].src_bulk as u32);
        }
        if dst {
            load = load.max(self.table.hosts[f.dsthost as usize].dst_bulk as u32);
        }
        load
    }

    /// Sparse flows as tc counts them (Linux: sparse + decaying).
    pub fn sp_flows(&self) -> u32 {
        self.sparse_flow_count + self.decaying_flow_count
    }

    pub fn is_bulk(&self, i: usize) -> bool {
        self.flows[i].set == Set::Bulk
    }
}
