//! Scenario builders shared by the integration tests.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{
    Direction, MeasureConfig, RttConfig, Scenario, Side, Topology, TrafficConfig,
};
use aqmlab::net::link::ScriptedLoss;
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::secs;

/// A one-host-per-side dumbbell with a fast bottleneck and exact (ns-2 style) timers.
pub fn base(duration_s: f64) -> Scenario {
    let mut tcp = TcpConfig::ns2_fulltcp();
    tcp.mss = 1460;
    tcp.rwnd = 1 << 20;
    Scenario {
        name: "test".into(),
        seed: 1,
        duration_s,
        warmup_s: 0.0,
        topology: Topology {
            bottleneck_mbps: 1000.0,
            bottleneck_delay_ms: 0.0,
            access_mbps: 1000.0,
            access_delay_ms: 0.0,
            access_queue_packets: 10_000,
            left_hosts: 1,
            right_hosts: 1,
            loss_rate: 0.0,
            loss_rate_reverse: 0.0,
            bottleneck_framing: Default::default(),
            access_framing: Default::default(),
            host_jitter_us: 0.0,
            bottleneck_steps: Vec::new(),
            bottleneck_reverse_mbps: None,
            cross_hosts: 0,
            hops: Vec::new(),
        },
        queue: AqmConfig::Droptail {
            limit: 10_000,
            unit: QueueUnit::Packets,
        },
        queue_reverse: None,
        tcp,
        rtt: RttConfig::Constant { rtt_ms: 100.0 },
        delay_box: Default::default(),
        traffic: vec![TrafficConfig::Bulk {
            flows: 1,
            bytes: Some(10 * 1460),
            request_bytes: 0,
            direction: Direction::Download,
            client_side: Side::Left,
            start_s: 0.0,
            start_jitter_s: 0.0,
        }],
        measure: MeasureConfig::default(),
        max_exchanges: None,
        trace: Default::default(),
        traffic_tcp: Vec::new(),
        traffic_rtt: Vec::new(),
        traffic_hop: Vec::new(),
    }
}

/// MSS of `base()`.
pub const MSS: u64 = 1460;

/// A download of `segments` full segments over `base()` (RTT 100 ms, no delayed ACK, IW 2)
/// with the receiver window `rwnd_segments` and data segments `lost` (numbered from 0)
/// dropped once on the bottleneck; `tcp` adjusts the TCP configuration. Traced, run to the
/// end.
pub fn lossy_download(
    segments: u64,
    lost: &[u64],
    rwnd_segments: u32,
    tcp: impl FnOnce(&mut TcpConfig),
) -> (Simulation, Vec<aqmlab::measure::Table>) {
    let mut sc = base(60.0);
    sc.tcp.rwnd = rwnd_segments * MSS as u32;
    tcp(&mut sc.tcp);
    sc.traffic = vec![bulk(1, Some(segments * MSS))];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let data_link = sim.topology().reverse(); // the server is on the right
    lose_segments(&mut sim, data_link, MSS, lost);
    run_traced(sim)
}

/// Runs a simulation in one go to its end.
pub fn run_traced(mut sim: Simulation) -> (Simulation, Vec<aqmlab::measure::Table>) {
    let end = sim.end_time();
    sim.run_until(end);
    let t = sim.finish();
    (sim, t)
}

pub fn bulk(flows: u32, bytes: Option<u64>) -> TrafficConfig {
    bulk_at(flows, bytes, 0.0, 0.0)
}

/// Downloads started at `start_s` plus a uniform jitter in `[0, jitter_s)`.
pub fn bulk_at(flows: u32, bytes: Option<u64>, start_s: f64, jitter_s: f64) -> TrafficConfig {
    TrafficConfig::Bulk {
        flows,
        bytes,
        request_bytes: 0,
        direction: Direction::Download,
        client_side: Side::Left,
        start_s,
        start_jitter_s: jitter_s,
    }
}

/// Runs to the end and returns the simulation (finished) and its tables.
pub fn run(sc: Scenario) -> (Simulation, Vec<aqmlab::measure::Table>) {
    run_sim(Simulation::new(sc).expect("valid scenario"))
}

/// Runs a simulation already set up (scripted losses, traces) to its end in 5-s chunks,
/// draining its tables after each: the simulation (finished) and the tables merged.
pub fn run_sim(mut sim: Simulation) -> (Simulation, Vec<aqmlab::measure::Table>) {
    let end = sim.end_time();
    let mut tables: Vec<aqmlab::measure::Table> = Vec::new();
    let mut t = 0;
    while !sim.finished() {
        t += secs(5.0);
        sim.run_until(t.min(end));
        merge(&mut tables, sim.drain());
    }
    merge(&mut tables, sim.finish());
    // Every table is rectangular: each record pushed every column.
    for t in &tables {
        for (name, col) in &t.columns {
            assert_eq!(
                col.len(),
                t.rows(),
                "{}.{name} has a different length",
                t.name
            );
        }
    }
    (sim, tables)
}

