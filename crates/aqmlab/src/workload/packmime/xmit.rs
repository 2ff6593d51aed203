//! DelayBox per-flow delays, `PackMimeHTTPXmit` [model-facts §8.3.9]: FSD then the SHORT
//! (client side) or LONG (server side) table, raised to the 5th or 3rd power, in ms.

use super::tables::{LONG_RTT_INVCDF_X, LONG_RTT_INVCDF_Y, SHORT_RTT_INVCDF_X, SHORT_RTT_INVCDF_Y};
use crate::rng::Rng;
use crate::workload::dist::special::{fx, logit2_inv};
use crate::workload::dist::Fsd;

/// Which DelayBox: type 0 on the client cloud's side, type 1 on the server cloud's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitSide {
    Client,
    Server,
}

impl XmitSide {
    /// (d, θ intercept, θ slope, output power, table) [§8.3.9, Appendix A].
    fn params(self) -> (f64, f64, f64, i32, &'static [f64], &'static [f64]) {
        match self {
            XmitSide::Client => (
                0.31,
                -0.445,
                0.554,
                5,
                &SHORT_RTT_INVCDF_X,
                &SHORT_RTT_INVCDF_Y,
            ),
            XmitSide::Server => (
                0.32,
                -0.053,
                0.396,
                3,
                &LONG_RTT_INVCDF_X,
                &LONG_RTT_INVCDF_Y,
            ),
        }
    }

    /// RTT sample (ms) at marginal probability `p`: FX(−log10(1 − p))^power.
    pub fn rtt_ms_at(self, p: f64) -> f64 {
        let (_, _, _, power, xs, ys) = self.params();
        fx(xs, ys, -(1.0 - p).log10()).powi(power)
    }
}

#[derive(Clone, Debug)]
pub struct PackMimeXmit {
    side: XmitSide,
    fsd: Fsd,
}

impl PackMimeXmit {
    pub fn new(side: XmitSide, rate: f64, rng: Rng) -> Self {
        let (d, a, b, ..) = side.params();
        PackMimeXmit {
            side,
            fsd: Fsd::new(d, 1000, logit2_inv(a + b * rate.log2()), rng),
        }
    }

    /// Next RTT sample, ms (y^5 or y^3).
    pub fn next_rtt_ms(&mut self) -> f64 {
        self.side.rtt_ms_at(self.fsd.next_u())
    }

    /// Next one-way delay, ms: half the RTT sample, which is what the ns-2 random variable
    /// returns and DelayBox applies in each direction.
    pub fn next_one_way_ms(&mut self) -> f64 {
        0.5 * self.next_rtt_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn medians_and_tails_match_section_8_3_9() {
        // Medians 1.5 ms (type 0) and 57.9 ms (type 1); 90 %: 35.9 and 114 ms.
        assert!((XmitSide::Client.rtt_ms_at(0.5) - 1.47).abs() < 0.05);
        assert!((XmitSide::Server.rtt_ms_at(0.5) - 57.9).abs() < 0.3);
        assert!((XmitSide::Client.rtt_ms_at(0.9) / 35.9 - 1.0).abs() < 0.02);
        assert!((XmitSide::Server.rtt_ms_at(0.9) / 114.0 - 1.0).abs() < 0.02);
    }

    #[test]
    fn marginal_passes_ks_with_iid_input() {
        // With i.i.d. uniforms the output CDF is P(y^power ≤ r) = 1 − 10^{−FX⁻¹(r^{1/power})};
        // invert the (increasing) table by bisection.
        let mut r = Rng::stream(47, StreamKind::Test, 0);
        for side in [XmitSide::Client, XmitSide::Server] {
            let (_, _, _, power, xs, ys) = side.params();
            let sample: Vec<f64> = (0..20_000).map(|_| side.rtt_ms_at(r.uniform())).collect();
            let cdf = |rtt: f64| {
                let y = rtt.powf(1.0 / power as f64);
                let (mut lo, mut hi) = (-50.0, 50.0);
                for _ in 0..200 {
                    let mid = 0.5 * (lo + hi);
                    if fx(xs, ys, mid) < y {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                (1.0 - 10f64.powf(-0.5 * (lo + hi))).clamp(0.0, 1.0)
            };
            assert_ks(&sample, cdf, &format!("{side:?}"));
        }
    }

    #[test]
    fn generator_median_at_32_per_second() {
        // pm-delaybox.tcl rate; 20 000 LRD samples; medians within 10 % of the marginal's.
        let mut g = PackMimeXmit::new(XmitSide::Server, 32.0, Rng::stream(48, StreamKind::Test, 0));
        let mut v: Vec<f64> = (0..20_000).map(|_| g.next_one_way_ms()).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = v[v.len() / 2];
        assert!(
            (med / (57.9 / 2.0) - 1.0).abs() < 0.10,
            "median one-way {med}"
        );
    }
}
