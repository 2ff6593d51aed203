//! Single-connection behaviour checked against hand computation and event traces.

use aqmlab::packet::{flags, Packet};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::{Recovery, TcpConfig, TimerModel};
use aqmlab::tcp::{Endpoint, Outbox, Seg};
use aqmlab::units::{secs, MS, SEC};

use crate::common::*;

/// With no loss, no delayed ACK and an unlimited receiver window, a download of N segments
/// takes one RTT of handshake (the server answers the client's ACK, which arrives 1.5 RTT
/// after the SYN) plus r rounds of slow start, where r is the smallest integer with
/// IW·(2^r − 1) ≥ N: the last byte reaches the client (r + 1)·RTT after connect(), up to
/// serialization (12 µs per 1500-byte packet per 1 Gb/s hop).
#[test]
fn completion_time_is_handshake_plus_slow_start_rounds() {
    for &(n, rtt_ms, iw) in &[
        (1u64, 100.0, 1u32),
        (10, 100.0, 2),
        (10, 40.0, 1),
        (31, 60.0, 1),
        (100, 80.0, 2),
        (7, 200.0, 4),
    ] {
        let mut sc = base(30.0);
        sc.rtt = aqmlab::config::RttConfig::Constant { rtt_ms };
        sc.tcp.initial_window = iw;
        sc.traffic = vec![bulk(1, Some(n * MSS))];
        let (_, tables) = run(sc);
        let c = table(&tables, "connections");
        let mut r = 0u32;
        while (iw as u64) * ((1u64 << r) - 1) < n {
            r += 1;
        }
        let expect = (r as f64 + 1.0) * rtt_ms / 1000.0;
        let got = f64s(c, "last_byte_s")[0];
        let tol = 3.0 * (n as f64 + 4.0 * (r as f64 + 1.0)) * 12e-6;
        assert!(
            (got - expect).abs() <= tol,
            "N={n} RTT={rtt_ms} IW={iw}: {got} vs {expect} (r={r})"
        );
    }
}

fn lossy_download_with(
    lost: &[u64],
    rwnd_segments: u32,
    recovery: Recovery,
) -> (Simulation, Vec<aqmlab::measure::Table>) {
    lossy_download(60, lost, rwnd_segments, |tcp| tcp.recovery = recovery)
}

/// One lost segment in a large window: the third duplicate ACK triggers exactly one fast
/// retransmission, half an RTT after the client sent it; no timeout.
#[test]
fn one_loss_is_repaired_by_fast_retransmit() {
    let lost = 20;
    let (sim, tables) = lossy_download_with(&[lost], 1000, Recovery::Reno);
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "completed"), vec![true]);
    assert_eq!(u64s(c, "timeouts"), vec![0]);
    assert_eq!(u64s(c, "fast_retransmits"), vec![1]);
    assert_eq!(u64s(c, "data_retransmits"), vec![1]);
    let hole = 1 + lost * MSS;
    let tr = sim.trace();
    // Client ACKs that name the hole: the first is the ordinary ACK of the segment before it,
    // the next three are the duplicates.
    let dup: Vec<_> = tr
        .iter()
        .filter(|e| e.side == 0 && e.ack == hole && e.len == 0)
        .collect();
    assert!(dup.len() >= 4, "{} ACKs for the hole", dup.len());
    let third_dup = dup[3].t;
    let rtx: Vec<_> = tr.iter().filter(|e| e.side == 1 && e.retransmit).collect();
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].seq, hole);
    // One way = 50 ms plus serialization of a 40-byte ACK on three hops.
    let dt = rtx[0].t - third_dup;
    assert!(
        (50 * MS..50 * MS + 100_000).contains(&dt),
        "retransmitted {dt} ns after the 3rd dupack"
    );
    // No retransmission before the third duplicate ACK arrived.
    assert!(
        tr.iter()
            .filter(|e| e.side == 1 && e.retransmit && e.t < third_dup)
            .count()
            == 0
    );
}

/// Two losses in a window of 8 segments: Reno's fast recovery repairs the first, the partial
/// ACK ends recovery, too few duplicate ACKs follow for the second, and the retransmission
/// timer (1 s minimum RTO) must fire.
#[test]
fn two_losses_in_a_small_window_make_reno_time_out() {
    let (sim, tables) = lossy_download_with(&[20, 22], 8, Recovery::Reno);
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "completed"), vec![true]);
    assert_eq!(u64s(c, "fast_retransmits"), vec![1]);
    assert_eq!(u64s(c, "timeouts"), vec![1]);
    let tr = sim.trace();
    let second = 1 + 22 * MSS;
    let first_rtx = tr
        .iter()
        .find(|e| e.side == 1 && e.retransmit && e.seq == 1 + 20 * MSS)
        .unwrap()
        .t;
    let second_rtx = tr
        .iter()
        .find(|e| e.side == 1 && e.retransmit && e.seq == second)
        .unwrap()
        .t;
    // The timer restarted by the partial ACK (one RTT after the first retransmission) fires
    // min RTO = 1 s later.
    let gap = second_rtx - first_rtx;
    assert!(
        (SEC..SEC + 150 * MS).contains(&gap),
        "second retransmission {gap} ns after the first"
    );
}

