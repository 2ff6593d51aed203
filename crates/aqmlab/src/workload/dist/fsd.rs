//! PackMime's FSD (fractional sum-difference) generator [model-facts §8.3.3, after Cao et
//! al. INFOCOM 2004 as coded in ns-2.35 packmime_ranvar.cc]: a long-range dependent series
//! with standard normal marginal, turned into Uniform(0, 1) by Φ.

use super::special::{ln_gamma, norm_cdf};
use crate::rng::Rng;

/// FSD series with fractional differencing `d`, AR truncation `n` and noise ratio `theta`.
/// Owns its random stream. Construction costs O(n²) (Durbin–Levinson up to order n − 1 and
/// the n + 1 discarded warm-up values); each later value costs O(n) and allocates nothing.
#[derive(Clone, Debug)]
pub struct Fsd {
    rng: Rng,
    /// φ_{t,j}, j = 1..=order, stored at index j − 1.
    phi: Vec<f64>,
    /// Scratch for the Durbin–Levinson update (same length as `phi`).
    phi_prev: Vec<f64>,
    /// Number of coefficients in use (min(t, n − 1)).
    order: usize,
    /// Innovation variance v_t.
    v: f64,
    /// Recent values of x, newest first from `hist[head]`: `hist[head + k − 1]` is x at lag
    /// k. The buffer is 2n long and refilled from the back when `head` reaches 0, so the lags
    /// are one contiguous slice (no modulo in the O(n) sum).
    hist: Vec<f64>,
    head: usize,
    /// Steps taken (t of the next value).
    t: usize,
    n: usize,
    d: f64,
    sigma_eps: f64,
    sigma_n: f64,
}

impl Fsd {
    pub fn new(d: f64, n: usize, theta: f64, rng: Rng) -> Self {
        assert!(d > 0.0 && d < 0.5, "d must be in (0, 0.5)");
        assert!(n >= 2, "AR truncation must be at least 2");
        assert!((0.0..=1.0).contains(&theta), "theta must be in [0, 1]");
        // v_0 = Γ(1 − 2d)/Γ(1 − d)² is the variance of x_t [§8.3.3 step 1].
        let v0 = (ln_gamma(1.0 - 2.0 * d) - 2.0 * ln_gamma(1.0 - d)).exp();
        // Var(y) = v_0·(2 + 2d/(1 − d)) for y_t = x_t + x_{t−1}; σ_ε scales y to variance
        // 1 − θ and σ_n = √θ adds the rest [§8.3.3 step 3].
        let sigma_eps = ((1.0 - theta) / (v0 * (2.0 + 2.0 * d / (1.0 - d)))).sqrt();
        let mut f = Fsd {
            rng,
            phi: vec![0.0; n - 1],
            phi_prev: vec![0.0; n - 1],
            order: 0,
            v: v0,
            hist: vec![0.0; 2 * n],
            head: n,
            t: 0,
            n,
            d,
            sigma_eps,
            sigma_n: theta.sqrt(),
        };
        // The first N + 1 values are generated and discarded [§8.3.3 step 1].
        for _ in 0..=n {
            f.next_x();
        }
        f
    }

    /// One step of the fractional ARIMA(0, d, 0) x_t by Hosking's recursion, frozen at order
    /// n − 1 [§8.3.3 step 1].
    fn next_x(&mut self) -> f64 {
        let t = self.t;
        if t >= 1 && self.order < self.n - 1 {
            // φ_tt = d/(t − d); φ_tj = φ_{t−1,j} − φ_tt·φ_{t−1,t−j}; v_t = (1 − φ_tt²)·v_{t−1}.
            let k = self.order + 1; // = t while not frozen
            let ptt = self.d / (k as f64 - self.d);
            self.phi_prev[..k - 1].copy_from_slice(&self.phi[..k - 1]);
            for j in 1..k {
                self.phi[j - 1] = self.phi_prev[j - 1] - ptt * self.phi_prev[k - j - 1];
            }
            self.phi[k - 1] = ptt;
            self.order = k;
            self.v *= 1.0 - ptt * ptt;
        }
        // x_t = Σ_{j=1}^{order} φ_tj·x_{t−j} + √v_t·ε_t.
        let mean = dot(
            &self.phi[..self.order],
            &self.hist[self.head..self.head + self.order],
        );
        let x = mean + self.v.sqrt() * self.rng.normal();
        if self.head == 0 {
            // Move the newest n − 1 values to the back of the buffer.
            let n = self.n;
            self.hist.copy_within(0..n - 1, n + 1);
            self.head = n + 1;
        }
        self.head -= 1;
        self.hist[self.head] = x;
        self.t += 1;
        x
    }

    /// z_t = σ_ε·(x_t + x_{t−1}) + σ_n·n_t, marginally N(0, 1) [§8.3.3 steps 2–3].
    pub fn next_z(&mut self) -> f64 {
        let prev = self.hist[self.head];
        let x = self.next_x();
        self.sigma_eps * (x + prev) + self.sigma_n * self.rng.normal()
    }

    /// u_t = Φ(z_t): Uniform(0, 1) marginal, long-range dependent [§8.3.3 step 4].
    pub fn next_u(&mut self) -> f64 {
        norm_cdf(self.next_z())
    }
}

/// Dot product with four independent partial sums, so that the compiler can vectorise the
/// O(n) AR step (the rounding differs from a left-to-right sum only in the last bits).
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..4 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn pure_noise_is_iid_uniform() {
        // θ = 1: z is i.i.d. N(0, 1), so Φ(z) must pass KS against U(0, 1).
        let mut f = Fsd::new(0.31, 50, 1.0, Rng::stream(5, StreamKind::Test, 0));
        let us: Vec<f64> = (0..20_000).map(|_| f.next_u()).collect();
        assert_ks(&us, |u| u.clamp(0.0, 1.0), "FSD θ = 1");
    }

    #[test]
    fn lrd_part_has_unit_variance_and_farima_lag1_correlation() {
        // θ = 0: z = σ_ε·y. For FARIMA(0, d, 0) ρ1 = d/(1 − d), ρ2 = ρ1·(1 + d)/(2 − d), so
        // corr(y_t, y_{t−1}) = (1 + 2ρ1 + ρ2)/(2 + 2ρ1). d = 0.33: 0.7874.
        let d: f64 = 0.33;
        let mut f = Fsd::new(d, 200, 0.0, Rng::stream(6, StreamKind::Test, 0));
        let n = 40_000;
        let z: Vec<f64> = (0..n).map(|_| f.next_z()).collect();
        let m = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        let c1 = z.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (n - 1) as f64;
        let r1 = d / (1.0 - d);
        let r2 = r1 * (1.0 + d) / (2.0 - d);
        let want = (1.0 + 2.0 * r1 + r2) / (2.0 + 2.0 * r1);
        // LRD makes sample moments converge slowly: tolerances are wide but would catch a
        // wrong σ_ε (variance) or a broken recursion (correlation near 0.5 or 1).
        assert!((var - 1.0).abs() < 0.15, "variance {var}");
        assert!(
            (c1 / var - want).abs() < 0.03,
            "lag-1 corr {} want {want}",
            c1 / var
        );
    }
}
