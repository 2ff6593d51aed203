//! The scenario deserializer, validation, resource estimate and a short run, fuzzed: valid
//! scenarios of every queue and traffic kind with some of their numbers replaced by boundary
//! values (zero, negative, tiny, huge, past what 64 bits hold). Every case must either be
//! refused with a `ConfigError`/`String`, or build and run without a panic. The Python fuzzer
//! (`fuzz/`) drives whole runs through the CLI layer; this one reaches the core directly and
//! also mutates fields the Python layer would have resolved (presets, units).

use aqmlab::config::Scenario;
use aqmlab::sim::estimate::estimate;
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use proptest::prelude::*;
use serde_json::{json, Value};

fn queues() -> Vec<Value> {
    vec![
        json!({"kind": "droptail", "limit": 50}),
        json!({"kind": "red", "limit": 100, "min_th": 5.0, "max_th": 15.0}),
        json!({"kind": "gred_i", "limit": 100, "min_th": 5.0}),
        json!({"kind": "ared", "limit": 100, "target_delay_ms": 5.0}),
        json!({"kind": "pi", "limit": 100, "q_ref": 20.0}),
        json!({"kind": "rem", "limit": 100, "b_ref": 20.0}),
        json!({"kind": "codel", "limit": 100}),
        json!({"kind": "pie", "limit": 100}),
        json!({"kind": "fq_codel", "limit": 100}),
        json!({"kind": "dualpi2", "limit": 100, "tupdate_ms": 16.0, "step_thresh_ms": 1.0,
            "coupling_factor": 2, "c_protection": 10}),
        json!({"kind": "cake", "bandwidth": "5Mbit", "rtt_ms": 50.0, "overhead": 18, "mpu": 64,
            "memlimit": 200000, "ack_filter": "ack-filter-aggressive"}),
        json!({"kind": "fq_pie", "limit": 100, "flows": 16, "tupdate_ms": 15.0,
            "target_ms": 15.0, "ecn": true, "ecn_prob": 10}),
        json!({"kind": "fq_pie", "limit": 100, "flows": 4, "dq_rate_estimator": true,
            "bytemode": true}),
        json!({"kind": "fq_codel", "limit": 100, "ce_threshold_ms": 1.0,
            "ce_threshold_selector": 1, "ce_threshold_mask": 1}),
        json!({"kind": "red_linux", "limit": 150000, "min": 10000, "max": 30000, "avpkt": 1000,
            "burst": 20, "probability": 0.1, "bandwidth_mbps": 5.0, "ecn": true,
            "adaptive": true}),
    ]
}

fn traffics() -> Vec<Value> {
    vec![
        json!({"kind": "bulk", "flows": 3, "start_jitter_s": 0.1}),
        json!({"kind": "bulk", "flows": 2, "bytes": 30000}),
        json!({"kind": "mah", "users": 5, "start_spread_s": 0.2}),
        json!({"kind": "browsers", "users": 5, "start_spread_s": 0.2}),
        json!({"kind": "packmime", "rate": 20.0, "http11": true, "packmime_rtt": true}),
        json!({"kind": "udp_cbr", "flows": 2, "rate_mbps": 2.0, "packet_bytes": 500}),
        json!({"kind": "ftp", "rate": 5.0, "size": {"kind": "constant", "bytes": 20000}}),
    ]
}

fn base(queue: Value, traffic: Value, tcp: Value) -> Value {
    json!({
        "seed": 3, "duration_s": 1.0, "warmup_s": 0.2,
        "topology": {"bottleneck_mbps": 5.0, "bottleneck_delay_ms": 1.0, "access_mbps": 100.0,
            "access_delay_ms": 1.0, "access_queue_packets": 1000, "left_hosts": 2,
            "right_hosts": 2},
        "queue": queue,
        "tcp": tcp,
        "rtt": {"kind": "uniform", "min_ms": 10.0, "max_ms": 60.0},
        "traffic": [traffic],
        "measure": {"queue_sample_ms": 3.0, "queue_window_ms": 100.0, "interval_s": 0.5}
    })
}

/// Paths of the numbers in `v`, in document order.
fn number_paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(k.clone());
                number_paths(c, at, out);
                at.pop();
            }
        },
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i.to_string());
                number_paths(c, at, out);
                at.pop();
            }
        },
        Value::Number(_) => out.push(at.clone()),
        _ => {},
    }
}

fn set(v: &mut Value, path: &[String], x: Value) {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p).expect("path"),
            Value::Array(a) => &mut a[p.parse::<usize>().expect("index")],
            _ => unreachable!(),
        };
    }
    *cur = x;
}

const EDGES: [f64; 12] = [
    0.0, -1.0, 1e-12, 1e-7, 0.5, 1.0, 3.0, 65_536.0, 4.3e9, 1e12, 1.9e19, 1e300,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenarios_are_refused_or_run(
        q in 0usize..9,
        t in 0usize..7,
        preset in 0usize..TcpConfig::PRESETS.len(),
        edits in proptest::collection::vec((0usize..1000, 0usize..EDGES.len(), any::<bool>()), 0..4),
    ) {
        let tcp = TcpConfig::preset(TcpConfig::PRESETS[preset]).expect("preset");
        let mut doc = base(queues()[q].clone(), traffics()[t].clone(), serde_json::to_value(&tcp).unwrap());
        let mut paths = Vec::new();
        number_paths(&doc, &mut Vec::new(), &mut paths);
        for (which, edge, integer) in edits {
            let x = EDGES[edge];
            // Integers where the field may want one (counts, limits), floats otherwise.
            let value = if integer && (0.0..1.8e19).contains(&x) { json!(x as u64) } else { json!(x) };
            set(&mut doc, &paths[which % paths.len()], value);
        }
        let text = doc.to_string();
        let Ok(sc) = Scenario::from_json(&text) else { return Ok(()) };
        let est = estimate(&sc);
        prop_assert!(est.events >= 0.0 && est.peak_bytes > 0.0, "{est:?}");
        // The whole run, when the guard would let it through on a small machine and it is
        // short (most are: a second of a 5 Mb/s dumbbell is some 10^4-10^5 events).
        if est.peak_bytes < 2e9 && est.events < 2e6 {
            if let Ok(mut sim) = Simulation::new(sc) {
                let end = sim.end_time();
                sim.run_until(end);
                let _ = sim.finish();
            }
        }
    }
}
