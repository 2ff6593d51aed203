//! ECN end to end (RFC 3168): negotiation, ECT on new data only, CE marks echoed until CWR,
//! the sender halving at most once per window and never retransmitting for a mark.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::config::RttConfig;
use aqmlab::packet::{flags, Ecn};
use aqmlab::sim::Simulation;

use crate::common::*;

/// A packet-mode RED (min_th 5, max_th 60, max_p 0.1, w_q 0.002, no gentle ramp) with the
/// RFC 3168 policy: mark ECT packets instead of early drops, drop above max_th.
fn red(ecn: &str) -> AqmConfig {
    serde_json::from_value(serde_json::json!({
        "kind": "red", "limit": 1000, "min_th": 5.0, "max_th": 60.0, "max_p": 0.1,
        "w_q": 0.002, "gentle": false, "wait": false, "queue_in_bytes": false,
        "byte_mode": false, "ecn": ecn
    }))
    .unwrap()
}

/// One greedy flow (RTT 100 ms) through a 10 Mb/s RED bottleneck.
fn one_flow(tcp_ecn: bool) -> (Simulation, Vec<aqmlab::measure::Table>) {
    let mut sc = base(60.0);
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 100.0 };
    sc.tcp.ecn = tcp_ecn;
    // Leave slow start early so that the average queue never reaches max_th.
    sc.tcp.initial_ssthresh = 40 * 1460;
    sc.queue = red("rfc3168");
    sc.traffic = vec![bulk(1, None)];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let end = sim.end_time();
    sim.run_until(end);
    let t = sim.finish();
    (sim, t)
}

#[test]
fn ecn_flow_is_marked_not_dropped_and_halves_once_per_window() {
    let (sim, tables) = one_flow(true);
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "ecn"), vec![true], "ECN negotiated");
    let q = &sim.link(sim.topology().reverse()).queue.stats; // data: server (right) → client
    assert!(q.marks >= 10, "{} marks", q.marks);
    assert_eq!(q.drops_early, 0, "early decisions on ECT packets are marks");
    assert_eq!(
        q.drops_forced + q.drops_overflow,
        0,
        "the average stayed below max_th"
    );
    assert_eq!(
        u64s(c, "data_retransmits"),
        vec![0],
        "no retransmission for a mark"
    );
    assert_eq!(u64s(c, "timeouts"), vec![0]);
    let reductions = u64s(c, "ecn_reductions")[0];
    assert_eq!(
        u64s(c, "ce_received")[0],
        q.marks,
        "every mark reaches the receiver"
    );
    assert!(
        reductions > 5 && reductions < q.marks,
        "{reductions} reductions for {} marks",
        q.marks
    );

    let tr = sim.trace();
    // Each reduction puts CWR on the next new data segment; reductions are at least one RTT
    // (100 ms base) apart: once per window of data.
    let cwr: Vec<u64> = tr
        .iter()
        .filter(|e| e.side == 1 && e.flags & flags::CWR != 0)
        .map(|e| e.t)
        .collect();
    // A reduction in the last round trip has its CWR after the end of the run.
    assert!(
        cwr.len() as u64 == reductions || cwr.len() as u64 + 1 == reductions,
        "{} CWR for {reductions} reductions",
        cwr.len()
    );
    for w in cwr.windows(2) {
        assert!(
            w[1] - w[0] >= 100_000_000,
            "reductions {} ns apart",
            w[1] - w[0]
        );
    }
    // ECT only on new data; SYNs and pure ACKs are Not-ECT (RFC 3168 §6.1.4–6.1.5).
    for e in tr {
        let new_data = e.len > 0 && !e.retransmit;
        assert_eq!(e.ecn == Ecn::Ect0, new_data, "{e:?}");
    }
    // The client echoes ECE; the SYN is an ECN-setup SYN and the SYN-ACK confirms it.
    assert!(tr
        .iter()
        .any(|e| e.side == 0 && e.flags & flags::ECE != 0 && e.flags & flags::SYN == 0));
    let syn = tr
        .iter()
        .find(|e| e.side == 0 && e.flags & flags::SYN != 0)
        .unwrap();
    assert_eq!(
        syn.flags & (flags::ECE | flags::CWR),
        flags::ECE | flags::CWR
    );
    let syn_ack = tr
        .iter()
        .find(|e| e.side == 1 && e.flags & flags::SYN != 0)
        .unwrap();
    assert_eq!(syn_ack.flags & (flags::ECE | flags::CWR), flags::ECE);
}

