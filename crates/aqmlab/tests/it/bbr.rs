//! Pacing and BBR v1 (Linux `tcp_output.c`'s internal pacing, `tcp_rate.c`, `tcp_bbr.c`):
//! the pacer's departure times on a hand-computed case; BBR's state machine, bandwidth and
//! min-RTT estimates and queue on one flow through a 10 Mb/s, 40 ms bottleneck; PROBE_RTT;
//! BBR and CUBIC sharing a bottleneck.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::RttConfig;
use aqmlab::packet::Packet;
use aqmlab::sim::Simulation;
use aqmlab::tcp::bbr::Mode;
use aqmlab::tcp::config::{CongestionControl, TcpConfig};
use aqmlab::tcp::{Endpoint, Outbox};
use aqmlab::units::{Time, MS, SEC};

use crate::common::*;

const LMSS: u64 = 1448;

/// Linux Reno with pacing: after an ACK, segments leave one by one at the pacer's
/// deadlines, `len / rate` apart (`tcp_update_skb_after_send`), the first one less the
/// credit of its late start (at most half an interval); the first 10 segments are not
/// paced; the rate is `tcp_update_pacing_rate`'s.
#[test]
fn pacing_intervals_equal_len_over_rate() {
    let mut cfg = TcpConfig::linux_reno();
    cfg.pacing = true;
    // No tail-loss probe timer: the only deadlines are the pacer's and the RTO.
    cfg.rack_tlp = false;
    let (_, mut sv) = handshake(&cfg, &cfg);
    let mut out = Outbox::default();
    let t0 = 10 * MS;
    sv.write(t0, &cfg, 1000 * LMSS, &mut out);
    // The initial window goes out at once: 10 segments, the first 10 are not paced...
    assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 10);
    // ...but the 10th set a departure time one interval after t0 (no pacing timer: nothing
    // is held, the window is full).
    let r0 = sv.pacing_rate().unwrap();
    assert!(r0 > 0 && r0 < u64::MAX, "rate set at establishment: {r0}");
    let iv0 = LMSS * SEC / r0;
    assert!(
        sv.next_deadline().unwrap() >= t0 + 200 * MS,
        "only the retransmit timer"
    );
    out.clear();
    // The ACK of 2 segments at t1 = t0 + 40 ms: cwnd 12, and a new rate.
    let t1 = t0 + 40 * MS;
    let ack = Packet {
        flags: aqmlab::packet::flags::ACK,
        ack: 1 + 2 * LMSS,
        seq: 1,
        ..Default::default()
    };
    sv.on_segment(t1, &cfg, &ack, &mut out);
    let r1 = sv.pacing_rate().unwrap();
    // 200 % of cwnd·mss/SRTT in slow start (Linux's integer formula).
    let srtt8 = (sv.rto.srtt_s() * 8e6) as u64;
    let want = (LMSS as u128 * 80_000 * 200 * 12 / srtt8 as u128) as u64;
    assert_eq!(r1, want);
    let iv = LMSS * SEC / r1;
    // One segment at once (the departure time is past), then held: its interval less the
    // credit (t1 − the old departure time, capped at half an interval).
    assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 1);
    let credit = (t1 - (t0 + iv0)).min(iv / 2);
    let mut due = t1 + iv - credit;
    assert_eq!(sv.next_deadline(), Some(due));
    // At each deadline one more segment, the next one exactly len/rate later, until the
    // window (12, with 8 outstanding after the ACK) is full: 1 + 3 segments.
    for k in 0..3 {
        out.clear();
        sv.on_timer(due, &cfg, &mut out);
        assert_eq!(
            out.segs.iter().filter(|s| s.len > 0).count(),
            1,
            "segment {k}"
        );
        if k < 2 {
            due += iv;
            assert_eq!(sv.next_deadline(), Some(due), "segment {k}");
        } else {
            assert!(sv.next_deadline().unwrap() >= t1 + 200 * MS, "cwnd-limited");
        }
    }
    // Without pacing nothing is held: all 3 new segments at once on the ACK.
    let cfg2 = TcpConfig::linux_reno();
    let (_, mut sv2) = handshake(&cfg2, &cfg2);
    sv2.write(t0, &cfg2, 1000 * LMSS, &mut out);
    out.clear();
    sv2.on_segment(t1, &cfg2, &ack, &mut out);
    assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 4);
    assert_eq!(sv2.pacing_rate(), None);
}

