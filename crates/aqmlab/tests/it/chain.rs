//! Chains of bottlenecks (a parking lot, `net::topology::Chain`): packets are conserved at
//! every hop and end to end with main and cross traffic of every kind, a chain is
//! deterministic, a chain whose extra hops are much faster than hop 0 behaves as the dumbbell,
//! and cross traffic at one hop shares that hop with the main flows.

use super::common::*;
use aqmlab::config::{HopConfig, Scenario};
use aqmlab::sim::Simulation;

/// `hops` more hops after hop 0 (each `mbps`, `delay_ms`, the scenario's queue).
fn with_hops(sc: &mut Scenario, hops: usize, mbps: f64, delay_ms: f64) {
    sc.topology.hops = vec![
        HopConfig {
            mbps: Some(mbps),
            delay_ms: Some(delay_ms),
            ..Default::default()
        };
        hops
    ];
}

/// Every monitored link (two per hop) accounts for every packet offered to it.
fn assert_every_hop_conserves(sim: &Simulation) {
    let topo = sim.topology();
    for k in 0..topo.hops {
        for dir in 0..2 {
            let link = topo.hop_link(k, dir);
            let q = &sim.link(link).queue;
            let st = &q.stats;
            assert!(st.arrivals > 0, "hop {k} direction {dir} saw no packet");
            assert_eq!(
                st.arrivals,
                st.departures + st.drops() + q.len().packets as u64,
                "hop {k} direction {dir}"
            );
        }
    }
}

fn three_hop_parking_lot(seed: u64) -> Scenario {
    let mut sc = greedy_10mbps(3, 20.0, seed);
    sc.warmup_s = 5.0;
    with_hops(&mut sc, 2, 10.0, 5.0);
    sc.topology.hops[1].queue = Some(queue_cfg(serde_json::json!({"kind": "codel"})).unwrap());
    sc.topology.cross_hosts = 3;
    sc.traffic = serde_json::from_value(serde_json::json!([
        {"kind": "bulk", "flows": 3, "start_jitter_s": 1.0},
        {"kind": "browsers", "users": 10, "client_side": "left"},
        {"kind": "udp_cbr", "flows": 2, "share": 0.05, "packet_bytes": 1000},
        {"kind": "bulk", "flows": 2, "start_jitter_s": 1.0, "client_side": "right"},
        {"kind": "packmime", "rate": 3.0, "client_side": "right"},
        {"kind": "udp_cbr", "flows": 1, "share": 0.05, "packet_bytes": 500}
    ]))
    .expect("traffic");
    // Main traffic (sources 0-2) crosses every hop; cross traffic at hops 1, 2 and 0.
    sc.traffic_hop = vec![None, None, None, Some(1), Some(2), Some(0)];
    sc
}

#[test]
fn a_parking_lot_conserves_packets_at_every_hop_and_end_to_end() {
    let mut sc = three_hop_parking_lot(7);
    // UDP flows count the packets they send after the warm-up (`udp_flows.sent`).
    sc.warmup_s = 0.0;
    let (sim, tables) = run(sc);
    assert_every_hop_conserves(&sim);
    // End to end: every TCP segment and UDP packet sent is delivered, dropped at a queue,
    // lost on a link or still in the network.
    assert_packets_conserved(&sim, &tables);
    // Every source's connections used the hosts of its hops: cross traffic at hop 1 (source
    // 3) between hop 1's cross hosts only.
    let conns = table(&tables, "connections");
    let (src, client) = (u64s(conns, "source"), u64s(conns, "client_host"));
    let topo = sim.topology();
    for (s, c) in src.iter().zip(&client) {
        let router = topo.router_of(*c as u32);
        match s {
            0 | 1 => assert_eq!(router, 0, "a main client on the left"),
            3 => assert_eq!(router, 2, "hop 1's right cross host hangs on R2"),
            4 => assert_eq!(router, 3, "hop 2's right cross host hangs on R3"),
            _ => {},
        }
    }
    // The summary has every hop; the tables carry a hop column.
    let sm = sim.summary();
    assert_eq!(sm.hops.len(), 3);
    assert_eq!(sm.hops[0].forward.tx_packets, sm.forward.tx_packets);
    let hops = u64s(table(&tables, "bottleneck"), "hop");
    assert!((0..3).all(|k| hops.contains(&k)));
    let sd = table(&tables, "source_delay");
    assert!(u64s(sd, "hop").contains(&2));
}

#[test]
fn a_chain_is_deterministic() {
    let (_, a) = run(three_hop_parking_lot(11));
    let (_, b) = run(three_hop_parking_lot(11));
    assert_eq!(digest(&a), digest(&b));
}

