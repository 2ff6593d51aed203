//! The per-flow delay emulator (`[delay_box]`: where the delay is added, dummynet's clock
//! tick) and hosts' send jitter (`topology.host_jitter_us`), against hand-computed delays.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{DelayPlacement, Direction, RttConfig, Scenario, Side, TrafficConfig};
use aqmlab::sim::Simulation;

use crate::common::*;

/// One UDP flow of 1,000-byte packets at 1 Mb/s over idle 10 Mb/s links without propagation
/// delay: three serializations of 0.8 ms, plus the delay box's share of a 40 ms RTT.
fn udp_probe(placement: DelayPlacement, direction: Direction, tick_ms: f64) -> Scenario {
    let mut sc = base(20.0);
    sc.warmup_s = 1.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 10.0;
    sc.topology.left_hosts = 1;
    sc.topology.right_hosts = 1;
    sc.queue = AqmConfig::Droptail {
        limit: 100,
        unit: QueueUnit::Packets,
    };
    sc.rtt = RttConfig::Constant { rtt_ms: 40.0 };
    sc.delay_box.placement = placement;
    sc.delay_box.tick_ms = tick_ms;
    sc.traffic = vec![TrafficConfig::UdpCbr {
        flows: 1,
        rate_mbps: Some(1.0),
        share: None,
        packet_bytes: 1000,
        direction,
        client_side: Side::Left,
        start_s: 0.0,
        start_jitter_s: 0.0,
        stop_s: None,
    }];
    sc
}

fn one_way_ms(sc: Scenario) -> (f64, f64, f64) {
    let (sim, _) = run(sc);
    let u = &sim.summary().udp;
    assert!(u.delivered > 2000 && u.lost == 0);
    (u.delay_mean_ms, u.delay_p50_ms, u.delay_max_ms)
}

/// Split: half the RTT each way; client out-bound: all of it on what the client sends, none
/// on what the server sends; client in-bound: all of it on what the client receives; in-bound:
/// half at each receiver; boxes: half, whatever the side. Exact delays without a tick.
#[test]
fn placement_puts_the_delay_where_the_testbed_had_it() {
    use DelayPlacement::*;
    use Direction::*;
    let serialization = 3.0 * 0.8;
    for (placement, direction, extra) in [
        (Split, Download, 20.0),
        (Split, Upload, 20.0),
        (ClientOutbound, Download, 0.0),
        (ClientOutbound, Upload, 40.0),
        (ClientInbound, Download, 40.0),
        (ClientInbound, Upload, 0.0),
        (Inbound, Download, 20.0),
        (Inbound, Upload, 20.0),
        // ns-2's boxes: a UDP flow's RTT has no client/server parts, and its packets get
        // the one-way half of it (on the sender's side).
        (Boxes, Download, 20.0),
        (Boxes, Upload, 20.0),
    ] {
        let (mean, _, max) = one_way_ms(udp_probe(placement, direction, 0.0));
        let expected = serialization + extra;
        assert!(
            (mean - expected).abs() < 1e-6 && (max - expected).abs() < 0.1,
            "{placement:?} {direction:?}: {mean} ms, expected {expected}"
        );
    }
}

/// A 10 ms tick (HZ = 100): a 20 ms one-way delay is 2 ticks, so the box holds a packet
/// between 10 and 20 ms ((d − 1)·T, d·T]); packets sent every 8 ms leave at tick boundaries,
/// so the box's share of the delay averages 15 ms, not 20.
#[test]
fn a_clock_tick_quantizes_the_delay() {
    let (mean, _, max) = one_way_ms(udp_probe(DelayPlacement::Split, Direction::Download, 10.0));
    let serialization = 3.0 * 0.8;
    assert!(max <= serialization + 20.0 + 0.1, "{max}");
    assert!((mean - (serialization + 15.0)).abs() < 0.5, "{mean}");
    // With HZ = 1000, 1 ms ticks: between 19 and 20 ms (a packet every 8 ms always falls at
    // the same point of the host's 1 ms tick, so the delay is one value in that range).
    let (mean, _, max) = one_way_ms(udp_probe(DelayPlacement::Split, Direction::Download, 1.0));
    assert!(
        mean > serialization + 19.0 && max <= serialization + 20.0 + 1e-6,
        "{mean} {max}"
    );
}

