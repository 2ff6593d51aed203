//! CUBIC and the Linux presets: single connections with scripted losses on a fixed RTT,
//! checked against RFC 9438's closed form and Linux's rules.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{RttConfig, Scenario};
use aqmlab::net::link::ScriptedLoss;
use aqmlab::sim::{Simulation, TraceEntry};
use aqmlab::tcp::config::{CongestionControl, TcpConfig};
use aqmlab::units::{MS, SEC};

use crate::common::*;

/// The Linux presets' segment size.
const LMSS: u64 = 1448;
/// RFC 9438 §4.1.1.
const C: f64 = 0.4;
const BETA: f64 = 0.7;

/// A greedy download over `base()` (1 Gb/s, no queueing) with a fixed RTT, the server
/// running `tcp`; data segments `lost` (numbered from 0) dropped once. Traced.
fn greedy(tcp: TcpConfig, rtt_ms: f64, seconds: f64, lost: &[u64]) -> Simulation {
    let mut sc = base(seconds);
    sc.tcp = tcp;
    sc.rtt = RttConfig::Constant { rtt_ms };
    sc.traffic = vec![bulk(1, None)];
    run_losing(sc, lost)
}

fn run_losing(sc: Scenario, lost: &[u64]) -> Simulation {
    let mss = sc.tcp.mss as u64;
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let link = sim.topology().reverse(); // the server is on the right
    lose_segments(&mut sim, link, mss, lost);
    run_traced(sim).0
}

/// The server's data segments.
fn data(sim: &Simulation) -> Vec<TraceEntry> {
    sim.trace()
        .iter()
        .filter(|e| e.side == 1 && e.len > 0)
        .copied()
        .collect()
}

fn secs_of(t: u64) -> f64 {
    t as f64 * 1e-9
}

/// A congestion event seen in the trace: the window before it (W_max, segments), the
/// ssthresh it set, and when the next epoch began (the first increase after recovery).
struct Event {
    w_max: u64,
    ssthresh: u64,
    epoch: f64,
    /// Index in `data` of the fast retransmission.
    at: usize,
}

/// The `n`-th fast retransmission of `d` and what followed it.
fn event(d: &[TraceEntry], n: usize) -> Event {
    let at = d
        .iter()
        .enumerate()
        .filter(|(_, e)| e.retransmit)
        .nth(n)
        .expect("a retransmission")
        .0;
    let w_max = d[at - 1].cwnd / LMSS;
    let ssthresh = d[at].ssthresh / LMSS;
    // With PRR cwnd comes down to ssthresh over the recovery: the epoch starts at the first
    // growth above ssthresh after it got there.
    let low = at
        + d[at..]
            .iter()
            .position(|e| e.cwnd / LMSS <= ssthresh)
            .expect("cwnd down to ssthresh");
    let epoch = d[low..]
        .iter()
        .find(|e| e.cwnd / LMSS > ssthresh)
        .map(|e| secs_of(e.t))
        .expect("growth after recovery");
    Event {
        w_max,
        ssthresh,
        epoch,
        at,
    }
}

/// Largest |cwnd − W_cubic| (segments) over the data segments sent between `from` and `to`
/// seconds after the epoch, for RFC 9438 eq. 1–2 with the given W_max and
/// cwnd_epoch = ssthresh; and the tolerance there, 2 segments + 1 %.
fn worst_deviation(d: &[TraceEntry], ev: &Event, w_max: f64, from: f64, to: f64) -> (f64, f64) {
    let k = ((w_max - ev.ssthresh as f64) / C).cbrt();
    let mut worst: (f64, f64) = (0.0, 0.0);
    for e in d {
        let t = secs_of(e.t) - ev.epoch;
        if t < from || t > to {
            continue;
        }
        let w = C * (t - k).powi(3) + w_max;
        let dev = (e.cwnd as f64 / LMSS as f64 - w).abs();
        if dev - (2.0 + 0.01 * w) > worst.0 - worst.1 {
            worst = (dev, 2.0 + 0.01 * w);
        }
    }
    worst
}

