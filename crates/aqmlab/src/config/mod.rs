//! The scenario: everything a run needs, as deserialized from JSON (the Python layer turns the
//! user's TOML into this, applying presets and units). `validate` checks every field and
//! names the first bad one; nothing runs on an invalid scenario.

use serde::{Deserialize, Serialize};

pub mod dash;
pub mod error;
mod ftp;
pub mod pages;
pub mod replay;
pub mod trace;
mod udp_cbr;
pub mod video_call;
// Real-time UDP applications (issue 37): voice, game, ping.
pub mod realtime;

pub use error::ConfigError;
pub(crate) use error::{integer_in, non_negative};
use error::{positive, probability};
pub(crate) use udp_cbr::flow_rate_bps;

use crate::aqm::config::AqmConfig;
use crate::net::framing::FramingConfig;
use crate::tcp::config::TcpConfig;
use crate::workload::file_size::FileSize;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    pub seed: u64,
    /// Simulated time to run.
    pub duration_s: f64,
    /// Initial period excluded from every metric.
    #[serde(default)]
    pub warmup_s: f64,
    pub topology: Topology,
    /// Bottleneck queue, in both directions unless `queue_reverse` is given.
    pub queue: AqmConfig,
    /// Queue of the reverse direction (right → left) of the bottleneck.
    #[serde(default)]
    pub queue_reverse: Option<AqmConfig>,
    pub tcp: TcpConfig,
    #[serde(default)]
    pub rtt: RttConfig,
    /// How the per-connection delay of `[rtt]` is applied (the testbeds' dummynet, ns-2's
    /// DelayBox).
    #[serde(default)]
    pub delay_box: DelayBoxConfig,
    pub traffic: Vec<TrafficConfig>,
    /// Per traffic source (by its index in `traffic`), a TCP configuration other than `[tcp]`
    /// for that source's connections: a mixed population, such as L4S and classic senders
    /// side by side. The Python layer fills it from `[[traffic]] tcp = ...`. An entry that is
    /// `None` or missing (the list may be shorter than `traffic`) means `[tcp]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic_tcp: Vec<Option<TcpConfig>>,
    /// Per traffic source, an RTT law other than `[rtt]` for its connections and flows (from
    /// `[[traffic]] rtt = ...`); as `traffic_tcp`, `None` or missing means `[rtt]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic_rtt: Vec<Option<RttConfig>>,
    /// Per traffic source, the hop of a chain whose cross hosts it uses (from
    /// `[[traffic]] hop = k`): such a source crosses hop `k` only. `None` or missing: the
    /// left and right hosts, crossing every hop (`net::topology::Chain`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic_hop: Vec<Option<u32>>,
    #[serde(default)]
    pub measure: MeasureConfig,
    /// Stop once this many request/response exchanges started after the warm-up have
    /// completed (or at `duration_s`, whichever comes first).
    #[serde(default)]
    pub max_exchanges: Option<u64>,
    /// Captures and traces for looking inside the run (`config::trace`); off by default.
    #[serde(default, skip_serializing_if = "trace::TraceConfig::is_off")]
    pub trace: trace::TraceConfig,
}

/// A dumbbell: hosts on the left and on the right, each on its own access link to its router,
/// and the bottleneck link between the two routers.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub bottleneck_mbps: f64,
    /// Rate of the bottleneck's reverse direction (right → left), Mb/s: an access link whose
    /// download (to clients on the left) and upload differ, as DSL, cable and most fibre
    /// plans do. Absent (default): `bottleneck_mbps` both ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_reverse_mbps: Option<f64>,
    pub bottleneck_delay_ms: f64,
    pub access_mbps: f64,
    pub access_delay_ms: f64,
    /// Drop-tail limit of every access-link queue (packets); the studies size these so that
    /// they never drop.
    pub access_queue_packets: u64,
    pub left_hosts: u32,
    pub right_hosts: u32,
    /// Independent random loss probability on the bottleneck, left → right and right → left.
    #[serde(default)]
    pub loss_rate: f64,
    #[serde(default)]
    pub loss_rate_reverse: f64,
    /// Link-layer framing of the bottleneck (`net::framing`): `"none"` (bare IP packets, the
    /// default, as ns-2), `"ethernet"` (38 bytes per packet and a 64-byte minimum frame, as the
    /// testbeds' Ethernet segments) or `{ overhead_bytes = N }`.
    #[serde(default)]
    pub bottleneck_framing: FramingConfig,
    /// Link-layer framing of the access links (hosts' interfaces).
    #[serde(default)]
    pub access_framing: FramingConfig,
    /// Changes of the bottleneck's rate during the run, in both directions, in time order
    /// (a capacity step: the L4S tests' rate steps, RFC 7928 §5.2's varying capacity). Empty
    /// (default): the rate stays `bottleneck_mbps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bottleneck_steps: Vec<RateStep>,
    /// Hosts' send jitter, µs: each packet a host sends waits a uniform random time in
    /// `[0, host_jitter_us]` before its interface, in order (a host's stack is a FIFO).
    /// 0 (default): none.
    #[serde(default)]
    pub host_jitter_us: f64,
    /// Hosts at each end of every hop for traffic that crosses only that hop (a parking
    /// lot's cross traffic: `[[traffic]] hop = k`). 0 (default): none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cross_hosts: u32,
    /// The hops after the bottleneck (hop 0), in order from left to right: a chain of
    /// bottlenecks (`net::topology::Chain`). Empty (default): the dumbbell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hops: Vec<HopConfig>,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// At most this many hops in a chain, hop 0 included. A path is a fixed array of links
