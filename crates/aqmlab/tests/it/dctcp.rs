//! DCTCP (RFC 8257, Linux `tcp_dctcp.c`): the sender's α and window cut, driven ACK by ACK
//! against Linux's integer arithmetic; the receiver's ECE following CE per segment with
//! delayed ACKs; and flows through a step-marking queue.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::config::RttConfig;
use aqmlab::packet::{flags, Ecn, Packet};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::{CongestionControl, TcpConfig};
use aqmlab::tcp::{Endpoint, Outbox};

use crate::common::*;

const LMSS: u64 = 1448;

/// One α update as `dctcp_update_alpha` computes it, written out independently: α −
/// min_not_zero(α, α >> 4), plus (ce << 6) / delivered, at most 1024.
fn linux_alpha(alpha: u32, delivered: u64, ce: u64) -> u32 {
    let shifted = alpha >> 4;
    let mut a = alpha - if shifted != 0 { shifted } else { alpha };
    if ce > 0 {
        a = (a + ((ce << 6) / delivered.max(1)) as u32).min(1024);
    }
    a
}

fn alpha_of(sv: &Endpoint) -> u32 {
    sv.linux_cong().unwrap().dctcp().unwrap().alpha
}

/// A pure ACK from the client.
fn ack_pkt(ack: u64, ece: bool) -> Packet {
    Packet {
        flags: flags::ACK | if ece { flags::ECE } else { 0 },
        ack,
        seq: 1,
        ..Default::default()
    }
}

/// A data segment to the client, index `i`, with codepoint `ecn`.
fn data_pkt(i: u64, ecn: Ecn, extra: u8) -> Packet {
    Packet {
        flags: flags::ACK | extra,
        seq: 1 + i * LMSS,
        len: LMSS as u32,
        ack: 1,
        ecn,
        ..Default::default()
    }
}

/// The sender ACK by ACK: every data segment acknowledged on its own, with ECE on segments
/// `marked(i)`. Each observation window (from snd_nxt when it began until that is ACKed)
/// updates α exactly as Linux's integer arithmetic does, and stays within rounding of the
/// real-valued EWMA α ← (1 − 1/16)·α + F/16; an ECE ACK beyond the last reduction's window
/// cuts cwnd to max(cwnd − cwnd·α >> 11, 2) segments, with α just updated, and ECE ACKs
/// within that window cut nothing more. α starts at 1.
fn drive_sender(n: u64, marked: impl Fn(u64) -> bool) -> (Endpoint, u32, u64) {
    // The cut is checked as made at once, without PRR (PRR's CWR reduction: tests/it/prr.rs).
    let cfg = TcpConfig {
        prr: false,
        ..TcpConfig::linux_dctcp()
    };
    let (_, mut sv) = handshake(&cfg, &cfg);
    assert!(sv.ecn.ok, "ECN negotiated");
    assert_eq!(alpha_of(&sv), 1024);
    let mut out = Outbox::default();
    let mut now = 10_000;
    sv.write(now, &cfg, n * LMSS, &mut out);
    let mut flight: std::collections::VecDeque<(u64, u64)> = Default::default();
    let take = |out: &mut Outbox, flight: &mut std::collections::VecDeque<(u64, u64)>| {
        for s in out.segs.iter().filter(|s| s.len > 0) {
            assert!(!s.retransmit);
            assert_eq!(s.ecn, Ecn::Ect0, "new data is ECT(0)");
            flight.push_back((s.seq, s.seq + s.len as u64));
        }
        out.clear();
    };
    take(&mut out, &mut flight);
    // The model.
    let (mut alpha, mut next_seq) = (1024u32, 1u64);
    let (mut delivered, mut ce) = (0u64, 0u64);
    let mut real = 1.0f64;
    let mut recover = 0u64;
    let (mut windows, mut cuts) = (0u64, 0u64);
    while let Some((seq, end)) = flight.pop_front() {
        now += 100_000;
        let i = (seq - 1) / LMSS;
        let ece = marked(i);
        let cwnd = (sv.cwnd() / LMSS) as u32;
        let snd_max = sv.snd_max();
        sv.on_segment(now, &cfg, &ack_pkt(end, ece), &mut out);
        take(&mut out, &mut flight);
        delivered += 1;
        ce += ece as u64;
        if end >= next_seq {
            let f = ce as f64 / delivered as f64;
            real = real * 15.0 / 16.0 + f / 16.0;
            alpha = linux_alpha(alpha, delivered, ce);
            (delivered, ce, next_seq) = (0, 0, snd_max);
            windows += 1;
        }
        assert_eq!(alpha_of(&sv), alpha, "α after the ACK of segment {i}");
        assert!(
            (alpha as f64 / 1024.0 - real).abs() < 0.035,
            "α {alpha} vs the EWMA {real}"
        );
        let after = (sv.cwnd() / LMSS) as u32;
        if ece && end > recover {
            let cut = (cwnd - ((cwnd as u64 * alpha as u64) >> 11) as u32).max(2);
            assert_eq!(after, cut, "cut from {cwnd} with α {alpha}");
            assert_eq!(sv.ssthresh() / LMSS, cut as u64);
            recover = snd_max;
            cuts += 1;
        } else if ece {
            assert_eq!(after, cwnd, "ECE within a reduced window: no change");
        } else {
            assert!(after == cwnd || after == cwnd + 1, "{cwnd} → {after}");
        }
    }
    let d = sv.linux_cong().unwrap().dctcp().unwrap();
    assert_eq!(d.windows, windows);
    assert_eq!(sv.ecn.reductions, cuts);
    (sv, alpha, windows)
}

