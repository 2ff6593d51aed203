//! REM, Random Exponential Marking (Athuraliya, Li, Low, Yin, IEEE Network 2001), as in ns-2.35
//! `queue/rem.cc`.
//!
//! Every `interval` (ns-2 `pupdtime_`, 2 ms), with `x` the arrivals of the last interval
//! (packets, or bytes/mean_pkt_size in byte mode) smoothed as `x̄ ← w_in·x + (1 − w_in)·x̄`,
//! `b` the current queue (same unit) and `c = interval·link_bps/(8·mean_pkt_size)` the
//! capacity in packets per interval:
//!
//! `price ← max(0, price + γ·(x̄ + α·(b − b*) − c))`, `prob = 1 − φ^(−price)`.
//!
//! * Drop mode: an arrival is dropped with `prob` (byte mode: × size/mean_pkt_size).
//! * Mark mode, `RemMarkPolicy::Ns2` (ns-2 `markpkts_`): at dequeue, an ECT packet is
//!   CE-marked with the same probability; non-ECT packets (SYNs, pure ACKs, retransmissions,
//!   non-ECN flows) are never early-dropped (only overflow drops them).
//! * Mark mode, `RemMarkPolicy::Altq`: the decision is taken at enqueue, as ALTQ's `red.c`
//!   takes RED's, and carried out as ALTQ does for RED with ECN: an ECT packet is marked,
//!   a non-ECT one dropped. (No public ALTQ REM exists; Study B's REM ran under ALTQ, and this
//!   is how ALTQ's own disciplines treat a packet that cannot carry a mark.)
//!
//! Buffer: an arrival finding `q ≥ limit` packets is dropped (this project's common rule; ns-2
//! REM holds at most `limit − 1`, see docs/queues.md).
//!
//! Sources: REM01; ns-2.35 `queue/rem.cc`, `ns-default.tcl` (γ 0.001, φ 1.001, α 0.1,
//! b* 20, 2 ms, `inw_` 1).

use super::{DropCause, QueueLen, Verdict};
use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::Time;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RemParams {
    pub gamma: f64,
    pub phi: f64,
    pub alpha: f64,
    /// Target backlog b*, packets.
    pub b_ref: f64,
    pub interval: Time,
    /// Weight of the newest input-rate sample.
    pub w_in: f64,
    /// Capacity per interval, packets of the mean size.
    pub c: f64,
    pub mean_pkt_size: u32,
    /// Queue and arrivals measured in bytes/mean_pkt_size; drop probability scaled by size.
    pub byte_mode: bool,
    /// Mark ECT packets instead of dropping them (how and where: `mark_policy`).
    pub mark: bool,
    pub mark_policy: RemMarkPolicy,
    /// Buffer in packets.
    pub limit: u32,
}

/// What REM's mark mode does with a packet, and where (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemMarkPolicy {
    /// ns-2.35 `queue/rem.cc`: mark ECT at dequeue; non-ECT never early-dropped.
    #[default]
    Ns2,
    /// ALTQ style: decide at enqueue; mark ECT, drop non-ECT.
    Altq,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemState {
    pub price: f64,
    pub prob: f64,
    /// Arrivals since the last update (packets or bytes).
    pub arrivals: f64,
    pub x_avg: f64,
}

#[derive(Clone, Debug)]
pub struct Rem {
    pub p: RemParams,
    pub s: RemState,
}

impl Rem {
    pub fn new(p: RemParams) -> Self {
        Rem {
            p,
            s: RemState::default(),
        }
    }

    fn scaled_prob(&self, size: u32) -> f64 {
        if self.p.byte_mode {
            (self.s.prob * size as f64 / self.p.mean_pkt_size as f64).min(1.0)
        } else {
            self.s.prob
        }
    }

    #[inline]
    pub fn on_enqueue(
        &mut self,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        self.s.arrivals += if self.p.byte_mode {
            pkt.size as f64
        } else {
            1.0
        };
        if q.packets >= self.p.limit {
            return Verdict::Drop(DropCause::Overflow);
        }
        let at_enqueue = !self.p.mark || self.p.mark_policy == RemMarkPolicy::Altq;
        if at_enqueue {
            let p = self.scaled_prob(pkt.size);
            if p > 0.0 && rng.uniform() < p {
                return if self.p.mark && pkt.ecn.is_ect() {
                    Verdict::Mark
                } else {
                    Verdict::Drop(DropCause::Early)
                };
            }
        }
        Verdict::Pass
    }

    #[inline]
    pub fn on_dequeue(&mut self, pkt: &Packet, rng: &mut impl UniformSource) -> Verdict {
        if self.p.mark && self.p.mark_policy == RemMarkPolicy::Ns2 && pkt.ecn.is_ect() {
            let p = self.scaled_prob(pkt.size);
            if p > 0.0 && rng.uniform() < p {
                return Verdict::Mark;
            }
        }
        Verdict::Pass
    }

