//! Per-flow profile of the data senders of a resolved scenario (JSON, as
//! `aqmlab.scenario.to_json(resolve(doc))` writes it): sampled every 10 ms over the measured
//! window, what the Linux testbed's TCP_INFO samples give for the kernel (cwnd, pacing rate,
//! the loss states, RTO and SRTT) and BBR's own state (mode, long-term "policer" bandwidth in
//! use); then the counters over the whole run (timeouts, retransmissions, tail loss probes,
//! F-RTO's outcomes),
//! and each flow's goodput over the measured window (bytes cumulatively ACKed) with Jain's
//! index.
//!
//!     cargo run --release -p aqmlab --example bbr_flows -- scenario.json
//!
//! One line per flow, then the means over flows. Made to compare aqmlab's `linux-bbr` with
//! the testbed's per-flow records (validation/linux, `tcp_info.csv`).

use aqmlab::config::Scenario;
use aqmlab::sim::Simulation;
use aqmlab::tcp::bbr::Mode;
use aqmlab::units::{Time, MS, SEC};

/// What one sender's samples add up to.
#[derive(Default, Clone)]
struct Profile {
    samples: u64,
    cwnd: f64,
    pacing_mbit: f64,
    /// The RTO (backoff included, as `tcpi_rto`) and SRTT, ms.
    rto_ms: f64,
    srtt_ms: f64,
    /// Samples in Recovery, in the timeout's Loss state, with the long-term bandwidth in use,
    /// and in each BBR mode (STARTUP, DRAIN, PROBE_BW, PROBE_RTT).
    recovery: u64,
    loss: u64,
    lt_use_bw: u64,
    modes: [u64; 4],
}

fn mode_index(m: Mode) -> usize {
    match m {
        Mode::Startup => 0,
        Mode::Drain => 1,
        Mode::ProbeBw => 2,
        Mode::ProbeRtt => 3,
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: bbr_flows SCENARIO.json");
    let text = std::fs::read_to_string(&path).expect("read the scenario");
    let sc = Scenario::from_json(&text).expect("a valid scenario");
    let mss = sc.tcp.mss as u64;
    let tcp = sc.tcp.clone();
    let warmup = (sc.warmup_s * SEC as f64) as Time;
    let mut sim = Simulation::new(sc).expect("a simulation");
    let end = sim.end_time();
    let mut prof: Vec<Profile> = Vec::new();
    // Bytes each sender had delivered (cumulatively ACKed) when the measured window began.
    let mut acked_at_warmup: Vec<u64> = Vec::new();
    let mut t = 0;
    while t < end {
        t += 10 * MS;
        sim.run_until(t);
        if t < warmup {
            continue;
        }
        if acked_at_warmup.is_empty() {
            acked_at_warmup = sim.endpoints().map(|p| p[1].bytes_acked()).collect();
        }
        for (k, pair) in sim.endpoints().enumerate() {
            let ep = &pair[1]; // the server sends the data
            if prof.len() <= k {
                prof.resize(k + 1, Profile::default());
            }
            let p = &mut prof[k];
            p.samples += 1;
            p.cwnd += (ep.cwnd() / mss) as f64;
            p.rto_ms += ep.rto.rto_ns(&tcp, false) as f64 * 1e-6;
            p.srtt_ms += ep.rto.srtt_s() * 1e3;
            p.recovery += ep.in_recovery() as u64;
            if let Some(c) = ep.linux_cong().and_then(|lx| lx.cold.as_deref()) {
                let in_loss = c.bbr_loss_high.is_some_and(|h| ep.snd_una() < h);
                p.loss += in_loss as u64;
            }
            if let Some(r) = ep.pacing_rate().filter(|&r| r != u64::MAX) {
                p.pacing_mbit += r as f64 * 8e-6;
            }
            if let Some(b) = ep.bbr() {
                p.modes[mode_index(b.mode)] += 1;
                p.lt_use_bw += b.lt_use_bw as u64;
            }
        }
    }
    println!("flow  cwnd  pacing_Mb/s  recov%  loss%  lt_bw%  startup% drain% probe_bw% probe_rtt%  timeouts  rexmits  fast_rexmits  tlp  probe_rtt_n  goodput_Mb/s  rto_ms  srtt_ms  spurious_rto  new_first  real_loss");
    let measured_s = (end - warmup) as f64 / SEC as f64;
    let mut goodputs = Vec::new();
    let mut sums = [0f64; 20];
    let n = prof.len().max(1) as f64;
    for (k, (p, pair)) in prof.iter().zip(sim.endpoints()).enumerate() {
        let ep = &pair[1];
        let s = p.samples.max(1) as f64;
        let pct = |x: u64| 100.0 * x as f64 / s;
        let tlp = ep.rack_state().map_or(0, |r| r.probes);
        let prtt = ep.bbr().map_or(0, |b| b.probe_rtt_count);
        // F-RTO's outcomes (`tcp/undo.rs`): timeouts undone, new data sent first, real losses.
        let f = ep.frto_state();
        let frto = |g: fn(&aqmlab::tcp::undo::Frto) -> u64| f.map_or(0.0, |f| g(f) as f64);
        let from = acked_at_warmup.get(k).copied().unwrap_or(0);
        let goodput = ep.bytes_acked().saturating_sub(from) as f64 * 8e-6 / measured_s;
        goodputs.push(goodput);
        let row = [
            p.cwnd / s,
            p.pacing_mbit / s,
            pct(p.recovery),
            pct(p.loss),
            pct(p.lt_use_bw),
            pct(p.modes[0]),
            pct(p.modes[1]),
            pct(p.modes[2]),
            pct(p.modes[3]),
            ep.counters.timeouts as f64,
            ep.counters.data_retransmits as f64,
            ep.counters.fast_retransmits as f64,
            tlp as f64,
            prtt as f64,
            goodput,
            p.rto_ms / s,
            p.srtt_ms / s,
            frto(|f| f.spurious_rtos),
            frto(|f| f.new_data_first),
            frto(|f| f.real_losses),
        ];
        for (a, b) in sums.iter_mut().zip(row) {
            *a += b;
        }
        print!("{k:4}");
        for v in row {
            print!(" {v:9.2}");
        }
        println!();
    }
    print!("mean");
    for v in sums {
        print!(" {:9.2}", v / n);
    }
    println!();
    // Aggregate goodput and Jain's index over the flows, as the testbed's comparison has them.
    let total: f64 = goodputs.iter().sum();
    let squares: f64 = goodputs.iter().map(|g| g * g).sum();
    let jain = total * total / (goodputs.len().max(1) as f64 * squares.max(f64::MIN_POSITIVE));
    println!("aggregate goodput {total:.3} Mb/s, Jain's index {jain:.3}");
}
