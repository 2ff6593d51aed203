//! PIE, Proportional Integral controller Enhanced (RFC 8033).
//!
//! Every `t_update` (15 ms), with `d` the current queueing-delay estimate and `d_old` the
//! previous one (seconds):
//!
//! 1. `Δ = α·(d − target) + β·(d − d_old)` (α = 0.125/s, β = 1.25/s);
//! 2. auto-tuning by the current `p`: Δ /= 2048, 512, 128, 32, 8, 2 when `p` is below
//!    1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1 respectively;
//! 3. cap: if `p ≥ 0.1` and `Δ > 0.02`, `Δ = 0.02`;
//! 4. `p ← p + Δ`; if `d == 0` and `d_old == 0`, `p ← 0.98·p`; clip to [0, 1];
//! 5. burst allowance: `burst ← max(0, burst − t_update)`; if `p == 0`, `d < target/2` and
//!    `d_old < target/2`, `burst ← max_burst`; then `d_old ← d`.
//!
//! Per arrival: tail drop if the buffer is full; accept while `burst > 0`; accept if
//! `d_old < target/2` and `p < 0.2`; accept if at most 2 mean packets are queued (bytes);
//! otherwise drop with `p` (byte mode: `p·size/mtu`). De-randomisation (optional):
//! `acc ← acc + p` (reset when `p == 0`); accept if `acc < 0.85`, drop if `acc ≥ 8.5`, else
//! drop with `p`; `acc ← 0` after a drop. ECN: an ECT packet selected while `p ≤ ecn_max_p`
//! (0.1) is marked instead.
//!
//! Delay estimate:
//! * departure rate (RFC 8033 §5.3): a measurement cycle starts at a departure that finds at
//!   least `dq_threshold` (16 KiB) queued; departed bytes are counted until `dq_threshold`,
//!   then `avg_dq_time ← 0.25·dq_time + 0.75·avg_dq_time` (first sample as is) and
//!   `d = queue_bytes·avg_dq_time/dq_threshold` at each update;
//! * timestamps: `d` = sojourn time of the last departed packet, 0 once the queue is empty.
//!
//! Sources: RFC 8033 (through FreeBSD `dn_aqm_pie.c`, Linux `pie.h`/`sch_pie.c`, DPDK
//! `rte_pie.h`). Linux's +2 % above 250 ms is not included. See docs/queues.md.

