//! LEDBAT (RFC 6817, `tcp/ledbat.rs`, preset `linux-ledbat`) in whole runs: the one-way
//! delay its receiver reports, the standing queue it settles at alone, and its yielding to
//! CUBIC.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{RttConfig, Scenario};
use aqmlab::measure::Column;
use aqmlab::packet::{flags, TS_SLOT};
use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::ledbat::{MIN_CWND, NO_SAMPLE, TARGET};

use crate::common::*;

/// Mean queueing delay (ms) at the bottleneck in the data direction, from the histogram
/// (bin centres), and the number of packets it counts.
fn mean_queue_delay_ms(tables: &[aqmlab::measure::Table], direction: &str) -> (f64, u64) {
    let q = table(tables, "queue_delay");
    let dirs = match &q.columns.iter().find(|c| c.0 == "direction").unwrap().1 {
        Column::Str(v) => v.clone(),
        _ => unreachable!(),
    };
    let (d, w, c) = (f64s(q, "delay_ms"), f64s(q, "width_ms"), u64s(q, "count"));
    let (mut sum, mut n) = (0.0, 0);
    for i in 0..c.len() {
        if dirs[i] == direction {
            sum += (d[i] + w[i] / 2.0) * c[i] as f64;
            n += c[i];
        }
    }
    (sum / n as f64, n)
}

/// One greedy LEDBAT download through 10 Mb/s (100 Mb/s access links, RTT 20 ms), drop-tail
/// 2000 packets (2.4 s: never full at LEDBAT's 100 ms).
fn one_flow(seconds: f64, warmup: f64) -> Scenario {
    let mut sc = greedy_10mbps(1, seconds, 1);
    sc.warmup_s = warmup;
    sc.topology.left_hosts = 1;
    sc.topology.right_hosts = 1;
    sc.tcp = TcpConfig::linux_ledbat();
    sc.rtt = RttConfig::Constant { rtt_ms: 20.0 };
    sc.queue = AqmConfig::Droptail {
        limit: 2000,
        unit: QueueUnit::Packets,
    };
    sc.traffic = vec![bulk(1, None)];
    sc
}

/// Packet time at the bottleneck: 1500 B (1448 + 52) at 10 Mb/s.
const PACKET_MS: f64 = 1500.0 * 8.0 / 10e6 * 1e3;

/// The receiver reports each data segment's one-way delay, exactly (the simulator's clocks
/// are one): the first report, of a segment that met empty queues, is the propagation delay
/// (10 ms each way) plus its serialization at the two 100 Mb/s access links and the 10 Mb/s
/// bottleneck: 10 + 2·0.12 + 1.2 = 11.44 ms. Segments carry the option's flag; pure ACKs
/// before any data report none.
#[test]
fn the_receiver_reports_the_exact_one_way_delay() {
    let mut sim = aqmlab::sim::Simulation::new(one_flow(1.0, 0.0)).unwrap();
    sim.enable_trace();
    let (sim, _) = run_traced(sim);
    let tr = sim.trace();
    let first = tr
        .iter()
        .find(|e| e.side == 0 && e.sack[TS_SLOT].1 != NO_SAMPLE && e.flags & flags::TS != 0)
        .expect("a report");
    assert_eq!(first.sack[TS_SLOT].1, 11_440_000);
    // Every data segment carries its send time (Linux's send stamps: segments sent in one
    // instant a nanosecond apart).
    for e in tr.iter().filter(|e| e.side == 1 && e.len > 0) {
        assert!(e.flags & flags::TS != 0);
        assert!(e.sack[TS_SLOT].0.abs_diff(e.t) < 1000, "{e:?}");
    }
}

