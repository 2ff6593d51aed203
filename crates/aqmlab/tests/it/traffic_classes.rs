//! Traffic sources with their own TCP configuration and RTT law (`Scenario::traffic_tcp`,
//! `Scenario::traffic_rtt`): a mixed population in one run, each connection using its
//! source's settings, and an override equal to the scenario's own changing nothing.

use aqmlab::config::{RttConfig, TrafficConfig};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;

use crate::common::*;

fn two_sources() -> aqmlab::config::Scenario {
    let mut sc = greedy_10mbps(2, 20.0, 3);
    sc.warmup_s = 0.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 10.0 };
    sc.traffic = vec![bulk_at(2, None, 0.0, 1.0), bulk_at(2, None, 0.0, 1.0)];
    sc
}

/// Source 1 runs Linux DCTCP (ECN) over a 160 ms delay box while source 0 keeps the
/// scenario's FreeBSD Reno (no ECN) over 10 ms: each connection's ECN negotiation and base
/// RTT are its source's. Base RTTs differ by exactly 150 ms (same hosts' paths).
#[test]
fn each_source_uses_its_own_tcp_and_rtt() {
    let mut sc = two_sources();
    sc.traffic_tcp = vec![None, Some(TcpConfig::linux_dctcp())];
    sc.traffic_rtt = vec![None, Some(RttConfig::Constant { rtt_ms: 160.0 })];
    let (_, tables) = run(sc);
    let conns = table(&tables, "connections");
    let (source, ecn, rtt) = (
        u64s(conns, "source"),
        bools(conns, "ecn"),
        f64s(conns, "base_rtt_ms"),
    );
    assert_eq!(source.len(), 4);
    let path_rtt = |s: u64| {
        let v: Vec<f64> = (0..4).filter(|&i| source[i] == s).map(|i| rtt[i]).collect();
        assert!(v.windows(2).all(|w| w[0] == w[1]), "source {s}: {v:?}");
        v[0]
    };
    assert!((path_rtt(1) - path_rtt(0) - 150.0).abs() < 1e-9);
    for i in 0..4 {
        assert_eq!(
            ecn[i],
            source[i] == 1,
            "connection {i} of source {}",
            source[i]
        );
    }
}

/// An override equal to the scenario's own setting gives the identical run, table for table
/// (beside the `source_delay` table that a scenario with per-source settings adds).
#[test]
fn an_override_equal_to_the_default_changes_nothing() {
    let sc = two_sources();
    let mut same = sc.clone();
    same.traffic_tcp = vec![Some(sc.tcp.clone()), None];
    same.traffic_rtt = vec![None, Some(sc.rtt.clone())];
    let mut tables = run(same).1;
    tables.retain(|t| t.name != "source_delay" && t.name != "source_intervals");
    assert_eq!(digest(&run(sc).1), digest(&tables));
}

#[test]
fn overrides_are_validated_where_they_stand() {
    let err = |f: &dyn Fn(&mut aqmlab::config::Scenario)| {
        let mut sc = two_sources();
        f(&mut sc);
        Simulation::new(sc).err().expect("refused").to_string()
    };
    let e = err(&|sc| sc.traffic_tcp = vec![None, None, None]);
    assert!(e.starts_with("traffic_tcp = 3 entries"), "{e}");
    let e = err(&|sc| {
        let mut t = TcpConfig::linux_cubic();
        t.mss = 0;
        sc.traffic_tcp = vec![None, Some(t)];
    });
    assert!(e.starts_with("traffic[1].tcp.mss"), "{e}");
    let e = err(&|sc| {
        sc.traffic_rtt = vec![Some(RttConfig::Uniform {
            min_ms: 20.0,
            max_ms: 10.0,
        })]
    });
    assert!(e.starts_with("traffic[0].rtt.max_ms"), "{e}");
    let e = err(&|sc| {
        sc.traffic[1] = TrafficConfig::UdpCbr {
            flows: 1,
            rate_mbps: Some(1.0),
            share: None,
            packet_bytes: 1000,
            direction: Default::default(),
            client_side: Default::default(),
            start_s: 0.0,
            start_jitter_s: 0.0,
            stop_s: None,
        };
        sc.traffic_tcp = vec![None, Some(TcpConfig::linux_cubic())];
    });
    assert!(e.starts_with("traffic[1].tcp"), "{e}");
}