/// One loss on a 100 ms path, far from any Reno-friendly region: ssthresh = ⌊0.7·W_max⌋
/// (β = 717/1024) and then the window follows RFC 9438's W_cubic(t) = C·(t − K)³ + W_max,
/// K = ∛(W_max·(1 − β)/C), t from the start of the epoch, through the concave plateau at
/// W_max and well into the convex region, within 2 segments + 1 % (Linux's fixed point: C =
/// 410/1024, times in 1/1024 s, whole segments).
#[test]
fn cubic_window_follows_w_cubic_after_a_loss() {
    let mut tcp = TcpConfig::linux_cubic();
    tcp.hystart = false;
    let sim = greedy(tcp, 100.0, 20.0, &[400]);
    let d = data(&sim);
    let ev = event(&d, 0);
    assert!((300..500).contains(&ev.w_max), "W_max {}", ev.w_max);
    assert_eq!(ev.ssthresh, ev.w_max * 717 / 1024);
    assert!((ev.ssthresh as f64 / ev.w_max as f64 - BETA).abs() < 0.01);
    // Recovery (SACK) lasts one RTT, then the epoch starts.
    let rtx = secs_of(d[ev.at].t);
    assert!((ev.epoch - rtx - 0.1).abs() < 0.01, "epoch at {}", ev.epoch);
    let k = (ev.w_max as f64 * (1.0 - BETA) / C).cbrt();
    assert!(k > 6.0, "K {k} s: the run covers both regions");
    let (dev, tol) = worst_deviation(&d, &ev, ev.w_max as f64, 0.2, 19.0 - ev.epoch);
    assert!(
        dev <= tol,
        "cwnd {dev:.1} segments from W_cubic (tolerance {tol:.1})"
    );
    // The plateau: within 2 % of W_max from K − 1 s to K + 1 s.
    for e in &d {
        let t = secs_of(e.t) - ev.epoch;
        if (k - 1.0..k + 1.0).contains(&t) {
            let w = (e.cwnd / LMSS) as f64;
            assert!((w / ev.w_max as f64 - 1.0).abs() < 0.02, "{w} at t = {t}");
        }
    }
}

/// Fast convergence (RFC 9438 §4.7): a second loss before the window is back at W_max sets
/// W_max = cwnd·(1 + β)/2 (Linux: cwnd·1741/2048), not cwnd, and the curve after it plateaus
/// there.
#[test]
fn fast_convergence_lowers_w_max() {
    let mut tcp = TcpConfig::linux_cubic();
    tcp.hystart = false;
    // Find a segment sent about 3 s in, then lose it too: the runs agree until then.
    let one = data(&greedy(tcp.clone(), 100.0, 4.0, &[400]));
    let late = one
        .iter()
        .find(|e| e.t >= 3 * SEC && !e.retransmit)
        .unwrap();
    let k2 = (late.seq - 1) / LMSS;
    let sim = greedy(tcp, 100.0, 14.0, &[400, k2]);
    let d = data(&sim);
    let first = event(&d, 0);
    let ev = event(&d, 1);
    assert!(ev.w_max < first.w_max, "{} < {}", ev.w_max, first.w_max);
    assert_eq!(ev.ssthresh, ev.w_max * 717 / 1024);
    let fc = (ev.w_max * 1741 / 2048) as f64;
    let (dev, tol) = worst_deviation(&d, &ev, fc, 0.2, 13.5 - ev.epoch);
    assert!(
        dev <= tol,
        "{dev:.1} segments from W_cubic with W_max = {fc} ({tol:.1})"
    );
    // Without fast convergence the curve would plateau at cwnd itself: far off.
    let (dev, tol) = worst_deviation(&d, &ev, ev.w_max as f64, 0.2, 13.5 - ev.epoch);
    assert!(dev > 3.0 * tol, "{dev:.1} ({tol:.1})");
}

