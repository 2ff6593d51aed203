//! Video calls (`kind = "video_call"`): the uncongested frame delay by hand, conservation of
//! packets, losses equal to the queue's drops, NADA's equilibrium on a capacity step, the L4S
//! mode through DualPI2, and the scenario checks.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::video_call::{VideoCallConfig, VideoController, VideoEcn};
use aqmlab::config::{RateStep, RttConfig, Scenario, TrafficConfig};
use aqmlab::sim::Simulation;

use crate::common::*;

/// A call as a scenario file would give it, with `fields` over the defaults.
fn call(fields: serde_json::Value) -> VideoCallConfig {
    let mut v = serde_json::json!({"kind": "video_call"});
    for (k, x) in fields.as_object().expect("an object") {
        v[k] = x.clone();
    }
    match serde_json::from_value::<TrafficConfig>(v).expect("a valid entry") {
        TrafficConfig::VideoCall(c) => c,
        _ => unreachable!(),
    }
}

/// A bottleneck of `mbps` with 100 Mb/s access links, 1 ms delays, a 20 ms delay-box RTT.
fn link(duration: f64, mbps: f64, queue: AqmConfig) -> Scenario {
    let mut sc = base(duration);
    sc.topology.bottleneck_mbps = mbps;
    sc.topology.access_mbps = 100.0;
    sc.topology.bottleneck_delay_ms = 1.0;
    sc.topology.access_delay_ms = 1.0;
    sc.topology.left_hosts = 2;
    sc.topology.right_hosts = 2;
    sc.queue = queue;
    sc.rtt = RttConfig::Constant { rtt_ms: 20.0 };
    sc
}

fn droptail(limit: u64) -> AqmConfig {
    AqmConfig::Droptail {
        limit,
        unit: QueueUnit::Packets,
    }
}

fn video(sim: &Simulation) -> aqmlab::sim::VideoCallSummary {
    sim.summary()
        .video_call
        .clone()
        .expect("a video_call summary")
}

/// A fixed 1 Mb/s call at 25 fps without noise, alone on a 10 Mb/s link, measured after the
/// first transient phase (10 frames, 0.4 s) and the packetizer's settling. The encoder's
/// target is 1 Mb/s / (1 + h), h the previous frame's header bytes over its payload: a
/// payload B in 5 packets settles where B = 5000 · B / (B + 200), at 4,800 bytes (each
/// accepted update shrinks the gap 25-fold), so a frame is four 1,200-byte packets and one of
/// 160 + 40 = 200 bytes: 5,000 bytes, exactly 1 Mb/s on the wire. The last packet arrives
/// after the first packet's access serialization (96 µs), the whole frame's bottleneck
/// serialization (5,000 bytes at 10 Mb/s: 4,000 µs; the 10× faster access link keeps the
/// bottleneck busy), the last packet's access serialization at the far end (16 µs), 3 × 1 ms
/// of propagation and 10 ms of delay box (half the RTT): 17.112 ms, for every frame.
#[test]
fn uncongested_frame_delay_is_propagation_plus_serialization() {
    let mut sc = link(3.0, 10.0, droptail(100));
    sc.warmup_s = 1.0;
    sc.traffic = vec![TrafficConfig::VideoCall(call(serde_json::json!({
        "controller": "none", "rate_mbps": 1.0, "fps": 25.0,
        "size_noise": 0.0, "interval_noise": 0.0,
    })))];
    let (sim, tables) = run(sc);
    let v = video(&sim);
    // Frames at k · 40 ms for k = 25..=74.
    assert_eq!((v.frames, v.frames_delivered, v.frames_lost), (50, 50, 0));
    assert_eq!((v.packets_sent, v.packets_delivered), (250, 250));
    assert_eq!((v.packets_lost, v.packets_unresolved), (0, 0));
    let want = 13.0 + (96.0 + 4000.0 + 16.0) * 1e-3;
    assert!(
        (v.frame_delay_max_ms - want).abs() < 1e-6,
        "{}",
        v.frame_delay_max_ms
    );
    // Every frame alike: the median is the maximum (quantiles never exceed it).
    assert!((v.frame_delay_p50_ms - want).abs() < 1e-6);
    assert_eq!(v.frames_late, 0);
    let rows = table(&tables, "video_calls");
    assert_eq!(u64s(rows, "frames_delivered"), vec![50]);
    // 50 frames of 5,000 bytes over 2 s: 1 Mb/s.
    assert!((f64s(rows, "send_mbps")[0] - 1.0).abs() < 1e-9);
}