/// (`net::topology::Path`, copied per packet and hop on the hot path): 8 hops make paths of
/// at most 10 links, and RFC 7928 §10's scenario needs two.
pub const MAX_HOPS: usize = 8;

/// A hop of a chain after the first (`topology.hops[i]` is hop `i + 1`). Unset fields take
/// the bottleneck's (hop 0's) values; its framing, loss rates and capacity steps are hop 0's
/// only (`docs/network.md`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct HopConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<f64>,
    /// Queue of the forward direction (left → right); default `[queue]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<AqmConfig>,
    /// Queue of the reverse direction; default this hop's `queue` if given, else
    /// `[queue_reverse]` or `[queue]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_reverse: Option<AqmConfig>,
}

impl Scenario {
    /// Rate of the bottleneck (hop 0) in direction `dir` (0 forward, 1 reverse), Mb/s.
    pub fn bottleneck_rate_mbps(&self, dir: usize) -> f64 {
        let t = &self.topology;
        match dir {
            0 => t.bottleneck_mbps,
            _ => t.bottleneck_reverse_mbps.unwrap_or(t.bottleneck_mbps),
        }
    }

    /// Number of hops of the chain (1: the dumbbell).
    pub fn hop_count(&self) -> u32 {
        1 + self.topology.hops.len() as u32
    }

    /// Rate (Mb/s), propagation delay (ms) and forward and reverse queues of hop `k`.
    pub fn hop_link(&self, k: usize) -> (f64, f64, &AqmConfig, &AqmConfig) {
        let t = &self.topology;
        let rev0 = self.queue_reverse.as_ref().unwrap_or(&self.queue);
        if k == 0 {
            return (t.bottleneck_mbps, t.bottleneck_delay_ms, &self.queue, rev0);
        }
        let h = &t.hops[k - 1];
        let fwd = h.queue.as_ref().unwrap_or(&self.queue);
        let rev = h
            .queue_reverse
            .as_ref()
            .or(h.queue.as_ref())
            .unwrap_or(rev0);
        (
            h.mbps.unwrap_or(t.bottleneck_mbps),
            h.delay_ms.unwrap_or(t.bottleneck_delay_ms),
            fwd,
            rev,
        )
    }

    /// The hop of traffic source `i` (`traffic_hop`), if it crosses one hop only.
    pub fn hop_of(&self, i: usize) -> Option<u32> {
        self.traffic_hop.get(i).copied().flatten()
    }

    /// The chain's hops and cross hosts, and the sources' hops: a bounded number of hops, each
    /// link as valid as the bottleneck's, and every source's hop an existing one with cross
    /// hosts to use.
    fn validate_chain(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        if t.hops.len() + 1 > MAX_HOPS {
            return Err(ConfigError::new(
                "topology.hops",
                format!("{} entries", t.hops.len()),
                format!(
                    "at most {} (a chain of at most {MAX_HOPS} hops)",
                    MAX_HOPS - 1
                ),
            ));
        }
        integer_in("topology.cross_hosts", t.cross_hosts, 0..=1_000_000)?;
        for (i, h) in t.hops.iter().enumerate() {
            let p = format!("topology.hops[{i}]");
            if let Some(mbps) = h.mbps {
                positive(&format!("{p}.mbps"), mbps)?;
            }
            if let Some(d) = h.delay_ms {
                non_negative(&format!("{p}.delay_ms"), d)?;
            }
            if let Some(q) = &h.queue {
                q.validate(&format!("{p}.queue"))?;
            }
            if let Some(q) = &h.queue_reverse {
                q.validate(&format!("{p}.queue_reverse"))?;
            }
        }
        let n = self.traffic.len();
        if self.traffic_hop.len() > n {
            return Err(ConfigError::new(
                "traffic_hop",
                format!("{} entries", self.traffic_hop.len()),
                format!("at most one per [[traffic]] entry ({n})"),
            ));
        }
        let hops = self.hop_count();
        for (i, hop) in self.traffic_hop.iter().enumerate() {
            let Some(hop) = *hop else { continue };
            if hop >= hops {
                return Err(ConfigError::new(
                    format!("traffic[{i}].hop"),
                    hop,
                    format!(
                        "a hop of the chain, 0 to {} (topology.hops has {})",
                        hops - 1,
                        hops - 1
                    ),
                ));
            }
            if t.cross_hosts == 0 {
                return Err(ConfigError::new(
                    format!("traffic[{i}].hop"),
                    hop,
                    "a source with a hop needs cross hosts: set topology.cross_hosts ≥ 1",
                ));
            }
        }
        Ok(())
    }
}

/// The bottleneck's rate becomes `mbps` at `at_s` seconds of simulated time.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at_s: f64,
    pub mbps: f64,
    /// The reverse direction's new rate. Absent: `mbps` when the link is symmetric (no
    /// `bottleneck_reverse_mbps`), else the reverse rate stays as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_mbps: Option<f64>,
}

