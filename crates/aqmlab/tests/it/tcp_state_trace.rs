//! `[trace.tcp]`: the per-connection state table against a hand-computed cwnd trajectory,
//! and its selection and sampling rules.

use aqmlab::config::trace::TcpTraceConfig;
use aqmlab::config::Scenario;
use aqmlab::measure::{Column, Table};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::Recovery;

use crate::common::*;

fn tcp_trace(interval_ms: f64) -> TcpTraceConfig {
    TcpTraceConfig {
        connections: vec![],
        hosts: vec![],
        sample: 1.0,
        start_s: 0.0,
        end_s: None,
        interval_ms,
        segments: true,
    }
}

/// Runs `sc` (traced) with its data segments `lost` dropped on the reverse link, in chunks
/// (the rows must not depend on the chunking): every table, merged.
fn run_lossy(mut sc: Scenario, lost: &[u64]) -> Vec<Table> {
    sc.trace.tcp.get_or_insert_with(|| tcp_trace(0.0));
    let mut sim = Simulation::new(sc).unwrap();
    let link = sim.topology().reverse();
    lose_segments(&mut sim, link, MSS, lost);
    run_sim(sim).1
}

fn strs<'a>(t: &'a Table, name: &str) -> &'a [&'static str] {
    match &t.columns.iter().find(|(n, _)| *n == name).unwrap().1 {
        Column::Str(v) => v,
        _ => panic!("{name} is not a label column"),
    }
}

/// One lost segment, Reno, no delayed ACKs, IW 1, a receiver window far above the flight,
/// RTT 100 ms on 1 Gb/s links (the flight of a round arrives back to back).
///
/// By hand (RFC 5681 §3.1-3.2, Reno as ns-2's Full-TCP codes it):
/// - slow start, cwnd +1 segment per ACK: rounds of 1, 2, 4, 8, 16 segments. Segment 20 is
///   the sixth of the fifth round (segments 15-30): the ACKs of 15-19 take cwnd from 16 to
///   21, each releasing two new segments (31-40);
/// - the 20 segments after the hole (21-30, 31-40) each bring a duplicate ACK. The first
///   puts the sender in Disorder; the third starts fast recovery: ssthresh = cwnd/2 = 10,
///   cwnd = ssthresh + 3 = 13, then +1 for each of the 17 further duplicates: 30;
/// - the retransmission's ACK covers all 41 segments sent before recovery: cwnd deflates to
///   ssthresh = 10 segments, Open, and, being a new ACK, opens the window at once by
///   MSS²/cwnd (ns-2 tcp-full.cc: the deflation, then `recv_newack_helper`'s `opencwnd`):
///   14600 + 146 bytes; then congestion avoidance. ns-2 keeps cwnd in segments, a double
///   (tcp.cc `opencwnd`, `wnd_option_` 1: cwnd += 1/cwnd per ACK), of which the window in
///   bytes is the whole part of cwnd·MSS.
#[test]
fn one_loss_reno_cwnd_trajectory_is_the_hand_computed_one() {
    let mut sc = base(20.0);
    sc.tcp.recovery = Recovery::Reno;
    sc.tcp.initial_window = 1;
    sc.tcp.delayed_ack = false;
    sc.traffic = vec![bulk(1, Some(60 * MSS))];
    let tables = run_lossy(sc, &[20]);
    let t = table(&tables, "tcp_state");
    let side = strs(t, "side");
    let (cw, ss, st) = (u64s(t, "cwnd"), u64s(t, "ssthresh"), strs(t, "ca_state"));
    // The server's distinct states in order (a row is written when anything changes: RTT
    // estimates too, so consecutive equal triples are merged).
    let mut path: Vec<(u64, u64, &str)> = Vec::new();
    for i in (0..side.len()).filter(|&i| side[i] == "server") {
        let ssthresh = if ss[i] > 1000 * MSS { 0 } else { ss[i] };
        let row = (cw[i], ssthresh, st[i]);
        if path.last() != Some(&row) {
            path.push(row);
        }
    }
    let seg = |k: u64| k * MSS;
    let mut want: Vec<(u64, u64, &str)> = (1..=21).map(|k| (seg(k), 0, "open")).collect();
    want.push((seg(21), 0, "disorder"));
    want.extend((13..=30).map(|k| (seg(k), seg(10), "recovery")));
    let mut cwnd_segs = 10.0 + 1.0 / 10.0;
    let bytes = |c: f64| (c * MSS as f64) as u64;
    want.push((bytes(cwnd_segs), seg(10), "open"));
    assert_eq!(&path[..want.len()], &want[..], "whole path: {path:?}");
    let ca: Vec<u64> = path[want.len()..].iter().map(|r| r.0).collect();
    assert!(ca.len() >= 10, "{ca:?}");
    for (k, &got) in ca.iter().enumerate() {
        cwnd_segs += 1.0 / cwnd_segs;
        assert_eq!(
            got,
            bytes(cwnd_segs),
            "congestion-avoidance ACK {k}: {ca:?}"
        );
        assert_eq!(path[want.len() + k].2, "open");
    }
    assert!(cwnd_segs >= 11.0, "reached {cwnd_segs}");
}

/// With an interval, at most one row per endpoint per interval; the selection keeps only the
/// listed connections; the segments table holds exactly the traced connections' segments.
#[test]
fn interval_rows_and_selection() {
    let mut sc = base(10.0);
    sc.traffic = vec![bulk(4, None)];
    let mut tr = tcp_trace(50.0);
    tr.connections = vec![1, 3];
    sc.trace.tcp = Some(tr);
    let tables = run_lossy(sc, &[]);
    let t = table(&tables, "tcp_state");
    let ids = u64s(t, "conn_id");
    let ts = f64s(t, "t_s");
    let side = strs(t, "side");
    assert!(
        ids.iter().all(|&i| i == 1 || i == 3),
        "only connections 1 and 3"
    );
    for id in [1, 3] {
        for s in ["client", "server"] {
            let times: Vec<f64> = (0..ids.len())
                .filter(|&i| ids[i] == id && side[i] == s)
                .map(|i| ts[i])
                .collect();
            assert!(times.len() >= 90, "{id} {s}: {} rows", times.len());
            for w in times.windows(2) {
                assert!(
                    (w[1] / 0.05).floor() > (w[0] / 0.05).floor(),
                    "two rows in one 50 ms interval: {w:?}"
                );
            }
        }
    }
    let segs = table(&tables, "segments");
    let conns = u64s(segs, "conn");
    assert!(!conns.is_empty() && conns.iter().all(|&c| c == 1 || c == 3));
}
