//! Real-time UDP applications (issue 37): a voice call (`kind = "voice"`), an online game
//! (`"game"`) and sparse echo probes (`"ping"`), built from one part: a periodic UDP packet
//! stream whose receiver timestamps every arrival, and an echo.
//!
//! **Streams.** A stream sends packet `k` (from 0) at `start + round(k · T)` while that time
//! is before its stop (as `udp_cbr`, computed from `k`, never accumulated). Its packets are
//! ordinary UDP packets on the host-to-host route (access links, bottleneck queues, delay
//! boxes) and carry the stream's ECN codepoint (RFC 3168 §5; ECT(1) is L4S to DualPI2: RFC
//! 9331, RFC 9332). The network keeps a stream's packets in order, so a gap in the packet numbers
//! at the receiver is that many losses (as `udp_cbr`, after Study D); packets sent but
//! neither delivered nor followed by a later arrival when the run ends are `unresolved` (in
//! flight, or lost with nothing after them to tell). Sent = delivered + lost + unresolved.
//!
//! **Receiver.** One-way delay = arrival − send time (the RTP timestamp of the packet; the
//! simulator's clocks agree). Interarrival jitter by RFC 3550 §6.4.1 (A.8): for consecutive
//! arrivals i, j, `D = (R_j − S_j) − (R_i − S_i)`, `J += (|D| − J) / 16`; reported as the
//! last value, as an RTCP receiver report would carry it.
//!
//! **Voice** (`config::realtime::VoiceConfig`): a packet of the codec every `frame_ms` from
//! each end. The receiver's jitter buffer is fixed: the first packet received (number `k0`,
//! at `a0`) is played `jitter_buffer_ms` after it arrives and packet `k` at
//! `a0 + round((k − k0) · T) + B`; a packet arriving after its playout time is late and
//! counts as lost to the listener (Ramjee et al. 1994's fixed playout, without their
//! adaptation at talkspurts: the call is one talkspurt, as without silence suppression).
//! Mouth-to-ear delay = the anchor packet's one-way delay + B + the frame (packetisation) +
//! the codec's look-ahead (ITU-T G.114's sum of the delays; the E-model's Ta). The E-model
//! itself is computed from these in Python (`aqmlab.analysis.voice`).
//!
//! **Game**: the client sends at `client_rate_hz`, the server updates at `tick_hz`. Each
//! update carries the newest client packet the server has received, as its send timestamp
//! plus the time the server held it before this update (RTCP's LSR and DLSR, RFC 3550
//! §6.4.1, summed in one field since only the sum is used): RTT = arrival − (timestamp +
//! hold), the network's round trip without the tick's wait.
//!
//! **Ping**: the client sends a probe every `interval_ms` (Flent's step, 0.2 s); the far host
//! answers each at once (as ICMP echo) with the probe's number and timestamp: RTT = arrival −
//! timestamp. A probe is answered, lost (a later probe's answer arrived first: the packets
//! keep their order), or unresolved at the end.
//!
//! Metrics count packets sent at or after the warm-up. Start phases are drawn from the
//! source's own stream (`StreamKind::TrafficSource`), so runs are deterministic.

mod books;
mod rows;

pub use books::{GameSummary, PingSummary, VoiceSummary};
pub(super) use rows::{GameFlowRows, PingProbeRows, VoiceStreamRows};

use super::periodic::{measured_gap, Periodic};
use super::{Ev, Simulation};
use crate::config::realtime::{EcnCodepoint, VoiceCodec, UDP_IP_BYTES};
use crate::config::TrafficConfig;
use crate::measure::histogram::DelayHistogram;
use crate::packet::{Ecn, Packet, Proto};
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time, MS, US};

/// `Packet::gen` of a real-time packet (a UDP CBR packet's is 0): `deliver_udp` hands it here.
pub(super) const RT_GEN: u32 = 1;
/// `Packet::ack` of a game update sent before any client packet reached the server.
const NO_ECHO: u64 = u64::MAX;

