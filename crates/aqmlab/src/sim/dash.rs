//! `dash` sources in a run: their players started (one connection each, `dash_app`), their
//! record tables (`dash_sessions`, one row per session; `dash_segments`, one row per segment
//! when the entry asks for it) and their summary (`Summary::dash`, means over sessions).
//!
//! A session's row is written when its last segment arrives (a finished video: its metrics
//! are final, playback ends `buffer_s` later), else when its connection ends or the run does
//! (the metrics as of that instant).

use std::sync::Arc;

use serde::Serialize;

use super::app::App;
use super::dash_app::DashApp;
use super::events::Ev;
use super::row_buffer::row_buffer;
use super::Simulation;
use crate::config::dash::DashConfig;
use crate::measure::Table;
use crate::rng::{Rng, StreamKind};
use crate::units::secs;

row_buffer! {
    /// One row per DASH session (`sim::dash`).
    pub struct DashSessionRows => "dash_sessions" {
        conn_id: u64,
        source: u64,
        session: u64,
        client_side: &'static str,
        abr: &'static str,
        start_s: f64,
        /// When the row was written: the last segment's arrival, the connection's end or the
        /// run's end.
        end_s: f64,
        /// Every segment of the video arrived.
        finished: bool,
        /// From the connection's open to playback's start (NaN: not started).
        startup_s: f64,
        segments: u64,
        /// Seconds of video downloaded, and the buffer left at `end_s`.
        video_s: f64,
        buffer_s: f64,
        /// Mean bitrate of the segments downloaded, weighted by their duration.
        mean_bitrate_kbps: f64,
        switches: u64,
        /// Mean |Δ bitrate| of a switch (NaN: none).
        switch_kbps_mean: f64,
        stalls: u64,
        stall_s: f64,
        /// stall_s / (stall_s + seconds played).
        rebuffer_ratio: f64,
        /// Yin et al. (SIGCOMM 2015) QoE, and per segment.
        qoe: f64,
        qoe_per_segment: f64,
        bytes_requested: u64,
        bytes_delivered: u64,
    }
}

row_buffer! {
    /// One row per segment downloaded, for entries with `segment_rows = true`.
    pub struct DashSegmentRows => "dash_segments" {
        conn_id: u64,
        source: u64,
        session: u64,
        index: u64,
        quality: u64,
        bitrate_kbps: f64,
        bytes: u64,
        request_s: f64,
        first_byte_s: f64,
        end_s: f64,
        download_s: f64,
        buffer_at_request_s: f64,
        /// The average throughput the rules saw at the decision (NaN: none yet).
        throughput_kbps: f64,
        /// This segment's throughput (bytes over first-to-last-byte time).
        sample_kbps: f64,
    }
}

/// Run-level DASH aggregates: means over the sessions recorded (NaN without sessions).
#[derive(Clone, Debug, Serialize)]
pub struct DashSummary {
    pub sessions: u64,
    pub sessions_finished: u64,
    pub segments: u64,
    pub startup_s_mean: f64,
    pub mean_bitrate_kbps: f64,
    pub switches_mean: f64,
    pub stalls_mean: f64,
    pub stall_s_mean: f64,
    pub rebuffer_ratio_mean: f64,
    pub qoe_mean: f64,
    pub qoe_per_segment_mean: f64,
}

impl Default for DashSummary {
    fn default() -> Self {
        DashSummary {
            sessions: 0,
            sessions_finished: 0,
            segments: 0,
            startup_s_mean: f64::NAN,
            mean_bitrate_kbps: f64::NAN,
            switches_mean: f64::NAN,
            stalls_mean: f64::NAN,
            stall_s_mean: f64::NAN,
            rebuffer_ratio_mean: f64::NAN,
            qoe_mean: f64::NAN,
            qoe_per_segment_mean: f64::NAN,
        }
    }
}

/// The DASH side of a run (present only when a `dash` source is).
#[derive(Default)]
pub(super) struct DashBooks {
    /// Each source's configuration (`None`: not a dash source).
    configs: Vec<Option<Arc<DashConfig>>>,
    sessions: DashSessionRows,
    segments: DashSegmentRows,
    /// Sums over the sessions recorded and how many had a value, for the summary's means:
    /// bitrate, switches, stalls, stall time, rebuffer ratio, QoE, QoE per segment, startup.
    sums: [(f64, u64); 8],
    summary: DashSummary,
}

/// Bytes a session holds (its player on the heap), for the estimate.
pub fn session_bytes(cfg: &DashConfig) -> f64 {
    (std::mem::size_of::<DashApp>() + 2 * 20 * 8 + 8 * cfg.ladder_kbps.len()) as f64
}

impl Simulation {
    /// A `dash` source: each session's start (`start_s` plus its jitter, from its own stream).
    pub(super) fn add_dash_source(&mut self, source: u32, cfg: &DashConfig) {
        let books = self.dash.get_or_insert_with(Default::default);
        books.configs.resize(self.sc.traffic.len(), None);
        books.configs[source as usize] = Some(Arc::new(cfg.clone()));
        for k in 0..cfg.sessions {
            let mut r = Rng::substream(
                self.sc.seed,
                StreamKind::TrafficSource,
                source as u64,
                k as u64,
            );
            let t = secs(cfg.start_s + cfg.start_jitter_s * r.uniform());
            self.sched.at(t, Ev::Start { source, flow: k });
        }
    }

