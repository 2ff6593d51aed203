//! DASH players (`kind = "dash"`): the throughput rule's steady bitrate on a bottleneck of
//! known rate, conservation of the segments' bytes, the session table and summary.

use crate::common::{base, bools, f64s, run, table, u64s};
use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{RttConfig, Scenario, TrafficConfig};
use aqmlab::tcp::config::TcpConfig;

/// A `dash` entry from its TOML-like keys (JSON here), as a scenario would give it.
fn dash(v: serde_json::Value) -> TrafficConfig {
    let mut v = v;
    v["kind"] = "dash".into();
    serde_json::from_value(v).expect("a dash entry")
}

/// One host per side, Linux CUBIC, `mbps` bottleneck with a 100-packet FIFO, 100 ms RTT.
fn link(mbps: f64, duration_s: f64) -> Scenario {
    let mut sc = base(duration_s);
    sc.tcp = TcpConfig::linux_cubic();
    sc.topology.bottleneck_mbps = mbps;
    sc.topology.access_mbps = 1000.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 100.0 };
    sc.queue = AqmConfig::Droptail {
        limit: 100,
        unit: QueueUnit::Packets,
    };
    sc
}

/// The last `n` segments' rungs of the one session of a run.
fn last_rungs(tables: &[aqmlab::measure::Table], n: usize) -> Vec<u64> {
    let q = u64s(table(tables, "dash_segments"), "quality");
    q[q.len() - n..].to_vec()
}

/// The throughput rule on a bottleneck of known rate, 60 s, the HLS ladder (145, 365, 730,
/// 1100, 2000, 3000, 4500, 6000, 7800 kb/s). Goodput is at most C · 1448/1500 (Linux's MSS
/// with timestamps in 1500-byte packets); the rule takes 0.9 of the measured rate, scaled by
/// 1 − L/4 with a latency L of at least the 100 ms RTT: at most 0.9 · 0.965 · 0.975 = 0.847 C.
/// At 4 Mb/s that is ≤ 3.39 Mb/s, so 4500 is out of reach, and 3000 needs samples of
/// 3000 / (0.9 · 0.975) = 3.42 Mb/s (86 % of the link) at L = 100 ms: the steady rung is 3000,
/// the highest below the capacity. At 8 Mb/s the bound is 6.78 Mb/s: 7800 is out of reach
/// although below the capacity (the safety factor), and 6000 needs 6.84 Mb/s (86 %): the
/// steady rung is 6000. A single player alone on the link measures nearly the whole link (the
/// TCP model keeps its window across the player's idle periods).
#[test]
fn throughput_rule_settles_on_the_rung_the_link_sustains() {
    for (mbps, rung_kbps) in [(4.0, 3000.0), (8.0, 6000.0)] {
        let mut sc = link(mbps, 60.0);
        sc.traffic = vec![dash(serde_json::json!({
            "sessions": 1, "abr": "throughput", "segment_rows": true
        }))];
        let (_, tables) = run(sc);
        let ladder = aqmlab::config::dash::HLS_LADDER_KBPS;
        let want = ladder.iter().position(|&r| r == rung_kbps).unwrap() as u64;
        assert_eq!(last_rungs(&tables, 6), vec![want; 6], "{mbps} Mb/s");
        let ses = table(&tables, "dash_sessions");
        assert_eq!(u64s(ses, "stalls"), vec![0]);
        // The first segment at the rung for 1000 kb/s (730), and playback from its arrival.
        assert_eq!(u64s(table(&tables, "dash_segments"), "quality")[0], 2);
        let first_end = f64s(table(&tables, "dash_segments"), "end_s")[0];
        assert_eq!(f64s(ses, "startup_s"), vec![first_end]);
    }
}

/// A finite video (40 s: 10 segments) by two players on a 4 Mb/s link: every session ends
/// with every byte it asked for delivered, the segments' bytes add up to the request total
/// and each is bitrate × 4 s / 8.
#[test]
fn bytes_requested_are_delivered_at_session_end() {
    let mut sc = link(4.0, 120.0);
    sc.topology.left_hosts = 2;
    sc.topology.right_hosts = 2;
    sc.traffic = vec![dash(serde_json::json!({
        "sessions": 2, "duration_s": 40.0, "start_jitter_s": 1.0, "segment_rows": true
    }))];
    let (sim, tables) = run(sc);
    let ses = table(&tables, "dash_sessions");
    assert_eq!(bools(ses, "finished"), vec![true, true]);
    assert_eq!(u64s(ses, "segments"), vec![10, 10]);
    assert_eq!(u64s(ses, "bytes_requested"), u64s(ses, "bytes_delivered"));
    let seg = table(&tables, "dash_segments");
    let (bytes, kbps) = (u64s(seg, "bytes"), f64s(seg, "bitrate_kbps"));
    for (b, k) in bytes.iter().zip(&kbps) {
        assert_eq!(*b, (k * 1000.0 * 4.0 / 8.0) as u64);
    }
    assert_eq!(
        bytes.iter().sum::<u64>(),
        u64s(ses, "bytes_requested").iter().sum::<u64>()
    );
    // Both connections closed after their last segment: completed, none unfinished.
    let s = sim.summary();
    assert_eq!((s.connections_completed, s.connections_unfinished), (2, 0));
    assert_eq!(
        (s.dash.sessions, s.dash.sessions_finished, s.dash.segments),
        (2, 2, 20)
    );
    let requests = u64s(table(&tables, "connections"), "request_bytes");
    assert_eq!(requests, vec![10 * 400, 10 * 400]);
}