fn merge(acc: &mut Vec<aqmlab::measure::Table>, new: Vec<aqmlab::measure::Table>) {
    use aqmlab::measure::Column;
    for t in new {
        match acc.iter_mut().find(|a| a.name == t.name) {
            None => acc.push(t),
            Some(a) => {
                for ((_, dst), (_, src)) in a.columns.iter_mut().zip(t.columns) {
                    match (dst, src) {
                        (Column::U64(d), Column::U64(s)) => d.extend(s),
                        (Column::I64(d), Column::I64(s)) => d.extend(s),
                        (Column::F64(d), Column::F64(s)) => d.extend(s),
                        (Column::Bool(d), Column::Bool(s)) => d.extend(s),
                        (Column::Str(d), Column::Str(s)) => d.extend(s),
                        _ => panic!("column type changed between chunks"),
                    }
                }
            },
        }
    }
}

pub fn table<'a>(tables: &'a [aqmlab::measure::Table], name: &str) -> &'a aqmlab::measure::Table {
    tables
        .iter()
        .find(|t| t.name == name)
        .expect("table present")
}

pub fn f64s(t: &aqmlab::measure::Table, col: &str) -> Vec<f64> {
    match t.column(col) {
        Some(aqmlab::measure::Column::F64(v)) => v.clone(),
        _ => panic!("no f64 column {col}"),
    }
}

pub fn u64s(t: &aqmlab::measure::Table, col: &str) -> Vec<u64> {
    match t.column(col) {
        Some(aqmlab::measure::Column::U64(v)) => v.clone(),
        _ => panic!("no u64 column {col}"),
    }
}

pub fn bools(t: &aqmlab::measure::Table, col: &str) -> Vec<bool> {
    match t.column(col) {
        Some(aqmlab::measure::Column::Bool(v)) => v.clone(),
        _ => panic!("no bool column {col}"),
    }
}

/// Greedy FreeBSD-Reno downloads through a 10 Mb/s bottleneck (100 Mb/s access links, 10
/// hosts per side, drop-tail 100 packets), RTTs uniform on 10–150 ms, started within 2 s,
/// 10 s warm-up.
pub fn greedy_10mbps(flows: u32, duration: f64, seed: u64) -> Scenario {
    let mut sc = base(duration);
    sc.seed = seed;
    sc.warmup_s = 10.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.left_hosts = 10;
    sc.topology.right_hosts = 10;
    sc.tcp = TcpConfig::freebsd_228();
    sc.rtt = RttConfig::Uniform {
        min_ms: 10.0,
        max_ms: 150.0,
    };
    sc.queue = AqmConfig::Droptail {
        limit: 100,
        unit: QueueUnit::Packets,
    };
    sc.traffic = vec![bulk_at(flows, None, 0.0, 2.0)];
    sc
}

/// `flows` greedy flows of `tcp` (8 MiB receive window), RTT uniform in 20–80 ms, 1 Gb/s
/// access links, through a 10 Mb/s bottleneck running `queue`: 60 s with a 20 s warm-up
/// (the AQM tests' classic-TCP run).
pub fn greedy_linux_10mbps(tcp: &TcpConfig, flows: u32, queue: serde_json::Value) -> Scenario {
    let mut sc = greedy_10mbps(flows, 60.0, 5);
    sc.warmup_s = 20.0;
    sc.tcp = tcp.clone();
    sc.tcp.rwnd = 8 << 20;
    sc.topology.access_mbps = 1000.0;
    sc.rtt = RttConfig::Uniform {
        min_ms: 20.0,
        max_ms: 80.0,
    };
    sc.queue = serde_json::from_value(queue).unwrap();
    sc
}

/// A queue configuration parsed and validated as a scenario's `[queue]` table; the error as
/// the user would read it.
pub fn queue_cfg(v: serde_json::Value) -> Result<AqmConfig, String> {
    let c: AqmConfig = serde_json::from_value(v).map_err(|e| e.to_string())?;
    c.validate("queue").map_err(|e| e.to_string())?;
    Ok(c)
}

/// A hash of every value of every table, in order (FNV-1a), to compare whole runs.
pub fn digest(tables: &[aqmlab::measure::Table]) -> u64 {
    // FNV-1a over every value of every table, in order.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    for t in tables {
        for (_, col) in &t.columns {
            match col {
                aqmlab::measure::Column::U64(v) => v.iter().for_each(|&x| eat(x)),
                aqmlab::measure::Column::I64(v) => v.iter().for_each(|&x| eat(x as u64)),
                aqmlab::measure::Column::F64(v) => v.iter().for_each(|&x| eat(x.to_bits())),
                aqmlab::measure::Column::Bool(v) => v.iter().for_each(|&x| eat(x as u64)),
                aqmlab::measure::Column::Str(v) => {
                    v.iter().for_each(|x| x.bytes().for_each(|b| eat(b as u64)))
                },
            }
        }
    }
    h
}

