//! What a run will cost, from its scenario alone: events, peak memory and wall time, so that
//! a run far beyond the machine is refused before it starts (the Python layer compares the
//! estimate with a budget) instead of filling memory or running for days.
//!
//! The figures are upper-side estimates from first principles, not measurements: packets per
//! second are bounded by the links (a TCP flow cannot send faster than the bottleneck serves;
//! a UDP source sends what it is told, up to its access link), packets in flight by rate ×
//! path delay plus every queue that can fill, connections by their arrival process. The
//! constants below are this implementation's sizes and speeds (checked by the tests against
//! a short run); a refused run names the key that raises the budget.

use std::mem::size_of;

use serde::Serialize;

use super::Conn;
use crate::aqm::config::AqmConfig;
use crate::aqm::QueueUnit;
use crate::config::{RttConfig, Scenario, TrafficConfig};
use crate::packet::Packet;

/// Mean size of a Web or TCP packet at the bottleneck, bytes (PackMime measured 250-280 B
/// with half the packets pure ACKs): TCP packets per second are at most the bottleneck's rate
/// divided by it, in each direction.
const TCP_MEAN_PACKET: f64 = 250.0;
/// Events per packet: the sender's send, the arrival at the router, the end of serialization,
/// the arrival at the receiver (timers are counted with the connections).
const EVENTS_PER_PACKET: f64 = 4.0;
/// Events of a connection besides its packets: open, timers, application wake-ups, close.
const EVENTS_PER_CONNECTION: f64 = 30.0;
/// Events per second the engine handles on one core, on the low side of the measured range
/// (about 4 M/s on the PackMime example, 13-14 M/s on a UDP flood: docs/reliability.md), so
/// that wall time is not underestimated.
const EVENTS_PER_SECOND: f64 = 4e6;
/// A record row as the Python layer holds it between the core and Parquet (a dozen columns
/// of boxed values), bytes; records are drained once per chunk of at most 5 simulated s.
const ROW_BYTES: f64 = 600.0;
/// A periodic update of one flow's state (FQ-PIE's probability) costs this fraction of an
/// event: measured 4.1 µs per update of 1,024 flows (`tupdate_ms = 0.01`, quickstart, 2 s:
/// 1.30 s against 0.08 s at the default 15 ms), i.e. 16 events of 250 ns (`EVENTS_PER_SECOND`).
const FLOW_UPDATES_PER_EVENT: f64 = 64.0;
/// Per-user state of the browsing models (pages, think timers, parallel slots), bytes.
const USER_BYTES: f64 = 256.0;
/// What each host holds (its access links both ways with their queues, delay box, host
/// record and streams), bytes, upper side: measured 1,703 B per host from the peak memory of
/// two runs of `examples/quickstart.toml` (2 s) with 10,000 and 100,000 hosts per side (59 and
/// 358 MiB), the difference over the 180,000 hosts between them.
const HOST_BYTES: f64 = 1_800.0;
/// What a packet waiting in a cut-through access queue holds (`net/link.rs`: its slot in the
/// packet store, the link's start-time entry, its arrival event already in the scheduler, its
/// place on the free list), bytes, upper side: measured 243 B from the peak memory of a UDP
/// flood (100 flows of 1 Gb/s from 10 hosts into 1 Gb/s access links, 2 s) with
/// `access_queue_packets` 250,000 and 500,000 (638 and 1,246 MB), the difference over the
/// 2.5 million packets between them, and 251 B with 50,000 against one flow
/// (`test_a_udp_flood_is_estimated_at_what_it_holds`); the allocator's growth steps vary it.
const ACCESS_QUEUED_PACKET_BYTES: f64 = 280.0;
/// The process before any run (interpreter, libraries, core tables), bytes.
const BASE_BYTES: f64 = 200e6;
/// How long a PackMime or Poisson connection stays open on average, upper side (s): its
/// concurrent connections are its rate times this.
const OPEN_CONNECTION_S: f64 = 30.0;
/// Connections a browsing user opens per second, upper side (Mah: a page every ~10 s with a
/// few objects each).
const USER_CONNECTIONS_PER_S: f64 = 0.5;
/// What a video call holds (`sim::video_call`): its frame-delay histogram (8,000 bins of
/// 8 bytes), its state, encoder and NADA windows, bytes, upper side.
const VIDEO_CALL_BYTES: f64 = 66_000.0;

