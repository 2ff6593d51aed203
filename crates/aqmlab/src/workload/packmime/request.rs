//! Request sizes, client → server [model-facts §8.3.5]: FSD(d = 0.31, N = 5000) with
//! θ = logit2⁻¹(0.123 + 0.494·log2 rate), mapped through the two-piece inverse CDF.

use super::tables::{FSIZE1_INVCDF_A_X, FSIZE1_INVCDF_A_Y, FSIZE1_INVCDF_B_X, FSIZE1_INVCDF_B_Y};
use crate::rng::Rng;
use crate::workload::dist::special::{fx, logit2_inv};
use crate::workload::dist::Fsd;

/// Probability of the body piece (`FSIZE1_PROB_A`).
const PROB_A: f64 = 0.5;

/// Request size in bytes (before truncation) at marginal probability `p` [§8.3.5]:
/// p ≤ 0.5: FX(A)(p/0.5); else 2^{FX(B)(log2(1 − p'))} with p' = (p − 0.5)/0.5.
pub fn request_size_at(p: f64) -> f64 {
    if p <= PROB_A {
        fx(&FSIZE1_INVCDF_A_X, &FSIZE1_INVCDF_A_Y, p / PROB_A)
    } else {
        let pp = (p - PROB_A) / (1.0 - PROB_A);
        fx(&FSIZE1_INVCDF_B_X, &FSIZE1_INVCDF_B_Y, (1.0 - pp).log2()).exp2()
    }
}

/// Request-size generator for one PackMime instance.
#[derive(Clone, Debug)]
pub struct PackMimeRequestSize {
    fsd: Fsd,
}

impl PackMimeRequestSize {
    pub fn new(rate: f64, rng: Rng) -> Self {
        let theta = logit2_inv(0.123 + 0.494 * rate.log2());
        PackMimeRequestSize {
            fsd: Fsd::new(0.31, 5000, theta, rng),
        }
    }

    /// Next request size, bytes: truncated to an integer, 0 replaced by 1 [§8.3.1, §8.3.5].
    pub fn next_bytes(&mut self) -> u64 {
        (request_size_at(self.fsd.next_u()) as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    #[test]
    fn marginal_quantiles_match_section_8_3_5() {
        // Median ≈ 423 B (top of the body table), 90 % ≈ 870 B, 99 % ≈ 3.0 KB.
        assert!((request_size_at(0.5) - 421.8).abs() < 1.0);
        assert!(
            (request_size_at(0.9) / 870.0 - 1.0).abs() < 0.03,
            "{}",
            request_size_at(0.9)
        );
        assert!(
            (request_size_at(0.99) / 3000.0 - 1.0).abs() < 0.05,
            "{}",
            request_size_at(0.99)
        );
        assert!((request_size_at(0.0) - 50.9).abs() < 0.2);
    }

    #[test]
    fn generator_median_is_about_423_bytes() {
        // 10 000 LRD samples (θ = 0.97 at 100/s, mostly noise): median within 421–430 B,
        // 90 % quantile within 10 % of 870 B.
        let mut g = PackMimeRequestSize::new(100.0, Rng::stream(42, StreamKind::Test, 0));
        let mut v: Vec<u64> = (0..10_000).map(|_| g.next_bytes()).collect();
        v.sort_unstable();
        let med = v[v.len() / 2];
        assert!((415..=435).contains(&med), "median {med}");
        let p90 = v[v.len() * 9 / 10] as f64;
        assert!((p90 / 870.0 - 1.0).abs() < 0.10, "p90 {p90}");
    }
}
