//! Server delay [model-facts §8.3.8]: v = rweibull(0.63, 305), v = max(v, 10), delay = 1/v s
//! (at most 100 ms; P(delay = 100 ms) = 1 − exp(−(10/305)^0.63) ≈ 0.110).

use crate::rng::Rng;
use crate::workload::dist::variates::{pweibull, weibull};

const SHAPE: f64 = 0.63;
const SCALE: f64 = 305.0;
const V_MIN: f64 = 10.0;

/// Exact CDF of the delay in seconds: P(1/max(V, 10) ≤ t) = P(V ≥ 1/t) for t < 0.1.
pub fn server_delay_cdf(t: f64) -> f64 {
    if t >= 1.0 / V_MIN {
        1.0
    } else if t <= 0.0 {
        0.0
    } else {
        1.0 - pweibull(1.0 / t, SHAPE, SCALE)
    }
}

#[derive(Clone, Debug)]
pub struct PackMimeServerDelay {
    rng: Rng,
}

impl PackMimeServerDelay {
    pub fn new(rng: Rng) -> Self {
        PackMimeServerDelay { rng }
    }

    /// Next server delay in seconds.
    pub fn next_secs(&mut self) -> f64 {
        1.0 / weibull(&mut self.rng, SHAPE, SCALE).max(V_MIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn atom_at_100_ms_and_continuous_part() {
        let mut g = PackMimeServerDelay::new(Rng::stream(46, StreamKind::Test, 0));
        let n = 40_000;
        let xs: Vec<f64> = (0..n).map(|_| g.next_secs()).collect();
        let atom = xs.iter().filter(|&&x| x == 0.1).count() as f64 / n as f64;
        // P = 0.110; sd of the share 0.0016; allow 5 sd.
        assert!((atom - 0.110).abs() < 0.008, "P(100 ms) = {atom}");
        let p_atom = 1.0 - server_delay_cdf(0.1 - 1e-12);
        let body: Vec<f64> = xs.into_iter().filter(|&x| x < 0.1).collect();
        assert_ks(
            &body,
            |t| server_delay_cdf(t) / (1.0 - p_atom),
            "server delay below 100 ms",
        );
        // Median ≈ 5.9 ms [§8.3.8].
        assert!((server_delay_cdf(0.0059) - 0.5).abs() < 0.01);
    }
}