/// A lost SYN is retransmitted after the initial RTO, then after the backed-off RTO.
#[test]
fn lost_syns_follow_the_configured_schedules() {
    // (preset, SYNs lost, expected time of the SYN that gets through)
    let cases: [(TcpConfig, u32, f64); 7] = [
        (TcpConfig::freebsd_228(), 1, 6.0),  // 4.4BSD "A + 2D" = 6 s
        (TcpConfig::freebsd_228(), 2, 30.0), // then 12 s · tcp_backoff[1] = 24 s
        // FreeBSD 4.x: TCPTV_RTOBASE 3 s × tcp_syn_backoff {1,1,1,1,1,2,4,...}:
        // SYNs at 0, 3, 6, 9, 12, 15, 21 s (model-facts §7.4).
        (TcpConfig::freebsd_4x(), 1, 3.0),
        (TcpConfig::freebsd_4x(), 2, 6.0),
        (TcpConfig::freebsd_4x(), 6, 21.0),
        (TcpConfig::ns2_fulltcp(), 1, 6.0),  // rtxcur_init 6 s
        (TcpConfig::ns2_fulltcp(), 2, 18.0), // doubled: +12 s
    ];
    for (tcp, lost, expect) in cases {
        let mut sc = base(60.0);
        sc.tcp = tcp;
        sc.traffic = vec![bulk(1, Some(1000))];
        let mut sim = Simulation::new(sc).unwrap();
        sim.enable_trace();
        lose_syns(&mut sim, lost);
        let (sim, tables) = run_traced(sim);
        let syns = client_syn_times(&sim);
        assert_eq!(syns.len() as u32, lost + 1);
        assert!(
            (syns[lost as usize] - expect).abs() < 1e-9,
            "{syns:?} vs {expect}"
        );
        let c = table(&tables, "connections");
        assert_eq!(u64s(c, "syn_retransmits"), vec![lost as u64]);
        let est = f64s(c, "established_s")[0];
        assert!((est - expect - 0.1).abs() < 1e-3, "established at {est}");
    }
}

/// The timer sweep (docs/network.md): a connection that is over before its retransmit timer
/// is due leaves no timer event behind (the 3-s or 6-s SYN timer, the RTO of its data), with
/// BSD's clock and ns-2's. What stays pending is exactly the monitors' sampling and interval
/// events and the next sweep. (Deferred deadlines that do fire keep their exact times:
/// `lost_syns_follow_the_configured_schedules`.)
#[test]
fn a_finished_connection_leaves_no_timer_event() {
    for tcp in [TcpConfig::freebsd_4x(), TcpConfig::ns2_fulltcp()] {
        let mut sc = base(10.0);
        sc.tcp = TcpConfig {
            mss: 1460,
            rwnd: 1 << 20,
            ..tcp
        };
        sc.traffic = vec![bulk(1, Some(1000))];
        let mut sim = Simulation::new(sc).unwrap();
        sim.run_until(secs(1.0));
        let st = sim.engine_stats();
        assert_eq!((st.connections_opened, st.active_connections), (1, 0));
        assert_eq!(st.pending_events, 3, "{st:?}");
    }
}

/// ns-2 Full-TCP times the SYN and the SYN-ACK like any new segment (`foutput`: a SYN counts
/// in `reliable`, so `rtt_active_` is set) and `newack`, reached from the SYN_SENT and
/// SYN_RECEIVED paths through `process_ACK`, takes the sample (`ackno > rtt_seq_`): both ends
/// leave the handshake with an RTT estimate. (Only the BSD-style duplicate in the SYN_SENT
/// branch is `#ifdef notdef`.) So a lost first data segment costs max(min RTO, 3·RTT) = 1 s,
/// not the 6 s initial RTO; after a retransmitted SYN there is no sample (Karn) and the
/// client's data timer stays at the initial value.
#[test]
fn ns2_fulltcp_handshake_gives_an_rtt_sample() {
    // The server's first (only) response segment is lost once: RTT 100 ms from the handshake,
    // RTO = max(1 s, 100 ms + 4 · 50 ms) = 1 s after its first transmission.
    let (sim, tables) = lossy_download(1, &[0], 1000, |_| {});
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "completed"), vec![true]);
    assert_eq!(u64s(c, "timeouts"), vec![1]);
    let tr = sim.trace();
    let sends: Vec<_> = tr
        .iter()
        .filter(|e| e.side == 1 && e.len > 0 && e.seq == 1)
        .map(|e| e.t)
        .collect();
    assert_eq!(sends.len(), 2, "first transmission and one retransmission");
    let gap = sends[1] - sends[0];
    assert!(
        (SEC..SEC + 20 * MS).contains(&gap),
        "response retransmitted {gap} ns after its first transmission (expected 1 s)"
    );
    let rtt = f64s(c, "min_rtt_sample_ms")[0];
    assert!((rtt - 100.0).abs() < 11.0, "handshake RTT sample {rtt} ms");
}