/// Packet conservation: every packet the endpoints sent (TCP segments, and UDP packets when
/// the run has UDP flows: `udp_flows.sent` counts from the warm-up, so such a run needs none)
/// was delivered, dropped by a queue, lost on a link or is still in the network. Returns
/// (queue drops, link losses).
pub fn assert_packets_conserved(sim: &Simulation, tables: &[aqmlab::measure::Table]) -> (u64, u64) {
    let udp: u64 = tables
        .iter()
        .find(|t| t.name == "udp_flows")
        .map_or(0, |t| u64s(t, "sent").iter().sum());
    let sent = udp
        + u64s(table(tables, "connections"), "segments_sent")
            .iter()
            .sum::<u64>();
    let st = sim.engine_stats();
    let (mut dropped, mut lost) = (0, 0);
    for l in 0..sim.link_count() as u32 {
        dropped += sim.link(l).queue.stats.drops();
        lost += sim.link(l).lost;
    }
    assert_eq!(
        sent,
        st.delivered_packets + dropped + lost + sim.packets_in_network() as u64
    );
    (dropped, lost)
}

/// The packet a segment becomes on the wire (the fields the endpoints read).
pub fn to_packet(s: &aqmlab::tcp::Seg) -> aqmlab::packet::Packet {
    aqmlab::packet::Packet {
        flags: s.flags,
        len: s.len,
        seq: s.seq,
        ack: s.ack,
        sack: s.sack,
        sack_n: s.sack_n,
        sack_permitted: s.sack_permitted,
        ..Default::default()
    }
}

/// A client and a server endpoint with configurations `a` and `b`, connected by hand.
pub fn handshake(a: &TcpConfig, b: &TcpConfig) -> (aqmlab::tcp::Endpoint, aqmlab::tcp::Endpoint) {
    let (mut cl, mut sv) = (
        aqmlab::tcp::Endpoint::new(a, 0),
        aqmlab::tcp::Endpoint::new(b, 0),
    );
    let mut out = aqmlab::tcp::Outbox::default();
    sv.listen(0);
    cl.connect(0, a, &mut out);
    let syn = to_packet(&out.segs[0]);
    out.clear();
    sv.on_segment(1, b, &syn, &mut out);
    let syn_ack = to_packet(&out.segs[0]);
    out.clear();
    cl.on_segment(2, a, &syn_ack, &mut out);
    let ack = to_packet(&out.segs[0]);
    out.clear();
    sv.on_segment(3, b, &ack, &mut out);
    (cl, sv)
}

/// Drops once, on `link`, the data segment that starts at byte `1 + k·mss` for each `k` in
/// `lost` (segment `k` of the transfer, 0-based, after the SYN's sequence number).
pub fn lose_segments(
    sim: &mut Simulation,
    link: aqmlab::net::link::LinkId,
    mss: u64,
    lost: &[u64],
) {
    for &k in lost {
        sim.script_loss(
            link,
            ScriptedLoss {
                seq: 1 + k * mss,
                syn: false,
                count: 1,
                mark: false,
                ack: false,
                skip: 0,
            },
        );
    }
}

/// Drops the first `count` SYNs the client sends (its SYN carries sequence 0; the client is
/// on the left, so they travel the forward link).
pub fn lose_syns(sim: &mut Simulation, count: u32) {
    let fwd = sim.topology().forward();
    sim.script_loss(
        fwd,
        ScriptedLoss {
            seq: 0,
            syn: true,
            count,
            mark: false,
            ack: false,
            skip: 0,
        },
    );
}

/// Every traffic model at once (greedy bulk, UDP CBR, FTP, Mah's Web users, PackMime-HTTP,
/// browsers, on both sides) for 30 s through the bottleneck queue `queue` (a `[queue]` table
/// as JSON) in both directions: the run completes, and each bottleneck queue accounts for
/// every packet offered to it (departed, dropped or still queued). Returns the finished run.
pub fn every_traffic_model(queue: serde_json::Value) -> Simulation {
    let mut sc = greedy_10mbps(4, 30.0, 3);
    sc.warmup_s = 5.0;
    sc.queue = serde_json::from_value(queue).expect("a [queue] table");
    sc.traffic = serde_json::from_value(serde_json::json!([
        {"kind": "bulk", "flows": 4, "start_jitter_s": 1.0},
        {"kind": "udp_cbr", "flows": 3, "share": 0.1, "packet_bytes": 1000, "start_jitter_s": 1.0},
        {"kind": "ftp", "sessions": 5, "size": {"kind": "constant", "bytes": 100000},
         "think_mean_s": 0.5, "start_spread_s": 2.0},
        {"kind": "mah", "users": 20, "start_spread_s": 2.0},
        {"kind": "packmime", "rate": 5.0, "client_side": "right"},
        {"kind": "browsers", "users": 20, "client_side": "left"}
    ]))
    .expect("traffic");
    let (sim, _) = run(sc);
    assert!(sim.finished());
    for dir in [sim.topology().forward(), sim.topology().reverse()] {
        let q = &sim.link(dir).queue;
        let st = &q.stats;
        assert!(st.arrivals > 0 && st.departures > 0, "link {dir}");
        assert_eq!(
            st.arrivals,
            st.departures + st.drops() + q.len().packets as u64,
            "link {dir}"
        );
    }
    sim
}
