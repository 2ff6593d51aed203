//! CAKE (Linux `sch_cake.c`, tc-cake(8)): the configuration, DRR++ with sparse-flow priority
//! and host isolation behind one `Queue`, the shaper's release times, and TCP and every
//! traffic model through a CAKE bottleneck.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::Aqm;
use aqmlab::config::RttConfig;
use aqmlab::net::queue::Queue;
use aqmlab::packet::{Ecn, Packet, PacketStore};
use aqmlab::rng::{Rng, StreamKind};
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::{BitsPerSec, MS};

use crate::common::*;

fn cfg(v: serde_json::Value) -> Result<AqmConfig, String> {
    let c: AqmConfig = serde_json::from_value(v).map_err(|e| e.to_string())?;
    c.validate("queue").map_err(|e| e.to_string())?;
    Ok(c)
}

fn queue(v: serde_json::Value) -> Queue {
    let c = cfg(v).unwrap();
    Queue::new(
        c.build(BitsPerSec::from_mbps(10.0), 1500),
        Rng::stream(1, StreamKind::Test, 0),
    )
}

fn cake(q: &Queue) -> &aqmlab::aqm::Cake {
    let Aqm::Cake(c) = &q.aqm else {
        panic!("not cake")
    };
    c
}

fn cake_mut(q: &mut Queue) -> &mut aqmlab::aqm::Cake {
    let Aqm::Cake(c) = &mut q.aqm else {
        panic!("not cake")
    };
    c
}

fn pkt(flow_hash: u32, route: u32, size: u32, seq: u64) -> Packet {
    Packet {
        size,
        flow_hash,
        route,
        seq,
        ecn: Ecn::NotEct,
        ..Default::default()
    }
}

#[test]
fn config_defaults_are_tc_cakes_and_errors_name_the_field() {
    let q = queue(serde_json::json!({"kind": "cake"}));
    let c = cake(&q);
    assert_eq!(c.p.bandwidth, 0);
    assert_eq!((c.p.rtt, c.p.target), (100 * MS, 5 * MS));
    assert_eq!(c.tins.len(), 3, "diffserv3");
    assert_eq!(c.buffer_limit, 10240 * 1500);
    // Unshaped: COBALT's target and interval as given, flow quantum 1514.
    assert_eq!(
        (c.tins[0].cparams.target, c.tins[0].cparams.interval),
        (5 * MS, 100 * MS)
    );
    assert_eq!(c.tins[0].flow_quantum, 1514);
    // Shaped at 1 Mbit/s = 125 000 B/s: MTU time 12 ms → target 18 ms, interval 113 ms;
    // flow quantum max(min(125000 >> 12, 1514), 300) = 300; memory 4 MiB.
    let q = queue(serde_json::json!({"kind": "cake", "bandwidth": "1Mbit", "framing": "docsis"}));
    let c = cake(&q);
    assert_eq!(c.tins[0].cparams.mtu_time, 12 * MS);
    assert_eq!(
        (c.tins[0].cparams.target, c.tins[0].cparams.interval),
        (18 * MS, 113 * MS)
    );
    assert_eq!(c.tins[0].flow_quantum, 300);
    assert_eq!(c.buffer_limit, 4 << 20);
    assert_eq!((c.p.overhead.overhead, c.p.overhead.mpu), (18, 64));
    // rtt alone sets target to rtt/20 (tc).
    let c = cfg(serde_json::json!({"kind": "cake", "rtt_ms": 40.0})).unwrap();
    let q = Queue::new(
        c.build(BitsPerSec::from_mbps(10.0), 1500),
        Rng::stream(1, StreamKind::Test, 0),
    );
    assert_eq!(cake(&q).p.target, 2 * MS);
    for (v, field) in [
        (
            serde_json::json!({"kind": "cake", "bandwidth": "fast"}),
            "queue.bandwidth",
        ),
        (
            serde_json::json!({"kind": "cake", "rtt_ms": 0.0}),
            "queue.rtt_ms",
        ),
        (
            serde_json::json!({"kind": "cake", "overhead": 300}),
            "queue.overhead",
        ),
        (serde_json::json!({"kind": "cake", "mpu": 999}), "queue.mpu"),
        (
            serde_json::json!({"kind": "cake", "memlimit": 0}),
            "queue.memlimit",
        ),
        (serde_json::json!({"kind": "cake", "mtu": 10}), "queue.mtu"),
    ] {
        let e = cfg(v).unwrap_err();
        assert!(e.contains(field) && !e.contains('\n'), "{e}");
    }
    assert!(cfg(serde_json::json!({"kind": "cake", "diffserv": "diffserv5"})).is_err());
    assert!(cfg(serde_json::json!({"kind": "cake", "isolation": "quadruple"})).is_err());
    assert!(cfg(serde_json::json!({"kind": "cake", "ack_filter": true})).is_err());
    assert!(
        cfg(serde_json::json!({"kind": "cake", "ack_filter": "ack-filter-aggressive"})).is_ok()
    );
}