/// Delayed ACKs (BSD): a lone full segment (the receiver window allows only one) is not
/// acknowledged at once but at the next tick of the global 200 ms fast timer.
#[test]
fn delayed_ack_waits_for_the_fast_timer_tick() {
    let mut sc = base(5.0);
    sc.tcp = TcpConfig::freebsd_228();
    sc.tcp.rwnd = MSS as u32;
    sc.traffic = vec![bulk(1, None)];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let (sim, _) = run_traced(sim);
    let acks: Vec<u64> = sim
        .trace()
        .iter()
        .filter(|e| e.side == 0 && e.len == 0 && e.ack > 1)
        .map(|e| e.t)
        .collect();
    assert!(acks.len() >= 10, "{} ACKs", acks.len());
    for t in &acks {
        assert_eq!(t % (200 * MS), 0, "ACK at {t} ns is off the 200 ms grid");
    }
    let _ = secs(0.0);
}

/// Delayed ACKs (FreeBSD 4.x): a per-connection 100 ms timer, so every delayed ACK leaves
/// exactly 100 ms after the data segment that made it pending, off any global grid.
#[test]
fn delayed_ack_per_connection_timer_waits_exactly_100ms() {
    let mut sc = base(5.0);
    sc.tcp = TcpConfig::freebsd_4x();
    sc.tcp.rwnd = MSS as u32;
    sc.traffic = vec![bulk(1, None)];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let (sim, _) = run_traced(sim);
    // Stop-and-wait (window of one segment): pair each pure ACK the client (side 0) sends with
    // the server's data segment sent before it. The gap is the one-way delay (50 ms of delay
    // box + 3 serializations of 1500 B at 1 Gb/s = 36 µs) plus exactly 100 ms.
    let mut last_data: Option<u64> = None;
    let mut checked = 0;
    for e in sim.trace() {
        if e.side == 1 && e.len > 0 {
            last_data = Some(e.t);
        } else if e.side == 0 && e.len == 0 && e.ack > 1 {
            if let Some(d) = last_data.take() {
                assert_eq!(
                    e.t - d,
                    100 * MS + 50 * MS + 36_000,
                    "ACK at {} for data at {d}",
                    e.t
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} delayed ACKs checked");
}

/// NewReno (RFC 6582) with 1, 2, 3 and 4 losses in one window: one fast retransmit, then one
/// retransmission per partial ACK, each one RTT (100 ms) after the previous, and no timeout
/// — where Reno, with the same two losses in an 8-segment window, has to time out.
#[test]
fn newreno_repairs_one_loss_per_rtt_without_timeout() {
    for (lost, rwnd) in [
        (&[20u64][..], 8u32),
        (&[20, 22], 8),
        (&[20, 22, 24], 20),
        (&[20, 22, 24, 26], 20),
    ] {
        let (sim, tables) = lossy_download_with(lost, rwnd, Recovery::NewReno);
        let c = table(&tables, "connections");
        assert_eq!(bools(c, "completed"), vec![true]);
        assert_eq!(u64s(c, "timeouts"), vec![0], "losses {lost:?}");
        assert_eq!(u64s(c, "fast_retransmits"), vec![1]);
        assert_eq!(u64s(c, "data_retransmits"), vec![lost.len() as u64]);
        let rtx: Vec<(u64, u64)> = sim
            .trace()
            .iter()
            .filter(|e| e.side == 1 && e.retransmit)
            .map(|e| (e.seq, e.t))
            .collect();
        let seqs: Vec<u64> = rtx.iter().map(|r| r.0).collect();
        let want: Vec<u64> = lost.iter().map(|k| 1 + k * MSS).collect();
        assert_eq!(seqs, want, "retransmitted in order, each once");
        for w in rtx.windows(2) {
            let gap = w[1].1 - w[0].1;
            assert!(
                (100 * MS..105 * MS).contains(&gap),
                "partial-ACK retransmissions {gap} ns apart"
            );
        }
    }
}

// ----- endpoints driven by hand: handshake losses, window and timer state -----

/// When the client sent its SYNs (seconds), from a traced run.
fn client_syn_times(sim: &Simulation) -> Vec<f64> {
    sim.trace()
        .iter()
        .filter(|e| e.side == 0 && e.flags & flags::SYN != 0)
        .map(|e| e.t as f64 * 1e-9)
        .collect()
}

fn seg_to_packet(s: &Seg) -> Packet {
    Packet {
        flags: s.flags,
        len: s.len,
        seq: s.seq,
        ack: s.ack,
        ..Default::default()
    }
}

/// Delivers every segment in `out` to `to` at `now` and returns what `to` sent back.
fn deliver(out: &mut Outbox, to: &mut Endpoint, cfg: &TcpConfig, now: u64) -> Outbox {
    let pkts: Vec<Packet> = out.segs.iter().map(seg_to_packet).collect();
    out.clear();
    let mut back = Outbox::default();
    for p in &pkts {
        to.on_segment(now, cfg, p, &mut back);
    }
    back
}

/// The client's SYN lost `syn_losses` times, then a handshake with a 100 ms RTT (the client
/// sends at `t`, the server answers at `t + 50 ms`, the client completes at `t + 100 ms`).
/// Returns (client, server, time the client completed).
fn handshake_after_syn_losses(cfg: &TcpConfig, syn_losses: u32) -> (Endpoint, Endpoint, u64) {
    let (mut cl, mut sv) = (Endpoint::new(cfg, 0), Endpoint::new(cfg, 0));
    let mut out = Outbox::default();
    sv.listen(0);
    cl.connect(0, cfg, &mut out);
    let mut t = 0;
    for _ in 0..syn_losses {
        out.clear(); // the SYN is lost
        t = cl.next_deadline().expect("SYN timer");
        cl.on_timer(t, cfg, &mut out);
        assert!(out.segs.iter().any(|s| s.flags & flags::SYN != 0));
    }
    let mut syn_ack = deliver(&mut out, &mut sv, cfg, t + 50 * MS);
    let mut ack = deliver(&mut syn_ack, &mut cl, cfg, t + 100 * MS);
    let _ = deliver(&mut ack, &mut sv, cfg, t + 150 * MS);
    (cl, sv, t + 100 * MS)
}

/// 4.4BSD `tcp_input`: in SYN_RECEIVED the ACK of the server's SYN falls into the ESTABLISHED
/// ACK processing with `acked = 1`, which opens cwnd by one segment (`tcp_mss` had set it to
/// one): a FreeBSD server starts its response with two segments. ns-2 Full-TCP opens cwnd only
/// on ACKs received in ESTABLISHED (`last_state_`) and starts with its initial window.
#[test]
fn bsd_server_window_opens_on_the_ack_of_its_syn() {
    for (cfg, server_segments) in [
        (TcpConfig::freebsd_228(), 2),
        (TcpConfig::freebsd_4x(), 2),
        (TcpConfig::ns2_fulltcp(), 2),
    ] {
        let mss = cfg.mss as u64;
        let (cl, sv, _) = handshake_after_syn_losses(&cfg, 0);
        assert_eq!(sv.cwnd(), server_segments * mss, "{cfg:?}");
        assert_eq!(
            cl.cwnd(),
            cfg.initial_cwnd(),
            "client keeps its initial window"
        );
    }
}

/// A SYN timeout lowers ssthresh like any timeout: 4.4BSD `tcp_timers` sets
/// `snd_ssthresh = max(min(snd_wnd, snd_cwnd)/2/MSS, 2)·MSS` whatever the state, and ns-2
/// `timeout_action` calls `slowdown(CLOSE_SSTHRESH_HALF | ...)` (ssthresh ≥ 2) in SYN_SENT too:
/// the connection then starts with ssthresh = 2 segments. ns-2 grows cwnd linearly once
/// `cwnd_ ≥ ssthresh_` (`opencwnd`: slow start only while `cwnd_ < ssthresh_`), 4.4BSD only
/// once `cwnd > snd_ssthresh`.
#[test]
fn syn_timeout_leaves_ssthresh_at_two_segments() {
    for cfg in [
        TcpConfig::freebsd_228(),
        TcpConfig::freebsd_4x(),
        TcpConfig::ns2_fulltcp(),
    ] {
        let mss = cfg.mss as u64;
        let (mut cl, mut sv, t) = handshake_after_syn_losses(&cfg, 1);
        assert_eq!(cl.ssthresh(), 2 * mss, "{cfg:?}");
        assert_eq!(cl.cwnd(), cfg.initial_cwnd());
        // Upload four segments; the server acknowledges the first one.
        let mut out = Outbox::default();
        cl.write(t, &cfg, 4 * mss, &mut out);
        let sent = out.segs.iter().filter(|s| s.len > 0).count() as u64;
        assert_eq!(sent, cfg.initial_window as u64);
        out.segs.truncate(1);
        let mut ack = deliver(&mut out, &mut sv, &cfg, t + 50 * MS);
        if ack.segs.is_empty() {
            // Delayed ACK (BSD): the fast timer sends it.
            let d = sv.next_deadline().unwrap();
            sv.on_timer(d, &cfg, &mut ack);
        }
        let _ = deliver(&mut ack, &mut cl, &cfg, t + 300 * MS);
        let expect = match cfg.timer_model {
            // cwnd 1 < ssthresh 2: slow start.
            TimerModel::Bsd | TimerModel::Linux => 2 * mss,
            // cwnd 2 = ssthresh 2: linear, + MSS²/cwnd.
            TimerModel::Ns2 => 2 * mss + mss / 2,
        };
        assert_eq!(cl.cwnd(), expect, "{cfg:?}");
    }
}

/// Karn's rule as 4.4BSD codes it: t_rxtshift and the backed-off t_rxtcur are cleared only by
/// an RTT sample (`tcp_xmit_timer`), and a retransmitted SYN gives none, so the first data
/// segment is timed with the SYN's last backed-off value: 12 s · tcp_backoff[1] = 24 s for
/// FreeBSD 2.2.8 after one lost SYN, 3 s · tcp_syn_backoff[6] = 12 s for FreeBSD 4.x after six.
/// ns-2 resets t_backoff_ on the SYN-ACK (`newack`) and times the data with rtxcur_init_.
#[test]
fn first_data_timer_after_lost_syns() {
    for (cfg, syn_losses, expect_s) in [
        (TcpConfig::freebsd_228(), 1, 24.0),
        (TcpConfig::freebsd_4x(), 6, 12.0),
        (TcpConfig::ns2_fulltcp(), 1, 6.0),
    ] {
        let (mut cl, _, t) = handshake_after_syn_losses(&cfg, syn_losses);
        let mut out = Outbox::default();
        cl.write(t, &cfg, 100, &mut out);
        assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 1);
        let timer = (cl.rexmt_deadline().unwrap() - t) as f64 * 1e-9;
        // The BSD timer fires on a tick boundary: up to one tick early.
        let tick = cfg.tick_ms * 1e-3;
        assert!(
            timer <= expect_s + 1e-9 && timer > expect_s - tick - 1e-9,
            "{syn_losses} SYNs lost: data timer {timer} s, expected {expect_s} s"
        );
    }
}

/// FreeBSD `tcp_timer_rexmt` multiplies by `tcp_syn_backoff` only in SYN_SENT; a server's
/// SYN-ACK (SYN_RECEIVED, or the 4.5 syncache: `TCPTV_RTOBASE · tcp_backoff[slot]`) backs off
/// with `tcp_backoff`: SYN-ACKs at 0, 3, 9, 21 s.
#[test]
fn freebsd_4x_syn_ack_retransmissions_use_the_data_backoff() {
    let cfg = TcpConfig::freebsd_4x();
    let mut cl = Endpoint::new(&cfg, 0);
    let mut sv = Endpoint::new(&cfg, 0);
    let mut out = Outbox::default();
    sv.listen(0);
    cl.connect(0, &cfg, &mut out);
    let _ = deliver(&mut out, &mut sv, &cfg, 0); // SYN-ACK sent at 0 and lost
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = sv.next_deadline().unwrap();
        let mut o = Outbox::default();
        sv.on_timer(t, &cfg, &mut o);
        assert!(o.segs.iter().any(|s| s.flags & flags::SYN != 0));
        times.push(t as f64 * 1e-9);
    }
    assert_eq!(times, vec![3.0, 9.0, 21.0]);
}

/// ns-2 Full-TCP `newack` calls `set_rtx_timer()` before it updates the RTT estimate and resets
/// `t_backoff_`: the timer restarted by the ACK of a timed-out segment still carries the
/// doubled backoff (2 · max(rtxcur, minrto) = 2 s), and only later restarts use the reset one.
#[test]
fn ns2_timer_restarted_by_an_ack_uses_the_backoff_before_it() {
    let cfg = TcpConfig::ns2_fulltcp();
    let mss = cfg.mss as u64;
    let (mut cl, mut sv, t) = handshake_after_syn_losses(&cfg, 0);
    let mut out = Outbox::default();
    sv.write(t, &cfg, 4 * mss, &mut out);
    assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 2);
    out.clear(); // both lost
    let rto = sv.rexmt_deadline().unwrap();
    assert_eq!(rto - t, SEC, "min RTO 1 s");
    sv.on_timer(rto, &cfg, &mut out); // backoff 2, first segment again
    assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 1);
    let mut ack = deliver(&mut out, &mut cl, &cfg, rto + 50 * MS);
    let at = rto + 100 * MS;
    let _ = deliver(&mut ack, &mut sv, &cfg, at);
    assert_eq!(sv.rexmt_deadline().unwrap() - at, 2 * SEC);
}

