//! TCP timers: each endpoint's next deadline, kept in its connection's tag, gets an event
//! when it is near (`arm_at`) or when the periodic sweep finds it due before the next sweep
//! (`sweep_timers`); the timer event itself (`on_timer`).
//!
//! Most deadlines never fire (a retransmit timer is re-armed with every segment), so they are
//! kept out of the event list until they are close; each event still runs at exactly its
//! deadline.

use super::events::{Ev, PackedEv};
use super::flow_losses::{self, NO_TIME};
use super::Simulation;
use crate::engine::Scheduler;
use crate::tcp::config::CongestionControl::Reno;
use crate::units::Time;

/// Period of the timer sweep (`Simulation::arm_at`): deadlines less than this far ahead (a
/// delayed ACK, 100-200 ms) are mostly scheduled when set; retransmit timers (1 s and more)
/// wait for a sweep. A cost/benefit choice with no effect on when timers fire.
pub(super) const TIMER_SWEEP: Time = 250 * crate::units::MS;

/// Schedules the timer event of endpoint `side` of `slot` at its deadline `d`, the earliest
/// one now pending for it (`ConnTag::timer_at`).
#[inline]
fn schedule_timer(
    sched: &mut Scheduler<PackedEv>,
    t: &mut flow_losses::ConnTag,
    slot: u32,
    side: usize,
    d: Time,
) {
    t.timer_at[side] = d;
    let gen = t.gen;
    sched.at(
        d,
        Ev::Timer {
            slot,
            side: side as u8,
            gen,
        },
    );
}

/// Bytes of connection and packet state above which prefetching pays: about the private (L2)
/// cache of one core, and half the shared (L3) cache, of the machines measured
/// (docs/performance.md). A choice of speed only: prefetches have no effect on results.
const PREFETCH_ABOVE_BYTES: usize = 1 << 20;
const PREFETCH_DEEP_ABOVE_BYTES: usize = 16 << 20;

impl Simulation {
    /// Whether the connections and packets in use outgrow a core's private cache, and the
    /// shared one.
    fn prefetch_pays(&self) -> (bool, bool) {
        let conns = self.connection_bytes_estimate();
        let pkts = self.pkts.live() * std::mem::size_of::<crate::packet::Packet>();
        let state = conns + pkts;
        (
            state > PREFETCH_ABOVE_BYTES,
            state > PREFETCH_DEEP_ABOVE_BYTES,
        )
    }

    /// The connection slots' memory, from their sizes (the Linux state counted where the
    /// configurations have it): cheap, for `prefetch_pays`.
    fn connection_bytes_estimate(&self) -> usize {
        let linux = if self.tcps.iter().any(|t| t.congestion_control != Reno) {
            2 * std::mem::size_of::<crate::tcp::cong::LinuxCong>()
        } else {
            0
        };
        self.conns.len() * (std::mem::size_of::<super::Conn>() + linux)
    }

    pub(super) fn on_timer(&mut self, slot: u32, side: u8, gen: u32) {
        let now = self.sched.now();
        if !self.tags[slot as usize].is(gen) {
            return;
        }
        let side = side as usize;
        let t = &mut self.tags[slot as usize];
        if t.timer_at[side] == now {
            t.timer_at[side] = NO_TIME;
        }
        if t.deadline[side] > now {
            // Nothing due (the deadline moved later since this event was scheduled): the
            // endpoint would do nothing, and `after_call` would only re-arm the timers. Done
            // here from the tag, without touching the (likely cold) connection.
            let deadlines = t.deadline;
            self.arm_at(slot, 0, deadlines[0]);
            self.arm_at(slot, 1, deadlines[1]);
            return;
        }
        let c = &mut self.conns[slot as usize];
        self.out.clear();
        c.ep[side].on_timer(now, &self.tcps[c.tcp as usize], &mut self.out);
        self.after_call(slot, side);
    }

    /// Lazy timers: keep at most the earliest deadline scheduled. A deadline that moved later
    /// (the retransmit timer restarted by every ACK) costs nothing until the old event fires.
    pub(super) fn arm_timer(&mut self, slot: u32, side: usize) {
        let d = self.conns[slot as usize].ep[side]
            .next_deadline()
            .unwrap_or(NO_TIME);
        self.arm_at(slot, side, d);
    }

    /// Records endpoint `side`'s next deadline `d` (`NO_TIME`: none) in the slot's tag and
    /// schedules a timer event for it unless one is already due no later, or unless `d` is
    /// not before the next timer sweep, which will schedule it if it is still pending then.
    ///
    /// Most deadlines never fire: a Web connection re-arms its retransmit timer (seconds
    /// ahead: the 3-s SYN timer, a 1-s minimum RTO) with every segment and is over long
    /// before. Scheduled at once, every such deadline that moved earlier left an event that
    /// fired after the connection had gone (a tenth of all events in Study B's benchmark).
    /// A deadline is kept in the tag until a sweep finds it due before the following sweep;
    /// its event then runs at exactly the deadline, as before.
    #[inline]
    fn arm_at(&mut self, slot: u32, side: usize, d: Time) {
        let t = &mut self.tags[slot as usize];
        t.deadline[side] = d;
        if d < t.timer_at[side] && d < self.next_sweep {
            schedule_timer(&mut self.sched, t, slot, side, d);
        }
    }

    /// A timer sweep: schedules the events of the deadlines due before the next sweep (those
    /// `arm_at` left to it), in slot order. Every deadline `d` is scheduled by the sweep at
    /// `S` ≤ `d` < `S + TIMER_SWEEP`, or directly when it is set before the next sweep.
    pub(super) fn sweep_timers(&mut self) {
        let now = self.sched.now();
        self.next_sweep = now + TIMER_SWEEP;
        (self.prefetch_ahead, self.prefetch_deep) = self.prefetch_pays();
        for (slot, t) in self.tags.iter_mut().enumerate() {
            if !t.active {
                continue;
            }
            for side in 0..2 {
                let d = t.deadline[side];
                if d < self.next_sweep && d < t.timer_at[side] {
                    schedule_timer(&mut self.sched, t, slot as u32, side, d);
                }
            }
        }
        self.sched.at(self.next_sweep, Ev::TimerSweep);
    }
}
