//! NADA, Network-Assisted Dynamic Adaptation (RFC 8698, Experimental, February 2020): the
//! congestion controller of `kind = "video_call"`. Its two halves as pure state machines:
//! `NadaReceiver` (RFC 8698 §4.2 and §5.1: what the receiver measures and reports) and
//! `NadaSender` (§4.3 and §5.2: the reference rate and the encoder and sending rates).
//!
//! Receiver, per media packet (§5.1.1): one-way delay `d_fwd`, base delay `d_base` its
//! minimum so far, queueing delay `d_queue = d_fwd − d_base` through a 15-tap minimum filter;
//! per feedback interval (§5.1.2, §5.1.3): loss and ECN-marking ratios over the last `LOGWIN`
//! exponentially smoothed with `ALPHA` (`p ← ALPHA · p_inst + (1 − ALPHA) · p`), the receiving
//! rate `r_recv` over `LOGWIN`; the aggregate congestion signal (§4.2)
//!
//! ```text
//! x_curr = d_tilde + DMARK · (p_mark / PMRREF)² + DLOSS · (p_loss / PLRREF)²
//! d_tilde = d_queue                                     if d_queue < QTH or no recent loss
//!         = QTH · exp(−LAMBDA · (d_queue − QTH) / QTH)  otherwise (non-linear warping)
//! ```
//!
//! and the rate-update mode (§4.2, end): accelerated ramp-up (`rmode = 0`) when the window
//! saw no loss, no mark, and every filtered queueing delay below `QEPS`; gradual otherwise.
//! The feedback (§5.3) carries `rmode`, `x_curr` and `r_recv`.
//!
//! Sender, per feedback (§4.3), with `delta` the time since the previous feedback:
//!
//! ```text
//! rmode = 0: gamma = min(GAMMA_MAX, QBOUND / (rtt + DELTA + DFILT))
//!            r_ref = max(r_ref, (1 + gamma) · r_recv)
//! rmode = 1: x_offset = x_curr − PRIO · XREF · RMAX / r_ref
//!            x_diff   = x_curr − x_prev
//!            r_ref    = r_ref − KAPPA · (delta / TAU) · (x_offset / TAU) · r_ref
//!                             − KAPPA · ETA · (x_diff / TAU) · r_ref
//! r_ref = min(RMAX, max(RMIN, r_ref))
//! ```
//!
//! and, from the rate-shaping buffer's length `L` bytes (§5.2.2, equations (11)-(14)): the
//! encoder's target `r_vin = max(RMIN, r_ref − min(0.05 · r_ref, BETA_V · 8 · L · FPS))` and
//! the sending rate `r_send = min(RMAX, r_ref + min(0.05 · r_ref, BETA_S · 8 · L · FPS))`.
//! (Equation numbers as RFC 8698 numbers them: (3), (4) the ramp-up, (5)-(7) the gradual
//! update, (11)-(14) the shaping-buffer rates; the draft versions had no 5 % cap.)
//!
//! Defaults: RFC 8698 §4.3's table (Figure 3), the same values as its authors' ns-3 model
//! (cisco/ns3-rmcat, model/congestion-control/nada-controller.cc and
//! model/apps/rmcat-constants.h). Simplifications (docs/workload.md): the loss-warping window
//! is `LOGWIN` (the RFC lets the last loss expire after `MULTILOSS` average loss intervals);
//! the first feedback only starts the clock (as ns3-rmcat's first feedback does).
//!
//! ECN and L4S: marks enter `x_curr` through `p_mark` (§4.2); RFC 8698 defines no other
//! reaction to marks, so the call's L4S mode is this rule with its packets sent as ECT(1),
//! which DualPI2 classifies into its L queue (RFC 9332 §2.3).

use crate::units::{Time, MS};