/// Seconds between a `pages` user's pages, lower side, with PackMime's think-time law (its
/// median gap is 2^3.22 ≈ 9 s), and with any fixed think time (a page takes at least a few
/// round trips).
const PAGE_CYCLE_S: f64 = 2.0;
const PAGE_CYCLE_MIN_S: f64 = 0.05;

/// What a run will cost (upper-side estimates, see the module doc).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Estimate {
    pub events: f64,
    pub wall_s: f64,
    pub peak_bytes: f64,
    /// The parts of `peak_bytes`, for the message that refuses a run.
    pub packets_in_flight: f64,
    pub connections_open: f64,
    pub users: f64,
    pub rows_per_chunk: f64,
    /// The chunk of simulated time `rows_per_chunk` assumes (the runner's default), and the
    /// bytes of records per simulated second: a run with another chunk (`--chunk-s`) holds
    /// `record_bytes_per_s × chunk` instead.
    pub chunk_s: f64,
    pub record_bytes_per_s: f64,
    /// Hosts of the topology (both sides and the cross hosts), each `HOST_BYTES`.
    pub hosts: f64,
    pub connections_total: f64,
    /// Bytes the run's traces will write (`[trace]`: captures, TCP state, segments), upper
    /// side; 0 without traces.
    pub trace_bytes: f64,
}

/// Most packets the queue can hold (a byte limit counted in 40-byte packets).
fn queue_packets(q: &AqmConfig) -> f64 {
    let packets = |limit: f64, bytes: bool| if bytes { limit / 40.0 } else { limit };
    match q {
        AqmConfig::Droptail { limit, unit } => packets(*limit as f64, *unit == QueueUnit::Bytes),
        AqmConfig::Red(c) => c.limit as f64,
        AqmConfig::GredI(c) => c.limit as f64,
        AqmConfig::Ared(c) => c.limit as f64,
        AqmConfig::Pi(c) => c.limit as f64,
        AqmConfig::Rem(c) => c.limit as f64,
        AqmConfig::Codel(c) => c.limit as f64,
        AqmConfig::Pie(c) => c.limit as f64,
        AqmConfig::FqCodel(c) => c.limit as f64,
        AqmConfig::Dualpi2(c) => c.limit as f64,
        // A byte limit: memlimit, else at most limit·mtu (the automatic limit's cap).
        AqmConfig::Cake(c) => packets(
            c.memlimit.unwrap_or(c.limit as u64 * c.mtu as u64) as f64,
            true,
        ),
        AqmConfig::FqPie(c) => c.limit as f64,
        AqmConfig::PieLinux(c) => c.limit as f64,
        AqmConfig::RedLinux(c) => packets(c.limit as f64, true),
    }
}

/// The largest extra RTT `[rtt]` can give a connection, s.
fn max_extra_rtt_s(sc: &Scenario) -> f64 {
    let ms = match &sc.rtt {
        RttConfig::None => 0.0,
        RttConfig::Constant { rtt_ms } => *rtt_ms,
        RttConfig::Uniform { max_ms, .. } => *max_ms,
        RttConfig::Empirical { points, .. } => points.iter().map(|p| p.0).fold(0.0, f64::max),
        RttConfig::Matrix { rtt_ms } => rtt_ms.iter().flatten().copied().fold(0.0, f64::max),
    };
    ms * 1e-3
}

/// A real-time stream's state (`sim::realtime`): its delay histogram (20,000 bins of 8 B)
/// and counters.
const REALTIME_STREAM_BYTES: f64 = 20_000.0 * 8.0 + 512.0;

