//! `[queue] kind = "cake"`: tc-cake(8)'s keywords as TOML keys, with its defaults, validated
//! into `CakeParams`. Keys: `bandwidth` (tc rate syntax or "unlimited"), `diffserv`,
//! `isolation`, `rtt_ms`, `target_ms` (tc: rtt/20 when only rtt is given), `framing` (tc's
//! overhead keywords), `overhead`, `mpu`, `atm`, `memlimit`, `limit`, `mtu`, `ack_filter`.

use serde::{Deserialize, Serialize};

use super::ack::AckFilter;
use super::hash::FlowMode;
use super::shaper::{Atm, Overhead};
use super::tins::Diffserv;
use super::CakeParams;
use crate::config::error::ConfigError;
use crate::units::millis;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CakeConfig {
    /// tc `bandwidth`: "unlimited" (default) or a rate such as "10Mbit", "500kbit", "1gbit",
    /// "125kbps" (bytes per second, as tc reads `bps`), or a plain number of bit/s.
    #[serde(default = "d_unlimited", deserialize_with = "rate_text")]
    pub bandwidth: String,
    /// besteffort, precedence, diffserv8, diffserv4, diffserv3 (default).
    #[serde(default = "d_diffserv3")]
    pub diffserv: Diffserv,
    /// flowblind, srchost, dsthost, hosts, flows, dual-srchost, dual-dsthost,
    /// triple-isolate (default).
    #[serde(default = "d_triple")]
    pub isolation: FlowMode,
    /// tc `rtt`, ms. Default 100 (`internet`).
    #[serde(default = "d_100")]
    pub rtt_ms: f64,
    /// ms. Default rtt/20 (tc), 5 ms at the default rtt.
    #[serde(default)]
    pub target_ms: Option<f64>,
    /// tc's overhead keywords (raw, conservative, ethernet, docsis, pppoe-ptm, bridged-ptm,
    /// pppoa-vcmux, pppoa-llc, pppoe-vcmux, pppoe-llcsnap, bridged-vcmux, bridged-llcsnap,
    /// ipoa-vcmux, ipoa-llcsnap); `overhead`, `mpu`, `atm` given explicitly override them.
    #[serde(default)]
    pub framing: Option<Framing>,
    /// Bytes per packet, [-64, 256] (tc's range). Default 0 (`raw`).
    #[serde(default)]
    pub overhead: Option<i32>,
    /// Minimum adjusted packet size, bytes, [0, 256]. Default 0.
    #[serde(default)]
    pub mpu: Option<u32>,
    /// noatm (default), atm, ptm.
    #[serde(default)]
    pub atm: Option<Atm>,
    /// Bytes of queued packets; default Linux's automatic limit.
    #[serde(default)]
    pub memlimit: Option<u64>,
    /// Packets (Linux's qdisc limit, which caps the automatic memory limit at limit·mtu).
    /// Default 10240.
    #[serde(default = "d_10240")]
    pub limit: u32,
    /// IP MTU, bytes. Default 1500.
    #[serde(default = "d_1500")]
    pub mtu: u32,
    /// no-ack-filter (default), ack-filter, ack-filter-aggressive.
    #[serde(default)]
    pub ack_filter: AckFilter,
    /// Start every queue's COBALT `rec_inv_sqrt` at 0 as Linux's `cobalt_vars_init` does
    /// (a never-used queue's first signal is then immediate) instead of at 1.0. Default
    /// false (the model's documented deviation, docs/queues.md); the comparison with the
    /// kernel's code sets it (docs/validation.md, `linux_qdisc`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linux_cobalt_init: bool,
}

/// tc-cake's overhead keywords (man tc-cake, "Overhead compensation parameters").
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Framing {
    Raw,
    Conservative,
    Ethernet,
    Docsis,
    PppoePtm,
    BridgedPtm,
    PppoaVcmux,
    PppoaLlc,
    PppoeVcmux,
    PppoeLlcsnap,
    BridgedVcmux,
    BridgedLlcsnap,
    IpoaVcmux,
    IpoaLlcsnap,
}