/// ns-2.35 Full-TCP (`ns2.35-fulltcp`) retransmits a SYN forever: `rtxcur_init_` 3 s, doubled
/// at every timeout up to `maxrto_` 60 s (tcp.cc `rtt_backoff`, tcp-full.cc has no retry
/// limit): SYNs at 0, 3, 9, 21, 45, 93, 153, 213, 273 s — still trying after 270 s, where the
/// BSD limits (75 s to connect) would long have given up.
#[test]
fn ns2_35_syns_never_give_up() {
    let mut sc = base(300.0);
    sc.tcp = TcpConfig::ns2_35_fulltcp();
    sc.traffic = vec![bulk(1, Some(1000))];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    lose_syns(&mut sim, 1000);
    let (sim, tables) = run_traced(sim);
    let syns = client_syn_times(&sim);
    let expected = [0.0, 3.0, 9.0, 21.0, 45.0, 93.0, 153.0, 213.0, 273.0];
    assert_eq!(syns.len(), expected.len(), "{syns:?}");
    for (t, e) in syns.iter().zip(expected) {
        assert!((t - e).abs() < 1e-9, "{syns:?}");
    }
    let c = table(&tables, "connections");
    assert_eq!(bools(c, "aborted"), vec![false]);
    assert_eq!(bools(c, "completed"), vec![false]);
}

