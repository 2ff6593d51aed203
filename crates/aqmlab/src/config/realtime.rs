//! The real-time UDP applications' entries (`kind = "voice"`, `"game"`, `"ping"`): their
//! parameters, defaults with their sources, the voice codecs' table, and the checks.
//! The simulation is `sim::realtime`; the model and its sources are documented there and in
//! docs/workload.md.

use serde::{Deserialize, Serialize};

use super::error::{integer_in, non_negative, ConfigError};
use super::{Direction, Side};

/// The ECN codepoint a real-time flow's packets carry (RFC 3168 §5): not-ECT by default; ECT(1)
/// puts them in an L4S queue (RFC 9331: ECT(1) identifies L4S packets; DualPI2, RFC 9332, classifies them so).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnCodepoint {
    #[default]
    NotEct,
    Ect0,
    Ect1,
}

/// A voice codec: its bit rate and the delay it adds before the first bit is sent.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VoiceCodec {
    /// ITU-T G.711 PCM, 64 kb/s: 160 B of payload per 20 ms; no look-ahead.
    #[default]
    G711,
    /// ITU-T G.729 Annex A, 8 kb/s in 10 ms frames with 5 ms look-ahead (ITU-T G.729).
    G729a,
    /// Opus (RFC 6716) wideband speech at 20 kb/s, the top of RFC 7587 §3.1.1's 16-20 kb/s
    /// recommendation for wideband speech; 6.5 ms beyond the frame (26.5 ms of algorithmic delay
    /// with 20 ms frames by default, as opus-codec.org states for RFC 6716's codec).
    OpusWb,
    /// Opus full-band speech at 32 kb/s, within RFC 7587 §3.1.1's 28-40 kb/s for full-band
    /// speech; the same look-ahead.
    OpusFb,
}

impl VoiceCodec {
    /// Bits per second of coded speech (the payload's rate, constant: Opus as CBR).
    pub fn bitrate_bps(self) -> f64 {
        match self {
            VoiceCodec::G711 => 64_000.0,
            VoiceCodec::G729a => 8_000.0,
            VoiceCodec::OpusWb => 20_000.0,
            VoiceCodec::OpusFb => 32_000.0,
        }
    }

    /// The codec's look-ahead beyond the frame, ms (the frame itself is the packetisation
    /// delay, counted separately).
    pub fn lookahead_ms(self) -> f64 {
        match self {
            VoiceCodec::G711 => 0.0,
            VoiceCodec::G729a => 5.0,
            VoiceCodec::OpusWb | VoiceCodec::OpusFb => 6.5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VoiceCodec::G711 => "g711",
            VoiceCodec::G729a => "g729a",
            VoiceCodec::OpusWb => "opus_wb",
            VoiceCodec::OpusFb => "opus_fb",
        }
    }
}

/// RTP (RFC 3550 §5.1: 12 B fixed header), UDP (8 B) and IPv4 (20 B) headers of a voice packet.
pub const RTP_UDP_IP_BYTES: u32 = 12 + 8 + 20;
/// UDP and IPv4 headers of a game or ping packet (sizes are given on the wire otherwise).
pub const UDP_IP_BYTES: u32 = 8 + 20;

/// `kind = "voice"`: `flows` calls, each a packet of `codec` every `frame_ms` from each end
/// (`two_way`), or from one end (`direction`), into a fixed jitter buffer of
/// `jitter_buffer_ms`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VoiceConfig {
    #[serde(default = "one")]
    pub flows: u32,
    #[serde(default)]
    pub codec: VoiceCodec,
    /// Audio per packet, ms (RFC 3551 §4.2: 20 ms is the default packetisation interval).
    #[serde(default = "default_frame_ms")]
    pub frame_ms: f64,
    /// Both ends talk (a call); false: only the sender of `direction` does.
    #[serde(default = "yes")]
    pub two_way: bool,
    #[serde(default)]
    pub direction: Direction,
    /// Playout delay of the receiver's fixed jitter buffer after the first packet, ms.
    #[serde(default = "default_jitter_buffer_ms")]
    pub jitter_buffer_ms: f64,
    #[serde(default)]
    pub ecn: EcnCodepoint,
    #[serde(default)]
    pub client_side: Side,
    #[serde(default)]
    pub start_s: f64,
    /// Each call starts at `start_s` plus a uniform draw in `[0, start_jitter_s)`; default one
    /// frame, so that calls do not send in lockstep.
    #[serde(default)]
    pub start_jitter_s: Option<f64>,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

