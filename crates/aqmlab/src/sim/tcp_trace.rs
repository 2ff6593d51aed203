//! Per-connection TCP traces (`[trace.tcp]`): the chosen connections' congestion-control
//! state (`tcp_state`: cwnd, ssthresh, SRTT, RTTVAR, RTO, bytes in flight, loss-recovery
//! state) at every change or once per interval, and every segment they send (`segments`),
//! streamed out with the other tables.
//!
//! The state is read after each call into an endpoint (a segment, a timer, an application
//! action: `after_call`), the only moments it can change; a row is written when it differs
//! from the endpoint's previous row (`interval_ms = 0`) or, with an interval, at the first
//! call at or after each multiple of the interval (the state as of that call; an idle
//! connection writes nothing until it wakes).

use super::row_buffer::row_buffer;
use super::trace::TraceEntry;
use super::trace_select::Selector;
use crate::config::trace::TcpTraceConfig;
use crate::measure::Table;
use crate::tcp::snapshot::TcpSnapshot;
use crate::units::{secs, Time};

#[derive(Clone, Copy, Default)]
struct SlotTrace {
    on: bool,
    id: u64,
    last: [Option<TcpSnapshot>; 2],
    /// Interval mode: the time from which the endpoint's next row is due.
    due: [Time; 2],
}

pub(super) struct TcpTracer {
    sel: Selector,
    /// 0: a row at every change.
    interval: Time,
    segments: bool,
    /// By connection slot (slots are reused: `open` resets them).
    slots: Vec<SlotTrace>,
    rows: TcpStateRows,
    segs: Vec<TraceEntry>,
}

impl TcpTracer {
    pub fn new(cfg: &TcpTraceConfig, seed: u64) -> Self {
        TcpTracer {
            sel: Selector::new(&cfg.selection(), seed),
            interval: secs(cfg.interval_ms * 1e-3),
            segments: cfg.segments,
            slots: Vec::new(),
            rows: TcpStateRows::default(),
            segs: Vec::new(),
        }
    }

    /// A connection opens in `slot`: decides whether it is traced.
    pub fn open(&mut self, slot: u32, id: u64, client: u32, server: u32) {
        let slot = slot as usize;
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, SlotTrace::default());
        }
        self.slots[slot] = SlotTrace {
            on: self.sel.connection(id, client, server),
            id,
            ..Default::default()
        };
    }

    #[inline]
    pub fn traced(&self, slot: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(|s| s.on)
    }

    /// The endpoint `side` of `slot` after a call, its state `snap`.
    pub fn after_call(&mut self, now: Time, slot: u32, side: usize, snap: TcpSnapshot) {
        if !self.sel.at(now) {
            return;
        }
        let Some(s) = self.slots.get_mut(slot as usize).filter(|s| s.on) else {
            return;
        };
        if let Some(k) = now.checked_div(self.interval) {
            if now < s.due[side] {
                return;
            }
            s.due[side] = (k + 1) * self.interval;
        } else if s.last[side] == Some(snap) {
            return;
        }
        s.last[side] = Some(snap);
        self.rows.push(now, s.id, side, &snap);
    }

    /// A segment sent by a traced connection (when `segments` is on).
    pub fn segment(&mut self, e: TraceEntry) {
        if self.segments && self.sel.at(e.t) {
            self.segs.push(e);
        }
    }

    pub fn wants_segments(&self) -> bool {
        self.segments
    }

    pub fn drain(&mut self, tables: &mut Vec<Table>) {
        tables.push(self.rows.take());
        if self.segments {
            tables.push(super::trace::entries_table(&self.segs));
            self.segs.clear();
        }
    }
}

row_buffer! {
    /// The `tcp_state` table.
    struct TcpStateRows => "tcp_state" {
        t_s: f64,
        conn_id: u64,
        side: &'static str,
        ca_state: &'static str,
        cwnd: u64,
        ssthresh: u64,
        srtt_ms: f64,
        rttvar_ms: f64,
        rto_ms: f64,
        in_flight: u64,
        snd_una: u64,
        snd_nxt: u64,
    }
}

impl TcpStateRows {
    fn push(&mut self, now: Time, id: u64, side: usize, s: &TcpSnapshot) {
        self.t_s.push(now as f64 * 1e-9);
        self.conn_id.push(id);
        self.side.push(["client", "server"][side]);
        self.ca_state.push(s.ca_state.name());
        self.cwnd.push(s.cwnd);
        self.ssthresh.push(s.ssthresh);
        self.srtt_ms.push(s.srtt_s * 1e3);
        self.rttvar_ms.push(s.rttvar_s * 1e3);
        self.rto_ms.push(s.rto as f64 * 1e-6);
        self.in_flight.push(s.in_flight);
        self.snd_una.push(s.snd_una);
        self.snd_nxt.push(s.snd_nxt);
    }
}
