//! FQ-PIE (Linux `net/sched/sch_fq_pie.c`, with PIE from `include/net/pie.h` and
//! `net/sched/sch_pie.c`; RFC 8033 for PIE): flow queues served by deficit round robin, each
//! with its own PIE controller, deciding at enqueue.
//!
//! * Classification and the new/old-flow deficit round robin: `flow_sched` (shared with
//!   FQ-CoDel; Linux `fq_pie_qdisc_enqueue`/`fq_pie_qdisc_dequeue` run the same scheduler).
//! * Enqueue (`fq_pie_qdisc_enqueue`): with `limit` packets already queued in all flows the
//!   packet is dropped (`overlimit`); otherwise the flow's `pie_drop_early` with the flow's
//!   byte backlog decides; a selected packet is marked instead when `ecn` is on, the flow's
//!   probability is at most `ecn_prob` % and the packet is ECT (or already CE, which Linux's
//!   `INET_ECN_set_ce` also accepts). Every drop resets the flow's `accu_prob`. Memory above
//!   `memory_limit` is only counted (`overmemory`): Linux does not drop for it.
//! * Dequeue: the flow's `pie_process_dequeue` with its remaining backlog (delay of the
//!   leaving packet, burst allowance).
//! * Every `tupdate` (`fq_pie_timer`) every flow's `pie_calculate_probability` runs with its
//!   backlog; the timer first fires 0.5 s after the qdisc starts (`HZ / 2` in `fq_pie_init`).
//!
//! The packet FIFOs live in `net::queue`; this module keeps the per-flow PIE variables.

