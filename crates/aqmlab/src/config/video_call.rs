//! A `video_call` traffic entry (`TrafficConfig::VideoCall`): RTP-like video over UDP from
//! RFC 8593's statistical encoder, under NADA (RFC 8698) or at a fixed rate with each frame
//! sent back to back (RFC 7928 §7.2's bursty video frames). The model: `sim::video_call`;
//! docs/workload.md.

use serde::{Deserialize, Serialize};

use super::error::{integer_in, non_negative, ConfigError};
use super::{Direction, Side};

/// The call's congestion controller.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VideoController {
    /// RFC 8698, its frames paced out of the rate-shaping buffer at `r_send`.
    #[default]
    Nada,
    /// A fixed `rate_mbps`, each frame's packets back to back (RFC 7928 §7.2).
    None,
}

/// The ECN codepoint of the media packets.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VideoEcn {
    #[default]
    NotEct,
    Ect0,
    /// L4S (RFC 9331): DualPI2's L queue.
    Ect1,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VideoCallConfig {
    #[serde(default = "one")]
    pub calls: u32,
    #[serde(default)]
    pub controller: VideoController,
    /// The fixed rate (controller "none"), or NADA's starting rate (default: its minimum).
    #[serde(default)]
    pub rate_mbps: Option<f64>,
    /// NADA's RMIN and RMAX (RFC 8698 Figure 3: 150 kb/s and 1.5 Mb/s).
    #[serde(default = "default_min_rate")]
    pub min_rate_mbps: f64,
    #[serde(default = "default_max_rate")]
    pub max_rate_mbps: f64,
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Largest packet on the wire, bytes (IPv4 + UDP + RTP headers, 40 bytes, included).
    #[serde(default = "default_packet")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub ecn: VideoEcn,
    /// A frame later than this (capture to its last packet's arrival) is a freeze, ms.
    #[serde(default = "default_deadline")]
    pub deadline_ms: f64,
    /// Feedback interval (NADA's DELTA), ms.
    #[serde(default = "default_feedback")]
    pub feedback_interval_ms: f64,
    /// Seconds between forced key frames (0: only at the start and after big rate changes).
    #[serde(default)]
    pub keyframe_interval_s: f64,
    #[serde(default = "default_iframe")]
    pub iframe_bytes: f64,
    /// Laplacian scales of the frame-size and frame-interval noise (RFC 8593; 0 = none).
    #[serde(default = "default_noise")]
    pub size_noise: f64,
    #[serde(default = "default_noise")]
    pub interval_noise: f64,
    /// Seconds between rows of the `video_rates` table (0 = none).
    #[serde(default = "default_report")]
    pub report_interval_s: f64,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub client_side: Side,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub start_jitter_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

fn one() -> u32 {
    1
}
fn default_min_rate() -> f64 {
    0.15
}
fn default_max_rate() -> f64 {
    1.5
}
fn default_fps() -> f64 {
    30.0
}
/// libwebrtc's default largest RTP packet (its `kVideoMtu`), a common choice for WebRTC calls.
fn default_packet() -> u32 {
    1200
}
/// ITU-T G.114: one-way delays up to 150 ms are acceptable to most interactive applications.
fn default_deadline() -> f64 {
    150.0
}
/// NADA's DELTA, its target feedback interval (RFC 8698 Figure 3: 100 ms).
fn default_feedback() -> f64 {
    100.0
}
fn default_iframe() -> f64 {
    crate::workload::video_encoder::IFRAME_BYTES
}
fn default_noise() -> f64 {
    crate::workload::video_encoder::SCALE_B
}
fn default_report() -> f64 {
    1.0
}

/// IPv4 (20) + UDP (8) + RTP (12, RFC 3550 §5.1) header bytes of every media packet.
pub const HEADER_BYTES: u32 = 40;
/// The most packets a frame of the configured rates may take (a 1 Gb/s call at 30 fps in
/// 1,200-byte packets takes 3,593).
pub const MAX_FRAME_PACKETS: f64 = 100_000.0;

impl VideoCallConfig {
    /// Checks traffic entry `i`.
    pub(super) fn validate(&self, i: usize) -> Result<(), ConfigError> {
        let p = format!("traffic[{i}]");
        integer_in(format!("{p}.calls"), self.calls, 1..=100_000)?;
        let rate = |field: &str, v: f64| {
            if v.is_finite() && v > 0.0 && v <= 1e5 {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{p}.{field}"),
                    v,
                    "a rate in (0, 1e5] Mb/s",
                ))
            }
        };
        rate("min_rate_mbps", self.min_rate_mbps)?;
        rate("max_rate_mbps", self.max_rate_mbps)?;
        if self.max_rate_mbps < self.min_rate_mbps {
            return Err(ConfigError::new(
                format!("{p}.max_rate_mbps"),
                self.max_rate_mbps,
                format!("at least min_rate_mbps ({})", self.min_rate_mbps),
            ));
        }
        match (self.controller, self.rate_mbps) {
            (VideoController::None, None) => {
                return Err(ConfigError::new(
                    format!("{p}.rate_mbps"),
                    "absent",
                    "a rate in (0, 1e5] Mb/s (controller \"none\" sends at a fixed rate)",
                ))
            },
            (_, Some(r)) => rate("rate_mbps", r)?,
            _ => {},
        }
        if !(self.fps.is_finite() && self.fps >= 1.0 && self.fps <= 240.0) {
            return Err(ConfigError::new(
                format!("{p}.fps"),
                self.fps,
                "frames per second in [1, 240]",
            ));
        }
        integer_in(
            format!("{p}.packet_bytes"),
            self.packet_bytes,
            (HEADER_BYTES as u64 + 1)..=9000,
        )?;
        let ms = |field: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err(ConfigError::new(
                    format!("{p}.{field}"),
                    v,
                    format!("a value in [{lo}, {hi}]"),
                ))
            }
        };
        // A frame of the highest rate, or an I-frame, in at most MAX_FRAME_PACKETS packets
        // (memory and events stay bounded; the estimate counts them).
        let payload = (self.packet_bytes - HEADER_BYTES) as f64;
        let top = self.rate_mbps.unwrap_or(0.0).max(self.max_rate_mbps) * 1e6;
        if top / (8.0 * self.fps) / payload > MAX_FRAME_PACKETS {
            return Err(ConfigError::new(
                format!("{p}.packet_bytes"),
                self.packet_bytes,
                format!(
                    "packets large enough for a frame at {} Mb/s and {} fps in at most {} packets",
                    top * 1e-6,
                    self.fps,
                    MAX_FRAME_PACKETS
                ),
            ));
        }
        if self.iframe_bytes / payload > MAX_FRAME_PACKETS {
            return Err(ConfigError::new(
                format!("{p}.iframe_bytes"),
                self.iframe_bytes,
                format!("an I-frame of at most {MAX_FRAME_PACKETS} packets of packet_bytes"),
            ));
        }
        ms("deadline_ms", self.deadline_ms, 1.0, 1e5)?;
        ms("feedback_interval_ms", self.feedback_interval_ms, 1.0, 1e4)?;
        ms("keyframe_interval_s", self.keyframe_interval_s, 0.0, 1e5)?;
        ms("iframe_bytes", self.iframe_bytes, 1.0, 1e8)?;
        ms("size_noise", self.size_noise, 0.0, 2.0)?;
        ms("interval_noise", self.interval_noise, 0.0, 2.0)?;
        ms("report_interval_s", self.report_interval_s, 0.0, 1e5)?;
        if self.report_interval_s > 0.0 && self.report_interval_s < 0.01 {
            return Err(ConfigError::new(
                format!("{p}.report_interval_s"),
                self.report_interval_s,
                "0 (no rows) or at least 0.01 s",
            ));
        }
        non_negative(&format!("{p}.start_s"), self.start_s)?;
        non_negative(&format!("{p}.start_jitter_s"), self.start_jitter_s)?;
        if let Some(stop) = self.stop_s {
            if !(stop.is_finite() && stop > self.start_s) {
                return Err(ConfigError::new(
                    format!("{p}.stop_s"),
                    stop,
                    format!("a time > start_s ({}), or absent", self.start_s),
                ));
            }
        }
        Ok(())
    }

    /// The rate a call starts at (bits per second).
    pub fn start_bps(&self) -> f64 {
        match self.controller {
            VideoController::None => self.rate_mbps.expect("validated") * 1e6,
            VideoController::Nada => {
                self.rate_mbps
                    .unwrap_or(self.min_rate_mbps)
                    .clamp(self.min_rate_mbps, self.max_rate_mbps)
                    * 1e6
            },
        }
    }
}