/// BOLA and the dynamic default on the same link run without stalls and write one row per
/// session; the same seed gives the same tables.
#[test]
fn bola_and_dynamic_run_and_are_deterministic() {
    for abr in ["bola", "dynamic"] {
        let make = || {
            let mut sc = link(4.0, 60.0);
            sc.traffic = vec![dash(serde_json::json!({"sessions": 1, "abr": abr}))];
            sc
        };
        let (_, a) = run(make());
        let (_, b) = run(make());
        assert_eq!(crate::common::digest(&a), crate::common::digest(&b));
        let ses = table(&a, "dash_sessions");
        assert_eq!(u64s(ses, "stalls"), vec![0], "{abr}");
        let bitrate = f64s(ses, "mean_bitrate_kbps")[0];
        assert!(bitrate > 1000.0 && bitrate < 4000.0, "{abr}: {bitrate}");
    }
}

/// Bad values are refused with the field named.
#[test]
fn bad_dash_entries_are_refused_by_name() {
    let cases = [
        (serde_json::json!({"sessions": 0}), "traffic[0].sessions"),
        (
            serde_json::json!({"sessions": 1, "ladder_kbps": [1000.0, 800.0]}),
            "traffic[0].ladder_kbps[1]",
        ),
        (
            serde_json::json!({"sessions": 1, "ladder_kbps": []}),
            "traffic[0].ladder_kbps",
        ),
        (
            serde_json::json!({"sessions": 1, "segment_s": 0.0}),
            "traffic[0].segment_s",
        ),
        (
            serde_json::json!({"sessions": 1, "duration_s": 1.0}),
            "traffic[0].duration_s",
        ),
        (
            serde_json::json!({"sessions": 1, "safety_factor": 1.5}),
            "traffic[0].safety_factor",
        ),
        (
            serde_json::json!({"sessions": 1, "poll_ms": 0.0}),
            "traffic[0].poll_ms",
        ),
        (
            serde_json::json!({"sessions": 1, "request_bytes": 0}),
            "traffic[0].request_bytes",
        ),
    ];
    for (v, field) in cases {
        let mut sc = link(4.0, 10.0);
        sc.traffic = vec![dash(v.clone())];
        let err = sc.validate().expect_err(&v.to_string());
        assert_eq!(err.field, field, "{v}");
    }
    // An unknown key is refused when the entry is read.
    let v = serde_json::json!({"kind": "dash", "sessions": 1, "bitrates": [1.0]});
    assert!(serde_json::from_value::<TrafficConfig>(v).is_err());
}

/// Two players beside a greedy download through today's queues (FIFO, FQ-CoDel, CAKE, and
/// DualPI2 with Prague players and download, the L4S case; PIE is left out: its tc
/// statistics trip a debug assertion of `sim/qdisc.rs` in any debug run, "dropped is a header
/// field", a defect outside this model), 20 s at 10 Mb/s: packets are
/// conserved, each session's delivered bytes lie between its finished segments' bytes and
/// what it asked for, and every session has its row.
#[test]
fn players_beside_a_download_through_todays_queues() {
    for (queue, tcp) in [
        (
            serde_json::json!({"kind": "droptail", "limit": 300}),
            TcpConfig::linux_cubic(),
        ),
        (
            serde_json::json!({"kind": "fq_codel"}),
            TcpConfig::linux_cubic(),
        ),
        (
            serde_json::json!({"kind": "cake", "bandwidth": "10Mbit"}),
            TcpConfig::linux_cubic(),
        ),
        (
            serde_json::json!({"kind": "dualpi2"}),
            TcpConfig::linux_prague(),
        ),
    ] {
        let mut sc = link(10.0, 20.0);
        sc.tcp = tcp;
        sc.topology.left_hosts = 3;
        sc.topology.right_hosts = 3;
        sc.queue = serde_json::from_value(queue.clone()).unwrap();
        sc.traffic = vec![
            dash(serde_json::json!({"sessions": 2, "start_jitter_s": 1.0, "segment_rows": true})),
            crate::common::bulk(1, None),
        ];
        let (sim, tables) = run(sc);
        crate::common::assert_packets_conserved(&sim, &tables);
        let ses = table(&tables, "dash_sessions");
        assert_eq!(ses.rows(), 2, "{queue}");
        let seg = table(&tables, "dash_segments");
        let (session, bytes) = (u64s(seg, "session"), u64s(seg, "bytes"));
        for (k, (req, got)) in u64s(ses, "bytes_requested")
            .into_iter()
            .zip(u64s(ses, "bytes_delivered"))
            .enumerate()
        {
            let done: u64 = session
                .iter()
                .zip(&bytes)
                .filter(|(s, _)| **s == u64s(ses, "session")[k])
                .map(|(_, b)| b)
                .sum();
            assert!(done <= got && got <= req, "{queue}: {done} {got} {req}");
        }
        assert_eq!(sim.summary().dash.sessions, 2);
    }
}
