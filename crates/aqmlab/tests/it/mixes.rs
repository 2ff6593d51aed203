//! Traffic mixes: UDP CBR flows (exact rate, losses equal to the queue's drops, runs of
//! consecutive losses against hand-built patterns), FTP transfers (closed and open loop) and
//! the TCP goodput counter.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{Direction, RttConfig, Scenario, Side, TrafficConfig};
use aqmlab::measure::runs::MAX_RUN;
use aqmlab::measure::Table;
use aqmlab::net::link::ScriptedLoss;
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::secs;
use aqmlab::workload::file_size::FileSize;

use crate::common::*;

fn cbr(flows: u32, rate_mbps: f64, start_s: f64, stop_s: Option<f64>) -> TrafficConfig {
    TrafficConfig::UdpCbr {
        flows,
        rate_mbps: Some(rate_mbps),
        share: None,
        packet_bytes: 1000,
        direction: Direction::Download,
        client_side: Side::Left,
        start_s,
        start_jitter_s: 0.0,
        stop_s,
    }
}

fn ftp(sessions: Option<u32>, rate: Option<f64>, bytes: u64, think_mean_s: f64) -> TrafficConfig {
    TrafficConfig::Ftp {
        sessions,
        rate,
        size: FileSize::Constant { bytes },
        think_mean_s,
        request_bytes: 0,
        direction: Direction::Download,
        client_side: Side::Left,
        start_s: 0.0,
        start_spread_s: 0.0,
    }
}

/// A 10 Mb/s bottleneck with 100 Mb/s access links, 1 ms delays, 4 hosts per side.
fn ten_mbps(duration: f64, queue: AqmConfig) -> Scenario {
    let mut sc = base(duration);
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.bottleneck_delay_ms = 1.0;
    sc.topology.access_delay_ms = 1.0;
    sc.topology.left_hosts = 4;
    sc.topology.right_hosts = 4;
    sc.queue = queue;
    sc.rtt = RttConfig::Constant { rtt_ms: 20.0 };
    sc
}

fn droptail(limit: u64) -> AqmConfig {
    AqmConfig::Droptail {
        limit,
        unit: QueueUnit::Packets,
    }
}

fn aqm(json: &str) -> AqmConfig {
    serde_json::from_str(json).expect("valid queue")
}

fn i64s(t: &Table, col: &str) -> Vec<i64> {
    match t.column(col) {
        Some(aqmlab::measure::Column::I64(v)) => v.clone(),
        _ => panic!("no i64 column {col}"),
    }
}

fn strs(t: &Table, col: &str) -> Vec<String> {
    match t.column(col) {
        Some(aqmlab::measure::Column::Str(v)) => v.iter().map(|s| s.to_string()).collect(),
        _ => panic!("no str column {col}"),
    }
}

/// `loss_runs` rows of one scope (and flow) as a dense histogram.
fn runs_of(tables: &[Table], scope: &str, flow: i64) -> Vec<u64> {
    let t = table(tables, "loss_runs");
    let (sc, fl, len, n) = (
        strs(t, "scope"),
        i64s(t, "flow"),
        u64s(t, "run_length"),
        u64s(t, "count"),
    );
    let mut h = vec![0; MAX_RUN + 1];
    for i in 0..sc.len() {
        if sc[i] == scope && fl[i] == flow {
            h[len[i] as usize] += n[i];
        }
    }
    h
}

fn dense(h: &[u64]) -> Vec<u64> {
    let mut d = h.to_vec();
    d.resize(MAX_RUN + 1, 0);
    d
}