/// DRR++: flow A's 20 packets are queued; after three have left (A is bulk by then: its
/// 1513- or 1514-byte first quantum covered one 1500-byte packet and 13 or 14 bytes of the
/// next), flow B's one packet arrives and leaves next, ahead of A's 17. Deficits: a new flow
/// gets (1514·65535 + 16 random bits) >> 16 (Linux `cake_get_flow_quantum` dithers at
/// enqueue too): 1514 unless the bits are below 10, else 1513; then −1500 per packet.
#[test]
fn sparse_flow_leaves_before_bulk_backlog() {
    let mut q = queue(serde_json::json!({"kind": "cake", "isolation": "flows"}));
    let mut store = PacketStore::default();
    for i in 0..20 {
        let id = store.alloc(pkt(1, 0, 1500, i));
        q.enqueue(0, id, &mut store);
    }
    let slot_a = 1usize; // hash 1 → queue 1 (idle set: its own way)
    let first = cake(&q).tins[0].flows[slot_a].deficit;
    assert!(first == 1514 || first == 1513, "{first}");
    let mut order = Vec::new();
    let take = |q: &mut Queue, store: &mut PacketStore, order: &mut Vec<u64>| {
        let id = q.dequeue(0, store).unwrap();
        order.push(store.get(id).seq);
        store.free(id);
    };
    take(&mut q, &mut store, &mut order);
    assert_eq!(cake(&q).tins[0].flows[slot_a].deficit, first - 1500);
    take(&mut q, &mut store, &mut order);
    assert_eq!(cake(&q).tins[0].flows[slot_a].deficit, first - 3000);
    take(&mut q, &mut store, &mut order);
    // Refilled by 1513 or 1514 (dithered) before the third, then −1500.
    let d = cake(&q).tins[0].flows[slot_a].deficit;
    assert!(
        d == first - 3000 + 1513 - 1500 || d == first - 3000 + 1514 - 1500,
        "{d}"
    );
    assert_eq!(cake(&q).tins[0].bulk_flow_count, 1);
    let id = store.alloc(pkt(2, 0, 1500, 1000));
    q.enqueue(0, id, &mut store);
    assert_eq!(cake(&q).tins[0].sparse_flow_count, 1);
    for _ in 0..18 {
        take(&mut q, &mut store, &mut order);
    }
    assert_eq!(&order[..4], &[0, 1, 2, 1000]);
    assert_eq!(&order[4..], &(3..20).collect::<Vec<u64>>()[..]);
    assert!(q.dequeue(0, &mut store).is_none());
}

