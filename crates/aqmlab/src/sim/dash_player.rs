//! A DASH player's playout buffer, playback and schedule, free of TCP: what it requests next
//! and when, given when each segment's first and last bytes arrived. After dash.js v4.7.4
//! (github.com/Dash-Industry-Forum/dash.js, tag v4.7.4):
//!
//! - Schedule (`src/streaming/controllers/ScheduleController.js`): a segment is requested when
//!   the buffer is below its target (`_shouldBuffer`): `stableBufferTime` (12 s), or at the
//!   top quality `bufferTimeAtTopQuality` (30 s; 60 s for content of 600 s or more,
//!   `_getGenericBufferTarget`); otherwise the check is repeated every
//!   `scheduling.defaultTimeout` (500 ms). The quality is decided then (`checkPlaybackQuality`)
//!   and the request leaves after the ABR rule's delay (`StreamProcessor.js`
//!   `delayLoadingTime`). One request at a time, in order (one connection, HTTP/1.1 without
//!   pipelining).
//! - Buffer state (`src/streaming/controllers/BufferController.js`
//!   `checkIfSufficientBuffer`): BUFFER_LOADED once the buffer reaches `stallThreshold`
//!   (0.3 s) or every segment is in, BUFFER_EMPTY below it. Playback starts at the first
//!   BUFFER_LOADED (startup delay: from the connection's open) and, as in a media element,
//!   stalls when the buffer is empty; it resumes at the next BUFFER_LOADED.
//!
//! The buffer drains at one second per second while playing; the instants at which it empties
//! are computed exactly (`advance`), so a stall needs no event of its own.
//!
//! QoE (Yin, Jindal, Sekar, Sinopoli, "A control-theoretic approach for dynamic adaptive video
//! streaming over HTTP", SIGCOMM 2015: its QoE definition with q(R) = R in kb/s, and its
//! evaluation's "balanced" weights λ = 1, μ = μ_s = 3000): `Σ_k R_k − λ Σ_k |R_{k+1} − R_k|
//! − μ T_rebuffer − μ_s T_startup`, over the segments downloaded, times in seconds.

use super::dash_abr::{Abr, Decision, Inputs, ThroughputHistory};
use crate::config::dash::DashConfig;
use crate::units::Time;

/// Yin et al.'s weights: λ (per kb/s of switch) and μ = μ_s (per second of stall or start-up).
pub const QOE_LAMBDA: f64 = 1.0;
pub const QOE_MU: f64 = 3000.0;

fn s(t: Time) -> f64 {
    t as f64 * 1e-9
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the first BUFFER_LOADED.
    Startup,
    Playing,
    Stalled,
}

/// What the player does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Request segment `index` at quality `quality`, at `at` (now, or after BOLA's delay).
    Request {
        index: u64,
        quality: usize,
        at: Time,
    },
    /// The buffer is full: check again at `at`.
    Check { at: Time },
    /// Every segment is in.
    Done,
}

/// One downloaded segment, as the `dash_segments` table shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SegmentRecord {
    pub index: u64,
    pub quality: usize,
    pub bitrate_kbps: f64,
    pub bytes: u64,
    pub request_s: f64,
    pub first_byte_s: f64,
    pub end_s: f64,
    /// Buffer level when the request was decided.
    pub buffer_at_request_s: f64,
    /// Average throughput (kb/s) the rules saw at the decision (NaN: none yet).
    pub throughput_kbps: f64,
    /// Throughput of this segment, kb/s (8 · bytes / (end − first byte)).
    pub sample_kbps: f64,
}

/// The player's state and its running metrics.
#[derive(Clone, Debug)]
pub struct Player {
    pub phase: Phase,
    /// Buffer level (s) at time `at`.
    level: f64,
    at: Time,
    opened: Time,
    pub startup_s: Option<f64>,
    stall_since: Time,
    pub stalls: u64,
    pub stall_s: f64,
    /// The buffer fell below the stall threshold since the last decision (BOLA's BUFFER_EMPTY).
    low: bool,
    /// Segments downloaded, and the next one to request.
    pub done: u64,
    next_index: u64,
    quality: usize,
    pub last_played_quality: Option<usize>,
    pub sum_kbps: f64,
    pub sum_seconds: f64,
    pub sum_kbps_seconds: f64,
    pub switches: u64,
    pub sum_switch_kbps: f64,
    history: ThroughputHistory,
    abr: Abr,
    /// The decision behind the request in flight (or waiting for its delay).
    pending: Option<(u64, usize, f64, f64)>,
}