/// Same-nanosecond order at the bottleneck (docs/network.md): an arrival due at the very
/// nanosecond a serialization ends runs before that end. 20 Mb/s of 1,000-byte packets (one
/// every 400 µs, 101 of them) into the 10 Mb/s bottleneck (800 µs each) with room for one
/// waiting packet: packet k reaches the queue at k·400 µs (plus a constant), and every even
/// k ≥ 2 arrives exactly as the packet in service ends. Arriving first, it finds packet k − 1
/// waiting and is dropped: 50 drops (k = 2, 4, …, 100; the last one, with no packet after it,
/// stays unresolved for the flow). Were the end taken first, k − 1 would have gone into
/// service and the odd packets from k = 3 on would be dropped: 49.
#[test]
fn an_arrival_runs_before_a_serialization_ending_at_the_same_nanosecond() {
    let mut sc = ten_mbps(2.0, droptail(1));
    sc.traffic = vec![cbr(1, 20.0, 0.5, Some(0.5 + 0.0004 * 100.5))];
    let (sim, _) = run(sc);
    let u = &sim.summary().udp;
    assert_eq!(
        (u.sent, u.delivered, u.lost, u.unresolved),
        (101, 51, 49, 1)
    );
    assert_eq!(sim.summary().reverse.drops_overflow, 50);
}

/// 1 Mb/s of 1,000-byte packets from 0.5 s to 8.5 s is 125 packets a second for 8 s: exactly
/// 1,000 packets and 10^6 bytes, every one delivered, none lost, on the reverse bottleneck
/// (the flow is a download to the left side).
#[test]
fn cbr_alone_on_an_idle_link_delivers_exactly_its_rate() {
    let mut sc = ten_mbps(10.0, droptail(100));
    sc.traffic = vec![cbr(1, 1.0, 0.5, Some(8.5))];
    let (sim, tables) = run(sc);
    let u = &sim.summary().udp;
    assert_eq!(
        (u.sent, u.delivered, u.lost, u.unresolved),
        (1000, 1000, 0, 0)
    );
    assert_eq!(u.delivered_bytes, 1_000_000);
    assert_eq!(sim.summary().reverse.tx_packets, 1000);
    assert_eq!(sim.summary().forward.tx_packets, 0);
    // 10^6 bytes over the 10 s measured: 0.8 Mb/s.
    assert!(
        (u.throughput_mbps - 0.8).abs() < 1e-12,
        "{}",
        u.throughput_mbps
    );
    // Idle path: one-way delay = 3 × 1 ms propagation + 10 ms (half the 20 ms RTT) + the
    // serializations (80 µs, 800 µs, 80 µs); the histogram's quantiles are bin upper edges.
    assert!(
        (13.96..=14.06).contains(&u.delay_p50_ms),
        "{}",
        u.delay_p50_ms
    );
    let f = table(&tables, "udp_flows");
    assert_eq!(u64s(f, "sent"), vec![1000]);
    assert_eq!(f64s(f, "loss_probability"), vec![0.0]);
}

/// With a warm-up, only packets sent after it count; the schedule itself does not move.
#[test]
fn cbr_counts_start_at_the_warm_up() {
    let mut sc = ten_mbps(10.0, droptail(100));
    sc.warmup_s = 2.0;
    sc.traffic = vec![cbr(2, 1.0, 0.5, Some(8.5))];
    let (sim, _) = run(sc);
    let u = &sim.summary().udp;
    // Packets at 2.0 s, 2.008 s, ... up to 8.492 s: 812 per flow.
    assert_eq!((u.sent, u.delivered), (2 * 812, 2 * 812));
}