/// Per-connection minimum RTT added by delay boxes (like dummynet / ns-2 DelayBox). A
/// connection's sampled value `d` is split evenly: `d/2` is added to each packet as it leaves
/// the client's host and `d/2` as it leaves the server's host, so every segment and every ACK
/// of the connection sees the same extra round-trip time `d` on top of the topology's
/// propagation delays.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RttConfig {
    /// No extra delay: RTT from the topology alone.
    #[default]
    None,
    Constant {
        rtt_ms: f64,
    },
    Uniform {
        min_ms: f64,
        max_ms: f64,
    },
    /// Empirical CDF: `points` are `(rtt_ms, cumulative probability)`, increasing in both,
    /// the last probability 1; sampled by inverse transform with linear interpolation.
    Empirical {
        points: Vec<(f64, f64)>,
        #[serde(default)]
        source: String,
    },
    /// RTT by host pair: `rtt_ms[i][j]` for client host `i mod rows`, server host `j mod cols`.
    Matrix {
        rtt_ms: Vec<Vec<f64>>,
    },
}

impl Scenario {
    /// The TCP configuration of traffic source `i`'s connections.
    pub fn tcp_of(&self, i: usize) -> &TcpConfig {
        self.traffic_tcp
            .get(i)
            .and_then(Option::as_ref)
            .unwrap_or(&self.tcp)
    }

    /// The RTT law of traffic source `i`.
    pub fn rtt_of(&self, i: usize) -> &RttConfig {
        self.traffic_rtt
            .get(i)
            .and_then(Option::as_ref)
            .unwrap_or(&self.rtt)
    }

    /// The per-source TCP and RTT settings: each names an existing source, a UDP source has
    /// no TCP, and each setting is valid where it stands (`traffic[i].tcp`, `traffic[i].rtt`).
    fn validate_traffic_classes(&self) -> Result<(), ConfigError> {
        let n = self.traffic.len();
        let classes = !self.traffic_tcp.is_empty() || !self.traffic_rtt.is_empty();
        if classes && n > u16::MAX as usize {
            // `source_delay` keys its histograms by a 16-bit source index.
            return Err(ConfigError::new(
                "traffic",
                format!("{n} entries"),
                "at most 65535 entries when sources have their own tcp or rtt",
            ));
        }
        for (field, len) in [
            ("traffic_tcp", self.traffic_tcp.len()),
            ("traffic_rtt", self.traffic_rtt.len()),
        ] {
            if len > n {
                return Err(ConfigError::new(
                    field,
                    format!("{len} entries"),
                    format!("at most one per [[traffic]] entry ({n})"),
                ));
            }
        }
        for (i, tcp) in self.traffic_tcp.iter().enumerate() {
            let Some(tcp) = tcp else { continue };
            if matches!(
                self.traffic[i],
                TrafficConfig::UdpCbr { .. } | TrafficConfig::VideoCall(_)
            ) {
                return Err(ConfigError::new(
                    format!("traffic[{i}].tcp"),
                    "a TCP configuration",
                    "no tcp on a udp_cbr or video_call source (its flows are UDP)",
                ));
            }
            if self.traffic[i].is_realtime() {
                return Err(ConfigError::new(
                    format!("traffic[{i}].tcp"),
                    "a TCP configuration",
                    "no tcp on a voice, game or ping source (its flows are UDP)",
                ));
            }
            tcp.validate(&format!("traffic[{i}].tcp"))?;
        }
        for (i, rtt) in self.traffic_rtt.iter().enumerate() {
            if let Some(rtt) = rtt {
                rtt.validate(&format!("traffic[{i}].rtt"))?;
            }
        }
        Ok(())
    }
}

impl RttConfig {
    /// Checks an `[rtt]` table whose path is `p` (`rtt`, or a traffic source's `rtt`).
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        match self {
            RttConfig::None => Ok(()),
            RttConfig::Constant { rtt_ms } => non_negative(&format!("{p}.rtt_ms"), *rtt_ms),
            RttConfig::Uniform { min_ms, max_ms } => {
                non_negative(&format!("{p}.min_ms"), *min_ms)?;
                if !(max_ms.is_finite() && max_ms >= min_ms) {
                    return Err(ConfigError::new(
                        format!("{p}.max_ms"),
                        max_ms,
                        format!("a number ≥ {p}.min_ms ({min_ms})"),
                    ));
                }
                Ok(())
            },
            RttConfig::Empirical { points, .. } => {
                if let Some((i, pt)) = points
                    .iter()
                    .enumerate()
                    .find(|(_, pt)| !(pt.0 >= 0.0 && pt.0.is_finite()))
                {
                    return Err(ConfigError::new(
                        format!("{p}.points[{i}]"),
                        format!("{pt:?}"),
                        "an RTT ≥ 0 ms",
                    ));
                }
                // One set of rules for every empirical CDF: those of the sampler itself.
                crate::workload::dist::EmpiricalCdf::from_points(points, false)
                    .map(|_| ())
                    .map_err(|e| {
                        ConfigError::new(
                            format!("{p}.points[{}]", e.line.saturating_sub(1)),
                            e.message,
                            "(rtt_ms, cdf) points with both non-decreasing and the last cdf = 1",
                        )
                    })
            },
            RttConfig::Matrix { rtt_ms } => {
                if rtt_ms.is_empty() || rtt_ms[0].is_empty() {
                    return Err(ConfigError::new(
                        format!("{p}.rtt_ms"),
                        "[]",
                        "a non-empty matrix",
                    ));
                }
                let cols = rtt_ms[0].len();
                for (i, row) in rtt_ms.iter().enumerate() {
                    if row.len() != cols {
                        return Err(ConfigError::new(
                            format!("{p}.rtt_ms[{i}]"),
                            row.len(),
                            format!("{cols} columns like row 0"),
                        ));
                    }
                    for (j, v) in row.iter().enumerate() {
                        non_negative(&format!("{p}.rtt_ms[{i}][{j}]"), *v)?;
                    }
                }
                Ok(())
            },
        }
    }
}

