//! Radix-2 complex FFT and FFT-based real convolution, for the FSD block generator
//! (`fsd.rs`). Plain scalar arithmetic in a fixed order (no fused multiply-add, no
//! SIMD chosen at run time), so every machine computes the same bits.

use std::f64::consts::TAU;

/// A complex number.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct C {
    pub re: f64,
    pub im: f64,
}

impl C {
    #[inline]
    pub fn new(re: f64, im: f64) -> Self {
        C { re, im }
    }

    #[inline]
    pub fn times(self, o: C) -> C {
        C::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }

    #[inline]
    pub fn conj(self) -> C {
        C::new(self.re, -self.im)
    }
}

/// Transforms of one power-of-two size `n`.
#[derive(Clone, Debug)]
pub struct Fft {
    n: usize,
    /// Twiddles exp(−2πi·j/len), j < len/2, for len = 2, 4, …, n, stage after stage
    /// (stage `len` starts at index len/2 − 1): each stage reads them contiguously.
    twiddles: Vec<C>,
    /// Bit-reversal permutation.
    rev: Vec<u32>,
}

impl Fft {
    pub fn new(n: usize) -> Self {
        assert!(
            n.is_power_of_two() && n >= 2,
            "FFT size must be a power of two"
        );
        let bits = n.trailing_zeros();
        let rev = (0..n as u32)
            .map(|i| i.reverse_bits() >> (32 - bits))
            .collect();
        let mut twiddles = Vec::with_capacity(n - 1);
        let mut len = 2;
        while len <= n {
            for j in 0..len / 2 {
                let a = TAU * j as f64 / len as f64;
                twiddles.push(C::new(a.cos(), -a.sin()));
            }
            len *= 2;
        }
        Fft { n, twiddles, rev }
    }

    pub fn size(&self) -> usize {
        self.n
    }

    /// In place: A_k = Σ_m a_m·exp(−2πi·km/n).
    pub fn forward(&self, a: &mut [C]) {
        self.transform::<false>(a);
    }

    /// In place, without the 1/n: a_m = Σ_k A_k·exp(+2πi·km/n).
    pub fn inverse_unscaled(&self, a: &mut [C]) {
        self.transform::<true>(a);
    }

    fn transform<const INVERSE: bool>(&self, a: &mut [C]) {
        assert_eq!(a.len(), self.n);
        for i in 0..self.n {
            let j = self.rev[i] as usize;
            if i < j {
                a.swap(i, j);
            }
        }
        let mut half = 1;
        while half < self.n {
            let tw = &self.twiddles[half - 1..2 * half - 1];
            for block in a.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for ((u, v), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let w = if INVERSE { w.conj() } else { w };
                    let t = v.times(w);
                    let x = *u;
                    *u = C::new(x.re + t.re, x.im + t.im);
                    *v = C::new(x.re - t.re, x.im - t.im);
                }
            }
            half *= 2;
        }
    }
}

/// Spectra of two real sequences packed as `z = x + i·y` and transformed together:
/// (X_k, Y_k) from Z_k and Z_{n−k}.
#[inline]
pub fn split_real_pair(zk: C, znk: C) -> (C, C) {
    let c = znk.conj();
    let x = C::new(0.5 * (zk.re + c.re), 0.5 * (zk.im + c.im));
    // (z_k − conj z_{n−k}) / 2i
    let d = C::new(zk.re - c.re, zk.im - c.im);
    let y = C::new(0.5 * d.im, -0.5 * d.re);
    (x, y)
}

/// The first `out_len` terms of the linear convolution of two real sequences.
pub fn convolve(a: &[f64], b: &[f64], out_len: usize) -> Vec<f64> {
    if a.is_empty() || b.is_empty() {
        return vec![0.0; out_len];
    }
    let n = (a.len() + b.len() - 1).next_power_of_two().max(2);
    let fft = Fft::new(n);
    let mut z = vec![C::default(); n];
    for (i, &x) in a.iter().enumerate() {
        z[i].re = x;
    }
    for (i, &y) in b.iter().enumerate() {
        z[i].im = y;
    }
    fft.forward(&mut z);
    let mut p = vec![C::default(); n];
    for k in 0..n {
        let (x, y) = split_real_pair(z[k], z[(n - k) % n]);
        p[k] = x.times(y);
    }
    fft.inverse_unscaled(&mut p);
    let scale = 1.0 / n as f64;
    (0..out_len)
        .map(|i| if i < n { p[i].re * scale } else { 0.0 })
        .collect()
}

/// The first `len` coefficients of 1/f for a power series f with f_0 = 1, by Newton's
/// iteration g ← g·(2 − f·g), doubling the number of correct terms each step.
pub fn series_inverse(f: &[f64], len: usize) -> Vec<f64> {
    assert!(!f.is_empty() && f[0] == 1.0, "series must start with 1");
    let mut g = vec![1.0];
    while g.len() < len {
        let m = (2 * g.len()).min(len);
        let mut t = convolve(&f[..f.len().min(m)], &g, m);
        for x in &mut t {
            *x = -*x;
        }
        t[0] += 2.0;
        g = convolve(&g, &t, m);
    }
    g.truncate(len);
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};

    #[test]
    fn forward_matches_the_definition_and_inverse_undoes_it() {
        let n = 64;
        let mut r = Rng::stream(1, StreamKind::Test, 0);
        let a: Vec<C> = (0..n).map(|_| C::new(r.normal(), r.normal())).collect();
        let fft = Fft::new(n);
        let mut f = a.clone();
        fft.forward(&mut f);
        for (k, fk) in f.iter().enumerate() {
            let mut s = C::default();
            for (m, am) in a.iter().enumerate() {
                let ang = -TAU * (k * m % n) as f64 / n as f64;
                let t = am.times(C::new(ang.cos(), ang.sin()));
                s = C::new(s.re + t.re, s.im + t.im);
            }
            assert!((s.re - fk.re).abs() < 1e-12 && (s.im - fk.im).abs() < 1e-12);
        }
        fft.inverse_unscaled(&mut f);
        for (x, y) in a.iter().zip(&f) {
            assert!((x.re - y.re / n as f64).abs() < 1e-13);
            assert!((x.im - y.im / n as f64).abs() < 1e-13);
        }
    }

    #[test]
    fn convolution_and_series_inverse_match_direct_sums() {
        let mut r = Rng::stream(2, StreamKind::Test, 0);
        let a: Vec<f64> = (0..300).map(|_| r.normal()).collect();
        let b: Vec<f64> = (0..77).map(|_| r.normal()).collect();
        let c = convolve(&a, &b, 400);
        for (k, ck) in c.iter().enumerate() {
            let s: f64 = (0..=k)
                .filter(|&i| i < a.len() && k - i < b.len())
                .map(|i| a[i] * b[k - i])
                .sum();
            assert!((s - ck).abs() < 1e-11, "term {k}: {s} vs {ck}");
        }
        // 1/(1 − 0.5z − 0.3z²) by the recursion g_k = 0.5 g_{k−1} + 0.3 g_{k−2}.
        let g = series_inverse(&[1.0, -0.5, -0.3], 100);
        let mut want = vec![1.0, 0.5];
        for k in 2..100 {
            want.push(0.5 * want[k - 1] + 0.3 * want[k - 2]);
        }
        for (k, (x, y)) in g.iter().zip(&want).enumerate() {
            // FFT rounding is relative to the largest term (1).
            assert!((x - y).abs() < 1e-13, "term {k}: {x} vs {y}");
        }
    }
}