impl Player {
    /// A player whose connection opened at `opened`.
    pub fn new(cfg: &DashConfig, opened: Time) -> Self {
        let initial = super::dash_abr::quality_for_bitrate(
            &cfg.ladder_kbps,
            cfg.initial_kbps,
            None,
            cfg.segment_s,
        );
        Player {
            phase: Phase::Startup,
            level: 0.0,
            at: opened,
            opened,
            startup_s: None,
            stall_since: 0,
            stalls: 0,
            stall_s: 0.0,
            low: false,
            done: 0,
            next_index: 0,
            quality: initial,
            last_played_quality: None,
            sum_kbps: 0.0,
            sum_seconds: 0.0,
            sum_kbps_seconds: 0.0,
            switches: 0,
            sum_switch_kbps: 0.0,
            history: ThroughputHistory::default(),
            abr: Abr::new(
                cfg.abr,
                &cfg.ladder_kbps,
                cfg.stable_buffer_s,
                cfg.insufficient_buffer_rule,
            ),
            pending: None,
        }
    }

    /// Buffer level (s) as of the last `advance`.
    pub fn level_s(&self) -> f64 {
        self.level
    }

    /// Moves playback forward to `now`: the buffer drains while playing; an empty buffer
    /// stalls playback at the instant it empties.
    pub fn advance(&mut self, cfg: &DashConfig, now: Time) {
        if now <= self.at {
            return;
        }
        let dt = s(now - self.at);
        if self.phase == Phase::Playing {
            if self.level < cfg.stall_threshold_s + dt {
                self.low = true;
            }
            if self.level > dt || self.video_complete(cfg) {
                self.level = (self.level - dt).max(0.0);
            } else {
                // Empty at at + level: integer ns, rounded down, never before `at`.
                self.stall_since = self.at + (self.level * 1e9) as Time;
                self.level = 0.0;
                self.phase = Phase::Stalled;
                self.stalls += 1;
            }
        }
        self.at = now;
    }

    /// Every segment of a finite video has arrived.
    pub fn video_complete(&self, cfg: &DashConfig) -> bool {
        cfg.segment_count().is_some_and(|n| self.done >= n)
    }

    /// Duration of segment `index` (the last of a finite video may be shorter).
    pub fn segment_duration(cfg: &DashConfig, index: u64) -> f64 {
        match cfg.duration_s {
            Some(d) => (d - index as f64 * cfg.segment_s).min(cfg.segment_s),
            None => cfg.segment_s,
        }
    }

    /// Bytes of segment `index` at `quality`: bitrate × duration.
    pub fn segment_bytes(cfg: &DashConfig, index: u64, quality: usize) -> u64 {
        let d = Self::segment_duration(cfg, index);
        (cfg.ladder_kbps[quality] * 1000.0 * d / 8.0)
            .round()
            .max(1.0) as u64
    }

    /// The schedule at `now` (no request in flight): request, wait, or done.
    pub fn schedule(&mut self, cfg: &DashConfig, now: Time) -> Next {
        self.advance(cfg, now);
        if cfg.segment_count().is_some_and(|n| self.next_index >= n) {
            return Next::Done;
        }
        let top = self.quality + 1 == cfg.ladder_kbps.len();
        let target = if top {
            cfg.top_target_s()
        } else {
            cfg.stable_buffer_s
        };
        if self.next_index > 0 && self.level >= target {
            return Next::Check {
                at: now + (cfg.poll_ms * 1e6).round() as Time,
            };
        }
        if std::mem::take(&mut self.low) {
            self.abr.on_buffer_empty();
        }
        let tput = self.history.average_kbps(cfg.throughput_average);
        let d: Decision = self.abr.decide(&Inputs {
            ladder_kbps: &cfg.ladder_kbps,
            segment_s: cfg.segment_s,
            now_s: s(now),
            level_s: self.level,
            current: self.quality,
            throughput_kbps: tput,
            safety_factor: cfg.safety_factor,
            latency_ms: self.history.latency_ms(cfg.throughput_average),
            buffer_empty: self.phase == Phase::Stalled
                || (self.phase == Phase::Playing && self.level < cfg.stall_threshold_s),
        });
        self.quality = d.quality;
        let index = self.next_index;
        self.next_index += 1;
        self.pending = Some((index, d.quality, self.level, tput.unwrap_or(f64::NAN)));
        Next::Request {
            index,
            quality: d.quality,
            at: now + (d.delay_s * 1e9).round() as Time,
        }
    }

