//! Active queue management: the decision half of a router queue.
//!
//! An AQM only *decides*; `net::queue::Queue` is the one place that acts on a decision
//! (enqueue, set CE, drop) and counts it. Each discipline is a module with its parameters,
//! its state and the equations of its paper; `Aqm` is a closed enum so that the per-packet
//! call is a `match`, not a virtual call.

pub mod ared;
pub mod cake;
pub mod codel;
pub mod config;
mod defaults;
pub mod droptail;
pub mod dualpi2;
pub mod flow_sched;
mod flows;
pub mod fq_codel;
pub mod fq_pie;
pub mod pi;
pub mod pie;
pub mod pie_linux;
pub mod red;
pub mod red_linux;
pub mod red_params;
pub mod rem;
pub mod replay;
pub mod sch_pie;
pub mod schedule_replay;
mod schedule_state;

use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::Time;

pub use ared::{Ared, AredMode, AredParams};
pub use cake::{Cake, CakeParams};
pub use codel::{Codel, CodelParams, CodelState};
pub use droptail::DropTail;
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{CeThreshold, FqCodel, FqCodelParams};
pub use fq_pie::{FqPie, FqPieParams};
pub use pi::{Pi, PiParams};
pub use pie::{Pie, PieEstimator, PieParams};
pub use red::{EcnPolicy, Red, RedParams};
pub use red_linux::RedLinux;
pub use rem::{Rem, RemParams};

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

/// The queue's own counters from the start of the run (`net::queue::QueueStats`), from which
/// the tc statistics that Linux keeps in the qdisc are derived (`Aqm::qdisc_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub arrivals: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub marks: u64,
    /// Largest occupancy reached, packets (after the enqueue).
    pub peak_packets: u32,
}

impl QueueCounts {
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }
}

/// Builds a JSON map from an object literal.
pub(crate) fn json_map(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("json! of an object literal is an object"),
    }
}

/// How a limit or threshold is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueUnit {
    Packets,
    Bytes,
}

/// Every queue discipline. Add a variant per discipline; keep the match arms one line each.
///
/// `Red` covers RED, GRED-I and Adaptive RED (a RED with `adaptive` set). `FqCodel` needs
/// per-flow storage: `net::queue::Queue` drives its scheduler directly (its `on_enqueue` only
/// admits; overflow and dequeue go through `FqCodel`'s own methods). `FqPie` shares that
/// storage and scheduler (`flows`) and decides in `on_enqueue`. `DualPi2` has two FIFOs:
/// its `on_enqueue` decides and picks the queue, its scheduler and dequeue decisions are
/// driven by `net::queue::Queue` directly. `Cake` has 1024 flow queues per tin and a shaper:
/// `net::queue::Queue` drives its scheduler as FQ-CoDel's, and its dequeue can answer "not
/// before t" (`Queue::take_wake`).
#[derive(Clone, Debug)]
pub enum Aqm {
    DropTail(DropTail),
    Red(Red),
    Pi(Pi),
    Rem(Rem),
    Codel(Codel),
    Pie(Pie),
    FqCodel(FqCodel),
    DualPi2(DualPi2),
    Cake(Box<Cake>),
    FqPie(FqPie),
    /// Linux's sch_red (`red_linux`); boxed for its 256-byte idle table.
    RedLinux(Box<RedLinux>),
}

impl Aqm {
    /// Decision for an arriving packet; `q` is the occupancy before it is added.
    #[inline]
    pub fn on_enqueue(
        &mut self,
        now: Time,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        match self {
            Aqm::DropTail(a) => a.on_enqueue(now, pkt, q, rng),
            Aqm::Red(a) => a.on_enqueue(now, pkt, q, rng),
            Aqm::Pi(a) => a.on_enqueue(pkt, q, rng),
            Aqm::Rem(a) => a.on_enqueue(pkt, q, rng),
            Aqm::Codel(a) => a.on_enqueue(q),
            Aqm::Pie(a) => a.on_enqueue(pkt, q, rng),
            Aqm::FqCodel(_) | Aqm::Cake(_) => Verdict::Pass,
            Aqm::DualPi2(a) => a.on_enqueue(now, pkt, q, rng),
            Aqm::FqPie(a) => a.on_enqueue(pkt, q, rng),
            Aqm::RedLinux(a) => a.on_enqueue(now, pkt, q, rng),
        }
    }

