//! Empirical distribution given by CDF points, sampled by inverse transform with linear
//! interpolation between points, as GloMoSim samples Mah's tables [model-facts §8.1].
//!
//! Text format: lines starting with `#` are comments (the first ones name the source); every
//! other non-blank line is `value cdf`, values non-decreasing, cdf strictly increasing in
//! (0, 1] and ending at 1.

use crate::rng::Rng;
use std::fmt;

/// An error in a CDF data file, with its 1-based line number.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Points `(v_i, c_i)` with `c_i = P(X ≤ v_i)`.
#[derive(Clone, Debug)]
pub struct EmpiricalCdf {
    values: Vec<f64>,
    cdfs: Vec<f64>,
    /// Round samples up to the next integer (GloMoSim does so for counts and byte sizes).
    round_up: bool,
}

impl EmpiricalCdf {
    /// Builds from points; checks the same rules as `parse`.
    pub fn from_points(points: &[(f64, f64)], round_up: bool) -> Result<Self, ParseError> {
        let mut e = EmpiricalCdf {
            values: Vec::new(),
            cdfs: Vec::new(),
            round_up,
        };
        for (i, &(v, c)) in points.iter().enumerate() {
            e.push(v, c, i + 1)?;
        }
        e.finish(points.len())?;
        Ok(e)
    }