impl VoiceConfig {
    /// Payload bytes of one packet: the codec's rate over one frame.
    pub fn payload_bytes(&self) -> u32 {
        (self.codec.bitrate_bps() * self.frame_ms * 1e-3 / 8.0).round() as u32
    }

    /// Bytes on the wire (IP) of one packet.
    pub fn packet_bytes(&self) -> u32 {
        self.payload_bytes() + RTP_UDP_IP_BYTES
    }
}

/// `kind = "game"`: `flows` players, each a client sending `client_bytes` packets at
/// `client_rate_hz` to its server, which sends `server_bytes` updates at `tick_hz`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GameConfig {
    #[serde(default = "one")]
    pub flows: u32,
    /// Client commands per second (CS:GO's competitive `cl_cmdrate 64`).
    #[serde(default = "default_tick_hz")]
    pub client_rate_hz: f64,
    /// Server updates (snapshots) per second (CS:GO's 64-tick servers).
    #[serde(default = "default_tick_hz")]
    pub tick_hz: f64,
    /// IP bytes of a client packet and of a server update.
    #[serde(default = "default_client_bytes")]
    pub client_bytes: u32,
    #[serde(default = "default_server_bytes")]
    pub server_bytes: u32,
    #[serde(default)]
    pub ecn: EcnCodepoint,
    #[serde(default)]
    pub client_side: Side,
    #[serde(default)]
    pub start_s: f64,
    /// Default: one client interval for the client, one tick for the server (independent
    /// draws).
    #[serde(default)]
    pub start_jitter_s: Option<f64>,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

/// `kind = "ping"`: `flows` pingers, each an echo request of `packet_bytes` every
/// `interval_ms`, answered at once by the far host.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PingConfig {
    #[serde(default = "one")]
    pub flows: u32,
    /// Flent's step size (`--step-size`, default 0.2 s), which its ping runs use as `ping -i`.
    #[serde(default = "default_ping_interval_ms")]
    pub interval_ms: f64,
    /// IP bytes of a probe: ping's default 56 B of data + 8 B ICMP + 20 B IPv4.
    #[serde(default = "default_ping_bytes")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub ecn: EcnCodepoint,
    #[serde(default)]
    pub client_side: Side,
    #[serde(default)]
    pub start_s: f64,
    /// Default: one interval.
    #[serde(default)]
    pub start_jitter_s: Option<f64>,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_frame_ms() -> f64 {
    20.0
}
fn default_jitter_buffer_ms() -> f64 {
    60.0
}
fn default_tick_hz() -> f64 {
    64.0
}
fn default_client_bytes() -> u32 {
    80
}
fn default_server_bytes() -> u32 {
    200
}
fn default_ping_interval_ms() -> f64 {
    200.0
}
fn default_ping_bytes() -> u32 {
    84
}

/// Flows per entry: each stream holds a delay histogram (`sim::realtime`, 160 kB).
pub const MAX_FLOWS: u32 = 1000;

/// `value` Hz in `[0.1, 10000]`: a rate of at least one packet per 10 s, at most one per 0.1 ms.
fn rate_hz(field: String, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && (0.1..=10_000.0).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::new(
            field,
            value,
            "packets per second in [0.1, 10000]",
        ))
    }
}

/// The checks every real-time entry shares: its flow count, start, jitter and stop.
fn check_common(
    p: &str,
    flows: u32,
    start_s: f64,
    start_jitter_s: Option<f64>,
    stop_s: Option<f64>,
) -> Result<(), ConfigError> {
    integer_in(format!("{p}.flows"), flows, 1..=MAX_FLOWS as u64)?;
    non_negative(&format!("{p}.start_s"), start_s)?;
    if let Some(j) = start_jitter_s {
        non_negative(&format!("{p}.start_jitter_s"), j)?;
    }
    if let Some(stop) = stop_s {
        if !(stop.is_finite() && stop > start_s) {
            return Err(ConfigError::new(
                format!("{p}.stop_s"),
                stop,
                format!("a time > start_s ({start_s}), or absent (the end of the run)"),
            ));
        }
    }
    Ok(())
}