/// Where the per-connection delay of `[rtt]` is added (`net::delaybox`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelayPlacement {
    /// Half of the connection's RTT on every packet each end sends, as it leaves the sender's
    /// interface (ns-2's DelayBox: each side's box delays its flow by its one-way sample).
    #[default]
    Split,
    /// The whole RTT on the packets the client sends, as they leave its interface (Study B's
    /// "out-bound packet delays on browser machines", dummynet per flow); none on the server's.
    ClientOutbound,
    /// The whole RTT on the packets the client receives, after its interface (in-bound
    /// dummynet pipes on the browser machines; Study A's reading, docs/studies.md).
    ClientInbound,
    /// Half of the RTT on every packet each end receives, after its interface (in-bound pipes
    /// on both end systems).
    Inbound,
    /// ns-2's DelayBox nodes (`sim::delay_boxes`): a box on each end's side of the bottleneck
    /// delays the flow's packets in both directions by that end's one-way delay (half its
    /// part of the RTT: PackMime's client-side and server-side samples, a replayed row's
    /// `client_rtt_ms`, else half each), before the bottleneck for what the end sends and
    /// after it for what it receives.
    Boxes,
}

impl DelayPlacement {
    /// The delay boxes sit on the links reaching hosts (in-bound), not on those leaving them.
    pub fn inbound(self) -> bool {
        matches!(
            self,
            DelayPlacement::ClientInbound | DelayPlacement::Inbound
        )
    }
}

/// The per-flow delay emulator.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DelayBoxConfig {
    pub placement: DelayPlacement,
    /// The emulator's clock tick, ms (dummynet: 1000/HZ, 10 ms at FreeBSD's default HZ = 100,
    /// 1 ms at HZ = 1000). 0 (default): exact delays, as ns-2's DelayBox. Otherwise a delay is
    /// a whole number of ticks (rounded down) and delayed packets leave at the ticks of the
    /// host's clock, whose phase is random per host.
    pub tick_ms: f64,
    /// With `placement = "boxes"`: the client-side box's share of an RTT drawn from `[rtt]`
    /// (the rest is the server side's). Absent: 0.5. 1: one box per connection, on the
    /// client's side (an ns-2 script with a DelayBox rule on the client-side box only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_share: Option<f64>,
}

impl DelayBoxConfig {
    /// The client-side box's share of an RTT with no known parts.
    pub fn client_share(&self) -> f64 {
        self.client_share.unwrap_or(0.5)
    }
}

/// How a Web model draws object sizes.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SizeLaw {
    #[default]
    Empirical,
    Exponential,
}

/// When a Web response is over, for its response time and for the user waiting on it.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResponseEnd {
    /// The last byte of the response has arrived (Studies B and C, PackMime).
    #[default]
    LastByte,
    /// The last byte has arrived and the client has read the server's FIN and closed the
    /// connection (Study A: "the response is completed and the connection is closed"); on a
    /// persistent connection this applies to its last exchange.
    Close,
}

/// Which side of the dumbbell a population of clients sits on.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    #[default]
    Left,
    Right,
}

/// Direction of a bulk transfer relative to its client (the host that opens the connection).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The server sends (after the client's request).
    #[default]
    Download,
    /// The client sends.
    Upload,
}

