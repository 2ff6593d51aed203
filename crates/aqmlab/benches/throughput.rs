//! Engine benchmark (run with `cargo bench -p aqmlab`): 100 long-lived FreeBSD-Reno flows over
//! a 100 Mb/s bottleneck, RTT 100 ms, drop-tail buffer of one bandwidth-delay product
//! (833 packets of 1500 bytes), 60 simulated seconds. Prints bottleneck packets forwarded per
//! wall-second, events per wall-second and simulated seconds per wall-second.
//! `AQMLAB_BENCH_SECONDS` overrides the simulated duration (of a JSON scenario too);
//! `AQMLAB_BENCH_VERBOSE` prints the event list, connections and packets every 10 s;
//! `AQMLAB_BENCH_DIGEST` prints a hash of all records (to check that outcomes are unchanged);
//! `AQMLAB_BENCH_DIGEST=columns` also prints one hash per table column and per summary field,
//! so that a change which adds columns or fields can show that every existing one is unchanged
//! (`bench/digests.sh`). The digests are XXH64 (`Digest`): the same on every toolchain and
//! platform, so a reference file made once stays comparable.
//! Also printed: HTTP exchanges recorded per wall-second and the process's peak resident memory
//! (Linux `VmHWM`), the figures issue 3's benchmark asks for, and the memory per open
//! connection (issue 34): the bytes the connection slots hold (`EngineStats::connection_bytes`)
//! over the slots, i.e. over the most connections open at once.

use std::collections::BTreeMap;
use std::time::Instant;

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{
    Direction, MeasureConfig, RttConfig, Scenario, Side, Topology, TrafficConfig,
};
use aqmlab::measure::{Column, Table};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::secs;
use xxhash_rust::xxh64::Xxh64;