/// One BBR download through a 10 Mb/s bottleneck, 40 ms propagation RTT, 100-packet
/// drop-tail buffer; the server's BBR state sampled every 10 ms.
struct BbrRun {
    sim: Simulation,
    /// (time, mode, cycle index, bw in bytes/s, min_rtt µs, cwnd segments).
    samples: Vec<(Time, Mode, u32, f64, u64, u64)>,
    /// (time, bottleneck queue in packets), every 10 ms.
    queue: Vec<(Time, u32)>,
    secs: f64,
}

fn bbr_run(secs: f64) -> BbrRun {
    bbr_run_with(secs, TcpConfig::linux_bbr(), 100)
}

fn bbr_run_with(secs: f64, tcp: TcpConfig, limit: u64) -> BbrRun {
    let mut sc = base(secs);
    sc.tcp = tcp;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 1000.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 40.0 };
    sc.queue = AqmConfig::Droptail {
        limit,
        unit: QueueUnit::Packets,
    };
    sc.traffic = vec![bulk(1, None)];
    let mut sim = Simulation::new(sc).unwrap();
    let mut samples = Vec::new();
    let mut queue = Vec::new();
    let mut t = 0;
    let end = sim.end_time();
    while t < end {
        t += 10 * MS;
        sim.run_until(t);
        queue.push((t, sim.link(sim.topology().reverse()).queue.len().packets));
        let eps: Vec<_> = sim.endpoints().collect();
        if let Some(b) = eps.first().and_then(|e| e[1].bbr()) {
            samples.push((
                t,
                b.mode,
                b.cycle_idx,
                b.bw_bytes_per_sec(),
                b.min_rtt_us,
                eps[0][1].cwnd() / LMSS,
            ));
        }
    }
    BbrRun {
        sim,
        samples,
        queue,
        secs,
    }
}