impl Framing {
    /// (overhead, mpu, cell framing).
    pub fn overhead(self) -> Overhead {
        let o = |overhead, mpu, atm| Overhead { overhead, mpu, atm };
        match self {
            Framing::Raw => o(0, 0, Atm::Noatm),
            Framing::Conservative => o(48, 0, Atm::Atm),
            Framing::Ethernet => o(38, 84, Atm::Noatm),
            Framing::Docsis => o(18, 64, Atm::Noatm),
            Framing::PppoePtm => o(30, 0, Atm::Ptm),
            Framing::BridgedPtm => o(22, 0, Atm::Ptm),
            Framing::PppoaVcmux => o(10, 0, Atm::Atm),
            Framing::PppoaLlc => o(14, 0, Atm::Atm),
            Framing::PppoeVcmux => o(32, 0, Atm::Atm),
            Framing::PppoeLlcsnap => o(40, 0, Atm::Atm),
            Framing::BridgedVcmux => o(24, 0, Atm::Atm),
            Framing::BridgedLlcsnap => o(32, 0, Atm::Atm),
            Framing::IpoaVcmux => o(8, 0, Atm::Atm),
            Framing::IpoaLlcsnap => o(16, 0, Atm::Atm),
        }
    }
}

fn d_unlimited() -> String {
    "unlimited".into()
}
fn d_diffserv3() -> Diffserv {
    Diffserv::Diffserv3
}
fn d_triple() -> FlowMode {
    FlowMode::TripleIsolate
}
fn d_100() -> f64 {
    100.0
}
fn d_10240() -> u32 {
    10240
}
fn d_1500() -> u32 {
    1500
}

/// A tc rate (`tc(8)` units: bit, kbit, mbit, gbit, tbit in bits per second, decimal
/// prefixes; bps, kbps, mbps, gbps, tbps in bytes per second; case-insensitive; a bare
/// number is bit/s) in bytes per second; `unlimited` is 0.
/// `bandwidth` as tc takes it: text, or a bare number of bit/s (TOML `bandwidth = 10000000`),
/// kept as its text so that both read the same way (`parse_rate`).
fn rate_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum V {
        Text(String),
        Whole(u64),
        Number(f64),
    }
    Ok(
        match V::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected a tc rate such as \"10Mbit\", a number of bit/s, or \"unlimited\"",
            )
        })? {
            V::Text(t) => t,
            V::Whole(n) => n.to_string(),
            V::Number(x) => x.to_string(),
        },
    )
}

