//! A synthetic live video encoder: the statistical model of RFC 8593 ("Video Traffic Models
//! for RTP Congestion Control Evaluations", its statistical model, two phases) as its
//! authors' reference implementation builds it: cisco/syncodecs, `StatisticsCodec` and
//! `CodecWithFps` in syncodecs.cc (commit 0434443e of syncodecs.h; the same constants in
//! every stored version of syncodecs.cc).
//!
//! - Steady phase: each frame is `R / (8 · FPS)` bytes for the encoder's target rate `R`.
//! - Transient phase (the first frame of the call, and after a "big" target change, ratio
//!   |new − old| / old > `BIG_CHANGE` = 0.5): `TRANSIENT_FRAMES` = 10 frames, the first an
//!   I-frame of a fixed `iframe_bytes` (4.17 KiB: "has been observed to depend on the codec
//!   type, resolution and/or video sequence, but not on the current target bitrate"), the
//!   other 9 shrunk by `max(0.2, (10 − I / B) / 9)` so the phase averages the target rate.
//! - Noise: each frame's size is multiplied by `1 + L` and each frame interval `1 / FPS` by
//!   `1 + L'`, `L`, `L'` zero-mean Laplacian with scales `SCALE_B` = `SCALE_T` = 0.15 (fitted
//!   by the authors to Firefox's H.264 encoder); sizes at least 1 byte, intervals at least 0.
//! - Target updates: at most one per `UPDATE_INTERVAL` = 100 ms (others are refused); a
//!   change that is not big is clipped to ±`MAX_UPDATE` = 10 % of the current target.
//!
//! Our addition (documented in docs/workload.md): an optional periodic key frame every
//! `keyframe_interval` (0 = never, as the reference codec), which starts a transient phase;
//! the reference codec has none.

use crate::rng::Rng;

/// Frames of a transient phase (syncodecs' `transientLength` default).
pub const TRANSIENT_FRAMES: u32 = 10;
/// A target change bigger than this fraction starts a transient phase (`bigChangeRatio`).
pub const BIG_CHANGE: f64 = 0.5;
/// Largest change of a non-big update, as a fraction (`maxUpdateRatio`).
pub const MAX_UPDATE: f64 = 0.1;
/// Seconds after an accepted update during which new targets are refused (`updateInterval`).
pub const UPDATE_INTERVAL_S: f64 = 0.1;
/// Laplacian scale of the frame-size and frame-interval noise (`SCALE_B`, `SCALE_T`).
pub const SCALE_B: f64 = 0.15;
pub const SCALE_T: f64 = 0.15;
/// The I-frame's size, bytes (`iFrameSize` = 4.17 · 1024).
pub const IFRAME_BYTES: f64 = 4.17 * 1024.0;
/// The smallest shrink factor of a transient phase's other frames.
const MIN_SHRINK: f64 = 0.2;

/// The encoder's settings.
#[derive(Clone, Debug)]
pub struct EncoderParams {
    pub fps: f64,
    pub iframe_bytes: f64,
    /// Laplacian scales of the size and interval noise (0 = none).
    pub size_noise: f64,
    pub interval_noise: f64,
    /// Seconds between forced key frames (0 = none).
    pub keyframe_interval_s: f64,
}

/// One encoded frame: its size (bytes) and the seconds to the next frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub bytes: f64,
    pub gap_s: f64,
    pub key: bool,
}

/// The encoder's state.
#[derive(Clone, Debug)]
pub struct VideoEncoder {
    p: EncoderParams,
    /// Target rate, bits per second.
    target_bps: f64,
    /// Seconds left before a new target is accepted.
    time_to_update: f64,
    /// Frames left in the current transient phase.
    burst_left: u32,
    /// Seconds since the last key frame.
    since_key: f64,
}