/// Alone on a large drop-tail buffer LEDBAT settles where queuing_delay = TARGET (RFC 6817
/// §2.4.2: off_target = 0 is the only window that neither grows nor shrinks). The window's
/// approach is exponential: an excess of e packets holds e packet times of extra queue,
/// off_target = −e·pt/TARGET, and the window moves off_target segments per RTT, so
/// τ = TARGET·RTT/pt = 0.1 s · 0.12 s / 1.2 ms = 10 s; from slow start's overshoot (about
/// 110 ms) it is within 0.05 ms after 80 s. At rest, the MIN filter holds the least of the
/// last 4 reports; a delayed ACK acknowledges two segments, sent back to back, and reports
/// the later one, which waited about one packet time longer than the earlier; the queue
/// drains one packet per packet time and refills by two per ACK. So the mean over all packets
/// lies within one packet time of the filtered value. The tolerance: 1 packet time (1.2 ms)
/// plus the histogram's 0.1 ms bin. No losses.
#[test]
fn alone_it_holds_the_queue_at_target() {
    let (_, tables) = run(one_flow(90.0, 80.0));
    let (mean, n) = mean_queue_delay_ms(&tables, "reverse");
    assert!(n > 8000, "{n} packets");
    assert!(
        (mean - 100.0).abs() <= PACKET_MS + 0.1,
        "mean queueing delay {mean} ms"
    );
    let c = table(&tables, "connections");
    assert_eq!(u64s(c, "data_retransmits"), vec![0]);
    // The link stays busy: at least 95 % of the 10 s at 10 Mb/s in payload (1448/1500).
    let bytes = u64s(c, "bytes_delivered_measured")[0] as f64;
    assert!(
        bytes * 8.0 / 10.0 > 0.95 * 10e6 * 1448.0 / 1500.0,
        "{bytes} B"
    );
}

/// LEDBAT yields to a CUBIC flow (RFC 6817 §2: a LEDBAT flow should yield to standard TCP
/// sharing its bottleneck; §2.4.2: while the queuing delay exceeds TARGET, off_target < 0 and
/// the window falls on every ACK down to MIN_CWND). CUBIC (from 10 s) fills a 250-packet
/// drop-tail queue (300 ms) and after each loss keeps at least 0.7 of its window, 0.7·(17 +
/// 250) − 17 ≈ 170 packets ≈ 204 ms of queue: above TARGET throughout. LEDBAT then sends at
/// most MIN_CWND segments per RTT, and an RTT is at least the base RTT plus TARGET: its
/// bytes over the measured 20 s are at most 2 · 1448 B · 20 s / 0.12 s.
#[test]
fn it_yields_to_cubic() {
    let mut sc = one_flow(60.0, 40.0);
    sc.tcp = TcpConfig::linux_cubic();
    sc.queue = AqmConfig::Droptail {
        limit: 250,
        unit: QueueUnit::Packets,
    };
    sc.topology.left_hosts = 2;
    sc.topology.right_hosts = 2;
    sc.traffic = vec![bulk_at(1, None, 0.0, 0.0), bulk_at(1, None, 10.0, 0.0)];
    sc.traffic_tcp = vec![Some(TcpConfig::linux_ledbat()), None];
    let (_, tables) = run(sc);
    let c = table(&tables, "connections");
    let (source, bytes) = (u64s(c, "source"), u64s(c, "bytes_delivered_measured"));
    let of = |s: u64| bytes[source.iter().position(|&x| x == s).unwrap()] as f64;
    let bound = (MIN_CWND as f64) * 1448.0 * 20.0 / (0.020 + TARGET as f64 * 1e-9);
    assert!(of(0) <= bound, "LEDBAT {} B > {bound} B", of(0));
    assert!(of(0) > 0.0, "LEDBAT keeps sending");
    let (mean, _) = mean_queue_delay_ms(&tables, "reverse");
    assert!(mean > 100.0, "the queue stands above TARGET: {mean} ms");
    // CUBIC takes the rest: at least 95 % of the link less LEDBAT's bound.
    assert!(of(1) * 8.0 / 20.0 > 0.95 * 10e6 * 1448.0 / 1500.0 - bound * 8.0 / 20.0);
}

/// LEDBAT's feedback takes the room of a fourth SACK block: a scenario asking for 4 is
/// refused with a one-line error naming the field.
#[test]
fn four_sack_blocks_are_refused() {
    let mut sc = one_flow(1.0, 0.0);
    sc.tcp.sack_max_blocks = 4;
    let e = aqmlab::sim::Simulation::new(sc)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("sack_max_blocks") && e.contains("ledbat"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