pub fn parse_rate(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    if t == "unlimited" {
        return Some(0);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let bits_per = |m: f64| v * m;
    let bits = match unit {
        "" | "bit" => bits_per(1.0),
        "kbit" => bits_per(1e3),
        "mbit" => bits_per(1e6),
        "gbit" => bits_per(1e9),
        "tbit" => bits_per(1e12),
        "bps" => bits_per(8.0),
        "kbps" => bits_per(8e3),
        "mbps" => bits_per(8e6),
        "gbps" => bits_per(8e9),
        "tbps" => bits_per(8e12),
        _ => return None,
    };
    let bytes = (bits / 8.0).floor();
    (bits.is_finite() && (1.0..1e15).contains(&bytes)).then_some(bytes as u64)
}

impl CakeConfig {
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let e = |field: &str, v: &dyn std::fmt::Display, allowed: &str| {
            Err(ConfigError::new(format!("{p}.{field}"), v, allowed))
        };
        if parse_rate(&self.bandwidth).is_none() {
            return e(
                "bandwidth",
                &self.bandwidth,
                "\"unlimited\" or a tc rate ≥ 8bit such as \"10Mbit\", \"500kbit\", \"125kbps\"",
            );
        }
        if !(self.rtt_ms.is_finite() && self.rtt_ms > 0.0 && self.rtt_ms <= 3_600_000.0) {
            return e("rtt_ms", &self.rtt_ms, "a number in (0, 3600000] ms");
        }
        if let Some(t) = self.target_ms {
            if !(t.is_finite() && t > 0.0 && t <= self.rtt_ms) {
                return e("target_ms", &t, "a number in (0, rtt_ms] ms");
            }
        }
        if let Some(o) = self.overhead {
            if !(-64..=256).contains(&o) {
                return e("overhead", &o, "an integer in [-64, 256] bytes");
            }
        }
        if let Some(m) = self.mpu {
            if m > 256 {
                return e("mpu", &m, "an integer in [0, 256] bytes");
            }
        }
        if self.memlimit == Some(0) {
            return e("memlimit", &0, "an integer ≥ 1 (bytes)");
        }
        if self.limit == 0 {
            return e("limit", &0, "an integer ≥ 1 (packets)");
        }
        if !(68..=65535).contains(&self.mtu) {
            return e("mtu", &self.mtu, "an integer in [68, 65535] bytes");
        }
        Ok(())
    }

    /// The parameters in force (call after `validate`).
    pub fn params(&self) -> CakeParams {
        let base = self.framing.map(Framing::overhead).unwrap_or_default();
        let rtt = millis(self.rtt_ms).max(1);
        CakeParams {
            bandwidth: parse_rate(&self.bandwidth).unwrap_or(0),
            diffserv: self.diffserv,
            flow_mode: self.isolation,
            rtt,
            target: self.target_ms.map(millis).unwrap_or(rtt / 20).max(1),
            overhead: Overhead {
                overhead: self.overhead.unwrap_or(base.overhead),
                mpu: self.mpu.unwrap_or(base.mpu),
                atm: self.atm.unwrap_or(base.atm),
            },
            memlimit: self.memlimit,
            mtu: self.mtu,
            limit: self.limit,
            ack_filter: self.ack_filter,
            linux_cobalt_init: self.linux_cobalt_init,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tc_rates() {
        assert_eq!(parse_rate("10Mbit"), Some(1_250_000));
        assert_eq!(parse_rate("500kbit"), Some(62_500));
        assert_eq!(parse_rate("125kbps"), Some(125_000));
        assert_eq!(parse_rate("1.5gbit"), Some(187_500_000));
        assert_eq!(parse_rate("8000000"), Some(1_000_000));
        assert_eq!(parse_rate("unlimited"), Some(0));
        for bad in ["", "fast", "10 furlongs", "-5mbit", "0mbit", "4bit"] {
            assert_eq!(parse_rate(bad), None, "{bad}");
        }
    }

    /// docs/queues.md: "bare number = bit/s", as a TOML number too (it was refused).
    #[test]
    fn bandwidth_as_a_bare_number_of_bits() {
        let cfg: CakeConfig = serde_json::from_str(r#"{"bandwidth": 10000000}"#).unwrap();
        assert_eq!(parse_rate(&cfg.bandwidth), Some(1_250_000));
        let text: CakeConfig = serde_json::from_str(r#"{"bandwidth": "10Mbit"}"#).unwrap();
        assert_eq!(parse_rate(&text.bandwidth), parse_rate(&cfg.bandwidth));
        let e = serde_json::from_str::<CakeConfig>(r#"{"bandwidth": true}"#).unwrap_err();
        assert!(e.to_string().contains("expected a tc rate"), "{e}");
    }

    /// The rate in force reads in the results as Mb/s under a key that says so (issue 36:
    /// it was bytes/s under `bandwidth`, where the user had written bits).
    #[test]
    fn the_results_give_the_bandwidth_in_mbps() {
        let cfg: CakeConfig = serde_json::from_str(r#"{"bandwidth": "9Mbit"}"#).unwrap();
        let json = serde_json::to_value(cfg.params()).unwrap();
        assert_eq!(json["bandwidth_mbps"].as_f64(), Some(9.0), "{json}");
        assert!(json.get("bandwidth").is_none(), "{json}");
    }
}
