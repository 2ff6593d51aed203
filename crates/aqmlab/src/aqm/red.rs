//! RED (Floyd & Jacobson 1993) as implemented in ns-2.35 `queue/red.cc`, plus GRED-I and the
//! Adaptive RED hook (`ared.rs`).
//!
//! Per arrival, with `q` the queue length *before* the arrival (packets, or bytes when
//! `queue_in_bytes`):
//!
//! * idle correction: if the queue has been idle since `t_idle`,
//!   `m = ⌊ptc·(now − t_idle)⌋` with `ptc = link_bps / (8·mean_pkt_size)`, else `m = 0`;
//! * average: `avg ← avg·(1 − w_q)^(m+1) + w_q·q`;
//! * `count ← count + 1`, `count_bytes ← count_bytes + size`;
//! * if `avg ≥ min_th` and `q > 1`:
//!   - forced drop when `avg ≥ max_th` (not gentle) or `avg ≥ 2·max_th` (gentle);
//!   - else, on the first arrival since `avg` crossed `min_th`: `count = 1`,
//!     `count_bytes = size`, no drop;
//!   - else early decision: `p_b = max_p·(avg − min_th)/(max_th − min_th)` below `max_th`;
//!     gentle above: `p_b = (1 − max_p₀)·avg/max_th + 2·max_p₀ − 1`; clipped to 1.
//!     With `c = count` (or `⌊count_bytes/mean_pkt_size⌋` in byte mode):
//!     no wait: `p_a = p_b/(1 − c·p_b)` if `c·p_b < 1`, else 1;
//!     wait: `p_a = 0` if `c·p_b < 1`, `p_b/(2 − c·p_b)` if `c·p_b < 2`, else 1;
//!     byte mode (`p_a < 1`): `p_a ← p_a·size/mean_pkt_size`; clipped to 1.
//!     A hit (`u < p_a`) resets `count` and `count_bytes` to 0;
//! * otherwise `old = 0` (the next crossing is a "first crossing" again);
//! * buffer overflow (`q ≥ limit`) overrides everything: forced drop of the arrival.
//! * forced and overflow drops also reset `count`/`count_bytes`.
//!
//! The idle period starts when the link asks for a packet and finds none (`on_idle`).
//!
//! Sources: Floyd & Jacobson, IEEE/ACM ToN 1(4) 1993 (average, count rule, byte mode);
//! ns-2.35 `queue/red.cc` (order of operations, `wait_`, gentle line, first-crossing rule,
//! `qlen > 1`, automatic parameters); RFC 3168 §5 and §7 (ECN). See docs/queues.md.

use super::ared::Ared;
pub use super::red_params::{EcnPolicy, RedParams, RedState};
use super::{DropCause, QueueCounts, QueueLen, Verdict};
use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::{as_secs, Time};

#[derive(Clone, Debug)]
pub struct Red {
    pub name: &'static str,
    pub p: RedParams,
    pub s: RedState,
    /// Adaptive RED: adapts `s.max_p`.
    pub adaptive: Option<Ared>,
}

impl Red {
    pub fn new(name: &'static str, p: RedParams, adaptive: Option<Ared>) -> Self {
        let s = RedState {
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            // ns-2 starts idle at time 0.
            idle: true,
            idle_since: 0,
            max_p: p.max_p,
            gentle_max_p: p.max_p,
            p_b: 0.0,
            p_a: 0.0,
        };
        Red {
            name,
            p,
            s,
            adaptive,
        }
    }

    #[inline]
    fn qlen(&self, q: QueueLen) -> f64 {
        if self.p.queue_in_bytes {
            q.bytes as f64
        } else {
            q.packets as f64
        }
    }

    /// The average an arrival at `now` would see with the queue still empty (idle decay only).
    pub fn avg_decayed(&self, now: Time) -> f64 {
        if self.s.idle {
            let m = (self.p.ptc * as_secs(now.saturating_sub(self.s.idle_since))).floor();
            self.s.avg * (1.0 - self.p.w_q).powf(m)
        } else {
            self.s.avg
        }
    }

    /// Updates the average for an arrival that sees `qlen` (before it is added).
    fn update_avg(&mut self, now: Time, qlen: f64) {
        let m = if self.s.idle {
            self.s.idle = false;
            (self.p.ptc * as_secs(now.saturating_sub(self.s.idle_since))).floor()
        } else {
            0.0
        };
        self.s.avg = self.s.avg * (1.0 - self.p.w_q).powf(m + 1.0) + self.p.w_q * qlen;
    }

