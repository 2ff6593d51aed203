//! The segment trace: every segment an endpoint sends, kept once enabled (tests, teaching,
//! the `segments` records), and its table.

use super::Simulation;
use crate::measure::Table;
use crate::units::Time;

/// A segment sent by an endpoint, for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEntry {
    pub t: Time,
    pub conn: u64,
    /// 0 = client, 1 = server.
    pub side: u8,
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: u8,
    pub retransmit: bool,
    pub ecn: crate::packet::Ecn,
    /// SACK blocks carried (the first `sack_n`).
    pub sack: [(u64, u64); crate::packet::MAX_SACK_BLOCKS],
    pub sack_n: u8,
    /// The sender's congestion window and slow-start threshold as it sent (bytes).
    pub cwnd: u64,
    pub ssthresh: u64,
}

impl Simulation {
    /// Records every segment sent from now on (see `trace`).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
        self.set_observers();
    }

    pub fn trace(&self) -> &[TraceEntry] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// The trace as record columns (`segments`): one row per segment sent.
    pub fn trace_table(&self) -> Table {
        entries_table(self.trace())
    }
}

/// Segments as record columns (`segments`): one row per segment sent.
pub(super) fn entries_table(tr: &[TraceEntry]) -> Table {
    use crate::measure::Column;
    let ecn = |e: crate::packet::Ecn| match e {
        crate::packet::Ecn::NotEct => "not_ect",
        crate::packet::Ecn::Ect0 => "ect0",
        crate::packet::Ecn::Ect1 => "ect1",
        crate::packet::Ecn::Ce => "ce",
    };
    let sack = |r: &TraceEntry, k: usize, end: usize| {
        if k < r.sack_n as usize {
            [r.sack[k].0, r.sack[k].1][end] as i64
        } else {
            -1
        }
    };
    let u = |f: &dyn Fn(&TraceEntry) -> u64| Column::U64(tr.iter().map(f).collect());
    let mut columns = vec![
        (
            "t_s",
            Column::F64(tr.iter().map(|r| r.t as f64 * 1e-9).collect()),
        ),
        ("t_ns", u(&|r| r.t)),
        ("conn", u(&|r| r.conn)),
        ("side", u(&|r| r.side as u64)),
        ("seq", u(&|r| r.seq)),
        ("ack", u(&|r| r.ack)),
        ("len", u(&|r| r.len as u64)),
        ("flags", u(&|r| r.flags as u64)),
        (
            "retransmit",
            Column::Bool(tr.iter().map(|r| r.retransmit).collect()),
        ),
        ("ecn", Column::Str(tr.iter().map(|r| ecn(r.ecn)).collect())),
        ("cwnd", u(&|r| r.cwnd)),
        ("ssthresh", u(&|r| r.ssthresh)),
        ("sack_n", u(&|r| r.sack_n as u64)),
    ];
    const NAMES: [[&str; 2]; crate::packet::MAX_SACK_BLOCKS] = [
        ["sack0_start", "sack0_end"],
        ["sack1_start", "sack1_end"],
        ["sack2_start", "sack2_end"],
        ["sack3_start", "sack3_end"],
    ];
    for (k, names) in NAMES.iter().enumerate() {
        for (end, name) in names.iter().enumerate() {
            columns.push((
                name,
                Column::I64(tr.iter().map(|r| sack(r, k, end)).collect()),
            ));
        }
    }
    Table {
        name: "segments",
        columns,
    }
}