    /// The controller's state for the statistics (`price`, and `prob` = 1 − φ^−price). REM
    /// has no Linux qdisc, hence no tc counterpart.
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        super::json_map(serde_json::json!({ "price": self.s.price, "prob": self.s.prob }))
    }

    pub fn on_tick(&mut self, q: QueueLen) {
        let m = self.p.mean_pkt_size as f64;
        let (x, b) = if self.p.byte_mode {
            (self.s.arrivals / m, q.bytes as f64 / m)
        } else {
            (self.s.arrivals, q.packets as f64)
        };
        self.s.x_avg = self.p.w_in * x + (1.0 - self.p.w_in) * self.s.x_avg;
        let d = self.s.x_avg + self.p.alpha * (b - self.p.b_ref) - self.p.c;
        self.s.price = (self.s.price + self.p.gamma * d).max(0.0);
        self.s.prob = 1.0 - self.p.phi.powf(-self.s.price);
        self.s.arrivals = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::{Rng, StreamKind};
    use crate::units::MS;

    fn rem(mark: bool) -> Rem {
        // 10 Mb/s, 1000-byte packets, 2 ms: c = 0.002·10e6/8000 = 2.5 packets per interval.
        Rem::new(RemParams {
            gamma: 0.001,
            phi: 1.001,
            alpha: 0.1,
            b_ref: 20.0,
            interval: 2 * MS,
            w_in: 1.0,
            c: 2.5,
            mean_pkt_size: 1000,
            byte_mode: false,
            mark,
            mark_policy: RemMarkPolicy::Ns2,
            limit: 100,
        })
    }

    /// A 1000-byte ECT(0) packet and a 1000-byte non-ECT one.
    fn ect_and_not() -> (Packet, Packet) {
        let ect = Packet {
            ecn: Ecn::Ect0,
            size: 1000,
            ..Default::default()
        };
        let non = Packet {
            size: 1000,
            ..Default::default()
        };
        (ect, non)
    }

    fn q(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 1000,
        }
    }

    #[test]
    fn price_and_probability_trajectory() {
        let mut r = rem(false);
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let pk = Packet {
            size: 1000,
            ..Default::default()
        };
        // Interval 1: 5 arrivals, queue 30 → price = 0.001·(5 + 0.1·10 − 2.5) = 0.0035.
        // Interval 2: 2 arrivals, queue 10 → price += 0.001·(2 − 1 − 2.5) → 0.002.
        // Interval 3: 0 arrivals, queue 0 → 0.002 + 0.001·(0 − 2 − 2.5) < 0 → 0.
        let plan = [(5, 30u32, 0.0035), (2, 10, 0.002), (0, 0, 0.0)];
        for (n, b, price) in plan {
            for _ in 0..n {
                r.on_enqueue(&pk, q(0), &mut g);
            }
            r.on_tick(q(b));
            assert!(
                (r.s.price - price).abs() < 1e-15,
                "{} vs {price}",
                r.s.price
            );
            let prob = 1.0 - 1.001f64.powf(-price);
            assert!((r.s.prob - prob).abs() < 1e-15);
            assert_eq!(r.s.arrivals, 0.0);
        }
        // prob for price 0.0035: 1 − 1.001^−0.0035 ≈ 3.4983e-6.
        let mut r = rem(false);
        r.s.arrivals = 5.0;
        r.on_tick(q(30));
        assert!((r.s.prob - 3.4983e-6).abs() < 1e-9);
    }

    #[test]
    fn smoothed_input_rate() {
        let mut r = rem(false);
        r.p.w_in = 0.5;
        r.s.arrivals = 4.0;
        r.on_tick(q(20)); // x̄ = 2 → price = 0.001·(2 − 2.5) → clipped 0
        assert_eq!(r.s.price, 0.0);
        r.s.arrivals = 8.0;
        r.on_tick(q(20)); // x̄ = 0.5·8 + 0.5·2 = 5 → price = 0.001·2.5
        assert!((r.s.price - 0.0025).abs() < 1e-15);
    }

    #[test]
    fn drop_mode_drops_at_enqueue_mark_mode_marks_ect_at_dequeue() {
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let (ect, non) = ect_and_not();
        let mut d = rem(false);
        d.s.prob = 1.0;
        assert_eq!(
            d.on_enqueue(&ect, q(5), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(d.on_dequeue(&ect, &mut g), Verdict::Pass);
        let mut m = rem(true);
        m.s.prob = 1.0;
        assert_eq!(m.on_enqueue(&ect, q(5), &mut g), Verdict::Pass);
        assert_eq!(m.on_enqueue(&non, q(5), &mut g), Verdict::Pass);
        assert_eq!(m.on_dequeue(&ect, &mut g), Verdict::Mark);
        assert_eq!(m.on_dequeue(&non, &mut g), Verdict::Pass);
        assert_eq!(
            m.on_enqueue(&non, q(100), &mut g),
            Verdict::Drop(DropCause::Overflow)
        );
    }

    #[test]
    fn byte_mode_scales_queue_arrivals_and_probability() {
        let mut r = rem(false);
        r.p.byte_mode = true;
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let small = Packet {
            size: 500,
            ..Default::default()
        };
        for _ in 0..10 {
            r.on_enqueue(&small, q(0), &mut g);
        }
        // x = 5000/1000 = 5, b = 30 000/1000 = 30: same as packet mode's first step.
        r.on_tick(q(30));
        assert!((r.s.price - 0.0035).abs() < 1e-15);
        r.s.prob = 0.5;
        assert!((r.scaled_prob(500) - 0.25).abs() < 1e-15);
        assert!((r.scaled_prob(4000) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn altq_policy_decides_at_enqueue_and_drops_what_cannot_be_marked() {
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let (ect, non) = ect_and_not();
        let mut a = rem(true);
        a.p.mark_policy = RemMarkPolicy::Altq;
        a.s.prob = 1.0;
        assert_eq!(a.on_enqueue(&ect, q(5), &mut g), Verdict::Mark);
        assert_eq!(
            a.on_enqueue(&non, q(5), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // Nothing more happens at dequeue.
        assert_eq!(a.on_dequeue(&ect, &mut g), Verdict::Pass);
        assert_eq!(a.on_dequeue(&non, &mut g), Verdict::Pass);
        // At probability 0 nothing is signalled either way.
        a.s.prob = 0.0;
        assert_eq!(a.on_enqueue(&non, q(5), &mut g), Verdict::Pass);
    }
}
