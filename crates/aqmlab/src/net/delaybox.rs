//! Per-connection minimum RTT, as dummynet pipes per host pair or ns-2's DelayBox: each
//! connection draws an extra round-trip delay when it starts, and every packet of the
//! connection is delayed by half of it at the link leaving its sending host (so data and ACKs
//! each carry half, and the connection's base RTT is the topology's propagation RTT plus the
//! sample).

use crate::config::RttConfig;
use crate::rng::Rng;
use crate::units::{millis, Time};
use crate::workload::dist::EmpiricalCdf;

#[derive(Clone, Debug)]
pub enum RttSampler {
    None,
    Constant(Time),
    Uniform(f64, f64),
    /// RTT in ms, inverse-transform sampled with linear interpolation.
    Empirical(EmpiricalCdf),
    Matrix(Vec<Vec<Time>>),
}

impl RttSampler {
    pub fn new(cfg: &RttConfig) -> Self {
        match cfg {
            RttConfig::None => RttSampler::None,
            RttConfig::Constant { rtt_ms } => RttSampler::Constant(millis(*rtt_ms)),
            RttConfig::Uniform { min_ms, max_ms } => RttSampler::Uniform(*min_ms, *max_ms),
            // The scenario validated the points (increasing, last probability 1).
            RttConfig::Empirical { points, .. } => RttSampler::Empirical(
                EmpiricalCdf::from_points(points, false).expect("validated RTT CDF"),
            ),
            RttConfig::Matrix { rtt_ms } => RttSampler::Matrix(
                rtt_ms
                    .iter()
                    .map(|r| r.iter().map(|&v| millis(v)).collect())
                    .collect(),
            ),
        }
    }

    /// Extra RTT for a connection from the `client`-th client host to the `server`-th server
    /// host of their sides; `rng` is the connection's own delay-box stream.
    pub fn sample(&self, rng: &mut Rng, client: u32, server: u32) -> Time {
        match self {
            RttSampler::None => 0,
            RttSampler::Constant(t) => *t,
            RttSampler::Uniform(lo, hi) => millis(rng.uniform_range(*lo, *hi)),
            RttSampler::Empirical(cdf) => millis(cdf.inverse_cdf(rng.uniform())),
            RttSampler::Matrix(m) => {
                let row = &m[client as usize % m.len()];
                row[server as usize % row.len()]
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    #[test]
    fn empirical_rtt_interpolates_between_points() {
        let s = RttSampler::new(&RttConfig::Empirical {
            points: vec![(10.0, 0.0), (20.0, 0.5), (60.0, 1.0)],
            source: String::new(),
        });
        let mut r = Rng::stream(4, StreamKind::Test, 0);
        let xs: Vec<f64> = (0..40_000)
            .map(|_| s.sample(&mut r, 0, 0) as f64 / 1e6)
            .collect();
        let below_20 = xs.iter().filter(|&&x| x < 20.0).count() as f64 / xs.len() as f64;
        assert!((below_20 - 0.5).abs() < 0.015, "{below_20}");
        assert!(xs.iter().all(|&x| (10.0..=60.0).contains(&x)));
    }

    #[test]
    fn uniform_rtt_mean_and_range() {
        let s = RttSampler::new(&RttConfig::Uniform {
            min_ms: 10.0,
            max_ms: 150.0,
        });
        let mut r = Rng::stream(1, StreamKind::Test, 0);
        let xs: Vec<Time> = (0..50_000).map(|_| s.sample(&mut r, 0, 0)).collect();
        let mean = xs.iter().sum::<Time>() as f64 / xs.len() as f64 / 1e6;
        assert!(xs.iter().all(|&x| (10_000_000..=150_000_000).contains(&x)));
        // sd of the mean = 140/sqrt(12·50000) = 0.18 ms
        assert!((mean - 80.0).abs() < 1.0, "{mean}");
    }

    #[test]
    fn matrix_is_indexed_by_host_pair() {
        let s = RttSampler::new(&RttConfig::Matrix {
            rtt_ms: vec![vec![1.0, 2.0], vec![3.0, 4.0]],
        });
        let mut r = Rng::stream(1, StreamKind::Test, 0);
        assert_eq!(s.sample(&mut r, 1, 0), 3_000_000);
        assert_eq!(s.sample(&mut r, 2, 3), 2_000_000);
    }
}
