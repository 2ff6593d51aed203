//! PI controller AQM (Hollot, Misra, Towsley, Gong, INFOCOM 2001), as in ns-2.35 `queue/pi.cc`.
//!
//! Every `T = 1/f_s` seconds, with `q` the current queue (packets, or bytes/mean_pkt_size when
//! the queue is measured in bytes) and `q_old` the previous sample:
//!
//! `p ← clip₀¹( p + a·(q − q_ref) − b·(q_old − q_ref) )`, then `q_old ← q`.
//!
//! An arrival is dropped (or, with ECN, an ECT arrival is marked) with probability `p`
//! (byte mode: `p·size/mean_pkt_size`, clipped to 1). An arrival finding `q ≥ limit` is
//! dropped (overflow). No averaging, no count correction, no anti-windup beyond the clip.
//!
//! Design (`design`): the recursion is the Tustin discretisation of
//! `C(s) = K·(s/z + 1)/s`, so `a = K·(1/z + T/2)`, `b = K·(1/z − T/2)`. From the linearised
//! TCP/queue model with capacity `C` (packets/s), at least `N⁻` flows and round-trip at most
//! `R⁺`: `z = 2N⁻/(R⁺²·C)` (cancels the TCP window pole) and, for a unity-gain crossover at
//! `ω_g`, `K = ω_g·√((ω_g·R⁺)² + 1)·(2N⁻)²/(R⁺·C)³`.
//!
//! Sources: HMTG01; ns-2.35 `queue/pi.cc` and `ns-default.tcl` (a = 1.822e-5,
//! b = 1.816e-5, 170 Hz, q_ref = 50 packets). See docs/queues.md.

