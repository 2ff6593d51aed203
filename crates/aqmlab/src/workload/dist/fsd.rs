//! PackMime's FSD (fractional sum-difference) generator [model-facts §8.3.3, after Cao et
//! al. INFOCOM 2004 as coded in ns-2.35 packmime_ranvar.cc]: a long-range dependent series
//! with standard normal marginal, turned into Uniform(0, 1) by Φ.
//!
//! The fractional ARIMA part is Hosking's recursion frozen at order p = N − 1 once N + 1
//! values have been generated and discarded, as in ns-2. From then on it is a fixed AR(p)
//! filter, x_t = Σ_{j=1}^{p} φ_j·x_{t−j} + e_t, and ns-2 evaluates the O(p) sum for every
//! value. Here the values after the warm-up are computed in blocks of B ≥ p with FFTs
//! (`Blocks`): the same recursion with the same innovations e_t (drawn from the stream in
//! the same order), so the same series up to floating-point rounding (≈ 1e-13; tested against
//! the value-by-value recursion), at O(log N) operations per value instead of O(N).

use super::fft::{series_inverse, split_real_pair, Fft, C};
use super::special::{ln_gamma, norm_cdf};
use crate::rng::Rng;

/// FSD series with fractional differencing `d`, AR truncation `n` and noise ratio `theta`.
/// Owns its random stream. Construction costs O(n²) (Durbin–Levinson up to order n − 1 and
/// the n + 1 discarded warm-up values) plus O(n log n) for the block generator; each later
/// value costs O(log n) (amortized over blocks) and allocates nothing.
#[derive(Clone, Debug)]
pub struct Fsd {
    rng: Rng,
    /// φ_{t,j}, j = 1..=order, stored at index j − 1 (emptied once `blocks` takes over).
    phi: Vec<f64>,
    /// Number of coefficients in use (min(t, n − 1)).
    order: usize,
    /// Innovation variance v_t.
    v: f64,
    /// Recent values of x, newest first from `hist[head]`: `hist[head + k − 1]` is x at lag
    /// k. The buffer is 2n long and refilled from the back when `head` reaches 0, so the lags
    /// are one contiguous slice (no modulo in the O(n) sum). Emptied once `blocks` takes over.
    hist: Vec<f64>,
    head: usize,
    /// Steps taken (t of the next value).
    t: usize,
    n: usize,
    d: f64,
    sigma_eps: f64,
    sigma_n: f64,
    /// The block generator, after the warm-up.
    blocks: Option<Box<Blocks>>,
}

impl Fsd {
    pub fn new(d: f64, n: usize, theta: f64, rng: Rng) -> Self {
        let mut f = Self::warmed_up(d, n, theta, rng);
        f.blocks = Some(Box::new(Blocks::new(
            &f.phi[..f.order],
            f.v.sqrt(),
            &f.hist[f.head..f.head + f.order],
        )));
        f.phi = Vec::new();
        f.hist = Vec::new();
        f
    }