/// STARTUP ends after three rounds without 25 % more bandwidth, DRAIN follows, then
/// PROBE_BW cycles through all 8 gain phases; the bandwidth estimate is the bottleneck's
/// payload rate within 3 %, the min RTT 40 ms plus a packet's serialisation; the queue stays
/// well below a BDP while the link is used fully; 10 s without a lower RTT bring PROBE_RTT
/// (cwnd 4), which ends after 200 ms back in PROBE_BW.
#[test]
fn bbr_state_machine_on_one_flow() {
    let run = bbr_run(25.0);
    assert_eq!(
        run.sim.scenario().tcp.congestion_control,
        CongestionControl::Bbr
    );
    let eps: Vec<_> = run.sim.endpoints().collect();
    let b = eps[0][1].bbr().expect("BBR running");
    let modes: Vec<Mode> = b.log.iter().map(|&(_, m)| m).collect();
    println!("mode log: {:?}", b.log);
    assert_eq!(
        &modes[..4],
        &[Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt]
    );
    assert!(b.full_bw_reached);
    assert_eq!(b.full_bw_cnt, 3, "three rounds without growth");
    let startup_end = b.log[1].0 as f64 * 1e-6;
    let drain_end = b.log[2].0 as f64 * 1e-6;
    assert!(startup_end < 1.5, "STARTUP ended at {startup_end} s");
    assert!(
        drain_end - startup_end < 0.5,
        "DRAIN ended at {drain_end} s"
    );
    // PROBE_RTT about 10 s after the min RTT was last lowered (in STARTUP), for 200 ms
    // plus a round, at cwnd 4.
    let probe_rtt = b.log[3].0 as f64 * 1e-6;
    assert!(
        (9.5..12.0).contains(&probe_rtt),
        "PROBE_RTT at {probe_rtt} s"
    );
    assert_eq!(modes.get(4), Some(&Mode::ProbeBw));
    let probe_rtt_len = b.log[4].0 as f64 * 1e-6 - probe_rtt;
    assert!(
        (0.2..0.35).contains(&probe_rtt_len),
        "PROBE_RTT lasted {probe_rtt_len} s"
    );
    let in_probe_rtt: Vec<_> = run
        .samples
        .iter()
        .filter(|s| s.1 == Mode::ProbeRtt)
        .collect();
    assert!(in_probe_rtt.iter().all(|s| s.5 <= 4), "cwnd 4 in PROBE_RTT");
    assert!(
        b.probe_rtt_count >= 2,
        "again 10 s later: {}",
        b.probe_rtt_count
    );
    // All 8 phases of the gain cycle visited in PROBE_BW.
    let mut phases = [0u32; 8];
    for s in run.samples.iter().filter(|s| s.1 == Mode::ProbeBw) {
        phases[s.2 as usize] += 1;
    }
    assert!(phases.iter().all(|&n| n > 0), "phases {phases:?}");
    // Bottleneck bandwidth: 10 Mb/s of 1500-byte packets carrying 1448 bytes.
    let payload_rate = 10e6 / 8.0 * 1448.0 / 1500.0;
    let bw = b.bw_bytes_per_sec();
    println!(
        "bw estimate {:.0} B/s = {:.4} of the payload rate",
        bw,
        bw / payload_rate
    );
    assert!((bw / payload_rate - 1.0).abs() < 0.03, "bw {bw}");
    // min RTT: 40 ms + 1.2 ms serialisation at 10 Mb/s (+ µs on the access links).
    let min_rtt_ms = b.min_rtt_us as f64 / 1000.0;
    println!("min_rtt {min_rtt_ms:.3} ms");
    assert!(
        (41.0..42.5).contains(&min_rtt_ms),
        "min_rtt {min_rtt_ms} ms"
    );
    // Queue and utilisation after STARTUP (the link's whole-run statistics).
    let q = &run.sim.link(run.sim.topology().reverse()).queue.stats;
    let pkt_bits = (q.departure_bytes as f64 / q.departures as f64) * 8.0;
    let util = q.departure_bytes as f64 * 8.0 / (10e6 * run.secs);
    let soj = q.sojourn.as_ref().unwrap();
    let mean_pkts = soj.mean() * 1e-9 * 10e6 / pkt_bits;
    let p99 = soj.quantile(0.99) as f64 * 1e-9 * 10e6 / pkt_bits;
    println!(
        "utilisation {util:.4}, mean queue {mean_pkts:.2} packets ({:.2} ms), p99 {p99:.1} \
         packets, drops {}, retransmits {}",
        soj.mean() * 1e-6,
        q.drops(),
        eps[0][1].counters.data_retransmits
    );
    // After STARTUP and DRAIN (from 2 s): the queue sampled every 10 ms. The 3/4 phase
    // stops draining once in flight is down to bbr_inflight(bw, 1) = BDP + 3·2 quanta
    // (rounded up to even): up to ~7 packets stay queued, and the gain-1 phases pace only
    // 1 % under the estimate, so a few packets stand in the queue, as in Linux at this rate.
    let steady: Vec<f64> = run
        .queue
        .iter()
        .filter(|&&(t, _)| t >= 2 * SEC)
        .map(|&(_, n)| n as f64)
        .collect();
    let steady_mean = steady.iter().sum::<f64>() / steady.len() as f64;
    let steady_max = steady.iter().cloned().fold(0.0, f64::max);
    println!("queue from 2 s on: mean {steady_mean:.2} packets, max {steady_max}");
    assert!(steady_mean < 8.0, "steady-state queue {steady_mean}");
    assert!(steady_max < 20.0, "the 5/4 phase's queue {steady_max}");
    assert_eq!(q.drops(), 0, "no drops with a 100-packet buffer");
    assert!(util > 0.93, "utilisation {util}");
    assert!(mean_pkts < 10.0, "mean queue {mean_pkts} packets (BDP 35)");
}

/// Utilisation and mean queue (packets) of the bottleneck over the run.
fn link_use(run: &BbrRun) -> (f64, f64, u64) {
    let q = &run.sim.link(run.sim.topology().reverse()).queue.stats;
    let pkt_bits = (q.departure_bytes as f64 / q.departures as f64) * 8.0;
    let util = q.departure_bytes as f64 * 8.0 / (10e6 * run.secs);
    let mean = q.sojourn.as_ref().unwrap().mean() * 1e-9 * 10e6 / pkt_bits;
    (util, mean, q.drops())
}

/// A 10-packet buffer (0.3 BDP): STARTUP overflows it, SACK recovery and BBR's recovery
/// cwnd (packet conservation, then the saved cwnd) follow; BBR v1 does not back off for
/// loss below its policer test, so the link stays busy; the run ends in PROBE_BW or
/// PROBE_RTT without a timeout.
#[test]
fn bbr_with_a_shallow_buffer_keeps_the_link_busy() {
    let run = bbr_run_with(20.0, TcpConfig::linux_bbr(), 10);
    let (util, mean, drops) = link_use(&run);
    let eps: Vec<_> = run.sim.endpoints().collect();
    let (sv, b) = (&eps[0][1], eps[0][1].bbr().unwrap());
    println!(
        "10-packet buffer: utilisation {util:.4}, mean queue {mean:.2}, drops {drops}, \
         retransmits {}, timeouts {}, mode log {:?}",
        sv.counters.data_retransmits, sv.counters.timeouts, b.log
    );
    if std::env::var_os("BBR_TRACE").is_some() {
        for x in run.samples.iter().step_by(10) {
            println!(
                "{:.2} {:?} idx {} bw {:.0} minrtt {} cwnd {}",
                x.0 as f64 * 1e-9,
                x.1,
                x.2,
                x.3,
                x.4,
                x.5
            );
        }
    }
    assert!(
        drops > 0 && sv.counters.data_retransmits > 0,
        "losses happened"
    );
    assert!(util > 0.9, "utilisation {util}");
    assert!(b.full_bw_reached && !b.lt_use_bw);
    let bw = b.bw_bytes_per_sec() / (10e6 / 8.0 * 1448.0 / 1500.0);
    assert!((bw - 1.0).abs() < 0.03, "bw estimate {bw} of the link");
}

