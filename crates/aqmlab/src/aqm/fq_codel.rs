//! FQ-CoDel (RFC 8290; Linux `net/sched/sch_fq_codel.c`): flow queues served by deficit round
//! robin, each with its own CoDel state.
//!
//! * Classification and the new/old-flow deficit round robin: `flow_sched` (shared with
//!   FQ-PIE).
//! * Overflow: when more than `limit` packets (or `memory_limit` bytes) are queued, packets
//!   are dropped from the **head** of the flow with the largest byte backlog until half of its
//!   backlog is gone or `drop_batch` packets were dropped; its CoDel `count` grows by the
//!   number dropped (Linux `fq_codel_drop`).
//! * Dequeue: CoDel on the selected flow's head; a sent packet costs `deficit −= size`.
//! * CE threshold (Linux `codel_dequeue`, label `end`, in `include/net/codel_impl.h`; off
//!   unless `ce_threshold` is set): a packet that leaves with a sojourn (CoDel's `ldelay`, in
//!   codel time) strictly above the threshold (in codel time) is CE-marked when it is ECT, after CoDel's own decision (a packet CoDel
//!   marked is already CE and is counted again, as `INET_ECN_set_ce` reports success on CE).
//!   With a selector, only packets whose DS byte masked by `mask` equals `selector` qualify;
//!   here only the two ECN bits of the DS byte exist (`CeThreshold`).
//!
//! The packet FIFOs themselves live in `net::queue` (the one place that acts on decisions and
//! counts them); this module keeps the per-flow CoDel states and the overflow batch.

use super::codel::{codel_time, time_after, CodelParams, CodelState};
use super::flow_sched::FlowScheduler;
use super::{QueueLen, Verdict};
use crate::packet::Ecn;
use crate::packet::Packet;
use crate::units::{Time, MS};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FqCodelParams {
    pub flows: u32,
    /// Bytes of credit per round.
    pub quantum: u32,
    /// Packets in all flows.
    pub limit: u32,
    /// Bytes in all flows (Linux counts buffer memory; here packet bytes).
    pub memory_limit: u64,
    pub drop_batch: u32,
    /// Per-flow CoDel (its `limit` is unused).
    pub codel: CodelParams,
    /// L4S CE threshold; absent (the default) leaves FQ-CoDel as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<CeThreshold>,
}

/// Linux `ce_threshold`, `ce_threshold_selector` and `ce_threshold_mask` (tc-fq_codel).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CeThreshold {
    /// Sojourn above which a qualifying packet is marked (ns; compared in codel time, 1024-ns
    /// units, as Linux's `codel_time_after`).
    pub threshold: Time,
    /// DS-byte bits compared; 0 = every ECT packet qualifies. Only the ECN bits (0x03)
    /// are modelled.
    pub mask: u8,
    /// Value the masked DS byte must equal (Linux `ce_threshold_selector`).
    pub selector: u8,
}

impl CeThreshold {
    /// Whether a packet leaving with sojourn `ldelay` (codel time) and ECN codepoint `ecn`
    /// is marked (or, if already CE, counted): Linux's
    /// `codel_time_after(ldelay, ce_threshold)`, the selector test on
    /// `(dsfield & mask) == selector`, then `INET_ECN_set_ce` (true for ECT and CE).
    #[inline]
    pub fn applies(&self, ldelay: u32, ecn: Ecn) -> bool {
        if !time_after(ldelay, codel_time(self.threshold)) || ecn == Ecn::NotEct {
            return false;
        }
        self.mask == 0 || ecn_bits(ecn) & self.mask == self.selector
    }
}

/// The two ECN bits of the DS byte (RFC 3168 §5): Not-ECT 00, ECT(1) 01, ECT(0) 10, CE 11.
pub fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0b00,
        Ecn::Ect1 => 0b01,
        Ecn::Ect0 => 0b10,
        Ecn::Ce => 0b11,
    }
}

