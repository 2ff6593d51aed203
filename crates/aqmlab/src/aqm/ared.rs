//! Adaptive RED (Floyd, Gummadi, Shenker 2001): RED whose `max_p` follows the average queue.
//!
//! With the target band `[min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)]`,
//! every `interval` (0.5 s):
//!
//! * `avg` above the band and `max_p` below `top` (0.5): `max_p ← max_p + min(α, max_p/4)`
//!   (α = 0.01; additive increase);
//! * `avg` below the band and `max_p` above `bottom` (0.01): `max_p ← β·max_p` (β = 0.9;
//!   multiplicative decrease).
//!
//! Automatic configuration: `min_th = max(5, delay_target·C/2)` packets, `max_th = 3·min_th`,
//! `w_q = 1 − exp(−1/C)`, gentle on (`config.rs` applies it). The RED part is `red.rs`.
//!
//! Two behaviours, selected by `AredMode`:
//!
//! * `Ns2` (ns-2.35 `updateMaxP`): event-driven. On each arrival, after the average is
//!   updated, the rule runs if `now > last_change + interval`; `last_change` moves only when
//!   `max_p` changes, so while `avg` is in the band the test repeats on every arrival, and
//!   nothing happens while the queue is idle. Guards are strict (`max_p > bottom`,
//!   `max_p < top`), `bottom = min(0.01, 80000/link_bps)` by default, and the gentle line keeps
//!   the initial `max_p` (ns-2 captures it once), so `p_b` jumps at `max_th`.
//! * `Timer` (the paper and Linux `red_adaptative_algo`): the rule runs from a clock every
//!   `interval`, on the average decayed for any idle time; guards are `max_p ≤ top` for an
//!   increase and `max_p ≥ bottom` for a decrease; the gentle line follows the live `max_p`.
//!
//! Sources: ARED paper (2001) as restated in Linux `include/net/red.h`; ns-2.35
//! `queue/red.cc`. See docs/queues.md.