    /// `p_b` for the current average (ns-2 `calculate_p_new`).
    pub fn p_b(&self, avg: f64) -> f64 {
        let (min_th, max_th) = (self.p.min_th, self.p.max_th);
        let p = if avg >= max_th {
            if self.p.gentle {
                let mp = self.s.gentle_max_p;
                (1.0 - mp) * avg / max_th + 2.0 * mp - 1.0
            } else {
                1.0
            }
        } else {
            self.s.max_p * (avg - min_th) / (max_th - min_th)
        };
        p.clamp(0.0, 1.0)
    }

    /// `p_a` from `p_b`, the count and the packet size (ns-2 `modify_p`).
    pub fn p_a(&self, p_b: f64, size: u32) -> f64 {
        let c = if self.p.byte_mode {
            (self.s.count_bytes / self.p.mean_pkt_size as u64) as f64
        } else {
            self.s.count as f64
        };
        let cp = c * p_b;
        let mut p = if self.p.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        if self.p.byte_mode && p < 1.0 {
            p = p * size as f64 / self.p.mean_pkt_size as f64;
        }
        p.min(1.0)
    }

    fn reset_count(&mut self) {
        self.s.count = 0;
        self.s.count_bytes = 0;
    }

    #[inline]
    pub fn on_enqueue(
        &mut self,
        now: Time,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        let qlen = self.qlen(q);
        self.update_avg(now, qlen);
        if let Some(a) = &mut self.adaptive {
            a.on_arrival(now, self.s.avg, &self.p, &mut self.s);
        }
        self.s.count += 1;
        self.s.count_bytes += pkt.size as u64;
        let avg = self.s.avg;
        let mut verdict = Verdict::Pass;
        if avg >= self.p.min_th && qlen > 1.0 {
            let hard_edge = if self.p.gentle {
                2.0 * self.p.max_th
            } else {
                self.p.max_th
            };
            if self.p.ecn != EcnPolicy::MarkP && avg >= hard_edge {
                verdict = Verdict::Drop(DropCause::Forced);
            } else if !self.s.old {
                self.s.old = true;
                self.s.count = 1;
                self.s.count_bytes = pkt.size as u64;
            } else {
                let p_b = self.p_b(avg);
                let p_a = self.p_a(p_b, pkt.size);
                self.s.p_b = p_b;
                self.s.p_a = p_a;
                if rng.uniform() < p_a {
                    self.reset_count();
                    let mark = pkt.ecn.is_ect()
                        && match self.p.ecn {
                            EcnPolicy::Off => false,
                            EcnPolicy::Rfc3168 => avg < self.p.max_th,
                            EcnPolicy::NewGentle => true,
                            EcnPolicy::MarkP => p_b < self.p.mark_p,
                        };
                    verdict = if mark {
                        Verdict::Mark
                    } else {
                        Verdict::Drop(DropCause::Early)
                    };
                }
            }
        } else {
            self.s.old = false;
            self.s.p_b = 0.0;
            self.s.p_a = 0.0;
        }
        let full = if self.p.queue_in_bytes {
            q.bytes >= self.p.limit
        } else {
            q.packets as u64 >= self.p.limit
        };
        if full {
            verdict = Verdict::Drop(DropCause::Overflow);
        }
        if matches!(
            verdict,
            Verdict::Drop(DropCause::Forced | DropCause::Overflow)
        ) {
            self.reset_count();
        }
        verdict
    }

    #[inline]
    pub fn on_dequeue(&mut self) -> Verdict {
        // ns-2 clears the idle flag on every successful dequeue.
        self.s.idle = false;
        Verdict::Pass
    }

    #[inline]
    pub fn on_idle(&mut self, now: Time) {
        self.s.idle = true;
        self.s.idle_since = now;
    }

    pub fn tick_period(&self) -> Option<Time> {
        self.adaptive.as_ref().and_then(|a| a.tick_period())
    }

    pub fn on_tick(&mut self, now: Time) {
        if self.adaptive.is_some() {
            let avg = self.avg_decayed(now);
            if let Some(a) = &mut self.adaptive {
                a.on_tick(now, avg, &self.p, &mut self.s);
            }
        }
    }