use super::flow_sched::FlowScheduler;
use super::pie_linux::{LinuxPieParams, LinuxPieVars, MAX_PROB};
use super::{DropCause, QueueLen, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::UniformSource;
use crate::units::{Time, MS};

/// First run of `fq_pie_timer` after the start (`mod_timer(…, jiffies + HZ / 2)`).
const FIRST_UPDATE: Time = 500 * MS;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FqPieParams {
    pub flows: u32,
    /// Bytes of credit per round.
    pub quantum: u32,
    /// Packets in all flows.
    pub limit: u32,
    /// Bytes (Linux counts socket-buffer truesize; here packet bytes). Only counted.
    pub memory_limit: u64,
    /// % : mark instead of drop while the flow's probability is at most this.
    pub ecn_prob: u32,
    pub pie: LinuxPieParams,
}

/// tc's fq_pie statistics (`tc_fq_pie_xstats`).
#[derive(Clone, Debug, Default)]
pub struct FqPieStats {
    pub packets_in: u64,
    pub dropped: u64,
    pub overlimit: u64,
    pub overmemory: u64,
    pub ecn_mark: u64,
}

/// sch_pie's own counters (`pie_stats`) beyond those FQ-PIE keeps: the longest queue an
/// accepted packet found (`maxq`, packets, before it was added).
#[derive(Clone, Copy, Debug, Default)]
pub struct SchPieStats {
    pub maxq: u32,
}

#[derive(Clone, Debug)]
pub struct FqPie {
    pub p: FqPieParams,
    pub sched: FlowScheduler,
    pub vars: Vec<LinuxPieVars>,
    /// Bytes queued (Linux `memory_usage`).
    pub memory_usage: u64,
    pub stats: FqPieStats,
    /// Mark instead of drop while the flow's probability is at most this (`MAX_PROB / 100 ·
    /// ecn_prob`; sch_pie's `MAX_PROB / 10`).
    pub ecn_limit: u64,
    /// Linux's single-queue sch_pie (`kind = "pie_linux"`, `aqm/sch_pie.rs`): its own
    /// counters; `None` for FQ-PIE.
    pub single: Option<SchPieStats>,
}

impl FqPie {
    pub fn new(p: FqPieParams) -> Self {
        FqPie {
            sched: FlowScheduler::new(p.flows, p.quantum),
            vars: vec![LinuxPieVars::default(); p.flows as usize],
            memory_usage: 0,
            stats: FqPieStats::default(),
            ecn_limit: (MAX_PROB / 100) * p.ecn_prob as u64,
            single: None,
            p,
        }
    }

    /// sch_pie's ECN limit: `MAX_PROB / 10` (`pie_qdisc_enqueue`).
    pub const SCH_PIE_ECN_LIMIT: u64 = MAX_PROB / 10;

    /// Linux's sch_pie (`aqm/sch_pie.rs`): this path with one flow, sch_pie's ECN limit and
    /// counters.
    pub fn sch_pie(p: FqPieParams) -> Self {
        FqPie {
            ecn_limit: Self::SCH_PIE_ECN_LIMIT,
            single: Some(SchPieStats::default()),
            ..FqPie::new(p)
        }
    }

    /// Decision for an arriving packet; `q` is the total occupancy before it.
    #[inline]
    pub fn on_enqueue(
        &mut self,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        let flow = self.sched.classify(pkt);
        if q.packets >= self.p.limit {
            self.stats.overlimit += 1;
            return self.drop(flow, DropCause::Overflow);
        }
        if self.memory_usage > self.p.memory_limit + pkt.size as u64 {
            self.stats.overmemory += 1;
        }
        let vars = &mut self.vars[flow];
        if !vars.drop_early(&self.p.pie, self.sched.backlog[flow], pkt.size, rng) {
            self.accepted(q);
            return Verdict::Pass;
        }
        if self.p.pie.ecn && vars.prob <= self.ecn_limit && pkt.ecn != Ecn::NotEct {
            self.stats.ecn_mark += 1;
            self.accepted(q);
            return if pkt.ecn.is_ect() {
                Verdict::Mark
            } else {
                Verdict::Pass
            };
        }
        self.drop(flow, DropCause::Early)
    }

    /// An accepted packet (marked or not); sch_pie's `maxq` is the queue it found.
    #[inline]
    fn accepted(&mut self, q: QueueLen) {
        self.stats.packets_in += 1;
        if let Some(s) = self.single.as_mut() {
            s.maxq = s.maxq.max(q.packets);
        }
    }

    fn drop(&mut self, flow: usize, cause: DropCause) -> Verdict {
        self.stats.dropped += 1;
        self.vars[flow].accu_prob = 0;
        Verdict::Drop(cause)
    }

    /// The accepted packet was appended to `flow`'s FIFO.
    #[inline]
    pub fn on_enqueued(&mut self, flow: usize, size: u32) {
        self.memory_usage += size as u64;
        self.sched.on_enqueued(flow, size);
    }

    /// The head of `flow` leaves at `now`; FQ-PIE decides nothing at dequeue.
    #[inline]
    pub fn on_dequeue(&mut self, flow: usize, now: Time, pkt: &Packet) -> Verdict {
        let size = pkt.size as u64;
        self.sched.deficit[flow] -= size as i64;
        self.sched.backlog[flow] -= size;
        self.memory_usage -= size;
        let backlog = self.sched.backlog[flow];
        self.vars[flow].on_dequeue(&self.p.pie, now, pkt.enqueued_at, pkt.size, backlog);
        Verdict::Pass
    }

    /// `fq_pie_timer`: every flow's probability update (Linux does 2048 flows per timer run
    /// and continues at the next jiffy; here all at once).
    pub fn on_tick(&mut self, now: Time) {
        if now < FIRST_UPDATE {
            return;
        }
        for (v, &backlog) in self.vars.iter_mut().zip(&self.sched.backlog) {
            v.calculate_probability(&self.p.pie, backlog);
        }
    }

    /// Number of flows on either list.
    pub fn active_flows(&self) -> usize {
        self.sched.active_flows()
    }

    /// `tc -s qdisc show` for fq_pie (`tc_fq_pie_xstats`, tc's printed names).
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        let s = &self.stats;
        let (new_len, old_len) = self.sched.list_lens();
        let serde_json::Value::Object(m) = serde_json::json!({
            "pkts_in": s.packets_in,
            "overlimit": s.overlimit,
            "overmemory": s.overmemory,
            "dropped": s.dropped,
            "ecn_mark": s.ecn_mark,
            "new_flow_count": self.sched.new_flow_count,
            "new_flows_len": new_len,
            "old_flows_len": old_len,
            "memory_used": self.memory_usage,
        }) else {
            unreachable!("json! of an object literal is an object")
        };
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::pie_linux::ticks;
    use crate::rng::{Rng, StreamKind};

    fn params() -> FqPieParams {
        FqPieParams {
            flows: 4,
            quantum: 1500,
            limit: 10240,
            memory_limit: 32 << 20,
            ecn_prob: 10,
            pie: LinuxPieParams {
                target: 15 * MS,
                tupdate: 15 * MS,
                alpha: 2,
                beta: 20,
                ecn: true,
                bytemode: false,
                dq_rate_estimator: false,
                mtu: 1500,
            },
        }
    }

    /// A packet of flow bucket `flow` (of 4: hash = flow·2³⁰).
    fn pkt(flow: u32, ecn: Ecn) -> Packet {
        Packet {
            size: 1500,
            flow_hash: flow << 30,
            ecn,
            ..Default::default()
        }
    }

    fn q(packets: u32) -> QueueLen {
        QueueLen {
            packets,
            bytes: packets as u64 * 1500,
        }
    }

    #[test]
    fn per_flow_probability_over_updates() {
        // Flow 0 holds a standing 40-ms queue, flow 1 a 2-ms one, flow 2 is idle. Each
        // update sees the sojourn of the flow's last dequeued packet (Linux
        // pie_process_dequeue): 40 ms = 625 000 ticks, 2 ms = 31 250.
        let mut fp = FqPie::new(params());
        fp.sched.backlog[0] = 30_000;
        fp.sched.backlog[1] = 3_000;
        // Before 0.5 s (fq_pie_init's HZ/2) the timer has not run.
        fp.vars[0].qdelay = ticks(40 * MS);
        fp.on_tick(495 * MS);
        assert_eq!(fp.vars[0].prob, 0);
        let set = |fp: &mut FqPie| {
            fp.vars[0].qdelay = ticks(40 * MS);
            fp.vars[1].qdelay = ticks(2 * MS);
        };
        // Update 1 (510 ms). Flow 0: prob 0 → shift 11: alpha 281 474, beta 2 814 749:
        //   281474·(625000 − 234375) + 2814749·(625000 − 0) = 1 869 168 906 250.
        // Flow 1: 281474·(31250 − 234375) + 2814749·31250 = −57 174 406 250 + 87 960 906 250
        //   = 30 786 500 000.
        // Flow 2: 281474·(0 − 234375) < 0 → 0, and its vars are re-initialised.
        set(&mut fp);
        fp.on_tick(510 * MS);
        assert_eq!(fp.vars[0].prob, 1_869_168_906_250);
        assert_eq!(fp.vars[1].prob, 30_786_500_000);
        assert_eq!(fp.vars[2].prob, 0);
        // Update 2 (525 ms). Flow 0: 1e-5 ≤ p < 1e-4 → shift 7 (alpha 4 503 599):
        //   + 4503599·390625 = 1 759 218 359 375 → 3 628 387 265 625.
        // Flow 1: p = 4.3e-7 < 1e-6 → shift 11; delta = 281474·(31250 − 234375) + 0
        //   = −57 174 406 250 → 0 (underflow clamp).
        set(&mut fp);
        fp.on_tick(525 * MS);
        assert_eq!(fp.vars[0].prob, 3_628_387_265_625);
        assert_eq!(fp.vars[1].prob, 0);
        // Update 3: flow 0's queue has drained (delay 0, backlog 0): delta =
        //   4503599·(0 − 234375) + 45035996·(0 − 625000) = −1 055 531 015 625
        //   − 28 147 497 500 000 < −prob → 0.
        fp.sched.backlog[0] = 0;
        fp.vars[0].qdelay = 0;
        fp.vars[0].burst_time = 0;
        fp.on_tick(540 * MS);
        assert_eq!(fp.vars[0].prob, 0);
        // The previous delay (40 ms) was not below target/2: no re-arm yet; at the next
        // update both are 0 with prob 0: pie_vars_init gives back 150 ms.
        assert_eq!(fp.vars[0].burst_time, 0);
        fp.on_tick(555 * MS);
        assert_eq!(fp.vars[0].burst_time, 2_343_750);
    }

    #[test]
    fn burst_allowance_then_drops_with_ecn_threshold() {
        let mut g = Rng::stream(1, StreamKind::Test, 0);
        let mut fp = FqPie::new(params());
        fp.sched.backlog[0] = 30_000;
        fp.vars[0].qdelay = ticks(40 * MS);
        fp.vars[0].prob = MAX_PROB; // would select every packet
                                    // 150 ms of burst allowance: accepted.
        assert_eq!(
            fp.on_enqueue(&pkt(0, Ecn::NotEct), q(20), &mut g),
            Verdict::Pass
        );
        fp.vars[0].burst_time = 0;
        // prob 1 > ecn_prob 10 %: ECT dropped too; accu_prob reset by the drop.
        assert_eq!(
            fp.on_enqueue(&pkt(0, Ecn::Ect0), q(20), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(fp.vars[0].accu_prob, 0);
        // prob exactly 10 % (MAX_PROB/100·10): ≤ threshold → marks instead. 0.1 per packet
        // accumulates to 8.5 (85th packet) at the latest, so within 100 some are selected;
        // ECT packets are all marked, never dropped.
        fp.vars[0].prob = (MAX_PROB / 100) * 10;
        let v: Vec<_> = (0..100)
            .map(|_| fp.on_enqueue(&pkt(0, Ecn::Ect1), q(20), &mut g))
            .collect();
        assert!(v.contains(&Verdict::Mark));
        assert!(v.iter().all(|&x| x != Verdict::Drop(DropCause::Early)));
        // One step above: dropped.
        fp.vars[0].prob = (MAX_PROB / 100) * 10 + 1;
        fp.vars[0].accu_prob = MAX_PROB / 2 * 17;
        assert_eq!(
            fp.on_enqueue(&pkt(0, Ecn::Ect1), q(20), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // Not-ECT at 10 %: dropped, not marked.
        fp.vars[0].prob = (MAX_PROB / 100) * 10;
        fp.vars[0].accu_prob = MAX_PROB / 2 * 17;
        assert_eq!(
            fp.on_enqueue(&pkt(0, Ecn::NotEct), q(20), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // Another flow (its own burst allowance) is untouched by flow 0's state.
        assert_eq!(
            fp.on_enqueue(&pkt(1, Ecn::NotEct), q(20), &mut g),
            Verdict::Pass
        );
        let s = &fp.stats;
        assert_eq!(s.dropped, 3);
        // Accepted: the burst packet, the 100 at 10 % (passed or marked), flow 1's.
        assert_eq!(s.packets_in, 102);
        assert!(s.ecn_mark > 0);
    }

    #[test]
    fn overflow_at_the_total_limit() {
        let mut g = Rng::stream(2, StreamKind::Test, 0);
        let mut p = params();
        p.limit = 3;
        let mut fp = FqPie::new(p);
        // Whatever the flow, the 4th packet in the qdisc is refused (qlen ≥ limit).
        assert_eq!(
            fp.on_enqueue(&pkt(2, Ecn::NotEct), q(2), &mut g),
            Verdict::Pass
        );
        assert_eq!(
            fp.on_enqueue(&pkt(3, Ecn::NotEct), q(3), &mut g),
            Verdict::Drop(DropCause::Overflow)
        );
        assert_eq!((fp.stats.overlimit, fp.stats.dropped), (1, 1));
    }

    #[test]
    fn memory_over_limit_is_counted_not_dropped() {
        let mut g = Rng::stream(3, StreamKind::Test, 0);
        let mut p = params();
        p.memory_limit = 3000;
        let mut fp = FqPie::new(p);
        for f in 0..3 {
            fp.on_enqueued(f, 1500);
        }
        // 4500 > 3000 + 1500? No: not over.
        assert_eq!(
            fp.on_enqueue(&pkt(3, Ecn::NotEct), q(3), &mut g),
            Verdict::Pass
        );
        fp.on_enqueued(3, 1500);
        // 6000 > 4500: counted, and still accepted.
        assert_eq!(
            fp.on_enqueue(&pkt(3, Ecn::NotEct), q(4), &mut g),
            Verdict::Pass
        );
        assert_eq!(fp.stats.overmemory, 1);
    }

    #[test]
    fn dequeue_updates_flow_delay_and_deficit() {
        let mut fp = FqPie::new(params());
        let mut a = pkt(0, Ecn::NotEct);
        fp.on_enqueued(0, 1500);
        fp.on_enqueued(0, 1500);
        assert_eq!(fp.sched.select(), Some(0));
        a.enqueued_at = 10 * MS;
        fp.on_dequeue(0, 30 * MS, &a);
        // 30 ms − 10 ms in ticks: 468 750 − 156 250 = 312 500; 1500 B left.
        assert_eq!(fp.vars[0].qdelay, 312_500);
        assert_eq!(fp.sched.deficit[0], 0);
        assert_eq!(fp.memory_usage, 1500);
        fp.on_dequeue(0, 31 * MS, &a);
        assert_eq!(fp.vars[0].qdelay, 0, "flow empty");
        // 1 ms between the flow's dequeues: 484 375 − 468 750 = 15 625 ticks off the burst.
        assert_eq!(fp.vars[0].burst_time, 2_343_750 - 15_625);
        let st = fp.qdisc_stats();
        assert_eq!(st["new_flow_count"], 1);
        assert_eq!(st["memory_used"], 0);
    }
}
