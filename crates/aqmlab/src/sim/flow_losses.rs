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
use crate::units::Time;

/// One connection's losses at the bottleneck queues: the histogram of its finished runs. The
/// count and the run in progress live in the connection's `ConnTag`, which every packet at a
/// bottleneck checks anyway: a packet that is queued while no run is open touches nothing else.
#[derive(Clone, Debug, Default)]
pub struct FlowLosses {
    /// Histogram by run length (`measure::runs`), as long as the longest run so far.
    runs: Vec<u64>,
}

impl FlowLosses {
    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<u64>()
    }
}

/// The part of a connection that packets and timer events look at first: whether the slot
/// still holds the connection they belong to, its bottleneck drops and its timers. Kept apart
/// from `Conn` (over a kilobyte) in a dense array: a packet queued at the bottleneck, a stale
/// timer, a timer whose deadline has moved later, or a late packet then touch no cache line of
/// the connection itself.
#[derive(Clone, Copy, Debug)]
pub struct ConnTag {
    pub gen: u32,
    pub active: bool,
    /// The connection's traffic source (for `source_delay`).
    pub source: u16,
    /// Packets dropped on arrival at a bottleneck queue after the warm-up.
    pub drops: u32,
    /// Length of the run of drops in progress.
    pub run: u32,
    /// Per endpoint: the earliest timer event scheduled, and the endpoint's next deadline as
    /// of its last call (`NO_TIME`: none). Lazy timers: see `Simulation::arm_timer`.
    pub timer_at: [Time; 2],
    pub deadline: [Time; 2],
}

/// "No time" in `ConnTag`'s timer fields.
pub const NO_TIME: Time = Time::MAX;

impl Default for ConnTag {
    fn default() -> Self {
        ConnTag {
            gen: 0,
            active: false,
            source: 0,
            drops: 0,
            run: 0,
            timer_at: [NO_TIME; 2],
            deadline: [NO_TIME; 2],
        }
    }
}

impl ConnTag {
    /// Whether an event or packet of generation `gen` belongs to the slot's connection.
    #[inline]
    pub fn is(&self, gen: u32) -> bool {
        self.active && self.gen == gen
    }

    /// A packet of the connection was offered to a bottleneck queue: a drop extends the run
    /// in progress, a queued packet ends it. Returns the length of a run that ended.
    #[inline]
    pub fn offer(&mut self, offer: Offer) -> Option<u32> {
        match offer {
            Offer::Dropped(_) => {
                self.drops += 1;
                self.run += 1;
                None
            },
            Offer::Queued => self.end_run(),
        }
    }

    /// Ends the run in progress, if any, returning its length.
    #[inline]
    pub fn end_run(&mut self) -> Option<u32> {
        (self.run > 0).then(|| std::mem::take(&mut self.run))
    }
}

impl Simulation {
    /// A packet of connection slot `slot` (generation `gen`) met a bottleneck queue.
    #[inline]
    pub(super) fn count_flow_offer(&mut self, slot: u32, gen: u32, offer: Offer) {
        let t = &mut self.tags[slot as usize];
        if !t.is(gen) {
            return;
        }
        if let Some(run) = t.offer(offer) {
            runs::count_run_compact(&mut self.conns[slot as usize].losses.runs, run as u64);
        }
    }

    /// The connection's record is written: its drop count, longest run and run histogram (a
    /// run still open ends with the record).
    pub(super) fn record_flow_losses(&mut self, slot: u32) {
        let t = &mut self.tags[slot as usize];
        let (drops, run) = (t.drops, t.end_run());
        let c = &mut self.conns[slot as usize];
        if let Some(run) = run {
            runs::count_run_compact(&mut c.losses.runs, run as u64);
        }
        let l = &c.losses;
        if self.sc.measure.connections {
            let r = &mut self.conn_rows;
            r.bottleneck_drops.push(drops as u64);
            r.longest_drop_run
                .push(l.runs.iter().rposition(|&n| n > 0).unwrap_or(0) as u64);
        }
        self.loss_run_rows
            .push_histogram("tcp_flow", c.id as i64, &l.runs);
        if !l.runs.is_empty() {
            // The total keeps the fixed-size layout (`count_run`) it always had.
            self.tcp_loss_runs.resize(runs::MAX_RUN + 1, 0);
            runs::merge(&mut self.tcp_loss_runs, &l.runs);
        }
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
        let mut t = ConnTag::default();
        let mut h = Vec::new();
        for o in [d, d, q, d, q, q, d, d, d, q, d] {
            if let Some(run) = t.offer(o) {
                runs::count_run(&mut h, run as u64);
            }
        }
        if let Some(run) = t.end_run() {
            runs::count_run(&mut h, run as u64);
        }
        assert_eq!(t.drops, 7);
        assert_eq!(&h[..4], &[0, 2, 1, 1]);
        assert_eq!(runs::losses(&h), 7);
    }
}
