//! Replays a recorded arrival sequence through one queue discipline and the link it feeds, for
//! differential validation against a reference simulator (validation/, docs/validation.md).
//!
//! The reference (ns-2.35) logs every arrival at its bottleneck queue with its time, size and
//! ECN capability, and whether it dropped or marked it. The replay offers the same arrivals to
//! our discipline in front of a link of the same rate and records, per arrival, the state the
//! discipline computed (RED's average, `p_b`, `p_a`, ARED's `max_p`, PI's and REM's
//! probability, REM's price) and its verdict; per departure the time it left; per periodic
//! update the state after it.
//!
//! Random decisions cannot be compared draw for draw (the simulators use different
//! generators), so the replay has two modes:
//! - `Follow`: the discipline's uniform draw for an arrival is answered with 0 when the
//!   reference dropped or marked that arrival and with the largest value below 1 otherwise.
//!   A probabilistic decision then follows the reference exactly whenever our probability is
//!   strictly between 0 and 1; a deterministic one (forced drop, overflow, no drop below the
//!   threshold) is ours alone, and a disagreement shows a model difference. The queue then
//!   holds what the reference's held (the reference's outcome is applied), so one
//!   disagreement does not derail the rest of the comparison.
//! - `Free`: the discipline decides with its own random stream (our `Rng`) on the same
//!   arrivals; its drops are compared with the reference's by their statistics.
//!
//! The link is ns-2's `Queue` + `LinkDelay`: a packet starts transmission when it is dequeued,
//! the next dequeue happens when it has been serialized; a dequeue that finds the queue empty
//! starts an idle period (`on_idle`). At equal times a transmission end runs before an
//! arrival, and a periodic update after both.

use std::collections::VecDeque;

use super::{Aqm, DropCause, QueueLen, Verdict};
use crate::measure::{Column, Table};
use crate::packet::{Ecn, Packet};
use crate::rng::{Rng, UniformSource};
use crate::units::{BitsPerSec, Time};

/// One arrival at the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub t: Time,
    pub size: u32,
    /// The packet is ECN-capable (ECT).
    pub ect: bool,
}

/// What the reference did with an arrival (at enqueue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    /// Accepted with CE set.
    Marked,
    Dropped,
}

/// How random decisions are taken.
pub enum Mode<'a> {
    /// Follow the reference's outcome per arrival (see the module docs).
    Follow(&'a [Outcome]),
    /// Our own random stream.
    Free(Rng),
}

/// The discipline's state after an arrival or an update; `NaN` where it has no such variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// RED's EWMA of the queue.
    pub avg: f64,
    /// RED's `p_b` and `p_a` (last computed).
    pub p_b: f64,
    pub p_a: f64,
    /// RED's current `max_p` (ARED changes it).
    pub max_p: f64,
    /// PI's, REM's and PIE's probability; DualPI2's p′.
    pub prob: f64,
    /// REM's link price.
    pub price: f64,
}

impl Probe {
    pub fn of(aqm: &Aqm) -> Probe {
        let nan = f64::NAN;
        let mut p = Probe {
            avg: nan,
            p_b: nan,
            p_a: nan,
            max_p: nan,
            prob: nan,
            price: nan,
        };
        match aqm {
            Aqm::Red(r) => {
                p.avg = r.s.avg;
                p.p_b = r.s.p_b;
                p.p_a = r.s.p_a;
                p.max_p = r.s.max_p;
            },
            Aqm::Pi(a) => p.prob = a.s.p,
            Aqm::Rem(a) => {
                p.prob = a.s.prob;
                p.price = a.s.price;
            },
            Aqm::Pie(a) => p.prob = a.s.p,
            Aqm::DualPi2(a) => p.prob = a.s.prob,
            Aqm::RedLinux(a) => {
                p.avg = a.state_probe().1;
                p.max_p = a.p.max_p as f64 / 4_294_967_296.0;
            },
            Aqm::DropTail(_) | Aqm::Codel(_) | Aqm::FqCodel(_) | Aqm::Cake(_) => {},
            Aqm::FqPie(_) => {},
        }
        p
    }
}

/// Per arrival: what the queue held before it, our verdict and whether it used a random draw,
/// the outcome applied to the queue, and the state after it.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrivalRow {
    pub t: Time,
    pub q: QueueLen,
    pub verdict: Verdict,
    pub drew: bool,
    pub applied: Outcome,
    pub state: Probe,
}