/// A 20 Mb/s CBR flow into a 10 Mb/s link: the queue fills, and every loss the receivers see
/// is one of the queue's drops (and vice versa). Alone, the flow's runs of consecutive losses
/// are exactly the queue's runs of consecutive drops.
#[test]
fn cbr_losses_through_a_full_queue_equal_the_queue_drops() {
    for queue in [
        droptail(50),
        aqm(
            r#"{"kind": "red", "limit": 50, "min_th": 10, "max_th": 30, "w_q": 0.002,
                "queue_in_bytes": false, "byte_mode": false}"#,
        ),
        aqm(r#"{"kind": "gred_i", "limit": 50, "min_th": 10}"#),
    ] {
        let name = format!("{queue:?}");
        let mut sc = ten_mbps(12.0, queue);
        sc.traffic = vec![cbr(1, 20.0, 0.0, Some(10.0))];
        let (sim, tables) = run(sc);
        let u = sim.summary().udp.clone();
        let q = &sim.link(sim.topology().reverse()).queue.stats;
        assert_eq!(u.unresolved, 0, "{name}");
        assert_eq!(u.sent, 25_000, "{name}");
        assert_eq!(u.lost, q.drops(), "{name}");
        assert_eq!(u.delivered + u.lost, u.sent, "{name}");
        assert!(
            (0.45..0.55).contains(&u.loss_probability),
            "{name}: {}",
            u.loss_probability
        );
        assert_eq!(
            runs_of(&tables, "udp_flow", 0),
            runs_of(&tables, "queue_reverse", -1),
            "{name}"
        );
        assert_eq!(
            dense(&u.loss_runs),
            runs_of(&tables, "udp_all", -1),
            "{name}"
        );
        assert_eq!(
            dense(&sim.summary().reverse.drop_runs),
            runs_of(&tables, "queue_reverse", -1)
        );
    }
}

/// Several flows of different rates share the full queue: their losses add up to its drops.
#[test]
fn cbr_flows_losses_add_up_to_the_queue_drops() {
    let mut sc = ten_mbps(12.0, droptail(30));
    sc.traffic = vec![cbr(3, 4.0, 0.0, Some(10.0)), cbr(2, 1.5, 0.013, Some(10.0))];
    let (sim, tables) = run(sc);
    let f = table(&tables, "udp_flows");
    let lost: u64 = u64s(f, "lost").iter().sum();
    // A flow's last packets, when dropped, leave no gap for its receiver to see: they stay
    // unresolved (every flow stopped long before the end, so nothing is still in flight).
    let tail: u64 = u64s(f, "unresolved").iter().sum();
    let q = &sim.link(sim.topology().reverse()).queue.stats;
    assert!(lost > 1000);
    assert_eq!(lost + tail, q.drops());
    assert!(tail < 5 * 30, "at most a queue's worth per flow: {tail}");
    assert_eq!(sim.summary().udp.lost, lost);
}

/// Scripted losses of packets 3, 4, 5, 9 and 20..=21 of a flow alone on an idle link: runs
/// of 3, 1 and 2; the queue drops nothing.
#[test]
fn consecutive_losses_match_a_hand_built_drop_pattern() {
    let mut sc = ten_mbps(5.0, droptail(100));
    sc.traffic = vec![cbr(1, 1.0, 0.0, Some(4.0))];
    let mut sim = Simulation::new(sc).unwrap();
    let link = sim.topology().reverse();
    for seq in [3, 4, 5, 9, 20, 21] {
        sim.script_loss(
            link,
            ScriptedLoss {
                seq,
                syn: false,
                count: 1,
                mark: false,
                ack: false,
                skip: 0,
            },
        );
    }
    sim.run_until(secs(5.0));
    let tables = sim.finish();
    let u = &sim.summary().udp;
    assert_eq!((u.sent, u.lost, u.delivered), (500, 6, 494));
    let mut want = vec![0; MAX_RUN + 1];
    want[1] = 1;
    want[2] = 1;
    want[3] = 1;
    assert_eq!(runs_of(&tables, "udp_flow", 0), want);
    assert_eq!(dense(&u.loss_runs), want);
    assert_eq!(runs_of(&tables, "queue_reverse", -1), vec![0; MAX_RUN + 1]);
    assert_eq!(u64s(table(&tables, "udp_flows"), "longest_run"), vec![3]);
}