/// NADA through a short drop-tail queue on a 1 Mb/s link: each packet sent is delivered, lost
/// (a gap the receiver saw) or still unresolved at the end; every loss the receiver counts is
/// one of the queue's drops, and a drop it has not counted is at the tail (unresolved).
#[test]
fn nada_call_conserves_packets_and_its_losses_are_the_queue_drops() {
    for seed in 1..=3 {
        let mut sc = link(20.0, 1.0, droptail(4));
        sc.seed = seed;
        sc.traffic = vec![TrafficConfig::VideoCall(call(serde_json::json!({
            "max_rate_mbps": 1.5, "rate_mbps": 1.5,
        })))];
        let (sim, _) = run(sc);
        let v = video(&sim);
        let drops = sim.summary().reverse.drops_overflow;
        assert_eq!(
            v.packets_sent,
            v.packets_delivered + v.packets_lost + v.packets_unresolved
        );
        assert!(
            v.packets_lost > 0,
            "seed {seed}: no loss at 1.5 Mb/s into 1 Mb/s"
        );
        assert!(
            v.packets_lost <= drops && drops <= v.packets_lost + v.packets_unresolved,
            "seed {seed}: lost {} drops {drops} unresolved {}",
            v.packets_lost,
            v.packets_unresolved
        );
        assert_eq!(
            v.frames_delivered + v.frames_lost + (v.frames - v.frames_delivered - v.frames_lost),
            v.frames
        );
    }
}

/// NADA on a 2 Mb/s link whose capacity halves to 1 Mb/s at 20 s, RMAX 4 Mb/s, a large
/// drop-tail queue (no loss: queueing delay alone drives the gradual update). The step's
/// queueing delay (hundreds of ms: the queue drains at half the rate it fills) makes the
/// gradual update's x_diff term cut r_ref below the new capacity within 3 s (RFC 8698 §4.3);
/// settled, the call uses the link (receiving rate above 85 % of the capacity) with its
/// reference rate near the capacity (within −20 %/+25 %: the accelerated ramp-up lifts r_ref
/// to (1 + gamma) · r_recv whenever the queue empties).
#[test]
fn nada_follows_a_capacity_step() {
    let mut sc = link(40.0, 2.0, droptail(1000));
    sc.topology.bottleneck_steps = vec![RateStep {
        at_s: 20.0,
        mbps: 1.0,
        reverse_mbps: None,
    }];
    sc.traffic = vec![TrafficConfig::VideoCall(call(serde_json::json!({
        "max_rate_mbps": 4.0, "report_interval_s": 0.5,
    })))];
    let (_, tables) = run(sc);
    let r = table(&tables, "video_rates");
    let (t, target, recv) = (
        f64s(r, "t_s"),
        f64s(r, "target_mbps"),
        f64s(r, "receive_mbps"),
    );
    let within = |lo: f64, hi: f64, v: &[f64]| -> Vec<f64> {
        (0..t.len())
            .filter(|&i| t[i] > lo && t[i] <= hi)
            .map(|i| v[i])
            .collect()
    };
    let mean = |w: Vec<f64>| w.iter().sum::<f64>() / w.len() as f64;
    let after_step = within(20.0, 23.0, &target);
    assert!(
        after_step.iter().cloned().fold(f64::MAX, f64::min) < 1.0,
        "{after_step:?}"
    );
    for (lo, hi, cap) in [(12.0, 20.0, 2.0), (30.0, 40.0, 1.0)] {
        let (r_ref, r_recv) = (mean(within(lo, hi, &target)), mean(within(lo, hi, &recv)));
        assert!(
            r_recv > 0.85 * cap && r_recv <= 1.02 * cap,
            "[{lo}, {hi}]: {r_recv}"
        );
        assert!(
            r_ref > 0.8 * cap && r_ref < 1.25 * cap,
            "[{lo}, {hi}]: {r_ref}"
        );
    }
}