/// RFC 9438 §4.3: with a short RTT (4 ms) and a small window the cubic curve hardly moves for
/// seconds (K ≈ 4 s), and the Reno-friendly estimate sets the pace: ≈ 0.53 segments per RTT
/// (Linux: one per ⌊15·cwnd/8⌋ ACKed segments, 8/15 per RTT).
#[test]
fn reno_friendly_region_takes_over_at_small_rtt() {
    let mut tcp = TcpConfig::linux_cubic();
    tcp.hystart = false;
    let rtt = 4.0;
    let sim = greedy(tcp, rtt, 4.0, &[100]);
    let d = data(&sim);
    let ev = event(&d, 0);
    let at = |t: f64| {
        d.iter()
            .find(|e| secs_of(e.t) >= ev.epoch + t)
            .map(|e| e.cwnd / LMSS)
            .unwrap() as f64
    };
    let (t0, t1) = (0.5, 2.5);
    let per_rtt = (at(t1) - at(t0)) / ((t1 - t0) * 1000.0 / rtt);
    assert!(
        (per_rtt - 8.0 / 15.0).abs() < 0.05,
        "{per_rtt} segments per RTT (W_max {})",
        ev.w_max
    );
    // The cubic function alone would still be below W_max.
    let k = ((ev.w_max - ev.ssthresh) as f64 / C).cbrt();
    let w_cubic = C * (t1 - k).powi(3) + ev.w_max as f64;
    assert!(
        k > t1 && at(t1) > w_cubic + 100.0,
        "{} vs {w_cubic}",
        at(t1)
    );
}

/// One greedy flow of `tcp` for 6 s through a 10 Mb/s bottleneck with a drop-tail buffer of
/// `limit` packets on a 50 ms path (BDP 42 packets): where slow start's exit shows.
fn slow_start_path(tcp: TcpConfig, limit: u64) -> Scenario {
    let mut sc = base(6.0);
    sc.tcp = tcp;
    sc.topology.bottleneck_mbps = 10.0;
    sc.queue = AqmConfig::Droptail {
        limit,
        unit: QueueUnit::Packets,
    };
    sc.rtt = RttConfig::Constant { rtt_ms: 50.0 };
    sc.traffic = vec![bulk(1, None)];
    sc
}

/// A 10 Mb/s bottleneck with a 300-packet buffer and a 50 ms path (BDP 42 packets): slow
/// start fills the buffer, the minimum of a round's RTT samples rises by more than
/// clamp(50/8, 4, 16) = 6.25 ms, and HyStart ends slow start (ssthresh = cwnd) before any
/// loss — a delay detection: at 10 Mb/s delayed ACKs come 2.4 ms apart, too far for an ACK
/// train (2 ms). It comes late, at 176 segments (a queue of 160 ms): a round's first samples
/// are of segments sent as the previous round began, before its queue formed, and their
/// minimum rises only once the queue outlasts a round. Without HyStart slow start runs on
/// until the buffer overflows (at some 340 segments).
#[test]
fn hystart_exits_slow_start_on_a_delay_increase() {
    let run = |hystart: bool| {
        let mut tcp = TcpConfig::linux_cubic();
        tcp.hystart = hystart;
        data(&run_losing(slow_start_path(tcp, 300), &[]))
    };
    let initial = TcpConfig::linux_cubic().initial_ssthresh;
    let d = run(true);
    let exit = d
        .iter()
        .position(|e| e.ssthresh != initial)
        .expect("slow start ended");
    let w = d[exit].ssthresh / LMSS;
    assert!((47..300).contains(&w), "HyStart exit at {w} segments");
    assert!(d[..=exit].iter().all(|e| !e.retransmit), "no loss before");
    assert_eq!(d[exit - 1].ssthresh, initial);
    assert!(d[exit].cwnd / LMSS <= w + 1, "ssthresh = cwnd at the exit");
    // Then congestion avoidance without W_max: cnt ≤ 20, one segment per 20 ACKed, 5 % per
    // RTT (the cubic curve from the origin would give almost nothing for a second, the
    // Reno-friendly estimate half a segment per RTT). The RTT is now 50 ms plus a queue of
    // (cwnd − 42)·1.2 ms: about 210 ms, 4.8 RTTs in a second.
    let t_exit = d[exit].t;
    let later = d.iter().find(|e| e.t >= t_exit + SEC).unwrap();
    let growth = (later.cwnd / LMSS) as f64 / w as f64;
    assert!(
        (1.05f64.powf(4.0)..1.05f64.powf(5.5)).contains(&growth),
        "{growth}"
    );

    let d = run(false);
    let first_cut = d.iter().position(|e| e.ssthresh != initial).unwrap();
    assert!(
        d[first_cut].retransmit,
        "without HyStart only a loss ends slow start"
    );
    assert!(d[first_cut - 1].cwnd / LMSS > 300);
}

