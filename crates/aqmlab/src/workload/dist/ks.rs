//! One-sample Kolmogorov–Smirnov test for the distribution tests.
//!
//! D = sup_x |F_n(x) − F(x)|. Asymptotic critical value at α = 0.001:
//! P(√n·D > 1.9495) = 0.001 (Kolmogorov distribution), so reject when D > 1.9495/√n.
//! `F` should be continuous: at an atom of mass m the statistic is overstated by up to m, so
//! only use it where atoms are far below the critical value (Mah's tables: 0.0027 at most).

/// The KS statistic of `xs` against `cdf`.
pub fn ks_statistic(xs: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).expect("NaN in sample"));
    let n = v.len() as f64;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < v.len() {
        // Step over ties so F_n jumps once per distinct value.
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[i] {
            j += 1;
        }
        let f = cdf(v[i]);
        d = d
            .max((f - i as f64 / n).abs())
            .max(((j + 1) as f64 / n - f).abs());
        i = j + 1;
    }
    d
}

/// Panics when the sample fails the KS test at α = 0.001.
pub fn assert_ks(xs: &[f64], cdf: impl Fn(f64) -> f64, what: &str) {
    let d = ks_statistic(xs, cdf);
    let crit = 1.9495 / (xs.len() as f64).sqrt();
    assert!(
        d < crit,
        "{what}: KS D = {d:.5} ≥ critical {crit:.5} (n = {})",
        xs.len()
    );
}
