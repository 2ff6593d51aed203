//! tc-style statistics (`summary.json` `qdisc_forward`/`qdisc_reverse`, the `qdisc` table of
//! `[trace] qdisc`): tc's header reconciles exactly with the `bottleneck` table and the
//! post-warm-up summary, every queue kind conserves packets in it, and the time series ends
//! on the summary's totals.

use aqmlab::measure::{Column, Table};
use serde_json::Value;

use crate::common::*;

/// 2 × 10 Mb/s of 1000-byte UDP CBR (one flow, left to right, from t = 0) into a 10 Mb/s
/// bottleneck running `queue`, 12 s with a 4 s warm-up, reporting every second.
fn cbr_overload(queue: Value, trace_qdisc: bool) -> (aqmlab::sim::Simulation, Vec<Table>) {
    let mut sc = base(12.0);
    sc.warmup_s = 4.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.queue = serde_json::from_value(queue).unwrap();
    sc.traffic = serde_json::from_value(serde_json::json!([
        {"kind": "udp_cbr", "flows": 1, "rate_mbps": 20.0, "packet_bytes": 1000,
         "direction": "upload", "client_side": "left"}
    ]))
    .unwrap();
    sc.trace.qdisc = trace_qdisc;
    run(sc)
}

fn strs<'a>(t: &'a Table, col: &str) -> &'a [&'static str] {
    match t.column(col) {
        Some(Column::Str(v)) => v,
        _ => panic!("no str column {col}"),
    }
}

fn summary_json(sim: &aqmlab::sim::Simulation) -> Value {
    serde_json::from_str(&sim.summary_json()).unwrap()
}

/// Sum of a `bottleneck` column over one direction's rows, optionally up to `until_s`.
fn column_sum(tables: &[Table], dir: &str, col: &str, until_s: f64) -> u64 {
    let b = table(tables, "bottleneck");
    let (t, d, v) = (f64s(b, "t_s"), strs(b, "direction"), u64s(b, col));
    (0..b.rows())
        .filter(|&i| d[i] == dir && t[i] <= until_s + 1e-9)
        .map(|i| v[i])
        .sum()
}

/// tc's counters of a CBR overload through RED, by hand and against the `bottleneck` table:
/// the link sends 10 Mb/s of the 20 offered, so about half the arrivals are dropped (all by
/// RED: early or forced, never at the 1000-packet limit it keeps the average far below);
/// Sent = the table's departures, its tx_bytes = the completed transmissions, dropped = its
/// three drop columns, arrivals = sent + dropped + backlog; Sent minus the departures of
/// the warm-up's intervals = the post-warm-up summary's departures.
#[test]
fn red_cbr_overload_reconciles_with_the_bottleneck_table() {
    let (sim, tables) = cbr_overload(
        serde_json::json!({"kind": "red", "limit": 1000, "min_th": 5, "max_th": 15}),
        true,
    );
    let json = summary_json(&sim);
    let q = &json["qdisc_forward"];
    let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("{k} in {q}"));
    let all = f64::MAX;
    // By hand: 1000-byte packets at 10 Mb/s are 1250 per second, offered at 2500; the
    // first reaches the bottleneck after the delay box's 50 ms (half the 100 ms RTT) and
    // the queue never empties after, so 11.95 s send 14 937 and receive 29 875.
    assert!((14_935..=14_940).contains(&n("tx_packets")), "{q}");
    assert_eq!(n("tx_bytes"), 1000 * n("tx_packets"));
    let arrivals = column_sum(&tables, "forward", "arrivals", all);
    assert!((29_870..=29_880).contains(&arrivals), "{arrivals}");
    // Against the table, exactly.
    assert_eq!(
        n("sent_packets"),
        column_sum(&tables, "forward", "departures", all)
    );
    assert_eq!(
        n("tx_bytes"),
        column_sum(&tables, "forward", "tx_bytes", all)
    );
    assert!(
        n("sent_packets") - n("tx_packets") <= 1,
        "one packet in service at most"
    );
    assert_eq!(n("sent_bytes"), 1000 * n("sent_packets"));
    let drops: u64 = ["drops_early", "drops_forced", "drops_overflow"]
        .iter()
        .map(|c| column_sum(&tables, "forward", c, all))
        .sum();
    assert_eq!(n("dropped"), drops);
    assert_eq!(n("marks"), column_sum(&tables, "forward", "marks", all));
    assert_eq!(
        arrivals,
        n("sent_packets") + n("dropped") + n("backlog_packets")
    );
    assert_eq!(n("backlog_bytes"), 1000 * n("backlog_packets"));
    assert_eq!(n("requeues"), 0);
    // RED's xstats: no ECN, so nothing marked; every drop RED's own, each an overlimit.
    assert_eq!((n("marked"), n("pdrop"), n("other")), (0, 0, 0));
    assert_eq!(n("early"), n("dropped"));
    assert_eq!(n("overlimits"), n("early") + n("marked"));
    assert!(q.get("max_p").is_none(), "max_p is ARED's");
    // tc counts from the start, the summary after the warm-up.
    let s = &sim.summary().forward;
    let warm = column_sum(&tables, "forward", "departures", 4.0);
    assert_eq!(n("sent_packets") - warm, s.departures);
    let warm_tx = column_sum(&tables, "forward", "tx_bytes", 4.0);
    assert_eq!(n("tx_bytes") - warm_tx, s.tx_bytes);
    let warm_drops = column_sum(&tables, "forward", "drops_early", 4.0)
        + column_sum(&tables, "forward", "drops_forced", 4.0);
    assert_eq!(n("dropped") - warm_drops, s.drops_early + s.drops_forced);
    // The reverse direction carries nothing.
    assert_eq!(json["qdisc_reverse"]["sent_packets"].as_u64(), Some(0));
}

