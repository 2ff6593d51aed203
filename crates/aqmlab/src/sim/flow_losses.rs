//! Runs of consecutive losses of each TCP connection at the bottleneck queues.
//!
//! Study D counts, per flow, how many of the flow's packets are lost in a row. A TCP receiver
//! cannot tell (retransmissions fill its gaps), so the count is taken where the losses happen:
//! every packet of the connection offered to a bottleneck queue after the warm-up is either
//! accepted, which ends the connection's current run, or dropped on arrival, which extends it.
//! Drops a discipline makes at dequeue (CoDel, FQ-CoDel's head drops) are not attributed to
//! flows; they remain in the aggregate `queue_*` runs.

use super::Simulation;
use crate::measure::runs;
use crate::net::queue::Offer;

/// One connection's losses at the bottleneck queues.
#[derive(Clone, Debug, Default)]
pub struct FlowLosses {
    drops: u64,
    current: u64,
    /// Histogram by run length (`measure::runs`); empty until the first run ends.
    runs: Vec<u64>,
}

impl FlowLosses {
    /// A packet of the connection was offered to a bottleneck queue.
    #[inline]
    pub fn offer(&mut self, offer: Offer) {
        match offer {
            Offer::Dropped(_) => {
                self.drops += 1;
                self.current += 1;
            },
            Offer::Queued => self.end_run(),
        }
    }

    fn end_run(&mut self) {
        if self.current > 0 {
            runs::count_run(&mut self.runs, self.current);
            self.current = 0;
        }
    }
}

impl Simulation {
    /// A packet of connection slot `slot` (generation `gen`) met a bottleneck queue.
    #[inline]
    pub(super) fn count_flow_offer(&mut self, slot: u32, gen: u32, offer: Offer) {
        let c = &mut self.conns[slot as usize];
        if c.active && c.gen == gen {
            c.losses.offer(offer);
        }
    }

    /// The connection's record is written: its drop count, longest run and run histogram (a
    /// run still open ends with the record).
    pub(super) fn record_flow_losses(&mut self, slot: u32) {
        let c = &mut self.conns[slot as usize];
        c.losses.end_run();
        let l = &c.losses;
        let r = &mut self.conn_rows;
        r.bottleneck_drops.push(l.drops);
        r.longest_drop_run
            .push(l.runs.iter().rposition(|&n| n > 0).unwrap_or(0) as u64);
        self.loss_run_rows
            .push_histogram("tcp_flow", c.id as i64, &l.runs);
        runs::merge(&mut self.tcp_loss_runs, &l.runs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::DropCause;

    #[test]
    fn a_hand_built_offer_pattern_gives_its_runs() {
        // D D Q D Q Q D D D Q D (the last run is closed by the record).
        let d = Offer::Dropped(DropCause::Overflow);
        let q = Offer::Queued;
        let mut l = FlowLosses::default();
        for o in [d, d, q, d, q, q, d, d, d, q, d] {
            l.offer(o);
        }
        l.end_run();
        assert_eq!(l.drops, 7);
        assert_eq!(&l.runs[..4], &[0, 2, 1, 1]);
        assert_eq!(runs::losses(&l.runs), 7);
    }
}
