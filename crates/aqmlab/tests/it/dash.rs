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

#[test]
fn smoke() {
    let mut sc = link(4.0, 60.0);
    sc.traffic = vec![dash(serde_json::json!({"sessions": 1, "abr": "throughput", "segment_rows": true}))];
    let (sim, tables) = run(sc);
    let seg = table(&tables, "dash_segments");
    let q = u64s(seg, "quality");
    let b = f64s(seg, "buffer_at_request_s");
    let t = f64s(seg, "throughput_kbps");
    let s = f64s(seg, "sample_kbps");
    let r = f64s(seg, "request_s");
    for i in 0..q.len() {
        eprintln!("{i} q={} req={:.3} buf={:.2} tput={:.0} sample={:.0}", q[i], r[i], b[i], t[i], s[i]);
    }
    let ses = table(&tables, "dash_sessions");
    eprintln!("{:?}", ses.columns.iter().map(|(n, c)| format!("{n}={c:?}")).collect::<Vec<_>>());
    eprintln!("{}", sim.summary_json());
    let _ = bools;
}
