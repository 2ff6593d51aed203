//! HTTP/1.1 persistent-connection structure of PackMime-HTTP 1.1 in ns-2 [model-facts
//! §8.3.7]: whether a connection is persistent, its pages and objects, the gaps before each
//! request and the response sizes after the first.

use crate::rng::Rng;
use crate::workload::dist::variates::{gamma, normal_mv, weibull};

const P_PERSISTENT: f64 = 0.09;
const P_1PAGE: f64 = 0.82;
const SCALE_NPAGE: f64 = 0.417;
const P_1TRANSFER: f64 = 0.69;
const SCALE_NTRANSFER: f64 = 1.578;
/// Responses at or below this many bytes are cache validations: later ones repeat the first.
const FSIZE_CACHE_CUTOFF: u64 = 275;

/// One request/response exchange of a connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exchange {
    /// Page of the connection this object belongs to (0-based).
    pub page: u32,
    /// Seconds from the end of the previous response to this request (0 for the first).
    pub gap_secs: f64,
    pub request_bytes: u64,
    pub response_bytes: u64,
}

/// Connection-structure generator; owns its stream. The between-page and within-page gap
/// parameters (ℓ_b, s_b, ℓ_w, s_w) are drawn once, at construction, as ns-2 does (once per
/// simulation, not per connection).
#[derive(Clone, Debug)]
pub struct PackMimePersistence {
    rng: Rng,
    loc_b: f64,
    scale2_b: f64,
    loc_w: f64,
    scale2_w: f64,
}

impl PackMimePersistence {
    pub fn new(mut rng: Rng) -> Self {
        // ℓ_b ~ N(3.22, 0.73), s_b ~ Gamma(1.85, rate 1.85); ℓ_w ~ N(−4.15, 3.12),
        // s_w ~ Gamma(2.35, rate 2.35) [§8.3.7].
        let loc_b = normal_mv(&mut rng, 3.22, 0.73);
        let scale2_b = gamma(&mut rng, 1.85, 1.0 / 1.85);
        let loc_w = normal_mv(&mut rng, -4.15, 3.12);
        let scale2_w = gamma(&mut rng, 2.35, 1.0 / 2.35);
        PackMimePersistence {
            rng,
            loc_b,
            scale2_b,
            loc_w,
            scale2_w,
        }
    }

    /// Objects on a page: ceil(1 + rweibull(1, 1.578)) ≥ 2 (the code's Weibull of shape 1;
    /// ns-2's documentation says gamma).
    fn multi_objects(&mut self) -> u32 {
        (1.0 + weibull(&mut self.rng, 1.0, SCALE_NTRANSFER)).ceil() as u32
    }