/// Per departure: when the packet (index into the arrivals) started transmission, and the
/// dequeue-time verdict (REM, CoDel, PIE act there).
#[derive(Clone, Debug, PartialEq)]
pub struct DepartureRow {
    pub t: Time,
    pub arrival: usize,
    pub verdict: Verdict,
    /// The verdict used a random draw (following a reference: scripted from its outcome).
    pub drew: bool,
}

/// Per periodic update (PI, REM, PIE, timer-driven ARED): the time and the state after it.
#[derive(Clone, Debug, PartialEq)]
pub struct TickRow {
    pub t: Time,
    pub q: QueueLen,
    pub state: Probe,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replay {
    pub arrivals: Vec<ArrivalRow>,
    pub departures: Vec<DepartureRow>,
    pub ticks: Vec<TickRow>,
}

impl Replay {
    /// The three record tables (`arrivals`, `departures`, `ticks`), times in seconds.
    pub fn tables(self) -> Vec<Table> {
        let secs = |t: Time| t as f64 * 1e-9;
        let verdict = |v: Verdict| match v {
            Verdict::Pass => "pass",
            Verdict::Mark => "mark",
            Verdict::Drop(DropCause::Early) => "drop_early",
            Verdict::Drop(DropCause::Forced) => "drop_forced",
            Verdict::Drop(DropCause::Overflow) => "drop_overflow",
        };
        let outcome = |o: Outcome| match o {
            Outcome::Accepted => "accepted",
            Outcome::Marked => "marked",
            Outcome::Dropped => "dropped",
        };
        let probes = |rows: &mut dyn Iterator<Item = Probe>| {
            let mut cols: [Vec<f64>; 6] = Default::default();
            for p in rows {
                for (c, v) in cols
                    .iter_mut()
                    .zip([p.avg, p.p_b, p.p_a, p.max_p, p.prob, p.price])
                {
                    c.push(v);
                }
            }
            ["avg", "p_b", "p_a", "max_p", "prob", "price"]
                .into_iter()
                .zip(cols.map(Column::F64))
                .collect::<Vec<_>>()
        };
        let a = &self.arrivals;
        let mut arrivals = vec![
            ("t_s", Column::F64(a.iter().map(|r| secs(r.t)).collect())),
            (
                "q_packets",
                Column::U64(a.iter().map(|r| r.q.packets as u64).collect()),
            ),
            (
                "q_bytes",
                Column::U64(a.iter().map(|r| r.q.bytes).collect()),
            ),
            (
                "verdict",
                Column::Str(a.iter().map(|r| verdict(r.verdict)).collect()),
            ),
            ("drew", Column::Bool(a.iter().map(|r| r.drew).collect())),
            (
                "applied",
                Column::Str(a.iter().map(|r| outcome(r.applied)).collect()),
            ),
        ];
        arrivals.extend(probes(&mut a.iter().map(|r| r.state)));
        let d = &self.departures;
        let departures = vec![
            ("t_s", Column::F64(d.iter().map(|r| secs(r.t)).collect())),
            (
                "arrival",
                Column::U64(d.iter().map(|r| r.arrival as u64).collect()),
            ),
            (
                "verdict",
                Column::Str(d.iter().map(|r| verdict(r.verdict)).collect()),
            ),
            ("drew", Column::Bool(d.iter().map(|r| r.drew).collect())),
        ];
        let k = &self.ticks;
        let mut ticks = vec![
            ("t_s", Column::F64(k.iter().map(|r| secs(r.t)).collect())),
            (
                "q_packets",
                Column::U64(k.iter().map(|r| r.q.packets as u64).collect()),
            ),
            (
                "q_bytes",
                Column::U64(k.iter().map(|r| r.q.bytes).collect()),
            ),
        ];
        ticks.extend(probes(&mut k.iter().map(|r| r.state)));
        vec![
            Table {
                name: "arrivals",
                columns: arrivals,
            },
            Table {
                name: "departures",
                columns: departures,
            },
            Table {
                name: "ticks",
                columns: ticks,
            },
        ]
    }
}

/// The uniform draw hands the discipline when following a reference: scripted per arrival,
/// and a record of whether it was asked for one.
struct Scripted {
    value: f64,
    drew: bool,
}

impl UniformSource for Scripted {
    fn uniform(&mut self) -> f64 {
        self.drew = true;
        self.value
    }
}

/// The largest `f64` below 1: a draw that no probability below 1 accepts.
const ALMOST_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// One step of a reference's log at its queue, in the order the reference executed them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// A packet arrives; the reference's outcome for it.
    Arrival(Arrival, Outcome),
    /// The packet at the head starts transmission.
    Dequeue(Time),
    /// The link asked for a packet and found none (the start of an idle period).
    Idle(Time),
}