/// ns-2.35 Full-TCP acknowledges every full-sized segment at once (`segsperack_` 1) and holds
/// the ACK of sub-MSS data until the free-running 100 ms delayed-ACK clock ticks
/// (`need_send`, `delack_timer_`): a greedy transfer gets one ACK per full segment, each sent
/// when its segment arrives; a 100-byte upload that the server does not answer gets its ACK on
/// a 100 ms boundary after the data arrived.
#[test]
fn ns2_35_acks_every_full_segment_and_delays_only_sub_mss_data() {
    let mut sc = base(5.0);
    sc.tcp = TcpConfig::ns2_35_fulltcp();
    sc.tcp.rwnd = 1 << 20;
    sc.traffic = vec![bulk(1, None)];
    let mut sim = Simulation::new(sc).unwrap();
    sim.enable_trace();
    let (sim, _) = run_traced(sim);
    let tr = sim.trace();
    // Every data segment the server sends is full-sized (a greedy sender, no tail): each is
    // acknowledged by an ACK of its own (BSD's rule would acknowledge every second one).
    let data: Vec<_> = tr.iter().filter(|e| e.side == 1 && e.len > 0).collect();
    let acks: Vec<_> = tr
        .iter()
        .filter(|e| e.side == 0 && e.len == 0 && e.ack > 1)
        .collect();
    assert!(data.len() > 100);
    assert!(data.iter().all(|e| e.len == 536));
    let acked: std::collections::BTreeSet<u64> = acks.iter().map(|e| e.ack).collect();
    for d in data.iter().take(200) {
        assert!(
            acked.contains(&(d.seq + 536)),
            "segment {} not acknowledged on its own",
            d.seq
        );
    }

    // 100 bytes (sub-MSS) reach a server that sends nothing back: no ACK at once; it waits
    // for the next 100 ms tick of the free-running delayed-ACK clock. The handshake ends at
    // 100 ms; the data is written at 160 ms, arrives at 210 ms, and is acknowledged at 300 ms.
    let cfg = TcpConfig::ns2_35_fulltcp();
    let (mut cl, mut sv, t) = handshake_after_syn_losses(&cfg, 0);
    let mut out = Outbox::default();
    cl.write(t + 60 * MS, &cfg, 100, &mut out);
    assert_eq!(out.segs.iter().map(|s| s.len).sum::<u32>(), 100);
    let back = deliver(&mut out, &mut sv, &cfg, t + 110 * MS);
    assert!(back.segs.is_empty(), "sub-MSS data acknowledged at once");
    assert_eq!(sv.next_deadline(), Some(300 * MS));
    let mut late = Outbox::default();
    sv.on_timer(300 * MS, &cfg, &mut late);
    assert!(late.segs.iter().any(|s| s.len == 0 && s.ack == 101));
    // A full segment is acknowledged at once.
    let mut out = Outbox::default();
    cl.write(t + 400 * MS, &cfg, 536, &mut out);
    let back = deliver(&mut out, &mut sv, &cfg, t + 450 * MS);
    assert!(back.segs.iter().any(|s| s.ack == 101 + 536));
}