#[test]
fn non_ecn_flow_through_the_same_queue_is_dropped() {
    let (sim, tables) = one_flow(false);
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "ecn"), vec![false]);
    let q = &sim.link(sim.topology().reverse()).queue.stats;
    assert_eq!(q.marks, 0);
    assert!(q.drops_early > 5, "{} early drops", q.drops_early);
    assert!(u64s(c, "data_retransmits")[0] > 0);
    assert!(sim.trace().iter().all(|e| e.ecn == Ecn::NotEct));
}

/// An ECN-capable client talking to a server with ECN off falls back to Not-ECT.
#[test]
fn ecn_needs_both_ends() {
    let mut sc = base(5.0);
    sc.tcp.ecn = true;
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let end = sim.end_time();
    sim.run_until(end);
    let tables = sim.finish();
    assert_eq!(bools(table(&tables, "connections"), "ecn"), vec![true]);
    // Both ends share one configuration in a scenario, so negotiate explicitly here.
    let mut ecn = aqmlab::tcp::ecn::EcnState::default();
    let syn = aqmlab::packet::Packet {
        flags: flags::SYN | flags::ECE | flags::CWR,
        ..Default::default()
    };
    ecn.on_syn(false, &syn);
    assert!(!ecn.ok);
    ecn.on_syn(
        true,
        &aqmlab::packet::Packet {
            flags: flags::SYN,
            ..Default::default()
        },
    );
    assert!(!ecn.ok);
    ecn.on_syn(true, &syn);
    assert!(ecn.ok);
}

/// REM in mark mode, the two named policies for packets that cannot carry a mark. Greedy ECN
/// TCP and a non-ECT UDP stream (30 % of the link) share REM's queue; TCP keeps it congested,
/// so REM's price is well above zero. `"ns2"` (ns-2 `markpkts_`): ECT data is marked at
/// dequeue and the UDP packets, like any non-ECT packet, are never early-dropped: the queue
/// drops only on overflow. `"altq"`: decided at enqueue, ECT marked and non-ECT dropped, so
/// the UDP stream loses packets early while TCP's data is still only marked.
#[test]
fn rem_mark_policies_differ_on_non_ect_packets() {
    let run = |policy: &str| {
        let mut sc = base(30.0);
        sc.topology.bottleneck_mbps = 10.0;
        sc.topology.access_mbps = 100.0;
        sc.rtt = RttConfig::Constant { rtt_ms: 100.0 };
        sc.tcp.ecn = true;
        sc.queue = serde_json::from_value(serde_json::json!({
            "kind": "rem", "limit": 300, "mark": true, "mark_policy": policy
        }))
        .unwrap();
        sc.traffic = vec![
            bulk(4, None),
            serde_json::from_value(serde_json::json!({
                "kind": "udp_cbr", "flows": 1, "share": 0.3
            }))
            .unwrap(),
        ];
        let (sim, _) = run_traced(Simulation::new(sc).unwrap());
        sim.link(sim.topology().reverse()).queue.stats.clone()
    };
    let ns2 = run("ns2");
    assert!(ns2.marks > 50, "{} marks", ns2.marks);
    assert_eq!(
        ns2.drops_early, 0,
        "ns2: non-ECT packets are never early-dropped"
    );
    let altq = run("altq");
    assert!(altq.marks > 50, "{} marks", altq.marks);
    assert!(
        altq.drops_early > 10,
        "altq: {} early drops of non-ECT packets",
        altq.drops_early
    );
}
