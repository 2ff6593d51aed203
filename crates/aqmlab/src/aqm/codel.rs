//! CoDel (RFC 8289; Linux `include/net/codel_impl.h`), decided at dequeue.
//!
//! `sojourn = now − enqueue_time` of the packet leaving. A packet "qualifies" when
//! `sojourn ≥ target` and more than one MTU is still queued, and the delay has been above
//! target since `first_above_time` (set to `now + interval` at the first such packet and
//! cleared whenever a packet is below target).
//!
//! * Not dropping, packet qualifies: drop (or CE-mark an ECT packet) and enter the dropping
//!   state; `count ← count − lastcount` if that is > 1 and the last drop episode ended less
//!   than 16 intervals ago, else 1; `lastcount ← count`; `drop_next = now + interval/√count`.
//! * Dropping: a packet that does not qualify ends the state. Otherwise, while
//!   `now ≥ drop_next`: `count += 1`, drop (or mark) the head; a dropped packet's successor is
//!   checked the same way, and if it qualifies `drop_next ← drop_next + interval/√count`.
//!
//! The queue (`net::queue`) calls `on_dequeue` once per packet it takes from the head, with the
//! same `now`, until one is passed; `on_empty` when it finds nothing. `State::pending` records
//! that the previous packet of the same dequeue was dropped, which is how the per-packet calls
//! reproduce the loop of RFC 8289/Linux exactly. The state is self-contained so that
//! FQ-CoDel keeps one per flow.
//!
//! Time is integer ns; `interval/√count` is computed in f64 and rounded to ns (Linux uses a
//! Newton approximation of 1/√count; the difference is below a microsecond).

use super::{DropCause, QueueCounts, QueueLen, Verdict};
use crate::packet::Packet;
use crate::units::Time;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    /// Bytes: never drop while at most this much remains queued (Linux `mtu`).
    pub mtu: u64,
    /// CE-mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// Buffer size in packets (tail drop at enqueue).
    pub limit: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// The previous packet was dropped on entering the dropping state.
    Entry,
    /// The previous packet was dropped by the control law in the dropping state.
    Law,
}

/// Per-queue (or per-flow) CoDel state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodelState {
    /// 0 = not above target (RFC's "0" sentinel; time 0 cannot be a deadline here since it is
    /// `now + interval`).
    pub first_above_time: Time,
    pub drop_next: Time,
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    pending: Option<Pending>,
}

fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count.max(1) as f64).sqrt()).round() as Time
}

impl CodelState {
    fn should_drop(&mut self, p: &CodelParams, now: Time, pkt: &Packet, q_after: QueueLen) -> bool {
        let sojourn = now.saturating_sub(pkt.enqueued_at);
        if sojourn < p.target || q_after.bytes <= p.mtu {
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now + p.interval;
            return false;
        }
        now >= self.first_above_time
    }

    /// Signals congestion on `pkt` inside the dropping state (count already incremented).
    fn signal_law(&mut self, p: &CodelParams, pkt: &Packet) -> Verdict {
        if p.ecn && pkt.ecn.is_ect() {
            self.drop_next = control_law(self.drop_next, p.interval, self.count);
            Verdict::Mark
        } else {
            self.pending = Some(Pending::Law);
            Verdict::Drop(DropCause::Early)
        }
    }

    /// Decision for the packet taken from the head at `now`; `q_after` excludes it.
    pub fn on_dequeue(
        &mut self,
        p: &CodelParams,
        now: Time,
        pkt: &Packet,
        q_after: QueueLen,
    ) -> Verdict {
        let ok_to_drop = self.should_drop(p, now, pkt, q_after);
        match self.pending.take() {
            Some(Pending::Entry) => return Verdict::Pass,
            Some(Pending::Law) => {
                if !ok_to_drop {
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.drop_next = control_law(self.drop_next, p.interval, self.count);
                if now >= self.drop_next {
                    self.count += 1;
                    return self.signal_law(p, pkt);
                }
                return Verdict::Pass;
            },
            None => {},
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
                Verdict::Pass
            } else if now >= self.drop_next {
                self.count += 1;
                self.signal_law(p, pkt)
            } else {
                Verdict::Pass
            }
        } else if ok_to_drop {
            let verdict = if p.ecn && pkt.ecn.is_ect() {
                Verdict::Mark
            } else {
                self.pending = Some(Pending::Entry);
                Verdict::Drop(DropCause::Early)
            };
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if delta > 1
                && delta < u32::MAX / 2
                && now.saturating_sub(self.drop_next) < 16 * p.interval
            {
                delta
            } else {
                1
            };
            self.lastcount = self.count;
            self.drop_next = control_law(now, p.interval, self.count);
            verdict
        } else {
            Verdict::Pass
        }
    }