/// `pacing = true` on Linux CUBIC through the 10 Mb/s bottleneck: the flow runs at full
/// utilisation with a pacing rate of 120 % of cwnd/SRTT (1–5 MB/s here); without the key
/// there is no pacer at all.
#[test]
fn paced_cubic_runs_through_a_bottleneck() {
    let mut tcp = TcpConfig::linux_cubic();
    tcp.pacing = true;
    let paced = bbr_run_with(20.0, tcp, 100);
    let unpaced = bbr_run_with(20.0, TcpConfig::linux_cubic(), 100);
    let (up, mp, dp) = link_use(&paced);
    let (uu, mu, du) = link_use(&unpaced);
    let rate = paced.sim.endpoints().next().unwrap()[1]
        .pacing_rate()
        .unwrap();
    println!(
        "paced CUBIC: utilisation {up:.4}, mean queue {mp:.1}, drops {dp}, rate {rate} B/s; \
         unpaced: {uu:.4}, {mu:.1}, {du}"
    );
    assert!(rate > 1_000_000 && rate < 5_000_000, "pacing rate {rate}");
    assert!(up > 0.9 && uu > 0.9);
    assert!(unpaced.sim.endpoints().next().unwrap()[1]
        .pacing_rate()
        .is_none());
}

// ----- a two-sender bottleneck built by hand, for BBR against CUBIC -----

#[derive(Debug)]
enum Ev {
    /// A packet reaches endpoint `side` (0 client, 1 server) of flow `f`.
    Arrive(usize, usize, Packet),
    /// The bottleneck finishes sending its head packet.
    Departed,
    /// Endpoint `side` of flow `f` may have a timer due.
    Timer(usize, usize),
}

struct Net {
    cfgs: Vec<TcpConfig>,
    eps: Vec<[Endpoint; 2]>,
    ev: BinaryHeap<Reverse<(Time, u64, usize)>>,
    evs: Vec<Option<Ev>>,
    seq: u64,
    queue: VecDeque<(usize, Packet)>,
    limit: usize,
    busy: bool,
    /// Serialisation time of a byte (ns), one-way propagation delay.
    ns_per_byte: f64,
    one_way: Time,
    timer_at: Vec<[Time; 2]>,
    delivered: Vec<u64>,
    drops: u64,
    queue_area: f64,
    last_q_change: Time,
}

impl Net {
    fn push(&mut self, t: Time, e: Ev) {
        self.seq += 1;
        self.evs.push(Some(e));
        self.ev.push(Reverse((t, self.seq, self.evs.len() - 1)));
    }

    fn enqueue(&mut self, now: Time, f: usize, p: Packet) {
        if self.queue.len() >= self.limit {
            self.drops += 1;
            return;
        }
        self.queue_area += self.queue.len() as f64 * (now - self.last_q_change) as f64;
        self.last_q_change = now;
        self.queue.push_back((f, p));
        if !self.busy {
            self.start_tx(now);
        }
    }

    fn start_tx(&mut self, now: Time) {
        if let Some((_, p)) = self.queue.front() {
            self.busy = true;
            let bytes = p.len as f64 + 52.0;
            self.push(now + (bytes * self.ns_per_byte) as Time, Ev::Departed);
        } else {
            self.busy = false;
        }
    }

    /// Sends what endpoint `side` of flow `f` put in `out`, and re-arms its timer.
    fn after_call(&mut self, now: Time, f: usize, side: usize, out: &mut Outbox) {
        self.delivered[f] += out.delivered;
        out.delivered = 0;
        for s in out.segs.drain(..) {
            let p = to_packet(&s);
            if side == 1 {
                self.enqueue(now, f, p);
            } else {
                self.push(now + self.one_way, Ev::Arrive(f, 1, p));
            }
        }
        if let Some(d) = self.eps[f][side].next_deadline() {
            if d < self.timer_at[f][side] || self.timer_at[f][side] <= now {
                self.timer_at[f][side] = d;
                self.push(d.max(now), Ev::Timer(f, side));
            }
        }
    }

