//! DualPI2 (RFC 9332; Linux `sch_dualpi2.c`): the configuration, the two queues behind one
//! `Queue` (classification, scheduler share, L before C), and classic TCP through a 10 Mb/s
//! DualPI2 bottleneck held near the 15 ms target.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::{Aqm, DropCause};
use aqmlab::net::queue::{Offer, Queue};
use aqmlab::packet::{Ecn, Packet, PacketStore};
use aqmlab::rng::{Rng, StreamKind};
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::{BitsPerSec, MS};

use crate::common::*;

use crate::common::queue_cfg as cfg;

fn dualpi2(c: &AqmConfig) -> Aqm {
    c.build(BitsPerSec::from_mbps(10.0), 1500)
}

#[test]
fn config_defaults_are_linux_and_errors_name_the_field() {
    let c = cfg(serde_json::json!({"kind": "dualpi2"})).unwrap();
    let Aqm::DualPi2(d) = dualpi2(&c) else {
        panic!("not dualpi2")
    };
    assert_eq!(d.p.limit, 10_000);
    assert_eq!(
        (d.p.target, d.p.tupdate, d.p.step_thresh),
        (15 * MS, 16 * MS, MS)
    );
    assert_eq!((d.p.alpha, d.p.beta, d.p.coupling_factor), (0.16, 3.2, 2.0));
    assert_eq!(d.p.c_protection, 10);
    assert!(d.p.drop_overload && !d.p.drop_early);
    assert_eq!(d.p.mtu, 1500);
    assert_eq!(d.s.credit, 1500 * (10 - 90));
    for (v, field) in [
        (
            serde_json::json!({"kind": "dualpi2", "coupling_factor": 0}),
            "queue.coupling_factor",
        ),
        (
            serde_json::json!({"kind": "dualpi2", "c_protection": 101}),
            "queue.c_protection",
        ),
        (
            serde_json::json!({"kind": "dualpi2", "tupdate_ms": 0.0}),
            "queue.tupdate_ms",
        ),
        (
            serde_json::json!({"kind": "dualpi2", "alpha": -1.0}),
            "queue.alpha",
        ),
        (
            serde_json::json!({"kind": "dualpi2", "limit": 0}),
            "queue.limit",
        ),
    ] {
        let e = cfg(v).unwrap_err();
        assert!(e.contains(field) && !e.contains('\n'), "{e}");
    }
    assert!(cfg(serde_json::json!({"kind": "dualpi2", "split_gso": true})).is_err());
}

fn packet(ecn: Ecn, seq: u64) -> Packet {
    Packet {
        size: 1500,
        ecn,
        seq,
        ..Default::default()
    }
}

/// Through `Queue`: an ECT(1) packet behind a C backlog leaves first; with both queues
/// saturated C gets 10 % of the departures; each queue is FIFO; CE goes to L; a full buffer
/// tail-drops.
#[test]
fn two_queues_behind_one_queue() {
    let c = cfg(serde_json::json!({"kind": "dualpi2", "limit": 3000})).unwrap();
    let mut q = Queue::new(dualpi2(&c), Rng::stream(1, StreamKind::Test, 0));
    let mut store = PacketStore::default();
    // p′ is 0 (no update ran) and sojourns are 0: no marks or drops, only scheduling.
    for i in 0..1000 {
        let id = store.alloc(packet(Ecn::Ect0, i));
        assert_eq!(q.enqueue(0, id, &mut store), Offer::Queued);
    }
    let id = store.alloc(packet(Ecn::Ect1, 5000));
    q.enqueue(0, id, &mut store);
    let first = q.dequeue(0, &mut store).unwrap();
    assert_eq!(store.get(first).seq, 5000, "L is served first");
    store.free(first);
    for i in 0..1000 {
        let e = if i % 2 == 0 { Ecn::Ect1 } else { Ecn::Ce };
        let id = store.alloc(packet(e, 10_000 + i));
        q.enqueue(0, id, &mut store);
    }
    let (mut c_seen, mut l_seen) = (Vec::new(), Vec::new());
    for _ in 0..1000 {
        let id = q.dequeue(0, &mut store).unwrap();
        let p = *store.get(id);
        if p.seq >= 10_000 {
            l_seen.push(p.seq);
        } else {
            c_seen.push(p.seq);
        }
        store.free(id);
    }
    // WRR 10/90 over equal packets: 100 of 1000 from C.
    assert!((99..=101).contains(&c_seen.len()), "C got {}", c_seen.len());
    assert!(c_seen.windows(2).all(|w| w[0] < w[1]) && c_seen[0] == 0);
    assert!(l_seen.windows(2).all(|w| w[0] < w[1]) && l_seen[0] == 10_000);
    let Aqm::DualPi2(d) = &q.aqm else {
        unreachable!()
    };
    assert_eq!((d.s.pkts_in_c, d.s.pkts_in_l), (1000, 1001));
    assert_eq!(d.s.maxq, 1999);
    // Fill to the limit (3000): the next arrival overflows.
    while q.len().packets < 3000 {
        let id = store.alloc(packet(Ecn::NotEct, 0));
        q.enqueue(0, id, &mut store);
    }
    let id = store.alloc(packet(Ecn::Ect1, 0));
    assert_eq!(
        q.enqueue(0, id, &mut store),
        Offer::Dropped(DropCause::Overflow)
    );
}