/// A quarter of the segments marked: α falls from 1 towards 1/4 by the EWMA, one cut of
/// cwnd·α/2 per marked window; then no marks at all: α decays geometrically and reaches 0
/// (Linux's `min_not_zero` takes the last 15/1024 off at once).
#[test]
fn alpha_follows_the_marked_fraction_and_cuts_once_per_window() {
    let (_, alpha, windows) = drive_sender(600, |i| i % 4 == 0);
    assert!(windows > 30, "{windows} windows");
    // Windows of 8–10 segments hold 2 or 3 marks; Linux's division truncates.
    assert!((200..=290).contains(&alpha), "α {alpha} near 256");
    let (sv, alpha, _) = drive_sender(3000, |i| i < 600 && i % 4 == 0);
    assert_eq!(alpha, 0, "α decays to 0 without marks");
    assert!(sv.cwnd() / LMSS > 20, "the window grew again");
}

/// Every segment marked: α stays at 1 and each window halves cwnd (α/2 = 1/2), down to 2.
#[test]
fn all_marked_keeps_alpha_at_one_and_halves() {
    let (sv, alpha, _) = drive_sender(200, |_| true);
    assert_eq!(alpha, 1024);
    assert_eq!(sv.cwnd() / LMSS, 2);
}

/// The receiver: ECE on each ACK is the CE state of the data it acknowledges. Delayed ACKs
/// (every second segment) go on while the state holds; a change of state sends the pending
/// delayed ACK first with the old state, then acknowledges the new segment at once; CWR does
/// not end the echo. RFC 3168's receiver (Linux Reno with ECN) latches ECE from the first CE
/// until CWR instead.
#[test]
fn receiver_echoes_ce_per_segment_with_delayed_acks() {
    use Ecn::{Ce as C, Ect0 as E};
    let run = |cfg: &TcpConfig, script: &[(Ecn, u8)]| -> Vec<Vec<(u64, bool)>> {
        let (mut cl, _) = handshake(cfg, cfg);
        assert!(cl.ecn.ok);
        let mut out = Outbox::default();
        let mut acks = Vec::new();
        for (i, &(ecn, extra)) in script.iter().enumerate() {
            let now = 10_000 + i as u64 * 1000;
            cl.on_segment(now, cfg, &data_pkt(i as u64, ecn, extra), &mut out);
            acks.push(
                out.segs
                    .iter()
                    .filter(|s| s.len == 0)
                    .map(|s| ((s.ack - 1) / LMSS, s.flags & flags::ECE != 0))
                    .collect::<Vec<_>>(),
            );
            out.clear();
        }
        acks
    };
    let script = [
        (E, 0),
        (E, 0),
        (E, 0),
        (C, 0),
        (C, 0),
        (C, 0),
        (E, 0),
        (E, 0),
        (E, 0),
        (C, 0),
        (C, 0),
        (C, 0),
        (E, flags::CWR),
        (C, flags::CWR),
    ];
    // Linux's receiver ACKs the first 16 segments of a connection at once (quick-ACK mode,
    // `tcp/delack.rs`), each with the ECE of its own CE mark.
    let quick = run(&TcpConfig::linux_dctcp(), &script);
    let each: Vec<Vec<(u64, bool)>> = script
        .iter()
        .enumerate()
        .map(|(i, &(ecn, _))| vec![(i as u64 + 1, ecn == C)])
        .collect();
    assert_eq!(quick, each);
    // DCTCP's own rules, with delayed ACKs from the first segment (the BSD timer model's
    // receiver, which has no quick-ACK mode).
    let mut dctcp = TcpConfig::linux_dctcp();
    dctcp.timer_model = aqmlab::tcp::config::TimerModel::Bsd;
    let acks = run(&dctcp, &script);
    let expect: Vec<Vec<(u64, bool)>> = vec![
        vec![],
        vec![(2, false)],
        vec![],
        vec![(3, false), (4, true)],
        vec![],
        vec![(6, true)],
        vec![(7, false)],
        vec![],
        vec![(9, false)],
        vec![(10, true)],
        vec![],
        vec![(12, true)],
        vec![(13, false)],
        vec![(14, true)],
    ];
    assert_eq!(acks, expect);

    let mut rfc3168 = TcpConfig::linux_reno();
    rfc3168.ecn = true;
    rfc3168.timer_model = aqmlab::tcp::config::TimerModel::Bsd;
    let acks = run(&rfc3168, &script);
    let expect: Vec<Vec<(u64, bool)>> = vec![
        vec![],
        vec![(2, false)],
        vec![],
        vec![(4, true)],
        vec![],
        vec![(6, true)],
        vec![],
        vec![(8, true)],
        vec![],
        vec![(10, true)],
        vec![],
        vec![(12, true)],
        vec![],
        vec![(14, true)],
    ];
    assert_eq!(acks, expect);
}