    fn run(&mut self, end: Time) {
        let mut out = Outbox::default();
        while let Some(Reverse((t, _, i))) = self.ev.pop() {
            if t > end {
                break;
            }
            match self.evs[i].take().unwrap() {
                Ev::Arrive(f, side, p) => {
                    let cfg = self.cfgs[f].clone();
                    self.eps[f][side].on_segment(t, &cfg, &p, &mut out);
                    self.after_call(t, f, side, &mut out);
                },
                Ev::Departed => {
                    self.queue_area += self.queue.len() as f64 * (t - self.last_q_change) as f64;
                    self.last_q_change = t;
                    let (f, p) = self.queue.pop_front().unwrap();
                    self.push(t + self.one_way, Ev::Arrive(f, 0, p));
                    self.start_tx(t);
                },
                Ev::Timer(f, side) => {
                    if self.timer_at[f][side] == t {
                        self.timer_at[f][side] = Time::MAX;
                    }
                    if self.eps[f][side].next_deadline().is_some_and(|d| d <= t) {
                        let cfg = self.cfgs[f].clone();
                        self.eps[f][side].on_timer(t, &cfg, &mut out);
                    }
                    self.after_call(t, f, side, &mut out);
                },
            }
        }
    }
}

/// A BBR flow and a CUBIC flow share a 10 Mb/s bottleneck (40 ms RTT, 100-packet
/// drop-tail buffer) for 30 s: no panic, both get a share, the link stays busy.
#[test]
fn bbr_and_cubic_share_a_bottleneck() {
    let cfgs = vec![TcpConfig::linux_bbr(), TcpConfig::linux_cubic()];
    let n = cfgs.len();
    let mut net = Net {
        eps: Vec::new(),
        cfgs: cfgs.clone(),
        ev: BinaryHeap::new(),
        evs: Vec::new(),
        seq: 0,
        queue: VecDeque::new(),
        limit: 100,
        busy: false,
        ns_per_byte: 8.0 * 1e9 / 10e6,
        one_way: 20 * MS,
        timer_at: vec![[Time::MAX; 2]; n],
        delivered: vec![0; n],
        drops: 0,
        queue_area: 0.0,
        last_q_change: 0,
    };
    for (f, cfg) in cfgs.iter().enumerate() {
        let mut cl = Endpoint::new(cfg, 0);
        let mut sv = Endpoint::new(cfg, 0);
        sv.set_cc_seed(f as u64 + 7);
        sv.listen(0);
        let mut out = Outbox::default();
        let t0 = f as Time * 3 * MS;
        cl.connect(t0, cfg, &mut out);
        net.eps.push([cl, sv]);
        net.after_call(t0, f, 0, &mut out);
    }
    // The servers write once the connections are up; a generous write at the start does
    // the same here (an unbounded buffer).
    let mut out = Outbox::default();
    net.run(200 * MS);
    for (f, cfg) in cfgs.iter().enumerate() {
        net.eps[f][1].write(200 * MS, cfg, 1 << 40, &mut out);
        net.after_call(200 * MS, f, 1, &mut out);
    }
    let secs = 30.0;
    net.run((secs * SEC as f64) as Time);
    let rates: Vec<f64> = net
        .delivered
        .iter()
        .map(|&d| d as f64 * 8.0 / secs / 1e6)
        .collect();
    let total: f64 = rates.iter().sum();
    let mean_q = net.queue_area / (secs * SEC as f64);
    println!(
        "BBR {:.2} Mb/s, CUBIC {:.2} Mb/s, mean queue {mean_q:.1} packets, {} drops; \
         BBR mode {:?}, retransmits BBR {} CUBIC {}",
        rates[0],
        rates[1],
        net.drops,
        net.eps[0][1].bbr().map(|b| b.mode),
        net.eps[0][1].counters.data_retransmits,
        net.eps[1][1].counters.data_retransmits
    );
    assert!(net.eps[0][1].bbr().is_some());
    assert!(
        rates.iter().all(|&r| r > 0.5),
        "both flows get a share: {rates:?}"
    );
    assert!(
        total > 0.9 * 10.0 * 1448.0 / 1500.0,
        "link used: {total} Mb/s"
    );
}
