//! End of run for the real-time flows: their rows (`rows.rs`) and the summary's `voice`,
//! `game` and `ping` sections (present only when the run has such flows).

use serde::Serialize;

use super::{ms, RtFlow, RtKind, Stream};
use crate::measure::histogram::DelayHistogram;
use crate::sim::Simulation;

/// Whole-run voice totals after the warm-up, over every stream (each direction of a call).
#[derive(Clone, Debug, Default, Serialize)]
pub struct VoiceSummary {
    pub calls: u64,
    pub streams: u64,
    /// The codec of the first voice entry (`aqmlab.analysis.voice` reads the E-model's
    /// parameters by it; per-stream codecs are in `voice_streams`).
    pub codec: String,
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
    pub late: u64,
    pub unresolved: u64,
    /// Runs of consecutive packets lost or late, summed over the streams.
    pub bursts: u64,
    pub ce_marked: u64,
    /// lost / (delivered + lost), and late / (delivered + lost).
    pub loss_fraction: f64,
    pub late_fraction: f64,
    /// One-way network delay of delivered packets, all streams.
    pub delay_p50_ms: f64,
    pub delay_p95_ms: f64,
    pub delay_p99_ms: f64,
    pub delay_max_ms: f64,
    /// Means over the streams of the RFC 3550 jitter and of the mouth-to-ear delay.
    pub jitter_ms: f64,
    pub mouth_to_ear_ms: f64,
}

/// Whole-run game totals after the warm-up (`up`: client to server).
#[derive(Clone, Debug, Default, Serialize)]
pub struct GameSummary {
    pub flows: u64,
    pub up_sent: u64,
    pub up_delivered: u64,
    pub up_lost: u64,
    pub up_unresolved: u64,
    pub down_sent: u64,
    pub down_delivered: u64,
    pub down_lost: u64,
    pub down_unresolved: u64,
    pub up_loss_fraction: f64,
    pub down_loss_fraction: f64,
    pub up_delay_p50_ms: f64,
    pub up_delay_p95_ms: f64,
    pub up_delay_p99_ms: f64,
    pub down_delay_p50_ms: f64,
    pub down_delay_p95_ms: f64,
    pub down_delay_p99_ms: f64,
    pub rtt_samples: u64,
    pub rtt_mean_ms: f64,
    pub rtt_p50_ms: f64,
    pub rtt_p95_ms: f64,
    pub rtt_p99_ms: f64,
    pub rtt_max_ms: f64,
    pub ce_marked: u64,
}

/// Whole-run ping totals: probes sent after the warm-up and their RTTs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PingSummary {
    pub flows: u64,
    pub probes: u64,
    pub answered: u64,
    pub lost: u64,
    pub unresolved: u64,
    /// lost / (answered + lost).
    pub loss_fraction: f64,
    pub rtt_mean_ms: f64,
    pub rtt_p50_ms: f64,
    pub rtt_p95_ms: f64,
    pub rtt_p99_ms: f64,
    pub rtt_max_ms: f64,
}

/// A quantile in ms, NaN without samples.
fn q(h: &DelayHistogram, p: f64) -> f64 {
    if h.count() == 0 {
        f64::NAN
    } else {
        ms(h.quantile(p))
    }
}

fn max_ms(h: &DelayHistogram) -> f64 {
    if h.count() == 0 {
        f64::NAN
    } else {
        ms(h.max())
    }
}

fn fraction(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        f64::NAN
    } else {
        part as f64 / whole as f64
    }
}

/// A voice stream's mouth-to-ear delay, ms: the anchor packet's one-way delay, the buffer, the
/// frame and the codec's look-ahead (NaN before any packet arrived).
fn mouth_to_ear_ms(f: &RtFlow, s: &Stream) -> f64 {
    s.anchor.map_or(f64::NAN, |(k0, a0)| {
        ms(a0 - s.send_time(k0))
            + ms(f.jitter_buffer)
            + s.schedule.interval * 1e-6
            + f.codec.lookahead_ms()
    })
}

