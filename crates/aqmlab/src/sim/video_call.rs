//! Real-time video calls (`kind = "video_call"`): RTP-like video over UDP.
//!
//! Sender: RFC 8593's statistical encoder (`workload::video_encoder`) makes a frame every
//! `1 / fps` (with its noise); the frame is cut into packets of at most `packet_bytes` on the
//! wire (40 header bytes each: IPv4, UDP, RTP), full-size packets first (as syncodecs'
//! `ShapedPacketizer` cuts them). As that packetizer does, the encoder's target before each
//! frame is the controller's rate divided by `1 + h`, `h` the previous frame's header bytes
//! over its payload bytes, so that the rate on the wire follows the controller's.
//!
//! - `controller = "nada"` (RFC 8698, `sim::nada`): the packets enter NADA's rate-shaping
//!   buffer (§5.2.1) and leave it paced at `r_send` (§5.2.2); the receiver sends a feedback
//!   message every `feedback_interval_ms` (NADA's DELTA, §5.3) back across the reverse path
//!   (and its queue); each feedback updates `r_ref`, the encoder's target `r_vin` and `r_send`.
//! - `controller = "none"`: a fixed rate, each frame's packets sent back to back at capture
//!   (RFC 7928 §7.2, "bursty video frames"); no feedback.
//!
//! Receiver: the network keeps a call's packets in order (as for `udp_cbr`), so a gap in the
//! packet numbers is a loss. A frame is delivered when its last packet arrives and none of
//! its packets was lost (no retransmission, no FEC: a frame with a lost packet is lost). Its
//! delay runs from capture to the arrival of its last packet (it includes the time in the
//! shaping buffer, not a playout buffer). A frame later than `deadline_ms`, or lost, is a
//! freeze. The receiver knows a frame's packets from the sender's frame table (a real
//! receiver reads RTP timestamps and the marker bit).
//!
//! Metrics count frames captured and packets sent at or after the warm-up.

use std::collections::VecDeque;

use serde::Serialize;

use super::nada::{NadaReceiver, NadaSender, Report};
use super::records::VideoCallRows;
use super::{Ev, Simulation};
use crate::config::video_call::{VideoCallConfig, VideoController, VideoEcn, HEADER_BYTES};
use crate::config::{Direction, TrafficConfig};
use crate::measure::histogram::DelayHistogram;
use crate::packet::{Ecn, Packet, Proto};
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time, MS, US};
use crate::workload::video_encoder::{EncoderParams, VideoEncoder};

/// `Packet::flags` of a call's media and feedback packets (UDP packets of `udp_cbr` carry 0).
pub const MEDIA: u8 = 1;
pub const FEEDBACK: u8 = 2;
/// A feedback message on the wire: IPv4 + UDP + an RTCP message with NADA's three fields.
pub const FEEDBACK_BYTES: u32 = 64;
/// Frame-delay histogram: 250 µs bins up to 2 s, then the overflow bin.
const DELAY_BIN: Time = 250 * US;
const DELAY_BINS: usize = 8000;

/// The sub-events of `Ev::Video`.
pub(super) const FRAME: u32 = 0;
pub(super) const PACE: u32 = 1;
pub(super) const FEEDBACK_DUE: u32 = 2;
pub(super) const REPORT: u32 = 3;

/// A frame on its way: its packets `[first, first + count)`.
#[derive(Clone, Copy, Debug)]
struct FrameRec {
    first: u64,
    count: u32,
    captured: Time,
    got: u32,
    measured: bool,
}

/// A feedback message in flight.
#[derive(Clone, Copy, Debug)]
struct Feedback {
    id: u64,
    report: Report,
    /// Send time of the latest media packet received, and the time it was held before this
    /// feedback left (for the sender's RTT sample).
    echo_sent: Option<Time>,
    hold: Time,
}

