//! A law that is a mixture of atoms and uniform pieces: what an `EmpiricalCdf` is (an atom
//! `c_0` at `v_0`, then `c_i − c_{i−1}` spread uniformly on `[v_{i−1}, v_i]`), and what stays
//! of one after the transformations that generators apply to a drawn value:
//!
//! * `capped(c)`: `min(X, c)` (the mass above `c` becomes an atom at `c`);
//! * `wrapped(t)`: `X` if `X ≤ t`, else `X mod t` — GloMoSim's HTTP client (2.02,
//!   `application/http_client.pc`) and QualNet's (`app_http.cpp`) draw a think time from Mah's
//!   table and fold one above the client's threshold back as the remainder of its division by
//!   the threshold; the folded mass lands spread over `[0, t)`.
//!
//! The exact CDF and mean of the result serve the distribution tests, and its pieces the
//! stationary residual law (`ResidualLaw`).

use super::EmpiricalCdf;

#[derive(Clone, Debug, PartialEq)]
pub struct PiecewiseLaw {
    /// `(lo, hi, mass)`: mass spread uniformly on `[lo, hi]` (an atom when `lo == hi`).
    pieces: Vec<(f64, f64, f64)>,
}

impl PiecewiseLaw {
    /// The law an `EmpiricalCdf` samples (inverse transform with linear interpolation).
    pub fn from_cdf(law: &EmpiricalCdf) -> Self {
        let points: Vec<(f64, f64)> = law.points().collect();
        let mut pieces = Vec::with_capacity(points.len());
        let (v0, c0) = points[0];
        pieces.push((v0, v0, c0));
        for w in points.windows(2) {
            let ((a, ca), (b, cb)) = (w[0], w[1]);
            pieces.push((a, b, cb - ca));
        }
        PiecewiseLaw {
            pieces: pieces.into_iter().filter(|p| p.2 > 0.0).collect(),
        }
    }

    /// The law of `min(X, cap)`.
    pub fn capped(self, cap: f64) -> Self {
        let mut pieces = Vec::with_capacity(self.pieces.len() + 1);
        let mut above = 0.0;
        for (a, b, m) in self.pieces {
            if b <= cap {
                pieces.push((a, b, m));
            } else if a >= cap {
                above += m;
            } else {
                // Split at the cap: the part below stays uniform, the rest joins the atom.
                let below = m * (cap - a) / (b - a);
                pieces.push((a, cap, below));
                above += m - below;
            }
        }
        if above > 0.0 {
            pieces.push((cap, cap, above));
        }
        PiecewiseLaw { pieces }
    }

    /// The law of `X` if `X ≤ t`, else `X mod t` (GloMoSim's think-time threshold).
    pub fn wrapped(self, t: f64) -> Self {
        let mut pieces = Vec::with_capacity(self.pieces.len() * 2);
        for (a, b, m) in self.pieces {
            if b <= t {
                pieces.push((a, b, m));
                continue;
            }
            if a == b {
                pieces.push((a % t, a % t, m));
                continue;
            }
            if a < t {
                // The part up to t is kept as it is.
                pieces.push((a, t, m * (t - a) / (b - a)));
            }
            // Each stretch [k·t, (k+1)·t) above t folds down by k·t.
            let mut k = (a.max(t) / t).floor().max(1.0);
            loop {
                let (lo, hi) = (a.max(k * t), b.min((k + 1.0) * t));
                if lo >= b {
                    break;
                }
                if hi > lo {
                    pieces.push((lo - k * t, hi - k * t, m * (hi - lo) / (b - a)));
                }
                k += 1.0;
            }
        }
        PiecewiseLaw { pieces }
    }

    pub fn pieces(&self) -> &[(f64, f64, f64)] {
        &self.pieces
    }

    pub fn mean(&self) -> f64 {
        self.pieces.iter().map(|&(a, b, m)| m * 0.5 * (a + b)).sum()
    }

    /// `P(X ≤ x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        self.pieces
            .iter()
            .map(|&(a, b, m)| {
                if x >= b {
                    m
                } else if x < a {
                    0.0
                } else {
                    m * (x - a) / (b - a)
                }
            })
            .sum()
    }

    /// The value of `X` above which only `p` of the mass lies (a quantile, by bisection).
    pub fn quantile(&self, q: f64) -> f64 {
        let (mut lo, mut hi) = (0.0_f64, self.pieces.iter().map(|p| p.1).fold(0.0, f64::max));
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.cdf(mid) < q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform on [0, 10] wrapped at 4: values in (4, 8] fold onto (0, 4], those in (8, 10]
    /// onto (0, 2]: density 0.3 on [0, 2], 0.2 on [2, 4]. Hand-computed CDF and mean.
    #[test]
    fn wrap_folds_the_mass_above_the_threshold() {
        let u = EmpiricalCdf::parse("0 0\n10 1\n", false).unwrap();
        let w = PiecewiseLaw::from_cdf(&u).wrapped(4.0);
        let total: f64 = w.pieces().iter().map(|p| p.2).sum();
        assert!((total - 1.0).abs() < 1e-12);
        for (x, f) in [(1.0, 0.3), (2.0, 0.6), (3.0, 0.8), (4.0, 1.0)] {
            assert!((w.cdf(x) - f).abs() < 1e-12, "F({x}) = {}", w.cdf(x));
        }
        // mean: 0.6·1 + 0.4·3 = 1.8
        assert!((w.mean() - 1.8).abs() < 1e-12);
    }

    #[test]
    fn cap_moves_the_mass_above_into_an_atom() {
        let e = EmpiricalCdf::parse("2 0.5\n6 1\n", false).unwrap();
        let c = PiecewiseLaw::from_cdf(&e).capped(4.0);
        assert!((c.mean() - 2.75).abs() < 1e-12);
        assert!((c.cdf(3.999) - 0.749_875).abs() < 1e-9);
        assert!((c.cdf(4.0) - 1.0).abs() < 1e-12);
        assert!((c.quantile(0.5) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn atoms_above_the_threshold_wrap_too() {
        let e = EmpiricalCdf::parse("5 0.5\n15 1\n", false).unwrap();
        let w = PiecewiseLaw::from_cdf(&e).wrapped(4.0);
        // the atom at 5 → 1; (5, 8] → (1, 4]; (8, 12] → (0, 4]; (12, 15] → (0, 3]
        assert!((w.cdf(1.0) - (0.5 + 0.05 * 1.0 + 0.05 * 1.0)).abs() < 1e-12);
        assert!((w.cdf(4.0) - 1.0).abs() < 1e-12);
    }
}
