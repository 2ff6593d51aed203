//! `[trace]`: what a run records beyond its summary tables, for looking inside it: packet
//! captures (pcap), per-connection TCP state, and tc-style queue statistics over time.
//!
//! Everything here is opt-in: an absent `[trace]` records nothing more and leaves the
//! scenario's JSON (hence the historic digests) as it was.

use serde::{Deserialize, Serialize};

use super::error::{integer_in, non_negative, ConfigError};

/// Where a capture sees packets.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CapturePoint {
    /// The bottleneck's forward (left → right) egress: packets as they start transmission,
    /// after the queue (AQM marks applied, drops absent), as tcpdump on a router's outgoing
    /// interface sees them.
    Forward,
    /// The reverse (right → left) egress.
    Reverse,
    /// Packets arriving at the forward bottleneck queue, before its decision (drops included).
    ForwardIn,
    /// Packets arriving at the reverse bottleneck queue.
    ReverseIn,
    /// A host's interface: the packets it sends (as they are sent) and receives (as they
    /// arrive); `host` names it.
    Host,
}

impl CapturePoint {
    pub fn name(self) -> &'static str {
        match self {
            CapturePoint::Forward => "forward",
            CapturePoint::Reverse => "reverse",
            CapturePoint::ForwardIn => "forward_in",
            CapturePoint::ReverseIn => "reverse_in",
            CapturePoint::Host => "host",
        }
    }
}

/// Which connections (and UDP flows) a trace keeps: all of those that match every given key.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Connection ids (`connections.conn_id`); empty: any.
    pub connections: Vec<u64>,
    /// Hosts, either end (`connections.client_host` / `server_host`); empty: any.
    pub hosts: Vec<u32>,
    /// Share of connections kept, drawn per connection id from the seed (deterministic, the
    /// same connections whatever else is traced).
    pub sample: f64,
    /// Time window (simulated seconds); `end_s` absent: to the end.
    pub start_s: f64,
    pub end_s: Option<f64>,
    /// Keep UDP flows' packets too (captures only).
    pub udp: bool,
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

fn default_snaplen() -> u32 {
    DEFAULT_SNAPLEN
}

/// Bytes of each packet a capture keeps by default: the IP and TCP headers with every option
/// the model sends (20 + 60), and a few payload bytes (zeros).
pub const DEFAULT_SNAPLEN: u32 = 96;

/// One packet capture, written as `capture-<point>[-<host>].pcap` in the run's directory.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PcapConfig {
    pub point: CapturePoint,
    /// The host of `point = "host"` (left hosts are 0..left_hosts, right hosts follow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<u32>,
    /// Bytes kept of each packet (pcap's snap length), from the IP header on.
    #[serde(default = "default_snaplen")]
    pub snaplen: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<u32>,
    #[serde(default = "one")]
    pub sample: f64,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    #[serde(default = "yes")]
    pub udp: bool,
}

impl PcapConfig {
    pub fn selection(&self) -> Selection {
        Selection {
            connections: self.connections.clone(),
            hosts: self.hosts.clone(),
            sample: self.sample,
            start_s: self.start_s,
            end_s: self.end_s,
            udp: self.udp,
        }
    }

    /// The capture's file name in the run's directory.
    pub fn file_name(&self) -> String {
        match self.host {
            Some(h) if self.point == CapturePoint::Host => format!("capture-host-{h}.pcap"),
            _ => format!("capture-{}.pcap", self.point.name()),
        }
    }
}

/// Per-connection TCP state (`tcp_state` table) and, optionally, every segment the chosen
/// connections send (`segments` table).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpTraceConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<u32>,
    #[serde(default = "one")]
    pub sample: f64,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    /// 0: a row at every change of the state; otherwise one row per endpoint every
    /// `interval_ms` of simulated time while the connection is open.
    #[serde(default)]
    pub interval_ms: f64,
    /// Also record every segment the chosen connections send (`segments`).
    #[serde(default = "yes")]
    pub segments: bool,
}