    /// Fills `out` (cleared first; reuse it to avoid allocation) with the exchanges of a new
    /// connection whose first request and response sizes come from the request- and
    /// response-size models. Returns whether the connection is persistent.
    pub fn next_connection(
        &mut self,
        first_request: u64,
        first_response: u64,
        out: &mut Vec<Exchange>,
    ) -> bool {
        out.clear();
        let first = Exchange {
            page: 0,
            gap_secs: 0.0,
            request_bytes: first_request,
            response_bytes: first_response,
        };
        if !self.rng.bernoulli(P_PERSISTENT) {
            out.push(first);
            return false;
        }
        // Pages: 1 with probability 0.82, else ceil(1 + rweibull(1, 0.417)) ≥ 2.
        let pages = if self.rng.bernoulli(P_1PAGE) {
            1
        } else {
            (1.0 + weibull(&mut self.rng, 1.0, SCALE_NPAGE)).ceil() as u32
        };
        // Later responses: 2^{ℓ + √s·√2.43·N} with ℓ ~ N(10.62, 0.94), s ~ Gamma(3.22, rate
        // 3.22), drawn once per connection; all equal the first when it is ≤ 275 B.
        let loc = normal_mv(&mut self.rng, 10.62, 0.94);
        let scale2 = gamma(&mut self.rng, 3.22, 1.0 / 3.22);
        for page in 0..pages {
            // One page: ≥ 2 objects; a page of a multi-page connection: 1 object with
            // probability 0.69, else ≥ 2 (read per page).
            let objs = if pages == 1 || !self.rng.bernoulli(P_1TRANSFER) {
                self.multi_objects()
            } else {
                1
            };
            for obj in 0..objs {
                let gap_secs = match (page, obj) {
                    (0, 0) => 0.0,
                    // First object of a later page: 2^{ℓ_b + √s_b·√1.21·N}.
                    (_, 0) => {
                        (self.loc_b + (self.scale2_b * 1.21).sqrt() * self.rng.normal()).exp2()
                    },
                    // Other objects: 2^{ℓ_w + √s_w·√1.57·N}.
                    _ => (self.loc_w + (self.scale2_w * 1.57).sqrt() * self.rng.normal()).exp2(),
                };
                let response_bytes = if out.is_empty() || first_response <= FSIZE_CACHE_CUTOFF {
                    first_response
                } else {
                    ((loc + (scale2 * 2.43).sqrt() * self.rng.normal()).exp2() as u64).max(1)
                };
                out.push(Exchange {
                    page,
                    gap_secs,
                    request_bytes: first_request,
                    response_bytes,
                });
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    #[test]
    fn persistent_share_pages_and_objects() {
        let mut g = PackMimePersistence::new(Rng::stream(49, StreamKind::Test, 0));
        let mut out = Vec::new();
        let n = 40_000;
        let (mut persistent, mut multi, mut two_pages, mut single_objs, mut singles) =
            (0, 0, 0, 0u64, 0);
        for _ in 0..n {
            if g.next_connection(300, 5000, &mut out) {
                persistent += 1;
                let pages = out.last().unwrap().page + 1;
                if pages > 1 {
                    multi += 1;
                    two_pages += (pages == 2) as u32;
                } else {
                    singles += 1;
                    single_objs += out.len() as u64;
                }
                assert_eq!(out[0].gap_secs, 0.0);
                assert!(out.iter().all(|e| e.request_bytes == 300));
                assert_eq!(out[0].response_bytes, 5000);
            } else {
                assert_eq!(out.len(), 1);
            }
        }
        // P(persistent) = 0.09: sd 0.0014, allow 5 sd.
        let p = persistent as f64 / n as f64;
        assert!((p - 0.09).abs() < 0.007, "persistent share {p}");
        // P(multi-page | persistent) = 0.18; P(2 pages | multi) = 1 − e^{−1/0.417} = 0.909.
        let pm = multi as f64 / persistent as f64;
        assert!((pm - 0.18).abs() < 0.03, "multi-page share {pm}");
        assert!((two_pages as f64 / multi as f64 - 0.909).abs() < 0.06);
        // Objects on a single page: 1 + ceil(Exp(1.578)) has mean 1 + 1/(1 − e^{−1/1.578}) = 3.13.
        let mean_objs = single_objs as f64 / singles as f64;
        assert!((mean_objs - 3.13).abs() < 0.15, "mean objects {mean_objs}");
    }

    #[test]
    fn cache_validation_responses_repeat_and_others_are_lognormal_in_log2() {
        let mut g = PackMimePersistence::new(Rng::stream(50, StreamKind::Test, 0));
        let mut out = Vec::new();
        let mut logs = Vec::new();
        for _ in 0..40_000 {
            if g.next_connection(200, 100, &mut out) {
                assert!(out.iter().all(|e| e.response_bytes == 100));
            }
            if g.next_connection(200, 10_000, &mut out) {
                logs.extend(out[1..].iter().map(|e| (e.response_bytes as f64).log2()));
            }
        }
        // log2 size = ℓ + √s·√2.43·N: mean 10.62 (ℓ's mean), variance 0.94 + 2.43·E[s] = 3.37
        // (E[s] = 1). Correlated within a connection; allow 0.15 on the mean, 15 % on variance.
        let n = logs.len() as f64;
        let m = logs.iter().sum::<f64>() / n;
        let v = logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
        assert!((m - 10.62).abs() < 0.15, "mean log2 {m} over {n}");
        assert!((v / 3.37 - 1.0).abs() < 0.15, "var log2 {v}");
    }
}
