//! `[queue] kind = "red_linux"`: tc-red(8)'s keywords as keys, in tc's units (bytes for
//! `limit`, `min`, `max`, `avpkt`; packets for `burst`; `probability` a fraction;
//! `bandwidth_mbps` in Mb/s), with tc's defaults (`tc.rs`), checked as tc and the kernel
//! check them (`red_parse_opt`, `red_check_params`, `red_validate_flags`), and turned into
//! what tc sends to the kernel (`TcRedOpt`).

use serde::{Deserialize, Serialize};

use super::tc::{self, TcRedError};
use super::TcRedOpt;
use crate::config::error::ConfigError;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedLinuxConfig {
    /// Bytes: the child bfifo's limit. Required (tc).
    pub limit: u32,
    /// Bytes. Default `max/3` (tc).
    #[serde(default)]
    pub min: Option<u32>,
    /// Bytes. Default `3·min`, or `limit/4` when min is not given either (tc).
    #[serde(default)]
    pub max: Option<u32>,
    /// Bytes: the typical packet size for the EWMA and idle table. Required (tc).
    pub avpkt: u32,
    /// Packets. Default `(2·min + max)/(3·avpkt)` (tc).
    #[serde(default)]
    pub burst: Option<u32>,
    /// Probability at `max`. Default 0.02 (tc).
    #[serde(default = "d_probability")]
    pub probability: f64,
    /// Mb/s, for the idle table. Default 10 (tc's 10Mbit).
    #[serde(default = "d_bandwidth")]
    pub bandwidth_mbps: f64,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub harddrop: bool,
    #[serde(default)]
    pub adaptive: bool,
    /// With `ecn`: queue Not-ECT packets instead of dropping them.
    #[serde(default)]
    pub nodrop: bool,
}

fn d_probability() -> f64 {
    0.02
}

fn d_bandwidth() -> f64 {
    10.0
}

/// Linux `fls`.
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

impl RedLinuxConfig {
    /// `(min, max)` after tc's defaults, in u32 as tc computes them.
    fn thresholds(&self) -> (u32, u32) {
        let max = match (self.max, self.min) {
            (Some(m), _) => m,
            (None, Some(min)) => min.wrapping_mul(3),
            (None, None) => self.limit / 4,
        };
        (self.min.unwrap_or(max / 3), max)
    }

    /// tc's burst: the given one, or `(2·min + max)/(3·avpkt)`.
    fn burst(&self, min: u32, max: u32) -> u32 {
        self.burst.unwrap_or_else(|| {
            (2u32.wrapping_mul(min).wrapping_add(max)) / 3u32.wrapping_mul(self.avpkt)
        })
    }

    /// tc's `bandwidth` in bytes per second (`get_rate`: bits/8, truncated).
    fn rate_bytes(&self) -> f64 {
        (self.bandwidth_mbps * 1e6 / 8.0).trunc()
    }