/// The L4S mode: a call sending ECT(1) beside a bulk TCP download through DualPI2 goes to the
/// L queue, where it is marked, not dropped; the same call as not-ECT shares the classic
/// queue, is never marked, and waits behind the classic queue's delay.
#[test]
fn an_l4s_call_is_marked_in_dualpi2s_l_queue() {
    let run_with = |ecn: &str| {
        let mut sc = link(
            15.0,
            5.0,
            serde_json::from_value(serde_json::json!(
            {"kind": "dualpi2"}))
            .expect("a queue"),
        );
        sc.warmup_s = 5.0;
        sc.traffic = vec![
            bulk(1, None),
            TrafficConfig::VideoCall(call(serde_json::json!({
                "ecn": ecn, "max_rate_mbps": 2.5,
            }))),
        ];
        let (sim, _) = run(sc);
        video(&sim)
    };
    let l4s = run_with("ect1");
    let classic = run_with("not_ect");
    assert!(l4s.ce_marked > 0 && l4s.packets_lost == 0, "{l4s:?}");
    assert_eq!(classic.ce_marked, 0);
    assert!(
        l4s.frame_delay_p95_ms < classic.frame_delay_p95_ms,
        "L {} ms, classic {} ms",
        l4s.frame_delay_p95_ms,
        classic.frame_delay_p95_ms
    );
}

/// Runs without calls have no `video_call` summary (the summary's JSON is unchanged).
#[test]
fn runs_without_calls_have_no_video_summary() {
    let (sim, tables) = run(link(1.0, 10.0, droptail(100)));
    assert!(sim.summary().video_call.is_none());
    assert!(tables.iter().all(|t| t.name != "video_calls"));
    let json = serde_json::to_string(sim.summary()).expect("json");
    assert!(!json.contains("video_call"));
}

#[test]
fn bad_video_call_entries_name_their_field() {
    let mut sc = link(5.0, 10.0, droptail(100));
    let cases = [
        (
            serde_json::json!({"controller": "none"}),
            "traffic[0].rate_mbps",
        ),
        (serde_json::json!({"fps": 0.5}), "traffic[0].fps"),
        (
            serde_json::json!({"packet_bytes": 40}),
            "traffic[0].packet_bytes",
        ),
        (
            serde_json::json!({"min_rate_mbps": 2.0, "max_rate_mbps": 1.0}),
            "traffic[0].max_rate_mbps",
        ),
        (serde_json::json!({"calls": 0}), "traffic[0].calls"),
        (
            serde_json::json!({"max_rate_mbps": 100000.0, "packet_bytes": 41}),
            "traffic[0].packet_bytes",
        ),
        (
            serde_json::json!({"iframe_bytes": 2e5, "packet_bytes": 41}),
            "traffic[0].iframe_bytes",
        ),
        (
            serde_json::json!({"deadline_ms": -1.0}),
            "traffic[0].deadline_ms",
        ),
        (
            serde_json::json!({"size_noise": 3.0}),
            "traffic[0].size_noise",
        ),
        (
            serde_json::json!({"report_interval_s": 0.001}),
            "traffic[0].report_interval_s",
        ),
        (
            serde_json::json!({"start_s": 2.0, "stop_s": 1.0}),
            "traffic[0].stop_s",
        ),
    ];
    for (fields, field) in cases {
        sc.traffic = vec![TrafficConfig::VideoCall(call(fields.clone()))];
        let e = sc.validate().unwrap_err();
        assert_eq!(e.field, field, "{fields}");
    }
    // An unknown key is refused by the parser.
    let bad = serde_json::json!({"kind": "video_call", "fsp": 30});
    assert!(serde_json::from_value::<TrafficConfig>(bad).is_err());
    sc.traffic = vec![TrafficConfig::VideoCall(VideoCallConfig {
        controller: VideoController::None,
        rate_mbps: Some(1.0),
        ecn: VideoEcn::Ect0,
        ..call(serde_json::json!({}))
    })];
    assert!(sc.validate().is_ok());
}

