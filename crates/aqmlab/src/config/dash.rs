//! A `dash` traffic entry (`TrafficConfig::Dash`): adaptive video players, each fetching
//! segments over one persistent TCP connection (`sim::dash_app`), their parameters, defaults
//! and checks. Every default and its source is listed in docs/workload.md ("Adaptive video
//! streaming (DASH)"); the player model is dash.js v4.7.4.

use serde::{Deserialize, Serialize};

use super::error::{integer_in, non_negative, positive, ConfigError};
use super::Side;

/// The ABR strategy (dash.js v4.7.4 `streaming.abr.ABRStrategy`, src/core/Settings.js).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DashAbr {
    /// dash.js's default `abrDynamic`: the throughput rule while the buffer is short, BOLA
    /// once it exceeds the stable buffer time (back below half of it: throughput again).
    #[default]
    Dynamic,
    /// `abrThroughput`: ThroughputRule.js only.
    Throughput,
    /// `abrBola`: BolaRule.js only.
    Bola,
}

/// The throughput estimator's average (dash.js v4.7.4 `streaming.abr.movingAverageMethod`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DashAverage {
    /// dash.js's default: the mean of the last 4 samples, widened when they vary.
    #[default]
    SlidingWindow,
    /// Two EWMAs (half-lives 3 s and 8 s of download time), the lower one.
    Ewma,
}

/// The Apple HLS Authoring Specification's recommended variants (Table 2-1, "Video average
/// bit rate (kb/s)", H.264 16:9, 416×234 to 1920×1080).
pub const HLS_LADDER_KBPS: [f64; 9] = [
    145.0, 365.0, 730.0, 1100.0, 2000.0, 3000.0, 4500.0, 6000.0, 7800.0,
];

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DashConfig {
    /// Players of this entry, each on its own connection.
    pub sessions: u32,
    /// The bitrate ladder, kb/s, increasing.
    #[serde(default = "default_ladder")]
    pub ladder_kbps: Vec<f64>,
    /// Segment duration, s.
    #[serde(default = "default_segment_s")]
    pub segment_s: f64,
    /// Length of the video, s; absent = endless (the session lasts until the run ends).
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default)]
    pub abr: DashAbr,
    #[serde(default)]
    pub throughput_average: DashAverage,
    /// dash.js's InsufficientBufferRule beside the main rule
    /// (`additionalAbrRules.insufficientBufferRule`, on by default).
    #[serde(default = "default_true")]
    pub insufficient_buffer_rule: bool,
    /// `streaming.abr.bandwidthSafetyFactor`.
    #[serde(default = "default_safety")]
    pub safety_factor: f64,
    /// `streaming.buffer.stableBufferTime`, s: the buffer target below the top quality.
    #[serde(default = "default_stable")]
    pub stable_buffer_s: f64,
    /// `streaming.buffer.bufferTimeAtTopQuality`, s.
    #[serde(default = "default_top")]
    pub top_quality_buffer_s: f64,
    /// `streaming.buffer.bufferTimeAtTopQualityLongForm`, s (videos of 600 s or more, and
    /// endless ones).
    #[serde(default = "default_long_form")]
    pub long_form_buffer_s: f64,
    /// `streaming.buffer.stallThreshold`, s: playback starts (and resumes) at this level.
    #[serde(default = "default_stall")]
    pub stall_threshold_s: f64,
    /// `streaming.scheduling.defaultTimeout`, ms: how often a full buffer is checked again.
    #[serde(default = "default_poll")]
    pub poll_ms: f64,
    /// AbrController's `DEFAULT_VIDEO_BITRATE`, kb/s: the first segment's rung is the highest
    /// at or below it.
    #[serde(default = "default_initial")]
    pub initial_kbps: f64,
    /// Bytes of each segment request (an HTTP/1.1 GET).
    #[serde(default = "default_request")]
    pub request_bytes: u64,
    #[serde(default)]
    pub client_side: Side,
    /// Players start at `start_s` plus a uniform jitter in `[0, start_jitter_s)`.
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub start_jitter_s: f64,
    /// Write one `dash_segments` row per segment (off: only `dash_sessions`).
    #[serde(default)]
    pub segment_rows: bool,
}

