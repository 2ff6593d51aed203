//! Many-flow behaviour: utilization, RTT unfairness, Mathis throughput, conservation,
//! determinism.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::measure::Table;

use crate::common::*;

/// 100 greedy flows with RTTs over 10–150 ms keep a 10 Mb/s drop-tail bottleneck busy, and
/// a flow's throughput falls with its RTT (TCP's RTT bias: window growth of one segment per
/// RTT).
#[test]
fn greedy_flows_fill_the_link_and_short_rtts_win() {
    let (sim, tables) = run(greedy_10mbps(100, 70.0, 3));
    let s = sim.summary();
    // Data flows right → left (servers on the right).
    assert!(
        (0.98..=1.0).contains(&s.reverse.utilization),
        "utilization {}",
        s.reverse.utilization
    );
    assert!(sim.link(sim.topology().reverse()).queue.stats.peak_packets <= 100);
    let c = table(&tables, "connections");
    let rtt = f64s(c, "base_rtt_ms");
    let bytes = u64s(c, "bytes_delivered");
    let mut pairs: Vec<(f64, u64)> = rtt.into_iter().zip(bytes).collect();
    pairs.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let q = pairs.len() / 4;
    let short: f64 = pairs[..q].iter().map(|p| p.1 as f64).sum::<f64>() / q as f64;
    let long: f64 = pairs[pairs.len() - q..]
        .iter()
        .map(|p| p.1 as f64)
        .sum::<f64>()
        / q as f64;
    assert!(
        short > 1.5 * long,
        "shortest-RTT quartile {short} B vs longest {long} B"
    );
}

/// A single long flow under independent random loss p: throughput ≈ MSS/RTT·sqrt(3/(2p))
/// (Mathis, Semke, Mahdavi, Ott 1997, with one ACK per segment), within 20 %.
#[test]
fn single_flow_under_random_loss_matches_mathis() {
    let p = 0.001;
    let mut sc = base(600.0);
    sc.warmup_s = 20.0;
    sc.topology.bottleneck_mbps = 100.0;
    sc.topology.access_mbps = 1000.0;
    sc.topology.loss_rate_reverse = p; // data direction
    sc.traffic = vec![bulk(1, None)];
    sc.tcp.min_rto_s = 0.2;
    let (sim, _) = run(sc);
    let s = sim.summary();
    let mss_bits = 1460.0 * 8.0;
    let mathis = mss_bits / 0.1 * (1.5 / p).sqrt(); // bits/s
                                                    // Goodput share of the bottleneck throughput: payload / packet size.
    let goodput = s.reverse.throughput_mbps * 1e6 * 1460.0 / 1500.0;
    let ratio = goodput / mathis;
    assert!(
        (0.8..=1.2).contains(&ratio),
        "goodput {goodput:.0} b/s vs Mathis {mathis:.0} b/s (ratio {ratio:.3})"
    );
}

/// Every packet created is delivered, dropped by a queue, lost on a link, or still in the
/// network; every completed transfer delivered exactly its bytes.
#[test]
fn packets_and_bytes_are_conserved() {
    let mut sc = greedy_10mbps(60, 40.0, 4);
    sc.warmup_s = 0.0;
    sc.topology.loss_rate = 0.002;
    sc.topology.loss_rate_reverse = 0.002;
    sc.queue = AqmConfig::Droptail {
        limit: 30,
        unit: QueueUnit::Packets,
    };
    // Finite transfers of assorted sizes, started over the run.
    let mut traffic = Vec::new();
    for (i, size) in [3_000u64, 40_000, 250_000, 1_000_000]
        .into_iter()
        .enumerate()
    {
        let tr = bulk_at(15, Some(size), i as f64, 20.0);
        traffic.push(tr);
    }
    sc.traffic = traffic;
    let (sim, tables) = run(sc);
    let c = table(&tables, "connections");
    let topo = sim.topology();
    for l in 0..(2 * topo.hosts() + 2) {
        let link = sim.link(l);
        assert!(
            link.queue.stats.peak_packets as u64 <= if l >= 2 * topo.hosts() { 30 } else { 10_000 }
        );
    }
    let (dropped, lost) = assert_packets_conserved(&sim, &tables);
    assert!(dropped > 0 && lost > 0);
    let done = bools(c, "completed");
    let want = u64s(c, "response_bytes");
    let got = u64s(c, "bytes_delivered");
    assert!(done.iter().filter(|&&d| d).count() > 40);
    for i in 0..done.len() {
        if done[i] {
            assert_eq!(got[i], want[i]);
        } else {
            assert!(got[i] < want[i]);
        }
    }
}