use super::{DropCause, QueueCounts, QueueLen, Verdict};
use crate::packet::Packet;
use crate::rng::UniformSource;
use crate::units::{as_secs, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PieEstimator {
    DepartureRate,
    Timestamp,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PieParams {
    pub target: Time,
    pub t_update: Time,
    /// Gains in 1/s.
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Time,
    pub dq_threshold: u64,
    pub estimator: PieEstimator,
    pub derandomize: bool,
    pub ecn: bool,
    pub ecn_max_p: f64,
    pub byte_mode: bool,
    pub mtu: u32,
    /// Bytes; the "≤ 2 packets queued" safeguard uses 2·mean_pkt_size.
    pub mean_pkt_size: u32,
    /// Buffer in packets.
    pub limit: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PieState {
    pub p: f64,
    /// Seconds.
    pub qdelay: f64,
    pub qdelay_old: f64,
    pub burst_allowance: Time,
    pub accu_prob: f64,
    // departure-rate estimation
    pub in_measurement: bool,
    pub dq_count: u64,
    pub measurement_start: Time,
    /// Seconds to drain `dq_threshold` bytes (EWMA); 0 = no sample yet.
    pub avg_dq_time: f64,
    /// Last sojourn time seen at dequeue (timestamp estimator), seconds.
    pub last_sojourn: f64,
}

#[derive(Clone, Debug)]
pub struct Pie {
    pub p: PieParams,
    pub s: PieState,
}

impl Pie {
    pub fn new(p: PieParams) -> Self {
        let s = PieState {
            burst_allowance: p.max_burst,
            ..Default::default()
        };
        Pie { p, s }
    }

    fn target_s(&self) -> f64 {
        as_secs(self.p.target)
    }

    #[inline]
    pub fn on_enqueue(
        &mut self,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        if q.packets >= self.p.limit {
            self.s.accu_prob = 0.0;
            return Verdict::Drop(DropCause::Overflow);
        }
        if self.s.burst_allowance > 0 {
            return Verdict::Pass;
        }
        if self.s.qdelay_old < self.target_s() / 2.0 && self.s.p < 0.2 {
            return Verdict::Pass;
        }
        if q.bytes <= 2 * self.p.mean_pkt_size as u64 {
            return Verdict::Pass;
        }
        let p = if self.p.byte_mode {
            (self.s.p * pkt.size as f64 / self.p.mtu as f64).min(1.0)
        } else {
            self.s.p
        };
        let drop = if self.p.derandomize {
            if self.s.p == 0.0 {
                self.s.accu_prob = 0.0;
            }
            self.s.accu_prob += p;
            if self.s.accu_prob < 0.85 {
                false
            } else if self.s.accu_prob >= 8.5 {
                true
            } else {
                rng.uniform() < p
            }
        } else {
            rng.uniform() < p
        };
        if !drop {
            return Verdict::Pass;
        }
        self.s.accu_prob = 0.0;
        if self.p.ecn && pkt.ecn.is_ect() && self.s.p <= self.p.ecn_max_p {
            Verdict::Mark
        } else {
            Verdict::Drop(DropCause::Early)
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, now: Time, pkt: &Packet, q_after: QueueLen) -> Verdict {
        match self.p.estimator {
            PieEstimator::Timestamp => {
                self.s.last_sojourn = as_secs(now.saturating_sub(pkt.enqueued_at));
            },
            PieEstimator::DepartureRate => {
                let before = q_after.bytes + pkt.size as u64;
                if !self.s.in_measurement && before >= self.p.dq_threshold {
                    self.s.in_measurement = true;
                    self.s.dq_count = 0;
                    self.s.measurement_start = now;
                }
                if self.s.in_measurement {
                    self.s.dq_count += pkt.size as u64;
                    if self.s.dq_count >= self.p.dq_threshold {
                        let dq_time = as_secs(now - self.s.measurement_start);
                        self.s.avg_dq_time = if self.s.avg_dq_time == 0.0 {
                            dq_time
                        } else {
                            0.25 * dq_time + 0.75 * self.s.avg_dq_time
                        };
                        self.s.in_measurement = false;
                    }
                }
            },
        }
        Verdict::Pass
    }

    pub fn on_idle(&mut self) {
        self.s.last_sojourn = 0.0;
    }

    /// tc's pie xstats (Linux `pie_dump_stats`, iproute2 `pie_print_xstats`): `prob`, `delay`
    /// (the estimate of the last update, µs), `avg_dq_rate` (bytes/s, with the departure-rate
    /// estimator only), `pkts_in` (accepted), `overlimit` (tail drops), `dropped` (every
    /// drop, tail drops included), `maxq` (the most packets found queued by an accepted
    /// arrival), `ecn_mark`.
    pub fn qdisc_stats(&self, c: &QueueCounts) -> serde_json::Map<String, serde_json::Value> {
        let mut m = super::json_map(serde_json::json!({
            "prob": self.s.p,
            "delay": (self.s.qdelay * 1e6).round() as u64,
        }));
        if self.p.estimator == PieEstimator::DepartureRate {
            let rate = if self.s.avg_dq_time > 0.0 {
                (self.p.dq_threshold as f64 / self.s.avg_dq_time).round() as u64
            } else {
                0
            };
            m.insert("avg_dq_rate".into(), rate.into());
        }
        let more = serde_json::json!({
            "pkts_in": c.arrivals - c.drops(),
            "overlimit": c.drops_overflow,
            "dropped": c.drops(),
            "maxq": c.peak_packets.saturating_sub(1),
            "ecn_mark": c.marks,
        });
        m.extend(super::json_map(more));
        m
    }

    fn current_qdelay(&self, q: QueueLen) -> f64 {
        match self.p.estimator {
            PieEstimator::Timestamp => {
                if q.packets == 0 {
                    0.0
                } else {
                    self.s.last_sojourn
                }
            },
            PieEstimator::DepartureRate => {
                if self.s.avg_dq_time > 0.0 {
                    q.bytes as f64 * self.s.avg_dq_time / self.p.dq_threshold as f64
                } else {
                    0.0
                }
            },
        }
    }

    pub fn on_tick(&mut self, q: QueueLen) {
        let d = self.current_qdelay(q);
        let target = self.target_s();
        let s = &mut self.s;
        let mut delta = self.p.alpha * (d - target) + self.p.beta * (d - s.qdelay_old);
        let scale = if s.p < 1e-6 {
            2048.0
        } else if s.p < 1e-5 {
            512.0
        } else if s.p < 1e-4 {
            128.0
        } else if s.p < 1e-3 {
            32.0
        } else if s.p < 1e-2 {
            8.0
        } else if s.p < 1e-1 {
            2.0
        } else {
            1.0
        };
        delta /= scale;
        if s.p >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        s.p += delta;
        if d == 0.0 && s.qdelay_old == 0.0 {
            s.p *= 0.98;
        }
        s.p = s.p.clamp(0.0, 1.0);
        s.burst_allowance = s.burst_allowance.saturating_sub(self.p.t_update);
        if s.p == 0.0 && d < target / 2.0 && s.qdelay_old < target / 2.0 {
            s.burst_allowance = self.p.max_burst;
        }
        s.qdelay = d;
        s.qdelay_old = d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::{Rng, StreamKind};
    use crate::units::MS;

    fn pie(est: PieEstimator) -> Pie {
        Pie::new(PieParams {
            target: 15 * MS,
            t_update: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150 * MS,
            dq_threshold: 16384,
            estimator: est,
            derandomize: false,
            ecn: true,
            ecn_max_p: 0.1,
            byte_mode: false,
            mtu: 1500,
            mean_pkt_size: 1000,
            limit: 1000,
        })
    }

    fn q(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 1000,
        }
    }

    /// Runs one update with a timestamp-estimated delay of `d` seconds.
    fn step(c: &mut Pie, d: f64) {
        c.s.last_sojourn = d;
        c.on_tick(q(if d > 0.0 { 50 } else { 0 }));
    }

    #[test]
    fn probability_updates_with_autotuning_and_cap() {
        let mut c = pie(PieEstimator::Timestamp);
        // 1) d = 40 ms, d_old = 0, p = 0: Δ = 0.125·0.025 + 1.25·0.04 = 0.053125; p < 1e-6 →
        //    /2048 → p = 2.5940e-5.
        step(&mut c, 0.040);
        let p1 = 0.053125 / 2048.0;
        assert!((c.s.p - p1).abs() < 1e-15, "{}", c.s.p);
        // 2) d = 40 ms again: Δ = 0.125·0.025 = 0.003125; 1e-5 ≤ p < 1e-4 → /128.
        step(&mut c, 0.040);
        let p2 = p1 + 0.003125 / 128.0;
        assert!((c.s.p - p2).abs() < 1e-15);
        // 3) p = 0.15, d = 200 ms, d_old = 40 ms: Δ = 0.125·0.185 + 1.25·0.16 = 0.223125,
        //    no scaling (p ≥ 0.1), capped to 0.02 → 0.17.
        c.s.p = 0.15;
        step(&mut c, 0.200);
        assert!((c.s.p - 0.17).abs() < 1e-15);
        // 4) Decay: d = d_old = 0 with p = 0.17: Δ = −0.125·0.015 = −0.001875 → p = 0.168125,
        //    then ×0.98.
        c.s.qdelay_old = 0.0;
        step(&mut c, 0.0);
        assert!((c.s.p - 0.168125 * 0.98).abs() < 1e-15);
    }

    #[test]
    fn burst_allowance_counts_down_and_rearms() {
        let mut c = pie(PieEstimator::Timestamp);
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let pk = Packet {
            size: 1000,
            ..Default::default()
        };
        assert_eq!(c.s.burst_allowance, 150 * MS);
        // Even with p = 1 arrivals pass while the allowance lasts.
        c.s.p = 1.0;
        c.s.qdelay_old = 1.0;
        assert_eq!(c.on_enqueue(&pk, q(100), &mut g), Verdict::Pass);
        // Ten updates with a large delay use it up (150 ms / 15 ms).
        for k in 1..=10u64 {
            step(&mut c, 0.5);
            assert_eq!(c.s.burst_allowance, (150 - 15 * k) * MS);
        }
        c.s.p = 1.0;
        assert_eq!(
            c.on_enqueue(&pk, q(100), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // Safeguard: at most 2 mean packets queued → accept.
        assert_eq!(c.on_enqueue(&pk, q(2), &mut g), Verdict::Pass);
        // Re-arm: p back to 0 and two consecutive delays below 7.5 ms.
        c.s.p = 0.0;
        step(&mut c, 0.001); // d_old was 0.5 → no re-arm
        assert_eq!(c.s.burst_allowance, 0);
        c.s.p = 0.0;
        step(&mut c, 0.001);
        assert_eq!(c.s.p, 0.0); // Δ < 0 clipped
        assert_eq!(c.s.burst_allowance, 150 * MS);
    }

    #[test]
    fn ecn_and_low_delay_safeguard() {
        let mut c = pie(PieEstimator::Timestamp);
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        c.s.burst_allowance = 0;
        let ect = Packet {
            size: 1000,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        // d_old < 7.5 ms and p < 0.2 → accept.
        c.s.p = 0.1;
        c.s.qdelay_old = 0.005;
        assert_eq!(c.on_enqueue(&ect, q(100), &mut g), Verdict::Pass);
        c.s.qdelay_old = 0.05;
        c.s.p = 1.0;
        // p > 0.1: ECT dropped.
        assert_eq!(
            c.on_enqueue(&ect, q(100), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        // p ≤ 0.1: would-be drops of ECT packets are marks (p = 0.1: some arrivals marked).
        c.s.p = 0.1;
        let marks = (0..1000)
            .filter(|_| c.on_enqueue(&ect, q(100), &mut g) == Verdict::Mark)
            .count();
        assert!((50..150).contains(&marks), "{marks}");
    }

    #[test]
    fn derandomization_bounds() {
        let mut c = pie(PieEstimator::Timestamp);
        c.p.derandomize = true;
        c.s.burst_allowance = 0;
        c.s.qdelay_old = 0.1;
        c.s.p = 0.3;
        let mut g = Rng::stream(0, StreamKind::Test, 0);
        let pk = Packet {
            size: 1000,
            ..Default::default()
        };
        // acc: 0.3, 0.6 → accept (< 0.85) for the first two arrivals.
        assert_eq!(c.on_enqueue(&pk, q(100), &mut g), Verdict::Pass);
        assert_eq!(c.on_enqueue(&pk, q(100), &mut g), Verdict::Pass);
        // With p = 1 (clipped), acc jumps past 8.5 eventually: at most 9 passes in a row.
        c.s.p = 1.0;
        c.s.accu_prob = 8.0;
        assert_eq!(
            c.on_enqueue(&pk, q(100), &mut g),
            Verdict::Drop(DropCause::Early)
        );
        assert_eq!(c.s.accu_prob, 0.0);
    }

    #[test]
    fn departure_rate_estimate() {
        let mut c = pie(PieEstimator::DepartureRate);
        // 20 packets of 1000 B queued; departures every 1 ms (8 Mb/s).
        let pk = Packet {
            size: 1000,
            ..Default::default()
        };
        let mut t = 0;
        let mut n = 20u32;
        // Cycle starts at the first departure (20 000 ≥ 16 384 queued); 17 departures later the
        // count reaches 17 000 ≥ 16 384 at t = 16 ms: dq_time = 16 ms.
        for _ in 0..17 {
            n -= 1;
            c.on_dequeue(t, &pk, q(n));
            t += MS;
        }
        assert!((c.s.avg_dq_time - 0.016).abs() < 1e-12);
        assert!(!c.s.in_measurement);
        // With 3 packets (3000 B) left: d = 3000·0.016/16384.
        c.on_tick(q(3));
        assert!((c.s.qdelay - 3000.0 * 0.016 / 16384.0).abs() < 1e-15);
    }
}