/// Linux's framework for `linux_reno`: slow start adds the segments each ACK acknowledges (a
/// delayed ACK of 2 adds 2: IW 10 becomes 20 after one round, where the BSD arithmetic adds
/// one MSS per ACK: 15); a loss sets ssthresh = cwnd/2. The receivers here delay every ACK
/// (the BSD timer model: no quick-ACK mode), so that an ACK covers 2 segments; with the
/// preset's quick ACKs both arithmetics give 20.
#[test]
fn linux_reno_counts_segments_and_halves() {
    let mut tcp = TcpConfig::linux_reno();
    assert_eq!(tcp.congestion_control, CongestionControl::LinuxReno);
    let quick = data(&greedy(tcp.clone(), 100.0, 0.4, &[]));
    let mut bsd = tcp.clone();
    bsd.congestion_control = CongestionControl::Reno;
    let quick_bsd = data(&greedy(bsd, 100.0, 0.4, &[]));
    for d in [&quick, &quick_bsd] {
        let second: Vec<_> = d
            .iter()
            .filter(|e| e.t >= 250 * MS && e.t < 300 * MS)
            .collect();
        assert_eq!(second.len(), 20, "quick ACKs: one per segment");
    }
    tcp.timer_model = aqmlab::tcp::config::TimerModel::Bsd;
    tcp.tick_ms = 1.0;
    let sim = greedy(tcp.clone(), 100.0, 3.0, &[300]);
    let d = data(&sim);
    // The first round (segments 0-9) leaves at 150 ms, when the client's handshake ACK
    // arrives; its 5 delayed ACKs (2 segments each) come back from 250 ms and release the
    // second round: 20 segments, cwnd 20.
    let round = |d: &[TraceEntry], from: u64| -> Vec<TraceEntry> {
        d.iter()
            .filter(|e| e.t >= from * MS && e.t < (from + 50) * MS)
            .copied()
            .collect()
    };
    assert_eq!(round(&d, 150).len(), 10);
    let second = round(&d, 250);
    assert_eq!(second.last().unwrap().cwnd / LMSS, 20);
    assert_eq!(second.len(), 20);
    let ev = event(&d, 0);
    assert_eq!(ev.ssthresh, ev.w_max / 2);
    // The same with the stack's own (BSD) Reno arithmetic: one MSS per ACK.
    let mut bsd = tcp;
    bsd.congestion_control = CongestionControl::Reno;
    let d = data(&greedy(bsd, 100.0, 0.4, &[]));
    let second = round(&d, 250);
    assert_eq!(second.last().unwrap().cwnd / LMSS, 15);
    assert_eq!(second.len(), 15);
}

/// `tcp_is_cwnd_limited`: a sender held back by the receiver's window (20 segments) grows
/// cwnd in slow start only up to twice what it had outstanding, and not at all beyond; the
/// BSD arithmetic grows it on every ACK whatever limits the sender.
#[test]
fn linux_cwnd_grows_only_while_cwnd_limited() {
    for cc in [CongestionControl::LinuxReno, CongestionControl::Cubic] {
        let mut tcp = TcpConfig::linux_reno();
        tcp.congestion_control = cc;
        tcp.rwnd = 20 * LMSS as u32;
        let d = data(&greedy(tcp, 20.0, 5.0, &[]));
        let max = d.iter().map(|e| e.cwnd / LMSS).max().unwrap();
        assert!((40..=41).contains(&max), "{cc:?}: cwnd up to {max}");
    }
    let mut tcp = TcpConfig::linux_reno();
    tcp.congestion_control = CongestionControl::Reno;
    tcp.rwnd = 20 * LMSS as u32;
    let d = data(&greedy(tcp, 20.0, 5.0, &[]));
    assert!(d.last().unwrap().cwnd / LMSS > 1000);
}