/// Goodput counts each application byte once: a 100 kB download started after the warm-up
/// on a lossy link contributes exactly 100,000 bytes, however many segments were resent.
#[test]
fn goodput_counts_each_delivered_byte_once() {
    let mut sc = ten_mbps(20.0, droptail(100));
    sc.warmup_s = 1.0;
    sc.topology.loss_rate_reverse = 0.03;
    sc.traffic = vec![bulk_at(1, Some(100_000), 2.0, 0.0)];
    let (sim, tables) = run(sc);
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "completed"), vec![true]);
    assert!(
        u64s(c, "data_retransmits")[0] > 0,
        "the test needs retransmissions"
    );
    let s = sim.summary();
    assert_eq!(s.tcp_goodput_bytes, 100_000);
    assert_eq!(u64s(c, "bytes_delivered_measured"), vec![100_000]);
    assert!((s.tcp_goodput_reverse_mbps - 100_000.0 * 8.0 / 19.0 / 1e6).abs() < 1e-9);
    assert_eq!(s.tcp_goodput_forward_mbps, 0.0);
}

/// Greedy NewReno flows with 10 % of the link as CBR through drop-tail: TCP goodput plus UDP
/// throughput stay below the capacity, TCP goodput is the sum of the connections' measured
/// bytes, and the UDP flows lose packets.
#[test]
fn greedy_tcp_with_cbr_goodput_is_bounded_and_conserved() {
    let mut sc = greedy_10mbps(30, 40.0, 5);
    sc.tcp = TcpConfig::preset("freebsd-2.2.8").unwrap();
    sc.tcp.recovery = aqmlab::tcp::config::Recovery::NewReno;
    sc.traffic.push(TrafficConfig::UdpCbr {
        flows: 5,
        rate_mbps: None,
        share: Some(0.1),
        packet_bytes: 1000,
        direction: Direction::Download,
        client_side: Side::Left,
        start_s: 0.0,
        start_jitter_s: 0.1,
        stop_s: None,
    });
    let (sim, tables) = run(sc);
    let s = sim.summary();
    let c = table(&tables, "connections");
    let measured: u64 = u64s(c, "bytes_delivered_measured").iter().sum();
    assert_eq!(measured, s.tcp_goodput_bytes);
    let f = table(&tables, "udp_flows");
    assert!(f64s(f, "rate_mbps")
        .iter()
        .all(|&r| (r - 0.2).abs() < 1e-12));
    let cap = 10.0;
    assert!(
        s.tcp_goodput_mbps + s.udp.throughput_mbps <= cap,
        "{} + {}",
        s.tcp_goodput_mbps,
        s.udp.throughput_mbps
    );
    // Payload share of a full segment: 1460 of 1500 bytes on the wire.
    assert!(s.tcp_goodput_reverse_mbps <= s.reverse.throughput_mbps * 1460.0 / 1500.0);
    assert!(
        s.tcp_goodput_mbps > 0.8 * (cap - 1.0) * 1460.0 / 1500.0,
        "{}",
        s.tcp_goodput_mbps
    );
    assert!(s.udp.lost > 0 && s.udp.loss_probability < 0.5);
}

/// Every packet a drop-tail bottleneck drops after the warm-up belongs to one connection:
/// the connections' drop counts add up to the queues' drops, their runs to their drops, and
/// the `tcp_all` histogram is the sum of the `tcp_flow` ones.
#[test]
fn tcp_flow_losses_add_up_to_the_queue_drops() {
    let (sim, tables) = run(greedy_10mbps(40, 30.0, 9));
    let s = sim.summary();
    let c = table(&tables, "connections");
    let drops: u64 = u64s(c, "bottleneck_drops").iter().sum();
    let queue =
        |d: &aqmlab::sim::DirectionSummary| d.drops_early + d.drops_forced + d.drops_overflow;
    assert!(drops > 100, "{drops}");
    assert_eq!(drops, queue(&s.forward) + queue(&s.reverse));
    assert_eq!(aqmlab::measure::runs::losses(&s.tcp_loss_runs), drops);
    let t = table(&tables, "loss_runs");
    let (scope, len, n) = (strs(t, "scope"), u64s(t, "run_length"), u64s(t, "count"));
    let mut per_flow = vec![0; MAX_RUN + 1];
    for i in 0..scope.len() {
        if scope[i] == "tcp_flow" {
            per_flow[len[i] as usize] += n[i];
        }
    }
    assert_eq!(per_flow, runs_of(&tables, "tcp_all", -1));
    assert_eq!(dense(&s.tcp_loss_runs), per_flow);
}

