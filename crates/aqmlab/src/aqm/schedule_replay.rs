//! Replays a schedule of queue events through one discipline, for the comparison with Linux's
//! own queue-discipline code built in user space (validation/linux_qdisc, docs/validation.md).
//!
//! A schedule is what a root qdisc sees: packets arriving (size, DS byte, flow hash), the
//! link asking for a packet at given instants (not a modelled link: the same instants go to
//! the kernel), and the discipline's timer firing. Each step is applied as `net::queue::Queue`
//! applies it (same calls on the discipline, same order: the verdict at enqueue, the FQ
//! overflow batch, the dequeue loop that drops at the head until a packet is sent or the
//! queue is found empty), but with the packets kept here so that every decision can be told
//! by the packet it concerns.
//!
//! Random decisions take the very words the kernel's `get_random_*` calls took: both sides
//! read one recorded stream of u32s, and `KernelWords` turns the next words into the uniform
//! number our discipline compares, the way the kernel compares them (`Draw`).
//!
//! The log has one line per step, in the harness's format (validation/linux_qdisc/harness/
//! harness.h): `e <id> ok|ce|drop[ x <id>…]`, `d <id>|-[ ce][ x <id>…]`, `t`, then ` | ` and
//! the state as `key=value` pairs in the kernel's own units (`state`).

use std::collections::VecDeque;
use std::fmt::Write;

use super::cake::hash::QUEUES;
use super::cake::{CakeRandom, Pick};
use super::{Aqm, DropCause, QueueCounts, QueueLen, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::UniformSource;
use crate::units::Time;

/// One event at the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A packet arrives: its size, DS byte (only the ECN bits are modelled) and flow hash.
    Arrive {
        t: Time,
        size: u32,
        ds: u8,
        hash: u32,
    },
    /// The link asks for a packet.
    Dequeue(Time),
    /// The discipline's periodic update (Linux: its timer) runs.
    Tick(Time),
}

/// How the kernel turns random words into a decision, hence which uniform number stands
/// for them in our discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// One u32 `r` (`get_random_u32`): `r / 2³²`.
    U32,
    /// Eight bytes as a u64 `r` (`get_random_bytes(&rnd, 8)`, two words, little-endian),
    /// compared by their top 56 bits (PIE: `(rnd >> 8) < prob`): `(r >> 8) / 2⁵⁶`.
    U64Top56,
}

/// The recorded words, consumed as the kernel consumes them.
pub struct KernelWords<'a> {
    words: &'a [u32],
    pos: usize,
    draw: Draw,
}

impl KernelWords<'_> {
    fn next(&mut self) -> u32 {
        let w = *self
            .words
            .get(self.pos)
            .expect("the recorded random stream is exhausted");
        self.pos += 1;
        w
    }
}

impl UniformSource for KernelWords<'_> {
    fn uniform(&mut self) -> f64 {
        match self.draw {
            Draw::U32 => self.next() as f64 / (1u64 << 32) as f64,
            Draw::U64Top56 => {
                let lo = self.next() as u64;
                let r = lo | (self.next() as u64) << 32;
                (r >> 8) as f64 / (1u64 << 56) as f64
            },
        }
    }
}

/// CAKE's draws from the same words: the shim's `get_random_u16` is the low 16 bits of one
/// word, `get_random_u32` one word.
impl CakeRandom for KernelWords<'_> {
    fn bits16(&mut self) -> u64 {
        (self.next() as u16) as u64
    }

    fn bits32(&mut self) -> u32 {
        self.next()
    }
}

/// The DS byte's ECN field (RFC 3168 §5) and back.
pub fn ecn_of(ds: u8) -> Ecn {
    match ds & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// A queued packet: its number (order of arrival) and its ECN field as the enqueue left it.
#[derive(Clone, Copy)]
struct Queued {
    id: u32,
    pkt: Packet,
    ecn_enqueued: Ecn,
}

enum Storage {
    Fifo(VecDeque<Queued>),
    Flows(Vec<VecDeque<Queued>>),
    /// CAKE: 1024 queues per tin, tin-major.
    Tins(Vec<VecDeque<Queued>>),
    /// DualPI2: the C and L queues (`dualpi2::C`, `dualpi2::L`).
    Dual([VecDeque<Queued>; 2]),
}

/// The discipline, its packets and counters, and the log.
pub struct ScheduleReplay<'a> {
    pub aqm: Aqm,
    storage: Storage,
    len: QueueLen,
    counts: QueueCounts,
    words: KernelWords<'a>,
    next_id: u32,
    /// The last step's time (CoDel's `drop_next` is shown relative to nothing: absolute).
    now: Time,
}

