//! Capacity steps (`topology.bottleneck_steps`): the bottleneck's rate changes at set times,
//! in both directions, or each direction its own on an asymmetric link
//! (`topology.bottleneck_reverse_mbps`).

use aqmlab::config::RateStep;
use aqmlab::sim::Simulation;

use crate::common::*;

/// 8 greedy flows, 10 Mb/s stepping down to 2 Mb/s at 10 s and back up to 10 Mb/s at 20 s
/// (1-s intervals): no interval sends more than its capacity (a 1500-byte packet of slack for
/// the one in service at an interval's edge); the link stays busy; the whole-run
/// `utilization_ip` is measured against the mean capacity (10·5 + 2·10 + 10·5)/20 = 6 Mb/s
/// over the 5–25 s measured period.
#[test]
fn the_link_serves_at_each_steps_rate() {
    let mut sc = greedy_10mbps(8, 25.0, 4);
    sc.warmup_s = 5.0;
    sc.topology.bottleneck_steps = vec![
        RateStep {
            at_s: 10.0,
            mbps: 2.0,
            reverse_mbps: None,
        },
        RateStep {
            at_s: 20.0,
            mbps: 10.0,
            reverse_mbps: None,
        },
    ];
    let (sim, tables) = run(sc);
    let b = table(&tables, "bottleneck");
    let (t, thr) = (f64s(b, "t_s"), f64s(b, "throughput_mbps"));
    let dir = match &b.columns.iter().find(|c| c.0 == "direction").unwrap().1 {
        aqmlab::measure::Column::Str(v) => v.clone(),
        _ => unreachable!(),
    };
    let slack = 1500.0 * 8.0 / 1e6; // Mb in one packet, per 1-s interval
    let mut checked = 0; // intervals checked in the data's direction
    for (i, (&t, &mbps)) in t.iter().zip(&thr).enumerate() {
        if dir[i] != "reverse" || t <= 3.0 {
            continue; // the ACKs' direction (the servers are on the right), and slow start
        }
        checked += 1;
        let cap = if t > 10.0 && t <= 20.0 { 2.0 } else { 10.0 };
        assert!(mbps <= cap + slack, "t = {t}: {mbps} Mb/s over {cap}");
        assert!(mbps >= 0.9 * cap, "t = {t}: {mbps} Mb/s of {cap}");
    }
    assert!(checked >= 20, "{checked} intervals");
    let s = &sim.summary().reverse;
    let carried = s.throughput_mbps;
    assert!((s.utilization_ip - carried / 6.0).abs() < 1e-12, "{s:?}");
    assert!(s.utilization_ip > 0.95 && s.utilization_ip <= 1.0 + 1e-9);
}

#[test]
fn steps_are_validated() {
    let err = |steps: Vec<(f64, f64)>| {
        let mut sc = greedy_10mbps(1, 5.0, 1);
        sc.warmup_s = 0.0;
        sc.topology.bottleneck_steps = steps
            .into_iter()
            .map(|(at_s, mbps)| RateStep {
                at_s,
                mbps,
                reverse_mbps: None,
            })
            .collect();
        Simulation::new(sc).err().map(|e| e.to_string())
    };
    assert_eq!(err(vec![(1.0, 5.0), (2.0, 1.0)]), None);
    let e = err(vec![(1.0, 5.0), (1.0, 1.0)]).unwrap();
    assert!(
        e.starts_with("topology.bottleneck_steps[1].at_s = 1"),
        "{e}"
    );
    let e = err(vec![(0.0, 5.0)]).unwrap();
    assert!(
        e.starts_with("topology.bottleneck_steps[0].at_s = 0"),
        "{e}"
    );
    let e = err(vec![(1.0, 0.0)]).unwrap();
    assert!(
        e.starts_with("topology.bottleneck_steps[0].mbps = 0"),
        "{e}"
    );
}

/// The data rate of each 1-s interval of the reverse direction (the downloads' data: servers
/// on the right), after slow start.
fn reverse_intervals(tables: &[aqmlab::measure::Table]) -> Vec<(f64, f64)> {
    let b = table(tables, "bottleneck");
    let (t, thr) = (f64s(b, "t_s"), f64s(b, "throughput_mbps"));
    let dir = match &b.columns.iter().find(|c| c.0 == "direction").unwrap().1 {
        aqmlab::measure::Column::Str(v) => v.clone(),
        _ => unreachable!(),
    };
    (0..t.len())
        .filter(|&i| dir[i] == "reverse" && t[i] > 3.0)
        .map(|i| (t[i], thr[i]))
        .collect()
}

/// An asymmetric access link: 2 Mb/s right → left (the downloads' direction) under a 10 Mb/s
/// forward direction. A step that names only `mbps` leaves the reverse rate alone on such a
/// link (10 s); one with `reverse_mbps` changes it (20 s: 5 Mb/s). Each interval's data rate
/// is at most its capacity (a packet of slack) and at least 90 % of it.
#[test]
fn an_asymmetric_link_serves_each_direction_at_its_own_rate() {
    let mut sc = greedy_10mbps(8, 30.0, 4);
    sc.warmup_s = 5.0;
    sc.topology.bottleneck_reverse_mbps = Some(2.0);
    sc.topology.bottleneck_steps = vec![
        RateStep {
            at_s: 10.0,
            mbps: 20.0,
            reverse_mbps: None,
        },
        RateStep {
            at_s: 20.0,
            mbps: 20.0,
            reverse_mbps: Some(5.0),
        },
    ];
    let (_sim, tables) = run(sc);
    let slack = 1500.0 * 8.0 / 1e6;
    let rows = reverse_intervals(&tables);
    assert!(rows.len() >= 25, "{} intervals", rows.len());
    for (t, mbps) in rows {
        // The interval ending at 21 s straddles the step's slow restart of the queue's drain.
        let cap = if t <= 20.0 { 2.0 } else { 5.0 };
        assert!(mbps <= cap + slack, "t = {t}: {mbps} Mb/s over {cap}");
        if t > 22.0 || t <= 20.0 {
            assert!(mbps >= 0.9 * cap, "t = {t}: {mbps} Mb/s of {cap}");
        }
    }
}

#[test]
fn the_reverse_rate_is_validated() {
    let mut sc = greedy_10mbps(1, 5.0, 1);
    sc.warmup_s = 0.0;
    sc.topology.bottleneck_reverse_mbps = Some(0.0);
    let e = Simulation::new(sc).err().unwrap().to_string();
    assert!(e.starts_with("topology.bottleneck_reverse_mbps = 0"), "{e}");
}