    /// The segment in flight arrived whole at `end`: requested at `request`, first byte at
    /// `first_byte`. Returns its record.
    pub fn on_segment(
        &mut self,
        cfg: &DashConfig,
        request: Time,
        first_byte: Time,
        end: Time,
    ) -> SegmentRecord {
        let (index, q, buffer_at_request, tput) = self.pending.take().expect("a segment in flight");
        self.advance(cfg, end);
        let bytes = Self::segment_bytes(cfg, index, q);
        let latency_ms = (first_byte - request) as f64 * 1e-6;
        let download_ms = (end - first_byte) as f64 * 1e-6;
        let level_before = self.level;
        self.history.push(bytes, latency_ms, download_ms);
        let d = Self::segment_duration(cfg, index);
        self.abr.on_segment(q, d, s(request), s(end), level_before);
        self.abr.see_level(level_before);
        self.level += d;
        self.abr.see_level(self.level);
        self.done += 1;
        let kbps = cfg.ladder_kbps[q];
        if let Some(p) = self.last_played_quality {
            if p != q {
                self.switches += 1;
                self.sum_switch_kbps += (kbps - cfg.ladder_kbps[p]).abs();
            }
        }
        self.last_played_quality = Some(q);
        self.sum_kbps += kbps;
        self.sum_seconds += d;
        self.sum_kbps_seconds += kbps * d;
        let loaded = self.level >= cfg.stall_threshold_s || self.video_complete(cfg);
        match self.phase {
            Phase::Startup if loaded => {
                self.phase = Phase::Playing;
                self.startup_s = Some(s(end - self.opened));
            },
            Phase::Stalled if loaded => {
                self.phase = Phase::Playing;
                self.stall_s += s(end - self.stall_since);
            },
            _ => {},
        }
        SegmentRecord {
            index,
            quality: q,
            bitrate_kbps: kbps,
            bytes,
            request_s: s(request),
            first_byte_s: s(first_byte),
            end_s: s(end),
            buffer_at_request_s: buffer_at_request,
            throughput_kbps: tput,
            sample_kbps: 8.0 * bytes as f64 / download_ms.max(1.0),
        }
    }

    /// Stall time (s) up to `now`, the stall in progress included.
    pub fn stall_time_at(&self, now: Time) -> f64 {
        match self.phase {
            Phase::Stalled => self.stall_s + s(now.saturating_sub(self.stall_since)),
            _ => self.stall_s,
        }
    }