    /// tc's red xstats (Linux `red_dump_stats`, iproute2 `red_print_xstats`): `early` =
    /// prob_drop + forced_drop (the model's early and forced drops), `pdrop` = drops at the
    /// buffer limit, `other` = 0 (no other drops here), `marked` = prob_mark + forced_mark.
    /// Adaptive RED adds `max_p`, the current value: Linux's adaptive RED dumps its
    /// `parms.max_P`, which tc prints as `probability` on the options line.
    pub fn qdisc_stats(&self, c: &QueueCounts) -> serde_json::Map<String, serde_json::Value> {
        let mut m = super::json_map(serde_json::json!({
            "marked": c.marks,
            "early": c.drops_early + c.drops_forced,
            "pdrop": c.drops_overflow,
            "other": 0,
        }));
        if self.adaptive.is_some() {
            m.insert("max_p".into(), self.s.max_p.into());
        }
        m
    }

    pub fn state_probe(&self) -> (&'static str, f64) {
        if self.adaptive.is_some() {
            ("max_p", self.s.max_p)
        } else {
            ("avg", self.s.avg)
        }
    }
}

/// ns-2 automatic parameters (`initialize_params`), in packets of the mean size.
pub mod auto {
    /// `min_th = max(5, delay_target·C/2)` packets.
    pub fn min_th(delay_target_s: f64, ptc: f64) -> f64 {
        (delay_target_s * ptc / 2.0).max(5.0)
    }

    /// `w_q = 1 − exp(−1/C)` (time constant ≈ 1 s; ns-2 `q_weight_ 0`, ARED).
    pub fn w_q_1s(ptc: f64) -> f64 {
        1.0 - (-1.0 / ptc).exp()
    }

    /// ns-2.35 default (`q_weight_ −1`): `RTT = max(0.1 s, 3·(link_delay + 1/C))`,
    /// `w_q = 1 − exp(−1/(10·RTT·C))`.
    pub fn w_q_rtt(ptc: f64, link_delay_s: f64) -> f64 {
        let rtt = (3.0 * (link_delay_s + 1.0 / ptc)).max(0.1);
        1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
    }

    /// ns-2 `q_weight_ −2`: `w_q = 1 − exp(−10/C)`.
    pub fn w_q_fast(ptc: f64) -> f64 {
        1.0 - (-10.0 / ptc).exp()
    }