#[test]
fn same_seed_same_records_other_seed_other_records() {
    let a = digest(&run(greedy_10mbps(30, 15.0, 7)).1);
    let b = digest(&run(greedy_10mbps(30, 15.0, 7)).1);
    let c = digest(&run(greedy_10mbps(30, 15.0, 8)).1);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Common random numbers: changing the queue manager leaves every flow's RTT and start time
/// unchanged.
#[test]
fn queue_manager_does_not_change_the_flows() {
    let a = greedy_10mbps(30, 15.0, 9);
    let mut b = a.clone();
    b.queue = AqmConfig::Droptail {
        limit: 10,
        unit: QueueUnit::Packets,
    };
    let (_, ta) = run(a);
    let (_, tb) = run(b);
    let key = |t: &[Table]| {
        let c = table(t, "connections");
        let mut v: Vec<(u64, u64, u64)> = u64s(c, "flow")
            .into_iter()
            .zip(f64s(c, "base_rtt_ms"))
            .zip(f64s(c, "start_s"))
            .map(|((f, r), s)| (f, r.to_bits(), s.to_bits()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(key(&ta), key(&tb));
    assert_ne!(digest(&ta), digest(&tb));
}

/// Uploads (the client sends) complete and deliver their bytes exactly, in both directions of
/// a two-way dumbbell (clients on both sides).
#[test]
fn uploads_and_two_way_transfers_complete() {
    let mut sc = base(30.0);
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.left_hosts = 3;
    sc.topology.right_hosts = 3;
    use aqmlab::config::{Direction, Side, TrafficConfig};
    let transfer = |direction, client_side| TrafficConfig::Bulk {
        flows: 5,
        bytes: Some(200_000),
        request_bytes: 0,
        direction,
        client_side,
        start_s: 0.0,
        start_jitter_s: 5.0,
    };
    let up = transfer(Direction::Upload, Side::Left);
    let right = transfer(Direction::Download, Side::Right);
    sc.traffic = vec![up, right];
    let (sim, tables) = run(sc);
    let c = table(&tables, "connections");
    assert!(bools(c, "completed").iter().all(|&d| d));
    assert!(u64s(c, "bytes_delivered").iter().all(|&b| b == 200_000));
    // Uploads from the left and downloads to right-side clients both load left → right.
    let s = sim.summary();
    assert!(
        s.forward.tx_bytes > 2_000_000 && s.reverse.tx_bytes < 500_000,
        "{s:?}"
    );
}

/// Connection slots are recycled: memory for connections stays bounded by the number open at
/// once, not the number opened.
#[test]
fn finished_connections_release_their_slots() {
    let mut sc = base(60.0);
    sc.topology.bottleneck_mbps = 10.0;
    sc.traffic = vec![bulk_at(2000, Some(5_000), 0.0, 55.0)];
    let mut sim = aqmlab::sim::Simulation::new(sc).unwrap();
    let mut max_active = 0;
    for k in 1..=60 {
        sim.run_until(aqmlab::units::secs(k as f64));
        max_active = max_active.max(sim.engine_stats().active_connections);
        drop(sim.drain());
    }
    let st = sim.engine_stats();
    assert_eq!(st.connections_opened, 2000);
    assert!(max_active < 50, "{max_active} connections open at once");
}