impl TcpTraceConfig {
    pub fn selection(&self) -> Selection {
        Selection {
            connections: self.connections.clone(),
            hosts: self.hosts.clone(),
            sample: self.sample,
            start_s: self.start_s,
            end_s: self.end_s,
            udp: false,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<PcapConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpTraceConfig>,
    /// tc-style statistics of each bottleneck queue over time (`qdisc` table), one set per
    /// reporting interval (`measure.interval_s`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub qdisc: bool,
}

impl TraceConfig {
    /// Nothing traced (the scenario's JSON then has no `trace` key).
    pub fn is_off(&self) -> bool {
        *self == TraceConfig::default()
    }

    pub fn validate(&self, hosts: u32, duration_s: f64) -> Result<(), ConfigError> {
        let mut files = Vec::new();
        for (i, p) in self.pcap.iter().enumerate() {
            let at = format!("trace.pcap[{i}]");
            match (p.point, p.host) {
                (CapturePoint::Host, None) => {
                    return Err(ConfigError::new(
                        format!("{at}.host"),
                        "(absent)",
                        format!("a host in 0..{hosts} for point = \"host\""),
                    ))
                },
                (CapturePoint::Host, Some(h)) if h >= hosts => {
                    return Err(ConfigError::new(
                        format!("{at}.host"),
                        h,
                        format!("a host in 0..{hosts} (left hosts first)"),
                    ))
                },
                (CapturePoint::Host, Some(_)) => {},
                (_, Some(h)) => {
                    return Err(ConfigError::new(
                        format!("{at}.host"),
                        h,
                        "absent unless point = \"host\"",
                    ))
                },
                (_, None) => {},
            }
            // 20 bytes of IP header at least; pcap readers refuse snap lengths above 256 KiB.
            integer_in(format!("{at}.snaplen"), p.snaplen, 20..=262_144)?;
            validate_selection(&at, &p.selection(), hosts, duration_s)?;
            let name = p.file_name();
            if files.contains(&name) {
                return Err(ConfigError::new(
                    format!("{at}.point"),
                    p.point.name(),
                    format!("a capture point not already captured ({name} twice)"),
                ));
            }
            files.push(name);
        }
        if let Some(t) = &self.tcp {
            validate_selection("trace.tcp", &t.selection(), hosts, duration_s)?;
            non_negative("trace.tcp.interval_ms", t.interval_ms)?;
            if t.interval_ms > 0.0 && t.interval_ms < 0.001 {
                return Err(ConfigError::new(
                    "trace.tcp.interval_ms",
                    t.interval_ms,
                    "0 (every change) or at least 0.001 ms",
                ));
            }
        }
        Ok(())
    }
}

fn validate_selection(
    at: &str,
    s: &Selection,
    hosts: u32,
    duration_s: f64,
) -> Result<(), ConfigError> {
    if !(s.sample > 0.0 && s.sample <= 1.0) {
        return Err(ConfigError::new(
            format!("{at}.sample"),
            s.sample,
            "a share of connections in (0, 1]",
        ));
    }
    if let Some(&h) = s.hosts.iter().find(|&&h| h >= hosts) {
        return Err(ConfigError::new(
            format!("{at}.hosts"),
            h,
            format!("hosts in 0..{hosts} (left hosts first)"),
        ));
    }
    non_negative(&format!("{at}.start_s"), s.start_s)?;
    if s.start_s > duration_s {
        return Err(ConfigError::new(
            format!("{at}.start_s"),
            s.start_s,
            "a time within duration_s",
        ));
    }
    if let Some(e) = s.end_s {
        if !(e.is_finite() && e > s.start_s) {
            return Err(ConfigError::new(
                format!("{at}.end_s"),
                e,
                "a time later than start_s, or absent (to the end)",
            ));
        }
    }
    Ok(())
}