/// Limited Transmit (RFC 3042 §2). Initial window 2, ssthresh 2 segments: congestion
/// avoidance from the start (the ns-2 model adds 1/cwnd per ACK). The ACK of 0 makes cwnd
/// 2.5: segment 2 goes; the ACK of 1, 2.9: segment 3; the ACK of 2, 3.24: segments 4 and 5.
/// Segment 3 is lost, so 4 and 5 bring only two duplicate ACKs and nothing else is in
/// flight: without Limited Transmit the connection waits for its retransmission timer.
/// With it, each of those duplicates releases one new segment (6, then 7) without changing
/// cwnd, and their ACKs are the third and fourth duplicates: fast retransmit, no timeout.
#[test]
fn limited_transmit_turns_a_timeout_into_a_fast_retransmit() {
    let run = |lt: bool| {
        lossy_download(40, &[3], 1000, |tcp| {
            tcp.initial_ssthresh = 2 * MSS;
            tcp.limited_transmit = lt;
            tcp.recovery = Recovery::NewReno;
        })
    };
    let (_, off) = run(false);
    let c = table(&off, "connections");
    assert_eq!(u64s(c, "timeouts"), vec![1]);
    assert_eq!(u64s(c, "fast_retransmits"), vec![0]);

    let (sim, on) = run(true);
    let c = table(&on, "connections");
    assert_eq!(bools(c, "completed"), vec![true]);
    assert_eq!(u64s(c, "timeouts"), vec![0]);
    assert_eq!(u64s(c, "fast_retransmits"), vec![1]);
    let tr = sim.trace();
    let hole = 1 + 3 * MSS;
    let dups: Vec<_> = tr
        .iter()
        .filter(|e| e.side == 0 && e.ack == hole && e.len == 0)
        .collect();
    // dups[0] is the ACK of segment 2; dups[1] and dups[2] the first two duplicates.
    for (n, k) in [(1usize, 6u64), (2, 7)] {
        let sent = tr
            .iter()
            .find(|e| e.side == 1 && e.seq == 1 + k * MSS && !e.retransmit)
            .expect("limited-transmit segment");
        // Half an RTT (50 ms) after the client's duplicate, plus serialization.
        let dt = sent.t - dups[n].t;
        assert!(
            (50 * MS..50 * MS + 100_000).contains(&dt),
            "segment {k} sent {dt} ns after duplicate #{n}"
        );
        // cwnd is not opened by Limited Transmit: as after the ACK of 2 (3.24 segments).
        assert!(
            sent.cwnd >= 3 * MSS && sent.cwnd < 4 * MSS,
            "cwnd {}",
            sent.cwnd
        );
    }
}