/// RFC 8698 Figure 3 (times in ms, rates in bits per second).
pub const PRIO: f64 = 1.0;
pub const XREF: f64 = 10.0;
pub const KAPPA: f64 = 0.5;
pub const ETA: f64 = 2.0;
pub const TAU: f64 = 500.0;
/// The target feedback interval: each call's `feedback_interval_ms`, whose default
/// (`config::video_call`) is this value (checked by a test).
#[cfg_attr(not(test), allow(dead_code))]
pub const DELTA: f64 = 100.0;
pub const LOGWIN: f64 = 500.0;
pub const QEPS: f64 = 10.0;
pub const DFILT: f64 = 120.0;
pub const GAMMA_MAX: f64 = 0.5;
pub const QBOUND: f64 = 50.0;
pub const QTH: f64 = 50.0;
pub const LAMBDA: f64 = 0.5;
pub const PLRREF: f64 = 0.01;
pub const PMRREF: f64 = 0.01;
pub const DLOSS: f64 = 10.0;
pub const DMARK: f64 = 2.0;
pub const BETA_S: f64 = 0.1;
pub const BETA_V: f64 = 0.1;
pub const ALPHA: f64 = 0.1;
/// The shaping buffer moves the encoder's and the sending rate at most this fraction of
/// `r_ref` away from it (RFC 8698 equations (11), (12)).
pub const SHAPING_CAP: f64 = 0.05;
/// Taps of the minimum filter on queueing-delay samples (§5.1.1).
pub const MIN_FILTER_TAPS: usize = 15;

/// What one feedback message carries (§5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    pub rmode: u8,
    /// Aggregate congestion signal, ms.
    pub x_curr: f64,
    /// Receiving rate over `LOGWIN`, bits per second.
    pub r_recv: f64,
    /// The receiver's filtered queueing delay and smoothed ratios (for the records).
    pub d_queue: f64,
    pub p_loss: f64,
    pub p_mark: f64,
}

/// One feedback interval's counts.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    received: u64,
    lost: u64,
    marked: u64,
    bytes: u64,
    /// Largest filtered queueing delay, ns.
    max_queue: Time,
}

/// The receiver's measurements (§5.1).
#[derive(Clone, Debug)]
pub struct NadaReceiver {
    base: Option<Time>,
    taps: [Time; MIN_FILTER_TAPS],
    n_taps: usize,
    /// The latest filtered queueing delay, ns.
    d_queue: Time,
    /// The last `LOGWIN / interval` intervals; the last is the current one.
    window: Vec<Bucket>,
    p_loss: f64,
    p_mark: f64,
    /// Feedback interval, ns.
    interval: Time,
}

impl NadaReceiver {
    pub fn new(interval: Time) -> Self {
        let n = ((LOGWIN * MS as f64 / interval as f64).round() as usize).max(1);
        NadaReceiver {
            base: None,
            taps: [0; MIN_FILTER_TAPS],
            n_taps: 0,
            d_queue: 0,
            window: vec![Bucket::default(); n],
            p_loss: 0.0,
            p_mark: 0.0,
            interval,
        }
    }

    /// A media packet of `bytes` sent at `sent` arrived at `now`, `ce` if marked, after
    /// `lost` packets were found missing before it.
    pub fn on_packet(&mut self, now: Time, sent: Time, bytes: u32, ce: bool, lost: u64) {
        let d_fwd = now - sent;
        let base = *self.base.get_or_insert(d_fwd);
        let base = base.min(d_fwd);
        self.base = Some(base);
        self.taps[self.n_taps % MIN_FILTER_TAPS] = d_fwd - base;
        self.n_taps += 1;
        let filled = self.n_taps.min(MIN_FILTER_TAPS);
        self.d_queue = *self.taps[..filled].iter().min().expect("one tap at least");
        let b = self.window.last_mut().expect("a window");
        b.received += 1;
        b.lost += lost;
        b.marked += ce as u64;
        b.bytes += bytes as u64;
        b.max_queue = b.max_queue.max(self.d_queue);
    }