/// Hops 1000 times faster than hop 0, without propagation delay, add ~1.2 µs per packet and
/// never queue: the goodput and hop 0's queueing delay stay those of the dumbbell. Tolerance:
/// 2 % of goodput and 10 % of the mean delay (the extra microseconds shift packet timings, so
/// the runs are not identical, only alike).
#[test]
fn fast_extra_hops_leave_the_dumbbell_alone() {
    let dumbbell = greedy_10mbps(4, 40.0, 5);
    let mut chain = dumbbell.clone();
    with_hops(&mut chain, 2, 10_000.0, 0.0);
    let (a, _) = run(dumbbell);
    let (b, _) = run(chain);
    let (sa, sb) = (a.summary(), b.summary());
    let rel = |x: f64, y: f64| (x - y).abs() / x;
    assert!(
        rel(sa.tcp_goodput_mbps, sb.tcp_goodput_mbps) < 0.02,
        "{} vs {}",
        sa.tcp_goodput_mbps,
        sb.tcp_goodput_mbps
    );
    let (da, db) = (sa.reverse.delay_mean_ms, sb.reverse.delay_mean_ms);
    assert!(da > 1.0 && rel(da, db) < 0.1, "{da} vs {db}");
    for hop in &sb.hops[1..] {
        assert!(hop.reverse.delay_p99_ms < 0.2, "{hop:?}");
        assert_eq!(hop.reverse.drops_overflow, 0);
    }
}

/// Two hops: a fast hop 0 (100 Mb/s) and a 10 Mb/s hop 1, both without propagation delay, so
/// main flows (crossing both) and cross flows (hop 1 only) have the same RTT (the delay
/// boxes'). With `n` main and `m` cross greedy flows, hop 1 is the bottleneck and each class
/// gets about its share of flows, `n / (n + m)`. Tolerance: 0.1 absolute on the share
/// (drop-tail's unfairness between flows of equal RTT over 50 s measured).
#[test]
fn cross_traffic_shares_its_hop_with_the_main_flows() {
    let mut sc = greedy_10mbps(2, 60.0, 9);
    sc.rtt = aqmlab::config::RttConfig::Constant { rtt_ms: 50.0 };
    sc.topology.bottleneck_mbps = 100.0;
    sc.topology.bottleneck_delay_ms = 0.0;
    with_hops(&mut sc, 1, 10.0, 0.0);
    sc.topology.cross_hosts = 4;
    sc.traffic = vec![bulk_at(2, None, 0.0, 1.0), bulk_at(4, None, 0.0, 1.0)];
    sc.traffic_hop = vec![None, Some(1)];
    let (sim, tables) = run(sc);
    let sm = sim.summary();
    let hop1 = &sm.hops[1];
    assert!(hop1.reverse.utilization > 0.95, "{hop1:?}");
    assert!(hop1.reverse.mean_queue_pkts > 1.0, "{hop1:?}");
    assert!(
        sm.reverse.utilization < 0.15,
        "hop 0 carries only the main flows"
    );
    let conns = table(&tables, "connections");
    let (src, bytes) = (
        u64s(conns, "source"),
        u64s(conns, "bytes_delivered_measured"),
    );
    let by = |s: u64| -> f64 {
        src.iter()
            .zip(&bytes)
            .filter(|(x, _)| **x == s)
            .map(|(_, b)| *b as f64)
            .sum()
    };
    let share = by(0) / (by(0) + by(1));
    assert!((share - 2.0 / 6.0).abs() < 0.1, "main share {share}");
}

#[test]
fn a_source_hop_must_exist_and_have_cross_hosts() {
    let mut sc = three_hop_parking_lot(1);
    sc.traffic_hop[3] = Some(3);
    let e = Simulation::new(sc.clone())
        .err()
        .expect("hop 3 of 3")
        .to_string();
    assert!(
        e.starts_with("traffic[3].hop = 3: expected a hop of the chain, 0 to 2"),
        "{e}"
    );
    sc.traffic_hop[3] = Some(1);
    sc.topology.cross_hosts = 0;
    let e = Simulation::new(sc.clone())
        .err()
        .expect("no cross hosts")
        .to_string();
    assert!(e.starts_with("traffic[3].hop = 1"), "{e}");
    sc.topology.cross_hosts = 1;
    with_hops(&mut sc, 8, 10.0, 1.0);
    let e = Simulation::new(sc).err().expect("too long").to_string();
    assert!(e.starts_with("topology.hops = 8 entries"), "{e}");
}