    /// Checks every key; `p` is the table's path ("queue").
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        self.opt(p).map(|_| ())
    }

    /// What tc sends for these keys (`red_parse_opt`), or the first problem.
    pub fn opt(&self, p: &str) -> Result<TcRedOpt, ConfigError> {
        let e = |field: &str, value: &dyn std::fmt::Display, allowed: &str| {
            ConfigError::new(format!("{p}.{field}"), value, allowed)
        };
        if self.limit == 0 {
            return Err(e("limit", &0, "an integer ≥ 1 (bytes)"));
        }
        if self.avpkt == 0 {
            return Err(e("avpkt", &0, "an integer ≥ 1 (bytes)"));
        }
        if !(self.probability > 0.0 && self.probability < 1.0) {
            return Err(e("probability", &self.probability, "a number in (0, 1)"));
        }
        let rate = self.rate_bytes();
        if !(rate >= 1.0 && rate <= u32::MAX as f64) {
            return Err(e(
                "bandwidth_mbps",
                &self.bandwidth_mbps,
                "a rate of at least 8e-6 Mb/s and below 34 359 Mb/s (tc's u32 of bytes/s)",
            ));
        }
        let rate = rate as u32;
        let (min, max) = self.thresholds();
        if min >= max {
            let field = if self.max.is_some() { "max" } else { "min" };
            let value = if self.max.is_some() { max } else { min };
            return Err(e(
                field,
                &value,
                &format!("min ({min}) < max ({max}) bytes (tc_red_eval_P)"),
            ));
        }
        if self.nodrop && !self.ecn {
            return Err(e(
                "nodrop",
                &true,
                "false unless ecn is true (red_validate_flags: nodrop is only meaningful with ECN)",
            ));
        }
        let burst = self.burst(min, max);
        let wlog = tc::eval_ewma(min, burst, self.avpkt).map_err(|err| match err {
            TcRedError::BurstTooSmall { at_least } => e(
                "burst",
                &burst,
                &format!("≥ {at_least} packets (1 + min/avpkt, tc_red_eval_ewma)"),
            ),
            _ => e(
                "burst",
                &burst,
                "a burst some EWMA weight 2^-1 … 2^-31 can absorb (tc_red_eval_ewma)",
            ),
        })?;
        let plog = tc::eval_p(min, max, self.probability).map_err(|_| {
            e(
                "probability",
                &self.probability,
                "a probability/(max − min) above 2^-32 (tc_red_eval_P)",
            )
        })?;
        let (scell_log, stab) = tc::eval_idle_damping(wlog, self.avpkt, rate).map_err(|_| {
            e(
                "bandwidth_mbps",
                &self.bandwidth_mbps,
                "a rate whose idle table fits (tc_red_eval_idle_damping)",
            )
        })?;
        // red_check_params.
        for (field, v) in [("min", min), ("max", max)] {
            if fls(v) + wlog as u32 >= 32 {
                return Err(e(
                    field,
                    &v,
                    &format!(
                        "a value with fls(value) + Wlog < 32 (Wlog {wlog} from burst; \
                         red_check_params)"
                    ),
                ));
            }
        }
        Ok(TcRedOpt {
            limit: self.limit,
            qth_min: min,
            qth_max: max,
            wlog,
            plog,
            scell_log,
            max_p: tc::max_p(self.probability),
            stab,
            ecn: self.ecn,
            harddrop: self.harddrop,
            nodrop: self.nodrop,
            adaptive: self.adaptive,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> RedLinuxConfig {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn tc_defaults() {
        // limit only: max = 400000/4 = 100 000, min = 33 333, burst (66666 + 100000)/3000 = 55;
        // a = 55 + 1 − 33.333 = 22.67: W = 1/32 gives 25.6 ≥ 22.67 (W = 1/16: 15.7): Wlog 5.
        // Plog: 0.02/66667 = 3.0e-7 → 22 doublings; 10 Mbit, avpkt 1000: Scell_log 15.
        let o = parse(r#"{"limit":400000,"avpkt":1000}"#)
            .opt("queue")
            .unwrap();
        assert_eq!((o.qth_min, o.qth_max), (33_333, 100_000));
        assert_eq!((o.wlog, o.plog, o.scell_log), (5, 22, 15));
        assert_eq!(o.max_p, 85_899_345);
        // min only: max = 3·min; max only: min = max/3.
        let o = parse(r#"{"limit":400000,"avpkt":1000,"min":20000}"#)
            .opt("queue")
            .unwrap();
        assert_eq!((o.qth_min, o.qth_max), (20_000, 60_000));
        let o = parse(r#"{"limit":400000,"avpkt":1000,"max":90000}"#)
            .opt("queue")
            .unwrap();
        assert_eq!((o.qth_min, o.qth_max), (30_000, 90_000));
    }

    #[test]
    fn errors_name_the_field_and_the_rule() {
        for (json, field, hint) in [
            (r#"{"limit":0,"avpkt":1000}"#, "queue.limit", "≥ 1"),
            (r#"{"limit":1000,"avpkt":0}"#, "queue.avpkt", "≥ 1"),
            (
                r#"{"limit":9000,"avpkt":1000,"min":5000,"max":5000}"#,
                "queue.max",
                "min (5000) < max",
            ),
            (
                r#"{"limit":9000,"avpkt":1000,"probability":1}"#,
                "queue.probability",
                "(0, 1)",
            ),
            (
                r#"{"limit":9000,"avpkt":1000,"bandwidth_mbps":0}"#,
                "queue.bandwidth_mbps",
                "rate",
            ),
            (
                r#"{"limit":9000,"avpkt":1000,"nodrop":true}"#,
                "queue.nodrop",
                "ecn",
            ),
            (
                r#"{"limit":90000,"avpkt":1000,"min":20000,"burst":5}"#,
                "queue.burst",
                "≥ 21",
            ),
            (
                r#"{"limit":400000000,"avpkt":1000,"min":200000000,"max":300000000,"burst":250000,"probability":0.5}"#,
                "queue.min",
                "red_check_params",
            ),
        ] {
            let e = parse(json).validate("queue").unwrap_err();
            assert_eq!(e.field, field, "{json}: {e}");
            assert!(e.to_string().contains(hint), "{json}: {e}");
        }
    }
}