/// Delay histograms: 0.1 ms bins up to 2 s (quantiles exact to 0.1 ms; longer delays in the
/// overflow bin, whose quantile is the largest delay).
fn delay_histogram() -> DelayHistogram {
    DelayHistogram::new(100 * US, 20_000)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RtKind {
    Voice,
    Game,
    Ping,
}

/// One direction of a flow: a periodic sender (or ping's echoes) and its receiver.
#[derive(Clone, Debug)]
pub(super) struct Stream {
    flow: u32,
    /// Client to server.
    up: bool,
    sender: u32,
    receiver: u32,
    route: u32,
    first_link: u32,
    flow_delay: Time,
    flow_hash: u32,
    ecn: Ecn,
    size: u32,
    /// When its packets leave (`sim::periodic`; interval 0 for ping's echoes, sent on arrival).
    schedule: Periodic,
    first_measured: Option<u64>,
    expected: u64,
    sent: u64,
    delivered: u64,
    lost: u64,
    ce: u64,
    owd: DelayHistogram,
    /// RFC 3550 §6.4.1 interarrival jitter, ns, and the last transit time.
    jitter: f64,
    last_transit: Option<i64>,
    /// Voice: the jitter buffer's anchor (first packet received, its arrival).
    anchor: Option<(u64, Time)>,
    late: u64,
    /// Voice: runs of packets the listener did not get (lost or late), and whether the last
    /// packet was one of them (for G.107's BurstR, `aqmlab.analysis.voice`).
    bursts: u64,
    in_burst: bool,
    /// Game, client to server: the newest packet received and its arrival.
    newest: Option<(u64, Time)>,
}

impl Stream {
    /// A stream on `schedule` that has sent and received nothing yet; its flow, ends, route,
    /// flow hash, codepoint and size are the caller's to set (0 and Not-ECT here).
    fn fresh(schedule: Periodic) -> Stream {
        Stream {
            flow: 0,
            up: false,
            sender: 0,
            receiver: 0,
            route: 0,
            first_link: 0,
            flow_delay: 0,
            flow_hash: 0,
            ecn: Ecn::NotEct,
            size: 0,
            schedule,
            first_measured: None,
            expected: 0,
            sent: 0,
            delivered: 0,
            lost: 0,
            ce: 0,
            owd: delay_histogram(),
            jitter: 0.0,
            last_transit: None,
            anchor: None,
            late: 0,
            bursts: 0,
            in_burst: false,
            newest: None,
        }
    }

    fn send_time(&self, k: u64) -> Time {
        self.schedule.send_time(k)
    }

    fn next_send(&self) -> Option<Time> {
        self.schedule.next_send()
    }

    fn measured(&self, k: u64) -> bool {
        self.first_measured.is_some_and(|m| k >= m)
    }

    /// Packet `k` arrived: the measured packets skipped since the last arrival were lost.
    fn on_arrival(&mut self, k: u64) {
        if k < self.expected {
            return;
        }
        self.lost += measured_gap(self.first_measured, self.expected, k);
        self.expected = k + 1;
    }

    /// RFC 3550 §6.4.1: `J += (|D| − J) / 16` with `D` the change in transit time.
    fn update_jitter(&mut self, arrival: Time, sent: Time) {
        let transit = arrival as i64 - sent as i64;
        if let Some(last) = self.last_transit {
            let d = (transit - last).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    /// A packet the listener will not get (lost, or late): a new burst unless the previous
    /// one was not got either.
    fn note_unplayed(&mut self) {
        self.bursts += (!self.in_burst) as u64;
        self.in_burst = true;
    }

    /// Packets sent but neither delivered nor known lost.
    fn unresolved(&self) -> u64 {
        self.sent - self.delivered - self.lost
    }
}

/// One call, player or pinger.
#[derive(Clone, Debug)]
pub(super) struct RtFlow {
    kind: RtKind,
    source: u32,
    index: u32,
    client: u32,
    server: u32,
    /// Its streams' ids: client to server, server to client.
    up: Option<u32>,
    down: Option<u32>,
    /// Voice: the codec, the buffer's playout delay, the frame.
    codec: VoiceCodec,
    jitter_buffer: Time,
    /// Game and ping: round-trip times of measured packets.
    rtt: Option<DelayHistogram>,
    /// Ping: each probe's RTT (None: not answered).
    probes: Vec<Option<Time>>,
}

/// Every real-time flow of a run, their streams, and the run's aggregate histograms.
#[derive(Default)]
pub struct RtFlows {
    flows: Vec<RtFlow>,
    streams: Vec<Stream>,
    /// Per kind: one-way delays of voice, game up / down, RTTs of game and ping.
    voice_owd: Option<DelayHistogram>,
    game_owd: Option<[DelayHistogram; 2]>,
    game_rtt: Option<DelayHistogram>,
    ping_rtt: Option<DelayHistogram>,
}

impl RtFlows {
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Whether the run has voice, game and ping flows.
    pub fn kinds(&self) -> [bool; 3] {
        [
            self.voice_owd.is_some(),
            self.game_rtt.is_some(),
            self.ping_rtt.is_some(),
        ]
    }

    /// Stream `id`'s sending and receiving hosts.
    pub(super) fn hosts(&self, id: u32) -> (u32, u32) {
        let s = &self.streams[id as usize];
        (s.sender, s.receiver)
    }

    /// Stream `id`'s (source, destination) ports on the wire, for captures: the client's
    /// ephemeral port (`ephemeral`, of the flow's number) and the application's well-known
    /// one: RTP's 5004 (RFC 3551 §8), the Source engine's game port 27015, the echo service's
    /// 7 (RFC 862); swapped from server to client.
    pub(super) fn wire_ports(&self, id: u32, ephemeral: fn(u64) -> u16) -> (u16, u16) {
        let s = &self.streams[id as usize];
        let service = match self.flows[s.flow as usize].kind {
            RtKind::Voice => 5004,
            RtKind::Game => 27015,
            RtKind::Ping => 7,
        };
        // Past the CBR flows' numbers (`ephemeral` of small ids), as far as they go.
        let client = ephemeral(u32::MAX as u64 - s.flow as u64);
        if s.up {
            (client, service)
        } else {
            (service, client)
        }
    }
}

fn ecn_of(e: EcnCodepoint) -> Ecn {
    match e {
        EcnCodepoint::NotEct => Ecn::NotEct,
        EcnCodepoint::Ect0 => Ecn::Ect0,
        EcnCodepoint::Ect1 => Ecn::Ect1,
    }
}

/// What one entry's streams share, read from its configuration.
struct Plan {
    kind: RtKind,
    flows: u32,
    client_side: crate::config::Side,
    /// Client to server and server to client: (packet bytes, interval ns), if sent.
    up: Option<(u32, f64)>,
    down: Option<(u32, f64)>,
    ecn: Ecn,
    start_s: f64,
    /// Uniform start jitter of each stream, s.
    jitter: [f64; 2],
    stop_s: Option<f64>,
    codec: VoiceCodec,
    jitter_buffer_ms: f64,
}

fn plan(tr: &TrafficConfig) -> Plan {
    match tr {
        TrafficConfig::Voice(v) => {
            let t = v.frame_ms * 1e6;
            let p = Some((v.packet_bytes(), t));
            let download = v.direction == crate::config::Direction::Download;
            let j = v.start_jitter_s.unwrap_or(v.frame_ms * 1e-3);
            Plan {
                kind: RtKind::Voice,
                flows: v.flows,
                client_side: v.client_side,
                up: (v.two_way || !download).then_some(p).flatten(),
                down: (v.two_way || download).then_some(p).flatten(),
                ecn: ecn_of(v.ecn),
                start_s: v.start_s,
                // One call: both ends start in the same frame.
                jitter: [j, j],
                stop_s: v.stop_s,
                codec: v.codec,
                jitter_buffer_ms: v.jitter_buffer_ms,
            }
        },
        TrafficConfig::Game(g) => {
            let (tc, ts) = (1e9 / g.client_rate_hz, 1e9 / g.tick_hz);
            Plan {
                kind: RtKind::Game,
                flows: g.flows,
                client_side: g.client_side,
                up: Some((g.client_bytes, tc)),
                down: Some((g.server_bytes, ts)),
                ecn: ecn_of(g.ecn),
                start_s: g.start_s,
                jitter: g.start_jitter_s.map_or([tc * 1e-9, ts * 1e-9], |j| [j, j]),
                stop_s: g.stop_s,
                codec: VoiceCodec::default(),
                jitter_buffer_ms: 0.0,
            }
        },
        TrafficConfig::Ping(p) => {
            let t = p.interval_ms * 1e6;
            Plan {
                kind: RtKind::Ping,
                flows: p.flows,
                client_side: p.client_side,
                up: Some((p.packet_bytes, t)),
                // The echoes: the probe's size, sent on arrival.
                down: Some((p.packet_bytes, 0.0)),
                ecn: ecn_of(p.ecn),
                start_s: p.start_s,
                jitter: [p.start_jitter_s.unwrap_or(t * 1e-9); 2],
                stop_s: p.stop_s,
                codec: VoiceCodec::default(),
                jitter_buffer_ms: 0.0,
            }
        },
        _ => unreachable!("a real-time entry"),
    }
}

impl Simulation {
    /// Creates the flows of real-time entry `source` and schedules their first packets.
    pub(super) fn add_rt_source(&mut self, source: u32) {
        let pl = plan(&self.sc.traffic[source as usize]);
        let seed = self.sc.seed;
        let stop = pl.stop_s.map_or(self.end, |s| secs(s).min(self.end));
        match pl.kind {
            RtKind::Voice => {
                self.rt.voice_owd.get_or_insert_with(delay_histogram);
            },
            RtKind::Game => {
                self.rt
                    .game_owd
                    .get_or_insert_with(|| [delay_histogram(), delay_histogram()]);
                self.rt.game_rtt.get_or_insert_with(delay_histogram);
            },
            RtKind::Ping => {
                self.rt.ping_rtt.get_or_insert_with(delay_histogram);
            },
        }
        for f in 0..pl.flows {
            let (client, server) = self.host_pair(source, pl.client_side, f);
            // The flow's delay-box RTT, drawn as a TCP connection's would be; each direction
            // gets the one-way delay a connection's packets from that end would get.
            let extra = self.sample_rtt(source, f as u64, client, server);
            let delays = self.one_way_delays(extra);
            let mut rng = Rng::substream(seed, StreamKind::TrafficSource, source as u64, f as u64);
            // Two draws per flow, whatever it sends: a call's ends share the first.
            let phase = [rng.uniform(), rng.uniform()];
            let flow_id = self.rt.flows.len() as u32;
            let mut ids = [None, None];
            for (dir, spec) in [pl.up, pl.down].into_iter().enumerate() {
                let Some((size, interval)) = spec else {
                    continue;
                };
                let up = dir == 0;
                let (sender, receiver) = if up {
                    (client, server)
                } else {
                    (server, client)
                };
                let draw = if pl.kind == RtKind::Voice {
                    phase[0]
                } else {
                    phase[dir]
                };
                let start = secs(pl.start_s + pl.jitter[dir] * draw);
                let (route, _) = self.path_id(sender, receiver);
                let id = self.rt.streams.len() as u32;
                let s = Stream {
                    flow: flow_id,
                    up,
                    sender,
                    receiver,
                    route,
                    first_link: self.paths[route as usize].links[0],
                    flow_delay: delays[(sender == server) as usize],
                    // Distinct from connections' and CBR flows' hashes (those count from
                    // small ids and from u64::MAX down).
                    flow_hash: (0x5EED_0000_0000_u64 + id as u64)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        .rotate_left(23) as u32,
                    ecn: pl.ecn,
                    size,
                    ..Stream::fresh(Periodic::new(start, stop, interval))
                };
                if let Some(t) = s.next_send() {
                    self.sched.at(t, Ev::RtSend(id));
                }
                self.rt.streams.push(s);
                ids[dir] = Some(id);
            }
            self.rt.flows.push(RtFlow {
                kind: pl.kind,
                source,
                index: f,
                client,
                server,
                up: ids[0],
                down: ids[1],
                codec: pl.codec,
                jitter_buffer: secs(pl.jitter_buffer_ms * 1e-3),
                rtt: (pl.kind != RtKind::Voice).then(delay_histogram),
                probes: Vec::new(),
            });
        }
    }

    /// Stream `id` sends its next packet and schedules the one after.
    pub(super) fn on_rt_send(&mut self, id: u32) {
        let now = self.sched.now();
        let s = &self.rt.streams[id as usize];
        let flow = &self.rt.flows[s.flow as usize];
        // A game update echoes the newest client packet: its timestamp plus the hold.
        let ack = match (flow.kind, s.up, flow.up) {
            (RtKind::Game, false, Some(u)) => {
                let c = &self.rt.streams[u as usize];
                c.newest
                    .map_or(NO_ECHO, |(j, at)| c.send_time(j) + (now - at))
            },
            _ => 0,
        };
        let warm = now >= self.warmup;
        let s = &mut self.rt.streams[id as usize];
        let k = s.schedule.take();
        if warm {
            s.first_measured.get_or_insert(k);
            s.sent += 1;
        }
        let next = s.next_send();
        let (flow, up) = (s.flow, s.up);
        let p = self.rt_packet(id, k, ack);
        if let Some(t) = next {
            self.sched.at(t, Ev::RtSend(id));
        }
        let f = &mut self.rt.flows[flow as usize];
        if f.kind == RtKind::Ping && up {
            f.probes.push(None);
        }
        self.send_rt(id, p);
    }

    fn rt_packet(&self, id: u32, seq: u64, ack: u64) -> Packet {
        let s = &self.rt.streams[id as usize];
        Packet {
            conn: id,
            gen: RT_GEN,
            route: s.route,
            proto: Proto::Udp,
            size: s.size,
            len: s.size - UDP_IP_BYTES.min(s.size),
            seq,
            ack,
            flow_delay: s.flow_delay,
            flow_hash: s.flow_hash,
            to_server: s.up,
            ecn: s.ecn,
            ..Default::default()
        }
    }

    fn send_rt(&mut self, id: u32, p: Packet) {
        let link = self.rt.streams[id as usize].first_link;
        self.send_from_host(link, p);
    }

    /// A real-time packet reached its receiver.
    pub(super) fn deliver_rt(&mut self, pkt: &Packet) {
        let now = self.sched.now();
        let id = pkt.conn;
        let s = &self.rt.streams[id as usize];
        let fid = s.flow;
        let kind = self.rt.flows[fid as usize].kind;
        if kind == RtKind::Ping {
            self.deliver_ping(fid, s.up, pkt, now);
            return;
        }
        let rt = &mut self.rt;
        let s = &mut rt.streams[id as usize];
        let k = pkt.seq;
        let lost_before = s.lost;
        s.on_arrival(k);
        if s.lost > lost_before {
            s.note_unplayed();
        }
        let sent = s.send_time(k);
        if kind == RtKind::Voice && s.anchor.is_none() {
            s.anchor = Some((k, now));
        }
        if s.up {
            s.newest = Some((k, now));
        }
        if !s.measured(k) {
            return;
        }
        s.delivered += 1;
        s.ce += (pkt.ecn == Ecn::Ce) as u64;
        s.owd.add(now - sent);
        s.update_jitter(now, sent);
        match kind {
            RtKind::Voice => {
                let (k0, a0) = s.anchor.expect("set above");
                let playout = a0
                    + ((k.saturating_sub(k0)) as f64 * s.schedule.interval).round() as Time
                    + rt.flows[fid as usize].jitter_buffer;
                if now > playout {
                    s.late += 1;
                    s.note_unplayed();
                } else {
                    s.in_burst = false;
                }
                if let Some(h) = &mut rt.voice_owd {
                    h.add(now - sent);
                }
            },
            RtKind::Game => {
                if let Some(h) = &mut rt.game_owd {
                    h[(!s.up) as usize].add(now - sent);
                }
                if !s.up && pkt.ack != NO_ECHO {
                    let rtt = now.saturating_sub(pkt.ack);
                    if let Some(h) = &mut rt.flows[fid as usize].rtt {
                        h.add(rtt);
                    }
                    if let Some(h) = &mut rt.game_rtt {
                        h.add(rtt);
                    }
                }
            },
            RtKind::Ping => unreachable!("handled above"),
        }
    }

    /// A probe reached the far host (answered at once) or an answer reached the pinger.
    fn deliver_ping(&mut self, fid: u32, up: bool, pkt: &Packet, now: Time) {
        let f = &self.rt.flows[fid as usize];
        let (up_id, down_id) = (
            f.up.expect("a probe stream"),
            f.down.expect("an echo stream"),
        );
        let k = pkt.seq;
        if up {
            let s = &mut self.rt.streams[up_id as usize];
            s.on_arrival(k);
            let sent = s.send_time(k);
            if s.measured(k) {
                s.delivered += 1;
                s.ce += (pkt.ecn == Ecn::Ce) as u64;
                s.owd.add(now - sent);
                s.update_jitter(now, sent);
            }
            let measured = s.measured(k);
            let echo = &mut self.rt.streams[down_id as usize];
            if measured {
                echo.first_measured.get_or_insert(k);
                echo.sent += 1;
            }
            let p = self.rt_packet(down_id, k, sent);
            self.send_rt(down_id, p);
            return;
        }
        let rtt = now - pkt.ack;
        let rt = &mut self.rt;
        let s = &mut rt.streams[down_id as usize];
        s.on_arrival(k);
        let measured = rt.streams[up_id as usize].measured(k);
        if measured {
            let s = &mut rt.streams[down_id as usize];
            s.delivered += 1;
            s.ce += (pkt.ecn == Ecn::Ce) as u64;
            let f = &mut rt.flows[fid as usize];
            f.probes[k as usize] = Some(rtt);
            if let Some(h) = &mut f.rtt {
                h.add(rtt);
            }
            if let Some(h) = &mut rt.ping_rtt {
                h.add(rtt);
            }
        }
    }
}

/// Milliseconds of a duration.
fn ms(t: Time) -> f64 {
    t as f64 / MS as f64
}

#[cfg(test)]
mod tests;