impl<'a> ScheduleReplay<'a> {
    pub fn new(aqm: Aqm, words: &'a [u32], draw: Draw) -> Self {
        let storage = match aqm.flow_buckets() {
            Some(n) => Storage::Flows((0..n).map(|_| VecDeque::new()).collect()),
            None => match &aqm {
                Aqm::DropTail(_) | Aqm::Red(_) | Aqm::Codel(_) | Aqm::Pie(_) | Aqm::RedLinux(_) => {
                    Storage::Fifo(VecDeque::new())
                },
                Aqm::Cake(c) => Storage::Tins((0..c.queues()).map(|_| VecDeque::new()).collect()),
                Aqm::DualPi2(_) => Storage::Dual([VecDeque::new(), VecDeque::new()]),
                _ => panic!("{}: no schedule replay for this discipline yet", aqm.name()),
            },
        };
        ScheduleReplay {
            aqm,
            storage,
            len: QueueLen::default(),
            counts: QueueCounts::default(),
            words: KernelWords {
                words,
                pos: 0,
                draw,
            },
            next_id: 0,
            now: 0,
        }
    }

    /// Runs one step; returns its log line.
    pub fn step(&mut self, s: Step) -> String {
        let mut line = match s {
            Step::Arrive { t, size, ds, hash } => {
                self.now = t;
                self.arrive(t, size, ds, hash)
            },
            Step::Dequeue(t) => {
                self.now = t;
                self.dequeue(t)
            },
            // A discipline without a timer (Linux RED without `adaptive`) answers as the
            // harness does for a timer that is not armed.
            Step::Tick(t) => {
                self.now = t;
                if self.aqm.tick_period().is_none() {
                    "t off".to_string()
                } else {
                    self.aqm.on_tick(t, self.len);
                    "t".to_string()
                }
            },
        };
        self.state(&mut line);
        line
    }