/// A voice, game or ping entry's packets per second (both directions), streams, and ping
/// probes kept over a run of `d` s.
fn realtime_load(tr: &TrafficConfig, d: f64) -> (f64, f64, f64) {
    match tr {
        TrafficConfig::Voice(v) => {
            let ends = if v.two_way { 2.0 } else { 1.0 };
            let f = v.flows as f64 * ends;
            (f * 1e3 / v.frame_ms, f, 0.0)
        },
        TrafficConfig::Game(g) => {
            let f = g.flows as f64;
            (f * (g.client_rate_hz + g.tick_hz), 2.0 * f, 0.0)
        },
        TrafficConfig::Ping(p) => {
            let f = p.flows as f64;
            let per_s = 1e3 / p.interval_ms;
            (2.0 * f * per_s, 2.0 * f, f * per_s * d)
        },
        _ => (0.0, 0.0, 0.0),
    }
}

pub fn estimate(sc: &Scenario) -> Estimate {
    let t = &sc.topology;
    let d = sc.duration_s;
    // Both directions' rates (an asymmetric access link's download and upload).
    let c_both_bps = (sc.bottleneck_rate_mbps(0) + sc.bottleneck_rate_mbps(1)) * 1e6;
    let a_bps = t.access_mbps * 1e6;
    let hosts = [t.left_hosts as f64, t.right_hosts as f64];
    let mut tcp = false;
    let mut udp_pps = 0.0;
    let mut udp_send_pps = 0.0;
    let mut udp_overloaded_hosts = 0.0;
    let mut rt_bytes = 0.0;
    let mut conn_rate = 0.0; // connections per second
    let mut open = 0.0; // connections open at once
    let mut users = 0.0;
    // DASH players: their state, their schedule checks while the buffer is full, and their
    // per-segment rows (when asked for).
    let (mut dash_bytes, mut dash_per_s, mut dash_rows_per_s) = (0.0, 0.0, 0.0);
    let mut video_calls = 0.0;
    let mut video_rows_per_s = 0.0;
    for tr in &sc.traffic {
        match tr {
            TrafficConfig::VideoCall(v) => {
                // Packets per second at the call's highest rate plus one partial packet per
                // frame, and its feedback; each frame and paced packet is an event more.
                let n = v.calls as f64;
                let rate = match v.controller {
                    crate::config::video_call::VideoController::Nada => v.max_rate_mbps,
                    crate::config::video_call::VideoController::None => {
                        v.rate_mbps.unwrap_or(v.max_rate_mbps)
                    },
                } * 1e6;
                let pps =
                    rate / (8.0 * v.packet_bytes as f64) + v.fps + 1e3 / v.feedback_interval_ms;
                udp_pps += n * pps;
                udp_send_pps += n * (pps + v.fps);
                video_calls += n;
                if v.report_interval_s > 0.0 {
                    video_rows_per_s += n / v.report_interval_s;
                }
            },
            TrafficConfig::UdpCbr {
                flows,
                packet_bytes,
                client_side,
                direction,
                ..
            } => {
                let f = *flows as f64;
                let per_flow = crate::config::flow_rate_bps(sc, tr);
                // Senders sit on the client's side for uploads, on the other for downloads.
                let upload = *direction == crate::config::Direction::Upload;
                let left = (*client_side == crate::config::Side::Left) == upload;
                let senders = hosts[!left as usize].min(f);
                // Every packet the source sends is an event, even those its own access
                // queue then drops; the rest travel at most at the access links' rate.
                let bits = 8.0 * *packet_bytes as f64;
                udp_send_pps += per_flow * f / bits;
                udp_pps += (per_flow * f).min(senders * a_bps) / bits;
                if per_flow * f / senders > a_bps {
                    udp_overloaded_hosts += senders;
                }
            },
            TrafficConfig::Pages(c) => {
                // A page's connections are open at once; a page every think time (upper
                // side: at most PAGE_CYCLE_S apart with PackMime's law, whose median is 9 s).
                tcp = true;
                let u = c.users as f64;
                let per_page = super::pages::connections_per_page(c);
                users += u;
                open += u * per_page;
                conn_rate += u * per_page / c.think_s.unwrap_or(PAGE_CYCLE_S).max(PAGE_CYCLE_MIN_S);
            },
            TrafficConfig::Voice(_) | TrafficConfig::Game(_) | TrafficConfig::Ping(_) => {
                let (pps, streams, probes) = realtime_load(tr, d);
                // Few, small packets: each is one send and its path's events; ping's echoes
                // double its probes (counted in `pps`).
                udp_send_pps += pps;
                udp_pps += pps;
                rt_bytes += streams * REALTIME_STREAM_BYTES + probes * 16.0;
            },
            TrafficConfig::Bulk { flows, .. } => {
                tcp = true;
                open += *flows as f64;
                conn_rate += *flows as f64 / d;
            },
            TrafficConfig::Packmime { rate, .. } => {
                tcp = true;
                conn_rate += rate;
                open += rate * OPEN_CONNECTION_S;
            },
            TrafficConfig::Replay { connections, .. } => {
                tcp = true;
                // The rows' mean rate over the run (all of them when the run is shorter).
                let n = connections.len() as f64;
                let span = connections
                    .start_s
                    .last()
                    .copied()
                    .unwrap_or(0.0)
                    .min(d)
                    .max(1.0);
                let rate = n / span;
                conn_rate += rate;
                open += rate * OPEN_CONNECTION_S;
            },
            TrafficConfig::Ftp {
                sessions,
                rate,
                think_mean_s,
                ..
            } => {
                tcp = true;
                if let Some(s) = sessions {
                    open += *s as f64;
                    conn_rate += *s as f64 / think_mean_s.max(0.05);
                }
                if let Some(r) = rate {
                    conn_rate += r;
                    open += r * OPEN_CONNECTION_S;
                }
            },
            TrafficConfig::Mah {
                users: u,
                max_parallel,
                ..
            } => {
                tcp = true;
                users += *u as f64;
                open += *u as f64 * *max_parallel as f64;
                conn_rate += *u as f64 * USER_CONNECTIONS_PER_S;
            },
            TrafficConfig::Browsers {
                users: u, parallel, ..
            }
            | TrafficConfig::Unc {
                users: u, parallel, ..
            } => {
                tcp = true;
                let most = parallel.iter().copied().max().unwrap_or(1) as f64;
                users += *u as f64;
                open += *u as f64 * most;
                conn_rate += *u as f64 * USER_CONNECTIONS_PER_S;
            },
            TrafficConfig::Dash(c) => {
                tcp = true;
                let n = c.sessions as f64;
                open += n;
                conn_rate += n / d;
                dash_bytes += n * super::dash::session_bytes(c);
                dash_per_s += n * 1e3 / c.poll_ms;
                if c.segment_rows {
                    dash_rows_per_s += n / c.segment_s;
                }
            },
        }
    }
    let tcp_pps = if tcp {
        c_both_bps / (8.0 * TCP_MEAN_PACKET)
    } else {
        0.0
    };
    let pps = tcp_pps + udp_pps;
    let connections_total = conn_rate * d;
    // A chain's other hops (`topology.hops`): each carries at most its own rate of TCP packets
    // in each direction, each packet there costing at most the events of a whole path (cross
    // traffic's send and arrival, or a main packet's end of serialization and next arrival).
    let hop_links: Vec<_> = (1..sc.hop_count() as usize)
        .map(|k| sc.hop_link(k))
        .collect();
    let hop_tcp_pps: f64 = if tcp {
        hop_links
            .iter()
            .map(|h| 2.0 * h.0 * 1e6 / (8.0 * TCP_MEAN_PACKET))
            .sum()
    } else {
        0.0
    };
    let hops = sc.hop_count() as f64;

    // Periodic events: queue samples and intervals (both directions), arrival bins, AQM
    // updates, the TCP timer sweep.
    let m = &sc.measure;
    let mut per_s = 2.0 * hops / (m.queue_sample_ms * 1e-3) + 2.0 * hops / m.interval_s;
    if m.burst_bin_ms > 0.0 {
        per_s += 2.0 / (m.burst_bin_ms * 1e-3);
    }
    let mut flow_updates_per_s = 0.0;
    let hop_queues = hop_links.iter().flat_map(|h| [h.2, h.3]);
    for q in std::iter::once(&sc.queue)
        .chain(sc.queue_reverse.as_ref())
        .chain(hop_queues)
    {
        if let AqmConfig::Rem(r) = q {
            per_s += 2.0 / (r.interval_ms * 1e-3);
        }
        if let AqmConfig::Pie(p) = q {
            per_s += 2.0 / (p.t_update_ms * 1e-3);
        }
        if let AqmConfig::Dualpi2(p) = q {
            per_s += 2.0 / (p.tupdate_ms * 1e-3);
        }
        if let AqmConfig::PieLinux(p) = q {
            per_s += 2.0 / (p.tupdate_ms * 1e-3);
        }
        if let AqmConfig::FqPie(p) = q {
            per_s += 2.0 / (p.tupdate_ms * 1e-3);
            // Each update recomputes every flow's probability (Linux fq_pie_timer): the
            // fuzzer's `tupdate_ms = 0.001` ran 12-25× its estimate.
            flow_updates_per_s += 2.0 * p.flows as f64 / (p.tupdate_ms * 1e-3);
        }
    }
    if tcp {
        per_s += 1.0 / (sc.tcp.tick_ms * 1e-3);
    }
    per_s += dash_per_s;
    let events = d
        * ((pps + hop_tcp_pps) * EVENTS_PER_PACKET
            + udp_send_pps
            + per_s
            + flow_updates_per_s / FLOW_UPDATES_PER_EVENT)
        + connections_total * EVENTS_PER_CONNECTION;

    // Memory: packets on the wires (rate × the longest one-way path) and in every queue that
    // can fill (both bottleneck queues; the access queues of hosts sending UDP faster than
    // their link), connection and user state, one chunk of records.
    let hop_delay_ms: f64 = hop_links.iter().map(|h| h.1).sum();
    let path_s = (t.bottleneck_delay_ms + hop_delay_ms + 2.0 * t.access_delay_ms) * 1e-3
        + max_extra_rtt_s(sc);
    let bottleneck_q = queue_packets(&sc.queue)
        + queue_packets(sc.queue_reverse.as_ref().unwrap_or(&sc.queue))
        + hop_links
            .iter()
            .map(|h| queue_packets(h.2) + queue_packets(h.3))
            .sum::<f64>();
    let access_q = udp_overloaded_hosts * t.access_queue_packets as f64;
    let packets_in_flight = pps * path_s + bottleneck_q.min(pps.max(1.0) * d) + access_q;
    // The runner's default chunk (python/src/aqmlab/runs/runner.py, `CHUNKS`, `MAX_CHUNK_S`).
    let chunk_s = (d / 10.0).clamp(1.0, 5.0).min(d);
    let rows_per_chunk =
        chunk_s * (per_s + 3.0 * conn_rate + dash_rows_per_s + video_rows_per_s) + video_calls;
    let all_hosts =
        hosts[0] + hosts[1] + 2.0 * t.cross_hosts as f64 * hop_links.len().max(1) as f64;
    let peak_bytes = BASE_BYTES
        + all_hosts * HOST_BYTES
        + (packets_in_flight - access_q) * size_of::<Packet>() as f64
        + access_q * ACCESS_QUEUED_PACKET_BYTES
        + open * (size_of::<Conn>() + 64) as f64
        + users * USER_BYTES
        + video_calls * VIDEO_CALL_BYTES
        + rows_per_chunk * ROW_BYTES
        + dash_bytes
        + rt_bytes;
    Estimate {
        trace_bytes: trace_bytes(sc, tcp_pps, udp_pps, open),
        events,
        wall_s: events / EVENTS_PER_SECOND,
        peak_bytes,
        packets_in_flight,
        connections_open: open,
        users,
        rows_per_chunk,
        chunk_s,
        record_bytes_per_s: (per_s + 3.0 * conn_rate + dash_rows_per_s + video_rows_per_s)
            * ROW_BYTES,
        hosts: all_hosts,
        connections_total,
    }
}

