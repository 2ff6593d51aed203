//! CoDel (RFC 8289) as Linux implements it (`include/net/codel.h`, `include/net/codel_impl.h`:
//! `codel_should_drop`, `codel_dequeue`, `codel_Newton_step`, `codel_control_law`), decided at
//! dequeue, in Linux's own arithmetic.
//!
//! Times are `codel_time_t`: ns >> 10 (`CODEL_SHIFT`, 1024-ns units) in a wrapping u32,
//! compared by the sign of their difference (`codel_time_after` etc.); target and interval
//! are converted the same way (5 ms is 4882 units). `1/√count` is `rec_inv_sqrt`, 16 bits of
//! fixed point advanced by one Newton step per `count` change (not recomputed: from count 1
//! the first step gives 0.5 for count 2, not 0.707), and `interval/√count` is
//! `reciprocal_scale(interval, rec_inv_sqrt << 16)`.
//!
//! `ldelay = now − enqueue_time` of the packet examined. A packet "qualifies" when
//! `ldelay ≥ target` and more than one MTU is still queued, and the delay has been above
//! target since `first_above_time` (set to `now + interval` at the first such packet and
//! cleared whenever a packet is below target): strictly after it.
//!
//! * Not dropping, packet qualifies: drop (or CE-mark a packet that is ECT or already CE,
//!   Linux `INET_ECN_set_ce`) and enter the dropping state; `count ← count − lastcount` (one
//!   Newton step) if that is > 1 and the last drop episode ended less than 16 intervals ago,
//!   else 1 (`rec_inv_sqrt` reset to 1); `lastcount ← count`;
//!   `drop_next = now + interval/√count`.
//! * Dropping: a packet that does not qualify ends the state. Otherwise, while
//!   `now ≥ drop_next`: `count += 1` (one Newton step), drop (or mark) the head; a dropped
//!   packet's successor is checked the same way, and if it qualifies
//!   `drop_next ← drop_next + interval/√count`.
//!
//! The queue (`net::queue`) calls `on_dequeue` once per packet it takes from the head, with the
//! same `now`, until one is passed; `on_empty` when it finds nothing. `State::pending` records
//! that the previous packet of the same dequeue was dropped, which is how the per-packet calls
//! reproduce the loop of RFC 8289/Linux exactly. The state is self-contained so that
//! FQ-CoDel keeps one per flow.
//!
//! Checked decision by decision against the kernel's code (validation/linux_qdisc).

use super::{DropCause, QueueCounts, QueueLen, Verdict};
use crate::packet::{Ecn, Packet};
use crate::units::Time;

/// Linux `CODEL_SHIFT`: codel time is ns >> 10.
pub const CODEL_SHIFT: u32 = 10;

/// ns to codel time (Linux `codel_get_time`, `MS2TIME`, the µs attributes of `codel_change`).
#[inline]
pub fn codel_time(t: Time) -> u32 {
    (t >> CODEL_SHIFT) as u32
}

/// codel time back to ns (the unit of the rest of the simulator).
#[inline]
pub fn codel_ns(t: u32) -> Time {
    (t as Time) << CODEL_SHIFT
}

/// Linux `codel_time_after(a, b)`: `(s32)(a − b) > 0`.
#[inline]
pub fn time_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[inline]
fn time_after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