/// Closed-loop FTP with no think time: each session's next file starts the moment the
/// previous one has arrived, and every file is 100 kB.
#[test]
fn ftp_sessions_restart_when_their_file_has_arrived() {
    let mut sc = ten_mbps(20.0, droptail(100));
    sc.traffic = vec![ftp(Some(2), None, 100_000, 0.0)];
    let (_, tables) = run(sc);
    let c = table(&tables, "connections");
    let (flow, start, last, done) = (
        u64s(c, "flow"),
        f64s(c, "start_s"),
        f64s(c, "last_byte_s"),
        bools(c, "completed"),
    );
    assert!(u64s(c, "response_bytes").iter().all(|&b| b == 100_000));
    for session in 0..2u64 {
        let mut mine: Vec<usize> = (0..flow.len())
            .filter(|&i| flow[i] >> 32 == session)
            .collect();
        mine.sort_by_key(|&i| flow[i] & 0xffff_ffff);
        assert!(mine.len() > 10, "session {session}: {} files", mine.len());
        for w in mine.windows(2) {
            assert!(done[w[0]]);
            assert_eq!(
                start[w[1]], last[w[0]],
                "next file starts when the last arrived"
            );
        }
    }
}

/// Open-loop FTP: transfers arrive as a Poisson process (count within 4 σ, exponential gaps
/// by Kolmogorov–Smirnov at α = 0.001).
#[test]
fn ftp_poisson_arrivals_have_exponential_gaps() {
    let mut sc = ten_mbps(400.0, droptail(100));
    sc.traffic = vec![ftp(None, Some(5.0), 2000, 0.0)];
    let (_, tables) = run(sc);
    let mut starts = f64s(table(&tables, "connections"), "start_s");
    starts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = starts.len() as f64;
    assert!((n - 2000.0).abs() < 4.0 * 2000f64.sqrt(), "{n} arrivals");
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let mut sorted = gaps.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut d: f64 = 0.0;
    for (i, &g) in sorted.iter().enumerate() {
        let f = 1.0 - (-5.0 * g).exp();
        d = d
            .max((f - i as f64 / sorted.len() as f64).abs())
            .max(((i + 1) as f64 / sorted.len() as f64 - f).abs());
    }
    assert!(d < 1.9495 / (sorted.len() as f64).sqrt(), "KS D = {d}");
}

#[test]
fn bad_mix_entries_name_their_field() {
    let mut sc = ten_mbps(5.0, droptail(100));
    let mut bad = cbr(1, 1.0, 0.0, None);
    if let TrafficConfig::UdpCbr { share, .. } = &mut bad {
        *share = Some(0.1);
    }
    sc.traffic = vec![bulk(1, None), bad];
    let e = sc.validate().unwrap_err();
    assert_eq!(e.field, "traffic[1].rate_mbps");
    sc.traffic = vec![cbr(1, 1.0, 2.0, Some(1.0))];
    assert_eq!(sc.validate().unwrap_err().field, "traffic[0].stop_s");
    sc.traffic = vec![ftp(None, None, 10, 0.0)];
    assert_eq!(sc.validate().unwrap_err().field, "traffic[0].sessions");
    sc.traffic = vec![ftp(Some(1), None, 0, 0.0)];
    assert_eq!(sc.validate().unwrap_err().field, "traffic[0].size.bytes");
}