    /// The generator after its warm-up, computing each later value by the O(n) sum (the
    /// reference for `Blocks`).
    fn warmed_up(d: f64, n: usize, theta: f64, rng: Rng) -> Self {
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
            order: 0,
            v: v0,
            hist: vec![0.0; 2 * n],
            head: n,
            t: 0,
            n,
            d,
            sigma_eps,
            sigma_n: theta.sqrt(),
            blocks: None,
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
            // In place, pair (j, t − j) at a time.
            let k = self.order + 1; // = t while not frozen
            let ptt = self.d / (k as f64 - self.d);
            let len = k - 1;
            // φ_j pairs with φ_{t−j}: the low half with the high half reversed (a form the
            // compiler vectorises); the middle coefficient, for odd `len`, pairs with itself.
            let (lo, hi) = self.phi[..len].split_at_mut(len / 2);
            let (mid, hi) = hi.split_at_mut(len % 2);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut().rev()) {
                let (x, y) = (*a, *b);
                *a = x - ptt * y;
                *b = y - ptt * x;
            }
            for a in mid {
                *a -= ptt * *a;
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
        if let Some(b) = self.blocks.as_deref_mut() {
            return b.next_z(&mut self.rng, self.sigma_eps, self.sigma_n);
        }
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
/// O(n) AR step of the warm-up (the rounding differs from a left-to-right sum only in the last
/// bits).
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

/// The frozen AR(p) recursion evaluated B values at a time. For a block starting at T with
/// innovations e and history y = (x_{T−p}, …, x_{T−1}):
///
/// 1. the history's part of each value, h_i = Σ_{j>i} φ_j·x_{T+i−j}, is the linear
///    convolution φ ∗ y at index p − 1 + i (one FFT product);
/// 2. the values then solve x_i = Σ_{1≤j≤i} φ_j·x_{i−j} + h_i + e_i, a lower-triangular
///    Toeplitz system whose solution is x = ψ ∗ (h + e) truncated to B, with ψ the impulse
///    response of the AR filter (ψ = 1/(1 − Σ φ_j z^j) as a power series, computed once).
///
/// With an FFT of size M = 2^⌈log2 2p⌉ and B = M/2 (≥ p, so the next history is the block's
/// tail), neither convolution wraps around. Four FFTs of size M per block: O(log p) per value.
#[derive(Clone, Debug)]
struct Blocks {
    p: usize,
    b: usize,
    fft: Fft,
    /// FFT of (φ_1, …, φ_p) and of (ψ_0, …, ψ_{B−1}), zero-padded to M, divided by M.
    phi_hat: Vec<C>,
    psi_hat: Vec<C>,
    /// √v: the innovations are √v·ε.
    sd: f64,
    /// x_{T−p}, …, x_{T−1}, oldest first.
    hist: Vec<f64>,
    /// The block's z values, next at `pos`.
    z: Vec<f64>,
    pos: usize,
    /// Scratch: innovations, noise, FFT buffers.
    e: Vec<f64>,
    noise: Vec<f64>,
    s1: Vec<C>,
    s2: Vec<C>,
}

impl Blocks {
    fn new(phi: &[f64], sd: f64, hist_newest_first: &[f64]) -> Self {
        let p = phi.len();
        assert!(p >= 1 && hist_newest_first.len() == p);
        let m = (2 * p).next_power_of_two().max(2);
        let b = m / 2;
        debug_assert!(b >= p && p - 1 + b <= m);
        let fft = Fft::new(m);
        let scale = 1.0 / m as f64;
        let spectrum = |v: &[f64]| {
            let mut s = vec![C::default(); m];
            for (x, &r) in s.iter_mut().zip(v) {
                x.re = r * scale;
            }
            fft.forward(&mut s);
            s
        };
        let phi_hat = spectrum(phi);
        // ψ = 1/(1 − Σ_j φ_j z^j) mod z^B.
        let mut f = Vec::with_capacity(p + 1);
        f.push(1.0);
        f.extend(phi.iter().map(|&x| -x));
        let psi = series_inverse(&f, b);
        let psi_hat = spectrum(&psi);
        Blocks {
            p,
            b,
            fft,
            phi_hat,
            psi_hat,
            sd,
            hist: hist_newest_first.iter().rev().copied().collect(),
            z: vec![0.0; b],
            pos: b,
            e: vec![0.0; b],
            noise: vec![0.0; b],
            s1: vec![C::default(); m],
            s2: vec![C::default(); m],
        }
    }

    #[inline]
    fn next_z(&mut self, rng: &mut Rng, sigma_eps: f64, sigma_n: f64) -> f64 {
        if self.pos == self.b {
            self.fill(rng, sigma_eps, sigma_n);
        }
        let z = self.z[self.pos];
        self.pos += 1;
        z
    }

    /// The next B values of z.
    fn fill(&mut self, rng: &mut Rng, sigma_eps: f64, sigma_n: f64) {
        let (p, b) = (self.p, self.b);
        let m = self.fft.size();
        // Same draws in the same order as value by value: ε_t for x_t, then the noise n_t.
        for i in 0..b {
            self.e[i] = self.sd * rng.normal();
            self.noise[i] = rng.normal();
        }
        // s1 = FFT(y + i·e), y = history, e = innovations.
        let s1 = &mut self.s1;
        for (i, c) in s1.iter_mut().enumerate() {
            c.re = if i < p { self.hist[i] } else { 0.0 };
            c.im = if i < b { self.e[i] } else { 0.0 };
        }
        self.fft.forward(s1);
        // s2 = Φ̂·Ŷ, s1 = Ê.
        let s2 = &mut self.s2;
        for k in 0..=m / 2 {
            let nk = (m - k) % m;
            let (y, e) = split_real_pair(s1[k], s1[nk]);
            s2[k] = self.phi_hat[k].times(y);
            s2[nk] = self.phi_hat[nk].times(y.conj());
            s1[k] = e;
            s1[nk] = e.conj();
        }
        // h_i = (φ ∗ y)[p − 1 + i], then s2 = FFT(h).
        self.fft.inverse_unscaled(s2);
        s2.copy_within(p - 1..p - 1 + b, 0);
        for c in &mut s2[..b] {
            c.im = 0.0;
        }
        for c in &mut s2[b..] {
            *c = C::default();
        }
        self.fft.forward(s2);
        // x = ψ ∗ (h + e).
        for ((h, e), psi) in s2.iter_mut().zip(s1.iter()).zip(&self.psi_hat) {
            *h = psi.times(C::new(h.re + e.re, h.im + e.im));
        }
        self.fft.inverse_unscaled(s2);
        let mut prev = self.hist[p - 1];
        for ((z, x), noise) in self.z.iter_mut().zip(&s2[..b]).zip(&self.noise) {
            *z = sigma_eps * (x.re + prev) + sigma_n * noise;
            prev = x.re;
        }
        for (h, x) in self.hist.iter_mut().zip(&s2[b - p..b]) {
            *h = x.re;
        }
        self.pos = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    /// The block generator gives the value-by-value recursion's series (same draws, same
    /// recursion) up to rounding, over several blocks, for both truncations PackMime uses.
    #[test]
    fn blocks_match_the_value_by_value_recursion() {
        for (d, n, theta) in [(0.33, 1000, 0.0), (0.31, 5000, 0.2), (0.45, 37, 0.5)] {
            let rng = Rng::stream(9, StreamKind::Test, n as u64);
            let mut fast = Fsd::new(d, n, theta, rng.clone());
            let mut slow = Fsd::warmed_up(d, n, theta, rng);
            assert!(fast.blocks.is_some() && slow.blocks.is_none());
            let mut worst = 0.0f64;
            for _ in 0..3 * 2 * n + 17 {
                let (a, b) = (fast.next_z(), slow.next_z());
                worst = worst.max((a - b).abs());
            }
            // Measured: 1e-14 to 3e-14.
            assert!(worst < 1e-12, "d {d} n {n}: max |Δz| = {worst:e}");
        }
    }

    /// The in-place Durbin–Levinson update gives the textbook coefficients.
    #[test]
    fn durbin_levinson_coefficients_match_the_closed_form() {
        // Hosking: φ_tj = −C(t, j)·Γ(j − d)Γ(t − d − j + 1)/(Γ(−d)Γ(t − d + 1)).
        let (d, n) = (0.3, 40);
        let f = Fsd::warmed_up(d, n, 0.5, Rng::stream(1, StreamKind::Test, 0));
        let t = n - 1;
        for j in 1..=t {
            let lc = ln_gamma(t as f64 + 1.0)
                - ln_gamma(j as f64 + 1.0)
                - ln_gamma((t - j) as f64 + 1.0);
            // Γ(j − d)/Γ(−d) = −(d)·Γ(j − d)/Γ(1 − d) (sign: Γ(−d) < 0).
            let lr = ln_gamma(j as f64 - d) - ln_gamma(1.0 - d)
                + d.ln()
                + ln_gamma((t - j) as f64 - d + 1.0)
                - ln_gamma(t as f64 - d + 1.0);
            let want = (lc + lr).exp();
            assert!(
                (f.phi[j - 1] / want - 1.0).abs() < 1e-9,
                "φ_{t},{j}: {} vs {want}",
                f.phi[j - 1]
            );
        }
    }

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