/// A pcap record's header, and a `tcp_state` or `segments` row as Parquet stores it (a dozen
/// numbers, compressed: measured 20-40 bytes; upper side).
const PCAP_RECORD_HEADER: f64 = 16.0;
const TRACE_ROW_BYTES: f64 = 48.0;

/// The share of the packets a selection keeps: its sample, of all connections or of those
/// listed (as a share of the connections open at once).
fn share(connections: &[u64], sample: f64, open: f64) -> f64 {
    let listed = if connections.is_empty() {
        1.0
    } else {
        (connections.len() as f64 / open.max(1.0)).min(1.0)
    };
    listed * sample
}

/// Upper side of what `[trace]` writes: every packet at a capture point (a bottleneck
/// direction carries at most its share of `tcp_pps + udp_pps`; a host, the whole of it in
/// the worst case) for the capture's window and sampled share, `snaplen` bytes each (or the
/// largest packet, if smaller); a TCP state row per packet per traced endpoint (every change)
/// or per endpoint per interval, and a segment row per packet.
fn trace_bytes(sc: &Scenario, tcp_pps: f64, udp_pps: f64, open: f64) -> f64 {
    let tr = &sc.trace;
    let d = sc.duration_s;
    let window = |start: f64, end: Option<f64>| (end.unwrap_or(d).min(d) - start).max(0.0);
    let mtu = (sc.tcp.mss + sc.tcp.header_bytes + 40) as f64;
    let mut bytes = 0.0;
    for c in &tr.pcap {
        let pps = match c.point {
            crate::config::trace::CapturePoint::Host => tcp_pps + udp_pps,
            _ => (tcp_pps + udp_pps) / 2.0,
        };
        let per = PCAP_RECORD_HEADER + (c.snaplen as f64).min(mtu);
        bytes +=
            pps * share(&c.connections, c.sample, open) * window(c.start_s, c.end_s) * per + 24.0;
    }
    if let Some(t) = &tr.tcp {
        let share = share(&t.connections, t.sample, open);
        let w = window(t.start_s, t.end_s);
        let state_rows = if t.interval_ms > 0.0 {
            (2.0 * open * share / (t.interval_ms * 1e-3)).min(tcp_pps * share)
        } else {
            tcp_pps * share
        };
        let seg_rows = if t.segments { tcp_pps * share } else { 0.0 };
        bytes += (state_rows + seg_rows) * w * TRACE_ROW_BYTES;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(traffic: &str, extra: &str) -> Scenario {
        let json = format!(
            r#"{{"seed": 1, "duration_s": 100.0, "warmup_s": 0.0,
            "topology": {{"bottleneck_mbps": 10.0, "bottleneck_delay_ms": 1.0,
              "access_mbps": 100.0, "access_delay_ms": 1.0, "access_queue_packets": 100000,
              "left_hosts": 3, "right_hosts": 3}},
            "queue": {{"kind": "droptail", "limit": 100}},
            "tcp": {tcp},
            "traffic": [{traffic}] {extra}}}"#,
            tcp = serde_json::to_string(&crate::tcp::config::TcpConfig::freebsd_228()).unwrap()
        );
        Scenario::from_json(&json).unwrap()
    }

    /// A chain's other hops add their packets' events, their samples and their queues: two
    /// more 10 Mb/s hops of greedy traffic cost three times hop 0's packet events.
    #[test]
    fn a_chain_costs_more_than_its_first_hop() {
        let bulk = r#"{"kind": "bulk", "flows": 10}"#;
        let sc = scenario(bulk, "");
        let mut chain = sc.clone();
        chain.topology.hops = vec![Default::default(); 2];
        let (a, b) = (estimate(&sc), estimate(&chain));
        // Hop 0's packet events over 100 s; the samples of the new hops add 3 % more.
        let packet_events = 100.0 * 2.0 * 10e6 / (8.0 * TCP_MEAN_PACKET) * EVENTS_PER_PACKET;
        let more = (b.events - a.events) / packet_events;
        assert!((2.0..2.05).contains(&more), "{more}: {a:?} {b:?}");
        // Four more 100-packet queues.
        assert!(b.packets_in_flight > a.packets_in_flight + 399.0, "{b:?}");
    }

    /// Ten million browsing users hold gigabytes of connection state: far beyond what a few
    /// users cost, and growing with the population.
    #[test]
    fn memory_grows_with_the_population() {
        let small = estimate(&scenario(r#"{"kind": "mah", "users": 100}"#, ""));
        let huge = estimate(&scenario(r#"{"kind": "mah", "users": 10000000}"#, ""));
        assert!(small.peak_bytes < 300e6, "{small:?}");
        assert!(huge.peak_bytes > 10e9, "{huge:?}");
    }

    /// Page users: a fixed page on three origins over HTTP/2 keeps 3 connections per user
    /// open, and a page every `think_s` opens 3 connections: 10 users × 3 / 0.5 s over 100 s.
    /// Over HTTP/1.1, drawn pages cost more connections than over HTTP/2.
    #[test]
    fn page_users_count_their_connections() {
        let page = r#""page": {"document_bytes": 1000, "object_bytes": [1, 2, 3, 4],
                       "object_origins": [0, 1, 2, 2]}"#;
        let e = estimate(&scenario(
            &format!(r#"{{"kind": "pages", "users": 10, "think_s": 0.5, {page}}}"#),
            "",
        ));
        assert_eq!((e.users, e.connections_open), (10.0, 30.0));
        assert!(
            (e.connections_total - 100.0 * 10.0 * 3.0 / 0.5).abs() < 1e-6,
            "{e:?}"
        );
        let drawn = |protocol: &str| {
            estimate(&scenario(
                &format!(r#"{{"kind": "pages", "users": 10, "protocol": "{protocol}"}}"#),
                "",
            ))
            .connections_open
        };
        assert!(drawn("http/1.1") > drawn("h2"));
    }

    /// FQ-PIE's update touches every flow: a 1-µs update period is costed as such.
    #[test]
    fn fq_pie_updates_count_their_flows() {
        let with = |tupdate_ms: f64| {
            let mut sc = scenario(r#"{"kind": "bulk", "flows": 2}"#, "");
            sc.queue = serde_json::from_value(serde_json::json!(
                {"kind": "fq_pie", "tupdate_ms": tupdate_ms}
            ))
            .unwrap();
            estimate(&sc).events
        };
        // 100 s × 2 directions × 10^6 updates/s, each an event and 1,024 flows / 64.
        let extra = with(0.001) - with(15.0);
        let want = 100.0 * 2.0 * (1e6 - 1e3 / 15.0) * (1.0 + 1024.0 / 64.0);
        assert!((extra - want).abs() < 1e-6 * want, "{extra} {want}");
    }

    /// The fuzzer's 10^6 hosts per side needed 3.6 GB and were estimated at 0.2 GB (issue 36).
    #[test]
    fn memory_grows_with_the_hosts() {
        let few = estimate(&scenario(r#"{"kind": "bulk", "flows": 2}"#, ""));
        let mut sc = scenario(r#"{"kind": "bulk", "flows": 2}"#, "");
        sc.topology.left_hosts = 1_000_000;
        sc.topology.right_hosts = 1_000_000;
        let many = estimate(&sc);
        assert!(many.peak_bytes - few.peak_bytes >= 3.4e9, "{many:?}");
    }

    /// A UDP flood faster than its hosts' links fills their access queues: the estimate counts
    /// them (3 hosts × 100,000 packets), and the packets sent per second are capped by the
    /// links.
    #[test]
    fn a_udp_flood_fills_the_access_queues() {
        let e = estimate(&scenario(
            r#"{"kind": "udp_cbr", "flows": 3, "rate_mbps": 10000.0, "packet_bytes": 100}"#,
            "",
        ));
        assert!(e.packets_in_flight >= 300_000.0, "{e:?}");
        // Each held packet at what it costs there, not only its slot (issue 36's fuzzer: a
        // flood estimated at 1.48 GB used 2.49).
        assert!(
            e.peak_bytes >= BASE_BYTES + 300_000.0 * ACCESS_QUEUED_PACKET_BYTES,
            "{e:?}"
        );
        // 3 hosts × 100 Mb/s of 100-byte packets, 4 events each, plus the sends of all
        // 3 × 10 Gb/s, for 100 s.
        let pkts = 3.0 * 100e6 / 800.0;
        let sends = 3.0 * 10e9 / 800.0;
        let expected = (pkts * 4.0 + sends) * 100.0;
        assert!((e.events / expected - 1.0).abs() < 0.05, "{e:?}");
    }

    /// 10,000 video calls hold their delay histograms (66 kB each: 660 MB) and send, at
    /// their 1.5 Mb/s RMAX, 156.25 packets per second of 1,200 bytes each, a partial one per
    /// frame (30/s) and 10 feedback packets per second: 196.25 packets, 4 events each.
    #[test]
    fn video_calls_count_their_state_and_packets() {
        let base = estimate(&scenario(r#"{"kind": "bulk", "flows": 1}"#, ""));
        let e = estimate(&scenario(
            r#"{"kind": "bulk", "flows": 1}, {"kind": "video_call", "calls": 10000}"#,
            "",
        ));
        assert!(e.peak_bytes - base.peak_bytes >= 660e6, "{e:?}");
        assert!(
            e.events - base.events >= 10_000.0 * 196.25 * 4.0 * 100.0,
            "{e:?}"
        );
    }

    /// Real-time flows cost their packets' events and each stream's histogram: 1,000 two-way
    /// calls (50 packets/s each way) add 10^5 packets/s over 100 s, and 2,000 streams of
    /// 160 kB.
    #[test]
    fn real_time_flows_cost_their_packets_and_histograms() {
        let bare = estimate(&scenario(r#"{"kind": "bulk", "flows": 2}"#, ""));
        let mut sc = scenario(r#"{"kind": "bulk", "flows": 2}"#, "");
        sc.traffic
            .push(serde_json::from_str(r#"{"kind": "voice", "flows": 1000}"#).unwrap());
        let calls = estimate(&sc);
        let pps = 1000.0 * 2.0 * 50.0;
        let extra = calls.events - bare.events;
        assert!(
            (extra / (100.0 * pps * (EVENTS_PER_PACKET + 1.0)) - 1.0).abs() < 1e-9,
            "{extra}"
        );
        assert!(
            calls.peak_bytes - bare.peak_bytes >= 2000.0 * 160e3,
            "{calls:?}"
        );
    }

    /// A 1 µs sampling period over 100 s is 2·10^8 samples: events and rows show it.
    #[test]
    fn periods_count_their_events() {
        let e = estimate(&scenario(
            r#"{"kind": "bulk", "flows": 2}"#,
            r#", "measure": {"queue_sample_ms": 0.001, "queue_window_ms": 0.001}"#,
        ));
        assert!(e.events > 2e8, "{e:?}");
        assert!(e.rows_per_chunk > 2e6, "{e:?}");
    }

    /// DASH players: each holds a connection and its player, checks its full buffer every
    /// `poll_ms`, and (with `segment_rows`) writes a row per segment. 10,000 sessions polling
    /// every 1 ms over 100 s are 10^9 events; their rows, 10^4 / 4 s per second.
    #[test]
    fn dash_sessions_count_their_state_polls_and_rows() {
        let base = estimate(&scenario(r#"{"kind": "bulk", "flows": 1}"#, ""));
        let e = estimate(&scenario(
            r#"{"kind": "dash", "sessions": 10000, "poll_ms": 1.0, "segment_rows": true}"#,
            "",
        ));
        assert_eq!(e.connections_open, 10_000.0);
        assert!(e.events - base.events > 1e9, "{e:?}");
        let state = 10_000.0
            * super::super::dash::session_bytes(
                &serde_json::from_str(r#"{"sessions": 1}"#).unwrap(),
            );
        assert!(e.peak_bytes - base.peak_bytes > state, "{e:?}");
        assert!(e.record_bytes_per_s - base.record_bytes_per_s >= 2500.0 * ROW_BYTES);
    }
}