#[inline]
fn time_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `rec_inv_sqrt` for count 1 (`~0U >> REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// Linux `codel_Newton_step`: x ← x·(3 − count·x²)/2 with x in 0.16 fixed point, computed
/// in 0.32 with the kernel's truncations.
#[inline]
fn newton_step(count: u32, rec_inv_sqrt: u16) -> u16 {
    let invsqrt = (rec_inv_sqrt as u32) << 16;
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    let val = (val >> 2).wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> 16) as u16
}

/// Linux `codel_control_law`: `t + interval/√count`, i.e.
/// `t + reciprocal_scale(interval, rec_inv_sqrt << 16)`.
#[inline]
fn control_law(t: u32, interval: u32, rec_inv_sqrt: u16) -> u32 {
    let scaled = ((interval as u64 * ((rec_inv_sqrt as u64) << 16)) >> 32) as u32;
    t.wrapping_add(scaled)
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CodelParams {
    /// ns (used as codel time, `codel_time`).
    pub target: Time,
    pub interval: Time,
    /// Bytes: never drop while at most this much remains queued (Linux `mtu`).
    pub mtu: u64,
    /// CE-mark ECN-capable packets instead of dropping them.
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

/// Per-queue (or per-flow) CoDel state: Linux `struct codel_vars`, times in codel time.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelState {
    /// 0 = not above target (Linux's sentinel).
    pub first_above_time: u32,
    pub drop_next: u32,
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count, 0.16 fixed point.
    pub rec_inv_sqrt: u16,
    /// `now − enqueue_time` of the last packet examined.
    pub ldelay: u32,
    pending: Option<Pending>,
}

impl Default for CodelState {
    /// Linux `codel_vars_init`: all zero.
    fn default() -> Self {
        CodelState {
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            rec_inv_sqrt: 0,
            ldelay: 0,
            pending: None,
        }
    }
}

/// Whether Linux's `INET_ECN_set_ce` succeeds: on ECT(0), ECT(1) and CE (already marked),
/// not on Not-ECT.
#[inline]
fn can_mark(p: &CodelParams, pkt: &Packet) -> bool {
    p.ecn && pkt.ecn != Ecn::NotEct
}

impl CodelState {
    /// Linux `codel_should_drop` for a packet leaving at codel time `now`.
    fn should_drop(&mut self, p: &CodelParams, now: u32, pkt: &Packet, q_after: QueueLen) -> bool {
        self.ldelay = now.wrapping_sub(codel_time(pkt.enqueued_at));
        if time_before(self.ldelay, codel_time(p.target)) || q_after.bytes <= p.mtu {
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now.wrapping_add(codel_time(p.interval));
            return false;
        }
        time_after(now, self.first_above_time)
    }

    /// `count += 1` with its Newton step (the dropping state's loop).
    fn next_count(&mut self) {
        self.count = self.count.wrapping_add(1);
        self.rec_inv_sqrt = newton_step(self.count, self.rec_inv_sqrt);
    }

    /// Signals congestion on `pkt` inside the dropping state (count already incremented).
    fn signal_law(&mut self, p: &CodelParams, pkt: &Packet) -> Verdict {
        if can_mark(p, pkt) {
            self.drop_next = control_law(self.drop_next, codel_time(p.interval), self.rec_inv_sqrt);
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
        let now = codel_time(now);
        let interval = codel_time(p.interval);
        let ok_to_drop = self.should_drop(p, now, pkt, q_after);
        match self.pending.take() {
            Some(Pending::Entry) => return Verdict::Pass,
            Some(Pending::Law) => {
                if !ok_to_drop {
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.drop_next = control_law(self.drop_next, interval, self.rec_inv_sqrt);
                if time_after_eq(now, self.drop_next) {
                    self.next_count();
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
            } else if time_after_eq(now, self.drop_next) {
                self.next_count();
                self.signal_law(p, pkt)
            } else {
                Verdict::Pass
            }
        } else if ok_to_drop {
            let verdict = if can_mark(p, pkt) {
                Verdict::Mark
            } else {
                self.pending = Some(Pending::Entry);
                Verdict::Drop(DropCause::Early)
            };
            self.dropping = true;
            // Resume near the last episode's rate if it ended recently.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1 && time_before(now.wrapping_sub(self.drop_next), 16 * interval) {
                self.count = delta;
                self.rec_inv_sqrt = newton_step(self.count, self.rec_inv_sqrt);
            } else {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.lastcount = self.count;
            self.drop_next = control_law(now, interval, self.rec_inv_sqrt);
            verdict
        } else {
            Verdict::Pass
        }
    }

    /// The queue was found empty (at the start of a dequeue or after a drop). Linux checks
    /// the (missing) successor of a drop with `codel_should_drop(NULL)`, which clears
    /// `first_above_time` (a dropping state just entered stays); a dequeue that finds the
    /// queue empty leaves the dropping state and, since 6.1.192's `codel_dequeue` (a later
    /// stable fix), clears `first_above_time` too.
    pub fn on_empty(&mut self) {
        self.first_above_time = 0;
        match self.pending.take() {
            Some(Pending::Entry) => {},
            Some(Pending::Law) | None => self.dropping = false,
        }
    }
}

/// CoDel on a single FIFO.
#[derive(Clone, Debug)]
pub struct Codel {
    pub p: CodelParams,
    pub s: CodelState,
    /// The largest packet taken from the head (Linux `maxpacket`: statistics only).
    pub maxpacket: u32,
}

impl Codel {
    pub fn new(p: CodelParams) -> Self {
        Codel {
            p,
            s: CodelState::default(),
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
        self.maxpacket = self.maxpacket.max(pkt.size);
        self.s.on_dequeue(&self.p, now, pkt, q_after)
    }

    /// tc's codel xstats (Linux `codel_dump_stats`, iproute2 `codel_print_xstats`), times in
    /// µs (`codel_time_to_us`): `ldelay` the last sojourn, `drop_next` relative to `now` while
    /// dropping (else 0), `ecn_mark` the CE marks, `drop_overlimit` the tail drops at the
    /// limit.
    pub fn qdisc_stats(
        &self,
        now: Time,
        c: &QueueCounts,
    ) -> serde_json::Map<String, serde_json::Value> {
        let to_us = |t: u32| (codel_ns(t) / 1000) as i64;
        let drop_next = if self.s.dropping {
            let delta = self.s.drop_next.wrapping_sub(codel_time(now)) as i32;
            if delta >= 0 {
                to_us(delta as u32)
            } else {
                -to_us(delta.unsigned_abs())
            }
        } else {
            0
        };
        super::json_map(serde_json::json!({
            "count": self.s.count,
            "lastcount": self.s.lastcount,
            "ldelay": to_us(self.s.ldelay),
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
    use crate::units::{MS, SEC};

    fn params(ecn: bool) -> CodelParams {
        CodelParams {
            target: 5 * MS,
            interval: 100 * MS,
            mtu: 1514,
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

    const Q: QueueLen = QueueLen {
        packets: 10,
        bytes: 10_000,
    };

    /// A standing queue: every packet has waited 20 ms and 10 kB remain behind it.
    fn standing(c: &mut Codel, now: Time) -> Verdict {
        c.on_dequeue(now, &pkt(now - 20 * MS, Ecn::NotEct), Q)
    }

    #[test]
    fn newton_steps_and_control_law_in_codel_time() {
        // 100 ms is 97 656 units of 1024 ns; count 1 (rec_inv_sqrt 0xFFFF) gives
        // ⌊97656·(1 − 2⁻¹⁶)⌋ = 97 654. From there one Newton step per count: count 2 gets
        // 0x8001 (≈ 0.5, not 1/√2) → 48 829 units; count 3 0x9000 → 54 931; count 4 0x7CE0
        // → 47 635 (the kernel's own values, validation/linux_qdisc).
        assert_eq!(codel_time(100 * MS), 97_656);
        assert_eq!(codel_time(5 * MS), 4_882);
        assert_eq!(control_law(0, 97_656, REC_INV_SQRT_ONE), 97_654);
        let mut rec = REC_INV_SQRT_ONE;
        for (count, want_rec, want_delta) in [
            (2, 0x8001, 48_829),
            (3, 0x9000, 54_931),
            (4, 0x7CE0, 47_635),
        ] {
            rec = newton_step(count, rec);
            assert_eq!(
                (rec, control_law(0, 97_656, rec)),
                (want_rec, want_delta),
                "count {count}"
            );
        }
        // The comparisons wrap like the kernel's.
        assert!(time_after(5, u32::MAX - 5));
        assert!(!time_after(7, 7) && time_after_eq(7, 7) && time_before(6, 7));
    }

    #[test]
    fn drops_strictly_after_first_above_time_then_by_newton() {
        let mut c = Codel::new(params(false));
        // t = 1 s = 976 562 units: first packet above target → first_above = 1 074 218.
        let t0 = SEC;
        assert_eq!(standing(&mut c, t0), Verdict::Pass);
        assert_eq!(c.s.first_above_time, 976_562 + 97_656);
        // At 1.1 s exactly (1 074 218 units) it is not yet *after* first_above_time.
        assert_eq!(standing(&mut c, t0 + 100 * MS), Verdict::Pass);
        // One unit later: drop, enter dropping, count 1, drop_next = now + 97 654.
        let t1 = t0 + 100 * MS + 1024;
        assert_eq!(standing(&mut c, t1), Verdict::Drop(DropCause::Early));
        assert_eq!(standing(&mut c, t1), Verdict::Pass);
        assert!(c.s.dropping);
        assert_eq!((c.s.count, c.s.drop_next), (1, 1_074_219 + 97_654));
        // Next drop at drop_next: count 2, next one 48 829 units later.
        let t2 = codel_ns(c.s.drop_next);
        assert_eq!(standing(&mut c, t2 - 1), Verdict::Pass);
        assert_eq!(standing(&mut c, t2), Verdict::Drop(DropCause::Early));
        assert_eq!(standing(&mut c, t2), Verdict::Pass);
        assert_eq!((c.s.count, c.s.drop_next), (2, 1_171_873 + 48_829));
        // A packet below target ends the dropping state.
        let ok = pkt(t2 - MS, Ecn::NotEct);
        assert_eq!(c.on_dequeue(t2, &ok, Q), Verdict::Pass);
        assert!(!c.s.dropping && c.s.first_above_time == 0);
    }

    #[test]
    fn reentry_resumes_near_previous_rate_and_mtu_rule() {
        let mut c = Codel::new(params(false));
        let q_small = QueueLen {
            packets: 1,
            bytes: 1514,
        };
        // At most one MTU left: never qualifies.
        assert_eq!(
            c.on_dequeue(SEC, &pkt(0, Ecn::NotEct), q_small),
            Verdict::Pass
        );
        assert_eq!(c.s.first_above_time, 0);
        // An episode ended with count 4 (lastcount 1, rec_inv_sqrt of count 4); re-entry
        // within 16 intervals: count = 3 with one Newton step from count 4's value.
        c.s.count = 4;
        c.s.lastcount = 1;
        c.s.rec_inv_sqrt = 0x7CE0;
        c.s.drop_next = codel_time(2 * SEC);
        c.s.first_above_time = codel_time(2 * SEC);
        let t = 2500 * MS;
        assert_eq!(standing(&mut c, t), Verdict::Drop(DropCause::Early));
        assert_eq!((c.s.count, c.s.lastcount), (3, 3));
        let rec = newton_step(3, 0x7CE0);
        assert_eq!(c.s.rec_inv_sqrt, rec);
        assert_eq!(c.s.drop_next, control_law(codel_time(t), 97_656, rec));
    }

    #[test]
    fn ecn_marks_ect_and_ce_and_drops_not_ect() {
        let mut c = Codel::new(params(true));
        let t0 = SEC;
        let at = |now: Time, ecn| pkt(now - 20 * MS, ecn);
        assert_eq!(c.on_dequeue(t0, &at(t0, Ecn::Ect0), Q), Verdict::Pass);
        let t1 = t0 + 101 * MS;
        assert_eq!(c.on_dequeue(t1, &at(t1, Ecn::Ect1), Q), Verdict::Mark);
        // In the dropping state a packet already CE is "marked" (INET_ECN_set_ce succeeds on
        // CE): kept, and drop_next advances.
        let t2 = codel_ns(c.s.drop_next);
        assert_eq!(c.on_dequeue(t2, &at(t2, Ecn::Ce), Q), Verdict::Mark);
        assert_eq!(c.s.count, 2);
        // Not-ECT in the same state is dropped.
        let t3 = codel_ns(c.s.drop_next);
        assert_eq!(standing(&mut c, t3), Verdict::Drop(DropCause::Early));
    }

    #[test]
    fn law_drops_can_chain_within_one_dequeue() {
        let mut c = Codel::new(params(false));
        c.s.dropping = true;
        c.s.count = 1;
        c.s.lastcount = 1;
        c.s.rec_inv_sqrt = REC_INV_SQRT_ONE;
        c.s.first_above_time = 1;
        c.s.drop_next = codel_time(SEC);
        // Dequeue at 1.2 s (1 171 875 units): drop (count 2); the successor qualifies,
        // drop_next = 976 562 + 48 829 ≤ now → drop (count 3); + 54 931 = 1 080 322 → drop
        // (count 4); + 47 635 = 1 127 957 → drop (count 5); + 43 116 = 1 171 073 → drop
        // (count 6); + 39 459 = 1 210 532 > now → sent.
        let t = 1200 * MS;
        for k in 2..=6 {
            assert_eq!(
                standing(&mut c, t),
                Verdict::Drop(DropCause::Early),
                "k={k}"
            );
            assert_eq!(c.s.count, k);
        }
        assert_eq!(standing(&mut c, t), Verdict::Pass);
        assert_eq!(c.s.drop_next, 1_210_532);
        assert!(c.s.dropping);
    }
}