    /// The queue was found empty (at the start of a dequeue or after a drop).
    pub fn on_empty(&mut self) {
        match self.pending.take() {
            // RFC/Linux check the (missing) successor: clears first_above_time; the dropping
            // state just entered stays.
            Some(Pending::Entry) => self.first_above_time = 0,
            Some(Pending::Law) => {
                self.first_above_time = 0;
                self.dropping = false;
            },
            None => self.dropping = false,
        }
    }
}

/// CoDel on a single FIFO.
#[derive(Clone, Debug)]
pub struct Codel {
    pub p: CodelParams,
    pub s: CodelState,
    /// Sojourn time of the last packet taken from the head, and the largest packet taken
    /// (Linux `ldelay`, `maxpacket`: statistics only).
    pub ldelay: Time,
    pub maxpacket: u32,
}

impl Codel {
    pub fn new(p: CodelParams) -> Self {
        Codel {
            p,
            s: CodelState::default(),
            ldelay: 0,
            maxpacket: 0,
        }
    }

    #[inline]
    pub fn on_enqueue(&mut self, q: QueueLen) -> Verdict {
        if q.packets >= self.p.limit {
            Verdict::Drop(DropCause::Overflow)
        } else {
            Verdict::Pass
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, now: Time, pkt: &Packet, q_after: QueueLen) -> Verdict {
        self.ldelay = now.saturating_sub(pkt.enqueued_at);
        self.maxpacket = self.maxpacket.max(pkt.size);
        self.s.on_dequeue(&self.p, now, pkt, q_after)
    }

    /// tc's codel xstats (Linux `codel_dump_stats`, iproute2 `codel_print_xstats`), times in
    /// µs: `ldelay` the last sojourn, `drop_next` relative to `now` while dropping (else 0),
    /// `ecn_mark` the CE marks, `drop_overlimit` the tail drops at the limit.
    pub fn qdisc_stats(
        &self,
        now: Time,
        c: &QueueCounts,
    ) -> serde_json::Map<String, serde_json::Value> {
        let drop_next = if self.s.dropping {
            (self.s.drop_next as i64 - now as i64) / 1000
        } else {
            0
        };
        super::json_map(serde_json::json!({
            "count": self.s.count,
            "lastcount": self.s.lastcount,
            "ldelay": self.ldelay / 1000,
            "drop_next": drop_next,
            "dropping": u8::from(self.s.dropping),
            "ecn_mark": c.marks,
            "maxpacket": self.maxpacket,
            "drop_overlimit": c.drops_overflow,
        }))
    }

    pub fn on_idle(&mut self) {
        self.s.on_empty();
    }

    pub fn state_probe(&self) -> (&'static str, f64) {
        (
            "codel_count",
            if self.s.dropping {
                self.s.count as f64
            } else {
                0.0
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::units::{MS, SEC};

    fn params(ecn: bool) -> CodelParams {
        CodelParams {
            target: 5 * MS,
            interval: 100 * MS,
            mtu: 1500,
            ecn,
            limit: 1000,
        }
    }

    fn pkt(enq: Time, ecn: Ecn) -> Packet {
        Packet {
            size: 1000,
            enqueued_at: enq,
            ecn,
            ..Default::default()
        }
    }

    /// A standing queue: every packet has waited 20 ms and 10 kB remain behind it.
    fn standing(c: &mut Codel, now: Time) -> Verdict {
        c.on_dequeue(
            now,
            &pkt(now - 20 * MS, Ecn::NotEct),
            QueueLen {
                packets: 10,
                bytes: 10_000,
            },
        )
    }

    #[test]
    fn drop_times_follow_interval_over_sqrt_count() {
        let mut c = Codel::new(params(false));
        // t = 1 s: first packet above target → first_above_time = 1.1 s.
        let t0 = 1000 * MS;
        assert_eq!(standing(&mut c, t0), Verdict::Pass);
        assert_eq!(c.s.first_above_time, t0 + 100 * MS);
        // Still above, but not for a full interval.
        assert_eq!(standing(&mut c, t0 + 50 * MS), Verdict::Pass);
        // At 1.1 s: drop, enter dropping, count 1, drop_next = 1.1 + 0.1/√1 = 1.2 s.
        assert_eq!(
            standing(&mut c, t0 + 100 * MS),
            Verdict::Drop(DropCause::Early)
        );
        // Successor in the same dequeue is sent.
        assert_eq!(standing(&mut c, t0 + 100 * MS), Verdict::Pass);
        assert!(c.s.dropping);
        assert_eq!((c.s.count, c.s.drop_next), (1, t0 + 200 * MS));
        // Expected drop times: t_k = t_{k−1} + 100 ms/√k for count k = 2, 3, 4...
        let mut t = t0 + 200 * MS;
        for k in 2..=6u32 {
            // One ns before: nothing.
            assert_eq!(standing(&mut c, t - 1), Verdict::Pass);
            // At drop_next: drop with count k; the successor is sent.
            assert_eq!(standing(&mut c, t), Verdict::Drop(DropCause::Early));
            assert_eq!(standing(&mut c, t), Verdict::Pass);
            assert_eq!(c.s.count, k);
            let next = t + (100e6 / (k as f64).sqrt()).round() as Time;
            assert_eq!(c.s.drop_next, next, "k = {k}");
            t = next;
        }
        // A packet below target ends the dropping state.
        let ok = pkt(t - MS, Ecn::NotEct);
        let q = QueueLen {
            packets: 10,
            bytes: 10_000,
        };
        assert_eq!(c.on_dequeue(t, &ok, q), Verdict::Pass);
        assert!(!c.s.dropping && c.s.first_above_time == 0);
    }

    #[test]
    fn reentry_resumes_near_previous_rate_and_mtu_rule() {
        let mut c = Codel::new(params(false));
        let q_small = QueueLen {
            packets: 1,
            bytes: 1500,
        };
        // At most one MTU left: never qualifies.
        assert_eq!(
            c.on_dequeue(SEC, &pkt(0, Ecn::NotEct), q_small),
            Verdict::Pass
        );
        assert_eq!(c.s.first_above_time, 0);
        // Episode with count reaching 4, then exit, then re-entry within 16 intervals.
        c.s.count = 4;
        c.s.lastcount = 1;
        c.s.drop_next = 2 * SEC;
        c.s.first_above_time = 2 * SEC;
        // Re-entry at 2.5 s: delta = 3 > 1 and 2.5 − 2.0 < 1.6 s → count = 3,
        // drop_next = 2.5 s + 100 ms/√3.
        let t = 2500 * MS;
        assert_eq!(standing(&mut c, t), Verdict::Drop(DropCause::Early));
        assert_eq!(c.s.count, 3);
        assert_eq!(c.s.drop_next, t + (100e6 / 3f64.sqrt()).round() as Time);
    }

    #[test]
    fn ecn_marks_ect_and_does_not_dequeue_another() {
        let mut c = Codel::new(params(true));
        let q = QueueLen {
            packets: 10,
            bytes: 10_000,
        };
        let t0 = SEC;
        let ect = |now: Time| pkt(now - 20 * MS, Ecn::Ect0);
        assert_eq!(c.on_dequeue(t0, &ect(t0), q), Verdict::Pass);
        assert_eq!(
            c.on_dequeue(t0 + 100 * MS, &ect(t0 + 100 * MS), q),
            Verdict::Mark
        );
        assert_eq!(c.s.drop_next, t0 + 200 * MS);
        // Mark in dropping state: count 2, drop_next advanced by 100 ms/√2.
        let t = t0 + 200 * MS;
        assert_eq!(c.on_dequeue(t, &ect(t), q), Verdict::Mark);
        assert_eq!(c.s.count, 2);
        assert_eq!(c.s.drop_next, t + (100e6 / 2f64.sqrt()).round() as Time);
        // Non-ECT in the same state is dropped.
        let t = c.s.drop_next;
        assert_eq!(standing(&mut c, t), Verdict::Drop(DropCause::Early));
    }

    #[test]
    fn law_drops_can_chain_within_one_dequeue() {
        let mut c = Codel::new(params(false));
        c.s.dropping = true;
        c.s.count = 1;
        c.s.lastcount = 1;
        c.s.first_above_time = 1;
        c.s.drop_next = SEC;
        // Dequeue at 1.2 s: drop (count 2); successor qualifies, drop_next = 1 s + 70.7 ms
        // ≤ 1.2 s → drop again (count 3); next: drop_next += 100/√3 = 1.128 s ≤ 1.2 → drop
        // (count 4); next: += 50 ms = 1.178 ≤ 1.2 → drop (count 5); next: += 44.7 = 1.223 s
        // > 1.2 → sent.
        let t = 1200 * MS;
        for k in 2..=5 {
            assert_eq!(
                standing(&mut c, t),
                Verdict::Drop(DropCause::Early),
                "k={k}"
            );
            assert_eq!(c.s.count, k);
        }
        assert_eq!(standing(&mut c, t), Verdict::Pass);
        let expect = [2f64, 3.0, 4.0, 5.0]
            .iter()
            .fold(SEC, |acc, &k| acc + (100e6 / k.sqrt()).round() as Time);
        assert_eq!(c.s.drop_next, expect);
        assert!(c.s.dropping);
    }
}
