//! Capacity steps (`topology.bottleneck_steps`): the bottleneck's rate changes at set times,
//! in both directions.

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
        },
        RateStep {
            at_s: 20.0,
            mbps: 10.0,
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
            .map(|(at_s, mbps)| RateStep { at_s, mbps })
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