/// The queue and discipline being replayed, and what they recorded.
struct Driver<'a> {
    aqm: Aqm,
    /// Queued packets: arrival index, packet, outcome applied at enqueue.
    fifo: VecDeque<(usize, Packet, Outcome)>,
    len: QueueLen,
    out: Replay,
    mode: Mode<'a>,
    arrived: usize,
}

impl Driver<'_> {
    /// Offers arrival `a`; with `reference` its random decision follows the reference's
    /// outcome, which is then applied to the queue whatever our verdict.
    fn arrive(&mut self, a: Arrival, reference: Option<Outcome>) -> Outcome {
        let now = a.t;
        let pkt = Packet {
            size: a.size,
            ecn: if a.ect { Ecn::Ect0 } else { Ecn::NotEct },
            enqueued_at: now,
            ..Default::default()
        };
        let q = self.len;
        let (verdict, drew, applied) = match (reference, &mut self.mode) {
            (Some(r), _) => {
                let mut s = Scripted {
                    value: if r == Outcome::Accepted {
                        ALMOST_ONE
                    } else {
                        0.0
                    },
                    drew: false,
                };
                let v = self.aqm.on_enqueue(now, &pkt, q, &mut s);
                (v, s.drew, r)
            },
            (None, Mode::Free(rng)) => {
                let v = self.aqm.on_enqueue(now, &pkt, q, rng);
                (v, false, outcome_of(v))
            },
            (None, Mode::Follow(o)) => {
                let r = o[self.arrived];
                return self.arrive(a, Some(r));
            },
        };
        if applied != Outcome::Dropped {
            self.len.packets += 1;
            self.len.bytes += a.size as u64;
            self.fifo.push_back((self.arrived, pkt, applied));
        }
        self.out.arrivals.push(ArrivalRow {
            t: now,
            q,
            verdict,
            drew,
            applied,
            state: Probe::of(&self.aqm),
        });
        self.arrived += 1;
        applied
    }

    /// Takes the head packet to send at `now`; returns its size, or `None` (and an idle period
    /// starts) when the queue is empty. A dequeue-time decision (REM's marks) draws from our
    /// stream when free; when following, its draw follows the reference's outcome for the
    /// packet (marked or not), and the packet is sent whatever our verdict.
    fn dequeue(&mut self, now: Time) -> Option<u32> {
        loop {
            let Some((i, pkt, reference)) = self.fifo.pop_front() else {
                self.aqm.on_idle(now);
                return None;
            };
            self.len.packets -= 1;
            self.len.bytes -= pkt.size as u64;
            let (verdict, drew) = match &mut self.mode {
                Mode::Free(rng) => (self.aqm.on_dequeue(now, &pkt, self.len, rng), false),
                Mode::Follow(_) => {
                    let mut s = Scripted {
                        value: if reference == Outcome::Marked {
                            0.0
                        } else {
                            ALMOST_ONE
                        },
                        drew: false,
                    };
                    (self.aqm.on_dequeue(now, &pkt, self.len, &mut s), s.drew)
                },
            };
            self.out.departures.push(DepartureRow {
                t: now,
                arrival: i,
                verdict,
                drew,
            });
            if matches!(verdict, Verdict::Drop(_)) && matches!(self.mode, Mode::Free(_)) {
                continue;
            }
            return Some(pkt.size);
        }
    }

    /// Runs the periodic update due at `now`; returns the next one's time.
    fn tick(&mut self, now: Time) -> Option<Time> {
        self.aqm.on_tick(now, self.len);
        self.out.ticks.push(TickRow {
            t: now,
            q: self.len,
            state: Probe::of(&self.aqm),
        });
        self.aqm.tick_period().map(|p| now + p)
    }
}

