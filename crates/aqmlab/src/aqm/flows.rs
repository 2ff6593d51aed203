//! The per-flow calls `net::queue::Queue` makes on the flow-queue disciplines (FQ-CoDel,
//! FQ-PIE), which share `flow_sched::FlowScheduler` but differ in where they decide: FQ-CoDel
//! at dequeue (CoDel per flow) with head drops on overflow, FQ-PIE at enqueue (`on_enqueue`,
//! PIE per flow) with a plain limit.

use super::{Aqm, QueueLen, Verdict};
use crate::packet::Packet;
use crate::units::Time;

const NOT_FQ: &str = "flow storage belongs to FQ-CoDel or FQ-PIE";

impl Aqm {
    /// Number of flow buckets, for a discipline that keeps flow queues.
    pub fn flow_buckets(&self) -> Option<usize> {
        match self {
            Aqm::FqCodel(a) => Some(a.sched.flows()),
            Aqm::FqPie(a) => Some(a.sched.flows()),
            _ => None,
        }
    }

    /// Classifies an accepted packet, records it in its flow, returns the flow.
    #[inline]
    pub(crate) fn fq_enqueued(&mut self, pkt: &Packet) -> usize {
        match self {
            Aqm::FqCodel(a) => {
                let flow = a.sched.classify(pkt);
                a.sched.on_enqueued(flow, pkt.size);
                flow
            },
            Aqm::FqPie(a) => {
                let flow = a.sched.classify(pkt);
                a.on_enqueued(flow, pkt.size);
                flow
            },
            _ => unreachable!("{NOT_FQ}"),
        }
    }

    /// FQ-CoDel's overflow batch (`FqCodel::overflow_victim`); FQ-PIE has none.
    #[inline]
    pub(crate) fn fq_overflow_victim(&mut self, q: QueueLen) -> Option<usize> {
        match self {
            Aqm::FqCodel(a) => a.overflow_victim(q),
            _ => None,
        }
    }

    pub(crate) fn fq_head_dropped(&mut self, flow: usize, size: u32) {
        match self {
            Aqm::FqCodel(a) => a.on_head_dropped(flow, size),
            _ => unreachable!("only FQ-CoDel drops at the head on overflow"),
        }
    }

    /// The flow to serve next.
    #[inline]
    pub(crate) fn fq_select(&mut self) -> Option<usize> {
        match self {
            Aqm::FqCodel(a) => a.sched.select(),
            Aqm::FqPie(a) => a.sched.select(),
            _ => unreachable!("{NOT_FQ}"),
        }
    }

    /// The selected flow was empty.
    #[inline]
    pub(crate) fn fq_flow_empty(&mut self, flow: usize) {
        match self {
            Aqm::FqCodel(a) => a.on_flow_empty(flow),
            Aqm::FqPie(a) => a.sched.on_flow_empty(flow),
            _ => unreachable!("{NOT_FQ}"),
        }
    }

    /// Decision for the head of `flow` as it leaves; `q_after` is the total occupancy.
    #[inline]
    pub(crate) fn fq_dequeue(
        &mut self,
        flow: usize,
        now: Time,
        pkt: &Packet,
        q_after: QueueLen,
    ) -> Verdict {
        match self {
            Aqm::FqCodel(a) => a.on_dequeue(flow, now, pkt, q_after),
            Aqm::FqPie(a) => a.on_dequeue(flow, now, pkt),
            _ => unreachable!("{NOT_FQ}"),
        }
    }
}
