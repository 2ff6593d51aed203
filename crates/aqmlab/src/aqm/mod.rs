//! Active queue management: the decision half of a router queue.
//!
//! An AQM only *decides*; `net::queue::Queue` is the one place that acts on a decision
//! (enqueue, set CE, drop) and counts it. Each discipline is a module with its parameters,
//! its state and the equations of its paper; `Aqm` is a closed enum so that the per-packet
//! call is a `match`, not a virtual call.

pub mod config;
pub mod droptail;

use crate::packet::Packet;
use crate::rng::Rng;
use crate::units::Time;

pub use droptail::DropTail;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// Probabilistic (RED p_a, PI/REM/PIE probability, CoDel control law).
    Early,
    /// Deterministic drop by the algorithm (RED above max_th, or 2·max_th when gentle).
    Forced,
    /// The physical buffer is full.
    Overflow,
}

/// The decision for one packet, at enqueue or at dequeue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accept (at enqueue) or transmit (at dequeue) unchanged.
    Pass,
    /// Set CE (RFC 3168) and accept/transmit. Only returned for ECT packets.
    Mark,
    Drop(DropCause),
}

/// Occupancy of the queue as the AQM sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueLen {
    pub packets: u32,
    pub bytes: u64,
}

/// How a limit or threshold is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueUnit {
    Packets,
    Bytes,
}

/// Every queue discipline. Add a variant per discipline; keep the match arms one line each.
#[derive(Clone, Debug)]
pub enum Aqm {
    DropTail(DropTail),
}

impl Aqm {
    /// Decision for an arriving packet; `q` is the occupancy before it is added.
    #[inline]
    pub fn on_enqueue(&mut self, now: Time, pkt: &Packet, q: QueueLen, rng: &mut Rng) -> Verdict {
        match self {
            Aqm::DropTail(a) => a.on_enqueue(now, pkt, q, rng),
        }
    }

    /// Decision for the packet at the head as it leaves; `q` is the occupancy after it was
    /// removed. Disciplines that act at enqueue pass every packet here.
    #[inline]
    pub fn on_dequeue(&mut self, now: Time, pkt: &Packet, q: QueueLen, rng: &mut Rng) -> Verdict {
        match self {
            Aqm::DropTail(_) => {
                let _ = (now, pkt, q, rng);
                Verdict::Pass
            },
        }
    }

    /// The queue has just become empty (the link asked for a packet and found none): the start
    /// of an idle period (RED's `q_time`).
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        match self {
            Aqm::DropTail(_) => {
                let _ = now;
            },
        }
    }

    /// Period of the discipline's own clock (PI's sampling, REM's price update), if any.
    pub fn tick_period(&self) -> Option<Time> {
        match self {
            Aqm::DropTail(_) => None,
        }
    }

    /// Runs the periodic update at `now`.
    pub fn on_tick(&mut self, now: Time, q: QueueLen) {
        match self {
            Aqm::DropTail(_) => {
                let _ = (now, q);
            },
        }
    }

    /// Name used in results.
    pub fn name(&self) -> &'static str {
        match self {
            Aqm::DropTail(_) => "droptail",
        }
    }

    /// Scheme-specific state for the queue trace (RED's average, PI's probability...), as
    /// `(name, value)`; empty for stateless disciplines.
    pub fn state_probe(&self) -> Option<(&'static str, f64)> {
        match self {
            Aqm::DropTail(_) => None,
        }
    }
}
