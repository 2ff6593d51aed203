//! A run's results do not depend on where it is cut. The Python binding advances the core in
//! slices whose ends follow the wall clock (so that it can look for signals between them),
//! so this is what keeps a run deterministic: the same scenario, run in one call or in
//! thousands of irregular ones (ends between events, on events, 1 ns apart), gives the same
//! records and the same summary, to the bit.

use aqmlab::config::Scenario;
use aqmlab::measure::Table;
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::{secs, Time};
use serde_json::json;

/// Web users, PackMime, UDP and periodic work (ARED's updates, samples, intervals, a ticked
/// delay box) in one run with a warm-up, so that every kind of event meets a cut.
fn scenario() -> Scenario {
    let doc = json!({
        "seed": 11, "duration_s": 12.0, "warmup_s": 2.0,
        "topology": {"bottleneck_mbps": 4.0, "bottleneck_delay_ms": 2.0, "access_mbps": 100.0,
            "access_delay_ms": 1.0, "access_queue_packets": 1000, "left_hosts": 3,
            "right_hosts": 3},
        "queue": {"kind": "ared", "limit": 120, "target_delay_ms": 5.0},
        "tcp": serde_json::to_value(TcpConfig::freebsd_4x()).unwrap(),
        "rtt": {"kind": "uniform", "min_ms": 10.0, "max_ms": 120.0},
        "delay_box": {"tick_ms": 1.0},
        "traffic": [
            {"kind": "mah", "users": 20, "start_spread_s": 1.0},
            {"kind": "packmime", "rate": 8.0, "client_side": "right"},
            {"kind": "udp_cbr", "flows": 1, "rate_mbps": 0.4, "packet_bytes": 500}
        ],
        "measure": {"queue_sample_ms": 3.0, "queue_window_ms": 100.0, "interval_s": 0.5}
    });
    Scenario::from_json(&doc.to_string()).expect("valid scenario")
}

fn run(cuts: impl Iterator<Item = Time>) -> (Vec<Table>, String) {
    let mut sim = Simulation::new(scenario()).unwrap();
    let end = sim.end_time();
    for t in cuts.take_while(|&t| t < end) {
        sim.run_until(t);
    }
    sim.run_until(end);
    let tables = sim.finish();
    (tables, sim.summary_json())
}

#[test]
fn results_do_not_depend_on_where_a_run_is_cut() {
    let whole = run(std::iter::empty());
    // Irregular slices: 1 ns, 1 µs and 7.9 ms steps, a cut at the warm-up instant and at
    // round milliseconds (where sampling and interval events fall).
    let mut cuts: Vec<Time> = (1..2_000u64).map(|k| k * 7_919_777).collect();
    cuts.extend((0..500u64).map(|k| secs(3.0) + k));
    cuts.extend((0..500u64).map(|k| secs(5.0) + k * 1_000));
    cuts.extend([secs(2.0), secs(2.0) + 1, secs(6.0), secs(9.5)]);
    cuts.sort_unstable();
    cuts.dedup();
    let sliced = run(cuts.into_iter());
    assert!(whole.0.iter().any(|t| t.rows() > 0));
    assert_eq!(whole.1, sliced.1, "summary");
    // Compared through their text (f64 `Debug` round-trips exactly): unfinished
    // connections hold NaN, which `==` never equals.
    assert!(
        format!("{:?}", whole.0) == format!("{:?}", sliced.0),
        "records differ"
    );
}