/// Host isolation: host 0 sends 1 flow, host 1 sends 4, 1200 packets each queued, 2000 departures of
/// 1500-byte packets. Per round a flow gets 1514·⌊65535/load⌋ >> 16 bytes: 1513 for host
/// 0's flow (load 1) and 378 for each of host 1's (load 4), i.e. 1513 against 1512: equal
/// host shares under dual-srchost (one destination) and triple-isolate (two destinations,
/// one per host); under `flows` every flow gets 1/5.
#[test]
fn host_isolation_shares() {
    let run = |mode: &str, dst_per_host: bool| -> f64 {
        let mut q = queue(serde_json::json!({"kind": "cake", "isolation": mode}));
        let c = cake_mut(&mut q);
        // Route 0: host 0 → host 10; route 1: host 1 → host 10 (or 11).
        c.learn_route(0, 0, 10);
        c.learn_route(1, 1, if dst_per_host { 11 } else { 10 });
        let mut store = PacketStore::default();
        let flows: [(u32, u32); 5] = [
            (0x1111_0001, 0),
            (0x2222_0002, 1),
            (0x3333_0003, 1),
            (0x4444_0004, 1),
            (0x5555_0005, 1),
        ];
        for i in 0..1200u64 {
            for &(h, r) in &flows {
                let id = store.alloc(pkt(h, r, 1500, i));
                q.enqueue(0, id, &mut store);
            }
        }
        let mut host0 = 0;
        for _ in 0..2000 {
            let id = q.dequeue(0, &mut store).unwrap();
            if store.get(id).route == 0 {
                host0 += 1;
            }
            store.free(id);
        }
        host0 as f64 / 2000.0
    };
    let triple = run("triple-isolate", true);
    let dual = run("dual-srchost", false);
    let flows = run("flows", false);
    eprintln!("host 0 share: triple {triple:.4}, dual-srchost {dual:.4}, flows {flows:.4}");
    assert!((triple - 0.5).abs() < 0.01, "triple-isolate {triple}");
    assert!((dual - 0.5).abs() < 0.01, "dual-srchost {dual}");
    assert!((flows - 0.2).abs() < 0.01, "flows {flows}");
    // triple-isolate with one shared destination: the destination's 5 bulk flows set every
    // flow's load to 5, so it is flow-fair.
    let shared = run("triple-isolate", false);
    assert!(
        (shared - 0.2).abs() < 0.01,
        "triple-isolate, one destination {shared}"
    );
}

/// The shaper through `Queue`: 10 Mbit/s with `ethernet` framing (38 B, mpu 84): three
/// 1500-byte packets queued at t = 1000 ns leave at 1000, 1 231 400 and 2 461 800 ns (1538 B ·
/// 800 ns/B); in between the queue answers "not before" that time. A 40-byte ACK then costs
/// max(78, 84) B = 67 200 ns.
#[test]
fn shaper_releases_at_size_over_rate() {
    let mut q =
        queue(serde_json::json!({"kind": "cake", "bandwidth": "10Mbit", "framing": "ethernet"}));
    let mut store = PacketStore::default();
    for i in 0..3 {
        let id = store.alloc(pkt(7, 0, 1500, i));
        q.enqueue(1000, id, &mut store);
    }
    let mut now = 1000;
    let mut sent = Vec::new();
    while sent.len() < 3 {
        match q.dequeue(now, &mut store) {
            Some(id) => {
                sent.push(now);
                store.free(id);
            },
            None => now = q.take_wake().expect("the shaper names a time"),
        }
    }
    assert_eq!(sent, [1000, 1_231_400, 2_461_800]);
    let id = store.alloc(pkt(7, 0, 40, 9));
    q.enqueue(now, id, &mut store);
    assert!(q.dequeue(now, &mut store).is_none());
    assert_eq!(q.take_wake(), Some(3_692_200));
    let id = q.dequeue(3_692_200, &mut store).unwrap();
    store.free(id);
    assert_eq!(cake(&q).shaper.time_next_packet, 3_692_200 + 67_200);
}

/// The ACK filter through `Queue`: pure ACKs 1000, 2000, …, 5000 of one connection queued
/// in turn. `ack-filter` drops the older of two eligible ACKs from the third on (A1, A2, A3:
/// 3 drops, A4 and A5 stay); `ack-filter-aggressive` drops the single eligible ACK directly
/// before each new one (4 drops, A5 stays). Counted as `Forced` drops and as tc's
/// `ack_drops`, not in the tin's drops.
#[test]
fn ack_filter_drops_redundant_acks() {
    for (mode, left) in [
        ("ack-filter", vec![4000u64, 5000]),
        ("ack-filter-aggressive", vec![5000]),
    ] {
        let mut q = queue(serde_json::json!({"kind": "cake", "ack_filter": mode}));
        let mut store = PacketStore::default();
        for a in 1..=5u64 {
            let p = Packet {
                size: 40,
                flow_hash: 9,
                conn: 3,
                ack: a * 1000,
                flags: aqmlab::packet::flags::ACK,
                ..Default::default()
            };
            let id = store.alloc(p);
            q.enqueue(0, id, &mut store);
        }
        let drops = 5 - left.len() as u64;
        assert_eq!(q.stats.drops_forced, drops, "{mode}");
        assert_eq!(cake(&q).tins[0].stats.ack_drops, drops);
        assert_eq!(cake(&q).tins[0].stats.drops, 0);
        let mut seen = Vec::new();
        while let Some(id) = q.dequeue(0, &mut store) {
            seen.push(store.get(id).ack);
            store.free(id);
        }
        assert_eq!(seen, left, "{mode}");
        assert_eq!(cake(&q).buffer_used, 0);
    }
}

