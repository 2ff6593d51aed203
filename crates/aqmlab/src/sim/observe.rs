//! The out-of-line observers of the packet path: captures, per-connection TCP traces, the
//! segment trace and the per-source delay histograms. The hot path tests one flag per point
//! (`Simulation::tx_observe` and the like) and calls here only when something watches.

use super::capture_tap::Seen;
use super::trace::TraceEntry;
use super::Simulation;
use crate::packet::PktId;
use crate::units::Time;

impl Simulation {
    /// Sets the hot path's flags from what the run records.
    pub(super) fn set_observers(&mut self) {
        // Captures are taken at hop 0 only (`capture_tap`); the per-source delays at every hop.
        for m in 0..self.monitor_count() {
            let cap = m < 2 && self.taps.as_ref().is_some_and(|t| t.egress[m]);
            let observe_tx = cap || self.source_delays.is_some();
            let tap_in = m < 2 && self.taps.as_ref().is_some_and(|t| t.ingress[m]);
            let link = self.bottleneck(m);
            let l = &mut self.links[link as usize];
            l.observe_tx = observe_tx;
            l.tap_in = tap_in;
        }
        self.host_observe = self.taps.as_ref().is_some_and(|t| t.hosts);
        self.seg_observe =
            self.trace.is_some() || self.tcp_trace.as_ref().is_some_and(|t| t.wants_segments());
    }

    /// Packet `id` starts its transmission on the link of monitor `m` (hop `m / 2`, direction
    /// `m % 2`).
    #[cold]
    #[inline(never)]
    pub(super) fn observe_tx(&mut self, now: Time, m: usize, id: PktId) {
        if self.source_delays.is_some() {
            self.note_source_delay(now, m, id);
        }
        if m < 2 && self.taps.is_some() {
            let p = *self.pkts.get(id);
            self.tap(Seen::Egress(m), &p);
        }
    }

    /// The outbox's segment `i`, now packet `id`, leaves endpoint `side` of `slot`. Integer
    /// arguments only: the caller need not keep the segment or the packet in memory for it.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_segment(&mut self, slot: u32, side: usize, i: usize, id: PktId) {
        if self.host_observe {
            let p = *self.pkts.get(id);
            self.tap(Seen::Sent, &p);
        }
        let s = &self.out.segs[i];
        let c = &self.conns[slot as usize];
        let traced = self.tcp_trace.as_ref().is_some_and(|t| t.traced(slot));
        if self.trace.is_none() && !traced {
            return;
        }
        let ep = &c.ep[side];
        let e = TraceEntry {
            t: self.sched.now(),
            conn: c.id,
            side: side as u8,
            seq: s.seq,
            ack: s.ack,
            len: s.len,
            flags: s.flags,
            retransmit: s.retransmit,
            ecn: s.ecn,
            sack: s.sack,
            sack_n: s.sack_n,
            cwnd: ep.cwnd(),
            ssthresh: ep.ssthresh(),
        };
        if let Some(tr) = &mut self.trace {
            tr.push(e);
        }
        if traced {
            self.tcp_trace.as_mut().expect("checked").segment(e);
        }
    }

    /// After a call into endpoint `side` of `slot`: its state, if the connection is traced.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_tcp_state(&mut self, slot: u32, side: usize) {
        let Some(tr) = self.tcp_trace.as_mut() else {
            return;
        };
        if !tr.traced(slot) {
            return;
        }
        let c = &self.conns[slot as usize];
        let snap = c.ep[side].snapshot(&self.tcps[c.tcp as usize]);
        tr.after_call(self.sched.now(), slot, side, snap);
    }

    /// Each capture's file name and the pcap bytes encoded since the last call (the file
    /// header first); empty without captures.
    pub fn drain_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        self.taps.as_mut().map(|t| t.drain()).unwrap_or_default()
    }

    /// The tables of `[trace.tcp]` drained since the last call.
    pub(super) fn drain_traces(&mut self, tables: &mut Vec<crate::measure::Table>) {
        if let Some(tr) = self.tcp_trace.as_mut() {
            tr.drain(tables);
        }
    }
}