/// A one-segment response written and closed in one call (ns-2's `sendmsg(n, "MSG_EOF")`,
/// how a PackMime server answers): on an idle connection the segment that empties the buffer
/// carries the FIN. Written, sent, then closed (BSD's write(2) then close(2)), the data goes
/// first and the FIN follows — and under `fin_when_idle` only after the data is acknowledged.
#[test]
fn write_close_puts_the_fin_on_the_last_segment_of_an_idle_connection() {
    let cfg = TcpConfig::ns2_35_fulltcp();
    let (_, mut sv) = handshake(&cfg, &cfg);
    let mut out = Outbox::default();
    sv.write_close(10, &cfg, 300, &mut out);
    assert_eq!(out.segs.len(), 1);
    assert_eq!(out.segs[0].len, 300);
    assert!(
        out.segs[0].flags & flags::FIN != 0,
        "FIN on the data segment"
    );

    let (_, mut sv) = handshake(&cfg, &cfg);
    let mut out = Outbox::default();
    sv.write(10, &cfg, 300, &mut out);
    sv.close(10, &cfg, &mut out);
    assert_eq!(out.segs.len(), 1, "the FIN waits for the ACK of the data");
    assert!(out.segs[0].flags & flags::FIN == 0);
}

/// After a timeout, ns-2.35 Full-TCP fast-retransmits only once the cumulative ACK has passed
/// `recover_` — `maxseq_` at the timeout, the highest sequence sent + 1 — strictly
/// (`FullTcpAgent::dupack_action`, `highest_ack_ > recover_`, bug_fix_ true): duplicates that
/// ACK exactly the old snd_max (the peer answering segments that go-back-N sent twice)
/// retransmit nothing. RFC 6582 §3.2 ("covers more than recover", recover being the highest
/// sequence number sent) enters recovery there, and so does the BSD model. The whole window
/// is lost, the timeout resends it one ACK at a time, new data follows, then three duplicate
/// ACKs of the old snd_max arrive.
#[test]
fn ns2_duplicates_at_the_old_snd_max_after_a_timeout_retransmit_nothing() {
    let mut bsd = TcpConfig::freebsd_4x();
    bsd.recovery = Recovery::NewReno;
    bsd.delayed_ack = false; // every segment ACKed at once, as ns-2.35 does full segments
    let mut ns2 = TcpConfig::ns2_35_fulltcp();
    ns2.recovery = Recovery::NewReno;
    for (cfg, fast_retransmit) in [(ns2, false), (bsd, true)] {
        let mss = cfg.mss as u64;
        let (mut cl, mut sv, mut t) = handshake_after_syn_losses(&cfg, 0);
        let mut out = Outbox::default();
        sv.write(t, &cfg, 40 * mss, &mut out);
        let first: Vec<u64> = out
            .segs
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| s.seq)
            .collect();
        let old_max = first.last().unwrap() + mss;
        out.clear(); // the whole window is lost
        t = sv.rexmt_deadline().unwrap();
        sv.on_timer(t, &cfg, &mut out);
        // Go-back-N, in lockstep, the ACKs one at a time, until one reaches the old snd_max.
        let dup = 'outer: loop {
            assert!(
                !out.segs.is_empty(),
                "{:?}: the sender stalled",
                cfg.timer_model
            );
            t += 10 * MS;
            let acks = deliver(&mut out, &mut cl, &cfg, t);
            t += 10 * MS;
            for a in acks.segs.iter().map(seg_to_packet) {
                sv.on_segment(t, &cfg, &a, &mut out);
                if a.ack >= old_max {
                    break 'outer a;
                }
            }
        };
        assert_eq!(dup.ack, old_max);
        assert!(sv.rexmt_deadline().is_some(), "new data is outstanding");
        out.clear();
        for k in 0..3 {
            sv.on_segment(t + (k + 1) * MS, &cfg, &dup, &mut out);
        }
        let resent = out.segs.iter().any(|s| s.len > 0 && s.seq == old_max);
        assert_eq!(resent, fast_retransmit, "{:?}", cfg.timer_model);
        let expect = if fast_retransmit { 1 } else { 0 };
        assert_eq!(
            sv.counters.fast_retransmits, expect,
            "{:?}",
            cfg.timer_model
        );
    }
}