use super::{DropCause, QueueLen, Verdict};
use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::Time;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PiParams {
    pub a: f64,
    pub b: f64,
    /// Sampling period `1/f_s`.
    pub period: Time,
    /// Reference queue, in packets (of the mean size when the queue is in bytes).
    pub q_ref: f64,
    pub queue_in_bytes: bool,
    pub byte_mode: bool,
    pub mean_pkt_size: u32,
    /// Buffer, in the queue's unit (bytes = packets × mean_pkt_size when in bytes).
    pub limit: u64,
    pub ecn: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PiState {
    pub p: f64,
    /// Previous sample, in packets (mean-size packets in byte mode).
    pub q_old: f64,
}

#[derive(Clone, Debug)]
pub struct Pi {
    pub p: PiParams,
    pub s: PiState,
}

/// `(a, b)` from the controller gain `k`, zero `z` (rad/s) and sampling period `t` (s).
pub fn tustin(k: f64, z: f64, t: f64) -> (f64, f64) {
    (k * (1.0 / z + t / 2.0), k * (1.0 / z - t / 2.0))
}

/// HMTG design: returns `(k, z)` for capacity `c` (packets/s), `n_min` flows, `r_max` (s) and
/// crossover `omega_g` (rad/s).
pub fn design(c: f64, n_min: f64, r_max: f64, omega_g: f64) -> (f64, f64) {
    let z = 2.0 * n_min / (r_max * r_max * c);
    let k = omega_g * ((omega_g * r_max).powi(2) + 1.0).sqrt() * (2.0 * n_min).powi(2)
        / (r_max * c).powi(3);
    (k, z)
}

impl Pi {
    pub fn new(p: PiParams) -> Self {
        Pi {
            p,
            s: PiState::default(),
        }
    }

    fn q_pkts(&self, q: QueueLen) -> f64 {
        if self.p.queue_in_bytes {
            q.bytes as f64 / self.p.mean_pkt_size as f64
        } else {
            q.packets as f64
        }
    }

    #[inline]
    pub fn on_enqueue(
        &mut self,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        let full = if self.p.queue_in_bytes {
            q.bytes >= self.p.limit
        } else {
            q.packets as u64 >= self.p.limit
        };
        if full {
            return Verdict::Drop(DropCause::Overflow);
        }
        let mut p = self.s.p;
        if self.p.byte_mode {
            p = (p * pkt.size as f64 / self.p.mean_pkt_size as f64).min(1.0);
        }
        if p > 0.0 && rng.uniform() < p {
            if self.p.ecn && pkt.ecn.is_ect() {
                Verdict::Mark
            } else {
                Verdict::Drop(DropCause::Early)
            }
        } else {
            Verdict::Pass
        }
    }

    /// The controller's state for the statistics (`prob`, the drop/mark probability). PI has
    /// no Linux qdisc, hence no tc counterpart: the name follows PIE's.
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        super::json_map(serde_json::json!({ "prob": self.s.p }))
    }

    pub fn on_tick(&mut self, q: QueueLen) {
        let qn = self.q_pkts(q);
        let r = self.p.q_ref;
        let p = self.p.a * (qn - r) - self.p.b * (self.s.q_old - r) + self.s.p;
        self.s.p = p.clamp(0.0, 1.0);
        self.s.q_old = qn;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::{Rng, StreamKind};
    use crate::units::SEC;

    fn pi(queue_in_bytes: bool) -> Pi {
        Pi::new(PiParams {
            a: 1.822e-5,
            b: 1.816e-5,
            period: SEC / 170,
            q_ref: 50.0,
            queue_in_bytes,
            byte_mode: false,
            mean_pkt_size: 500,
            limit: 300,
            ecn: true,
        })
    }

    fn q(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 500,
        }
    }

    #[test]
    fn probability_trajectory_follows_the_difference_equation() {
        let mut c = pi(false);
        // Samples 100, 120, 120, 30, 0 packets; expected by hand from
        // p_k = p_{k−1} + a(q_k − 50) − b(q_{k−1} − 50), q_0 = 0:
        let a = 1.822e-5;
        let b = 1.816e-5;
        let samples = [100.0, 120.0, 120.0, 30.0, 0.0];
        let mut p = 0.0f64;
        let mut q_old = 0.0;
        for &s in &samples {
            p = (p + a * (s - 50.0) - b * (q_old - 50.0)).clamp(0.0, 1.0);
            q_old = s;
            c.on_tick(q(s as u32));
            assert!((c.s.p - p).abs() < 1e-18, "{} vs {p}", c.s.p);
        }
        // Spot values: p_1 = a·50 + b·50 = 1.819e-3; p_2 = p_1 + a·70 − b·50 = 2.1864e-3.
        let mut c = pi(false);
        c.on_tick(q(100));
        assert!((c.s.p - 1.819e-3).abs() < 1e-15);
        c.on_tick(q(120));
        assert!((c.s.p - 2.1864e-3).abs() < 1e-15);
        // An empty queue drives p to 0 and the clip holds it there.
        for _ in 0..1000 {
            c.on_tick(q(0));
        }
        assert_eq!(c.s.p, 0.0);
    }

    #[test]
    fn bytes_mode_samples_in_mean_packets() {
        let mut c = pi(true);
        // 50 000 bytes = 100 packets of 500 B: same first step as packet mode.
        c.on_tick(QueueLen {
            packets: 7,
            bytes: 50_000,
        });
        assert!((c.s.p - 1.819e-3).abs() < 1e-15);
    }

    #[test]
    fn marks_ect_drops_non_ect_and_limit() {
        let mut c = pi(false);
        c.s.p = 1.0;
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let ect = Packet {
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        let non = Packet::default();
        assert_eq!(c.on_enqueue(&ect, q(10), &mut g), Verdict::Mark);
        assert_eq!(
            c.on_enqueue(&non, q(10), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(
            c.on_enqueue(&ect, q(300), &mut g),
            Verdict::Drop(DropCause::Overflow)
        );
        c.s.p = 0.0;
        assert_eq!(c.on_enqueue(&non, q(299), &mut g), Verdict::Pass);
    }

    #[test]
    fn design_reproduces_published_coefficients() {
        // HMTG example: K = 9.64e-6, z = 0.53 rad/s, 160 Hz → a = 1.822e-5, b = 1.816e-5.
        let (a, b) = tustin(9.64e-6, 0.53, 1.0 / 160.0);
        assert!(
            (a - 1.822e-5).abs() < 5e-9 && (b - 1.816e-5).abs() < 5e-9,
            "{a} {b}"
        );
        // a − b = K·T exactly.
        assert!((a - b - 9.64e-6 / 160.0).abs() < 1e-18);
        // Zero from the model: 2·60/(0.246²·3750) = 0.5288.
        let (k, z) = design(3750.0, 60.0, 0.246, 0.5);
        assert!((z - 0.52885).abs() < 1e-4, "{z}");
        // K(ω_g = 0.5) = 0.5·√(0.123² + 1)·120²/(922.5)³.
        let expect = 0.5 * (0.123f64.powi(2) + 1.0).sqrt() * 14400.0 / 922.5f64.powi(3);
        assert!((k - expect).abs() < 1e-15);
    }
}
