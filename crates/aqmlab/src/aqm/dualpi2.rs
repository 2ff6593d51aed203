//! DualPI2, the coupled dual-queue AQM (RFC 9332 §2 and Appendix A), following Linux
//! `net/sched/sch_dualpi2.c` (Linux 6.17) where the two differ or the RFC leaves a choice.
//!
//! * Classification (RFC 9331 identifier, Linux `dualpi2_skb_classify` with the default
//!   `ecn_mask` = ECT(1)): ECT(1) and CE go to the L queue, Not-ECT and ECT(0) to the C queue.
//!   No tc filters or skb priorities (so no "LLLL" class).
//! * Base probability p′ (Linux `calculate_probability`), every `tupdate`, with `d` the larger of
//!   the two queues' head sojourn times (time since the head packet of each queue was enqueued,
//!   0 for an empty queue) and `d_prev` the value of the previous update, in seconds:
//!   `p′ ← clamp(p′ + α·(d − target) + β·(d − d_prev), 0, 1)`. α and β are the per-second
//!   figures tc takes (0.16, 3.2) applied once per update as they are: Linux does not multiply
//!   them by `tupdate`. Without `drop_on_overload`, p′ is capped at
//!   1/k.
//! * Coupling: C queue p_C = p′², applied as two independent draws against p′ (Linux
//!   `dualpi2_classic_marking`); L queue p_CL = k·p′ (Linux `dualpi2_scalable_marking`).
//!   Overload when k·p′ > 1: C packets (even ECT) are dropped with p′²; L packets are dropped
//!   with p′² when `drop_on_overload`, and every other L packet is marked.
//! * No mark or drop while fewer than 2·MTU bytes are queued in both queues together (Linux
//!   `must_drop`); ECT(0) packets in the C queue are marked instead of dropped (classic ECN is
//!   always on in Linux).
//! * Where: at dequeue by default (`drop_dequeue`), at enqueue with `drop_enqueue` (Linux
//!   `drop_early`). The step AQM always runs at dequeue: an L packet whose sojourn exceeds
//!   `step_thresh` is marked (Linux `do_step_aqm`).
//! * Scheduler (Linux `dequeue_packet`): weighted round robin on a byte credit. The credit
//!   starts at `mtu·(wc − wl)` (wc = `c_protection` %, wl = 100 − wc); the L queue is served
//!   when the C queue is empty or the credit is ≤ 0, else the C queue. Serving L while C waits
//!   adds `wc·size`; serving C while L waits subtracts `wl·size`; the change applies only to a
//!   packet that is sent (not one dropped at dequeue). When both are empty the credit resets.
//!   Under saturation of both queues, C gets wc % of the bytes.
//! * Buffer: `limit` packets in both queues together, tail drop (overflow).
//!
//! The packet FIFOs live in `net::queue` (which acts on decisions and counts them); this module
//! keeps the controller, the scheduler's credit, the head timestamps and the statistics of
//! `tc -s qdisc show` (`prob`, `delay_c`, `delay_l`, `pkts_in_c`, `pkts_in_l`, `maxq`,
//! `ecn_mark`, `step_marks`). Linux's fixed point (p′ in units of 2⁻³², α/β rounded to 1/256 Hz)
//! is the scenario's default (`linux_fixed_point`; with it off, RFC 9332's f64): p′ is Linux's u32 and the update
//! is `calculate_probability`'s integer arithmetic (α and β as tc's 1/256 Hz units, scaled by
//! `dualpi2_scale_alpha_beta`), and each roll is `dualpi2_roll`'s `r <= prob` on a u32 draw;
//! this is how the model is compared decision by decision with Linux's own code
//! (validation/linux_qdisc, docs/validation.md). `min_qlen_step` is tc's (0 by default). Not
//! modelled: `memory_limit` (truesize), step threshold in packets, `split_gso` (no GSO here), tc filters. See
//! docs/queues.md.

