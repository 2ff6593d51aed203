//! `kind = "pie_linux"` (Linux's sch_pie, `aqm/sch_pie.rs`): Linux's defaults and one-line
//! errors; the same decisions as FQ-PIE with one flow (the path it is built from) when ECN is
//! off, where their only difference, the ECN limit, cannot act; tc's `pie` statistics.
//! The decisions against the packaged sch_pie.c are the `linux_qdisc` suite's `pie_linux`
//! cases (docs/validation.md).

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::Aqm;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::{BitsPerSec, MS};

use crate::common::*;

fn build(c: &AqmConfig) -> Aqm {
    c.build(BitsPerSec::from_mbps(10.0), 1500)
}

#[test]
fn pie_linux_defaults_are_sch_pies_and_errors_name_the_field() {
    let c = queue_cfg(serde_json::json!({"kind": "pie_linux"})).unwrap();
    let a = build(&c);
    assert_eq!(a.name(), "pie_linux");
    let Aqm::FqPie(f) = &a else {
        panic!("built as FQ-PIE's path")
    };
    assert_eq!((f.p.limit, f.p.flows), (1000, 1));
    let p = &f.p.pie;
    assert_eq!(
        (p.target, p.tupdate, p.alpha, p.beta),
        (15 * MS, 15 * MS, 2, 20)
    );
    assert!(!p.ecn && !p.bytemode && !p.dq_rate_estimator);
    assert_eq!(f.ecn_limit, (u64::MAX >> 8) / 10, "sch_pie's MAX_PROB / 10");
    let params = a.params_json();
    assert_eq!(params["kind"], "pie_linux");
    assert_eq!(params["params"]["limit"], 1000);
    assert!(params["params"].get("flows").is_none(), "{params}");
    for (key, value, says) in [
        ("alpha", serde_json::json!(33), "[0, 32]"),
        ("beta", serde_json::json!(40), "[0, 32]"),
        ("limit", serde_json::json!(0), "≥ 1"),
        ("tupdate_ms", serde_json::json!(0.0), "> 0"),
        ("target_ms", serde_json::json!(-1.0), "≥ 0"),
    ] {
        let mut q = serde_json::json!({"kind": "pie_linux"});
        q[key] = value;
        let e = queue_cfg(q).unwrap_err();
        assert!(
            e.contains(&format!("queue.{key}")) && e.contains(says) && !e.contains('\n'),
            "{e}"
        );
    }
    let e = queue_cfg(serde_json::json!({"kind": "pie_linux", "flows": 4})).unwrap_err();
    assert!(e.contains("flows"), "{e}");
}

/// 8 greedy CUBIC flows (no ECN) through sch_pie and through FQ-PIE with one flow and the
/// same limit: every record identical, and tc's counters agree with the run's own.
#[test]
fn pie_linux_decides_as_fq_pie_with_one_flow() {
    let tcp = TcpConfig::linux_cubic();
    let (a, ta) = run(greedy_linux_10mbps(
        &tcp,
        8,
        serde_json::json!({"kind": "pie_linux"}),
    ));
    let (b, tb) = run(greedy_linux_10mbps(
        &tcp,
        8,
        serde_json::json!({"kind": "fq_pie", "flows": 1, "limit": 1000}),
    ));
    // Every record identical but the queue trace's `aqm_state`: sch_pie's probability where
    // FQ-PIE gives its active flows.
    let without_state = |t: &[aqmlab::measure::Table]| {
        let mut t = t.to_vec();
        for table in t.iter_mut().filter(|x| x.name == "queue") {
            table.columns.retain(|(name, _)| *name != "aqm_state");
        }
        digest(&t)
    };
    assert_eq!(without_state(&ta), without_state(&tb));
    assert_ne!(digest(&ta), digest(&tb));
    let s = a.summary().reverse.clone();
    assert!(s.drops_early > 0 && s.utilization > 0.95, "{s:?}");
    // PIE holds the 8 flows' queue near its 15 ms target (no per-flow 2-MTU floor here).
    assert!(
        (8.0..=25.0).contains(&s.delay_mean_ms),
        "mean delay {} ms",
        s.delay_mean_ms
    );
    let json: serde_json::Value = serde_json::from_str(&a.summary_json()).unwrap();
    let st = &json["qdisc_reverse"];
    let other: serde_json::Value = serde_json::from_str(&b.summary_json()).unwrap();
    let ot = &other["qdisc_reverse"];
    for key in ["pkts_in", "dropped", "overlimit", "ecn_mark"] {
        assert_eq!(st[key], ot[key], "{key}");
    }
    // tc counts from the start: dropped ≥ the drops measured after the warm-up.
    assert!(st["dropped"].as_u64().unwrap() >= s.drops_early);
    // maxq: the longest queue an accepted packet found, below the limit and at least the
    // queue PIE holds; prob a fraction.
    let maxq = st["maxq"].as_u64().unwrap();
    assert!((10..1000).contains(&maxq), "maxq {maxq}");
    let prob = st["prob"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&prob), "prob {prob}");
    assert!(
        st.get("new_flow_count").is_none(),
        "sch_pie's statistics, not fq_pie's: {st}"
    );
}