fn default_ladder() -> Vec<f64> {
    HLS_LADDER_KBPS.to_vec()
}
fn default_true() -> bool {
    true
}
fn default_segment_s() -> f64 {
    4.0
}
fn default_safety() -> f64 {
    0.9
}
fn default_stable() -> f64 {
    12.0
}
fn default_top() -> f64 {
    30.0
}
fn default_long_form() -> f64 {
    60.0
}
fn default_stall() -> f64 {
    0.3
}
fn default_poll() -> f64 {
    500.0
}
fn default_initial() -> f64 {
    1000.0
}
fn default_request() -> u64 {
    400
}

/// dash.js's `longFormContentDurationThreshold` (s): at or above it the top-quality buffer
/// target is the long-form one.
pub const LONG_FORM_S: f64 = 600.0;

impl DashConfig {
    /// The buffer target at the top quality (ScheduleController's `_getGenericBufferTarget`).
    pub fn top_target_s(&self) -> f64 {
        match self.duration_s {
            Some(d) if d < LONG_FORM_S => self.top_quality_buffer_s,
            _ => self.long_form_buffer_s,
        }
    }

    /// Number of segments of the video (`None`: endless).
    pub fn segment_count(&self) -> Option<u64> {
        self.duration_s
            .map(|d| ((d / self.segment_s) - 1e-9).ceil().max(1.0) as u64)
    }

    /// Checks the entry whose path is `p` (`traffic[i]`).
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        integer_in(format!("{p}.sessions"), self.sessions, 1..=100_000)?;
        let l = &self.ladder_kbps;
        if l.is_empty() || l.len() > 64 {
            return Err(ConfigError::new(
                format!("{p}.ladder_kbps"),
                format!("{} rungs", l.len()),
                "1 to 64 bitrates in kb/s",
            ));
        }
        for (k, r) in l.iter().enumerate() {
            if !(r.is_finite() && *r >= 1.0 && *r <= 1e7) || (k > 0 && *r <= l[k - 1]) {
                return Err(ConfigError::new(
                    format!("{p}.ladder_kbps[{k}]"),
                    r,
                    "bitrates in [1, 1e7] kb/s, strictly increasing",
                ));
            }
        }
        in_range(&format!("{p}.segment_s"), self.segment_s, 0.1, 60.0, "s")?;
        if let Some(d) = self.duration_s {
            in_range(
                &format!("{p}.duration_s"),
                d,
                self.segment_s,
                1e7,
                "s (≥ segment_s)",
            )?;
        }
        in_range(
            &format!("{p}.safety_factor"),
            self.safety_factor,
            0.01,
            1.0,
            "",
        )?;
        in_range(
            &format!("{p}.stable_buffer_s"),
            self.stable_buffer_s,
            0.1,
            3600.0,
            "s",
        )?;
        for (name, v) in [
            ("top_quality_buffer_s", self.top_quality_buffer_s),
            ("long_form_buffer_s", self.long_form_buffer_s),
        ] {
            in_range(&format!("{p}.{name}"), v, 0.1, 3600.0, "s")?;
        }
        in_range(
            &format!("{p}.stall_threshold_s"),
            self.stall_threshold_s,
            0.0,
            60.0,
            "s",
        )?;
        in_range(&format!("{p}.poll_ms"), self.poll_ms, 1.0, 60_000.0, "ms")?;
        positive(&format!("{p}.initial_kbps"), self.initial_kbps)?;
        integer_in(
            format!("{p}.request_bytes"),
            self.request_bytes,
            1..=1_000_000,
        )?;
        non_negative(&format!("{p}.start_s"), self.start_s)?;
        non_negative(&format!("{p}.start_jitter_s"), self.start_jitter_s)?;
        Ok(())
    }
}

fn in_range(field: &str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<(), ConfigError> {
    if v.is_finite() && v >= lo && v <= hi {
        return Ok(());
    }
    Err(ConfigError::new(
        field,
        v,
        format!("a number in [{lo}, {hi}] {unit}")
            .trim_end()
            .to_string(),
    ))
}