    /// Yin et al.'s QoE of the segments so far (stalls up to `now`; no start-up yet: the time
    /// waited so far).
    pub fn qoe(&self, now: Time) -> f64 {
        let startup = self.startup_s.unwrap_or(s(now.saturating_sub(self.opened)));
        self.sum_kbps
            - QOE_LAMBDA * self.sum_switch_kbps
            - QOE_MU * self.stall_time_at(now)
            - QOE_MU * startup
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Milliseconds as integer nanoseconds.
    fn millis(ms: u64) -> Time {
        ms * 1_000_000
    }

    fn cfg(duration_s: Option<f64>) -> DashConfig {
        let mut v = serde_json::json!({
            "sessions": 1,
            "ladder_kbps": [1000.0, 2000.0, 4000.0],
            "abr": "throughput",
        });
        if let Some(d) = duration_s {
            v["duration_s"] = d.into();
        }
        serde_json::from_value(v).unwrap()
    }

    /// Requests segment `index` now, expecting `quality`; it arrives 100 ms later (first byte)
    /// and `download_ms` after that.
    fn fetch(
        p: &mut Player,
        c: &DashConfig,
        now: Time,
        index: u64,
        quality: usize,
        download_ms: u64,
    ) -> Time {
        assert_eq!(
            p.schedule(c, now),
            Next::Request {
                index,
                quality,
                at: now
            }
        );
        let end = now + millis(100) + millis(download_ms);
        p.on_segment(c, now, now + millis(100), end);
        end
    }

    /// A synthetic sequence (4-s segments, 500 kB at 1000 kb/s, 1 MB at 2000 kb/s; latency
    /// 100 ms, so the throughput rule's factor is 0.9 · (1 − 0.1/4) = 0.8775):
    ///
    /// | seg | request | end  | sample kb/s | buffer after | rule at the next request           |
    /// | 0   | 0       | 2.1  | 2000        | 4 (playing)  | 2000 · 0.8775 = 1755 → rung 0      |
    /// | 1   | 2.1     | 8.1  | 678         | empty at 6.1, stalled 2.0 s, 4 | mean 1339 → 0    |
    /// | 2   | 8.1     | 9.2  | 4000        | 6.9          | mean 2226 → 1953 → 0               |
    /// | 3   | 9.2     | 9.8  | 8000        | 10.3         | mean 3669.5 → 3220 → rung 1        |
    /// | 4   | 9.8     | 10.7 | 10000       | 13.4 ≥ 12    | full: checks at 11.2 (12.9), 11.7  |
    /// |     |         |      |             |              | (12.4), 12.2 (11.9 < 12): request  |
    ///
    /// The window at 12.2: 10000/8000 < 1.3, 8000/4000 ≥ 1.3 → 5 samples, mean 4935.6 →
    /// 4331 → rung 2. The InsufficientBufferRule (from the third segment on: mean × buffer/4 ×
    /// 0.5 × 0.975) allows 652, 1872, 4606 and 7160 kb/s at segments 2-5: it never cuts below
    /// the throughput rule here. Startup 2.1 s; one stall of 2.0 s; QoE (Yin et al.) of segments 0-4:
    /// 4·1000 + 2000 − 1·1000 − 3000·2.0 − 3000·2.1 = −7300.
    #[test]
    fn startup_stall_resume_buffer_cap_and_qoe() {
        let c = cfg(None);
        let mut p = Player::new(&c, 0);
        let mut t = fetch(&mut p, &c, 0, 0, 0, 2000);
        assert_eq!((p.phase, p.startup_s), (Phase::Playing, Some(2.1)));
        t = fetch(&mut p, &c, t, 1, 0, 5900);
        assert_eq!(t, millis(8100));
        assert_eq!((p.phase, p.stalls), (Phase::Playing, 1));
        assert!((p.stall_s - 2.0).abs() < 1e-9);
        assert!((p.level_s() - 4.0).abs() < 1e-9);
        t = fetch(&mut p, &c, t, 2, 0, 1000);
        assert!((p.level_s() - 6.9).abs() < 1e-9);
        t = fetch(&mut p, &c, t, 3, 0, 500);
        assert!((p.level_s() - 10.3).abs() < 1e-9);
        t = fetch(&mut p, &c, t, 4, 1, 800);
        assert_eq!(t, millis(10_700));
        assert!((p.level_s() - 13.4).abs() < 1e-9);
        assert!((p.qoe(t) - -7300.0).abs() < 1e-6, "{}", p.qoe(t));
        assert_eq!((p.switches, p.sum_switch_kbps), (1, 1000.0));
        // The buffer cap: 13.4 ≥ 12, checked every 500 ms until it drains below 12.
        assert_eq!(p.schedule(&c, t), Next::Check { at: millis(11_200) });
        assert_eq!(
            p.schedule(&c, millis(11_200)),
            Next::Check { at: millis(11_700) }
        );
        assert_eq!(
            p.schedule(&c, millis(11_700)),
            Next::Check { at: millis(12_200) }
        );
        assert_eq!(
            p.schedule(&c, millis(12_200)),
            Next::Request {
                index: 5,
                quality: 2,
                at: millis(12_200)
            }
        );
    }

    /// A finite video: 10 s of 4-s segments is 3 segments (4, 4 and 2 s, the last of 250 kB
    /// at 1000 kb/s); after the last one the schedule is done, and the buffer then drains
    /// without counting a stall.
    #[test]
    fn finite_video_ends_without_a_stall() {
        let c = cfg(Some(10.0));
        assert_eq!(c.segment_count(), Some(3));
        assert_eq!(Player::segment_bytes(&c, 2, 0), 250_000);
        let mut p = Player::new(&c, 0);
        let mut t = 0;
        for i in 0..3 {
            t = fetch(&mut p, &c, t, i, 0, 2000);
        }
        assert_eq!(p.schedule(&c, t), Next::Done);
        p.advance(&c, t + millis(60_000));
        assert_eq!((p.stalls, p.level_s()), (0, 0.0));
        assert!((p.sum_seconds - 10.0).abs() < 1e-12);
    }
}