    /// ARED lower bound of max_p: `min(0.01, 80000/bandwidth_bps)`.
    pub fn bottom(link_bps: f64) -> f64 {
        (80000.0 / link_bps).min(0.01)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::{Rng, StreamKind};
    use crate::units::MS;

    fn params() -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            wait: false,
            queue_in_bytes: false,
            byte_mode: false,
            mean_pkt_size: 500,
            limit: 100,
            ptc: 2500.0,
            ecn: EcnPolicy::Off,
            mark_p: 0.1,
        }
    }

    fn pkt(size: u32, ecn: Ecn) -> Packet {
        Packet {
            size,
            ecn,
            ..Default::default()
        }
    }

    fn ql(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 500,
        }
    }

    fn rng() -> Rng {
        Rng::stream(3, StreamKind::Test, 0)
    }

    #[test]
    fn average_after_idle_period_decays_by_m_plus_one() {
        let mut r = Red::new("red", params(), None);
        let mut g = rng();
        r.s.avg = 10.0;
        r.s.idle = false;
        // Queue empties at t = 100 ms; next arrival at 102.5 ms finds it empty.
        r.on_idle(100 * MS);
        let t = 100 * MS + 2_500_000;
        r.on_enqueue(t, &pkt(500, Ecn::NotEct), ql(0), &mut g);
        // m = floor(2500 pkt/s · 2.5 ms) = 6; avg = 10·0.998^7 + 0.002·0.
        let expected = 10.0 * 0.998f64.powi(7);
        assert!(
            (r.s.avg - expected).abs() < 1e-12,
            "{} vs {expected}",
            r.s.avg
        );
        // The next arrival (no idle) is an ordinary EWMA step with q = 1.
        r.on_enqueue(t + 1000, &pkt(500, Ecn::NotEct), ql(1), &mut g);
        let expected2 = expected * 0.998 + 0.002;
        assert!((r.s.avg - expected2).abs() < 1e-12);
    }

    #[test]
    fn p_b_linear_and_gentle_ramp() {
        let r = Red::new("red", params(), None);
        // Linear: 0.1·(10 − 5)/(15 − 5) = 0.05.
        assert!((r.p_b(10.0) - 0.05).abs() < 1e-15);
        assert!((r.p_b(5.0)).abs() < 1e-15);
        // Gentle: from max_p = 0.1 at max_th = 15 to 1 at 30:
        // p = (1 − 0.1)·avg/15 + 2·0.1 − 1.
        assert!((r.p_b(15.0) - 0.1).abs() < 1e-12);
        assert!((r.p_b(22.5) - 0.55).abs() < 1e-12);
        assert!((r.p_b(30.0) - 1.0).abs() < 1e-12);
        assert_eq!(r.p_b(40.0), 1.0);
        let mut np = params();
        np.gentle = false;
        let r = Red::new("red", np, None);
        assert_eq!(r.p_b(15.0), 1.0);
    }

    #[test]
    fn p_a_count_correction_and_wait() {
        let mut r = Red::new("red", params(), None);
        // p_b = 0.05. count 10: p_a = 0.05/(1 − 0.5) = 0.1; count 19: 0.05/0.05 = 1;
        // count 20: c·p_b = 1 → 1.
        r.s.count = 10;
        assert!((r.p_a(0.05, 500) - 0.1).abs() < 1e-12);
        r.s.count = 19;
        assert!((r.p_a(0.05, 500) - 1.0).abs() < 1e-9);
        r.s.count = 20;
        assert_eq!(r.p_a(0.05, 500), 1.0);
        // wait: count 10 → 0; count 30 → c·p_b = 1.5 → 0.05/0.5 = 0.1; count 40 → 1.
        r.p.wait = true;
        r.s.count = 10;
        assert_eq!(r.p_a(0.05, 500), 0.0);
        r.s.count = 30;
        assert!((r.p_a(0.05, 500) - 0.1).abs() < 1e-12);
        r.s.count = 40;
        assert_eq!(r.p_a(0.05, 500), 1.0);
    }

    #[test]
    fn byte_mode_scales_by_size_and_counts_bytes() {
        let mut p = params();
        p.byte_mode = true;
        let mut r = Red::new("red", p, None);
        // count_bytes = 5250 → c = floor(5250/500) = 10; p_a = 0.05/(1 − 0.5) = 0.1, then
        // × 1000/500 = 0.2 for a 1000-byte packet, × 40/500 for a 40-byte ACK.
        r.s.count_bytes = 5250;
        assert!((r.p_a(0.05, 1000) - 0.2).abs() < 1e-12);
        assert!((r.p_a(0.05, 40) - 0.1 * 40.0 / 500.0).abs() < 1e-12);
    }

    #[test]
    fn first_crossing_does_not_drop_and_sets_count_one() {
        let mut p = params();
        p.w_q = 1.0; // avg = q
        p.max_p = 1.0;
        let mut r = Red::new("red", p, None);
        let mut g = rng();
        let nope = pkt(500, Ecn::NotEct);
        // avg = 14: p_b = (14 − 5)/10 = 0.9; first crossing passes.
        assert_eq!(r.on_enqueue(0, &nope, ql(14), &mut g), Verdict::Pass);
        assert_eq!(r.s.count, 1);
        // Second arrival: count 2, c·p_b = 1.8 ≥ 1 → p_a = 1 → early drop.
        assert_eq!(
            r.on_enqueue(1, &nope, ql(14), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(r.s.count, 0);
        // Gentle forced region at avg ≥ 2·max_th = 30.
        assert_eq!(
            r.on_enqueue(2, &nope, ql(30), &mut g),
            Verdict::Drop(DropCause::Forced)
        );
        // Below min_th resets `old`; qlen ≤ 1 likewise.
        assert_eq!(r.on_enqueue(3, &nope, ql(1), &mut g), Verdict::Pass);
        assert!(!r.s.old);
        // Overflow beats everything.
        assert_eq!(
            r.on_enqueue(4, &nope, ql(100), &mut g),
            Verdict::Drop(DropCause::Overflow)
        );
    }

    #[test]
    fn ecn_policies() {
        let mut p = params();
        p.w_q = 1.0;
        p.max_p = 1.0;
        p.gentle = true;
        let ect = pkt(500, Ecn::Ect0);
        let non = pkt(500, Ecn::NotEct);
        let run = |policy: EcnPolicy, q: u32, pk: &Packet| run_with(&p, policy, 0.1, q, pk);
        fn run_with(p: &RedParams, policy: EcnPolicy, mark_p: f64, q: u32, pk: &Packet) -> Verdict {
            let mut pp = p.clone();
            pp.ecn = policy;
            pp.mark_p = mark_p;
            let mut r = Red::new("red", pp, None);
            let mut g = rng();
            r.on_enqueue(0, pk, ql(q), &mut g); // first crossing
            r.s.count = 1000; // make p_a = 1
            r.on_enqueue(1, pk, ql(q), &mut g)
        }
        // Linear region (avg 10): ECT marked, non-ECT dropped.
        assert_eq!(run(EcnPolicy::Rfc3168, 10, &ect), Verdict::Mark);
        assert_eq!(
            run(EcnPolicy::Rfc3168, 10, &non),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(
            run(EcnPolicy::Off, 10, &ect),
            Verdict::Drop(DropCause::Early)
        );
        // Gentle region (avg 20, between max_th and 2·max_th): rfc3168 drops, new_gentle marks.
        assert_eq!(
            run(EcnPolicy::Rfc3168, 20, &ect),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(run(EcnPolicy::NewGentle, 20, &ect), Verdict::Mark);
        // Forced region: new_gentle drops too.
        assert_eq!(
            run(EcnPolicy::NewGentle, 35, &ect),
            Verdict::Drop(DropCause::Forced)
        );
        // mark_p: p_b(10) = 0.5 ≥ 0.1 → drop; with mark_p 0.6 → mark.
        assert_eq!(
            run(EcnPolicy::MarkP, 10, &ect),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(run_with(&p, EcnPolicy::MarkP, 0.6, 10, &ect), Verdict::Mark);
    }

    /// Gaps (arrivals from one drop to the next, the dropped one included) under a constant
    /// average with p_b = 1/16 (exact in binary). The k-th arrival after a drop has
    /// count = k. Without `wait`, p_a = p_b/(1 − k·p_b) = 1/(16 − k), so the gap is uniform
    /// on {1, …, 15}; with `wait`, p_a = 0 for k < 16 and p_b/(2 − k·p_b) = 1/(32 − k) for
    /// 16 ≤ k < 32, so the gap is uniform on {16, …, 31}.
    fn gaps(wait: bool, n_drops: usize) -> Vec<u64> {
        let mut p = params();
        p.w_q = 1.0;
        p.wait = wait;
        p.max_p = 0.125; // avg 10: p_b = 0.125·5/10 = 0.0625
        let mut r = Red::new("red", p, None);
        let mut g = Rng::stream(11, StreamKind::Test, 1);
        let pk = pkt(500, Ecn::NotEct);
        let mut out = Vec::new();
        let mut since = 0u64;
        let mut t = 0;
        r.on_enqueue(t, &pk, ql(10), &mut g); // first crossing: count = 1, no drop
        since += 1;
        while out.len() < n_drops {
            t += 1;
            since += 1;
            if r.on_enqueue(t, &pk, ql(10), &mut g) != Verdict::Pass {
                assert_eq!(r.s.p_b, 0.0625);
                out.push(since);
                since = 0;
            }
        }
        out
    }

    fn chi2_uniform(gaps: &[u64], lo: u64, hi: u64) -> f64 {
        let k = (hi - lo + 1) as usize;
        let mut bins = vec![0f64; k];
        for &g in gaps {
            assert!(g >= lo && g <= hi, "gap {g} outside [{lo}, {hi}]");
            bins[(g - lo) as usize] += 1.0;
        }
        let e = gaps.len() as f64 / k as f64;
        bins.iter().map(|o| (o - e).powi(2) / e).sum()
    }

    #[test]
    fn inter_drop_gap_is_uniform_without_wait() {
        let g = gaps(false, 20_000);
        // 15 bins, 14 dof: 0.999 quantile of chi²(14) = 36.12.
        let c = chi2_uniform(&g, 1, 15);
        assert!(c < 36.12, "chi2 = {c}");
        // Mean 8 (a geometric law with p = 1/16 would have mean 16).
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - 8.0).abs() < 0.15, "{mean}");
    }

    #[test]
    fn inter_drop_gap_is_uniform_with_wait() {
        let g = gaps(true, 20_000);
        // 16 bins, 15 dof: 0.999 quantile of chi²(15) = 37.70.
        let c = chi2_uniform(&g, 16, 31);
        assert!(c < 37.70, "chi2 = {c}");
    }
}