/// A zero-mean Laplacian draw of scale `b` by inversion (syncodecs' `laplace`).
pub fn laplace(rng: &mut Rng, b: f64) -> f64 {
    // u uniform on (-0.5, 0.5), away from the ends so the log stays finite.
    let u = (rng.uniform() - 0.5).clamp(-0.5 + 1e-10, 0.5 - 1e-10);
    -b * u.signum() * (1.0 - 2.0 * u.abs()).ln()
}

impl VideoEncoder {
    /// An encoder at `target_bps` that starts with a transient phase (as the reference codec).
    pub fn new(p: EncoderParams, target_bps: f64) -> Self {
        VideoEncoder {
            p,
            target_bps,
            time_to_update: 0.0,
            burst_left: TRANSIENT_FRAMES,
            since_key: 0.0,
        }
    }

    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }

    /// A new target from the congestion controller; returns the target adopted.
    pub fn set_target(&mut self, bps: f64) -> f64 {
        if bps <= 0.0 || self.time_to_update > 1e-10 {
            return self.target_bps;
        }
        self.time_to_update = UPDATE_INTERVAL_S;
        let change = (bps - self.target_bps) / self.target_bps;
        if change.abs() > BIG_CHANGE {
            self.burst_left = TRANSIENT_FRAMES;
            self.target_bps = bps;
            return bps;
        }
        let (lo, hi) = (
            self.target_bps * (1.0 - MAX_UPDATE),
            self.target_bps * (1.0 + MAX_UPDATE),
        );
        self.target_bps = bps.clamp(lo, hi);
        self.target_bps
    }

    /// The next frame: its size and the time to the frame after it.
    pub fn next_frame(&mut self, rng: &mut Rng) -> Frame {
        if self.p.keyframe_interval_s > 0.0 && self.since_key >= self.p.keyframe_interval_s - 1e-9 {
            self.burst_left = TRANSIENT_FRAMES;
        }
        let mut bytes = self.target_bps / (self.p.fps * 8.0);
        let mut key = false;
        if self.burst_left > 0 {
            if self.burst_left == TRANSIENT_FRAMES {
                key = true;
                bytes = self.p.iframe_bytes;
                self.since_key = 0.0;
            } else {
                let ratio = self.p.iframe_bytes / bytes;
                let shrink = (TRANSIENT_FRAMES as f64 - ratio) / (TRANSIENT_FRAMES - 1) as f64;
                bytes *= shrink.max(MIN_SHRINK);
            }
            self.burst_left -= 1;
        }
        if self.p.size_noise > 0.0 {
            bytes += bytes * laplace(rng, self.p.size_noise);
        }
        let bytes = bytes.max(1.0);
        let mut gap_s = 1.0 / self.p.fps;
        if self.p.interval_noise > 0.0 {
            gap_s = (gap_s + gap_s * laplace(rng, self.p.interval_noise)).max(0.0);
        }
        self.time_to_update = (self.time_to_update - gap_s).max(0.0);
        self.since_key += gap_s;
        Frame { bytes, gap_s, key }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    fn params(noise: f64) -> EncoderParams {
        EncoderParams {
            fps: 30.0,
            iframe_bytes: IFRAME_BYTES,
            size_noise: noise,
            interval_noise: noise,
            keyframe_interval_s: 0.0,
        }
    }

    #[test]
    fn transient_phase_by_hand() {
        // 1 Mb/s at 30 fps: B = 4166.67 bytes; I = 4270.08 bytes, ratio 1.0248; the other 9
        // frames are B · (10 − 1.0248) / 9 = 0.99724 B; then steady frames of B.
        let mut e = VideoEncoder::new(params(0.0), 1e6);
        let mut rng = Rng::stream(1, StreamKind::Test, 0);
        let f0 = e.next_frame(&mut rng);
        assert!(f0.key);
        assert!((f0.bytes - 4270.08).abs() < 1e-9);
        let b = 1e6 / 240.0;
        let shrink = (10.0 - 4270.08 / b) / 9.0;
        for _ in 1..10 {
            let f = e.next_frame(&mut rng);
            assert!(!f.key && (f.bytes - b * shrink).abs() < 1e-9);
        }
        let f = e.next_frame(&mut rng);
        assert!((f.bytes - b).abs() < 1e-9 && (f.gap_s - 1.0 / 30.0).abs() < 1e-15);
        // The phase's 10 frames sum to 10 B (the target), as the model intends.
        assert!((4270.08 + 9.0 * b * shrink - 10.0 * b).abs() < 1e-6);
    }

    #[test]
    fn shrink_floor_when_the_iframe_is_large() {
        // 0.15 Mb/s: B = 625 bytes, I / B = 6.83 → (10 − 6.83) / 9 = 0.352 (above 0.2);
        // at 0.05 Mb/s, B = 208.3, I / B = 20.5 → floor 0.2.
        let mut e = VideoEncoder::new(params(0.0), 0.05e6);
        let mut rng = Rng::stream(1, StreamKind::Test, 0);
        e.next_frame(&mut rng);
        let f = e.next_frame(&mut rng);
        assert!((f.bytes - 0.2 * 0.05e6 / 240.0).abs() < 1e-9);
    }

    #[test]
    fn target_updates_follow_the_reference_rules() {
        let mut e = VideoEncoder::new(params(0.0), 1e6);
        let mut rng = Rng::stream(1, StreamKind::Test, 0);
        assert_eq!(e.set_target(1.3e6), 1.1e6); // +30 %: clipped to +10 %
        assert_eq!(e.set_target(1.0e6), 1.1e6); // refused: within 100 ms
        for _ in 0..3 {
            e.next_frame(&mut rng); // 3 frames = 100 ms
        }
        assert!((e.set_target(0.9e6) - 0.99e6).abs() < 1e-6); // −18 %: clipped to −10 %
        for _ in 0..3 {
            e.next_frame(&mut rng);
        }
        assert_eq!(e.set_target(3e6), 3e6); // +203 %: big change, adopted, new transient
        assert!(e.next_frame(&mut rng).key);
    }

    #[test]
    fn mean_frame_size_is_the_target_over_fps() {
        // Steady frames of B (1 + L), L Laplacian of scale 0.15: mean B, standard deviation
        // B · 0.15 · √2. Over N = 20,000 frames the sample mean is within 4 standard errors
        // (B · 0.212 · 4 / √N = 0.6 % of B) of B; the interval's mean likewise of 1 / 30 s.
        let mut e = VideoEncoder::new(params(SCALE_B), 2e6);
        let mut rng = Rng::stream(7, StreamKind::Test, 3);
        for _ in 0..TRANSIENT_FRAMES {
            e.next_frame(&mut rng);
        }
        let n = 20_000;
        let (mut sum_b, mut sum_t, mut keys) = (0.0, 0.0, 0);
        for _ in 0..n {
            let f = e.next_frame(&mut rng);
            sum_b += f.bytes;
            sum_t += f.gap_s;
            keys += f.key as u32;
        }
        let b = 2e6 / 240.0;
        let tol = 4.0 * 0.15 * 2f64.sqrt() / (n as f64).sqrt();
        assert!(
            (sum_b / n as f64 / b - 1.0).abs() < tol,
            "{}",
            sum_b / n as f64
        );
        assert!((sum_t / n as f64 * 30.0 - 1.0).abs() < tol);
        assert_eq!(keys, 0);
    }

    #[test]
    fn periodic_key_frames() {
        // One key frame every 2 s at 30 fps without interval noise: frames 0, 60, 120, ...
        let mut p = params(0.0);
        p.keyframe_interval_s = 2.0;
        let mut e = VideoEncoder::new(p, 1e6);
        let mut rng = Rng::stream(1, StreamKind::Test, 0);
        let keys: Vec<usize> = (0..200)
            .filter(|_| e.next_frame(&mut rng).key)
            .collect::<Vec<_>>();
        assert_eq!(keys, vec![0, 60, 120, 180]);
    }
}
