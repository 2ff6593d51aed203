//! The stationary residual (equilibrium) law of a renewal process whose inter-event times follow
//! an `EmpiricalCdf`, optionally capped at `cap` (the law of `min(T, cap)`).
//!
//! Seen at a time chosen independently of the process, the interval in progress has the
//! length-biased law `t·dF(t)/E[T]`, and the time left in it is a uniform fraction of that
//! length: `R = V·T̃`, `V` uniform on [0, 1), `T̃` length-biased. Its CDF is
//! `F_e(x) = (1/E[T])·∫₀ˣ (1 − F(s)) ds` and its mean `E[T²]/(2E[T])` (Cox, Renewal Theory,
//! 1962, §5.2). Starting each user of an ON/OFF population in an OFF period with such a
//! residual makes the population stationary from time 0 (the ON periods, short next to the OFF
//! ones, are left out).
//!
//! `EmpiricalCdf` puts an atom `c_0` at `v_0` and spreads `c_i − c_{i−1}` uniformly on
//! `[v_{i−1}, v_i]`; the length-biased law keeps the pieces with weights `mass · mean value`
//! and, inside a piece `[a, b]`, the density `∝ t`, sampled as `√(a² + U·(b² − a²))`.

use super::{EmpiricalCdf, PiecewiseLaw};
use crate::rng::Rng;

/// Equilibrium residual law of an empirical inter-event law (see the module documentation).
#[derive(Clone, Debug)]
pub struct ResidualLaw {
    /// Pieces `[lo, hi]` of the (capped) law (`lo == hi`: an atom) ...
    lo: Vec<f64>,
    hi: Vec<f64>,
    /// ... their probability masses, and the cumulative length-biased weights.
    mass: Vec<f64>,
    cum: Vec<f64>,
}

impl ResidualLaw {
    /// The residual law of `min(T, cap)` for `T ~ law` (`cap = None`: of `T`).
    pub fn new(law: &EmpiricalCdf, cap: Option<f64>) -> Self {
        let law = PiecewiseLaw::from_cdf(law);
        Self::of(&match cap {
            Some(c) => law.capped(c),
            None => law,
        })
    }

    /// The residual law of any mixture of atoms and uniform pieces (a capped or wrapped
    /// empirical law).
    pub fn of(law: &PiecewiseLaw) -> Self {
        let mut r = ResidualLaw {
            lo: Vec::new(),
            hi: Vec::new(),
            mass: Vec::new(),
            cum: Vec::new(),
        };
        for &(lo, hi, mass) in law.pieces() {
            r.piece(lo, hi, mass);
        }
        r
    }

    fn piece(&mut self, lo: f64, hi: f64, mass: f64) {
        if mass <= 0.0 {
            return;
        }
        let w = mass * 0.5 * (lo + hi);
        let prev = self.cum.last().copied().unwrap_or(0.0);
        self.lo.push(lo);
        self.hi.push(hi);
        self.mass.push(mass);
        self.cum.push(prev + w);
    }

    /// Mean of the underlying (capped) law, `E[T]`.
    pub fn law_mean(&self) -> f64 {
        self.cum.last().copied().unwrap_or(0.0)
    }

    /// Mean of the residual, `E[T²]/(2E[T])`.
    pub fn mean(&self) -> f64 {
        let m2: f64 = (0..self.lo.len())
            .map(|i| {
                let (a, b) = (self.lo[i], self.hi[i]);
                self.mass[i] * (a * a + a * b + b * b) / 3.0
            })
            .sum();
        m2 / (2.0 * self.law_mean())
    }

    /// One residual: a length-biased interval, then a uniform point in it.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        let total = self.law_mean();
        if total <= 0.0 {
            return 0.0;
        }
        let u = rng.uniform() * total;
        let i = self
            .cum
            .partition_point(|&c| c <= u)
            .min(self.cum.len() - 1);
        let (a, b) = (self.lo[i], self.hi[i]);
        let t = if b > a {
            (a * a + rng.uniform() * (b * b - a * a)).sqrt()
        } else {
            a
        };
        rng.uniform() * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    fn draws(law: &ResidualLaw, seed: u64, n: usize) -> Vec<f64> {
        let mut r = Rng::stream(seed, StreamKind::Test, 0);
        (0..n).map(|_| law.sample(&mut r)).collect()
    }

    #[test]
    fn uniform_law_has_the_triangular_residual() {
        // T uniform on [0, 10]: F_e(x) = (x − x²/20)/5, mean E[T²]/(2E[T]) = (100/3)/10.
        let e = EmpiricalCdf::parse("0 0\n10 1\n", false).unwrap();
        let law = ResidualLaw::new(&e, None);
        assert!((law.law_mean() - 5.0).abs() < 1e-12);
        assert!((law.mean() - 10.0 / 3.0).abs() < 1e-12);
        let xs = draws(&law, 1, 20_000);
        assert_ks(&xs, |x| (x - x * x / 20.0) / 5.0, "uniform residual");
    }

    #[test]
    fn atoms_and_a_cap_are_handled() {
        // T = 2 w.p. 0.5, else uniform on [2, 6]; capped at 4: min(T, 4) = 2 w.p. 0.5,
        // uniform on [2, 4] w.p. 0.25, 4 w.p. 0.25. E = 1 + 0.75 + 1 = 2.75;
        // F_e(x) = (1/2.75)·∫₀ˣ P(min(T,4) > s) ds.
        let e = EmpiricalCdf::parse("2 0.5\n6 1\n", false).unwrap();
        let law = ResidualLaw::new(&e, Some(4.0));
        assert!((law.law_mean() - 2.75).abs() < 1e-12);
        let surv = |s: f64| {
            if s < 2.0 {
                1.0
            } else if s < 4.0 {
                0.5 - 0.25 * (s - 2.0) / 2.0
            } else {
                0.0
            }
        };
        let fe = |x: f64| {
            // ∫ surv by pieces
            let a = x.min(2.0);
            let b = (x.min(4.0) - 2.0).max(0.0);
            (a + 0.5 * b - 0.0625 * b * b) / 2.75
        };
        assert!((fe(4.0) - 1.0).abs() < 1e-12 && surv(3.0) > 0.0);
        let xs = draws(&law, 2, 20_000);
        assert!(xs.iter().all(|&x| (0.0..4.0).contains(&x)));
        assert_ks(&xs, fe, "capped residual with an atom");
        // mean E[min(T,4)²]/(2·2.75): 0.5·4 + 0.25·(4 + 8 + 16)/3 + 0.25·16 = 8.333…
        assert!((law.mean() - (2.0 + 28.0 / 12.0 + 4.0) / 5.5).abs() < 1e-12);
    }
}