/// Linux's RED (`red_linux`: tc's `limit 60000 min 10000 max 30000 avpkt 1000`) through the
/// same overload: half the arrivals must go. tc's counters: dropped = early + pdrop (RED's
/// drops and the bfifo's), early = prob_drop + forced_drop, overlimits = early (no ECN: no
/// marks), the header conserves packets; the backlog stays under the 60 000-byte bfifo.
/// With a standing queue the average (bytes, in the trace) ends between min and the limit,
/// and with max_P fixed at tc's 0.02 the forced drops (average ≥ max) far outnumber the
/// probabilistic ones.
#[test]
fn red_linux_cbr_overload_counts_as_tc() {
    let queue = serde_json::json!({"kind": "red_linux", "limit": 60_000, "min": 10_000,
                                   "max": 30_000, "avpkt": 1000});
    let (sim, tables) = cbr_overload(queue, false);
    let json = summary_json(&sim);
    let q = &json["qdisc_forward"];
    let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("{k} in {q}"));
    let arrivals = column_sum(&tables, "forward", "arrivals", f64::MAX);
    assert_eq!(
        arrivals,
        n("sent_packets") + n("dropped") + n("backlog_packets")
    );
    assert!((arrivals / 2).abs_diff(n("dropped")) < arrivals / 50, "{q}");
    assert_eq!(n("dropped"), n("early") + n("pdrop"));
    assert_eq!(n("early"), n("prob_drop") + n("forced_drop"));
    assert_eq!((n("marked"), n("other")), (0, 0));
    assert_eq!(n("overlimits"), n("early"));
    assert!(
        n("forced_drop") > 5 * n("prob_drop") && n("prob_drop") > 0,
        "{q}"
    );
    assert!(n("backlog_bytes") <= 60_000);
    assert_eq!(
        q["probability"].as_f64(),
        Some(85_899_345.0 / 4_294_967_296.0)
    );
    let Some(aqmlab::aqm::Aqm::RedLinux(r)) = Some(&sim.link(sim.topology().forward()).queue.aqm)
    else {
        panic!("not red_linux")
    };
    let avg = r.state_probe().1;
    assert!((10_000.0..60_000.0).contains(&avg), "{avg}");
}