    /// Decision for the packet at the head as it leaves; `q` is the occupancy after it was
    /// removed. Disciplines that act at enqueue pass every packet here.
    #[inline]
    pub fn on_dequeue(
        &mut self,
        now: Time,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        match self {
            Aqm::DropTail(_) | Aqm::Pi(_) | Aqm::FqCodel(_) | Aqm::DualPi2(_) | Aqm::Cake(_) => {
                Verdict::Pass
            },
            Aqm::FqPie(_) | Aqm::RedLinux(_) => Verdict::Pass,
            Aqm::Red(a) => a.on_dequeue(),
            Aqm::Rem(a) => a.on_dequeue(pkt, rng),
            Aqm::Codel(a) => a.on_dequeue(now, pkt, q),
            Aqm::Pie(a) => a.on_dequeue(now, pkt, q),
        }
    }

    /// The queue has just become empty (the link asked for a packet and found none): the start
    /// of an idle period (RED's `q_time`).
    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        match self {
            Aqm::DropTail(_)
            | Aqm::Pi(_)
            | Aqm::Rem(_)
            | Aqm::FqCodel(_)
            | Aqm::DualPi2(_)
            | Aqm::Cake(_) => {},
            Aqm::FqPie(_) => {},
            Aqm::Red(a) => a.on_idle(now),
            Aqm::RedLinux(a) => a.on_idle(now),
            Aqm::Codel(a) => a.on_idle(),
            Aqm::Pie(a) => a.on_idle(),
        }
    }

    /// Period of the discipline's own clock (PI's sampling, REM's price update, PIE's update,
    /// timer-driven ARED), if any. The first tick is due one period after the start.
    pub fn tick_period(&self) -> Option<Time> {
        match self {
            Aqm::DropTail(_) | Aqm::Codel(_) | Aqm::FqCodel(_) | Aqm::Cake(_) => None,
            Aqm::Red(a) => a.tick_period(),
            Aqm::RedLinux(a) => a.tick_period(),
            Aqm::Pi(a) => Some(a.p.period),
            Aqm::Rem(a) => Some(a.p.interval),
            Aqm::Pie(a) => Some(a.p.t_update),
            Aqm::DualPi2(a) => Some(a.p.tupdate),
            Aqm::FqPie(a) => Some(a.p.pie.tupdate),
        }
    }

    /// Runs the periodic update at `now`; `q` is the current occupancy.
    pub fn on_tick(&mut self, now: Time, q: QueueLen) {
        match self {
            Aqm::DropTail(_) | Aqm::Codel(_) | Aqm::FqCodel(_) | Aqm::Cake(_) => {},
            Aqm::Red(a) => a.on_tick(now),
            Aqm::RedLinux(a) => a.on_tick(now),
            Aqm::Pi(a) => a.on_tick(q),
            Aqm::Rem(a) => a.on_tick(q),
            Aqm::Pie(a) => a.on_tick(q),
            Aqm::DualPi2(a) => a.on_tick(now),
            Aqm::FqPie(a) => a.on_tick(now),
        }
    }

    /// The parameters in force (after defaults and automatic settings, in the discipline's
    /// own units: times in ns, thresholds in the queue's unit), for the results.
    pub fn params_json(&self) -> serde_json::Value {
        let v = match self {
            Aqm::DropTail(a) => serde_json::to_value(a),
            Aqm::Red(a) => match &a.adaptive {
                Some(ared) => Ok(serde_json::json!({ "red": &a.p, "adaptive": &ared.p })),
                None => serde_json::to_value(&a.p),
            },
            Aqm::Pi(a) => serde_json::to_value(&a.p),
            Aqm::Rem(a) => serde_json::to_value(&a.p),
            Aqm::Codel(a) => serde_json::to_value(&a.p),
            Aqm::Pie(a) => serde_json::to_value(&a.p),
            Aqm::FqCodel(a) => serde_json::to_value(&a.p),
            Aqm::DualPi2(a) => serde_json::to_value(&a.p),
            Aqm::Cake(a) => serde_json::to_value(&a.p),
            Aqm::FqPie(a) if a.single.is_some() => Ok(a.sch_pie_params_json()),
            Aqm::FqPie(a) => serde_json::to_value(&a.p),
            Aqm::RedLinux(a) => serde_json::to_value(&a.opt),
        };
        let params = v.expect("parameters serialize");
        serde_json::json!({ "kind": self.name(), "params": params })
    }

    /// The discipline's own counters and state as `tc -s qdisc show` names them (its
    /// "xstats"), cumulative from the start of the run as tc's are (not from the end of the
    /// warm-up), for summary.json (`qdisc_forward`, `qdisc_reverse`) and the `qdisc` table.
    /// `now` is the time of the snapshot (CoDel's `drop_next` is relative to it), `c` the
    /// queue's own counters. Times are in µs as tc's JSON output gives them. Empty for
    /// drop-tail (pfifo/bfifo have no xstats).
    pub fn qdisc_stats(
        &self,
        now: Time,
        c: &QueueCounts,
    ) -> serde_json::Map<String, serde_json::Value> {
        match self {
            Aqm::DualPi2(a) => a.qdisc_stats(),
            Aqm::Cake(a) => a.qdisc_stats(),
            Aqm::FqCodel(a) => a.qdisc_stats(),
            Aqm::FqPie(a) => match a.single {
                Some(s) => a.sch_pie_stats(s.maxq),
                None => a.qdisc_stats(),
            },
            Aqm::Red(a) => a.qdisc_stats(c),
            Aqm::RedLinux(a) => a.qdisc_stats(),
            Aqm::Codel(a) => a.qdisc_stats(now, c),
            Aqm::Pie(a) => a.qdisc_stats(c),
            Aqm::Pi(a) => a.qdisc_stats(),
            Aqm::Rem(a) => a.qdisc_stats(),
            Aqm::DropTail(_) => serde_json::Map::new(),
        }
    }

    /// tc's `overlimits` of the counterpart qdisc (the header's `qdisc_qstats_overlimit`):
    /// RED counts every packet its test selected (early and forced drops, marks); DualPI2 its
    /// drops at the limit; CAKE the dequeues its shaper held back and the arrivals to an
    /// empty queue it still held. pfifo/bfifo, CoDel, FQ-CoDel, PIE and FQ-PIE never count
    /// it (their own `overlimit`/`drop_overlimit` xstats are tail drops); PI and REM have no
    /// Linux qdisc and report 0.
    pub fn tc_overlimits(&self, c: &QueueCounts) -> u64 {
        match self {
            Aqm::Red(_) => c.drops_early + c.drops_forced + c.marks,
            Aqm::DualPi2(_) => c.drops_overflow,
            Aqm::Cake(a) => a.overlimits,
            Aqm::RedLinux(a) => a.stats.overlimits,
            Aqm::DropTail(_)
            | Aqm::Pi(_)
            | Aqm::Rem(_)
            | Aqm::Codel(_)
            | Aqm::Pie(_)
            | Aqm::FqCodel(_)
            | Aqm::FqPie(_) => 0,
        }
    }

    /// Name used in results.
    pub fn name(&self) -> &'static str {
        match self {
            Aqm::DropTail(_) => "droptail",
            Aqm::Red(a) => a.name,
            Aqm::Pi(_) => "pi",
            Aqm::Rem(_) => "rem",
            Aqm::Codel(_) => "codel",
            Aqm::Pie(_) => "pie",
            Aqm::FqCodel(_) => "fq_codel",
            Aqm::DualPi2(_) => "dualpi2",
            Aqm::Cake(_) => "cake",
            Aqm::FqPie(a) if a.single.is_some() => "pie_linux",
            Aqm::FqPie(_) => "fq_pie",
            Aqm::RedLinux(_) => "red_linux",
        }
    }

    /// Scheme-specific state for the queue trace, as `(name, value)`: RED's `avg`, ARED's
    /// `max_p`, PI's `p`, REM's `prob`, PIE's `p`, CoDel's `codel_count` (0 when not dropping),
    /// FQ-CoDel's and FQ-PIE's `active_flows`, DualPI2's `prob` (p′); `None` for drop-tail.
    pub fn state_probe(&self) -> Option<(&'static str, f64)> {
        match self {
            Aqm::DropTail(_) => None,
            Aqm::Red(a) => Some(a.state_probe()),
            Aqm::Pi(a) => Some(("p", a.s.p)),
            Aqm::Rem(a) => Some(("prob", a.s.prob)),
            Aqm::Codel(a) => Some(a.state_probe()),
            Aqm::Pie(a) => Some(("p", a.s.p)),
            Aqm::FqCodel(a) => Some(("active_flows", a.active_flows() as f64)),
            Aqm::DualPi2(a) => Some(("prob", a.s.prob)),
            Aqm::Cake(a) => Some(("active_flows", a.active_flows() as f64)),
            Aqm::FqPie(a) if a.single.is_some() => Some(("p", a.sch_pie_prob())),
            Aqm::FqPie(a) => Some(("active_flows", a.active_flows() as f64)),
            Aqm::RedLinux(a) => Some(a.state_probe()),
        }
    }
}