/// Classic (ECN-less) Linux CUBIC, then Reno, flows, all in the C queue, through a 10 Mb/s DualPI2
/// bottleneck with Linux's defaults (10 000-packet buffer): PI2 holds the queueing delay near
/// the 15 ms target where drop-tail with the same buffer would fill it, by drops only (no ECN),
/// with the link kept busy. The L queue stays empty.
#[test]
fn classic_cubic_and_reno_are_held_near_the_target() {
    let run_with = |tcp: &TcpConfig, queue: serde_json::Value| {
        let (sim, _) = run(greedy_linux_10mbps(tcp, 8, queue));
        let s = sim.summary().reverse.clone();
        check_qdisc_stats_in_summary(&sim);
        let state = match sim.bottleneck_aqm(1) {
            Aqm::DualPi2(d) => Some(d.s.clone()),
            _ => None,
        };
        eprintln!(
            "median delay {:.2} ms, mean {:.2} ms, p90 {:.2} ms, utilization {:.3}, drops {}, marks {}",
            s.delay_p50_ms, s.delay_mean_ms, s.delay_p90_ms, s.utilization,
            s.drops_early + s.drops_overflow, s.marks
        );
        (s, state)
    };
    for (name, tcp) in [
        ("cubic", TcpConfig::linux_cubic()),
        ("reno", TcpConfig::linux_reno()),
    ] {
        let (s, st) = run_with(&tcp, serde_json::json!({"kind": "dualpi2"}));
        let st = st.unwrap();
        eprintln!("{name}: {st:?}");
        assert!(
            (10.0..=22.0).contains(&s.delay_mean_ms),
            "{name}: mean queueing delay {} ms",
            s.delay_mean_ms
        );
        assert!(
            s.utilization > 0.95,
            "{name}: utilization {}",
            s.utilization
        );
        assert_eq!(s.marks, 0);
        assert!(s.drops_early > 0 && s.drops_overflow == 0, "{name}");
        assert_eq!(st.pkts_in_l, 0);
        assert!(st.pkts_in_c > 0 && st.prob > 0.0 && st.prob < 0.5, "{name}");
        let (fifo, _) = run_with(
            &tcp,
            serde_json::json!({"kind": "droptail", "limit": 10000}),
        );
        assert!(
            fifo.delay_mean_ms > 4.0 * s.delay_mean_ms,
            "{name}: drop-tail {} ms",
            fifo.delay_mean_ms
        );
    }
}

/// summary.json carries tc's dualpi2 statistics per direction (`qdisc_forward`,
/// `qdisc_reverse`), equal to the discipline's state; a discipline without them has tc's
/// header only.
fn check_qdisc_stats_in_summary(sim: &aqmlab::sim::Simulation) {
    let json: serde_json::Value = serde_json::from_str(&sim.summary_json()).unwrap();
    for (dir, key) in [(0, "qdisc_forward"), (1, "qdisc_reverse")] {
        match sim.bottleneck_aqm(dir) {
            Aqm::DualPi2(d) => {
                let q = &json[key];
                // serde_json's parser (without `float_roundtrip`) may read the shortest
                // round-trip decimal one unit in the last place off; the writer is exact.
                let prob = q["prob"].as_f64().unwrap();
                assert!(
                    (prob - d.s.prob).abs() <= d.s.prob.abs() * 4.0 * f64::EPSILON,
                    "{key}"
                );
                assert_eq!(q["pkts_in_c"].as_u64(), Some(d.s.pkts_in_c), "{key}");
                assert_eq!(q["step_marks"].as_u64(), Some(d.s.step_marks), "{key}");
                assert_eq!(
                    q["delay_c"].as_f64(),
                    Some(d.s.delay_c as f64 / 1e3),
                    "{key}"
                );
                for field in ["delay_l", "pkts_in_l", "maxq", "ecn_mark", "credit"] {
                    assert!(q.get(field).is_some(), "{key} lacks {field}");
                }
            },
            _ => assert!(
                json[key].get("sent_packets").is_some() && json[key].get("prob").is_none(),
                "{key} of a discipline without dualpi2's fields: {}",
                json[key]
            ),
        }
    }
}
