//! File-size laws of finite transfers (`kind = "ftp"`): a constant, an exponential, a Pareto
//! (heavy tail, as measured for Web and FTP transfers by Crovella & Bestavros 1997 and Paxson
//! & Floyd 1995) or an empirical CDF. Sizes are whole bytes, at least 1.

use serde::{Deserialize, Serialize};

use crate::config::error::ConfigError;
use crate::rng::Rng;
use crate::workload::dist::EmpiricalCdf;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FileSize {
    Constant {
        bytes: u64,
    },
    Exponential {
        mean_bytes: f64,
    },
    /// Pareto with shape `shape` > 1 and the given mean: scale `k = mean (shape − 1) / shape`,
    /// `P(X > x) = (k / x)^shape` for `x ≥ k`.
    Pareto {
        mean_bytes: f64,
        shape: f64,
    },
    /// `(bytes, cumulative probability)` points, both non-decreasing, the last probability 1;
    /// inverse transform with linear interpolation, rounded up to whole bytes. The Python
    /// layer also accepts `file = "sizes.csv"` (two columns) and fills `points` from it.
    Empirical {
        points: Vec<(f64, f64)>,
        #[serde(default)]
        source: String,
    },
}

impl FileSize {
    /// Checks the law's parameters; `field` is the path of the `size` table.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v >= 1.0 {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{field}.{name}"),
                    v,
                    "a number of bytes ≥ 1",
                ))
            }
        };
        match self {
            FileSize::Constant { bytes } => {
                if *bytes == 0 {
                    return Err(ConfigError::new(
                        format!("{field}.bytes"),
                        0,
                        "an integer ≥ 1",
                    ));
                }
            },
            FileSize::Exponential { mean_bytes } => positive("mean_bytes", *mean_bytes)?,
            FileSize::Pareto { mean_bytes, shape } => {
                positive("mean_bytes", *mean_bytes)?;
                if !(shape.is_finite() && *shape > 1.0) {
                    return Err(ConfigError::new(
                        format!("{field}.shape"),
                        shape,
                        "a number > 1 (the mean is infinite otherwise)",
                    ));
                }
            },
            FileSize::Empirical { points, .. } => {
                if let Some((i, p)) = points
                    .iter()
                    .enumerate()
                    .find(|(_, p)| !(p.0.is_finite() && p.0 >= 0.0))
                {
                    return Err(ConfigError::new(
                        format!("{field}.points[{i}]"),
                        format!("{p:?}"),
                        "a size ≥ 0 bytes",
                    ));
                }
                EmpiricalCdf::from_points(points, true).map_err(|e| {
                    ConfigError::new(
                        format!("{field}.points[{}]", e.line.saturating_sub(1)),
                        e.message,
                        "(bytes, cdf) points with both non-decreasing and the last cdf = 1",
                    )
                })?;
            },
        }
        Ok(())
    }

    /// A sampler of this (validated) law.
    pub fn sampler(&self) -> FileSizeSampler {
        match self {
            FileSize::Constant { bytes } => FileSizeSampler::Constant(*bytes),
            FileSize::Exponential { mean_bytes } => FileSizeSampler::Exponential(*mean_bytes),
            FileSize::Pareto { mean_bytes, shape } => FileSizeSampler::Pareto {
                scale: mean_bytes * (shape - 1.0) / shape,
                shape: *shape,
            },
            FileSize::Empirical { points, .. } => FileSizeSampler::Empirical(
                EmpiricalCdf::from_points(points, true).expect("validated CDF"),
            ),
        }
    }
}

#[derive(Clone, Debug)]
pub enum FileSizeSampler {
    Constant(u64),
    Exponential(f64),
    Pareto { scale: f64, shape: f64 },
    Empirical(EmpiricalCdf),
}

impl FileSizeSampler {
    /// The next size in bytes (≥ 1). Continuous laws are rounded up to whole bytes.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match self {
            FileSizeSampler::Constant(b) => return *b,
            FileSizeSampler::Exponential(mean) => rng.exponential(*mean),
            // Inverse transform: x = k · U^(−1/α), U uniform on (0, 1].
            FileSizeSampler::Pareto { scale, shape } => {
                scale * rng.uniform_pos().powf(-1.0 / shape)
            },
            FileSizeSampler::Empirical(cdf) => cdf.sample(rng),
        };
        (x.ceil() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    fn draws(law: &FileSize, n: usize) -> Vec<f64> {
        let s = law.sampler();
        let mut rng = Rng::stream(3, StreamKind::Test, 41);
        (0..n).map(|_| s.sample(&mut rng) as f64).collect()
    }

    #[test]
    fn pareto_sizes_follow_their_law() {
        let (mean, shape) = (100_000.0, 1.5);
        let xs = draws(
            &FileSize::Pareto {
                mean_bytes: mean,
                shape,
            },
            20_000,
        );
        let k = mean * (shape - 1.0) / shape;
        // Sizes are rounded up to whole bytes: compare with the law of ⌈X⌉ (within one byte).
        assert_ks(
            &xs,
            |x| {
                if x < k {
                    0.0
                } else {
                    1.0 - (k / x).powf(shape)
                }
            },
            "pareto sizes",
        );
        assert!(xs.iter().all(|&x| x >= k.ceil()));
    }

    #[test]
    fn exponential_sizes_have_their_mean() {
        let xs = draws(
            &FileSize::Exponential {
                mean_bytes: 50_000.0,
            },
            40_000,
        );
        assert_ks(&xs, |x| 1.0 - (-x / 50_000.0).exp(), "exponential sizes");
    }

    #[test]
    fn constant_and_empirical_sizes() {
        let xs = draws(&FileSize::Constant { bytes: 100_000 }, 10);
        assert!(xs.iter().all(|&x| x == 100_000.0));
        let law = FileSize::Empirical {
            points: vec![(1000.0, 0.5), (3000.0, 1.0)],
            source: String::new(),
        };
        let xs = draws(&law, 20_000);
        assert!(xs.iter().all(|&x| (1000.0..=3000.0).contains(&x)));
        let below_2000 = xs.iter().filter(|&&x| x <= 2000.0).count() as f64 / xs.len() as f64;
        assert!(
            (below_2000 - 0.75).abs() < 0.02,
            "P(X ≤ 2000) = {below_2000}"
        );
    }

    #[test]
    fn bad_laws_name_their_field() {
        let e = FileSize::Pareto {
            mean_bytes: 1e5,
            shape: 1.0,
        }
        .validate("traffic[1].size")
        .unwrap_err();
        assert_eq!(e.field, "traffic[1].size.shape");
        let e = FileSize::Constant { bytes: 0 }.validate("f").unwrap_err();
        assert_eq!(e.field, "f.bytes");
    }
}