    /// Parses the text format described in the module documentation.
    pub fn parse(text: &str, round_up: bool) -> Result<Self, ParseError> {
        let mut e = EmpiricalCdf {
            values: Vec::new(),
            cdfs: Vec::new(),
            round_up,
        };
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            last_line = i + 1;
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |m: String| ParseError {
                line: i + 1,
                message: m,
            };
            let mut it = line.split_whitespace();
            let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
                return Err(err(format!("expected `value cdf`, found `{line}`")));
            };
            let v: f64 = a.parse().map_err(|_| err(format!("bad value `{a}`")))?;
            let c: f64 = b
                .parse()
                .map_err(|_| err(format!("bad cumulative probability `{b}`")))?;
            e.push(v, c, i + 1)?;
        }
        e.finish(last_line)?;
        Ok(e)
    }

    fn push(&mut self, v: f64, c: f64, line: usize) -> Result<(), ParseError> {
        let err = |m: String| Err(ParseError { line, message: m });
        if !v.is_finite() {
            return err(format!("value {v} is not finite"));
        }
        // A first point at probability 0 names the minimum value.
        if !(0.0..=1.0).contains(&c) {
            return err(format!("cumulative probability {c} outside [0, 1]"));
        }
        if let (Some(&pv), Some(&pc)) = (self.values.last(), self.cdfs.last()) {
            if v < pv {
                return err(format!("value {v} decreases (previous {pv})"));
            }
            if c <= pc {
                return err(format!(
                    "cumulative probability {c} does not increase (previous {pc})"
                ));
            }
        }
        self.values.push(v);
        self.cdfs.push(c);
        Ok(())
    }

    fn finish(&mut self, line: usize) -> Result<(), ParseError> {
        match self.cdfs.last() {
            None => Err(ParseError {
                line,
                message: "no data points".into(),
            }),
            Some(&c) if (c - 1.0).abs() > 1e-9 => Err(ParseError {
                line,
                message: format!("last cumulative probability is {c}, not 1"),
            }),
            Some(_) => {
                *self.cdfs.last_mut().expect("non-empty") = 1.0;
                Ok(())
            },
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn min(&self) -> f64 {
        self.values[0]
    }

    /// The points `(v_i, c_i)`.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.values.iter().copied().zip(self.cdfs.iter().copied())
    }

    pub fn max(&self) -> f64 {
        self.values[self.values.len() - 1]
    }

    /// Inverse CDF at `u ∈ [0, 1)`, rounded up when `round_up` (see `inverse_cdf`).
    pub fn quantile(&self, u: f64) -> f64 {
        let x = self.inverse_cdf(u);
        if self.round_up {
            x.ceil()
        } else {
            x
        }
    }

    /// Inverse CDF at `u ∈ [0, 1)` before rounding [model-facts §8.1, GloMoSim procedure]:
    /// below the first cumulative probability return the first value; else find
    /// `c_i ≤ u < c_{i+1}` and return `v_i + (v_{i+1} − v_i)·(u − c_i)/(c_{i+1} − c_i)`.
    pub fn inverse_cdf(&self, u: f64) -> f64 {
        if u < self.cdfs[0] {
            self.values[0]
        } else {
            // First index with c > u, minus one: c_i ≤ u < c_{i+1}. u < 1 = c_last keeps i + 1
            // in range; u ≥ 1 returns the maximum.
            let j = self.cdfs.partition_point(|&c| c <= u);
            if j >= self.cdfs.len() {
                self.max()
            } else {
                let i = j - 1;
                let (v0, v1, c0, c1) = (
                    self.values[i],
                    self.values[i + 1],
                    self.cdfs[i],
                    self.cdfs[j],
                );
                v0 + (v1 - v0) * (u - c0) / (c1 - c0)
            }
        }
    }

    /// One sample by inverse transform of a uniform on [0, 1).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        self.quantile(rng.uniform())
    }

    /// Exact CDF of `sample` before rounding: an atom `c_0` at `v_0`, then linear between
    /// points. With `round_up`, P(sample ≤ n) equals this at integer n.
    pub fn cdf(&self, x: f64) -> f64 {
        if x < self.values[0] {
            return 0.0;
        }
        let j = self.values.partition_point(|&v| v <= x);
        if j >= self.values.len() {
            return 1.0;
        }
        let i = j - 1;
        let (v0, v1, c0, c1) = (self.values[i], self.values[j], self.cdfs[i], self.cdfs[j]);
        c0 + (c1 - c0) * (x - v0) / (v1 - v0)
    }

    /// Mean of `sample` before rounding (trapezoids between points plus the atom at v_0).
    pub fn mean(&self) -> f64 {
        let mut m = self.values[0] * self.cdfs[0];
        for i in 1..self.values.len() {
            m += (self.cdfs[i] - self.cdfs[i - 1]) * 0.5 * (self.values[i] + self.values[i - 1]);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn parse_reports_errors_with_line_numbers() {
        let ok = "# source\n1 0.5\n3 1\n";
        let e = EmpiricalCdf::parse(ok, false).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e.quantile(0.25), 1.0); // below the first cdf: the first value
        assert_eq!(e.quantile(0.75), 2.0);
        assert_eq!(e.cdf(2.0), 0.75);
        let bad = |t: &str| EmpiricalCdf::parse(t, false).unwrap_err();
        assert_eq!(bad("1 0.5\n0 1\n").line, 2);
        assert_eq!(bad("1 0.5\n2 0.5\n3 1\n").line, 2);
        assert_eq!(bad("1 0.5\n2 0.9\n").line, 2);
        assert_eq!(bad("1 x\n").line, 1);
        assert_eq!(bad("1 0.5 7\n").line, 1);
        assert_eq!(bad("# only comments\n").message, "no data points");
        assert_eq!(bad("1 1.5\n").line, 1);
    }

    #[test]
    fn rounding_up_gives_integer_atoms() {
        let e = EmpiricalCdf::parse("1 0.4\n2 0.7\n4 1\n", true).unwrap();
        let mut r = Rng::stream(3, StreamKind::Test, 0);
        let n = 40_000;
        let mut counts = [0u32; 5];
        for _ in 0..n {
            counts[e.sample(&mut r) as usize] += 1;
        }
        // P(1) = 0.4, P(2) = 0.3, P(3) = P(4) = 0.15; 5 sd of a binomial share is < 0.013.
        for (k, p) in [(1, 0.4), (2, 0.3), (3, 0.15), (4, 0.15)] {
            assert!(
                (counts[k] as f64 / n as f64 - p).abs() < 0.013,
                "{k}: {counts:?}"
            );
        }
    }

    #[test]
    fn continuous_samples_pass_ks_against_cdf() {
        let e = EmpiricalCdf::parse("0 0.1\n10 0.5\n11 0.9\n100 1\n", false).unwrap();
        let mut r = Rng::stream(4, StreamKind::Test, 0);
        let xs: Vec<f64> = (0..20_000)
            .map(|_| e.sample(&mut r))
            .filter(|&x| x > 0.0)
            .collect();
        // Condition on leaving the atom at 0 (mass 0.1): F(x | X > 0) = (F(x) − 0.1)/0.9.
        assert_ks(&xs, |x| (e.cdf(x) - 0.1) / 0.9, "toy table");
    }
}
