//! Parametric variates drawn from an `Rng`: Weibull, gamma (Marsaglia–Tsang), normal.

use crate::rng::Rng;

/// Weibull with shape `k` and scale `lambda`, by inversion: λ·(−ln U)^{1/k} [model-facts
/// §8.3.2 `rweibull`]. U on (0, 1] so the result is finite.
#[inline]
pub fn weibull(rng: &mut Rng, k: f64, lambda: f64) -> f64 {
    lambda * (-rng.uniform_pos().ln()).powf(1.0 / k)
}

/// Weibull quantile: λ·(−ln(1 − p))^{1/k} [model-facts §8.3.2 `qweibull`].
#[inline]
pub fn qweibull(p: f64, k: f64, lambda: f64) -> f64 {
    lambda * (-(1.0 - p).ln()).powf(1.0 / k)
}

/// Weibull CDF: 1 − exp(−(x/λ)^k).
#[inline]
pub fn pweibull(x: f64, k: f64, lambda: f64) -> f64 {
    if x <= 0.0 {
        0.0
    } else {
        1.0 - (-(x / lambda).powf(k)).exp()
    }
}

/// Gamma with shape `k` and scale `theta` (mean kθ) by Marsaglia & Tsang (ACM TOMS 26(3),
/// 2000): d = k − 1/3, c = 1/√(9d); accept v = (1 + c·x)³ when
/// ln U < x²/2 + d − d·v + d·ln v. Shapes below 1 use Gamma(k + 1)·U^{1/k}.
pub fn gamma(rng: &mut Rng, k: f64, theta: f64) -> f64 {
    if k < 1.0 {
        let boost = rng.uniform_pos().powf(1.0 / k);
        return gamma(rng, k + 1.0, theta) * boost;
    }
    let d = k - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = rng.normal();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = rng.uniform_pos();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * theta;
        }
    }
}

/// Normal with mean `mu` and variance `var`.
#[inline]
pub fn normal_mv(rng: &mut Rng, mu: f64, var: f64) -> f64 {
    mu + var.sqrt() * rng.normal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn weibull_matches_its_cdf() {
        let mut r = Rng::stream(11, StreamKind::Test, 0);
        let xs: Vec<f64> = (0..20_000).map(|_| weibull(&mut r, 0.63, 305.0)).collect();
        assert_ks(&xs, |x| pweibull(x, 0.63, 305.0), "weibull(0.63, 305)");
        assert!((qweibull(pweibull(3.0, 0.7, 2.0), 0.7, 2.0) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn gamma_moments_for_the_packmime_shapes() {
        // Gamma(k, θ): mean kθ, variance kθ². With n = 40 000 the sample mean's sd is
        // sqrt(k)θ/200; allow 5 sd. Variance within 5 %.
        let mut r = Rng::stream(12, StreamKind::Test, 0);
        for &(k, theta) in &[(1.85, 1.0 / 1.85), (3.22, 1.0 / 3.22), (0.5, 2.0)] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(&mut r, k, theta)).collect();
            let m = xs.iter().sum::<f64>() / n as f64;
            let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
            let sd_mean = k.sqrt() * theta / (n as f64).sqrt();
            assert!((m - k * theta).abs() < 5.0 * sd_mean, "k={k} mean {m}");
            assert!(
                (v / (k * theta * theta) - 1.0).abs() < 0.05,
                "k={k} var {v}"
            );
        }
    }
}