impl Direction {
    /// The bottleneck direction (0 forward, left → right; 1 reverse) that the data of a
    /// transfer in this direction cross, with its client on `client_side`.
    pub fn bottleneck_dir(self, client_side: Side) -> usize {
        match (self, client_side) {
            (Direction::Upload, Side::Left) | (Direction::Download, Side::Right) => 0,
            (Direction::Download, Side::Left) | (Direction::Upload, Side::Right) => 1,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TrafficConfig {
    /// `flows` TCP transfers of `bytes` bytes (absent = infinite, a greedy source), started at
    /// `start_s` plus a uniform jitter in `[0, start_jitter_s)`.
    Bulk {
        flows: u32,
        #[serde(default)]
        bytes: Option<u64>,
        #[serde(default)]
        request_bytes: u64,
        #[serde(default)]
        direction: Direction,
        #[serde(default)]
        client_side: Side,
        #[serde(default)]
        start_s: f64,
        #[serde(default)]
        start_jitter_s: f64,
    },
    /// Mah's HTTP/1.0 browsing users (Study A): a constant population of `users`, each
    /// thinking, then fetching a page (primary object, then its embedded objects, each on its
    /// own connection, at most `max_parallel` at once) from a server on the other side; a
    /// number of consecutive pages from one server, then a new server chosen uniformly.
    Mah {
        users: u32,
        #[serde(default)]
        client_side: Side,
        /// Parallel connections per user for embedded objects.
        #[serde(default = "default_max_parallel")]
        max_parallel: u32,
        /// Users start at uniform times in `[0, start_spread_s)`.
        #[serde(default = "default_start_spread")]
        start_spread_s: f64,
        /// Optional cap on think times (the empirical tail reaches a day): `min(T, cap)`;
        /// absent = none.
        #[serde(default)]
        think_cap_s: Option<f64>,
        /// Optional think-time threshold applied as GloMoSim's and QualNet's HTTP clients do
        /// (`http_client.pc`): a drawn think time above it is replaced by the remainder of its
        /// division by the threshold. Absent = none (Mah's law as measured).
        #[serde(default)]
        think_wrap_s: Option<f64>,
        /// `"empirical"` (Mah's CDFs) or `"exponential"`: request and reply sizes drawn from
        /// exponential laws with the same means, a control for burstiness studies.
        #[serde(default)]
        size_law: SizeLaw,
        /// `"empirical"` (Mah's CDF, heavy-tailed) or `"exponential"`: think times exponential
        /// with Mah's mean, and each user's first page after an exponential think too, so the
        /// population is stationary from the start (the residual of an exponential OFF period
        /// is the same exponential); `start_spread_s` is then unused. With exponential sizes
        /// this is the short-range-dependent control of the burstiness test.
        #[serde(default)]
        think_law: SizeLaw,
        /// Start each user in a think period whose remaining time is drawn from the stationary
        /// residual law of the (capped) think time, so that the population is stationary from
        /// time 0 instead of starting its first pages together; `start_spread_s` is then
        /// unused. (With `think_law = "exponential"` the start is always stationary.)
        #[serde(default)]
        stationary_start: bool,
        /// When a response is over (response time, and the user's next connection):
        /// `"last_byte"` (default) or `"close"` (Study A).
        #[serde(default)]
        response_end: ResponseEnd,
    },
    /// PackMime-HTTP (Study C): new connections arrive at `rate` per second, regardless of
    /// completions; sizes, server delays and (with `http11`) persistent connections from the
    /// PackMime models. With `packmime_rtt`, each connection's extra RTT is the sum of the
    /// client-side and server-side PackMimeHTTPXmit samples instead of `[rtt]`.
    Packmime {
        rate: f64,
        #[serde(default)]
        client_side: Side,
        #[serde(default)]
        http11: bool,
        #[serde(default)]
        packmime_rtt: bool,
        /// Cap on response sizes, bytes (the extrapolated tail is unbounded); default 2^31 − 1.
        #[serde(default)]
        response_cap_bytes: Option<u64>,
        /// When a response is over: `"last_byte"` (default) or `"close"`.
        #[serde(default)]
        response_end: ResponseEnd,
    },
    /// A recorded workload replayed (`config::replay`): connection `k` opens at
    /// `connections.start_s[k]`, its client writes `request_bytes[k]`, the server answers
    /// `response_bytes[k]` after `server_delay_s[k]`, then both close (HTTP/1.0, as PackMime).
    /// With `rtt_ms`, that is the connection's extra RTT instead of a draw from `[rtt]`.
    /// `source` names where the rows came from (the file the Python layer read).
    Replay {
        connections: replay::ReplayConnections,
        #[serde(default)]
        client_side: Side,
        #[serde(default)]
        source: String,
        /// When a response is over: `"last_byte"` (default) or `"close"`.
        #[serde(default)]
        response_end: ResponseEnd,
    },
    /// HTTP/1.0 + 1.1 browsing users (Study B, after Smith et al.'s UNC model, with PackMime
    /// HTTP 1.1's public distributions as substitutes): pages of a top-level object and
    /// embedded objects over at most `parallel` connections (each user draws its limit from
    /// the list), `persistent_share` of new connections persistent.
    Browsers {
        users: u32,
        #[serde(default)]
        client_side: Side,
        #[serde(default = "default_parallel")]
        parallel: Vec<u32>,
        #[serde(default = "default_persistent_share")]
        persistent_share: f64,
        #[serde(default = "default_start_spread")]
        start_spread_s: f64,
        /// When a response is over: `"last_byte"` (default, Study B) or `"close"`.
        #[serde(default)]
        response_end: ResponseEnd,
    },
    /// The UNC HTTP/1.0 + 1.1 browsing model of Study B (Le et al. 2003 §3.1, after Smith et
    /// al. 2001): the users of `browsers`, drawing from the UNC model's empirical
    /// distributions where `distributions` gives them (the Python layer loads UNC's CDF files),
    /// each missing element from its documented fallback (docs/workload.md).
    Unc {
        users: u32,
        #[serde(default)]
        client_side: Side,
        #[serde(default = "default_parallel")]
        parallel: Vec<u32>,
        #[serde(default = "default_persistent_share")]
        persistent_share: f64,
        #[serde(default = "default_start_spread")]
        start_spread_s: f64,
        #[serde(default)]
        response_end: ResponseEnd,
        #[serde(default)]
        distributions: UncDistributions,
    },
    /// Constant-bit-rate UDP flows (ns-2's Application/Traffic/CBR over Agent/UDP): each
    /// flow sends a `packet_bytes` packet (size on the wire) every `packet_bytes · 8 / rate`
    /// seconds from its start (`start_s` plus a uniform jitter in `[0, start_jitter_s)`)
    /// until `stop_s` (absent = the end of the run). The rate of each flow is `rate_mbps`,
    /// or `share` of the bottleneck capacity divided evenly among the flows (Study D: "10 %
    /// of the link as UDP CBR"). `client_side` is the receivers' side; a `download` flow is
    /// sent by the host on the other side (as a bulk download's data), an `upload` by the
    /// client's side. No acknowledgements, no reaction to loss.
    UdpCbr {
        flows: u32,
        #[serde(default)]
        rate_mbps: Option<f64>,
        #[serde(default)]
        share: Option<f64>,
        #[serde(default = "default_cbr_packet")]
        packet_bytes: u32,
        #[serde(default)]
        direction: Direction,
        #[serde(default)]
        client_side: Side,
        #[serde(default)]
        start_s: f64,
        #[serde(default)]
        start_jitter_s: f64,
        #[serde(default)]
        stop_s: Option<f64>,
    },
    /// Finite file transfers over TCP (one connection per file, as a bulk transfer with a
    /// size). Either `sessions` closed-loop sessions, each transferring a file, waiting an
    /// exponential think time of mean `think_mean_s` (0 = restart at once) after the file has
    /// arrived, then transferring the next on a new connection; or open-loop Poisson arrivals
    /// of transfers at `rate` per second. File sizes from `size` (constant, exponential,
    /// Pareto or an empirical CDF).
    Ftp {
        #[serde(default)]
        sessions: Option<u32>,
        #[serde(default)]
        rate: Option<f64>,
        size: FileSize,
        #[serde(default)]
        think_mean_s: f64,
        #[serde(default)]
        request_bytes: u64,
        #[serde(default)]
        direction: Direction,
        #[serde(default)]
        client_side: Side,
        /// Sessions start at uniform times in `[start_s, start_s + start_spread_s)`; Poisson
        /// arrivals begin at `start_s`.
        #[serde(default)]
        start_s: f64,
        #[serde(default = "default_start_spread")]
        start_spread_s: f64,
    },
    /// Browsing users loading today's pages (HTTP Archive statistics) over HTTP/2 or HTTP/1.1
    /// (`config::pages`, `sim::pages`).
    Pages(pages::PagesConfig),
    /// Adaptive video players (dash.js v4.7.4's model), each fetching segments over one
    /// persistent HTTP/1.1 connection (`config::dash`, `sim::dash_app`).
    Dash(dash::DashConfig),
    /// Real-time video calls (RFC 8593's encoder under NADA, RFC 8698) or bursty fixed-rate
    /// video frames (RFC 7928 §7.2): `config::video_call`, `sim::video_call`.
    VideoCall(video_call::VideoCallConfig),
    /// Real-time UDP applications (`config::realtime`, `sim::realtime`): a voice call, an
    /// online game, sparse echo probes.
    Voice(realtime::VoiceConfig),
    Game(realtime::GameConfig),
    Ping(realtime::PingConfig),
}

impl TrafficConfig {
    /// A voice, game or ping entry (`sim::realtime`).
    pub fn is_realtime(&self) -> bool {
        matches!(
            self,
            TrafficConfig::Voice(_) | TrafficConfig::Game(_) | TrafficConfig::Ping(_)
        )
    }
}

/// The UNC model's empirical laws as `(value, cumulative probability)` points (sizes in bytes,
/// think times in seconds, counts), each optional. `source` names where they came from.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct UncDistributions {
    pub source: String,
    pub top_request: Option<Vec<(f64, f64)>>,
    pub embedded_request: Option<Vec<(f64, f64)>>,
    pub top_response: Option<Vec<(f64, f64)>>,
    pub embedded_response: Option<Vec<(f64, f64)>>,
    pub objects_per_page: Option<Vec<(f64, f64)>>,
    pub think_time_s: Option<Vec<(f64, f64)>>,
    pub persistent_requests: Option<Vec<(f64, f64)>>,
    pub consecutive_pages: Option<Vec<(f64, f64)>>,
}

/// Points of an optional empirical law: `(value, cumulative probability)`.
pub type CdfPoints = Option<Vec<(f64, f64)>>;

impl UncDistributions {
    /// Each law present, with its name and whether its draws are rounded up (sizes, counts).
    pub fn laws(&self) -> [(&'static str, &CdfPoints, bool); 8] {
        [
            ("top_request", &self.top_request, true),
            ("embedded_request", &self.embedded_request, true),
            ("top_response", &self.top_response, true),
            ("embedded_response", &self.embedded_response, true),
            ("objects_per_page", &self.objects_per_page, true),
            ("think_time_s", &self.think_time_s, false),
            ("persistent_requests", &self.persistent_requests, true),
            ("consecutive_pages", &self.consecutive_pages, true),
        ]
    }
}

/// ns-2's CBR default packet size is 210 bytes; Study D's packets are 1,000 bytes, the size
/// we take as the default for both its TCP and UDP traffic.
fn default_cbr_packet() -> u32 {
    1000
}

fn default_parallel() -> Vec<u32> {
    vec![2, 4]
}

fn default_persistent_share() -> f64 {
    0.15
}

fn default_max_parallel() -> u32 {
    4
}

fn default_start_spread() -> f64 {
    10.0
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MeasureConfig {
    /// Instantaneous queue sampling period (Study A: 3 ms).
    pub queue_sample_ms: f64,
    /// Aggregation window of queue samples (mean, variance, min, max).
    pub queue_window_ms: f64,
    /// Throughput reporting interval on the bottleneck.
    pub interval_s: f64,
    /// Keep one row per connection.
    pub connections: bool,
    /// Bin of the arrival-count series at the bottleneck (bytes and packets per bin, for
    /// burstiness and Hurst estimates); 0 disables it.
    pub burst_bin_ms: f64,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            queue_sample_ms: 3.0,
            queue_window_ms: 100.0,
            interval_s: 1.0,
            connections: true,
            burst_bin_ms: 10.0,
        }
    }
}

/// The keys `browsers` and `unc` users share.
fn validate_browsing(
    p: &str,
    parallel: &[u32],
    persistent_share: f64,
    start_spread_s: f64,
) -> Result<(), ConfigError> {
    if parallel.is_empty() || parallel.iter().any(|&k| k == 0 || k > 64) {
        return Err(ConfigError::new(
            format!("{p}.parallel"),
            format!("{parallel:?}"),
            "a non-empty list of integers in 1..=64",
        ));
    }
    if !(0.0..=1.0).contains(&persistent_share) {
        return Err(ConfigError::new(
            format!("{p}.persistent_share"),
            persistent_share,
            "a share in [0, 1]",
        ));
    }
    non_negative(&format!("{p}.start_spread_s"), start_spread_s)
}

impl Scenario {
    pub fn from_json(s: &str) -> Result<Self, String> {
        let sc: Scenario = serde_json::from_str(s).map_err(|e| e.to_string())?;
        sc.validate().map_err(|e| e.to_string())?;
        Self::check_units(s)?;
        Ok(sc)
    }

    /// The unit-by-unit ranges of the document `s` (`bounds`), once the fields are valid.
    pub fn check_units(s: &str) -> Result<(), String> {
        let doc: serde_json::Value = serde_json::from_str(s).map_err(|e| e.to_string())?;
        crate::bounds::check_units(&doc).map_err(|e| e.to_string())
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("duration_s", self.duration_s)?;
        non_negative("warmup_s", self.warmup_s)?;
        if self.warmup_s >= self.duration_s {
            return Err(ConfigError::new(
                "warmup_s",
                self.warmup_s,
                "less than duration_s",
            ));
        }
        let t = &self.topology;
        positive("topology.bottleneck_mbps", t.bottleneck_mbps)?;
        if let Some(r) = t.bottleneck_reverse_mbps {
            positive("topology.bottleneck_reverse_mbps", r)?;
        }
        positive("topology.access_mbps", t.access_mbps)?;
        let mut last_at = 0.0;
        for (i, step) in t.bottleneck_steps.iter().enumerate() {
            let p = format!("topology.bottleneck_steps[{i}]");
            positive(&format!("{p}.mbps"), step.mbps)?;
            if let Some(r) = step.reverse_mbps {
                positive(&format!("{p}.reverse_mbps"), r)?;
            }
            if !(step.at_s.is_finite() && step.at_s > last_at) {
                return Err(ConfigError::new(
                    format!("{p}.at_s"),
                    step.at_s,
                    "a time > 0 s, later than the previous step's",
                ));
            }
            last_at = step.at_s;
        }
        non_negative("topology.bottleneck_delay_ms", t.bottleneck_delay_ms)?;
        non_negative("topology.access_delay_ms", t.access_delay_ms)?;
        // The access queues model the hosts' interface queues, sized so that they never drop
        // in the studies (100,000); a bound keeps a flood's backlog within memory.
        integer_in(
            "topology.access_queue_packets",
            t.access_queue_packets,
            1..=1_000_000,
        )?;
        integer_in("topology.left_hosts", t.left_hosts, 1..=1_000_000)?;
        integer_in("topology.right_hosts", t.right_hosts, 1..=1_000_000)?;
        probability("topology.loss_rate", t.loss_rate)?;
        probability("topology.loss_rate_reverse", t.loss_rate_reverse)?;
        for (field, f) in [
            ("topology.bottleneck_framing", t.bottleneck_framing),
            ("topology.access_framing", t.access_framing),
        ] {
            if let FramingConfig::Custom { overhead_bytes } = f {
                integer_in(
                    format!("{field}.overhead_bytes"),
                    overhead_bytes,
                    0..=65_535,
                )?;
            }
        }
        self.queue.validate("queue")?;
        if let Some(q) = &self.queue_reverse {
            q.validate("queue_reverse")?;
        }
        self.tcp.validate("tcp")?;
        self.rtt.validate("rtt")?;
        self.validate_traffic_classes()?;
        self.validate_chain()?;
        let tick = self.delay_box.tick_ms;
        if !(tick == 0.0 || (1e-6..=10_000.0).contains(&tick)) {
            return Err(ConfigError::new(
                "delay_box.tick_ms",
                tick,
                "0 (exact delays) or a tick in [1e-6, 10000] ms",
            ));
        }
        if let Some(share) = self.delay_box.client_share {
            if !(0.0..=1.0).contains(&share) || self.delay_box.placement != DelayPlacement::Boxes {
                return Err(ConfigError::new(
                    "delay_box.client_share",
                    share,
                    "a share in [0, 1], with placement = \"boxes\"",
                ));
            }
        }
        if tick > 0.0 && self.delay_box.placement == DelayPlacement::Boxes {
            // ns-2's DelayBox delays exactly; the ticked emulator is the testbeds' dummynet.
            return Err(ConfigError::new(
                "delay_box.tick_ms",
                tick,
                "0 with placement = \"boxes\" (ns-2's DelayBox delays exactly)",
            ));
        }
        let jitter = t.host_jitter_us;
        if !(jitter.is_finite() && (0.0..=1e6).contains(&jitter)) {
            return Err(ConfigError::new(
                "topology.host_jitter_us",
                jitter,
                "a number of µs in [0, 1000000]",
            ));
        }
        if self.traffic.is_empty() {
            return Err(ConfigError::new(
                "traffic",
                "[]",
                "at least one [[traffic]] entry",
            ));
        }
        for (i, tr) in self.traffic.iter().enumerate() {
            let p = format!("traffic[{i}]");
            match tr {
                TrafficConfig::Bulk {
                    flows,
                    bytes,
                    start_s,
                    start_jitter_s,
                    ..
                } => {
                    integer_in(format!("{p}.flows"), *flows, 1..=10_000_000)?;
                    if *bytes == Some(0) {
                        return Err(ConfigError::new(
                            format!("{p}.bytes"),
                            0,
                            "an integer ≥ 1, or absent for a greedy source",
                        ));
                    }
                    non_negative(&format!("{p}.start_s"), *start_s)?;
                    non_negative(&format!("{p}.start_jitter_s"), *start_jitter_s)?;
                },
                TrafficConfig::Mah {
                    users,
                    max_parallel,
                    start_spread_s,
                    think_cap_s,
                    think_wrap_s,
                    ..
                } => {
                    integer_in(format!("{p}.users"), *users, 1..=10_000_000)?;
                    integer_in(format!("{p}.max_parallel"), *max_parallel, 1..=64)?;
                    non_negative(&format!("{p}.start_spread_s"), *start_spread_s)?;
                    if let Some(c) = think_cap_s {
                        positive(&format!("{p}.think_cap_s"), *c)?;
                    }
                    if let Some(w) = think_wrap_s {
                        if !(w.is_finite() && *w >= 1e-3) {
                            return Err(ConfigError::new(
                                format!("{p}.think_wrap_s"),
                                w,
                                "a threshold ≥ 0.001 s",
                            ));
                        }
                    }
                },
                TrafficConfig::Browsers {
                    users,
                    parallel,
                    persistent_share,
                    start_spread_s,
                    ..
                } => {
                    integer_in(format!("{p}.users"), *users, 1..=10_000_000)?;
                    validate_browsing(&p, parallel, *persistent_share, *start_spread_s)?;
                },
                TrafficConfig::Unc {
                    users,
                    parallel,
                    persistent_share,
                    start_spread_s,
                    distributions,
                    ..
                } => {
                    integer_in(format!("{p}.users"), *users, 1..=10_000_000)?;
                    validate_browsing(&p, parallel, *persistent_share, *start_spread_s)?;
                    for (name, points, _) in distributions.laws() {
                        let Some(points) = points else { continue };
                        crate::workload::dist::EmpiricalCdf::from_points(points, false)
                            .and_then(|c| {
                                if c.min() < 0.0 {
                                    Err(crate::workload::dist::ParseError {
                                        line: 1,
                                        message: format!("value {} < 0", c.min()),
                                    })
                                } else {
                                    Ok(c)
                                }
                            })
                            .map_err(|e| {
                                ConfigError::new(
                                    format!("{p}.distributions.{name}"),
                                    format!("point {}: {}", e.line, e.message),
                                    "(value ≥ 0, cdf) points, both non-decreasing, the last cdf 1",
                                )
                            })?;
                    }
                },
                TrafficConfig::UdpCbr { .. } => udp_cbr::validate(self, i, tr)?,
                TrafficConfig::Pages(c) => pages::validate(&p, c)?,
                TrafficConfig::VideoCall(v) => v.validate(i)?,
                TrafficConfig::Voice(v) => realtime::validate_voice(&p, v)?,
                TrafficConfig::Game(g) => realtime::validate_game(&p, g)?,
                TrafficConfig::Ping(g) => realtime::validate_ping(&p, g)?,
                TrafficConfig::Ftp { .. } => ftp::validate(&p, tr)?,
                TrafficConfig::Dash(d) => d.validate(&p)?,
                TrafficConfig::Replay { connections, .. } => connections.validate(&p)?,
                TrafficConfig::Packmime {
                    rate,
                    response_cap_bytes,
                    ..
                } => {
                    // The arrival model's Weibull shape k = logit2⁻¹(0.352 + 0.388·log2 rate)
                    // (workload::packmime::arrivals) falls with the rate: below 0.01/s
                    // (k < 0.18) most gaps are under a microsecond, and at 1e-5/s every gap
                    // rounds to 0 ns, so connections open without end at one instant. The
                    // model was fitted to links carrying connections per second, not per day.
                    if !(rate.is_finite() && *rate >= 0.01 && *rate <= 1e6) {
                        return Err(ConfigError::new(
                            format!("{p}.rate"),
                            rate,
                            "connections per second in [0.01, 1e6]",
                        ));
                    }
                    if *response_cap_bytes == Some(0) {
                        return Err(ConfigError::new(
                            format!("{p}.response_cap_bytes"),
                            0,
                            "an integer ≥ 1",
                        ));
                    }
                },
            }
        }
        let m = &self.measure;
        positive("measure.queue_sample_ms", m.queue_sample_ms)?;
        positive("measure.queue_window_ms", m.queue_window_ms)?;
        if m.queue_window_ms < m.queue_sample_ms {
            return Err(ConfigError::new(
                "measure.queue_window_ms",
                m.queue_window_ms,
                "≥ measure.queue_sample_ms",
            ));
        }
        positive("measure.interval_s", m.interval_s)?;
        non_negative("measure.burst_bin_ms", m.burst_bin_ms)?;
        self.trace.validate(
            self.topology
                .left_hosts
                .saturating_add(self.topology.right_hosts),
            self.duration_s,
        )?;
        if self.max_exchanges == Some(0) {
            return Err(ConfigError::new(
                "max_exchanges",
                0,
                "an integer ≥ 1, or absent",
            ));
        }
        Ok(())
    }
}