/// Calls in both directions, classic and L4S, fixed and NADA, beside a bulk download through
/// every kind of queue (PIE and FQ-PIE aside: their tc statistics repeat the header's
/// `dropped`, which a debug build's check in `sim::qdisc` refuses, whatever the traffic):
/// every run ends, every call's packets are conserved, and every queue
/// conserves its own (arrivals = departures + drops + backlog).
#[test]
fn calls_run_through_every_queue_kind() {
    for queue in [
        serde_json::json!({"kind": "droptail", "limit": 50}),
        serde_json::json!({"kind": "red", "limit": 50}),
        serde_json::json!({"kind": "codel", "ecn": true}),
        serde_json::json!({"kind": "fq_codel"}),
        serde_json::json!({"kind": "cake"}),
        serde_json::json!({"kind": "dualpi2"}),
    ] {
        let mut sc = link(
            8.0,
            5.0,
            serde_json::from_value(queue.clone()).expect("queue"),
        );
        sc.warmup_s = 2.0;
        sc.traffic = vec![
            bulk(1, None),
            TrafficConfig::VideoCall(call(serde_json::json!({"calls": 2, "ecn": "ect1"}))),
            TrafficConfig::VideoCall(call(serde_json::json!({
                "direction": "upload", "ecn": "ect0", "max_rate_mbps": 3.0,
            }))),
            TrafficConfig::VideoCall(call(serde_json::json!({
                "controller": "none", "rate_mbps": 1.0, "keyframe_interval_s": 1.0,
            }))),
        ];
        let (sim, tables) = run(sc);
        assert!(sim.finished(), "{queue}");
        let rows = table(&tables, "video_calls");
        let (sent, got, lost, open) = (
            u64s(rows, "packets_sent"),
            u64s(rows, "packets_delivered"),
            u64s(rows, "packets_lost"),
            u64s(rows, "packets_unresolved"),
        );
        assert_eq!(sent.len(), 4, "{queue}");
        for i in 0..4 {
            assert!(sent[i] > 0, "{queue}: call {i}");
            assert_eq!(sent[i], got[i] + lost[i] + open[i], "{queue}: call {i}");
        }
        for dir in [sim.topology().forward(), sim.topology().reverse()] {
            let q = &sim.link(dir).queue;
            let st = &q.stats;
            assert_eq!(
                st.arrivals,
                st.departures + st.drops() + q.len().packets as u64,
                "{queue}"
            );
        }
    }
}

/// NADA's receiver reports every DELTA = 100 ms from the call's start (RFC 8698 §5.3): over
/// a 3-s run, at 0.1 … 2.9 s, 29 reports, each back at the sender ~12 ms later (the reverse
/// path's propagation, delay box and serialization), so all 29 arrive; a feedback interval of
/// 50 ms doubles them (59: 0.05 … 2.95 s).
#[test]
fn feedback_crosses_the_reverse_path_every_interval() {
    for (interval, want) in [(100.0, 29), (50.0, 59)] {
        let mut sc = link(3.0, 10.0, droptail(100));
        sc.traffic = vec![TrafficConfig::VideoCall(call(serde_json::json!({
            "feedback_interval_ms": interval,
        })))];
        let (sim, tables) = run(sc);
        let rows = table(&tables, "video_calls");
        assert_eq!(u64s(rows, "feedback_sent"), vec![want]);
        assert_eq!(u64s(rows, "feedback_received"), vec![want]);
        // The download's data go right to left (reverse), its feedback left to right.
        assert_eq!(sim.summary().forward.tx_packets, want);
        assert!(video(&sim).packets_sent > 0);
    }
}
