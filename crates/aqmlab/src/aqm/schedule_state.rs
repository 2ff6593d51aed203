//! The discipline's state after each step of a schedule replay (`schedule_replay`), written as
//! the kernel harness writes it (validation/linux_qdisc/harness/harness_<qdisc>.c): the same
//! keys, in the kernel's own units, so that the two logs compare as text.
//!
//! CoDel's times are `codel_time_t` (ns >> 10, `include/net/codel.h`), as our model keeps
//! them.

use std::fmt::Write;

use super::{Aqm, QueueCounts, QueueLen};

/// A list of flows as the harness writes it: `3,7,1`.
fn join(it: impl Iterator<Item = usize>) -> String {
    it.map(|f| f.to_string()).collect::<Vec<_>>().join(",")
}

/// Linux's `DTIME_INVALID` and `DQCOUNT_INVALID` (−1 in a u64) for our `None`.
fn or_invalid(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

/// Appends the discipline's own `key=value` pairs to `line`; `flow_lens` are the packets
/// queued per flow (for a discipline with flow queues).
pub fn write(aqm: &Aqm, c: &QueueCounts, len: QueueLen, flow_lens: &[usize], line: &mut String) {
    match aqm {
        Aqm::Codel(a) => {
            let s = &a.s;
            let _ = write!(
                line,
                " count={} lastcount={} dropping={} rec_inv_sqrt={} first_above={} drop_next={} \
                 ldelay={} maxpacket={} ecn_mark={} ce_mark=0 drop_overlimit={}",
                s.count,
                s.lastcount,
                u8::from(s.dropping),
                s.rec_inv_sqrt,
                s.first_above_time,
                s.drop_next,
                s.ldelay,
                a.maxpacket,
                c.marks,
                c.drops_overflow,
            );
        },
        Aqm::FqCodel(a) => {
            let st = &a.stats;
            let _ = write!(
                line,
                " new_flow_count={} drop_overlimit={} drop_overmemory={} ecn_mark={} \
                 ce_mark={} maxpacket={} memory_usage={}",
                a.sched.new_flow_count,
                st.drop_overlimit,
                st.drop_overmemory,
                st.ecn_mark,
                st.ce_mark,
                st.maxpacket,
                len.bytes,
            );
            let (new, old) = a.sched.lists();
            let _ = write!(line, " new={} old={}", join(new), join(old));
            line.push_str(" flows=");
            let mut sep = "";
            for (i, v) in a.codel.iter().enumerate() {
                let backlog = a.sched.backlog[i];
                if !a.sched.is_listed(i) && backlog == 0 && v.count == 0 && v.first_above_time == 0
                {
                    continue;
                }
                let _ = write!(
                    line,
                    "{sep}{i}:{}:{backlog}:{}:{}:{}:{}:{}:{}",
                    a.sched.deficit[i],
                    v.count,
                    v.lastcount,
                    u8::from(v.dropping),
                    v.rec_inv_sqrt,
                    v.first_above_time,
                    v.drop_next,
                );
                sep = ";";
            }
        },
        Aqm::FqPie(a) => {
            let st = &a.stats;
            let _ = write!(
                line,
                " packets_in={} dropped={} overlimit={} overmemory={} ecn_mark={} \
                 new_flow_count={} memory_usage={}",
                st.packets_in,
                st.dropped,
                st.overlimit,
                st.overmemory,
                st.ecn_mark,
                a.sched.new_flow_count,
                a.memory_usage,
            );
            // sch_pie (`pie_linux`): its `maxq` too.
            if let Some(s) = a.single {
                let _ = write!(line, " maxq={}", s.maxq);
            }
            // One flow is Linux's sch_pie (one pie_vars on the whole queue): its variables
            // under sch_pie's harness keys too.
            if let [v] = a.vars.as_slice() {
                let _ = write!(
                    line,
                    " prob={} accu_prob={} qdelay={} qdelay_old={} burst_time={} dq_tstamp={} \
                     dq_count={} avg_dq_rate={}",
                    v.prob,
                    v.accu_prob,
                    v.qdelay,
                    v.qdelay_old,
                    v.burst_time,
                    or_invalid(v.dq_tstamp),
                    or_invalid(v.dq_count),
                    v.avg_dq_rate,
                );
            }
            let (new, old) = a.sched.lists();
            let _ = write!(line, " new={} old={}", join(new), join(old));
            line.push_str(" flows=");
            let mut sep = "";
            for (i, v) in a.vars.iter().enumerate() {
                let backlog = a.sched.backlog[i];
                if !a.sched.is_listed(i) && backlog == 0 && v.prob == 0 && v.accu_prob == 0 {
                    continue;
                }
                let _ = write!(
                    line,
                    "{sep}{i}:{}:{backlog}:{}:{}:{}:{}:{}:{}:{}",
                    a.sched.deficit[i],
                    flow_lens.get(i).copied().unwrap_or(0),
                    v.prob,
                    v.accu_prob,
                    v.qdelay,
                    v.qdelay_old,
                    v.burst_time,
                    or_invalid(v.dq_tstamp),
                );
                sep = ";";
            }
        },
        Aqm::Cake(a) => {
            let _ = write!(
                line,
                " buffer_used={} time_next_packet={}",
                a.buffer_used, a.shaper.time_next_packet
            );
            for (t, b) in a.tins.iter().enumerate() {
                let _ = write!(
                    line,
                    " tin{t}={}:{}:{}:{}:{}:{}:{}:{}:{}",
                    b.sparse_flow_count,
                    b.bulk_flow_count,
                    b.decaying_flow_count,
                    b.unresponsive_flow_count,
                    b.tin_deficit,
                    b.time_next_packet,
                    b.stats.packets,
                    b.stats.drops,
                    b.stats.marks,
                );
                let ids = |l: &std::collections::VecDeque<u16>| join(l.iter().map(|&i| i as usize));
                let _ = write!(
                    line,
                    " new{t}={} old{t}={} decaying{t}={}",
                    ids(&b.new_flows),
                    ids(&b.old_flows),
                    ids(&b.decaying_flows)
                );
                let _ = write!(line, " flows{t}=");
                let mut sep = "";
                for (i, f) in b.flows.iter().enumerate() {
                    let v = &f.cvars;
                    if f.list == super::cake::flow::List::None && b.backlogs[i] == 0 && v.count == 0
                    {
                        continue;
                    }
                    let _ = write!(
                        line,
                        "{sep}{i}:{}:{}:{}:{}:{}:{}:{}:{}:{}",
                        f.deficit,
                        b.backlogs[i],
                        f.set as u8,
                        v.count,
                        v.rec_inv_sqrt,
                        v.drop_next,
                        v.blue_timer,
                        v.p_drop,
                        u8::from(v.dropping),
                    );
                    sep = ";";
                }
            }
        },
        // DualPI2: `flow_lens` are the C and L queues' lengths. The probability in Linux's
        // units of 2⁻³² (exact with linux_fixed_point, else p′ · MAX_PROB rounded); head
        // times 0 for an empty queue, as Linux's `c_head_ts`/`l_head_ts`.
        Aqm::DualPi2(a) => {
            use super::dualpi2::{C, L, MAX_PROB};
            let s = &a.s;
            let prob = if a.p.linux_fixed_point {
                s.prob_fx
            } else {
                (s.prob * MAX_PROB as f64).round() as u32
            };
            let _ = write!(
                line,
                " prob={prob} last_qdelay={} c_head_ts={} l_head_ts={} credit={} l_qlen={} \
                 packets_in_c={} packets_in_l={} maxq={} ecn_mark={} step_marks={} \
                 memory_used={}",
                s.last_qdelay,
                s.head_ts[C].unwrap_or(0),
                s.head_ts[L].unwrap_or(0),
                s.credit,
                flow_lens.get(L).copied().unwrap_or(0),
                s.pkts_in_c,
                s.pkts_in_l,
                s.maxq,
                s.ecn_mark,
                s.step_marks,
                len.bytes,
            );
        },
        // Linux's RED: struct red_vars (qavg in bytes << Wlog, qidlestart in ns, 0 when not
        // idle), parms.max_P (2⁻³²; moves with adaptive) and struct red_stats.
        Aqm::RedLinux(a) => {
            let (v, s) = (&a.v, &a.stats);
            let _ = write!(
                line,
                " qavg={} qcount={} qR={} qidlestart={} max_P={} prob_drop={} prob_mark={} \
                 forced_drop={} forced_mark={} pdrop={}",
                v.qavg,
                v.qcount,
                v.qr,
                v.qidlestart,
                a.p.max_p,
                s.prob_drop,
                s.prob_mark,
                s.forced_drop,
                s.forced_mark,
                s.pdrop,
            );
        },
        _ => {},
    }
}