/// RED as a step marker at K packets: instantaneous queue (w_q = 1), thresholds K − 1 and
/// K, max_p 1 and the gentle region marking (`new_gentle`): every ECT packet that finds K
/// or more queued is marked (but the first of each excursion, RED's `old` rule), up to 2·K,
/// where forced drops begin.
fn step_marker(k: f64) -> AqmConfig {
    serde_json::from_value(serde_json::json!({
        "kind": "red", "limit": 1000, "min_th": k - 1.0, "max_th": k, "max_p": 1.0,
        "w_q": 1.0, "gentle": true, "wait": false, "queue_in_bytes": false,
        "byte_mode": false, "ecn": "new_gentle"
    }))
    .unwrap()
}

/// RFC 8257 §1 / Alizadeh et al. 2010: four greedy DCTCP flows (starting within a second,
/// slow start ending at 20 segments) through a 100 Mb/s bottleneck (4 ms RTT, BDP 33
/// packets) that marks from K = 30 packets keep the queue near K with the link full and
/// nothing dropped or retransmitted.
#[test]
fn dctcp_flows_hold_the_queue_near_k_at_full_utilisation() {
    let k = 30.0;
    let secs = 20.0;
    let mut sc = base(secs);
    sc.tcp = TcpConfig::linux_dctcp();
    sc.tcp.initial_ssthresh = 20 * LMSS;
    assert_eq!(sc.tcp.congestion_control, CongestionControl::Dctcp);
    sc.topology.bottleneck_mbps = 100.0;
    sc.rtt = RttConfig::Constant { rtt_ms: 4.0 };
    sc.queue = step_marker(k);
    sc.traffic = vec![bulk_at(4, None, 0.0, 1.0)];
    let mut sim = Simulation::new(sc).unwrap();
    let end = sim.end_time();
    sim.run_until(end);
    let tables = sim.finish();
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "ecn"), vec![true; 4]);
    assert_eq!(u64s(c, "data_retransmits"), vec![0; 4]);
    assert_eq!(u64s(c, "timeouts"), vec![0; 4]);
    let q = &sim.link(sim.topology().reverse()).queue.stats;
    assert_eq!(q.drops(), 0, "no drops");
    assert!(q.marks > 1000, "{} marks", q.marks);
    let pkt_bits = (q.departure_bytes as f64 / q.departures as f64) * 8.0;
    let util = q.departure_bytes as f64 * 8.0 / (100e6 * secs);
    assert!(util > 0.98, "utilisation {util}");
    let soj = q.sojourn.as_ref().unwrap();
    let mean_pkts = soj.mean() * 1e-9 * 100e6 / pkt_bits;
    assert!(
        (0.6 * k..1.4 * k).contains(&mean_pkts),
        "mean queue {mean_pkts} packets"
    );
    let p99 = soj.quantile(0.99) as f64 * 1e-9 * 100e6 / pkt_bits;
    println!(
        "utilisation {util:.4}, mean queue {mean_pkts:.1}, p99 {p99:.1} packets, {} marks",
        q.marks
    );
    assert!(p99 < 2.0 * k, "99th percentile {p99} packets");
}

/// Linux DCTCP sends every segment ECT(0) (`dctcp_init` → `INET_ECN_xmit`): SYN, SYN-ACK,
/// pure ACKs and retransmissions as well as new data, so that a marking queue never drops
/// them as not ECN-capable; with RFC 3168 ECN only new data is ECT.
#[test]
fn dctcp_sends_every_segment_ect() {
    for (tcp, all) in [
        (TcpConfig::linux_dctcp(), true),
        (
            TcpConfig {
                ecn: true,
                ..TcpConfig::linux_reno()
            },
            false,
        ),
    ] {
        let mut sc = base(3.0);
        sc.tcp = tcp;
        sc.traffic = vec![bulk(1, Some(40 * LMSS))];
        let mut sim = Simulation::new(sc).unwrap();
        sim.enable_trace();
        let reverse = sim.topology().reverse();
        lose_segments(&mut sim, reverse, LMSS, &[12]);
        let end = sim.end_time();
        sim.run_until(end);
        let tr = sim.trace();
        assert!(
            tr.iter().any(|e| e.retransmit && e.len > 0),
            "a retransmission"
        );
        assert!(tr.iter().any(|e| e.flags & flags::SYN != 0));
        for e in tr {
            let new_data = e.len > 0 && !e.retransmit;
            let expect = if all || new_data {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            };
            assert_eq!(e.ecn, expect, "all = {all}: {e:?}");
        }
    }
}
