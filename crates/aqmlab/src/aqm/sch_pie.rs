//! `[queue] kind = "pie_linux"`: Linux's own single-queue PIE (`net/sched/sch_pie.c`, Linux
//! 6.1), with tc's keys (`tc-pie`) and statistics, beside the `pie` kind, which follows RFC 8033
//! in floating point (`aqm/pie.rs`).
//!
//! sch_pie is the controller of `include/net/pie.h` on the whole queue: `pie_qdisc_enqueue`
//! drops at `limit` packets (`overlimit`), else asks `pie_drop_early` with the qdisc's byte
//! backlog and marks instead of dropping when `ecn` is on, the probability is at most
//! `MAX_PROB / 10` and the packet is ECT (or CE); `pie_qdisc_dequeue` runs
//! `pie_process_dequeue` with the backlog left; `pie_timer` runs `pie_calculate_probability`
//! every `tupdate`, first `HZ / 2` after `pie_init`. That is FQ-PIE's per-flow path
//! (`sch_fq_pie.c`) with one flow, so this kind is built as `FqPie` with one flow
//! (`aqm/fq_pie.rs`, `aqm/pie_linux.rs`) in sch_pie's mode: its ECN limit is `MAX_PROB / 10`
//! exactly (FQ-PIE's is `MAX_PROB / 100 · ecn_prob`), it keeps sch_pie's `maxq`, and it is
//! named, parametrised and counted as sch_pie (`pie_dump_stats`). The kernel replay
//! (`validation/suites/linux_qdisc.py`, the `pie_linux` cases) compares this kind with the
//! packaged sch_pie.c decision by decision.
//!
//! Defaults are `pie_params_init`: limit 1000 packets, target 15 ms, tupdate 15 ms, α 2 and
//! β 20 (in 1/16 s⁻¹), ECN, byte mode and the departure-rate estimator off. Linux keeps
//! tupdate in jiffies (`usecs_to_jiffies`, rounded up): at HZ 250 (Debian's kernels) tc's 15 ms
//! is 16 ms, at HZ 100 20 ms; give `tupdate_ms` as the kernel compared with runs it.

use serde::{Deserialize, Serialize};

use super::defaults::{d_1000, d_15, d_1500_u32, d_20_u32, d_2_u32};
use super::fq_pie::{FqPie, FqPieParams};
use super::pie_linux::{LinuxPieParams, MAX_PROB};
use crate::config::error::{non_negative, positive, ConfigError};
use crate::units::millis;
#[cfg(test)]
use crate::units::MS;

/// `[queue] kind = "pie_linux"`. Keys are tc's (`tc-pie`), times with a `_ms` suffix.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieLinuxConfig {
    /// Packets. Default 1000.
    #[serde(default = "d_1000")]
    pub limit: u32,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub target_ms: f64,
    /// ms. Default 15 (see the module's note on jiffies).
    #[serde(default = "d_15")]
    pub tupdate_ms: f64,
    /// 1/16 s⁻¹, an integer in [0, 32]. Default 2 (0.125/s).
    #[serde(default = "d_2_u32")]
    pub alpha: u32,
    /// 1/16 s⁻¹, an integer in [0, 32]. Default 20 (1.25/s).
    #[serde(default = "d_20_u32")]
    pub beta: u32,
    /// Mark ECT packets instead of dropping while the probability is ≤ 10 %. Default false.
    #[serde(default)]
    pub ecn: bool,
    /// Default false.
    #[serde(default)]
    pub bytemode: bool,
    /// Delay from the departure rate instead of timestamps. Default false.
    #[serde(default)]
    pub dq_rate_estimator: bool,
    /// Bytes: the MTU of the 2-MTU backlog floor and of byte mode (Linux `psched_mtu`, which
    /// counts the link header; 1500 here, where packet sizes are IP sizes). Default 1500.
    #[serde(default = "d_1500_u32")]
    pub mtu: u32,
}