impl FqCodelParams {
    /// Linux `fq_codel_init` defaults (quantum 1514 B, 32 MB memory limit, drop batch 64,
    /// CoDel target 5 ms / interval 100 ms, MTU 1514, ECN on) with `flows` buckets and a
    /// `limit`-packet buffer.
    pub fn linux_defaults(flows: u32, limit: u32) -> Self {
        FqCodelParams {
            flows,
            quantum: 1514,
            limit,
            memory_limit: 32 << 20,
            drop_batch: 64,
            codel: CodelParams {
                target: 5 * MS,
                interval: 100 * MS,
                mtu: 1514,
                ecn: true,
                limit,
            },
            ce_threshold: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct FqCodel {
    pub p: FqCodelParams,
    pub sched: FlowScheduler,
    pub codel: Vec<CodelState>,
    /// Overflow batch in progress: (flow, packets left to drop at most, bytes still to drop).
    batch: Option<(u32, u32, u64)>,
    batch_dropped: u32,
    pub overflow_batches: u64,
    pub stats: FqCodelStats,
}

/// tc's fq_codel statistics (`tc_fq_codel_qd_stats`) that the model counts.
#[derive(Clone, Debug, Default)]
pub struct FqCodelStats {
    /// Largest packet seen by CoDel at dequeue (Linux `codel_should_drop`).
    pub maxpacket: u32,
    /// Packets dropped by overflow batches (Linux `fq_codel_enqueue`).
    pub drop_overlimit: u64,
    /// Of those, dropped by batches started while over `memory_limit`.
    pub drop_overmemory: u64,
    /// CoDel's marks (instead of drops).
    pub ecn_mark: u64,
    /// CE-threshold marks.
    pub ce_mark: u64,
    batch_for_memory: bool,
}

impl FqCodel {
    pub fn new(p: FqCodelParams) -> Self {
        let n = p.flows as usize;
        FqCodel {
            sched: FlowScheduler::new(p.flows, p.quantum),
            codel: vec![CodelState::default(); n],
            batch: None,
            batch_dropped: 0,
            overflow_batches: 0,
            stats: FqCodelStats::default(),
            p,
        }
    }

    /// After an enqueue: the flow whose head packet must be dropped next, if over a limit.
    /// Call repeatedly (dropping the head each time and reporting it with `on_head_dropped`)
    /// until `None`; one batch per enqueue, as Linux.
    pub fn overflow_victim(&mut self, q: QueueLen) -> Option<usize> {
        match self.batch {
            None => {
                if q.packets <= self.p.limit && q.bytes <= self.p.memory_limit {
                    return None;
                }
                let (fat, &bytes) = self
                    .sched
                    .backlog
                    .iter()
                    .enumerate()
                    .max_by_key(|&(i, b)| (*b, std::cmp::Reverse(i)))?;
                if bytes == 0 {
                    return None;
                }
                self.overflow_batches += 1;
                self.stats.batch_for_memory = q.bytes > self.p.memory_limit;
                self.batch = Some((fat as u32, self.p.drop_batch, bytes / 2));
                self.batch_dropped = 0;
                Some(fat)
            },
            Some((flow, left, bytes_left)) => {
                if left == 0 || bytes_left == 0 || self.sched.backlog[flow as usize] == 0 {
                    self.codel[flow as usize].count += self.batch_dropped;
                    self.batch = None;
                    None
                } else {
                    Some(flow as usize)
                }
            },
        }
    }

    /// The head of `flow` was dropped by the overflow batch.
    pub fn on_head_dropped(&mut self, flow: usize, size: u32) {
        self.sched.backlog[flow] -= size as u64;
        self.batch_dropped += 1;
        self.stats.drop_overlimit += 1;
        if self.stats.batch_for_memory {
            self.stats.drop_overmemory += 1;
        }
        if let Some((f, left, bytes_left)) = &mut self.batch {
            debug_assert_eq!(*f as usize, flow);
            *left -= 1;
            *bytes_left = bytes_left.saturating_sub(size as u64);
        }
    }

    /// The selected flow had no packet: CoDel's empty handling and the list move.
    #[inline]
    pub fn on_flow_empty(&mut self, flow: usize) {
        self.codel[flow].on_empty();
        self.sched.on_flow_empty(flow);
    }

    /// CoDel decision for the head packet of `flow`, then the CE threshold; `q_after` is the
    /// total occupancy.
    #[inline]
    pub fn on_dequeue(
        &mut self,
        flow: usize,
        now: Time,
        pkt: &Packet,
        q_after: QueueLen,
    ) -> Verdict {
        self.sched.backlog[flow] -= pkt.size as u64;
        self.stats.maxpacket = self.stats.maxpacket.max(pkt.size);
        let mut v = self.codel[flow].on_dequeue(&self.p.codel, now, pkt, q_after);
        if v != Verdict::Pass && v != Verdict::Mark {
            return v;
        }
        if v == Verdict::Mark {
            self.stats.ecn_mark += 1;
        }
        self.sched.deficit[flow] -= pkt.size as i64;
        if let Some(ce) = &self.p.ce_threshold {
            // CoDel's mark has already made the packet CE when Linux reaches this test.
            let ecn = if v == Verdict::Mark { Ecn::Ce } else { pkt.ecn };
            if ce.applies(self.codel[flow].ldelay, ecn) {
                self.stats.ce_mark += 1;
                if ecn.is_ect() {
                    v = Verdict::Mark;
                }
            }
        }
        v
    }

    /// Number of flows on either list.
    pub fn active_flows(&self) -> usize {
        self.sched.active_flows()
    }

    /// `tc -s qdisc show` for fq_codel: its xstats that the model counts. `memory_used` is
    /// left out (Linux counts socket-buffer truesize; here only packet bytes exist).
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        let s = &self.stats;
        let (new_len, old_len) = self.sched.list_lens();
        let serde_json::Value::Object(m) = serde_json::json!({
            "maxpacket": s.maxpacket,
            "drop_overlimit": s.drop_overlimit,
            "drop_overmemory": s.drop_overmemory,
            "new_flow_count": self.sched.new_flow_count,
            "ecn_mark": s.ecn_mark,
            "ce_mark": s.ce_mark,
            "new_flows_len": new_len,
            "old_flows_len": old_len,
        }) else {
            unreachable!("json! of an object literal is an object")
        };
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn params(flows: u32) -> FqCodelParams {
        FqCodelParams::linux_defaults(flows, 10240)
    }

    fn pkt(ecn: Ecn, enqueued_at: Time) -> Packet {
        Packet {
            size: 1000,
            ecn,
            enqueued_at,
            ..Default::default()
        }
    }

    #[test]
    fn ce_threshold_selector_on_ecn_bits() {
        // tc `ce_threshold 1ms ce_threshold_selector 0x1/0x1`: DS byte & 0x01 == 0x01, i.e.
        // ECT(1) (01) and CE (11); ECT(0) (10) and Not-ECT (00) do not qualify.
        let ce = CeThreshold {
            threshold: MS,
            mask: 0x1,
            selector: 0x1,
        };
        // In codel time (1 ms = 976 units), strictly above: 976 itself is not
        // (codel_time_after).
        let c = codel_time;
        assert!(!ce.applies(c(MS), Ecn::Ect1));
        assert!(ce.applies(c(MS) + 1, Ecn::Ect1));
        assert!(ce.applies(c(MS) + 1, Ecn::Ce));
        assert!(!ce.applies(c(5 * MS), Ecn::Ect0));
        assert!(!ce.applies(c(5 * MS), Ecn::NotEct));
        // No selector: every ECT/CE packet above the threshold.
        let all = CeThreshold {
            threshold: MS,
            mask: 0,
            selector: 0,
        };
        assert!(all.applies(c(2 * MS), Ecn::Ect0));
        assert!(!all.applies(c(2 * MS), Ecn::NotEct));
        // Mask 0x3, selector 0x2: exactly ECT(0).
        let ect0 = CeThreshold {
            threshold: MS,
            mask: 0x3,
            selector: 0x2,
        };
        assert!(ect0.applies(c(2 * MS), Ecn::Ect0));
        assert!(!ect0.applies(c(2 * MS), Ecn::Ect1));
        assert!(!ect0.applies(c(2 * MS), Ecn::Ce));
    }

    #[test]
    fn ce_threshold_trace_leaves_codel_alone() {
        // One flow, threshold 1 ms with the ECT(1) selector. Sojourns below CoDel's 5 ms
        // target, so CoDel passes every packet and only the threshold acts:
        //   t = 10 ms: ECT(1) enqueued at 9.5 ms (0.5 ms) → pass;
        //   t = 10 ms: ECT(1) enqueued at 7.9 ms (2.1 ms) → mark, ce_mark 1;
        //   t = 10 ms: ECT(0) enqueued at 6 ms (4 ms) → pass (selector);
        //   t = 10 ms: Not-ECT enqueued at 6 ms (4 ms) → pass;
        //   t = 10 ms: CE enqueued at 6 ms (4 ms) → pass, counted, ce_mark 2.
        let mut p = params(1);
        p.ce_threshold = Some(CeThreshold {
            threshold: MS,
            mask: 1,
            selector: 1,
        });
        let mut fq = FqCodel::new(p);
        let mut plain = FqCodel::new(params(1));
        let trace = [
            (Ecn::Ect1, 9500 * US, Verdict::Pass),
            (Ecn::Ect1, 7900 * US, Verdict::Mark),
            (Ecn::Ect0, 6 * MS, Verdict::Pass),
            (Ecn::NotEct, 6 * MS, Verdict::Pass),
            (Ecn::Ce, 6 * MS, Verdict::Pass),
        ];
        let q = QueueLen {
            packets: 10,
            bytes: 10_000,
        };
        for (ecn, at, want) in trace {
            fq.sched.on_enqueued(0, 1000);
            plain.sched.on_enqueued(0, 1000);
            assert_eq!(fq.on_dequeue(0, 10 * MS, &pkt(ecn, at), q), want, "{ecn:?}");
            assert_eq!(
                plain.on_dequeue(0, 10 * MS, &pkt(ecn, at), q),
                Verdict::Pass
            );
        }
        assert_eq!(fq.stats.ce_mark, 2);
        assert_eq!(fq.stats.ecn_mark, 0);
        assert_eq!(fq.codel[0], plain.codel[0]);
    }

    #[test]
    fn ce_threshold_counts_codel_marked_packets_again() {
        // At t = 6 ms (5859 units of 1024 ns) a 6-ms sojourn (≥ 5 ms target, 10 000 B >
        // 1514 B left) sets first_above_time = 5859 + 97 656 = 103 515 units (≈ 106 ms); at
        // t = 107 ms, strictly after it, another 6-ms packet enters the dropping state: CoDel
        // marks the ECT(1) packet; it is above 1 ms and CE now, so ce_mark counts it too.
        let mut p = params(1);
        p.ce_threshold = Some(CeThreshold {
            threshold: MS,
            mask: 1,
            selector: 1,
        });
        let mut fq = FqCodel::new(p);
        let q = QueueLen {
            packets: 10,
            bytes: 10_000,
        };
        fq.sched.on_enqueued(0, 2000);
        let v0 = fq.on_dequeue(0, 6 * MS, &pkt(Ecn::Ect1, 0), q);
        assert_eq!(v0, Verdict::Mark); // threshold only
        let v1 = fq.on_dequeue(0, 107 * MS, &pkt(Ecn::Ect1, 101 * MS), q);
        assert_eq!(v1, Verdict::Mark);
        assert_eq!((fq.stats.ecn_mark, fq.stats.ce_mark), (1, 2));
        assert!(fq.codel[0].dropping);
    }
}