/// In-bound boxes at the receiver hand packets to TCP at the host's ticks, so every ACK a
/// receiver sends in response leaves on its clock's grid: the ACKs' send times share one
/// residue modulo the tick.
#[test]
fn inbound_boxes_put_acks_on_the_receivers_tick_grid() {
    let mut sc = base(5.0);
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 60.0 };
    sc.delay_box.placement = DelayPlacement::Inbound;
    sc.delay_box.tick_ms = 10.0;
    sc.traffic = vec![bulk(1, Some(400_000))];
    let mut sim = Simulation::new(sc).expect("valid");
    sim.enable_trace();
    let (sim, _) = run_traced(sim);
    let tick = 10_000_000u64;
    let acks: Vec<u64> = sim
        .trace()
        .iter()
        .filter(|e| e.side == 0 && e.len == 0 && e.t > 0)
        .map(|e| e.t % tick)
        .collect();
    assert!(acks.len() > 100, "{}", acks.len());
    assert!(acks.iter().all(|&r| r == acks[0]), "ACKs off the grid");
}

/// Send jitter delays each packet by at most `host_jitter_us` and never reorders a host's
/// packets: a lossless transfer has no duplicate ACKs or retransmissions, and the UDP probe's
/// delay grows by half the jitter on average.
#[test]
fn send_jitter_is_bounded_and_keeps_order() {
    let mut sc = udp_probe(DelayPlacement::Split, Direction::Download, 0.0);
    sc.topology.host_jitter_us = 500.0;
    let (mean, _, max) = one_way_ms(sc);
    let base_ms = 3.0 * 0.8 + 20.0;
    assert!(max <= base_ms + 0.5 + 0.1, "{max}");
    assert!((mean - (base_ms + 0.25)).abs() < 0.02, "{mean}");

    let mut sc = base(20.0);
    sc.topology.bottleneck_mbps = 100.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.host_jitter_us = 2000.0;
    sc.traffic = vec![bulk(4, Some(2_000_000))];
    let (sim, t) = run(sc);
    let c = table(&t, "connections");
    assert!(u64s(c, "fast_retransmits").iter().all(|&x| x == 0));
    assert!(u64s(c, "data_retransmits").iter().all(|&x| x == 0));
    assert!(bools(c, "completed").iter().all(|&x| x));
    assert_eq!(sim.summary().connections_completed, 4);
}

/// Floyd & Jacobson's phase effect: two greedy Reno flows through a 30-packet drop-tail queue
/// at 10 Mb/s, RTTs 50 ms and 50 ms + δ. Without jitter, lengthening one RTT by δ = 0.1 ms
/// moves its share of the throughput by 0.3 or more (the flows lock into phase with the
/// queue's drops; which one loses depends on the start); with a send jitter of one bottleneck
/// service time (1.2 ms) the share moves by less than 0.1. Three seeds each.
#[test]
fn send_jitter_removes_phase_effects() {
    let share = |delta_ms: f64, jitter_us: f64, seed: u64| {
        let mut sc = base(120.0);
        sc.seed = seed;
        sc.warmup_s = 20.0;
        sc.topology.bottleneck_mbps = 10.0;
        sc.topology.access_mbps = 100.0;
        sc.topology.left_hosts = 2;
        sc.topology.right_hosts = 2;
        sc.topology.host_jitter_us = jitter_us;
        sc.tcp = aqmlab::tcp::config::TcpConfig::freebsd_228();
        sc.tcp.rwnd = 1_000_000;
        sc.queue = AqmConfig::Droptail {
            limit: 30,
            unit: QueueUnit::Packets,
        };
        sc.rtt = RttConfig::Matrix {
            rtt_ms: vec![vec![50.0, 50.0], vec![50.0 + delta_ms, 50.0 + delta_ms]],
        };
        sc.traffic = vec![bulk_at(2, None, 0.0, 1.0)];
        let (_, t) = run(sc);
        let b = u64s(table(&t, "connections"), "bytes_delivered_measured");
        b[0] as f64 / (b[0] + b[1]) as f64
    };
    for seed in 1..=3 {
        let locked = (share(0.1, 0.0, seed) - share(0.0, 0.0, seed)).abs();
        let jittered = (share(0.1, 1200.0, seed) - share(0.0, 1200.0, seed)).abs();
        assert!(
            locked > 0.25,
            "seed {seed}: without jitter the share moved by {locked}"
        );
        assert!(
            jittered < 0.1,
            "seed {seed}: with jitter the share moved by {jittered}"
        );
    }
}