    fn count_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::Early => self.counts.drops_early += 1,
            DropCause::Forced => self.counts.drops_forced += 1,
            DropCause::Overflow => self.counts.drops_overflow += 1,
        }
    }

    fn arrive(&mut self, now: Time, size: u32, ds: u8, hash: u32) -> String {
        let id = self.next_id;
        self.next_id += 1;
        self.counts.arrivals += 1;
        let mut pkt = Packet {
            size,
            ecn: ecn_of(ds),
            flow_hash: hash,
            ..Default::default()
        };
        let ecn_before = pkt.ecn;
        let verdict = self.aqm.on_enqueue(now, &pkt, self.len, &mut self.words);
        let cause = match verdict {
            Verdict::Drop(cause) => cause,
            Verdict::Pass | Verdict::Mark => {
                if verdict == Verdict::Mark {
                    pkt.ecn = Ecn::Ce;
                    self.counts.marks += 1;
                }
                pkt.enqueued_at = now;
                self.len.packets += 1;
                self.len.bytes += size as u64;
                let entry = Queued {
                    id,
                    pkt,
                    ecn_enqueued: pkt.ecn,
                };
                let fate = if pkt.ecn != ecn_before { "ce" } else { "ok" };
                let mut others = String::new();
                let mut self_dropped = false;
                match &mut self.storage {
                    Storage::Fifo(fifo) => fifo.push_back(entry),
                    Storage::Dual(queues) => {
                        let Aqm::DualPi2(dp) = &self.aqm else {
                            unreachable!("dual storage belongs to DualPI2")
                        };
                        queues[dp.enqueue_class()].push_back(entry);
                    },
                    Storage::Flows(flows) => {
                        let flow = self.aqm.fq_enqueued(&pkt);
                        flows[flow].push_back(entry);
                        while let Some(victim) = self.aqm.fq_overflow_victim(self.len) {
                            let v = flows[victim].pop_front().expect("victim flow has packets");
                            self.len.packets -= 1;
                            self.len.bytes -= v.pkt.size as u64;
                            self.counts.drops_overflow += 1;
                            self.aqm.fq_head_dropped(victim, v.pkt.size);
                            if v.id == id {
                                self_dropped = true;
                            } else {
                                let _ = write!(others, " x {}", v.id);
                            }
                        }
                    },
                    Storage::Tins(queues) => {
                        let Aqm::Cake(cake) = &mut self.aqm else {
                            unreachable!("tin storage belongs to CAKE")
                        };
                        let (tin, q) = cake.classify(&pkt);
                        queues[tin * QUEUES + q].push_back(entry);
                        cake.on_enqueued(now, tin, q, size, &mut self.words);
                        // Over the memory limit: heads of the longest queue (any tin).
                        while let Some((vt, vq)) = cake.overflow_victim() {
                            let v = queues[vt * QUEUES + vq]
                                .pop_front()
                                .expect("victim queue has packets");
                            self.len.packets -= 1;
                            self.len.bytes -= v.pkt.size as u64;
                            self.counts.drops_overflow += 1;
                            cake.on_overflow_drop(now, vt, vq, v.pkt.size);
                            if v.id == id {
                                self_dropped = true;
                            } else {
                                let _ = write!(others, " x {}", v.id);
                            }
                        }
                    },
                }
                self.counts.peak_packets = self.counts.peak_packets.max(self.len.packets);
                let fate = if self_dropped { "drop" } else { fate };
                return format!("e {id} {fate}{others}");
            },
        };
        self.count_drop(cause);
        format!("e {id} drop")
    }

    fn dequeue(&mut self, now: Time) -> String {
        let mut dropped = String::new();
        // CAKE serves decaying flows first only on the first pick of a dequeue.
        let mut first = true;
        loop {
            let (q, verdict) = match &mut self.storage {
                Storage::Fifo(fifo) => {
                    let Some(q) = fifo.pop_front() else {
                        self.aqm.on_idle(now);
                        return format!("d -{dropped}");
                    };
                    self.len.packets -= 1;
                    self.len.bytes -= q.pkt.size as u64;
                    let v = self.aqm.on_dequeue(now, &q.pkt, self.len, &mut self.words);
                    (q, v)
                },
                Storage::Flows(flows) => {
                    let Some(flow) = self.aqm.fq_select() else {
                        self.aqm.on_idle(now);
                        return format!("d -{dropped}");
                    };
                    let Some(q) = flows[flow].pop_front() else {
                        self.aqm.fq_flow_empty(flow);
                        continue;
                    };
                    self.len.packets -= 1;
                    self.len.bytes -= q.pkt.size as u64;
                    let v = self.aqm.fq_dequeue(flow, now, &q.pkt, self.len);
                    (q, v)
                },
                // As net::queue's pick_scheduled: the scheduler's choice, the next head's
                // enqueue time, the verdict on the packet taken.
                Storage::Dual(queues) => {
                    let Aqm::DualPi2(dp) = &mut self.aqm else {
                        unreachable!("dual storage belongs to DualPI2")
                    };
                    let Some(class) = dp.select(queues[0].len(), queues[1].len()) else {
                        self.aqm.on_idle(now);
                        return format!("d -{dropped}");
                    };
                    let q = queues[class]
                        .pop_front()
                        .expect("selected queue has packets");
                    let next_head = queues[class].front().map(|n| n.pkt.enqueued_at);
                    self.len.packets -= 1;
                    self.len.bytes -= q.pkt.size as u64;
                    let v = dp.on_dequeue(class, now, &q.pkt, self.len, next_head, &mut self.words);
                    (q, v)
                },
                Storage::Tins(queues) => {
                    let Aqm::Cake(cake) = &mut self.aqm else {
                        unreachable!("tin storage belongs to CAKE")
                    };
                    let (tin, i) = match cake.select(now, first, &mut self.words) {
                        Pick::Flow(t, i) => (t, i),
                        Pick::Wait(_) => return format!("d -{dropped}"),
                        Pick::Idle => return format!("d -{dropped}"),
                    };
                    first = false;
                    let k = tin * QUEUES + i;
                    let Some(q) = queues[k].pop_front() else {
                        cake.on_flow_empty(now, tin, i);
                        continue;
                    };
                    self.len.packets -= 1;
                    self.len.bytes -= q.pkt.size as u64;
                    let more = !queues[k].is_empty();
                    let v = cake.on_dequeue(now, tin, i, &q.pkt, more, &mut self.words);
                    (q, v)
                },
            };
            let mut pkt = q.pkt;
            match verdict {
                Verdict::Pass => {},
                Verdict::Mark => {
                    pkt.ecn = Ecn::Ce;
                    self.counts.marks += 1;
                },
                Verdict::Drop(cause) => {
                    self.count_drop(cause);
                    let _ = write!(dropped, " x {}", q.id);
                    continue;
                },
            }
            let ce = if pkt.ecn != q.ecn_enqueued { " ce" } else { "" };
            return format!("d {}{ce}{dropped}", q.id);
        }
    }

    /// ` | ` and the state: the tc counters the harness prints for every discipline, the
    /// random words consumed, then the discipline's own (`super::schedule_state`).
    fn state(&self, line: &mut String) {
        let c = &self.counts;
        let _ = write!(
            line,
            " | qlen={} backlog={} drops={} overlimits={} rnd={}",
            self.len.packets,
            self.len.bytes,
            c.drops(),
            self.aqm.tc_overlimits(c),
            self.words.pos
        );
        let flow_lens: Vec<usize> = match &self.storage {
            Storage::Flows(flows) => flows.iter().map(VecDeque::len).collect(),
            Storage::Dual(queues) => queues.iter().map(VecDeque::len).collect(),
            Storage::Fifo(_) | Storage::Tins(_) => Vec::new(),
        };
        super::schedule_state::write(&self.aqm, c, self.len, &flow_lens, line);
    }
}