/// The `qdisc` table: rows only with `[trace] qdisc`; one set per direction per reporting
/// interval and one at the end, the last equal to the summary's statistics; the other
/// tables identical with and without it (tracing changes nothing simulated).
#[test]
fn qdisc_table_only_when_traced_and_ends_on_the_summary() {
    let queue = serde_json::json!({"kind": "codel", "limit": 1000});
    let (sim, tables) = cbr_overload(queue.clone(), true);
    let (_, untraced) = cbr_overload(queue, false);
    assert!(untraced.iter().all(|t| t.name != "qdisc"));
    let others: Vec<Table> = tables
        .iter()
        .filter(|t| t.name != "qdisc")
        .cloned()
        .collect();
    assert_eq!(digest(&others), digest(&untraced));
    let t = table(&tables, "qdisc");
    let (ts, dir, field, value) = (
        f64s(t, "t_s"),
        strs(t, "direction"),
        strs(t, "field"),
        f64s(t, "value"),
    );
    let mut times: Vec<f64> = ts.clone();
    times.dedup();
    assert_eq!(times, (1..=12).map(f64::from).collect::<Vec<_>>());
    let json = summary_json(&sim);
    for (d, key) in [("forward", "qdisc_forward"), ("reverse", "qdisc_reverse")] {
        let last: Vec<(&str, f64)> = (0..t.rows())
            .filter(|&i| dir[i] == d && ts[i] == 12.0)
            .map(|i| (field[i], value[i]))
            .collect();
        let q = json[key].as_object().unwrap();
        assert_eq!(last.len(), q.len(), "{d}: {last:?} vs {q:?}");
        for (f, v) in last {
            assert_eq!(Some(v), q[f].as_f64(), "{d} {f}");
        }
        // Cumulative counters never decrease.
        for f in ["sent_packets", "dropped", "tx_bytes"] {
            let series: Vec<f64> = (0..t.rows())
                .filter(|&i| dir[i] == d && field[i] == f)
                .map(|i| value[i])
                .collect();
            assert_eq!(series.len(), 12);
            assert!(series.windows(2).all(|w| w[0] <= w[1]), "{d} {f}");
        }
    }
    // CoDel's xstats through an unresponsive 2x overload: its control law falls behind,
    // the buffer fills, and tail drops (drop_overlimit) take most of the excess.
    let q = &json["qdisc_forward"];
    let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("{k} in {q}"));
    assert!(n("count") > 0 && n("lastcount") > 0, "{q}");
    assert_eq!(n("maxpacket"), 1000);
    let overflow = column_sum(&tables, "forward", "drops_overflow", f64::MAX);
    assert!(overflow > 0);
    assert_eq!(n("drop_overlimit"), overflow);
    assert_eq!(
        n("dropped") - n("drop_overlimit"),
        column_sum(&tables, "forward", "drops_early", f64::MAX)
    );
    assert_eq!(n("overlimits"), 0);
    assert!(n("ldelay") >= 5_000, "above the 5 ms target: {q}");
}

/// tc's fields of each discipline's counterpart, by kind.
fn xstats_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "droptail" => &[],
        "red" | "gred_i" => &["marked", "early", "pdrop", "other"],
        "ared" => &["marked", "early", "pdrop", "other", "max_p"],
        "pi" => &["prob"],
        "rem" => &["price", "prob"],
        "codel" => &[
            "count",
            "lastcount",
            "ldelay",
            "drop_next",
            "dropping",
            "ecn_mark",
            "maxpacket",
            "drop_overlimit",
        ],
        "pie" => &[
            "prob",
            "delay",
            "avg_dq_rate",
            "pkts_in",
            "overlimit",
            "dropped",
            "maxq",
            "ecn_mark",
        ],
        "fq_codel" => &["maxpacket", "drop_overlimit", "ecn_mark", "new_flow_count"],
        "fq_pie" => &["pkts_in", "overlimit", "dropped", "ecn_mark"],
        "dualpi2" => &[
            "prob",
            "delay_c",
            "delay_l",
            "pkts_in_c",
            "pkts_in_l",
            "maxq",
        ],
        "cake" => &["capacity_estimate", "memory_used", "tins"],
        "red_linux" => &[
            "marked",
            "early",
            "pdrop",
            "other",
            "prob_drop",
            "prob_mark",
            "forced_drop",
            "forced_mark",
            "probability",
        ],
        _ => panic!("unknown kind {kind}"),
    }
}