pub(super) fn validate_voice(p: &str, v: &VoiceConfig) -> Result<(), ConfigError> {
    check_common(p, v.flows, v.start_s, v.start_jitter_s, v.stop_s)?;
    // RFC 6716: Opus frames of 2.5 to 60 ms; G.711/G.729 packets of whole 10 ms frames in
    // practice; one range for all keeps the check simple and the model's packets sane.
    if !(v.frame_ms.is_finite() && (2.5..=120.0).contains(&v.frame_ms)) {
        return Err(ConfigError::new(
            format!("{p}.frame_ms"),
            v.frame_ms,
            "ms of audio per packet in [2.5, 120]",
        ));
    }
    if !(v.jitter_buffer_ms.is_finite() && (0.0..=10_000.0).contains(&v.jitter_buffer_ms)) {
        return Err(ConfigError::new(
            format!("{p}.jitter_buffer_ms"),
            v.jitter_buffer_ms,
            "a playout delay in [0, 10000] ms",
        ));
    }
    Ok(())
}

pub(super) fn validate_game(p: &str, g: &GameConfig) -> Result<(), ConfigError> {
    check_common(p, g.flows, g.start_s, g.start_jitter_s, g.stop_s)?;
    rate_hz(format!("{p}.client_rate_hz"), g.client_rate_hz)?;
    rate_hz(format!("{p}.tick_hz"), g.tick_hz)?;
    integer_in(
        format!("{p}.client_bytes"),
        g.client_bytes,
        UDP_IP_BYTES as u64..=65_535,
    )?;
    integer_in(
        format!("{p}.server_bytes"),
        g.server_bytes,
        UDP_IP_BYTES as u64..=65_535,
    )?;
    Ok(())
}

pub(super) fn validate_ping(p: &str, g: &PingConfig) -> Result<(), ConfigError> {
    check_common(p, g.flows, g.start_s, g.start_jitter_s, g.stop_s)?;
    rate_hz(format!("{p}.interval_ms"), 1000.0 / g.interval_ms).map_err(|_| {
        ConfigError::new(
            format!("{p}.interval_ms"),
            g.interval_ms,
            "an interval in [0.1, 10000] ms",
        )
    })?;
    integer_in(
        format!("{p}.packet_bytes"),
        g.packet_bytes,
        UDP_IP_BYTES as u64..=65_535,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3551 §4.5.14: G.711 at 8,000 samples/s of 8 bits, 20 ms = 160 B of payload; with
    /// RTP, UDP and IPv4, 200 B on the wire. G.729A: 20 B per 20 ms, 60 B on the wire.
    #[test]
    fn codec_packet_sizes() {
        let mut v: VoiceConfig = serde_json::from_str("{}").unwrap();
        assert_eq!((v.payload_bytes(), v.packet_bytes()), (160, 200));
        v.codec = VoiceCodec::G729a;
        assert_eq!(v.packet_bytes(), 60);
        v.codec = VoiceCodec::OpusFb;
        assert_eq!(v.payload_bytes(), 80);
        v.codec = VoiceCodec::OpusWb;
        v.frame_ms = 10.0;
        assert_eq!(v.payload_bytes(), 25);
    }

    #[test]
    fn bad_values_name_the_field() {
        let v: VoiceConfig = serde_json::from_str(r#"{"frame_ms": 0.5}"#).unwrap();
        let e = validate_voice("traffic[2]", &v).unwrap_err();
        assert_eq!(e.field, "traffic[2].frame_ms");
        let g: GameConfig = serde_json::from_str(r#"{"tick_hz": 0}"#).unwrap();
        assert_eq!(
            validate_game("traffic[0]", &g).unwrap_err().field,
            "traffic[0].tick_hz"
        );
        let g: GameConfig = serde_json::from_str(r#"{"client_bytes": 10}"#).unwrap();
        assert_eq!(
            validate_game("traffic[0]", &g).unwrap_err().to_string(),
            "traffic[0].client_bytes = 10: expected an integer in 28..=65535"
        );
        let p: PingConfig = serde_json::from_str(r#"{"interval_ms": -1}"#).unwrap();
        assert_eq!(
            validate_ping("traffic[1]", &p).unwrap_err().to_string(),
            "traffic[1].interval_ms = -1: expected an interval in [0.1, 10000] ms"
        );
        let p: PingConfig = serde_json::from_str(r#"{"flows": 0}"#).unwrap();
        assert_eq!(
            validate_ping("traffic[1]", &p).unwrap_err().field,
            "traffic[1].flows"
        );
        assert!(serde_json::from_str::<PingConfig>(r#"{"interval": 5}"#).is_err());
    }
}