    /// The feedback report at the end of an interval (§5.1, §5.3); starts the next interval.
    pub fn report(&mut self) -> Report {
        let sum = |f: fn(&Bucket) -> u64| self.window.iter().map(f).sum::<u64>();
        let (received, lost, marked, bytes) = (
            sum(|b| b.received),
            sum(|b| b.lost),
            sum(|b| b.marked),
            sum(|b| b.bytes),
        );
        let max_queue = self.window.iter().map(|b| b.max_queue).max().unwrap_or(0);
        // §5.1.2: instantaneous ratios over the window, exponentially smoothed.
        let total = received + lost;
        if total > 0 {
            self.p_loss = ALPHA * (lost as f64 / total as f64) + (1.0 - ALPHA) * self.p_loss;
        }
        if received > 0 {
            self.p_mark = ALPHA * (marked as f64 / received as f64) + (1.0 - ALPHA) * self.p_mark;
        }
        let ms = MS as f64;
        let d_queue = self.d_queue as f64 / ms;
        let x_curr = signal(d_queue, lost > 0, self.p_loss, self.p_mark);
        // §5.1.3: receiving rate over the window.
        let win_s = (self.window.len() as Time * self.interval) as f64 * 1e-9;
        let r_recv = bytes as f64 * 8.0 / win_s;
        let rmode = if lost == 0 && marked == 0 && (max_queue as f64 / ms) < QEPS {
            0
        } else {
            1
        };
        self.window.rotate_left(1);
        *self.window.last_mut().expect("a window") = Bucket::default();
        Report {
            rmode,
            x_curr,
            r_recv,
            d_queue,
            p_loss: self.p_loss,
            p_mark: self.p_mark,
        }
    }
}

/// The aggregate congestion signal `x_curr`, ms (§4.2), from the queueing delay (ms), whether
/// a loss was seen recently, and the smoothed loss and marking ratios.
pub fn signal(d_queue: f64, recent_loss: bool, p_loss: f64, p_mark: f64) -> f64 {
    let d_tilde = if recent_loss && d_queue >= QTH {
        QTH * (-LAMBDA * (d_queue - QTH) / QTH).exp()
    } else {
        d_queue
    };
    d_tilde + DMARK * (p_mark / PMRREF).powi(2) + DLOSS * (p_loss / PLRREF).powi(2)
}

/// The sender's reference rate (§4.3).
#[derive(Clone, Debug)]
pub struct NadaSender {
    pub rmin: f64,
    pub rmax: f64,
    pub r_ref: f64,
    /// The target feedback interval DELTA, ms.
    delta: f64,
    x_prev: f64,
    last: Option<Time>,
}

impl NadaSender {
    /// A sender between `rmin` and `rmax` (b/s) starting at `r_start`, with feedback every
    /// `delta_ms` (DELTA).
    pub fn new(rmin: f64, rmax: f64, r_start: f64, delta_ms: f64) -> Self {
        NadaSender {
            rmin,
            rmax,
            r_ref: r_start.clamp(rmin, rmax),
            delta: delta_ms,
            x_prev: 0.0,
            last: None,
        }
    }

    /// A feedback report arrived at `now`; `rtt` is the sender's latest RTT sample (ns).
    /// Returns the new reference rate.
    pub fn on_report(&mut self, now: Time, r: &Report, rtt: Time) -> f64 {
        let Some(last) = self.last.replace(now) else {
            self.x_prev = r.x_curr;
            return self.r_ref;
        };
        let delta = (now - last) as f64 / MS as f64;
        let rtt = rtt as f64 / MS as f64;
        if r.rmode == 0 {
            self.r_ref = accelerated(self.r_ref, r.r_recv, rtt, self.delta);
        } else {
            self.r_ref = gradual(self.r_ref, self.rmax, r.x_curr, self.x_prev, delta);
        }
        self.r_ref = self.r_ref.max(self.rmin).min(self.rmax);
        self.x_prev = r.x_curr;
        self.r_ref
    }

    /// The encoder's target and the sending rate for a rate-shaping buffer of `buffer_bytes`
    /// at `fps` frames per second (§5.2.2, equations (11)-(14)).
    pub fn rates(&self, buffer_bytes: u64, fps: f64) -> (f64, f64) {
        let b = 8.0 * buffer_bytes as f64 * fps;
        let cap = SHAPING_CAP * self.r_ref;
        let (r_diff_v, r_diff_s) = ((BETA_V * b).min(cap), (BETA_S * b).min(cap));
        (
            (self.r_ref - r_diff_v).max(self.rmin),
            (self.r_ref + r_diff_s).min(self.rmax),
        )
    }
}

