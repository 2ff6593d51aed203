//! The real-time UDP applications (`kind = "voice"`, `"game"`, `"ping"`, `sim::realtime`):
//! delays against the hand-computed path, a full queue's known extra delay, conservation of
//! packets, ECN classification by DualPI2, determinism and the one-line errors.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{RttConfig, Scenario, TrafficConfig};
use aqmlab::sim::Simulation;

use super::common::{base, f64s, run, table, u64s};

fn traffic(v: serde_json::Value) -> TrafficConfig {
    serde_json::from_value(v).expect("a traffic entry")
}

/// Access links 100 Mb/s and 5 ms, bottleneck 10 Mb/s and 10 ms, a 40 ms delay-box RTT.
fn path(duration_s: f64) -> Scenario {
    let mut sc = base(duration_s);
    sc.topology.access_mbps = 100.0;
    sc.topology.access_delay_ms = 5.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.bottleneck_delay_ms = 10.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 40.0 };
    sc
}

/// One-way delay of a `bytes` packet on `path()` with empty queues, ms: three links'
/// propagation (5 + 10 + 5), half the delay-box RTT (20), serialization on two 100 Mb/s
/// access links and the 10 Mb/s bottleneck.
fn path_delay_ms(bytes: f64) -> f64 {
    40.0 + bytes * 8.0 * (2.0 / 100e6 + 1.0 / 10e6) * 1e3
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Each application alone on the path (together they would queue behind each other on the
/// shared host links).
fn alone(v: serde_json::Value) -> (Simulation, Vec<aqmlab::measure::Table>) {
    let mut sc = path(3.0);
    sc.traffic = vec![traffic(v)];
    run(sc)
}

#[test]
fn an_uncongested_flow_sees_the_path_delay() {
    let (_, tables) = alone(serde_json::json!({"kind": "voice"}));
    // G.711: 200 B each way; 40.192 ms.
    // Each kind's table only where the run has the kind.
    assert!(tables
        .iter()
        .all(|t| t.name != "game_flows" && t.name != "ping_probes"));
    let v = table(&tables, "voice_streams");
    let want = path_delay_ms(200.0);
    for col in ["delay_p50_ms", "delay_p99_ms", "delay_max_ms"] {
        for d in f64s(v, col) {
            assert!(close(d, want), "{col} {d} vs {want}");
        }
    }
    assert_eq!(u64s(v, "lost"), vec![0, 0]);
    assert_eq!(u64s(v, "late"), vec![0, 0]);
    assert!(f64s(v, "jitter_ms").iter().all(|&j| j == 0.0));
    // Mouth to ear: the delay, the 60 ms buffer, the 20 ms frame, no look-ahead.
    for m in f64s(v, "mouth_to_ear_ms") {
        assert!(close(m, want + 60.0 + 20.0), "{m}");
    }
    // 3 s of 50 packets/s each way, from a start within the first frame.
    let sent = u64s(v, "sent");
    assert!(sent.iter().all(|&n| n == 149 || n == 150), "{sent:?}");

    // Game: 80 B up, 200 B down; the RTT is their sum (the server's hold is taken out).
    let (sim, _) = alone(serde_json::json!({"kind": "game"}));
    let g = sim.summary().game.clone().expect("a game section");
    assert!(close(g.up_delay_p99_ms, path_delay_ms(80.0)), "{g:?}");
    assert!(close(g.down_delay_p50_ms, path_delay_ms(200.0)), "{g:?}");
    let rtt = path_delay_ms(80.0) + path_delay_ms(200.0);
    assert!(
        close(g.rtt_p50_ms, rtt) && close(g.rtt_max_ms, rtt),
        "{g:?}"
    );
    // 64 updates/s for 3 s less the first round trip, less those in flight at the end.
    assert!((180..=192).contains(&g.rtt_samples), "{g:?}");

    // Ping: 84 B both ways; a probe every 200 ms.
    let (sim, tables) = alone(serde_json::json!({"kind": "ping"}));
    let p = sim.summary().ping.clone().expect("a ping section");
    assert!(close(p.rtt_p99_ms, 2.0 * path_delay_ms(84.0)), "{p:?}");
    // The last probe's answer may still be on its way.
    assert_eq!(
        (p.probes, p.answered + p.unresolved, p.lost),
        (15, 15, 0),
        "{p:?}"
    );
    assert!(p.answered >= 14);
    let probes = table(&tables, "ping_probes");
    let t = f64s(probes, "t_s");
    assert!(t.windows(2).all(|w| close(w[1] - w[0], 0.2)), "{t:?}");
    assert!(f64s(probes, "rtt_ms")
        .iter()
        .filter(|r| r.is_finite())
        .all(|&r| close(r, 2.0 * path_delay_ms(84.0))));
}

/// A drop-tail queue of 20 packets kept full by a 13 Mb/s CBR flow of 1000 B packets through
/// the 10 Mb/s bottleneck: a voice packet that is accepted waits behind 19 or 20 CBR packets
/// (one in service), 0.8 ms each: 15.2-16.0 ms more than the empty path. The voice frame is
/// 21.3 ms, not a multiple of the 0.8 ms departures: with 20 ms, every voice packet arrives
/// in the same phase of the queue's cycle (all dropped, or all accepted).
#[test]
fn a_full_queue_adds_its_drain_time() {
    let mut sc = path(4.0);
    sc.queue = AqmConfig::Droptail {
        limit: 20,
        unit: QueueUnit::Packets,
    };
    sc.traffic = vec![
        traffic(serde_json::json!({"kind": "udp_cbr", "flows": 1, "rate_mbps": 13.0})),
        traffic(
            serde_json::json!({"kind": "voice", "two_way": false, "start_s": 1.0, "frame_ms": 21.3}),
        ),
    ];
    let (sim, tables) = run(sc);
    let v = table(&tables, "voice_streams");
    let base = path_delay_ms(u64s(v, "packet_bytes")[0] as f64);
    let (p50, max) = (f64s(v, "delay_p50_ms")[0], f64s(v, "delay_max_ms")[0]);
    assert!(
        p50 - base >= 15.2 - 0.8 && max - base <= 16.0 + 0.2,
        "{p50} {max}"
    );
    // Packets that found the queue full were lost.
    let s = sim.summary().voice.as_ref().unwrap();
    assert!(s.lost > 0 && s.delivered > 10, "{s:?}");
    // Runs of packets the listener missed: at least one, at most one per packet missed, and
    // separated by packets played.
    assert!(s.bursts >= 1 && s.bursts <= s.lost + s.late, "{s:?}");
    assert!(s.bursts <= s.delivered - s.late + 1, "{s:?}");
}

/// Every packet a real-time flow sent was delivered, dropped at a bottleneck or is still in
/// the network: Σ (sent − delivered) over the streams (ping: probes − answers) = the
/// bottleneck's drops + the packets in flight at the end.
#[test]
fn packets_are_conserved() {
    let mut sc = path(5.0);
    sc.topology.bottleneck_mbps = 0.15;
    sc.queue = AqmConfig::Droptail {
        limit: 5,
        unit: QueueUnit::Packets,
    };
    sc.traffic = vec![
        traffic(serde_json::json!({"kind": "voice", "flows": 2})),
        traffic(serde_json::json!({"kind": "game", "tick_hz": 20, "client_rate_hz": 30})),
        traffic(serde_json::json!({"kind": "ping", "interval_ms": 50})),
    ];
    let (sim, tables) = run(sc);
    let s = sim.summary();
    let v = table(&tables, "voice_streams");
    let gone = |sent: Vec<u64>, got: Vec<u64>| -> u64 {
        sent.iter().zip(&got).map(|(a, b)| a - b).sum::<u64>()
    };
    let g = table(&tables, "game_flows");
    let p = s.ping.as_ref().unwrap();
    let missing = gone(u64s(v, "sent"), u64s(v, "delivered"))
        + gone(u64s(g, "up_sent"), u64s(g, "up_delivered"))
        + gone(u64s(g, "down_sent"), u64s(g, "down_delivered"))
        + (p.probes - p.answered);
    let drops = |d: &aqmlab::sim::DirectionSummary| {
        d.drops_early + d.drops_forced + d.drops_overflow + d.link_losses
    };
    let dropped = drops(&s.forward) + drops(&s.reverse);
    assert!(dropped > 100, "the bottleneck must drop: {dropped}");
    assert_eq!(missing, dropped + sim.packets_in_network() as u64, "{s:?}");
    // Per stream: sent = delivered + lost + unresolved; and the losses seen by the
    // receivers are the drops, but for the last packets' (unresolved).
    let vs = s.voice.as_ref().unwrap();
    assert_eq!(vs.sent, vs.delivered + vs.lost + vs.unresolved);
    let lost = vs.lost + s.game.as_ref().map_or(0, |g| g.up_lost + g.down_lost) + p.lost;
    assert!(lost <= dropped && dropped <= lost + 20, "{lost} {dropped}");
}

/// DualPI2 classifies ECT(1) as L4S (RFC 9331's identifier, RFC 9332's classifier): a voice call marked ECT(1) beside
/// greedy TCP downloads is CE-marked in the L queue and waits less there; a not-ECT one is
/// never marked.
#[test]
fn ect1_voice_is_l4s_in_dualpi2() {
    let run_with = |ecn: &str| {
        let mut sc = path(6.0);
        sc.queue = serde_json::from_value(serde_json::json!({"kind": "dualpi2"})).unwrap();
        sc.traffic = vec![
            super::common::bulk(4, None),
            traffic(serde_json::json!({"kind": "voice", "two_way": false, "ecn": ecn})),
        ];
        let (sim, _) = run(sc);
        sim.summary().voice.clone().unwrap()
    };
    let l4s = run_with("ect1");
    let classic = run_with("not_ect");
    assert!(l4s.ce_marked > 0, "{l4s:?}");
    assert_eq!(classic.ce_marked, 0);
    assert!(
        l4s.delay_p50_ms < classic.delay_p50_ms,
        "L {} vs C {}",
        l4s.delay_p50_ms,
        classic.delay_p50_ms
    );
}

#[test]
fn runs_are_deterministic_and_flows_start_apart() {
    let sc = || {
        let mut sc = path(2.0);
        sc.traffic = vec![
            traffic(serde_json::json!({"kind": "voice", "flows": 3})),
            traffic(serde_json::json!({"kind": "game", "flows": 2})),
        ];
        sc
    };
    let (a, ta) = run(sc());
    let (b, _) = run(sc());
    assert_eq!(a.summary_json(), b.summary_json());
    let starts = f64s(table(&ta, "voice_streams"), "start_s");
    // Two ends of a call start together; calls apart, within the first frame.
    assert_eq!(starts[0], starts[1]);
    assert_ne!(starts[0], starts[2]);
    assert!(
        starts.iter().all(|&s| (0.0..0.02).contains(&s)),
        "{starts:?}"
    );
}

#[test]
fn a_run_without_them_has_no_sections_or_tables() {
    let (sim, tables) = run(base(1.0));
    let json = sim.summary_json();
    assert!(!json.contains("\"voice\"") && !json.contains("\"ping\""));
    assert!(tables.iter().all(|t| t.name != "voice_streams"));
}

#[test]
fn bad_values_are_one_line_errors() {
    let err = |v: serde_json::Value| {
        let mut sc = path(1.0);
        sc.traffic = vec![super::common::bulk(1, None), traffic(v)];
        Simulation::new(sc).err().expect("refused").to_string()
    };
    assert_eq!(
        err(serde_json::json!({"kind": "voice", "jitter_buffer_ms": -5})),
        "traffic[1].jitter_buffer_ms = -5: expected a playout delay in [0, 10000] ms"
    );
    assert_eq!(
        err(serde_json::json!({"kind": "game", "tick_hz": 1e9})),
        "traffic[1].tick_hz = 1000000000: expected packets per second in [0.1, 10000]"
    );
    assert_eq!(
        err(serde_json::json!({"kind": "ping", "flows": 5000})),
        "traffic[1].flows = 5000: expected an integer in 1..=1000"
    );
    assert_eq!(
        err(serde_json::json!({"kind": "voice", "stop_s": 0.0})),
        "traffic[1].stop_s = 0: expected a time > start_s (0), or absent (the end of the run)"
    );
    let bad: Result<TrafficConfig, _> =
        serde_json::from_value(serde_json::json!({"kind": "voice", "codec": "amr"}));
    assert!(bad.is_err());
}