use super::{DropCause, QueueLen, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::UniformSource;
use crate::units::{as_secs, Time};

/// Index of the C (classic) queue.
pub const C: usize = 0;
/// Index of the L (low-latency, L4S) queue.
pub const L: usize = 1;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DualPi2Params {
    /// Packets in both queues together.
    pub limit: u32,
    pub target: Time,
    pub tupdate: Time,
    /// Gains in 1/s, applied per update.
    pub alpha: f64,
    pub beta: f64,
    /// L-queue sojourn above which L packets are marked.
    pub step_thresh: Time,
    /// k.
    pub coupling_factor: f64,
    /// C queue's WRR weight in % (wc); the L queue gets 100 − wc.
    pub c_protection: u32,
    pub drop_overload: bool,
    /// Mark/drop at enqueue (true) or at dequeue (false, Linux's default).
    pub drop_early: bool,
    /// Bytes: the credit's scale and the 2·MTU no-AQM floor. Linux uses `psched_mtu` (1514 on
    /// Ethernet: MTU + 14-byte header) against packet lengths that include that header; packet
    /// sizes here are IP bytes, so the equivalent is the IP MTU, 1500.
    pub mtu: u32,
    /// Linux's integer probability and rolls (`sch_dualpi2.c` `calculate_probability`,
    /// `dualpi2_roll`) instead of f64 (the scenario's default is on: `aqm/config.rs`; the
    /// unit tests below build the f64 model with `linux_defaults`). Not serialized when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub linux_fixed_point: bool,
    /// tc `min_qlen_step` (upstream `skb_apply_step`): the step applies to an L packet only if
    /// the L queue held at least this many packets at its arrival. 0 (upstream's default):
    /// always. Not serialized when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub min_qlen_step: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl DualPi2Params {
    /// Linux `dualpi2_reset_default`, with the MTU in IP bytes (1500; see `mtu`).
    pub fn linux_defaults() -> Self {
        use crate::units::MS;
        DualPi2Params {
            limit: 10_000,
            target: 15 * MS,
            tupdate: 16 * MS,
            alpha: 0.16,
            beta: 3.2,
            step_thresh: MS,
            coupling_factor: 2.0,
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            mtu: 1500,
            linux_fixed_point: false,
            min_qlen_step: 0,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DualPi2State {
    /// p′, the base probability (tc's `prob`).
    pub prob: f64,
    /// d of the previous update.
    pub last_qdelay: Time,
    /// Enqueue time of each queue's head packet (`[C, L]`), `None` when empty.
    pub head_ts: [Option<Time>; 2],
    /// WRR credit (bytes × %); ≤ 0 favours L.
    pub credit: i64,
    /// Head sojourn of each queue at the last update (tc's `delay_c`, `delay_l`).
    pub delay_c: Time,
    pub delay_l: Time,
    /// Packets accepted into each queue.
    pub pkts_in_c: u64,
    pub pkts_in_l: u64,
    /// Largest total occupancy seen by an accepted arrival (before it was added), as Linux.
    pub maxq: u32,
    /// CE settings by the probabilities and the step (Linux counts a CE packet set again).
    pub ecn_mark: u64,
    /// CE settings by the step threshold.
    pub step_marks: u64,
    /// With `linux_fixed_point`: p′ as Linux keeps it (`pi2_prob`, units of 2⁻³² with
    /// `MAX_PROB` = 2³² − 1); `prob` is then `prob_fx / MAX_PROB`.
    pub prob_fx: u32,
}

/// Linux `MAX_PROB` (sch_dualpi2.c): p′ = 1 as a u32.
pub const MAX_PROB: u32 = u32::MAX;

/// Linux `dualpi2_scale_alpha_beta` (sch_dualpi2.c): a gain in tc's units of 1/256 Hz to
/// the per-ns, 2⁻³²-per-64 units `calculate_probability` multiplies a delay in ns by:
/// `(param · MAX_PROB >> (8 − 6)) / 10⁹`, truncated at each step as the kernel does.
pub fn scale_alpha_beta(param_256: u32) -> u32 {
    (((param_256 as u64 * MAX_PROB as u64) >> 2) / 1_000_000_000) as u32
}

/// A gain in Hz as tc sends it (iproute2 q_dualpi2.c: Hz × 256, rounded), for the scaling.
pub fn gain_to_tc_units(hz: f64) -> u32 {
    (hz * 256.0).round() as u32
}

#[derive(Clone, Debug)]
pub struct DualPi2 {
    pub p: DualPi2Params,
    pub s: DualPi2State,
    /// Queue the last accepted arrival belongs to (read by `net::queue` after `on_enqueue`).
    last_class: usize,
    /// Credit change (per byte) of the packet chosen by `select`.
    pending_credit: i64,
    /// With `linux_fixed_point`: α and β scaled as Linux keeps them (`pi2_alpha`, `pi2_beta`).
    alpha_fx: u32,
    beta_fx: u32,
    /// With `min_qlen_step` > 0: each queued L packet's `apply_step` (Linux keeps it in the
    /// packet's control block), in queue order.
    l_apply: std::collections::VecDeque<bool>,
}

/// What the coupled probabilities decide for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    None,
    Mark,
    Drop,
}

impl DualPi2 {
    pub fn new(p: DualPi2Params) -> Self {
        let mut d = DualPi2 {
            s: DualPi2State::default(),
            last_class: C,
            pending_credit: 0,
            l_apply: Default::default(),
            alpha_fx: scale_alpha_beta(gain_to_tc_units(p.alpha)),
            beta_fx: scale_alpha_beta(gain_to_tc_units(p.beta)),
            p,
        };
        d.s.credit = d.credit_init();
        d
    }

    /// tc's statistics (`tc -s qdisc show` for dualpi2; Linux `dualpi2_dump_stats`), with
    /// the delays in µs and the credit in bytes × % as tc's JSON output gives them.
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        let s = &self.s;
        let us = |t: Time| t as f64 / 1e3;
        let serde_json::Value::Object(m) = serde_json::json!({
            "prob": s.prob,
            "delay_c": us(s.delay_c),
            "delay_l": us(s.delay_l),
            "pkts_in_c": s.pkts_in_c,
            "pkts_in_l": s.pkts_in_l,
            "maxq": s.maxq,
            "ecn_mark": s.ecn_mark,
            "step_marks": s.step_marks,
            "credit": s.credit,
        }) else {
            unreachable!("json! of an object literal is an object")
        };
        m
    }

    fn credit_init(&self) -> i64 {
        let wc = self.p.c_protection as i64;
        self.p.mtu as i64 * (wc - (100 - wc))
    }

    /// RFC 9331 classifier: ECT(1) and CE to L, the rest to C.
    #[inline]
    pub fn classify(pkt: &Packet) -> usize {
        match pkt.ecn {
            Ecn::Ect1 | Ecn::Ce => L,
            Ecn::NotEct | Ecn::Ect0 => C,
        }
    }

    /// The queue the last accepted arrival goes to.
    #[inline]
    pub fn enqueue_class(&self) -> usize {
        self.last_class
    }

    /// p_C = p′².
    pub fn p_c(&self) -> f64 {
        self.s.prob * self.s.prob
    }

    /// p_L = min(k·p′, 1) (without the step).
    pub fn p_l(&self) -> f64 {
        (self.p.coupling_factor * self.s.prob).min(1.0)
    }

    #[inline]
    fn roll(p: f64, rng: &mut impl UniformSource) -> bool {
        rng.uniform() < p
    }

    /// Linux `must_drop` with `dualpi2_classic_marking` / `dualpi2_scalable_marking`;
    /// `backlog` is the bytes queued in both queues (excluding this packet).
    fn coupled(
        &self,
        class: usize,
        ecn: Ecn,
        backlog: u64,
        rng: &mut impl UniformSource,
    ) -> Action {
        if backlog < 2 * self.p.mtu as u64 {
            return Action::None;
        }
        if self.p.linux_fixed_point {
            return self.coupled_fx(class, ecn, rng);
        }
        let p = self.s.prob;
        let pl = self.p.coupling_factor * p;
        let overload = pl > 1.0;
        if class == C {
            if Self::roll(p, rng) && Self::roll(p, rng) {
                if overload || ecn == Ecn::NotEct {
                    return Action::Drop;
                }
                return Action::Mark;
            }
            return Action::None;
        }
        if overload {
            if self.p.drop_overload && Self::roll(p, rng) && Self::roll(p, rng) {
                return Action::Drop;
            }
            return Action::Mark;
        }
        if Self::roll(pl, rng) {
            if ecn == Ecn::NotEct {
                return Action::Drop;
            }
            return Action::Mark;
        }
        Action::None
    }

    /// Linux `dualpi2_roll`: `get_random_u32() <= prob`. With the schedule replay's u32 draw
    /// the uniform number is `r / 2³²` exactly, so `u <= prob / 2³²` is the same test.
    #[inline]
    fn roll_fx(prob: u32, rng: &mut impl UniformSource) -> bool {
        rng.uniform() <= prob as f64 / (1u64 << 32) as f64
    }

    /// `coupled` in Linux's integers (`must_drop`, `dualpi2_classic_marking`,
    /// `dualpi2_scalable_marking`): overload is `prob · k > MAX_PROB`; the L roll is against
    /// `prob · k`, which fits a u32 when there is no overload.
    fn coupled_fx(&self, class: usize, ecn: Ecn, rng: &mut impl UniformSource) -> Action {
        let prob = self.s.prob_fx;
        let local_l_prob = prob as u64 * self.p.coupling_factor as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        if class == C {
            if Self::roll_fx(prob, rng) && Self::roll_fx(prob, rng) {
                if overload || ecn == Ecn::NotEct {
                    return Action::Drop;
                }
                return Action::Mark;
            }
            return Action::None;
        }
        if overload {
            if self.p.drop_overload && Self::roll_fx(prob, rng) && Self::roll_fx(prob, rng) {
                return Action::Drop;
            }
            return Action::Mark;
        }
        if Self::roll_fx(local_l_prob as u32, rng) {
            if ecn == Ecn::NotEct {
                return Action::Drop;
            }
            return Action::Mark;
        }
        Action::None
    }

    /// Sets CE as Linux `dualpi2_mark` would: counts for ECT and CE packets; returns whether
    /// the packet is now CE.
    fn mark(&mut self, ecn: Ecn) -> bool {
        if ecn == Ecn::NotEct {
            return false;
        }
        self.s.ecn_mark += 1;
        true
    }

    /// Decision for an arrival; `q` is the occupancy of both queues before it.
    #[inline]
    pub fn on_enqueue(
        &mut self,
        now: Time,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        if q.packets >= self.p.limit {
            return Verdict::Drop(DropCause::Overflow);
        }
        let class = Self::classify(pkt);
        let mut verdict = Verdict::Pass;
        if self.p.drop_early {
            match self.coupled(class, pkt.ecn, q.bytes, rng) {
                Action::None => {},
                Action::Drop => return Verdict::Drop(DropCause::Early),
                Action::Mark => {
                    if self.mark(pkt.ecn) && pkt.ecn != Ecn::Ce {
                        verdict = Verdict::Mark;
                    }
                },
            }
        }
        self.last_class = class;
        self.s.maxq = self.s.maxq.max(q.packets);
        if class == C {
            self.s.pkts_in_c += 1;
        } else {
            self.s.pkts_in_l += 1;
            if self.p.min_qlen_step > 0 {
                // The L queue's length before this packet: the flags of the packets in it.
                let l_len = self.l_apply.len() as u32;
                self.l_apply.push_back(l_len >= self.p.min_qlen_step);
            }
        }
        if self.s.head_ts[class].is_none() {
            self.s.head_ts[class] = Some(now);
        }
        verdict
    }

    /// The queue to serve next given the two FIFOs' lengths, or `None` when both are empty
    /// (which resets the credit). Linux `dequeue_packet`.
    #[inline]
    pub fn select(&mut self, c_len: usize, l_len: usize) -> Option<usize> {
        if l_len > 0 && (c_len == 0 || self.s.credit <= 0) {
            self.pending_credit = if c_len > 0 {
                self.p.c_protection as i64
            } else {
                0
            };
            Some(L)
        } else if c_len > 0 {
            self.pending_credit = if l_len > 0 {
                -(100 - self.p.c_protection as i64)
            } else {
                0
            };
            Some(C)
        } else {
            self.s.credit = self.credit_init();
            None
        }
    }

    /// Decision for the packet just taken from queue `class`; `q_after` is the occupancy of
    /// both queues without it, `next_head` the enqueue time of the packet now at the head of
    /// `class` (None if it is empty). Linux `dualpi2_qdisc_dequeue`.
    #[inline]
    pub fn on_dequeue(
        &mut self,
        class: usize,
        now: Time,
        pkt: &Packet,
        q_after: QueueLen,
        next_head: Option<Time>,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        self.s.head_ts[class] = next_head;
        let apply_step =
            class != L || self.p.min_qlen_step == 0 || { self.l_apply.pop_front().unwrap_or(true) };
        let mut ecn = pkt.ecn;
        let mut marked = false;
        if !self.p.drop_early {
            match self.coupled(class, ecn, q_after.bytes, rng) {
                Action::None => {},
                Action::Drop => return Verdict::Drop(DropCause::Early),
                Action::Mark => {
                    if self.mark(ecn) {
                        marked = ecn != Ecn::Ce;
                        ecn = Ecn::Ce;
                    }
                },
            }
        }
        if class == L && apply_step && now.saturating_sub(pkt.enqueued_at) > self.p.step_thresh {
            if ecn == Ecn::NotEct {
                return Verdict::Drop(DropCause::Early);
            }
            if self.mark(ecn) {
                self.s.step_marks += 1;
                marked |= ecn != Ecn::Ce;
            }
        }
        self.s.credit += self.pending_credit * pkt.size as i64;
        if marked {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    /// Linux `calculate_probability`, run every `tupdate`.
    pub fn on_tick(&mut self, now: Time) {
        let s = &mut self.s;
        s.delay_c = s.head_ts[C].map_or(0, |t| now.saturating_sub(t));
        s.delay_l = s.head_ts[L].map_or(0, |t| now.saturating_sub(t));
        let d = s.delay_c.max(s.delay_l);
        if self.p.linux_fixed_point {
            self.update_fx(d);
            return;
        }
        let dd = as_secs(d);
        let delta = self.p.alpha * (dd - as_secs(self.p.target))
            + self.p.beta * (dd - as_secs(s.last_qdelay));
        s.last_qdelay = d;
        s.prob = (s.prob + delta).clamp(0.0, 1.0);
        if !self.p.drop_overload {
            s.prob = s.prob.min(1.0 / self.p.coupling_factor);
        }
    }

    /// `calculate_probability`'s integer update from the delay `d` (ns): the s64 sum of
    /// `(d − target)·α + (d − d_prev)·β`, divided by 64 (`__scale_delta`) and added to or
    /// taken from the u32 p′ as the kernel does (a sum or difference truncated to 32 bits,
    /// then clamped to MAX_PROB or 0 when it wrapped); without drop_overload capped at
    /// `MAX_PROB / k`.
    fn update_fx(&mut self, d: Time) {
        let s = &mut self.s;
        // Wrapping as the kernel's s64 arithmetic does (its comment: delay differences over
        // ~4.2 s overflow with the largest gains); never a panic here.
        let di = d as i64;
        let delta = (di.wrapping_sub(self.p.target as i64))
            .wrapping_mul(self.alpha_fx as i64)
            .wrapping_add(
                di.wrapping_sub(s.last_qdelay as i64)
                    .wrapping_mul(self.beta_fx as i64),
            );
        s.last_qdelay = d;
        let prob = s.prob_fx;
        let mut new = if delta > 0 {
            let n = ((delta as u64) / 64).wrapping_add(prob as u64) as u32;
            if n < prob {
                MAX_PROB
            } else {
                n
            }
        } else {
            let n = (prob as u64).wrapping_sub(delta.unsigned_abs() / 64) as u32;
            if n > prob {
                0
            } else {
                n
            }
        };
        if !self.p.drop_overload {
            new = new.min(MAX_PROB / self.p.coupling_factor as u32);
        }
        s.prob_fx = new;
        s.prob = new as f64 / MAX_PROB as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};
    use crate::units::MS;

    fn pkt(ecn: Ecn) -> Packet {
        Packet {
            size: 1500,
            ecn,
            ..Default::default()
        }
    }

    fn q(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 1500,
        }
    }

    #[test]
    fn classification_by_ecn_codepoint() {
        assert_eq!(DualPi2::classify(&pkt(Ecn::NotEct)), C);
        assert_eq!(DualPi2::classify(&pkt(Ecn::Ect0)), C);
        assert_eq!(DualPi2::classify(&pkt(Ecn::Ect1)), L);
        assert_eq!(DualPi2::classify(&pkt(Ecn::Ce)), L);
    }

    /// RFC 9332 Appendix A's update by hand, α = 0.16, β = 3.2, target 15 ms, from a scripted
    /// head sojourn of the C queue.
    #[test]
    fn probability_trace_by_hand() {
        let mut d = DualPi2::new(DualPi2Params::linux_defaults());
        let t = 16 * MS;
        // Head packet enqueued at 0; updates at 16, 32, 48 ms see sojourns 16, 32, 48 ms.
        d.s.head_ts[C] = Some(0);
        d.on_tick(t);
        // 0.16·(0.016 − 0.015) + 3.2·(0.016 − 0) = 0.00016 + 0.0512
        let p1 = 0.00016 + 0.0512;
        assert!((d.s.prob - p1).abs() < 1e-12, "{}", d.s.prob);
        assert_eq!(d.s.delay_c, 16 * MS);
        d.on_tick(2 * t);
        // + 0.16·0.017 + 3.2·0.016
        let p2 = p1 + 0.00272 + 0.0512;
        assert!((d.s.prob - p2).abs() < 1e-12);
        assert!((d.p_c() - p2 * p2).abs() < 1e-12);
        assert!((d.p_l() - 2.0 * p2).abs() < 1e-12);
        // Queue drained: d = 0 → Δ = 0.16·(−0.015) + 3.2·(−0.032) = −0.1048; 0.10528 → 0.00048.
        d.s.head_ts[C] = None;
        d.on_tick(3 * t);
        let p3 = p2 - 0.0024 - 0.1024;
        assert!((d.s.prob - p3).abs() < 1e-12, "{}", d.s.prob);
        // Again d = 0: Δ = −0.0024 → clamped at 0.
        d.on_tick(4 * t);
        assert_eq!(d.s.prob, 0.0);
        // The L queue's delay counts too (max of both): 400 ms in L saturates p′ at 1.
        d.s.head_ts[L] = Some(4 * t);
        d.on_tick(4 * t + 400 * MS);
        assert_eq!(d.s.delay_l, 400 * MS);
        assert_eq!(d.s.prob, 1.0);
        assert_eq!(d.p_l(), 1.0);
    }

    /// Linux's scaled gains by hand: tc's 41 and 819 (0.16, 3.2 Hz × 256) become
    /// (41 · (2³² − 1) >> 2) / 10⁹ = 44 and (819 · (2³² − 1) >> 2) / 10⁹ = 879, truncated.
    #[test]
    fn linux_gains_are_scaled_and_truncated() {
        assert_eq!(gain_to_tc_units(0.16), 41);
        assert_eq!(gain_to_tc_units(3.2), 819);
        assert_eq!(scale_alpha_beta(41), 44);
        assert_eq!(scale_alpha_beta(819), 879);
    }

    /// calculate_probability in integers: head at 0, update at 16 ms: d = 16·10⁶ ns,
    /// Δ = (16·10⁶ − 15·10⁶)·44 + (16·10⁶ − 0)·879 = 14 108 000 000, /64 = 220 437 500.
    /// Then the queue empties: Δ = (0 − 15·10⁶)·44 + (0 − 16·10⁶)·879 < −p′·64: p′ wraps
    /// below 0 and is clamped to 0, as the kernel's `new_prob > pi2_prob` test does.
    #[test]
    fn fixed_point_update_by_hand() {
        let mut p = DualPi2Params::linux_defaults();
        p.linux_fixed_point = true;
        let mut d = DualPi2::new(p);
        d.s.head_ts[C] = Some(0);
        d.on_tick(16 * MS);
        assert_eq!(d.s.prob_fx, 220_437_500);
        assert_eq!(d.s.prob, 220_437_500.0 / MAX_PROB as f64);
        d.s.head_ts[C] = None;
        d.on_tick(32 * MS);
        assert_eq!(d.s.prob_fx, 0);
        // A roll is `r <= prob`: r = 0 passes even at p′ = 0, as dualpi2_roll does.
        struct Word(f64);
        impl UniformSource for Word {
            fn uniform(&mut self) -> f64 {
                self.0
            }
        }
        assert!(DualPi2::roll_fx(0, &mut Word(0.0)));
        assert!(!DualPi2::roll_fx(0, &mut Word(1.0 / 4294967296.0)));
        // Without drop_overload p′ is capped at MAX_PROB / k.
        d.p.drop_overload = false;
        d.s.head_ts[C] = Some(32 * MS);
        d.on_tick(32 * MS + 200 * MS);
        assert_eq!(d.s.prob_fx, MAX_PROB / 2);
    }

    #[test]
    fn no_drop_on_overload_caps_prob_at_one_over_k() {
        let mut p = DualPi2Params::linux_defaults();
        p.drop_overload = false;
        let mut d = DualPi2::new(p);
        d.s.head_ts[C] = Some(0);
        d.on_tick(500 * MS);
        assert_eq!(d.s.prob, 0.5);
    }

    #[test]
    fn step_marks_above_threshold_only() {
        let mut d = DualPi2::new(DualPi2Params::linux_defaults());
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let mut p = pkt(Ecn::Ect1);
        p.enqueued_at = 0;
        // p′ = 0: only the step acts. Sojourn exactly 1 ms: not above → pass.
        assert_eq!(d.select(0, 1), Some(L));
        assert_eq!(d.on_dequeue(L, MS, &p, q(10), None, &mut g), Verdict::Pass);
        assert_eq!(
            d.on_dequeue(L, MS + 1, &p, q(10), None, &mut g),
            Verdict::Mark
        );
        assert_eq!((d.s.step_marks, d.s.ecn_mark), (1, 1));
        // A CE packet over the threshold is counted as Linux does, but stays CE (no new mark).
        let mut ce = pkt(Ecn::Ce);
        ce.enqueued_at = 0;
        assert_eq!(
            d.on_dequeue(L, 5 * MS, &ce, q(10), None, &mut g),
            Verdict::Pass
        );
        assert_eq!((d.s.step_marks, d.s.ecn_mark), (2, 2));
        // The step never applies to the C queue.
        let mut c = pkt(Ecn::Ect0);
        c.enqueued_at = 0;
        assert_eq!(
            d.on_dequeue(C, 50 * MS, &c, q(10), None, &mut g),
            Verdict::Pass
        );
    }

    /// `min_qlen_step = 2` (the L4S team's "only apply the step if a queue is building up",
    /// upstream `skb_apply_step`): of three L packets arriving at an empty L queue, the first
    /// two found 0 and 1 packets queued and are not step-marked however long they wait; the
    /// third found 2 and is.
    #[test]
    fn the_step_waits_for_a_queue_with_min_qlen_step() {
        let p = DualPi2Params {
            min_qlen_step: 2,
            ..DualPi2Params::linux_defaults()
        };
        let mut d = DualPi2::new(p);
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let mut l = pkt(Ecn::Ect1);
        l.enqueued_at = 0;
        for n in 0..3 {
            assert_eq!(d.on_enqueue(0, &l, q(n), &mut g), Verdict::Pass);
        }
        let got: Vec<_> = (0..3)
            .map(|_| d.on_dequeue(L, 5 * MS, &l, q(10), None, &mut g))
            .collect();
        assert_eq!(got, [Verdict::Pass, Verdict::Pass, Verdict::Mark]);
        assert_eq!(d.s.step_marks, 1);
    }

    #[test]
    fn coupled_probabilities_and_overload() {
        let mut d = DualPi2::new(DualPi2Params::linux_defaults());
        let mut g = Rng::stream(0, StreamKind::Test, 7);
        let n = 200_000;
        let count = |d: &mut DualPi2, e: Ecn, class: usize, g: &mut Rng, want: Verdict| {
            let p = pkt(e);
            (0..n)
                .filter(|_| d.on_dequeue(class, 0, &p, q(100), Some(0), g) == want)
                .count() as f64
                / n as f64
        };
        d.s.prob = 0.2;
        // C: Not-ECT dropped with p′² = 0.04, ECT(0) marked with 0.04.
        let f = count(
            &mut d,
            Ecn::NotEct,
            C,
            &mut g,
            Verdict::Drop(DropCause::Early),
        );
        assert!((f - 0.04).abs() < 0.003, "{f}");
        let f = count(&mut d, Ecn::Ect0, C, &mut g, Verdict::Mark);
        assert!((f - 0.04).abs() < 0.003, "{f}");
        // L: ECT(1) marked with k·p′ = 0.4.
        let f = count(&mut d, Ecn::Ect1, L, &mut g, Verdict::Mark);
        assert!((f - 0.4).abs() < 0.01, "{f}");
        // Below 2 MTU (3000 B) of backlog nothing happens; at 3000 B p′ = 1 drops.
        let p = pkt(Ecn::NotEct);
        d.s.prob = 1.0;
        let backlog = |bytes| QueueLen { packets: 2, bytes };
        assert_eq!(
            d.on_dequeue(C, 0, &p, backlog(2999), Some(0), &mut g),
            Verdict::Pass
        );
        assert_eq!(
            d.on_dequeue(C, 0, &p, backlog(3000), Some(0), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // Overload (k·p′ > 1): p′ = 0.7, ECT(0) in C dropped with 0.49; L dropped with 0.49,
        // the rest marked.
        d.s.prob = 0.7;
        let f = count(
            &mut d,
            Ecn::Ect0,
            C,
            &mut g,
            Verdict::Drop(DropCause::Early),
        );
        assert!((f - 0.49).abs() < 0.01, "{f}");
        let f = count(
            &mut d,
            Ecn::Ect1,
            L,
            &mut g,
            Verdict::Drop(DropCause::Early),
        );
        assert!((f - 0.49).abs() < 0.01, "{f}");
        let f = count(&mut d, Ecn::Ect1, L, &mut g, Verdict::Mark);
        assert!((f - 0.51).abs() < 0.01, "{f}");
        // Without drop_overload every L packet is marked.
        d.p.drop_overload = false;
        let f = count(&mut d, Ecn::Ect1, L, &mut g, Verdict::Mark);
        assert_eq!(f, 1.0);
    }

    #[test]
    fn overflow_and_drop_early() {
        let mut p = DualPi2Params::linux_defaults();
        p.limit = 5;
        p.drop_early = true;
        let mut d = DualPi2::new(p);
        let mut g = Rng::stream(0, StreamKind::Test, 1);
        assert_eq!(
            d.on_enqueue(0, &pkt(Ecn::Ect1), q(5), &mut g),
            Verdict::Drop(DropCause::Overflow)
        );
        d.s.prob = 0.45; // k·p′ = 0.9
        let marks = (0..10_000)
            .filter(|_| d.on_enqueue(0, &pkt(Ecn::Ect1), q(4), &mut g) == Verdict::Mark)
            .count();
        assert!((8800..9200).contains(&marks), "{marks}");
        assert_eq!(d.enqueue_class(), L);
        assert_eq!(d.s.pkts_in_l, 10_000);
        assert_eq!(d.s.maxq, 4);
        assert_eq!(d.s.head_ts[L], Some(0));
    }

    /// Both queues always backlogged with equal packets: C gets wc = 10 % of the departures.
    #[test]
    fn c_protection_share_under_saturation() {
        let mut d = DualPi2::new(DualPi2Params::linux_defaults());
        let mut g = Rng::stream(0, StreamKind::Test, 2);
        let p = [pkt(Ecn::Ect0), pkt(Ecn::Ect1)];
        let mut served = [0u32; 2];
        // Initial credit 1500·(10 − 90) < 0: L first.
        assert_eq!(d.select(100, 100), Some(L));
        d.on_dequeue(L, 0, &p[L], q(1), Some(0), &mut g);
        served[L] += 1;
        for _ in 1..10_000 {
            let k = d.select(100, 100).unwrap();
            d.on_dequeue(k, 0, &p[k], q(1), Some(0), &mut g);
            served[k] += 1;
        }
        assert!((999..=1001).contains(&served[C]), "{served:?}");
        // Empty: the credit resets.
        assert_eq!(d.select(0, 0), None);
        assert_eq!(d.s.credit, 1500 * (10 - 90));
        // Only one queue backlogged: it gets everything, the credit does not move.
        assert_eq!(d.select(5, 0), Some(C));
        d.on_dequeue(C, 0, &p[C], q(1), Some(0), &mut g);
        assert_eq!(d.s.credit, 1500 * (10 - 90));
    }
}