/// Accelerated ramp-up (§4.3, equations (3), (4)): `r_ref = max(r_ref, (1 + gamma) · r_recv)`,
/// rtt and the feedback interval `delta` (DELTA) in ms.
pub fn accelerated(r_ref: f64, r_recv: f64, rtt: f64, delta: f64) -> f64 {
    let gamma = (QBOUND / (rtt + delta + DFILT)).min(GAMMA_MAX);
    r_ref.max((1.0 + gamma) * r_recv)
}

/// Gradual update (§4.3, equations (5)-(7)), times in ms.
pub fn gradual(r_ref: f64, rmax: f64, x_curr: f64, x_prev: f64, delta: f64) -> f64 {
    let x_offset = x_curr - PRIO * XREF * rmax / r_ref;
    let x_diff = x_curr - x_prev;
    r_ref - KAPPA * (delta / TAU) * (x_offset / TAU) * r_ref - KAPPA * ETA * (x_diff / TAU) * r_ref
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rmode: u8, x_curr: f64, r_recv: f64) -> Report {
        Report {
            rmode,
            x_curr,
            r_recv,
            d_queue: 0.0,
            p_loss: 0.0,
            p_mark: 0.0,
        }
    }

    #[test]
    fn gradual_update_by_hand() {
        // RMAX 1.5 Mb/s, r_ref 1 Mb/s, a queueing-delay step from 0 to 20 ms, feedback every
        // 100 ms. First update: x_offset = 20 − 10 · 1.5 = 5 ms, x_diff = 20 ms;
        // r_ref = 1e6 − 0.5 · 0.2 · 0.01 · 1e6 − 0.5 · 2 · 0.04 · 1e6 = 1e6 − 1000 − 40000.
        let mut s = NadaSender::new(0.15e6, 1.5e6, 1e6, DELTA);
        assert_eq!(s.on_report(0, &report(1, 0.0, 0.0), 0), 1e6); // starts the clock
        let r1 = s.on_report(100 * MS, &report(1, 20.0, 0.0), 0);
        assert!((r1 - 959_000.0).abs() < 1e-6, "{r1}");
        // Second: x_diff = 0, x_offset = 20 − 15e6 / 959000 = 4.358707 ms;
        // r_ref = 959000 · (1 − 0.5 · 0.2 · 4.358707 / 500) = 958164.0.
        let r2 = s.on_report(200 * MS, &report(1, 20.0, 0.0), 0);
        let want = 959_000.0 * (1.0 - 0.1 * (20.0 - 15e6 / 959_000.0) / 500.0);
        assert!(
            (r2 - want).abs() < 1e-6 && (want - 958_164.0).abs() < 0.1,
            "{r2}"
        );
        // A steady signal converges to the equilibrium x_curr = XREF · RMAX / r_ref:
        // 20 ms → 0.75 Mb/s (within 100 b/s after 200 s of feedback).
        let mut t = 200 * MS;
        for _ in 0..2000 {
            t += 100 * MS;
            s.on_report(t, &report(1, 20.0, 0.0), 0);
        }
        assert!((s.r_ref - 0.75e6).abs() < 100.0, "{}", s.r_ref);
    }

    #[test]
    fn accelerated_ramp_up_by_hand() {
        // rtt 50 ms: gamma = 50 / (50 + 100 + 120) = 0.185185; r_recv 0.4 Mb/s → 474074 b/s.
        let mut s = NadaSender::new(0.15e6, 1.5e6, 0.15e6, DELTA);
        s.on_report(0, &report(0, 0.0, 0.0), 50 * MS);
        let r = s.on_report(100 * MS, &report(0, 0.0, 0.4e6), 50 * MS);
        assert!((r - 0.4e6 * (1.0 + 50.0 / 270.0)).abs() < 1e-6);
        // With DFILT = 120 ms, gamma stays under GAMMA_MAX = 0.5 whatever the rtt: at rtt 0,
        // 50 / 220; with a 10-ms feedback interval, 50 / 130. Then RMAX clips.
        assert_eq!(
            accelerated(0.0, 0.4e6, 0.0, DELTA),
            0.4e6 * (1.0 + 50.0 / 220.0)
        );
        assert_eq!(
            accelerated(0.0, 0.4e6, 0.0, 10.0),
            0.4e6 * (1.0 + 50.0 / 130.0)
        );
        let r = s.on_report(200 * MS, &report(0, 0.0, 1.4e6), 0);
        assert_eq!(r, 1.5e6);
    }

    #[test]
    fn the_default_feedback_interval_is_delta() {
        let v: crate::config::TrafficConfig =
            serde_json::from_str(r#"{"kind": "video_call"}"#).expect("an entry");
        let crate::config::TrafficConfig::VideoCall(v) = v else {
            panic!("a video call")
        };
        assert_eq!(v.feedback_interval_ms, DELTA);
        assert_eq!((v.min_rate_mbps, v.max_rate_mbps), (0.15, 1.5));
    }

    #[test]
    fn congestion_signal_terms() {
        // 1 % loss: DLOSS · 1² = 10 ms; 2 % marks: DMARK · 2² = 8 ms.
        assert!((signal(5.0, false, 0.01, 0.02) - (5.0 + 8.0 + 10.0)).abs() < 1e-9);
        // Warping only with a recent loss and d_queue ≥ QTH: 100 ms → 50 · e^-0.5.
        assert!((signal(100.0, true, 0.0, 0.0) - 50.0 * (-0.5f64).exp()).abs() < 1e-9);
        assert_eq!(signal(100.0, false, 0.0, 0.0), 100.0);
    }

    #[test]
    fn shaping_buffer_rates() {
        // r_ref 1 Mb/s, 2,000 bytes buffered at 30 fps: 8 · 2000 · 30 · 0.1 = 48 kb/s each way.
        let s = NadaSender::new(0.15e6, 1.5e6, 1e6, DELTA);
        let (vin, send) = s.rates(2000, 30.0);
        assert!((vin - 952_000.0).abs() < 1e-6 && (send - 1_048_000.0).abs() < 1e-6);
        // 10,000 bytes: 240 kb/s, capped at 5 % of r_ref (50 kb/s) each way.
        let (vin, send) = s.rates(10_000, 30.0);
        assert!((vin - 950_000.0).abs() < 1e-6 && (send - 1_050_000.0).abs() < 1e-6);
        // At RMIN and RMAX the clips win: r_vin stays at RMIN, r_send at RMAX.
        let lo = NadaSender::new(0.15e6, 1.5e6, 0.15e6, DELTA);
        assert_eq!(lo.rates(10_000, 30.0).0, 0.15e6);
        let hi = NadaSender::new(0.15e6, 1.5e6, 1.5e6, DELTA);
        assert_eq!(hi.rates(10_000, 30.0).1, 1.5e6);
    }

    #[test]
    fn receiver_window_and_filter() {
        // Interval 100 ms: a 5-interval window. Base 10 ms; a 15-tap minimum filter.
        let mut rx = NadaReceiver::new(100 * MS);
        for i in 0..20u64 {
            // one-way delays 10, 11, 12, ... ms: filtered d_queue is the minimum of the last
            // 15 samples = (19 − 14) ms = 5 ms after 20 samples.
            rx.on_packet(i * MS + (10 + i) * MS, i * MS, 1000, false, 0);
        }
        let r = rx.report();
        assert_eq!(r.d_queue, 5.0);
        // Filtered delays stayed below QEPS, no loss, no mark: accelerated ramp-up.
        assert_eq!(r.rmode, 0);
        assert!((r.r_recv - 20.0 * 8000.0 / 0.5).abs() < 1e-6);
        // One CE mark among 4 packets and 1 loss in the next interval: the window holds
        // 24 received, 1 lost, 1 marked; p_loss = 0.1 · 1/25, p_mark = 0.1 · 1/24.
        for i in 20..24u64 {
            rx.on_packet(i * MS + 29 * MS, i * MS, 1000, i == 21, (i == 22) as u64);
        }
        let r = rx.report();
        assert_eq!(r.rmode, 1);
        assert!((r.p_loss - 0.1 / 25.0).abs() < 1e-12 && (r.p_mark - 0.1 / 24.0).abs() < 1e-12);
        let want = signal(r.d_queue, true, 0.1 / 25.0, 0.1 / 24.0);
        assert!((r.x_curr - want).abs() < 1e-12);
    }
}