/// With sources that differ, `source_delay` splits the bottleneck's queueing-delay histogram
/// by source: per direction, its counts over the sources equal `queue_delay`'s, bin by bin
/// (every packet here is TCP of an open connection; no warm-up). Without, no table.
#[test]
fn source_delay_splits_the_queue_delay_histogram() {
    let mut sc = two_sources();
    sc.traffic_rtt = vec![None, Some(RttConfig::Constant { rtt_ms: 80.0 })];
    let (_, tables) = run(sc);
    let q = table(&tables, "queue_delay");
    let s = table(&tables, "source_delay");
    let key = |t: &aqmlab::measure::Table, i: usize| {
        let dir = match &t.columns.iter().find(|c| c.0 == "direction").unwrap().1 {
            aqmlab::measure::Column::Str(v) => v[i],
            _ => unreachable!(),
        };
        (dir, (f64s(t, "delay_ms")[i] * 1e4).round() as i64)
    };
    let mut by_bin = std::collections::BTreeMap::new();
    for (i, c) in u64s(s, "count").into_iter().enumerate() {
        *by_bin.entry(key(s, i)).or_insert(0) += c;
    }
    let mut whole = std::collections::BTreeMap::new();
    for (i, c) in u64s(q, "count").into_iter().enumerate() {
        whole.insert(key(q, i), c);
    }
    assert_eq!(by_bin, whole);
    let sources: std::collections::BTreeSet<u64> = u64s(s, "source").into_iter().collect();
    assert_eq!(sources.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    let (_, plain) = run(two_sources());
    assert!(plain.iter().all(|t| t.name != "source_delay"));
    assert!(plain.iter().all(|t| t.name != "source_intervals"));
}

/// `source_intervals` (each source's goodput and delay over time) adds up to the whole-run
/// figures: per source, its goodput rows × their 1-s spans give the bytes its connections
/// delivered after the warm-up (the `connections` table), and its packets per direction are
/// the `source_delay` histogram's counts (the same sojourns, binned).
#[test]
fn source_intervals_add_up_to_each_sources_totals() {
    let mut sc = two_sources();
    sc.warmup_s = 5.0;
    sc.traffic_rtt = vec![None, Some(RttConfig::Constant { rtt_ms: 80.0 })];
    let (_, tables) = run(sc);
    let iv = table(&tables, "source_intervals");
    let (t, src, mbps, pkts) = (
        f64s(iv, "t_s"),
        u64s(iv, "source"),
        f64s(iv, "goodput_mbps"),
        u64s(iv, "packets"),
    );
    assert!(t.iter().all(|&x| x > 5.0), "rows after the warm-up only");
    let conns = table(&tables, "connections");
    let (c_src, c_bytes) = (
        u64s(conns, "source"),
        u64s(conns, "bytes_delivered_measured"),
    );
    let sd = table(&tables, "source_delay");
    let (d_src, d_count) = (u64s(sd, "source"), u64s(sd, "count"));
    for s in 0..2u64 {
        let bytes: f64 = (0..iv.rows())
            .filter(|&i| src[i] == s)
            .map(|i| mbps[i] * 1e6 / 8.0)
            .sum();
        let want: u64 = (0..conns.rows())
            .filter(|&i| c_src[i] == s)
            .map(|i| c_bytes[i])
            .sum();
        assert!(want > 0);
        assert!(
            (bytes - want as f64).abs() < 1e-3,
            "source {s}: {bytes} vs {want}"
        );
        let packets: u64 = (0..iv.rows())
            .filter(|&i| src[i] == s)
            .map(|i| pkts[i])
            .sum();
        let counted: u64 = (0..sd.rows())
            .filter(|&i| d_src[i] == s)
            .map(|i| d_count[i])
            .sum();
        assert_eq!(packets, counted, "source {s}");
    }
}