fn driver(aqm: Aqm, mode: Mode) -> Driver {
    Driver {
        aqm,
        fifo: VecDeque::new(),
        len: QueueLen::default(),
        out: Replay::default(),
        mode,
        arrived: 0,
    }
}

/// Replays `arrivals` (in time order) through `aqm` in front of a link of `rate`, until every
/// packet has left. At equal times a transmission end runs before an arrival, and a periodic
/// update after both.
///
/// # Panics
/// If the arrivals are not in time order, or `Follow` has a different number of outcomes.
pub fn replay(aqm: Aqm, rate: BitsPerSec, arrivals: &[Arrival], mode: Mode) -> Replay {
    assert!(
        arrivals.windows(2).all(|w| w[0].t <= w[1].t),
        "arrivals must be in time order"
    );
    if let Mode::Follow(outcomes) = &mode {
        assert_eq!(outcomes.len(), arrivals.len(), "one outcome per arrival");
    }
    let mut next_tick = aqm.tick_period();
    let mut d = driver(aqm, mode);
    // The end of the transmission in progress, if any.
    let mut tx_end: Option<Time> = None;
    let mut next = 0;
    loop {
        let arrival_t = arrivals.get(next).map(|a| a.t);
        let busy = arrival_t.is_some() || tx_end.is_some();
        let candidates = [tx_end, arrival_t, next_tick.filter(|_| busy)];
        let Some(now) = candidates.iter().flatten().copied().min() else {
            break;
        };
        if tx_end == Some(now) {
            tx_end = d.dequeue(now).map(|size| now + rate.tx_time(size));
        } else if arrival_t == Some(now) {
            d.arrive(arrivals[next], None);
            next += 1;
            if tx_end.is_none() {
                tx_end = d.dequeue(now).map(|size| now + rate.tx_time(size));
            }
        } else {
            next_tick = d.tick(now);
        }
    }
    d.out
}

/// Replays a reference's log at its queue step by step, following its outcomes (the queue
/// holds what the reference's held); periodic updates run at their own times, after the
/// log's events of the same time.
///
/// # Panics
/// If the log's times go backwards, or a dequeue finds nothing to send.
pub fn replay_log(aqm: Aqm, log: &[Event]) -> Replay {
    let mut next_tick = aqm.tick_period();
    let mut d = driver(aqm, Mode::Follow(&[]));
    let mut last = 0;
    for e in log {
        let t = match *e {
            Event::Arrival(a, _) => a.t,
            Event::Dequeue(t) | Event::Idle(t) => t,
        };
        assert!(t >= last, "the log's times must not go backwards");
        last = t;
        while let Some(due) = next_tick.filter(|&due| due < t) {
            next_tick = d.tick(due);
        }
        match *e {
            Event::Arrival(a, outcome) => {
                d.arrive(a, Some(outcome));
            },
            Event::Dequeue(t) => {
                assert!(
                    d.dequeue(t).is_some(),
                    "a dequeue from an empty queue at {t} ns"
                );
            },
            Event::Idle(t) => {
                assert!(
                    d.fifo.is_empty(),
                    "an idle period with packets queued at {t} ns"
                );
                d.aqm.on_idle(t);
            },
        }
    }
    d.out
}