/// A retransmission timeout under Linux's rules: cwnd = 1 segment and ssthresh = CUBIC's
/// ⌊0.7·cwnd⌋ once; the repeated timeouts of the same segment (backed off, the gaps
/// doubling) do not cut ssthresh again (`tcp_enter_loss` reduces it once per window), where
/// the BSD rule halves it at every timeout.
#[test]
fn linux_timeouts_cut_ssthresh_once_per_window() {
    let mut sc = base(20.0);
    sc.tcp = TcpConfig::linux_cubic();
    sc.tcp.hystart = false;
    // Timers only: no tail loss probe ahead of them (TLP: tests/it/rack.rs).
    sc.tcp.rack_tlp = false;
    sc.traffic = vec![bulk(1, Some(30 * LMSS))];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    // The last segment (29) is lost three times: no duplicate ACKs follow it, only timers.
    sim.script_loss(
        sim.topology().reverse(),
        ScriptedLoss {
            seq: 1 + 29 * LMSS,
            syn: false,
            count: 3,
            mark: false,
            ack: false,
            skip: 0,
        },
    );
    let (sim, _) = run_traced(sim);
    let d = data(&sim);
    let rtx: Vec<_> = d.iter().filter(|e| e.retransmit).collect();
    assert_eq!(rtx.len(), 3);
    // The last transmission had cwnd 20; ACKs of the rest grew it on (in slow start up to
    // twice the 20 segments outstanding) before the timer fired.
    let cut = rtx[0].ssthresh / LMSS;
    assert!((20 * 717 / 1024..=41 * 717 / 1024).contains(&cut), "{cut}");
    for r in &rtx {
        assert_eq!(r.cwnd, LMSS, "cwnd = 1 segment at a timeout");
        assert_eq!(r.ssthresh / LMSS, cut, "cut once");
    }
    // Backed off: the gaps double, each rounded up on the timer wheel (by at most 8
    // jiffies of 4 ms for timers of 63-503 jiffies, 64 up to 4031).
    let g1 = rtx[1].t - rtx[0].t;
    let g2 = rtx[2].t - rtx[1].t;
    assert!(
        g2 >= 2 * (g1 - 32 * MS) && g2 <= 2 * g1 + 256 * MS,
        "{g1} {g2}"
    );
}

/// The Linux presets' handshake (Linux ≥ 6.5): SYNs 1 s apart 4 times
/// (`tcp_syn_linear_timeouts`), then doubling from 1 s, 10 retransmissions in all
/// (`tcp_syn_retries` 6 + 4): nominally 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s and given up
/// at 131 s. Each timer expires on the timer wheel (HZ = 250): armed at jiffy j for n
/// jiffies, it fires at the first multiple of the level's granularity after j + n — 8
/// jiffies for 1 and 2 s (250 and 500 jiffies), 64 for 4, 8 and 16 s, 512 for 32 and 64 s:
/// jiffies 256, 512, 768, 1024, 1280, 1784, 2816, 4864, 8896, 17408 and 33792 (give-up).
/// An answered connection starts with 10 segments (RFC 6928), so a 10-segment response
/// arrives one RTT after the request.
#[test]
fn linux_presets_handshake_and_initial_window() {
    for tcp in [TcpConfig::linux_reno(), TcpConfig::linux_cubic()] {
        let mut sc = base(200.0);
        sc.tcp = tcp.clone();
        sc.traffic = vec![bulk(1, Some(1000))];
        let mut sim = Simulation::new(sc).unwrap();
        sim.enable_trace();
        lose_syns(&mut sim, 100);
        let (sim, tables) = run_traced(sim);
        let syns: Vec<f64> = sim
            .trace()
            .iter()
            .filter(|e| e.side == 0 && e.flags & aqmlab::packet::flags::SYN != 0)
            .map(|e| secs_of(e.t))
            .collect();
        let jiffies = [0, 256, 512, 768, 1024, 1280, 1784, 2816, 4864, 8896, 17408];
        let expect = jiffies.map(|j| j as f64 * 0.004);
        assert_eq!(syns.len(), expect.len(), "{syns:?}");
        for (t, e) in syns.iter().zip(expect) {
            assert!((t - e).abs() < 1e-9, "{syns:?}");
        }
        let c = table(&tables, "connections");
        assert_eq!(bools(c, "aborted"), vec![true]);
        let ended = f64s(c, "closed_s")[0];
        assert!(
            (ended - 33792.0 * 0.004).abs() < 1e-3,
            "given up at {ended} s"
        );

        let mut sc = base(5.0);
        sc.tcp = tcp;
        sc.traffic = vec![bulk(1, Some(10 * LMSS))];
        let (_, tables) = run(sc);
        let c = table(&tables, "connections");
        let last = f64s(c, "last_byte_s")[0];
        assert!(
            (last - 0.2).abs() < 1e-3,
            "10 segments in one round: {last} s"
        );
    }
}