use super::red_params::{RedParams, RedState};
use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AredMode {
    Ns2,
    Timer,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AredParams {
    pub mode: AredMode,
    pub interval: Time,
    /// Additive step cap (`min(alpha, max_p/4)` is added).
    pub alpha: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    pub top: f64,
    pub bottom: f64,
}

#[derive(Clone, Debug)]
pub struct Ared {
    pub p: AredParams,
    /// Time of the last change of max_p (ns-2 `lastset`).
    pub last_change: Time,
    /// Number of increases and decreases so far.
    pub increases: u64,
    pub decreases: u64,
}

impl Ared {
    pub fn new(p: AredParams) -> Self {
        Ared {
            p,
            last_change: 0,
            increases: 0,
            decreases: 0,
        }
    }

    pub fn tick_period(&self) -> Option<Time> {
        match self.p.mode {
            AredMode::Ns2 => None,
            AredMode::Timer => Some(self.p.interval),
        }
    }

    /// The AIMD rule; returns true when max_p changed.
    pub fn update_max_p(&mut self, now: Time, avg: f64, rp: &RedParams, s: &mut RedState) -> bool {
        let part = 0.4 * (rp.max_th - rp.min_th);
        let low = rp.min_th + part;
        let high = rp.max_th - part;
        let (can_up, can_down) = match self.p.mode {
            AredMode::Ns2 => (s.max_p < self.p.top, s.max_p > self.p.bottom),
            AredMode::Timer => (s.max_p <= self.p.top, s.max_p >= self.p.bottom),
        };
        let changed = if avg > high && can_up {
            s.max_p += self.p.alpha.min(s.max_p / 4.0);
            self.increases += 1;
            true
        } else if avg < low && can_down {
            s.max_p *= self.p.beta;
            self.decreases += 1;
            true
        } else {
            false
        };
        if changed {
            self.last_change = now;
            if self.p.mode == AredMode::Timer {
                s.gentle_max_p = s.max_p;
            }
        }
        changed
    }

    /// Called by RED on each arrival after the average was updated.
    #[inline]
    pub fn on_arrival(&mut self, now: Time, avg: f64, rp: &RedParams, s: &mut RedState) {
        if self.p.mode == AredMode::Ns2 && now > self.last_change + self.p.interval {
            self.update_max_p(now, avg, rp, s);
        }
    }

    pub fn on_tick(&mut self, now: Time, avg: f64, rp: &RedParams, s: &mut RedState) {
        if self.p.mode == AredMode::Timer {
            self.update_max_p(now, avg, rp, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::red::{EcnPolicy, Red};
    use crate::aqm::QueueLen;
    use crate::packet::Packet;
    use crate::rng::{Rng, StreamKind};
    use crate::units::{MS, SEC};

    fn red(mode: AredMode) -> Red {
        let rp = RedParams {
            min_th: 10.0,
            max_th: 30.0,
            max_p: 0.1,
            w_q: 1.0,
            gentle: true,
            wait: true,
            queue_in_bytes: false,
            byte_mode: false,
            mean_pkt_size: 500,
            limit: 1000,
            ptc: 2500.0,
            ecn: EcnPolicy::Off,
            mark_p: 0.1,
        };
        let ap = AredParams {
            mode,
            interval: SEC / 2,
            alpha: 0.01,
            beta: 0.9,
            top: 0.5,
            bottom: 0.01,
        };
        Red::new("ared", rp, Some(Ared::new(ap)))
    }

    fn q(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: n as u64 * 500,
        }
    }

    #[test]
    fn timer_mode_aimd_steps() {
        // Band: [10 + 8, 30 − 8] = [18, 22].
        let mut r = red(AredMode::Timer);
        let mut g = Rng::stream(1, StreamKind::Test, 0);
        let pk = Packet::default();
        // avg = 25 (w_q = 1, q = 25): above the band → +min(0.01, 0.1/4) = 0.11.
        r.on_enqueue(0, &pk, q(25), &mut g);
        r.on_tick(SEC / 2);
        assert!((r.s.max_p - 0.11).abs() < 1e-15);
        r.on_tick(SEC);
        assert!((r.s.max_p - 0.12).abs() < 1e-15);
        // In the band: no change.
        r.on_enqueue(SEC + 1, &pk, q(20), &mut g);
        r.on_tick(3 * SEC / 2);
        assert!((r.s.max_p - 0.12).abs() < 1e-15);
        // Below: × 0.9.
        r.on_enqueue(3 * SEC / 2 + 1, &pk, q(12), &mut g);
        r.on_tick(2 * SEC);
        assert!((r.s.max_p - 0.108).abs() < 1e-15);
        // Gentle line follows max_p in timer mode: p_b(max_th) = max_p.
        assert!((r.p_b(30.0) - 0.108).abs() < 1e-12);
        // Small max_p: step is max_p/4 (0.02 → 0.025).
        r.s.max_p = 0.02;
        r.on_enqueue(2 * SEC + 1, &pk, q(25), &mut g);
        r.on_tick(5 * SEC / 2);
        assert!((r.s.max_p - 0.025).abs() < 1e-15);
        // Guard: at 0.5 an increase is still allowed (≤ top), overshooting to 0.51; then no more.
        r.s.max_p = 0.5;
        r.on_tick(3 * SEC);
        assert!((r.s.max_p - 0.51).abs() < 1e-15);
        r.on_tick(7 * SEC / 2);
        assert!((r.s.max_p - 0.51).abs() < 1e-15);
    }

    #[test]
    fn ns2_mode_is_event_driven() {
        let mut r = red(AredMode::Ns2);
        let mut g = Rng::stream(1, StreamKind::Test, 0);
        let pk = Packet::default();
        assert_eq!(r.tick_period(), None);
        // Arrivals with avg = 25 (above the band) until 0.5 s: no change (now ≤ 0 + 0.5 s).
        r.on_enqueue(100 * MS, &pk, q(25), &mut g);
        r.on_enqueue(SEC / 2, &pk, q(25), &mut g);
        assert_eq!(r.s.max_p, 0.1);
        // First arrival after 0.5 s: increase to 0.11, last_change = that time.
        let t1 = SEC / 2 + 1;
        r.on_enqueue(t1, &pk, q(25), &mut g);
        assert!((r.s.max_p - 0.11).abs() < 1e-15);
        assert_eq!(r.adaptive.as_ref().unwrap().last_change, t1);
        // In the band at 1.2 s: no change and last_change stays, so an arrival below the band
        // at 1.2 s + 1 ns updates at once (not on a 0.5 s grid).
        r.on_enqueue(1200 * MS, &pk, q(20), &mut g);
        assert!((r.s.max_p - 0.11).abs() < 1e-15);
        r.on_enqueue(1200 * MS + 1, &pk, q(12), &mut g);
        assert!((r.s.max_p - 0.099).abs() < 1e-15);
        // Gentle line keeps the initial max_p (0.1) in ns-2 mode.
        assert!((r.p_b(30.0) - 0.1).abs() < 1e-12);
    }
}