fn outcome_of(v: Verdict) -> Outcome {
    match v {
        Verdict::Pass => Outcome::Accepted,
        Verdict::Mark => Outcome::Marked,
        Verdict::Drop(_) => Outcome::Dropped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::config::AqmConfig;
    use crate::rng::StreamKind;
    use crate::units::MS;

    fn droptail(limit: u64) -> Aqm {
        let c: AqmConfig =
            serde_json::from_str(&format!(r#"{{"kind": "droptail", "limit": {limit}}}"#)).unwrap();
        c.build(BitsPerSec::from_mbps(8.0), 1000)
    }

    /// Four back-to-back 1,000-byte packets at 8 Mb/s (1 ms each) into a 2-packet buffer: the
    /// first is sent at once, two wait, the fourth overflows; a fifth, 5 ms later, finds the
    /// link idle. Departures at 0, 1, 2 and 5 ms.
    #[test]
    fn droptail_schedule_and_overflow_by_hand() {
        let arrivals: Vec<Arrival> = (0..5)
            .map(|i| Arrival {
                t: if i < 4 { 0 } else { 5 * MS },
                size: 1000,
                ect: false,
            })
            .collect();
        let r = replay(
            droptail(2),
            BitsPerSec::from_mbps(8.0),
            &arrivals,
            Mode::Free(Rng::stream(0, StreamKind::Test, 0)),
        );
        let verdicts: Vec<Verdict> = r.arrivals.iter().map(|a| a.verdict).collect();
        let overflow = Verdict::Drop(DropCause::Overflow);
        let pass = Verdict::Pass;
        assert_eq!(verdicts, vec![pass, pass, pass, overflow, pass]);
        let times: Vec<Time> = r.departures.iter().map(|d| d.t).collect();
        assert_eq!(times, vec![0, MS, 2 * MS, 5 * MS]);
        // The packet on the link is not in the queue (as in ns-2).
        let seen: Vec<u32> = r.arrivals.iter().map(|a| a.q.packets).collect();
        assert_eq!(seen, vec![0, 0, 1, 2, 0]);
    }

    /// Following a reference: a RED in its early region takes the reference's outcome for
    /// every arrival whose probability is strictly between 0 and 1, and says when it drew.
    #[test]
    fn follow_mode_takes_the_reference_outcome_in_the_early_region() {
        let c: AqmConfig = serde_json::from_str(
            r#"{"kind": "red", "limit": 100, "min_th": 1, "max_th": 50, "w_q": 1.0, "max_p": 0.5,
               "queue_in_bytes": false, "byte_mode": false}"#,
        )
        .unwrap();
        let aqm = c.build(BitsPerSec::from_mbps(8.0), 1000);
        // 20 arrivals at once: the queue grows, RED (w_q = 1) is in its early region from
        // the third on.
        let arrivals: Vec<Arrival> = (0..20)
            .map(|_| Arrival {
                t: 0,
                size: 1000,
                ect: false,
            })
            .collect();
        let outcomes: Vec<Outcome> = (0..20)
            .map(|i| {
                if i % 5 == 4 {
                    Outcome::Dropped
                } else {
                    Outcome::Accepted
                }
            })
            .collect();
        let r = replay(
            aqm,
            BitsPerSec::from_mbps(8.0),
            &arrivals,
            Mode::Follow(&outcomes),
        );
        for (i, a) in r.arrivals.iter().enumerate() {
            assert_eq!(a.applied, outcomes[i]);
            if a.drew && a.state.p_a > 0.0 && a.state.p_a < 1.0 {
                assert_eq!(outcome_of(a.verdict), outcomes[i], "arrival {i}");
            }
        }
        assert!(r.arrivals.iter().filter(|a| a.drew).count() >= 10);
        // The departures are the accepted ones, 1 ms apart.
        assert_eq!(r.departures.len(), 16);
        assert_eq!(r.departures[15].t, 15 * MS);
    }

    /// A reference's log with an idle period, by hand: RED with w_q = 0.5 on a link of 1,000
    /// mean-sized packets per second. Two arrivals at 0 (the second sees one queued: avg =
    /// 0.5), both sent, idle from 2 ms; an arrival at 12 ms decays the average over m = 10
    /// packet times: avg = 0.5·0.5^(10+1) + 0.5·0.
    #[test]
    fn log_replay_applies_the_idle_correction_by_hand() {
        let c: AqmConfig = serde_json::from_str(
            r#"{"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "w_q": 0.5,
               "queue_in_bytes": false, "byte_mode": false}"#,
        )
        .unwrap();
        let aqm = c.build(BitsPerSec::from_mbps(8.0), 1000);
        let a = |t| Arrival {
            t,
            size: 1000,
            ect: false,
        };
        let ok = Outcome::Accepted;
        let log = [
            Event::Arrival(a(0), ok),
            Event::Arrival(a(0), ok),
            Event::Dequeue(0),
            Event::Dequeue(MS),
            Event::Idle(2 * MS),
            Event::Arrival(a(12 * MS), ok),
            Event::Dequeue(12 * MS),
        ];
        let r = replay_log(aqm, &log);
        let avg: Vec<f64> = r.arrivals.iter().map(|x| x.state.avg).collect();
        assert_eq!(avg[..2], [0.0, 0.5]);
        assert!((avg[2] - 0.5f64.powi(12)).abs() < 1e-15, "{}", avg[2]);
        assert_eq!(r.departures.len(), 3);
    }
}