impl PieLinuxConfig {
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let e = |field: &str, value: u32, allowed: &str| {
            Err(ConfigError::new(format!("{p}.{field}"), value, allowed))
        };
        if self.limit == 0 {
            return e("limit", 0, "an integer ≥ 1 (packets)");
        }
        non_negative(&format!("{p}.target_ms"), self.target_ms)?;
        positive(&format!("{p}.tupdate_ms"), self.tupdate_ms)?;
        let sixteenths = "an integer in [0, 32] (1/16 s⁻¹)";
        if self.alpha > 32 {
            return e("alpha", self.alpha, sixteenths);
        }
        if self.beta > 32 {
            return e("beta", self.beta, sixteenths);
        }
        if self.mtu == 0 {
            return e("mtu", 0, "an integer ≥ 1 (bytes)");
        }
        Ok(())
    }

    /// The controller's parameters, in Linux's units.
    pub fn pie(&self) -> LinuxPieParams {
        LinuxPieParams {
            target: millis(self.target_ms),
            tupdate: millis(self.tupdate_ms),
            alpha: self.alpha,
            beta: self.beta,
            ecn: self.ecn,
            bytemode: self.bytemode,
            dq_rate_estimator: self.dq_rate_estimator,
            mtu: self.mtu,
        }
    }

    /// The queue: FQ-PIE's path with one flow, in sch_pie's mode.
    pub fn build(&self) -> FqPie {
        FqPie::sch_pie(FqPieParams {
            flows: 1,
            // One flow: the deficit round robin serves it whatever the quantum.
            quantum: self.mtu,
            limit: self.limit,
            // sch_pie has no memory limit (only FQ-PIE counts `overmemory`): one no queue
            // reaches, with room for FQ-PIE's `limit + size` test.
            memory_limit: u64::MAX / 2,
            ecn_prob: 10,
            pie: self.pie(),
        })
    }
}

/// The parameters in force, as `tc qdisc show` gives sch_pie's (`pie_dump`).
#[derive(Serialize)]
struct Params<'a> {
    limit: u32,
    #[serde(flatten)]
    pie: &'a LinuxPieParams,
}

impl FqPie {
    /// Results' parameters of a `pie_linux` queue.
    pub fn sch_pie_params_json(&self) -> serde_json::Value {
        serde_json::to_value(Params {
            limit: self.p.limit,
            pie: &self.p.pie,
        })
        .expect("parameters serialize")
    }

    /// `tc -s qdisc show` for pie (`tc_pie_xstats` as `pie_dump_stats` fills it, tc's printed
    /// names): the probability as a fraction (tc prints `prob / UINT64_MAX` of the value
    /// shifted left by 8), the delay in µs, and the counters.
    pub fn sch_pie_stats(&self, maxq: u32) -> serde_json::Map<String, serde_json::Value> {
        let v = &self.vars[0];
        let s = &self.stats;
        let mut m = super::json_map(serde_json::json!({
            "prob": v.prob as f64 / MAX_PROB as f64,
            "delay": (v.qdelay << 6) / 1000,
            "pkts_in": s.packets_in,
            "overlimit": s.overlimit,
            "dropped": s.dropped,
            "maxq": maxq,
            "ecn_mark": s.ecn_mark,
        }));
        if self.p.pie.dq_rate_estimator {
            // bytes/s: `avg_dq_rate * PSCHED_TICKS_PER_SEC >> PIE_SCALE`.
            let rate = (v.avg_dq_rate as u64 * (1_000_000_000 >> 6)) >> 8;
            m.insert("avg_dq_rate".into(), rate.into());
        }
        m
    }

    /// The probability as a fraction, for the queue trace.
    pub fn sch_pie_prob(&self) -> f64 {
        self.vars[0].prob as f64 / MAX_PROB as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<PieLinuxConfig, serde_json::Error> {
        serde_json::from_str(s)
    }

    #[test]
    fn defaults_are_pie_params_init() {
        let c = parse("{}").unwrap();
        assert_eq!(c.limit, 1000);
        let p = c.pie();
        assert_eq!((p.target, p.tupdate), (15 * MS, 15 * MS));
        assert_eq!((p.alpha, p.beta), (2, 20));
        assert!(!p.ecn && !p.bytemode && !p.dq_rate_estimator);
        let q = c.build();
        assert_eq!((q.p.flows, q.p.limit), (1, 1000));
        assert_eq!(q.ecn_limit, MAX_PROB / 10);
        assert!(q.single.is_some());
    }

    #[test]
    fn errors_name_the_field() {
        let c = parse(r#"{"alpha": 40}"#).unwrap();
        let e = c.validate("queue").unwrap_err().to_string();
        assert!(e.contains("queue.alpha") && e.contains("40"), "{e}");
        let c = parse(r#"{"limit": 0}"#).unwrap();
        assert!(c
            .validate("queue")
            .unwrap_err()
            .to_string()
            .contains("queue.limit"));
        assert!(
            parse(r#"{"flows": 4}"#).is_err(),
            "fq_pie's keys are not sch_pie's"
        );
    }
}