/// Per-call counters (after the warm-up).
#[derive(Clone, Debug, Default)]
struct CallStats {
    frames: u64,
    frames_delivered: u64,
    frames_lost: u64,
    frames_late: u64,
    sent: u64,
    sent_bytes: u64,
    delivered: u64,
    delivered_bytes: u64,
    lost: u64,
    ce: u64,
    feedback_sent: u64,
    feedback_received: u64,
    /// Time-weighted sum of the target rate (bits), for its mean.
    target_bit_s: f64,
}

/// One call.
pub struct VideoCall {
    source: u32,
    index: u32,
    sender: u32,
    receiver: u32,
    route: [u32; 2],
    first_link: [u32; 2],
    flow_delay: [Time; 2],
    flow_hash: u32,
    start: Time,
    stop: Time,
    ecn: Ecn,
    fps: f64,
    packet_bytes: u32,
    deadline: Time,
    feedback_every: Time,
    report_every: Time,
    enc: VideoEncoder,
    /// The rate the controller asks of the encoder, on the wire (r_vin, or the fixed rate),
    /// and the previous frame's header bytes over its payload bytes (syncodecs'
    /// `m_lastOverheadFactor`; before the first frame, a full-size packet's).
    wire_target: f64,
    overhead: f64,
    rng: Rng,
    nada: Option<NadaSender>,
    rx: NadaReceiver,
    /// The controller's rate (r_ref, or the fixed rate), bits per second, and since when.
    target: f64,
    target_since: Time,
    /// NADA's sending rate (bits per second) and the shaping buffer: packet sizes waiting.
    r_send: f64,
    buffer: VecDeque<u32>,
    buffer_bytes: u64,
    pacing: bool,
    next_packet: u64,
    /// The first packet number sent at or after the warm-up.
    first_measured: Option<u64>,
    frames: VecDeque<FrameRec>,
    /// Receiver: next packet number expected, the latest packet's send and arrival times.
    expected: u64,
    last_rx: Option<(Time, Time)>,
    feedback: VecDeque<Feedback>,
    next_feedback: u64,
    rtt: Time,
    stats: CallStats,
    delay: DelayHistogram,
    /// Bytes sent and received since the last rate row.
    interval_sent: u64,
    interval_received: u64,
    last_report: Report,
}

/// Every call of a run and their aggregate frame-delay histogram.
#[derive(Default)]
pub struct VideoCalls {
    calls: Vec<VideoCall>,
    delay: Option<DelayHistogram>,
}

