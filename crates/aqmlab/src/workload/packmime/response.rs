//! Response sizes, server → client [model-facts §8.3.6]: a two-state alternating-run model
//! over the sequence of responses (state 0 = cache validation, state 1 = download), with
//! Weibull run lengths and i.i.d. sizes within a state.

use super::tables::{FSIZE0_INVCDF_A_X, FSIZE0_INVCDF_A_Y, FSIZE0_INVCDF_B_X, FSIZE0_INVCDF_B_Y};
use crate::rng::Rng;
use crate::workload::dist::special::{fx, logit2_inv};
use crate::workload::dist::variates::weibull;

/// Default cap on a response: 2³¹ − 1 bytes, the largest value ns-2's `int` holds. The
/// download table is extrapolated without bound (u → 1 gives 2^37 bytes and more); see
/// docs/workload.md. P(download > cap) ≈ 4·10⁻⁸.
pub const DEFAULT_RESPONSE_CAP: u64 = (1 << 31) - 1;

/// Run-length scales of states 0 and 1 [§8.3.6].
const RUN_SCALE: [f64; 2] = [0.775, 3.11];

/// Cache-validation response size (bytes) at uniform `u`: FX(FSIZE0_A)(u), 4.6–272 B.
pub fn cache_size_at(u: f64) -> f64 {
    fx(&FSIZE0_INVCDF_A_X, &FSIZE0_INVCDF_A_Y, u)
}

/// Download response size (bytes) at uniform `u`: 2^{FX(FSIZE0_B)(log2(1 − u))}.
pub fn download_size_at(u: f64) -> f64 {
    fx(&FSIZE0_INVCDF_B_X, &FSIZE0_INVCDF_B_Y, (1.0 - u).log2()).exp2()
}

/// Weibull run-length shapes of states 0 and 1 at `rate`:
/// k_0 = logit2⁻¹(0.718 + 0.357·log2 rate), k_1 = logit2⁻¹(1.293 + 0.316·log2 rate).
pub fn run_shapes(rate: f64) -> [f64; 2] {
    [
        logit2_inv(0.718 + 0.357 * rate.log2()),
        logit2_inv(1.293 + 0.316 * rate.log2()),
    ]
}

/// Response-size generator: one global sequence per PackMime instance.
#[derive(Clone, Debug)]
pub struct PackMimeResponseSize {
    rng: Rng,
    shapes: [f64; 2],
    state: usize,
    remaining: u64,
    cap: u64,
}

impl PackMimeResponseSize {
    pub fn new(rate: f64, rng: Rng) -> Self {
        // Starts in state 0 with an empty run, so the first response opens a download run.
        PackMimeResponseSize {
            rng,
            shapes: run_shapes(rate),
            state: 0,
            remaining: 0,
            cap: DEFAULT_RESPONSE_CAP,
        }
    }

    /// Replaces the cap on response sizes (bytes).
    pub fn with_cap(mut self, cap: u64) -> Self {
        self.cap = cap.max(1);
        self
    }

    /// The state of the last response: 0 cache validation, 1 download.
    pub fn state(&self) -> usize {
        self.state
    }

    /// Next response size, bytes (truncated, at least 1, at most the cap).
    pub fn next_bytes(&mut self) -> u64 {
        if self.remaining == 0 {
            // Switch state; run length = ceil(rweibull(k_s, λ_s)), at least 1.
            self.state = 1 - self.state;
            let s = self.state;
            self.remaining =
                (weibull(&mut self.rng, self.shapes[s], RUN_SCALE[s]).ceil() as u64).max(1);
        }
        self.remaining -= 1;
        let u = self.rng.uniform();
        let size = if self.state == 0 {
            cache_size_at(u)
        } else {
            download_size_at(u)
        };
        // `as` saturates at u64::MAX for huge values; then the cap applies.
        (size as u64).clamp(1, self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    /// Inverse of a piecewise-linear monotone table: the x with fx(x) = y.
    fn fx_inverse(xs: &[f64], ys: &[f64], y: f64) -> f64 {
        let (mut lo, mut hi) = (-200.0, 200.0);
        let increasing = ys[ys.len() - 1] > ys[0];
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if (fx(xs, ys, mid) < y) == increasing {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn state_sizes_pass_ks_against_the_inverted_tables() {
        let mut r = Rng::stream(43, StreamKind::Test, 0);
        let c: Vec<f64> = (0..20_000).map(|_| cache_size_at(r.uniform())).collect();
        // P(size ≤ s) = the u with FX_A(u) = s.
        assert_ks(
            &c,
            |s| fx_inverse(&FSIZE0_INVCDF_A_X, &FSIZE0_INVCDF_A_Y, s).clamp(0.0, 1.0),
            "cache",
        );
        let d: Vec<f64> = (0..20_000).map(|_| download_size_at(r.uniform())).collect();
        // size ≤ s ⇔ log2(1 − u) ≥ FX_B⁻¹(log2 s) ⇔ u ≤ 1 − 2^{FX_B⁻¹(log2 s)}.
        let cdf =
            |s: f64| 1.0 - fx_inverse(&FSIZE0_INVCDF_B_X, &FSIZE0_INVCDF_B_Y, s.log2()).exp2();
        assert_ks(&d, cdf, "download");
        // Medians [§8.3.6]: state 0 ≈ 140 B, state 1 ≈ 2.26 KB.
        assert!((cache_size_at(0.5) - 140.7).abs() < 1.0);
        assert!(
            (download_size_at(0.5) / 2260.0 - 1.0).abs() < 0.02,
            "{}",
            download_size_at(0.5)
        );
    }

    #[test]
    fn download_share_is_about_72_5_percent() {
        // Mean run lengths at 100/s are 1.44 (state 0) and 3.79 (state 1) → 72.5 % downloads.
        // 40 000 responses ≈ 7 000 run pairs: sd of the share ≈ 0.5 %; allow 2.5 points.
        let mut g = PackMimeResponseSize::new(100.0, Rng::stream(44, StreamKind::Test, 0));
        let first = g.next_bytes();
        assert_eq!(
            g.state(),
            1,
            "first response opens a download run ({first} B)"
        );
        let n = 40_000;
        let mut downloads = 0;
        for _ in 0..n {
            let b = g.next_bytes();
            assert!((1..=DEFAULT_RESPONSE_CAP).contains(&b));
            downloads += g.state();
        }
        let share = downloads as f64 / n as f64;
        assert!((share - 0.725).abs() < 0.025, "download share {share}");
    }

    #[test]
    fn cap_bounds_the_extrapolated_tail() {
        assert!(download_size_at(1.0 - 2f64.powi(-40)) > DEFAULT_RESPONSE_CAP as f64);
        let mut g =
            PackMimeResponseSize::new(10.0, Rng::stream(45, StreamKind::Test, 0)).with_cap(5000);
        assert!((0..5000).all(|_| g.next_bytes() <= 5000));
    }
}