    /// Session `session` of `source` opens its connection.
    pub(super) fn start_dash(&mut self, source: u32, session: u32) {
        let books = self.dash.as_ref().expect("a dash source");
        let cfg = books.configs[source as usize]
            .clone()
            .expect("a dash source");
        let (client, server) = self.host_pair(source, cfg.client_side, session);
        let app = App::Dash(Box::new(DashApp::new(cfg, self.sched.now())));
        self.open(
            source,
            session as u64,
            client,
            server,
            app,
            None,
            None,
            false,
        );
    }

    /// A segment of the session on `slot` arrived: its row, and the session's once the video
    /// is complete.
    pub(super) fn on_dash_segment(&mut self, slot: u32) {
        let c = &self.conns[slot as usize];
        let App::Dash(d) = &c.app else { return };
        let books = self.dash.as_mut().expect("a dash source");
        if d.config().segment_rows {
            let s = &d.last_segment;
            let r = &mut books.segments;
            r.conn_id.push(c.id);
            r.source.push(c.source as u64);
            r.session.push(c.identity);
            r.index.push(s.index);
            r.quality.push(s.quality as u64);
            r.bitrate_kbps.push(s.bitrate_kbps);
            r.bytes.push(s.bytes);
            r.request_s.push(s.request_s);
            r.first_byte_s.push(s.first_byte_s);
            r.end_s.push(s.end_s);
            r.download_s.push(s.end_s - s.request_s);
            r.buffer_at_request_s.push(s.buffer_at_request_s);
            r.throughput_kbps.push(s.throughput_kbps);
            r.sample_kbps.push(s.sample_kbps);
        }
        if d.all_done() {
            self.record_dash(slot);
        }
    }

    /// Writes the session's row once (a finished video, or as of now).
    pub(super) fn record_dash(&mut self, slot: u32) {
        let now = self.sched.now();
        let c = &mut self.conns[slot as usize];
        let App::Dash(d) = &mut c.app else { return };
        if d.recorded {
            return;
        }
        d.recorded = true;
        let cfg = d.config().clone();
        let finished = d.all_done();
        d.player.advance(&cfg, now);
        let p = &d.player;
        let books = self.dash.as_mut().expect("a dash source");
        let r = &mut books.sessions;
        let nan_if = |n: f64, v: f64| if n > 0.0 { v / n } else { f64::NAN };
        let played = p.sum_seconds - p.level_s();
        let stall = p.stall_time_at(now);
        let qoe = p.qoe(now);
        let segments = p.done as f64;
        let rebuffer = nan_if(stall + played, stall);
        r.conn_id.push(c.id);
        r.source.push(c.source as u64);
        r.session.push(c.identity);
        r.client_side
            .push(if c.client_left { "left" } else { "right" });
        r.abr.push(match cfg.abr {
            crate::config::dash::DashAbr::Dynamic => "dynamic",
            crate::config::dash::DashAbr::Throughput => "throughput",
            crate::config::dash::DashAbr::Bola => "bola",
        });
        r.start_s.push(c.start as f64 * 1e-9);
        r.end_s.push(now as f64 * 1e-9);
        r.finished.push(finished);
        r.startup_s.push(p.startup_s.unwrap_or(f64::NAN));
        r.segments.push(p.done);
        r.video_s.push(p.sum_seconds);
        r.buffer_s.push(p.level_s());
        let bitrate = nan_if(p.sum_seconds, p.sum_kbps_seconds);
        r.mean_bitrate_kbps.push(bitrate);
        r.switches.push(p.switches);
        r.switch_kbps_mean
            .push(nan_if(p.switches as f64, p.sum_switch_kbps));
        r.stalls.push(p.stalls);
        r.stall_s.push(stall);
        r.rebuffer_ratio.push(rebuffer);
        r.qoe.push(qoe);
        r.qoe_per_segment.push(nan_if(segments, qoe));
        r.bytes_requested.push(d.bytes_requested());
        r.bytes_delivered.push(d.bytes_received());
        // The summary's sums (a NaN, e.g. no startup yet, is left out of its mean).
        let s = &mut books.summary;
        s.sessions += 1;
        s.sessions_finished += finished as u64;
        s.segments += p.done;
        let values = [
            bitrate,
            p.switches as f64,
            p.stalls as f64,
            stall,
            rebuffer,
            qoe,
            nan_if(segments, qoe),
            p.startup_s.unwrap_or(f64::NAN),
        ];
        for (sum, v) in books.sums.iter_mut().zip(values) {
            if v.is_finite() {
                sum.0 += v;
                sum.1 += 1;
            }
        }
    }

    /// The DASH tables' batches since the last drain.
    pub(super) fn drain_dash(&mut self, tables: &mut Vec<Table>) {
        if let Some(b) = self.dash.as_mut() {
            tables.push(b.sessions.take());
            tables.push(b.segments.take());
        }
    }

    /// The summary's `dash` section (after every session is recorded).
    pub(super) fn dash_summary(&self) -> DashSummary {
        let Some(b) = self.dash.as_ref() else {
            return DashSummary::default();
        };
        let mut s = b.summary.clone();
        let [bitrate, switches, stalls, stall, rebuffer, qoe, qoe_seg, startup] = b
            .sums
            .map(|(v, n)| if n > 0 { v / n as f64 } else { f64::NAN });
        s.mean_bitrate_kbps = bitrate;
        s.switches_mean = switches;
        s.stalls_mean = stalls;
        s.stall_s_mean = stall;
        s.rebuffer_ratio_mean = rebuffer;
        s.qoe_mean = qoe;
        s.qoe_per_segment_mean = qoe_seg;
        s.startup_s_mean = startup;
        s
    }
}