/// Every preset, old and new, validates, survives a JSON round trip, and keeps the historic
/// ones on the stack's own Reno.
#[test]
fn presets_validate_and_round_trip() {
    for name in TcpConfig::PRESETS {
        let p = TcpConfig::preset(name).unwrap();
        p.validate("tcp").unwrap();
        let back: TcpConfig = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(back, p, "{name}");
        let linux = name.starts_with("linux");
        assert_eq!(
            p.congestion_control != CongestionControl::Reno,
            linux,
            "{name}"
        );
    }
    // A scenario written before the key existed gets Reno.
    let mut v = serde_json::to_value(TcpConfig::freebsd_4x()).unwrap();
    v.as_object_mut().unwrap().remove("congestion_control");
    v.as_object_mut().unwrap().remove("hystart");
    let old: TcpConfig = serde_json::from_value(v).unwrap();
    assert_eq!(old, TcpConfig::freebsd_4x());
}

/// HyStart++ (RFC 9406) on the path of `hystart_exits_slow_start_on_a_delay_increase` with a
/// 1000-packet buffer: a round's minimum RTT rises by clamp(50/8, 4, 16) = 6.25 ms once a
/// queue outlasts a round (cwnd past the 42-packet BDP), Conservative Slow Start follows — a
/// quarter of the growth, ×1.25 a round, where slow start doubles — for 5 rounds, and slow
/// start ends with ssthresh = cwnd before any loss; for linux_reno as for CUBIC (whose own
/// HyStart it replaces). (With the 300-packet buffer CSS's ×3 over 5 rounds from some 100
/// segments overflows it: CSS slows slow start, it does not stop it.)
#[test]
fn hystart_plus_plus_ends_slow_start_through_css() {
    for cc in [CongestionControl::Cubic, CongestionControl::LinuxReno] {
        let mut tcp = TcpConfig::linux_cubic();
        tcp.congestion_control = cc;
        tcp.hystart_plus_plus = true;
        let d = data(&run_losing(slow_start_path(tcp, 1000), &[]));
        let initial = TcpConfig::linux_cubic().initial_ssthresh;
        let exit = d
            .iter()
            .position(|e| e.ssthresh != initial)
            .expect("slow start ended");
        let w = d[exit].ssthresh / LMSS;
        assert!(
            d[..=exit].iter().all(|e| !e.retransmit),
            "{cc:?}: no loss before"
        );
        assert!(
            (42..1000).contains(&w),
            "{cc:?}: HyStart++ exit at {w} segments"
        );
        assert!(d[exit].cwnd / LMSS <= w + 1, "ssthresh = cwnd at the exit");
        // CSS adds one segment per 4 ACKed, and with the link saturated segments are ACKed
        // at its rate, 10 Mb/s / 1500 bytes = 833 a second: cwnd grows by 208 a second in
        // the last second before the exit, where slow start would add 833.
        let before = d.iter().rev().find(|e| e.t + SEC <= d[exit].t).unwrap();
        let per_s = (d[exit].cwnd - before.cwnd) as f64 / LMSS as f64;
        assert!(
            (per_s / (1e7 / 12000.0 / 4.0) - 1.0).abs() < 0.1,
            "{cc:?}: +{per_s}/s"
        );
    }
}

/// HyStart++ is refused, with one line naming the field, where it would do nothing: the
/// stacks' own Reno and BBR (whose STARTUP it cannot replace).
#[test]
fn hystart_plus_plus_is_refused_where_it_cannot_run() {
    for (cc, name) in [
        (CongestionControl::Reno, "reno"),
        (CongestionControl::Bbr, "bbr"),
    ] {
        let tcp = TcpConfig {
            congestion_control: cc,
            hystart_plus_plus: true,
            ..TcpConfig::linux_reno()
        };
        let e = tcp.validate("tcp").unwrap_err().to_string();
        assert!(e.contains("hystart_plus_plus") && e.contains(name), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    for cc in [
        CongestionControl::LinuxReno,
        CongestionControl::Cubic,
        CongestionControl::Dctcp,
    ] {
        let tcp = TcpConfig {
            congestion_control: cc,
            hystart_plus_plus: true,
            ..TcpConfig::linux_reno()
        };
        assert!(tcp.validate("tcp").is_ok(), "{cc:?}");
    }
}
