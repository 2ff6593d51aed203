//! Special functions: log-gamma, gamma, the standard normal CDF, PackMime's helpers.

/// ln Γ(x) for x > 0, by the Lanczos approximation (g = 7, 9 coefficients; relative error
/// about 1e-15), with the reflection formula below 0.5.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Γ(x) for x > 0.
pub fn gamma_fn(x: f64) -> f64 {
    ln_gamma(x).exp()
}

/// Complementary error function, Chebyshev fit of Numerical Recipes' `erfcc` (fractional
/// error below 1.2e-7 everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Standard normal CDF: Φ(z) = erfc(−z/√2)/2.
pub fn norm_cdf(z: f64) -> f64 {
    0.5 * erfc(-z * std::f64::consts::FRAC_1_SQRT_2)
}

/// PackMime's base-2 inverse logit: 2^x / (1 + 2^x) [model-facts §8.3.2].
pub fn logit2_inv(x: f64) -> f64 {
    let e = x.exp2();
    e / (1.0 + e)
}

/// PackMime's piecewise-linear table lookup `FX(X, Y)(x)` [model-facts §8.3.2]: the first
/// segment `i ≤ n − 3` with `x < X[i+1]` is used, otherwise the last segment; inputs outside
/// the table are extrapolated with the end segments' slopes (never clamped).
pub fn fx(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    debug_assert!(xs.len() == ys.len() && xs.len() >= 2);
    let n = xs.len();
    // partition_point gives the first i with X[i+1] > x among segments 0..=n-2.
    let i = xs[1..n - 1].partition_point(|&b| b <= x).min(n - 2);
    ys[i] + (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) * (x - xs[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_and_normal_known_values() {
        assert!((gamma_fn(5.0) - 24.0).abs() < 1e-9);
        assert!((gamma_fn(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
        assert!((gamma_fn(2.5) - 0.75 * std::f64::consts::PI.sqrt()).abs() < 1e-12);
        assert!((norm_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((norm_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((norm_cdf(-3.0) - 0.001_349_898).abs() < 1e-7);
    }

    #[test]
    fn fx_interpolates_and_extrapolates() {
        let xs = [0.0, 1.0, 3.0];
        let ys = [0.0, 2.0, 3.0];
        assert_eq!(fx(&xs, &ys, 0.5), 1.0);
        assert_eq!(fx(&xs, &ys, 2.0), 2.5);
        assert_eq!(fx(&xs, &ys, -1.0), -2.0); // first slope
        assert_eq!(fx(&xs, &ys, 5.0), 4.0); // last slope
    }
}