/// Replays `steps` through `aqm`; the log, one line per step.
pub fn replay_schedule(aqm: Aqm, steps: &[Step], words: &[u32], draw: Draw) -> Vec<String> {
    let mut r = ScheduleReplay::new(aqm, words, draw);
    steps.iter().map(|&s| r.step(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::config::AqmConfig;
    use crate::units::{BitsPerSec, MS};

    fn aqm(json: &str) -> Aqm {
        let c: AqmConfig = serde_json::from_str(json).unwrap();
        c.build(BitsPerSec::from_mbps(10.0), 1000)
    }

    /// A 2-packet CoDel buffer: the third arrival overflows; the link takes the two queued
    /// ones and then finds the queue empty.
    #[test]
    fn fifo_decisions_by_hand() {
        let steps = [
            Step::Arrive {
                t: 0,
                size: 1000,
                ds: 0,
                hash: 1,
            },
            Step::Arrive {
                t: 0,
                size: 1000,
                ds: 2,
                hash: 1,
            },
            Step::Arrive {
                t: 0,
                size: 1000,
                ds: 0,
                hash: 1,
            },
            Step::Dequeue(MS),
            Step::Dequeue(2 * MS),
            Step::Dequeue(3 * MS),
        ];
        let log = replay_schedule(
            aqm(r#"{"kind": "codel", "limit": 2}"#),
            &steps,
            &[],
            Draw::U32,
        );
        let decisions: Vec<&str> = log.iter().map(|l| l.split(" | ").next().unwrap()).collect();
        assert_eq!(
            decisions,
            ["e 0 ok", "e 1 ok", "e 2 drop", "d 0", "d 1", "d -"]
        );
        assert!(log[2].contains("qlen=2 backlog=2000 drops=1"), "{}", log[2]);
        assert!(log[2].contains("drop_overlimit=1"), "{}", log[2]);
    }

    /// DualPI2 by hand (Linux dequeue_packet): a Not-ECT packet to C, an ECT(1) one to L. The
    /// credit starts at 1514·(10 − 90) = −121120 ≤ 0, so L goes first and, C waiting, adds
    /// 10·1000; then C alone (no change); then both empty: the credit is reset. 1000 B of
    /// backlog is under the 2-MTU floor and a 1 ms sojourn is not above the step: no AQM.
    #[test]
    fn dual_queue_decisions_by_hand() {
        let arrive = |ds| Step::Arrive {
            t: 1000,
            size: 1000,
            ds,
            hash: 1,
        };
        let steps = [
            arrive(0),
            arrive(1),
            Step::Dequeue(1000 + MS),
            Step::Dequeue(3 * MS),
            Step::Dequeue(4 * MS),
        ];
        let q = r#"{"kind": "dualpi2", "mtu": 1514, "linux_fixed_point": true}"#;
        let log = replay_schedule(aqm(q), &steps, &[], Draw::U32);
        let decisions: Vec<&str> = log.iter().map(|l| l.split(" | ").next().unwrap()).collect();
        assert_eq!(decisions, ["e 0 ok", "e 1 ok", "d 1", "d 0", "d -"]);
        assert!(
            log[1].contains("c_head_ts=1000 l_head_ts=1000 credit=-121120 l_qlen=1"),
            "{}",
            log[1]
        );
        assert!(
            log[2].contains("l_head_ts=0 credit=-111120 l_qlen=0"),
            "{}",
            log[2]
        );
        assert!(log[3].contains("credit=-111120"), "{}", log[3]);
        assert!(
            log[4].contains("qlen=0 backlog=0 drops=0") && log[4].contains("credit=-121120"),
            "{}",
            log[4]
        );
    }

    /// The words as PIE's kernel code reads them: two words, little-endian, top 56 bits.
    #[test]
    fn kernel_words_follow_the_kernel_comparisons() {
        let words = [0x8000_0000, 0, 0x0000_0100, 0x8000_0000];
        let mut w = KernelWords {
            words: &words,
            pos: 0,
            draw: Draw::U32,
        };
        assert_eq!(w.uniform(), 0.5);
        let mut w = KernelWords {
            words: &words[2..],
            pos: 0,
            draw: Draw::U64Top56,
        };
        // r = 0x8000_0000_0000_0100: (r >> 8) = 2⁵⁵ + 1 → just above one half.
        let u = w.uniform();
        assert_eq!(u, ((1u64 << 55) + 1) as f64 / (1u64 << 56) as f64);
        assert_eq!(w.pos, 2);
    }
}