/// Classic Linux CUBIC (no ECN) through a 10 Mb/s CAKE bottleneck with tc's defaults
/// (unshaped: CAKE serves at the link rate), 8 flows, RTT 20–80 ms: COBALT holds the queueing
/// delay near its 5 ms target with the link busy; and shaped to 9 Mbit/s on the same link,
/// the shaper is the bottleneck (utilization ≈ 0.9).
#[test]
fn greedy_tcp_low_delay_high_utilization() {
    let run_with = |queue: serde_json::Value| {
        let mut sc = greedy_10mbps(8, 40.0, 5);
        sc.warmup_s = 10.0;
        sc.tcp = TcpConfig::linux_cubic();
        sc.tcp.rwnd = 8 << 20;
        sc.topology.access_mbps = 1000.0;
        sc.rtt = RttConfig::Uniform {
            min_ms: 20.0,
            max_ms: 80.0,
        };
        sc.queue = serde_json::from_value(queue).unwrap();
        let (sim, tables) = run(sc);
        assert_packets_conserved(&sim, &tables);
        let s = sim.summary().reverse.clone();
        let json: serde_json::Value = serde_json::from_str(&sim.summary_json()).unwrap();
        eprintln!(
            "median delay {:.2} ms, mean {:.2} ms, p90 {:.2} ms, utilization {:.3}, early drops {}, overflow {}, marks {}\n{}",
            s.delay_p50_ms, s.delay_mean_ms, s.delay_p90_ms, s.utilization,
            s.drops_early, s.drops_overflow, s.marks, json["qdisc_reverse"]
        );
        let tins = json["qdisc_reverse"]["tins"].as_array().unwrap().clone();
        (s, tins)
    };
    let (s, tins) = run_with(serde_json::json!({"kind": "cake"}));
    assert!(
        s.delay_mean_ms < 10.0,
        "mean queueing delay {} ms",
        s.delay_mean_ms
    );
    assert!(s.utilization > 0.95, "utilization {}", s.utilization);
    assert!(s.drops_early > 0 && s.drops_overflow == 0 && s.marks == 0);
    // tc's order for diffserv3: Bulk, Best Effort, Voice; everything is Best Effort.
    assert_eq!(tins.len(), 3);
    assert_eq!(tins[0]["pkts"], 0);
    assert!(tins[1]["pkts"].as_u64().unwrap() > 0 && tins[1]["drops"].as_u64().unwrap() > 0);
    assert!(tins[1]["bk_flows"].as_u64().is_some() && tins[1]["av_delay"].as_u64().is_some());
    let (shaped, _) = run_with(serde_json::json!({"kind": "cake", "bandwidth": "9Mbit"}));
    assert!(
        shaped.delay_mean_ms < 10.0,
        "shaped: {} ms",
        shaped.delay_mean_ms
    );
    assert!(
        (0.87..=0.905).contains(&shaped.utilization),
        "shaped utilization {}",
        shaped.utilization
    );
}

/// Every traffic model (greedy bulk, UDP CBR, FTP, Mah's Web users, PackMime-HTTP,
/// browsers) through a shaped CAKE bottleneck in both directions: the run completes and the
/// bottleneck queues account for every packet.
#[test]
fn every_traffic_model_completes_and_conserves_packets() {
    let sim = every_traffic_model(serde_json::json!({
        "kind": "cake", "bandwidth": "8Mbit", "framing": "ethernet", "diffserv": "diffserv4",
        "ack_filter": "ack-filter"
    }));
    for dir in [sim.topology().forward(), sim.topology().reverse()] {
        let q = &sim.link(dir).queue;
        let Aqm::Cake(c) = &q.aqm else { unreachable!() };
        let tin_pkts: u64 = c.tins.iter().map(|t| t.stats.packets).sum();
        assert_eq!(tin_pkts, q.stats.arrivals);
    }
}
