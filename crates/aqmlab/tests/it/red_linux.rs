//! Linux's RED (`red_linux`, `aqm/red_linux/`) in a network: ECN-capable FreeBSD Reno
//! downloads through a 10 Mb/s bottleneck running tc's `red limit 400000 min 5000 max 15000
//! avpkt 1000 ecn` (3 to 10 full packets: these flows keep a queue of a few dozen). ECT data is marked, not dropped (a selected Not-ECT packet — SYNs,
//! retransmissions, which RFC 3168 sends Not-ECT — is dropped unless `nodrop`); packets are
//! conserved; the same seed gives the same run.

use aqmlab::aqm::Aqm;

use crate::common::*;

fn run_red(extra: serde_json::Value) -> (aqmlab::sim::Simulation, Vec<aqmlab::measure::Table>) {
    let mut q = serde_json::json!({"kind": "red_linux", "limit": 400_000, "min": 5_000,
                                   "max": 15_000, "avpkt": 1000, "ecn": true});
    for (k, v) in extra.as_object().unwrap() {
        q[k] = v.clone();
    }
    let mut sc = greedy_10mbps(8, 20.0, 3);
    sc.warmup_s = 5.0;
    sc.tcp.ecn = true;
    sc.queue = queue_cfg(q).unwrap();
    run(sc)
}

/// The data direction's queue (downloads: right to left) and its RED.
fn data_queue(sim: &aqmlab::sim::Simulation) -> (&aqmlab::net::queue::QueueStats, &Aqm) {
    let q = &sim.link(sim.topology().reverse()).queue;
    (&q.stats, &q.aqm)
}

#[test]
fn ecn_data_is_marked_and_the_run_is_reproducible() {
    let (sim, tables) = run_red(serde_json::json!({}));
    assert_packets_conserved(&sim, &tables);
    let (st, aqm) = data_queue(&sim);
    let Aqm::RedLinux(r) = aqm else {
        panic!("not red_linux")
    };
    // The kernel's counters (from the start): marks far outnumber RED's drops (only the
    // Not-ECT SYNs and retransmissions can be dropped), every one an overlimit.
    let s = &r.stats;
    let (marks, drops) = (s.prob_mark + s.forced_mark, s.prob_drop + s.forced_drop);
    assert!(
        marks > 100 && 10 * drops < marks,
        "marks {marks}, drops {drops}"
    );
    assert_eq!(s.overlimits, marks + drops);
    // The queue's (after the warm-up): CE set by the queue ≤ the kernel's marks (a CE
    // arrival counts without a change), its drops ≤ the kernel's.
    assert!(st.marks > 0 && st.marks <= marks);
    assert!(st.drops_early + st.drops_forced <= drops);
    assert!(st.drops_overflow <= s.pdrop);
    let (_, again) = run_red(serde_json::json!({}));
    assert_eq!(digest(&tables), digest(&again));
}

/// With `nodrop`, RED never drops: a selected Not-ECT packet is queued (still an overlimit).
#[test]
fn nodrop_never_drops_for_red() {
    let (sim, tables) = run_red(serde_json::json!({"nodrop": true}));
    assert_packets_conserved(&sim, &tables);
    let (st, aqm) = data_queue(&sim);
    let Aqm::RedLinux(r) = aqm else {
        panic!("not red_linux")
    };
    let s = &r.stats;
    assert_eq!((s.prob_drop, s.forced_drop), (0, 0));
    assert_eq!(st.drops_early + st.drops_forced, 0);
    assert!(s.prob_mark + s.forced_mark > 100, "{s:?}");
    assert!(r.stats.overlimits >= r.stats.prob_mark + r.stats.forced_mark);
}