impl VideoCalls {
    /// Call `id`'s (source, destination) hosts for a packet with `flags` (media travels sender
    /// → receiver, feedback back), for captures.
    pub(super) fn hosts(&self, id: u32, flags: u8) -> (u32, u32) {
        let c = &self.calls[id as usize];
        if flags == MEDIA {
            (c.sender, c.receiver)
        } else {
            (c.receiver, c.sender)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

/// The run's video-call metrics (`summary.video_call`; absent without calls).
#[derive(Clone, Debug, Default, Serialize)]
pub struct VideoCallSummary {
    pub calls: u64,
    pub frames: u64,
    pub frames_delivered: u64,
    pub frames_lost: u64,
    /// Delivered later than the deadline.
    pub frames_late: u64,
    /// (late + lost) / frames resolved.
    pub freeze_ratio: f64,
    /// Frame delay (capture to the last packet's arrival) of delivered frames, ms.
    pub frame_delay_mean_ms: f64,
    pub frame_delay_p50_ms: f64,
    pub frame_delay_p95_ms: f64,
    pub frame_delay_p99_ms: f64,
    pub frame_delay_max_ms: f64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_lost: u64,
    pub packets_unresolved: u64,
    pub ce_marked: u64,
    /// lost / (delivered + lost).
    pub loss_ratio: f64,
    /// Mean over calls of the sending rate, the receiving rate and the controller's rate.
    pub send_mbps: f64,
    pub receive_mbps: f64,
    pub target_mbps: f64,
}

impl VideoCall {
    /// The encoder's target as a rate on the wire.
    fn encoder_wire_bps(&self) -> f64 {
        self.enc.target_bps() * (1.0 + self.overhead)
    }
}

impl Simulation {
    /// Creates the calls of `video_call` entry `source` and schedules their first frames.
    pub(super) fn add_video_source(&mut self, source: u32) {
        let TrafficConfig::VideoCall(cfg) = self.sc.traffic[source as usize].clone() else {
            unreachable!("a video_call entry")
        };
        let stop = cfg.stop_s.map_or(self.end, |s| secs(s).min(self.end));
        if self.video.delay.is_none() {
            self.video.delay = Some(DelayHistogram::new(DELAY_BIN, DELAY_BINS));
        }
        for f in 0..cfg.calls {
            let call = self.new_call(source, f, &cfg, stop);
            let id = self.video.calls.len() as u32;
            let start = call.start;
            let nada = call.nada.is_some();
            let (fb, rep) = (call.feedback_every, call.report_every);
            self.video.calls.push(call);
            if start < stop {
                self.sched.at(
                    start,
                    Ev::Video {
                        what: FRAME,
                        call: id,
                    },
                );
                if nada {
                    self.sched.at(
                        start + fb,
                        Ev::Video {
                            what: FEEDBACK_DUE,
                            call: id,
                        },
                    );
                }
                if rep > 0 {
                    self.sched.at(
                        start + rep,
                        Ev::Video {
                            what: REPORT,
                            call: id,
                        },
                    );
                }
            }
        }
    }

    fn new_call(&mut self, source: u32, f: u32, cfg: &VideoCallConfig, stop: Time) -> VideoCall {
        let (client, server) = self.host_pair(source, cfg.client_side, f);
        let (sender, receiver) = match cfg.direction {
            Direction::Download => (server, client),
            Direction::Upload => (client, server),
        };
        // Each direction's delay-box delay as a TCP connection's packets would get it.
        let extra = self.sample_rtt(source, f as u64, client, server);
        let delays = self.one_way_delays(extra);
        let by_sender = |h: u32| delays[(h == server) as usize];
        // Streams apart from the start-time draws of `udp_cbr` (sub-indices below 2^40).
        let sub = (1u64 << 40) + f as u64;
        let mut rng = Rng::substream(self.sc.seed, StreamKind::TrafficSource, source as u64, sub);
        let start = secs(cfg.start_s + cfg.start_jitter_s * rng.uniform());
        let (fwd, _) = self.path_id(sender, receiver);
        let (rev, _) = self.path_id(receiver, sender);
        let global = self.video.calls.len() as u64;
        let start_bps = cfg.start_bps();
        let nada = (cfg.controller == VideoController::Nada).then(|| {
            NadaSender::new(
                cfg.min_rate_mbps * 1e6,
                cfg.max_rate_mbps * 1e6,
                start_bps,
                cfg.feedback_interval_ms,
            )
        });
        let params = EncoderParams {
            fps: cfg.fps,
            iframe_bytes: cfg.iframe_bytes,
            size_noise: cfg.size_noise,
            interval_noise: cfg.interval_noise,
            keyframe_interval_s: cfg.keyframe_interval_s,
        };
        let overhead = HEADER_BYTES as f64 / (cfg.packet_bytes - HEADER_BYTES) as f64;
        let feedback_every = (cfg.feedback_interval_ms * MS as f64).round() as Time;
        VideoCall {
            source,
            index: f,
            sender,
            receiver,
            route: [fwd, rev],
            first_link: [
                self.paths[fwd as usize].links[0],
                self.paths[rev as usize].links[0],
            ],
            flow_delay: [by_sender(sender), by_sender(receiver)],
            // Distinct from connections' hashes and from `udp_cbr`'s (u64::MAX − flow).
            flow_hash: ((u64::MAX >> 1) - global)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(31) as u32,
            start,
            stop,
            ecn: match cfg.ecn {
                VideoEcn::NotEct => Ecn::NotEct,
                VideoEcn::Ect0 => Ecn::Ect0,
                VideoEcn::Ect1 => Ecn::Ect1,
            },
            fps: cfg.fps,
            packet_bytes: cfg.packet_bytes,
            deadline: (cfg.deadline_ms * MS as f64).round() as Time,
            feedback_every,
            report_every: secs(cfg.report_interval_s),
            enc: VideoEncoder::new(params, start_bps / (1.0 + overhead)),
            wire_target: start_bps,
            overhead,
            rng,
            nada,
            rx: NadaReceiver::new(feedback_every),
            target: start_bps,
            target_since: start,
            r_send: start_bps,
            buffer: VecDeque::new(),
            buffer_bytes: 0,
            pacing: false,
            next_packet: 0,
            first_measured: None,
            frames: VecDeque::new(),
            expected: 0,
            last_rx: None,
            feedback: VecDeque::new(),
            next_feedback: 0,
            rtt: 0,
            stats: CallStats::default(),
            delay: DelayHistogram::new(DELAY_BIN, DELAY_BINS),
            interval_sent: 0,
            interval_received: 0,
            last_report: Report {
                rmode: 0,
                x_curr: 0.0,
                r_recv: 0.0,
                d_queue: 0.0,
                p_loss: 0.0,
                p_mark: 0.0,
            },
        }
    }

    /// A call's event.
    pub(super) fn on_video(&mut self, what: u32, id: u32) {
        match what {
            FRAME => self.on_video_frame(id),
            PACE => self.on_video_pace(id),
            FEEDBACK_DUE => self.on_video_feedback_due(id),
            _ => self.on_video_report(id),
        }
    }

    /// The encoder captures a frame: it is cut into packets, sent at once (no controller) or
    /// queued in the shaping buffer (NADA).
    fn on_video_frame(&mut self, id: u32) {
        let now = self.sched.now();
        let warmup = self.warmup;
        let c = &mut self.video.calls[id as usize];
        c.enc.set_target(c.wire_target / (1.0 + c.overhead));
        let frame = c.enc.next_frame(&mut c.rng);
        let max_payload = c.packet_bytes - HEADER_BYTES;
        let payload = frame.bytes.round().max(1.0) as u64;
        let count = payload.div_ceil(max_payload as u64) as u32;
        c.overhead = HEADER_BYTES as f64 * count as f64 / payload as f64;
        let measured = now >= warmup;
        c.frames.push_back(FrameRec {
            first: c.next_packet + c.buffer.len() as u64,
            count,
            captured: now,
            got: 0,
            measured,
        });
        if measured {
            c.stats.frames += 1;
        }
        let mut left = payload;
        for _ in 0..count {
            let p = left.min(max_payload as u64) as u32;
            left -= p as u64;
            c.buffer.push_back(p + HEADER_BYTES);
            c.buffer_bytes += (p + HEADER_BYTES) as u64;
        }
        let next = now + secs(frame.gap_s);
        if next < c.stop {
            self.sched.at(
                next.max(now + 1),
                Ev::Video {
                    what: FRAME,
                    call: id,
                },
            );
        }
        if c.nada.is_none() {
            while !self.video.calls[id as usize].buffer.is_empty() {
                self.send_video_packet(id);
            }
        } else {
            self.refresh_nada_rates(id);
            if !self.video.calls[id as usize].pacing {
                self.on_video_pace(id);
            }
        }
    }

    /// NADA's rate-shaping buffer sends its next packet and paces the one after at `r_send`.
    fn on_video_pace(&mut self, id: u32) {
        let now = self.sched.now();
        let size = self.send_video_packet(id);
        let c = &mut self.video.calls[id as usize];
        if c.buffer.is_empty() {
            c.pacing = false;
            return;
        }
        c.pacing = true;
        let gap = (size as f64 * 8e9 / c.r_send).round() as Time;
        self.sched.at(
            now + gap.max(1),
            Ev::Video {
                what: PACE,
                call: id,
            },
        );
    }

    /// The buffer's head packet goes onto the call's first link; returns its size.
    fn send_video_packet(&mut self, id: u32) -> u32 {
        let now = self.sched.now();
        let measured = now >= self.warmup;
        let c = &mut self.video.calls[id as usize];
        let size = c.buffer.pop_front().expect("a packet to send");
        c.buffer_bytes -= size as u64;
        let k = c.next_packet;
        c.next_packet += 1;
        if measured {
            c.first_measured.get_or_insert(k);
            c.stats.sent += 1;
            c.stats.sent_bytes += size as u64;
        }
        c.interval_sent += size as u64;
        let p = Packet {
            conn: id,
            route: c.route[0],
            proto: Proto::Udp,
            flags: MEDIA,
            size,
            len: size - HEADER_BYTES,
            seq: k,
            // The send time, as RTP's header extension for send times would carry it.
            ack: now,
            flow_delay: c.flow_delay[0],
            flow_hash: c.flow_hash,
            ecn: c.ecn,
            ..Default::default()
        };
        let link = c.first_link[0];
        self.send_from_host(link, p);
        size
    }

    /// NADA's encoder target and sending rate from `r_ref` and the buffer (§5.2.2).
    fn refresh_nada_rates(&mut self, id: u32) {
        let c = &mut self.video.calls[id as usize];
        let Some(n) = &c.nada else { return };
        let (r_vin, r_send) = n.rates(c.buffer_bytes, c.fps);
        c.wire_target = r_vin;
        c.r_send = r_send;
    }

    /// The receiver's feedback timer: a report goes back across the reverse path.
    fn on_video_feedback_due(&mut self, id: u32) {
        let now = self.sched.now();
        let c = &mut self.video.calls[id as usize];
        let report = c.rx.report();
        c.last_report = report;
        let fb = Feedback {
            id: c.next_feedback,
            report,
            echo_sent: c.last_rx.map(|(s, _)| s),
            hold: c.last_rx.map_or(0, |(_, a)| now - a),
        };
        c.next_feedback += 1;
        c.feedback.push_back(fb);
        if now >= self.warmup {
            c.stats.feedback_sent += 1;
        }
        let p = Packet {
            conn: id,
            route: c.route[1],
            proto: Proto::Udp,
            flags: FEEDBACK,
            size: FEEDBACK_BYTES,
            len: FEEDBACK_BYTES - 28,
            seq: fb.id,
            flow_delay: c.flow_delay[1],
            flow_hash: c.flow_hash ^ 1,
            ..Default::default()
        };
        let (link, next) = (c.first_link[1], now + c.feedback_every);
        if next < c.stop {
            self.sched.at(
                next,
                Ev::Video {
                    what: FEEDBACK_DUE,
                    call: id,
                },
            );
        }
        self.send_from_host(link, p);
    }

    /// A row of the `video_rates` table.
    fn on_video_report(&mut self, id: u32) {
        let now = self.sched.now();
        let c = &mut self.video.calls[id as usize];
        let secs_ = c.report_every as f64 * 1e-9;
        let r = &mut self.video_rate_rows;
        r.t_s.push(now as f64 * 1e-9);
        r.call.push(id as u64);
        r.target_mbps.push(c.target * 1e-6);
        r.encoder_mbps.push(c.encoder_wire_bps() * 1e-6);
        r.send_mbps
            .push(c.interval_sent as f64 * 8.0 / secs_ * 1e-6);
        r.receive_mbps
            .push(c.interval_received as f64 * 8.0 / secs_ * 1e-6);
        r.queue_delay_ms.push(c.last_report.d_queue);
        r.x_curr_ms.push(c.last_report.x_curr);
        r.loss_ratio.push(c.last_report.p_loss);
        r.mark_ratio.push(c.last_report.p_mark);
        r.buffer_bytes.push(c.buffer_bytes);
        c.interval_sent = 0;
        c.interval_received = 0;
        let next = now + c.report_every;
        if next <= c.stop {
            self.sched.at(
                next,
                Ev::Video {
                    what: REPORT,
                    call: id,
                },
            );
        }
    }

    /// A call's packet reached its receiver (media) or its sender (feedback).
    pub(super) fn deliver_video(&mut self, pkt: &Packet) {
        if pkt.flags == FEEDBACK {
            self.deliver_video_feedback(pkt);
            return;
        }
        let now = self.sched.now();
        let c = &mut self.video.calls[pkt.conn as usize];
        let k = pkt.seq;
        if k < c.expected {
            return;
        }
        let measured = c.first_measured.is_some_and(|m| k >= m);
        // Packets [expected, k) were lost; those sent at or after the warm-up count.
        let gap = k - c.expected;
        let from = c.first_measured.map_or(k, |m| m.max(c.expected));
        c.stats.lost += k.saturating_sub(from);
        c.expected = k + 1;
        let ce = pkt.ecn == Ecn::Ce;
        if measured {
            c.stats.delivered += 1;
            c.stats.delivered_bytes += pkt.size as u64;
            c.stats.ce += ce as u64;
        }
        c.interval_received += pkt.size as u64;
        c.rx.on_packet(now, pkt.ack, pkt.size, ce, gap);
        c.last_rx = Some((pkt.ack, now));
        // Frames ending before packet k are resolved: any not complete lost a packet.
        let mut outcome = Vec::new();
        while let Some(f) = c.frames.front() {
            if f.first + f.count as u64 > k {
                break;
            }
            let f = c.frames.pop_front().expect("a frame");
            outcome.push((f, None));
        }
        if let Some(f) = c.frames.front_mut() {
            if f.first <= k {
                f.got += 1;
                if k == f.first + f.count as u64 - 1 {
                    let f = c.frames.pop_front().expect("a frame");
                    let complete = f.got == f.count;
                    outcome.push((f, complete.then_some(now - f.captured)));
                }
            }
        }
        for (f, delay) in outcome {
            if !f.measured {
                continue;
            }
            match delay {
                Some(d) => {
                    c.stats.frames_delivered += 1;
                    c.stats.frames_late += (d > c.deadline) as u64;
                    c.delay.add(d);
                    if let Some(h) = &mut self.video.delay {
                        h.add(d);
                    }
                },
                None => c.stats.frames_lost += 1,
            }
        }
    }

    /// A feedback message reached the sender: NADA updates its rates (§4.3, §5.2.2).
    fn deliver_video_feedback(&mut self, pkt: &Packet) {
        let now = self.sched.now();
        let measured = now >= self.warmup;
        let c = &mut self.video.calls[pkt.conn as usize];
        while c.feedback.front().is_some_and(|f| f.id < pkt.seq) {
            c.feedback.pop_front(); // lost on the way
        }
        let Some(fb) = c.feedback.pop_front() else {
            return;
        };
        if measured {
            c.stats.feedback_received += 1;
        }
        if let Some(sent) = fb.echo_sent {
            c.rtt = (now - sent).saturating_sub(fb.hold);
        }
        let Some(n) = &mut c.nada else { return };
        let r_ref = n.on_report(now, &fb.report, c.rtt);
        if measured {
            let since = c.target_since.max(self.warmup);
            c.stats.target_bit_s += c.target * (now - since) as f64 * 1e-9;
        }
        c.target = r_ref;
        c.target_since = now;
        self.refresh_nada_rates(pkt.conn);
    }

    /// End of run: one row per call and the `video_call` summary.
    pub(super) fn close_video(&mut self, rows: &mut VideoCallRows) {
        let end = self.end.min(self.sched.now());
        let measured_s = end.saturating_sub(self.warmup) as f64 * 1e-9;
        let ms = |t: Time| t as f64 / MS as f64;
        let mbps = |bytes: u64| {
            if measured_s > 0.0 {
                bytes as f64 * 8.0 / measured_s * 1e-6
            } else {
                f64::NAN
            }
        };
        let mut s = VideoCallSummary {
            calls: self.video.calls.len() as u64,
            ..Default::default()
        };
        let warmup = self.warmup;
        for (id, c) in self.video.calls.iter_mut().enumerate() {
            let since = c.target_since.max(warmup);
            c.stats.target_bit_s += c.target * end.saturating_sub(since) as f64 * 1e-9;
            let st = &c.stats;
            let unresolved = st.sent - st.delivered - st.lost;
            let resolved_frames = st.frames_delivered + st.frames_lost;
            rows.call.push(id as u64);
            rows.source.push(c.source as u64);
            rows.index.push(c.index as u64);
            rows.sender_host.push(c.sender as u64);
            rows.receiver_host.push(c.receiver as u64);
            rows.controller
                .push(if c.nada.is_some() { "nada" } else { "none" });
            rows.ecn.push(match c.ecn {
                Ecn::Ect1 => "ect1",
                Ecn::Ect0 => "ect0",
                _ => "not_ect",
            });
            rows.start_s.push(c.start as f64 * 1e-9);
            rows.frames.push(st.frames);
            rows.frames_delivered.push(st.frames_delivered);
            rows.frames_lost.push(st.frames_lost);
            rows.frames_late.push(st.frames_late);
            rows.freeze_ratio.push(if resolved_frames > 0 {
                (st.frames_late + st.frames_lost) as f64 / resolved_frames as f64
            } else {
                f64::NAN
            });
            rows.frame_delay_p50_ms.push(ms(c.delay.quantile(0.5)));
            rows.frame_delay_p95_ms.push(ms(c.delay.quantile(0.95)));
            rows.frame_delay_p99_ms.push(ms(c.delay.quantile(0.99)));
            rows.frame_delay_max_ms.push(ms(c.delay.max()));
            rows.packets_sent.push(st.sent);
            rows.packets_delivered.push(st.delivered);
            rows.packets_lost.push(st.lost);
            rows.packets_unresolved.push(unresolved);
            rows.ce_marked.push(st.ce);
            rows.feedback_sent.push(st.feedback_sent);
            rows.feedback_received.push(st.feedback_received);
            rows.send_mbps.push(mbps(st.sent_bytes));
            rows.receive_mbps.push(mbps(st.delivered_bytes));
            rows.target_mbps.push(if measured_s > 0.0 {
                st.target_bit_s / measured_s * 1e-6
            } else {
                f64::NAN
            });
            s.frames += st.frames;
            s.frames_delivered += st.frames_delivered;
            s.frames_lost += st.frames_lost;
            s.frames_late += st.frames_late;
            s.packets_sent += st.sent;
            s.packets_delivered += st.delivered;
            s.packets_lost += st.lost;
            s.packets_unresolved += unresolved;
            s.ce_marked += st.ce;
            s.send_mbps += mbps(st.sent_bytes);
            s.receive_mbps += mbps(st.delivered_bytes);
            if measured_s > 0.0 {
                s.target_mbps += st.target_bit_s / measured_s * 1e-6;
            }
        }
        let n = s.calls.max(1) as f64;
        s.send_mbps /= n;
        s.receive_mbps /= n;
        s.target_mbps /= n;
        let resolved = s.frames_delivered + s.frames_lost;
        s.freeze_ratio = if resolved > 0 {
            (s.frames_late + s.frames_lost) as f64 / resolved as f64
        } else {
            f64::NAN
        };
        let pk = s.packets_delivered + s.packets_lost;
        s.loss_ratio = if pk > 0 {
            s.packets_lost as f64 / pk as f64
        } else {
            f64::NAN
        };
        if let Some(h) = &self.video.delay {
            s.frame_delay_mean_ms = h.mean() / MS as f64;
            s.frame_delay_p50_ms = ms(h.quantile(0.5));
            s.frame_delay_p95_ms = ms(h.quantile(0.95));
            s.frame_delay_p99_ms = ms(h.quantile(0.99));
            s.frame_delay_max_ms = ms(h.max());
        }
        self.summary.video_call = Some(s);
    }
}