impl Simulation {
    /// End of run: the real-time flows' rows and summaries.
    pub(in crate::sim) fn close_rt(
        &mut self,
        voice: &mut super::VoiceStreamRows,
        game: &mut super::GameFlowRows,
        ping: &mut super::PingProbeRows,
    ) {
        let rt = &self.rt;
        let mut vs = VoiceSummary::default();
        let mut gs = GameSummary::default();
        let mut ps = PingSummary::default();
        let (mut jitter_sum, mut m2e_sum, mut m2e_n) = (0.0, 0.0, 0u64);
        let tr = |f: &RtFlow| &self.sc.traffic[f.source as usize];
        for (fid, f) in rt.flows.iter().enumerate() {
            let up = f.up.map(|i| &rt.streams[i as usize]);
            let down = f.down.map(|i| &rt.streams[i as usize]);
            match f.kind {
                RtKind::Voice => {
                    if vs.calls == 0 {
                        vs.codec = f.codec.name().to_string();
                    }
                    vs.calls += 1;
                    for (s, dir) in [(up, "up"), (down, "down")] {
                        let Some(s) = s else { continue };
                        let m2e = mouth_to_ear_ms(f, s);
                        voice.flow.push(fid as u64);
                        voice.source.push(f.source as u64);
                        voice.index.push(f.index as u64);
                        voice.direction.push(dir);
                        voice.codec.push(f.codec.name());
                        voice.sender_host.push(s.sender as u64);
                        voice.receiver_host.push(s.receiver as u64);
                        voice.packet_bytes.push(s.size as u64);
                        voice.frame_ms.push(s.schedule.interval * 1e-6);
                        voice.one_way_extra_ms.push(ms(s.flow_delay));
                        voice.start_s.push(s.schedule.start as f64 * 1e-9);
                        voice.sent.push(s.sent);
                        voice.delivered.push(s.delivered);
                        voice.lost.push(s.lost);
                        voice.late.push(s.late);
                        voice.unresolved.push(s.unresolved());
                        voice.bursts.push(s.bursts);
                        voice.ce_marked.push(s.ce);
                        voice.delay_p50_ms.push(q(&s.owd, 0.5));
                        voice.delay_p95_ms.push(q(&s.owd, 0.95));
                        voice.delay_p99_ms.push(q(&s.owd, 0.99));
                        voice.delay_max_ms.push(max_ms(&s.owd));
                        voice.jitter_ms.push(s.jitter * 1e-6);
                        voice.jitter_buffer_ms.push(ms(f.jitter_buffer));
                        voice.mouth_to_ear_ms.push(m2e);
                        vs.streams += 1;
                        vs.sent += s.sent;
                        vs.delivered += s.delivered;
                        vs.lost += s.lost;
                        vs.late += s.late;
                        vs.unresolved += s.unresolved();
                        vs.bursts += s.bursts;
                        vs.ce_marked += s.ce;
                        jitter_sum += s.jitter * 1e-6;
                        if m2e.is_finite() {
                            m2e_sum += m2e;
                            m2e_n += 1;
                        }
                    }
                },
                RtKind::Game => {
                    let (u, d) = (up.expect("a client stream"), down.expect("a server stream"));
                    let rtt = f.rtt.as_ref().expect("a game's RTT histogram");
                    let crate::config::TrafficConfig::Game(g) = tr(f) else {
                        unreachable!("a game entry")
                    };
                    game.flow.push(fid as u64);
                    game.source.push(f.source as u64);
                    game.index.push(f.index as u64);
                    game.client_host.push(f.client as u64);
                    game.server_host.push(f.server as u64);
                    game.client_rate_hz.push(g.client_rate_hz);
                    game.tick_hz.push(g.tick_hz);
                    game.client_bytes.push(u.size as u64);
                    game.server_bytes.push(d.size as u64);
                    game.start_s.push(u.schedule.start as f64 * 1e-9);
                    game.up_sent.push(u.sent);
                    game.up_delivered.push(u.delivered);
                    game.up_lost.push(u.lost);
                    game.up_unresolved.push(u.unresolved());
                    game.down_sent.push(d.sent);
                    game.down_delivered.push(d.delivered);
                    game.down_lost.push(d.lost);
                    game.down_unresolved.push(d.unresolved());
                    game.up_delay_p50_ms.push(q(&u.owd, 0.5));
                    game.up_delay_p95_ms.push(q(&u.owd, 0.95));
                    game.up_delay_p99_ms.push(q(&u.owd, 0.99));
                    game.down_delay_p50_ms.push(q(&d.owd, 0.5));
                    game.down_delay_p95_ms.push(q(&d.owd, 0.95));
                    game.down_delay_p99_ms.push(q(&d.owd, 0.99));
                    game.rtt_samples.push(rtt.count());
                    game.rtt_p50_ms.push(q(rtt, 0.5));
                    game.rtt_p95_ms.push(q(rtt, 0.95));
                    game.rtt_p99_ms.push(q(rtt, 0.99));
                    game.rtt_max_ms.push(max_ms(rtt));
                    game.ce_marked.push(u.ce + d.ce);
                    gs.flows += 1;
                    gs.up_sent += u.sent;
                    gs.up_delivered += u.delivered;
                    gs.up_lost += u.lost;
                    gs.up_unresolved += u.unresolved();
                    gs.down_sent += d.sent;
                    gs.down_delivered += d.delivered;
                    gs.down_lost += d.lost;
                    gs.down_unresolved += d.unresolved();
                    gs.ce_marked += u.ce + d.ce;
                },
                RtKind::Ping => {
                    let u = up.expect("a probe stream");
                    ps.flows += 1;
                    let first = u.first_measured.unwrap_or(u.schedule.next) as usize;
                    let last_answered = f.probes.iter().rposition(Option::is_some);
                    for (k, rtt) in f.probes.iter().enumerate().skip(first) {
                        let status = match (rtt, last_answered) {
                            (Some(_), _) => "answered",
                            (None, Some(l)) if k < l => "lost",
                            _ => "unresolved",
                        };
                        ping.flow.push(fid as u64);
                        ping.source.push(f.source as u64);
                        ping.seq.push(k as u64);
                        ping.t_s.push(u.send_time(k as u64) as f64 * 1e-9);
                        ping.rtt_ms.push(rtt.map_or(f64::NAN, ms));
                        ping.status.push(status);
                        ps.probes += 1;
                        match status {
                            "answered" => ps.answered += 1,
                            "lost" => ps.lost += 1,
                            _ => ps.unresolved += 1,
                        }
                    }
                },
            }
        }
        if let Some(h) = &rt.voice_owd {
            vs.loss_fraction = fraction(vs.lost, vs.delivered + vs.lost);
            vs.late_fraction = fraction(vs.late, vs.delivered + vs.lost);
            vs.delay_p50_ms = q(h, 0.5);
            vs.delay_p95_ms = q(h, 0.95);
            vs.delay_p99_ms = q(h, 0.99);
            vs.delay_max_ms = max_ms(h);
            vs.jitter_ms = jitter_sum / vs.streams.max(1) as f64;
            vs.mouth_to_ear_ms = if m2e_n > 0 {
                m2e_sum / m2e_n as f64
            } else {
                f64::NAN
            };
            self.summary.voice = Some(vs);
        }
        if let (Some([hu, hd]), Some(rtt)) = (&rt.game_owd, &rt.game_rtt) {
            gs.up_loss_fraction = fraction(gs.up_lost, gs.up_delivered + gs.up_lost);
            gs.down_loss_fraction = fraction(gs.down_lost, gs.down_delivered + gs.down_lost);
            gs.up_delay_p50_ms = q(hu, 0.5);
            gs.up_delay_p95_ms = q(hu, 0.95);
            gs.up_delay_p99_ms = q(hu, 0.99);
            gs.down_delay_p50_ms = q(hd, 0.5);
            gs.down_delay_p95_ms = q(hd, 0.95);
            gs.down_delay_p99_ms = q(hd, 0.99);
            gs.rtt_samples = rtt.count();
            gs.rtt_mean_ms = mean_ms(rtt);
            gs.rtt_p50_ms = q(rtt, 0.5);
            gs.rtt_p95_ms = q(rtt, 0.95);
            gs.rtt_p99_ms = q(rtt, 0.99);
            gs.rtt_max_ms = max_ms(rtt);
            self.summary.game = Some(gs);
        }
        if let Some(h) = &rt.ping_rtt {
            ps.loss_fraction = fraction(ps.lost, ps.answered + ps.lost);
            ps.rtt_mean_ms = mean_ms(h);
            ps.rtt_p50_ms = q(h, 0.5);
            ps.rtt_p95_ms = q(h, 0.95);
            ps.rtt_p99_ms = q(h, 0.99);
            ps.rtt_max_ms = max_ms(h);
            self.summary.ping = Some(ps);
        }
    }
}

fn mean_ms(h: &DelayHistogram) -> f64 {
    if h.count() == 0 {
        f64::NAN
    } else {
        h.mean() / crate::units::MS as f64
    }
}