/// Every queue kind, through every traffic model: tc's header conserves packets
/// (arrivals = sent + dropped + backlog), dropped is every queue drop, and the kind's own
/// fields are there; the PIE-family counters agree with the header.
#[test]
fn every_queue_kind_has_tc_statistics_that_conserve_packets() {
    for queue in [
        serde_json::json!({"kind": "droptail", "limit": 100}),
        serde_json::json!({"kind": "red", "limit": 100, "min_th": 5.0, "max_th": 15.0}),
        serde_json::json!({"kind": "gred_i", "limit": 100, "min_th": 5.0}),
        serde_json::json!({"kind": "ared", "limit": 100, "target_delay_ms": 5.0}),
        serde_json::json!({"kind": "pi", "limit": 100, "q_ref": 20.0}),
        serde_json::json!({"kind": "rem", "limit": 100, "b_ref": 20.0}),
        serde_json::json!({"kind": "codel", "ecn": true}),
        serde_json::json!({"kind": "pie", "ecn": true}),
        serde_json::json!({"kind": "fq_codel"}),
        serde_json::json!({"kind": "fq_pie"}),
        serde_json::json!({"kind": "dualpi2"}),
        serde_json::json!({"kind": "cake", "bandwidth": "9Mbit"}),
        serde_json::json!({"kind": "red_linux", "limit": 150_000, "avpkt": 1000, "ecn": true}),
    ] {
        let kind = queue["kind"].as_str().unwrap().to_owned();
        let sim = every_traffic_model(queue);
        let json = summary_json(&sim);
        for (dir, key) in [(0, "qdisc_forward"), (1, "qdisc_reverse")] {
            let q = json[key].as_object().unwrap();
            let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("{kind} {key} {k}"));
            let link = [sim.topology().forward(), sim.topology().reverse()][dir];
            let st = &sim.link(link).queue.stats;
            assert_eq!(
                st.arrivals,
                n("sent_packets") + n("dropped") + n("backlog_packets"),
                "{kind} {key}"
            );
            assert_eq!(n("dropped"), st.drops(), "{kind} {key}");
            assert_eq!(n("marks"), st.marks, "{kind} {key}");
            assert!(n("sent_packets") > 0, "{kind} {key}");
            for f in xstats_of(&kind) {
                assert!(q.contains_key(*f), "{kind} {key} lacks {f}: {q:?}");
            }
            if kind == "pie" {
                assert_eq!(n("pkts_in") + n("dropped"), st.arrivals, "{kind} {key}");
                assert_eq!(n("ecn_mark"), st.marks, "{kind} {key}");
                assert!(n("maxq") < st.peak_packets as u64 + 1, "{kind} {key}");
            }
            if kind == "red" {
                assert_eq!(n("early") + n("pdrop"), st.drops(), "{kind} {key}");
                assert_eq!(n("overlimits"), n("early") + n("marked"), "{kind} {key}");
            }
            if kind == "droptail" {
                let header = [
                    "sent_bytes",
                    "sent_packets",
                    "dropped",
                    "overlimits",
                    "requeues",
                    "backlog_bytes",
                    "backlog_packets",
                    "marks",
                    "tx_packets",
                    "tx_bytes",
                ];
                assert_eq!(q.len(), header.len(), "pfifo has no xstats: {q:?}");
            }
        }
    }
}

/// A packet that reaches the bottleneck exactly at `duration_s`, when the last reporting
/// interval also ends (issue 36, fuzzer finding 5): it is in the summary, so it must be in the
/// table's last interval too. 1000-byte CBR packets leave every 1 ms from t = 0; each waits
/// the delay box's half RTT (19.92 ms) and its 80 µs on the 100 Mb/s access link, so packet
/// k arrives at k ms + 20 ms, and packet 1980 at 2 s, the end of the run.
#[test]
fn an_arrival_at_the_end_of_the_run_is_in_the_last_interval() {
    let mut sc = base(2.0);
    sc.rtt = aqmlab::config::RttConfig::Constant { rtt_ms: 39.84 };
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.traffic = serde_json::from_value(serde_json::json!([
        {"kind": "udp_cbr", "flows": 1, "rate_mbps": 8.0, "packet_bytes": 1000,
         "direction": "upload", "client_side": "left"}
    ]))
    .unwrap();
    let (sim, tables) = run(sc);
    let s = &sim.summary().forward;
    assert_eq!(s.arrivals, 1981, "packets 0..=1980");
    assert_eq!(
        column_sum(&tables, "forward", "arrivals", f64::MAX),
        s.arrivals
    );
    assert_eq!(
        column_sum(&tables, "forward", "departures", f64::MAX),
        s.departures
    );
}
