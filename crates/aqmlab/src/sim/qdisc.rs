//! tc-style statistics of the bottleneck queues, as `tc -s qdisc show` prints them: the
//! header every qdisc has (`Sent B bytes P pkt (dropped D, overlimits O requeues 0)`,
//! `backlog Xb Yp`) and the discipline's own fields (`Aqm::qdisc_stats`), all counted from
//! the start of the run as tc's are; with `[trace] qdisc`, the same at the end of every
//! reporting interval (the `qdisc` table, long form). Nothing here runs per packet.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value};

use super::records::QdiscRows;
use crate::net::link::Link;
use crate::units::Time;

/// The statistics of the queue feeding `link` at `now`. The header, with Linux's meanings:
/// `sent_packets`/`sent_bytes` the packets taken from the queue for transmission (Linux
/// counts them at dequeue; IP bytes here, Linux adds the 14-byte Ethernet header),
/// `dropped` every queue drop (at enqueue and at dequeue), `overlimits` as the counterpart
/// qdisc counts them (`Aqm::tc_overlimits`), `requeues` 0 (no driver pushes back),
/// `backlog_bytes`/`backlog_packets` what is queued now (not the packet in service),
/// `marks` the CE marks. Besides tc's: `tx_packets`/`tx_bytes`, the transmissions completed
/// (those lost on the link included), which the `bottleneck` table's `tx_bytes` sums to;
/// they differ from `sent_*` by the packet in service.
pub fn tc_stats(link: &Link, now: Time) -> Map<String, Value> {
    let q = &link.queue;
    let s = &q.stats;
    let c = s.counts();
    let len = q.len();
    let mut m = crate::aqm::json_map(serde_json::json!({
        "sent_bytes": s.departure_bytes,
        "sent_packets": s.departures,
        "dropped": s.drops(),
        "overlimits": q.aqm.tc_overlimits(&c),
        "requeues": 0,
        "backlog_bytes": len.bytes,
        "backlog_packets": len.packets,
        "marks": s.marks,
        "tx_packets": link.tx_packets,
        "tx_bytes": link.tx_bytes,
    }));
    for (k, v) in q.aqm.qdisc_stats(now, &c) {
        // PIE's xstats repeat tc's header `dropped` (tc prints both): the same count.
        debug_assert!(
            m.get(&k).is_none_or(|h| *h == v),
            "{k} differs from the header's"
        );
        m.insert(k, v);
    }
    m
}

/// One row per numeric field of `stats` (nested ones, CAKE's tins, as `tins.0.drops`; a
/// flag as 0 or 1) at `t` for `direction`.
pub fn push_rows(
    rows: &mut QdiscRows,
    t: Time,
    direction: &'static str,
    stats: &Map<String, Value>,
) {
    for (k, v) in stats {
        push_value(rows, t as f64 * 1e-9, direction, k, v);
    }
}

fn push_value(rows: &mut QdiscRows, t_s: f64, direction: &'static str, name: &str, v: &Value) {
    let value = match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                push_value(rows, t_s, direction, &format!("{name}.{i}"), x);
            }
            return;
        },
        Value::Object(o) => {
            for (k, x) in o {
                push_value(rows, t_s, direction, &format!("{name}.{k}"), x);
            }
            return;
        },
        Value::Null | Value::String(_) => return,
    };
    rows.t_s.push(t_s);
    rows.direction.push(direction);
    rows.field.push(intern(name));
    rows.value.push(value);
}

/// The field names as `'static` labels (the table's string columns hold no allocation per
/// row): each distinct name is leaked once per process, a few hundred at most.
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = names.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(name.to_owned(), s);
    s
}