fn main() {
    let seconds: Option<f64> = std::env::var("AQMLAB_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let duration = seconds.unwrap_or(60.0);
    let sc = Scenario {
        name: "bench-100-flows-100mbps".into(),
        seed: 1,
        duration_s: duration,
        warmup_s: 0.0,
        topology: Topology {
            bottleneck_mbps: 100.0,
            bottleneck_reverse_mbps: None,
            bottleneck_delay_ms: 0.0,
            access_mbps: 1000.0,
            access_delay_ms: 0.0,
            access_queue_packets: 10_000,
            left_hosts: 100,
            right_hosts: 100,
            loss_rate: 0.0,
            loss_rate_reverse: 0.0,
            bottleneck_framing: Default::default(),
            access_framing: Default::default(),
            host_jitter_us: 0.0,
            bottleneck_steps: Vec::new(),
            cross_hosts: 0,
            hops: Vec::new(),
        },
        queue: AqmConfig::Droptail {
            limit: 833,
            unit: QueueUnit::Packets,
        },
        queue_reverse: None,
        tcp: TcpConfig {
            rwnd: 1 << 20,
            ..TcpConfig::freebsd_228()
        },
        rtt: RttConfig::Constant { rtt_ms: 100.0 },
        delay_box: Default::default(),
        traffic: vec![TrafficConfig::Bulk {
            flows: 100,
            bytes: None,
            request_bytes: 0,
            direction: Direction::Download,
            client_side: Side::Left,
            start_s: 0.0,
            start_jitter_s: 1.0,
        }],
        measure: MeasureConfig::default(),
        max_exchanges: None,
        trace: Default::default(),
        traffic_tcp: Vec::new(),
        traffic_rtt: Vec::new(),
        traffic_hop: Vec::new(),
    };
    // AQMLAB_BENCH_SCENARIO: a resolved scenario as JSON (`aqmlab validate S.toml --print`)
    // to time instead of the built-in one.
    // `AQMLAB_BENCH_SECONDS`, when given, overrides its duration too (and shortens a warm-up
    // that would no longer end before it to half the run: the work per simulated second is
    // the same, warm-up only decides which records are kept).
    // AQMLAB_BENCH_TCP: a TCP preset (`linux-bbr`, ...) for the built-in flows instead.
    let sc = match std::env::var("AQMLAB_BENCH_TCP") {
        Ok(name) => Scenario {
            tcp: TcpConfig::preset(&name).expect("a TCP preset name"),
            ..sc
        },
        Err(_) => sc,
    };
    let sc = match std::env::var("AQMLAB_BENCH_SCENARIO") {
        Ok(path) => {
            let text = std::fs::read_to_string(&path).expect("readable scenario JSON");
            let mut sc = Scenario::from_json(&text).expect("valid scenario JSON");
            if let Some(d) = seconds {
                sc.duration_s = d;
                if sc.warmup_s >= d {
                    sc.warmup_s = d / 2.0;
                }
            }
            sc
        },
        Err(_) => sc,
    };
    let duration = sc.duration_s;
    let mut sim = Simulation::new(sc).expect("valid benchmark scenario");
    let t0 = Instant::now();
    let end = sim.end_time();
    let mut t = 0;
    // AQMLAB_BENCH_DIGEST: print a hash of every record and the summary, to check that a
    // change leaves the simulated outcomes bit for bit as they were.
    let mut digest = std::env::var_os("AQMLAB_BENCH_DIGEST").map(|_| Digest::default());
    let per_column = std::env::var("AQMLAB_BENCH_DIGEST").is_ok_and(|v| v == "columns");
    if digest.is_some() {
        // XXH64 as specified: its reference value for the empty input.
        assert_eq!(Digest::default().finish(), 0xef46_db37_51d8_e999);
    }
    let mut columns: BTreeMap<String, Digest> = BTreeMap::new();
    let mut exchanges = 0usize;
    while !sim.finished() {
        t += secs(10.0);
        sim.run_until(t.min(end));
        let tables = sim.drain();
        exchanges += exchange_rows(&tables);
        if let Some(h) = digest.as_mut() {
            hash_tables(h, &tables);
        }
        if per_column {
            hash_columns(&mut columns, &tables);
        }
        if std::env::var_os("AQMLAB_BENCH_VERBOSE").is_some() {
            let st = sim.engine_stats();
            eprintln!(
                "t = {:.0} s: {} events pending, {} connections active, {} packets in flight",
                st.sim_time_s,
                st.pending_events,
                st.active_connections,
                sim.packets_in_network()
            );
        }
    }
    let tables = sim.finish();
    exchanges += exchange_rows(&tables);
    if let Some(h) = digest.as_mut() {
        hash_tables(h, &tables);
        h.str(&sim.summary_json());
    }
    if per_column {
        hash_columns(&mut columns, &tables);
        let summary: serde_json::Value =
            serde_json::from_str(&sim.summary_json()).expect("summary JSON");
        hash_json(&mut columns, "summary", &summary);
    }
    let wall = t0.elapsed().as_secs_f64();
    let st = sim.engine_stats();
    let s = sim.summary();
    println!("scenario: {}, {duration} s", sim.scenario().name);
    println!("wall time                 {wall:.3} s");
    println!("bottleneck packets        {}", st.bottleneck_packets);
    println!(
        "bottleneck packets/wall-s {:.3} M",
        st.bottleneck_packets as f64 / wall / 1e6
    );
    println!(
        "events/wall-s             {:.3} M",
        st.events as f64 / wall / 1e6
    );
    println!("simulated s/wall-s        {:.2}", duration / wall);
    println!("utilization (data dir.)   {:.4}", s.reverse.utilization);
    println!("loss rate (data dir.)     {:.5}", s.reverse.loss_rate);
    println!("peak packets in flight    {}", st.peak_packets_in_flight);
    println!("connections opened        {}", st.connections_opened);
    println!(
        "connections/wall-s        {:.0}",
        st.connections_opened as f64 / wall
    );
    println!("connection slots          {}", st.connection_slots);
    if st.connection_slots > 0 {
        println!(
            "memory per open connection {:.0} B ({:.1} MiB in all)",
            st.connection_bytes as f64 / st.connection_slots as f64,
            st.connection_bytes as f64 / (1 << 20) as f64
        );
    }
    println!("exchanges recorded        {exchanges}");
    println!("exchanges/wall-s          {:.0}", exchanges as f64 / wall);
    match peak_resident_mib() {
        Some(m) => println!("peak resident memory      {m:.1} MiB"),
        None => println!("peak resident memory      (unknown: no /proc/self/status)"),
    }
    if let Some(h) = digest {
        println!("records digest            {:016x}", h.finish());
    }
    for (name, h) in &columns {
        println!("column digest {name} {:016x}", h.finish());
    }
}

/// Rows of the `exchanges` table among `tables` (HTTP request/response exchanges recorded: all
/// of them after the warm-up, unfinished ones at the end included).
fn exchange_rows(tables: &[Table]) -> usize {
    tables
        .iter()
        .filter(|t| t.name == "exchanges")
        .map(Table::rows)
        .sum()
}

/// The process's peak resident set size so far (`VmHWM` of /proc/self/status), in MiB.
fn peak_resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// A running digest: XXH64 with seed 0 (xxHash's specification, from the `xxhash-rust` crate)
/// of the values fed to it, each encoded explicitly rather than through `std::hash::Hash`
/// (whose byte stream, like `DefaultHasher`'s algorithm, may change between Rust releases and
/// depends on the platform's byte order): an integer or a float's bits as 8 little-endian
/// bytes, a bool as one byte, a string as its length (8 bytes) and its UTF-8 bytes.
struct Digest(Xxh64);

impl Default for Digest {
    fn default() -> Self {
        Digest(Xxh64::new(0))
    }
}

impl Digest {
    fn u64(&mut self, x: u64) {
        self.0.update(&x.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.update(s.as_bytes());
    }

    fn finish(&self) -> u64 {
        self.0.digest()
    }
}

fn hash_tables(h: &mut Digest, tables: &[Table]) {
    for t in tables {
        h.str(t.name);
        for (name, col) in &t.columns {
            h.str(name);
            hash_column(h, col);
        }
    }
}

/// One batch of a column: a tag of its type before each value, then the values. No batch
/// lengths: where a drain cuts a table into batches is not an outcome (a row made at the end
/// of the run may come with the last drain or with `finish`), so the digest of a column is
/// that of its rows in order, whatever the batches.
fn hash_column(h: &mut Digest, col: &Column) {
    let tag = match col {
        Column::U64(_) => b'u',
        Column::I64(_) => b'i',
        Column::F64(_) => b'f',
        Column::Bool(_) => b'b',
        Column::Str(_) => b's',
    };
    match col {
        Column::U64(v) => v.iter().for_each(|&x| {
            h.0.update(&[tag]);
            h.u64(x)
        }),
        Column::I64(v) => v.iter().for_each(|&x| {
            h.0.update(&[tag]);
            h.u64(x as u64)
        }),
        Column::F64(v) => v.iter().for_each(|x| {
            h.0.update(&[tag]);
            h.u64(x.to_bits())
        }),
        Column::Bool(v) => v.iter().for_each(|&x| h.0.update(&[tag, x as u8])),
        Column::Str(v) => v.iter().for_each(|s| {
            h.0.update(&[tag]);
            h.str(s)
        }),
    }
}

/// One running hash per `table.column`, over every batch drained.
fn hash_columns(out: &mut BTreeMap<String, Digest>, tables: &[Table]) {
    for t in tables {
        for (name, col) in &t.columns {
            hash_column(out.entry(format!("{}.{name}", t.name)).or_default(), col);
        }
    }
}

/// One hash per leaf of the summary (`summary.forward.loss_rate`, ...), by its JSON text.
fn hash_json(out: &mut BTreeMap<String, Digest>, path: &str, v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                hash_json(out, &format!("{path}.{k}"), x);
            }
        },
        leaf => out
            .entry(path.to_string())
            .or_default()
            .str(&leaf.to_string()),
    }
}