/// Linux after lost SYNs or SYN-ACKs: the ACK that completes the handshake echoes the
/// timestamp of the copy it answers, which gives an RTT sample in the TS clock's ms
/// (`tcp_ack_update_rtt`) and clears the backoff; a server's new socket never had one
/// (`tcp_create_openreq_child`). So the first data is timed from that sample: srtt 100 ms,
/// rttvar max(50 ms, `TCP_RTO_MIN` 200 ms), RTO 300 ms (`__tcp_set_rto`), 75 jiffies, which
/// the timer wheel's second level rounds up to its 8-jiffy (32-ms) granularity, where the backed-off timers of the handshake would give 8 s (server: three
/// SYN-ACK timeouts from 1 s) or 2 s (client: the next linear SYN timeout doubled).
#[test]
fn linux_times_the_first_data_from_the_handshake_echo() {
    let cfg = TcpConfig::linux_cubic();
    let check = |ep: &mut Endpoint, t: u64, who: &str| {
        let mut out = Outbox::default();
        ep.write(t, &cfg, 100, &mut out);
        assert_eq!(out.segs.iter().filter(|s| s.len > 0).count(), 1, "{who}");
        let timer = (ep.rexmt_deadline().unwrap() - t) as f64 * 1e-9;
        let level1 = 8.0 * cfg.tick_ms * 1e-3;
        assert!(
            (0.3 - 1e-9..=0.3 + level1 + 1e-9).contains(&timer),
            "{who}: first data timer {timer} s, expected 0.3 s"
        );
    };
    // The client's SYN lost twice (copies at 0, 1, 2 s), then a 100-ms RTT.
    let (mut cl, _, t) = handshake_after_syn_losses(&cfg, 2);
    check(&mut cl, t, "client");
    // The server's SYN-ACK lost three times (copies at 50 ms, 1.05, 3.05, 7.05 s).
    let (mut cl, mut sv) = (Endpoint::new(&cfg, 0), Endpoint::new(&cfg, 0));
    let mut out = Outbox::default();
    sv.listen(0);
    cl.connect(0, &cfg, &mut out);
    let mut syn_ack = deliver(&mut out, &mut sv, &cfg, 50 * MS);
    let mut t = 50 * MS;
    for _ in 0..3 {
        syn_ack.clear(); // lost
        t = sv.next_deadline().expect("SYN-ACK timer");
        sv.on_timer(t, &cfg, &mut syn_ack);
        assert!(syn_ack.segs.iter().any(|s| s.flags & flags::SYN != 0));
    }
    let mut ack = deliver(&mut syn_ack, &mut cl, &cfg, t + 50 * MS);
    let _ = deliver(&mut ack, &mut sv, &cfg, t + 100 * MS);
    check(&mut sv, t + 100 * MS, "server");
}
