//! Queue managers inside the full network: long-lived flows through a 10 Mb/s bottleneck.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::config::RttConfig;

use crate::common::*;

fn aqm(v: serde_json::Value) -> AqmConfig {
    serde_json::from_value(v).expect("valid queue config")
}

fn long_lived(queue: AqmConfig) -> aqmlab::sim::Simulation {
    let mut sc = base(80.0);
    sc.seed = 11;
    sc.warmup_s = 20.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.left_hosts = 10;
    sc.topology.right_hosts = 10;
    sc.tcp = aqmlab::tcp::config::TcpConfig::freebsd_228();
    sc.tcp.rwnd = 64 * 1024;
    sc.rtt = RttConfig::Uniform {
        min_ms: 20.0,
        max_ms: 100.0,
    };
    sc.queue = queue;
    sc.traffic = vec![bulk_at(100, None, 0.0, 5.0)];
    run(sc).0
}

/// PI (Hollot et al.) and REM (Athuraliya et al.) regulate the queue to their target.
#[test]
fn pi_and_rem_hold_the_queue_near_the_target() {
    for (name, cfg, target) in [
        (
            "pi",
            aqm(serde_json::json!({"kind": "pi", "limit": 800, "q_ref": 100.0})),
            100.0,
        ),
        (
            "rem",
            aqm(serde_json::json!({"kind": "rem", "limit": 800, "b_ref": 100.0})),
            100.0,
        ),
    ] {
        let sim = long_lived(cfg);
        let s = sim.summary();
        let q = s.reverse.mean_queue_pkts;
        eprintln!(
            "{name}: mean queue {q:.1} (target {target}), utilization {:.3}",
            s.reverse.utilization
        );
        assert!((q - target).abs() <= 0.3 * target, "{name}: mean queue {q}");
    }
}

/// Adaptive RED keeps its average queue between its thresholds (Floyd, Gummadi, Shenker 2001:
/// max_p adapts so that the average sits in the middle of [min_th, max_th]).
#[test]
fn ared_keeps_the_average_between_its_thresholds() {
    let cfg = aqm(serde_json::json!({
        "kind": "ared", "limit": 800, "min_th": 30.0, "max_th": 90.0,
        "queue_in_bytes": false, "byte_mode": false
    }));
    let sim = long_lived(cfg);
    let s = sim.summary();
    let q = s.reverse.mean_queue_pkts;
    eprintln!(
        "ared: mean queue {q:.1}, utilization {:.3}",
        s.reverse.utilization
    );
    assert!((30.0..=90.0).contains(&q), "mean queue {q}");
}
