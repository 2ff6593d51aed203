//! The Linux senders' record of the data segments outstanding (Linux's retransmission queue:
//! one `sk_buff` per segment, `tcp_rtx_queue`), in sequence order, with the two indexes
//! Linux keeps so that no ACK has to walk the whole window:
//!
//! - RACK's list in send order (`tsorted_sent_queue`, `tcp_rack_detect_loss`): the segments
//!   that can still be marked lost — not SACKed, and not marked lost without a retransmission
//!   since. A transmission (first or again) puts a segment at the tail, a SACK or a loss mark
//!   takes it out (`tcp_sacktag_walk`, `tcp_rack_detect_loss` both `list_del_init` it), so
//!   RACK walks only candidates, oldest first, and stops at the first one sent after
//!   RACK.xmit_ts;
//! - the SACK cache (`recv_sack_cache`, `tcp_sacktag_write_queue`): the blocks of the last
//!   ACK. Every segment inside them is already SACKed, so an ACK that repeats a block, or
//!   extends it, tags only what lies beyond; the blocks a receiver sends grow one segment at
//!   a time, and without the cache each ACK would walk every SACKed segment of its blocks
//!   again;
//! - the first segment marked lost and not retransmitted since is found from a hint that
//!   only moves forward between marks (Linux's `retransmit_skb_hint`).
//!
//! None of these changes what is computed: they only skip segments whose flags make them
//! irrelevant to the question asked (the unit tests compare each with a plain scan).

use std::collections::VecDeque;

use crate::packet::MAX_SACK_BLOCKS;
use crate::units::Time;

/// No segment (the end of RACK's list).
const NIL: u32 = u32::MAX;

/// A data segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sent {
    pub(crate) start: u64,
    /// When it was last (re)transmitted.
    pub(crate) at: Time,
    /// Payload bytes (a segment is at most one MSS).
    len: u32,
    /// Neighbours in RACK's send-order list (absolute numbers, `NIL` at the ends); meaningful
    /// only while the segment is a candidate (`Sent::candidate`).
    prev: u32,
    next: u32,
    /// Retransmitted (Linux `TCPCB_RETRANS`): its ACK gives no sequence-based RTT sample.
    pub(crate) rexmit: bool,
    /// SACKed: already counted as delivered (`TCPCB_SACKED_ACKED`).
    pub(crate) sacked: bool,
    /// Marked lost by RACK (`TCPCB_LOST`; `rack_tlp` only).
    pub(crate) lost: bool,
    /// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`), until it is delivered or
    /// marked lost again.
    pub(crate) retrans: bool,
}

impl Sent {
    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.start + self.len as u64
    }

    /// On RACK's list: neither SACKed nor marked lost without a retransmission since.
    #[inline]
    fn candidate(&self) -> bool {
        !self.sacked && (self.retrans || !self.lost)
    }

    /// Marked lost and not retransmitted since (`tcp_xmit_retransmit_queue`'s next one).
    #[inline]
    fn pending(&self) -> bool {
        self.lost && !self.retrans && !self.sacked
    }
}

/// Counts over the record of outstanding segments, kept as records change (Linux
/// `sacked_out`, `lost_out`, `retrans_out`; `pending`: lost and not retransmitted since).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SentCounts {
    pub(crate) sacked: u32,
    pub(crate) lost: u32,
    pub(crate) retrans: u32,
    pub(crate) pending: u32,
}

impl SentCounts {
    #[inline]
    fn add(&mut self, s: &Sent) {
        if s.sacked {
            self.sacked += 1;
        } else {
            self.lost += s.lost as u32;
            self.retrans += s.retrans as u32;
            self.pending += (s.lost && !s.retrans) as u32;
        }
    }

    #[inline]
    fn sub(&mut self, s: &Sent) {
        if s.sacked {
            self.sacked -= 1;
        } else {
            self.lost -= s.lost as u32;
            self.retrans -= s.retrans as u32;
            self.pending -= (s.lost && !s.retrans) as u32;
        }
    }
}

/// What RACK's walk does with a candidate (`SentRecord::rack_walk`).
pub(crate) enum Visit {
    /// Leave it and go on.
    Keep,
    /// Mark it lost (it leaves the list) and go on.
    MarkLost,
    /// It was sent after RACK.xmit_ts: so was every later one; stop.
    Stop,
}

/// The record (module comment). Segments are numbered from the first ever sent (wrapping
/// 32-bit numbers: fewer than 2³² segments are ever outstanding); `base` is the number of
/// the front one.
#[derive(Clone, Debug)]
pub(crate) struct SentRecord {
    segs: VecDeque<Sent>,
    base: u32,
    /// RACK's list in send order: oldest and newest candidate.
    head: u32,
    tail: u32,
    counts: SentCounts,
    /// Highest end of a segment ever retransmitted.
    max_rexmit_end: u64,
    /// No segment numbered below this is marked lost and not retransmitted since.
    lost_hint: u32,
    /// The last ACK's SACK blocks, clipped to the data recorded: every segment inside one is
    /// SACKed.
    cache: [(u64, u64); MAX_SACK_BLOCKS],
    cache_n: u8,
}

impl Default for SentRecord {
    fn default() -> Self {
        SentRecord {
            segs: VecDeque::new(),
            base: 0,
            head: NIL,
            tail: NIL,
            counts: SentCounts::default(),
            max_rexmit_end: 0,
            lost_hint: 0,
            cache: [(0, 0); MAX_SACK_BLOCKS],
            cache_n: 0,
        }
    }
}

impl SentRecord {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.segs.len()
    }

    /// When the head (the oldest segment outstanding) was last sent.
    pub(crate) fn first_sent_at(&self) -> Option<Time> {
        self.segs.front().map(|s| s.at)
    }

    /// Bytes held on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Sent>()
    }

    /// The record's buffer, emptied, for a new record to adopt (`adopt_buffer`): a reused
    /// connection state keeps its capacity if it is at most `KEPT_CAPACITY` segments, so that
    /// the short Web transfers that follow do not grow a buffer again; a larger one is freed
    /// (kept, every slot's buffer would ratchet up to the largest window it ever carried:
    /// with 64, the 1 Gb/s Web run's peak memory grew from 534 to 595 MiB over 120 s).
    pub(crate) fn take_buffer(&mut self) -> VecDeque<Sent> {
        const KEPT_CAPACITY: usize = 16;
        let mut b = std::mem::take(&mut self.segs);
        if b.capacity() > KEPT_CAPACITY {
            return VecDeque::new();
        }
        b.clear();
        b
    }

    /// Takes an empty buffer as this (empty) record's storage.
    pub(crate) fn adopt_buffer(&mut self, b: VecDeque<Sent>) {
        debug_assert!(b.is_empty() && self.segs.is_empty());
        self.segs = b;
    }

    #[inline]
    pub(crate) fn counts(&self) -> SentCounts {
        self.counts
    }

    /// The segment at index `i` (sequence order, 0 = the oldest outstanding).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &Sent {
        &self.segs[i]
    }

    #[inline]
    fn index(&self, n: u32) -> usize {
        n.wrapping_sub(self.base) as usize
    }

    #[inline]
    fn number(&self, i: usize) -> u32 {
        self.base.wrapping_add(i as u32)
    }

    /// Index of the first segment ending after `seq`.
    #[inline]
    pub(crate) fn first_ending_after(&self, seq: u64) -> usize {
        self.segs.partition_point(|s| s.end() <= seq)
    }

    // ----- RACK's list -----

    fn link_tail(&mut self, i: usize) {
        let n = self.number(i);
        let tail = self.tail;
        let s = &mut self.segs[i];
        s.prev = tail;
        s.next = NIL;
        if tail == NIL {
            self.head = n;
        } else {
            let t = self.index(tail);
            self.segs[t].next = n;
        }
        self.tail = n;
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.segs[i].prev, self.segs[i].next);
        if prev == NIL {
            self.head = next;
        } else {
            let p = self.index(prev);
            self.segs[p].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            let q = self.index(next);
            self.segs[q].prev = prev;
        }
    }

    /// Applies `change` to segment `i`, keeping the counts and RACK's list in step with its
    /// flags. `to_tail`: it was (re)transmitted now, so if it is a candidate it is the newest.
    #[inline]
    fn update(&mut self, i: usize, to_tail: bool, change: impl FnOnce(&mut Sent)) {
        let s = &mut self.segs[i];
        let was = s.candidate();
        self.counts.sub(s);
        change(s);
        self.counts.add(s);
        let is = s.candidate();
        if was && (!is || to_tail) {
            self.unlink(i);
        }
        if is && (!was || to_tail) {
            self.link_tail(i);
        }
    }

    // ----- transmissions -----

    /// A first transmission of `[seq, seq + len)` at `at` (later than any before).
    pub(crate) fn push(&mut self, seq: u64, len: u64, at: Time) {
        debug_assert!(len > 0 && len <= u32::MAX as u64);
        self.segs.push_back(Sent {
            start: seq,
            at,
            len: len as u32,
            prev: NIL,
            next: NIL,
            rexmit: false,
            sacked: false,
            lost: false,
            retrans: false,
        });
        self.link_tail(self.segs.len() - 1);
    }

    /// A retransmission of `[seq, end)` at `at`: every segment it covers is stamped with the
    /// new send time and becomes the newest on RACK's list (in sequence order among them, as
    /// "sent after" breaks ties of time by sequence).
    pub(crate) fn retransmit(&mut self, seq: u64, end: u64, at: Time) {
        let first = self.first_ending_after(seq);
        for i in first..self.segs.len() {
            if self.segs[i].start >= end {
                break;
            }
            self.update(i, true, |s| {
                s.rexmit = true;
                s.retrans = true;
                s.at = at;
            });
            self.max_rexmit_end = self.max_rexmit_end.max(self.segs[i].end());
        }
    }

    // ----- ACKs -----

    /// Tags as SACKed every segment inside one of `blocks` not SACKed before, calling
    /// `newly(index, segment)` for each, in the blocks' order and sequence order within one;
    /// blocks ending at or below `ack` are skipped. What lies inside a block of the last ACK
    /// is skipped too: it is SACKed already.
    pub(crate) fn sack(
        &mut self,
        ack: u64,
        blocks: &[(u64, u64)],
        mut newly: impl FnMut(usize, &Sent),
    ) {
        for &(start, end) in blocks {
            if end <= ack {
                continue;
            }
            // The part already tagged: a cached block holding this one's start.
            let done = self.cache[..self.cache_n as usize]
                .iter()
                .filter(|&&(cs, ce)| cs <= start && start < ce)
                .map(|&(_, ce)| ce)
                .max();
            let from = match done {
                Some(ce) if ce >= end => continue,
                // Segments inside [start, ce) are SACKed; one that crosses ce is not.
                Some(ce) => self.first_ending_after(ce),
                None => self.first_ending_after(start),
            };
            for i in from..self.segs.len() {
                let s = &self.segs[i];
                if s.end() > end {
                    break;
                }
                if s.start >= start && !s.sacked {
                    self.update(i, false, |s| s.sacked = true);
                    newly(i, &self.segs[i]);
                }
            }
        }
        let top = self.segs.back().map_or(0, Sent::end);
        let mut n = 0;
        for &(start, end) in blocks.iter().take(MAX_SACK_BLOCKS) {
            let end = end.min(top);
            if start < end {
                self.cache[n] = (start, end);
                n += 1;
            }
        }
        self.cache_n = n as u8;
    }

    /// Removes the segments the cumulative ACK `ack` covers, oldest first, calling `acked` for
    /// each.
    pub(crate) fn pop_acked(&mut self, ack: u64, mut acked: impl FnMut(&Sent)) {
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            acked(s);
            let s = *s;
            self.counts.sub(&s);
            if s.candidate() {
                self.unlink(0);
            }
            self.segs.pop_front();
            self.base = self.base.wrapping_add(1);
        }
        if self.index(self.lost_hint) > self.segs.len() {
            // The hint fell below the front (wrapping numbers): start from the front.
            self.lost_hint = self.base;
        }
    }

    // ----- loss marking -----

    /// Marks the segment at `i` lost (`tcp_mark_skb_lost`): a retransmission of it in flight
    /// is lost too.
    pub(crate) fn mark_lost(&mut self, i: usize) {
        self.update(i, false, |s| {
            s.lost = true;
            s.retrans = false;
        });
        if self.index(self.lost_hint) > i {
            self.lost_hint = self.number(i);
        }
    }

    /// A retransmission timeout marks every segment not SACKed lost (`tcp_timeout_mark_lost`):
    /// none is a candidate any more. Returns the marks `tp->lost` counts
    /// (`tcp_mark_skb_lost`): segments not marked before, and retransmissions lost again.
    pub(crate) fn mark_all_lost(&mut self) -> u32 {
        let mut marked = 0;
        for s in self.segs.iter_mut().filter(|s| !s.sacked) {
            marked += s.candidate() as u32;
            s.lost = true;
            s.retrans = false;
        }
        self.counts = self.recount();
        self.head = NIL;
        self.tail = NIL;
        self.lost_hint = self.base;
        marked
    }

    /// A retransmission timeout as Linux marks it with RACK (`tcp_timeout_mark_lost`, Linux
    /// 6.x `tcp_input.c`): the first segment and every other one not SACKed that was sent at
    /// least `rtt` (RACK's RTT) before `now` (`tcp_rack_skb_timeout(tp, skb, 0) <= 0`);
    /// those sent more recently stay in flight. Returns the marks `tp->lost` counts.
    pub(crate) fn mark_timed_out_lost(&mut self, now: Time, rtt: Time) -> u32 {
        let mut marked = 0;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.sacked || (i > 0 && s.at.saturating_add(rtt) > now) {
                continue;
            }
            marked += s.candidate() as u32;
            self.mark_lost(i);
        }
        marked
    }

    /// An undo clears every lost mark (`tcp_undo_cwnd_reduction` with `unmark_loss`:
    /// `TCPCB_LOST` off, `lost_out` = 0): segments marked lost without a retransmission
    /// since are in flight again, and go back on RACK's list in send order. Returns how many
    /// marks were cleared.
    pub(crate) fn unmark_lost(&mut self) -> u32 {
        let mut cleared = 0;
        for s in self.segs.iter_mut().filter(|s| s.lost) {
            s.lost = false;
            cleared += 1;
        }
        if cleared == 0 {
            return 0;
        }
        self.counts = self.recount();
        let mut order: Vec<usize> = (0..self.segs.len())
            .filter(|&i| self.segs[i].candidate())
            .collect();
        order.sort_by_key(|&i| (self.segs[i].at, self.segs[i].end()));
        self.head = NIL;
        self.tail = NIL;
        for i in order {
            self.link_tail(i);
        }
        self.lost_hint = self.number(self.segs.len());
        cleared
    }

    /// RACK's walk over the candidates in send order, oldest first (`tcp_rack_detect_loss`):
    /// `visit` decides for each.
    pub(crate) fn rack_walk(&mut self, mut visit: impl FnMut(&Sent) -> Visit) -> u32 {
        let mut lost = 0;
        let mut n = self.head;
        while n != NIL {
            let i = self.index(n);
            let s = self.segs[i];
            n = s.next;
            match visit(&s) {
                Visit::Keep => {},
                Visit::MarkLost => {
                    self.mark_lost(i);
                    lost += 1;
                },
                Visit::Stop => break,
            }
        }
        lost
    }

    // ----- queries -----

    /// Segments in flight as Linux counts them with RACK (`tcp_packets_in_flight`):
    /// outstanding, less SACKed, less marked lost, plus retransmissions in flight.
    pub(crate) fn rack_in_flight(&self) -> u32 {
        debug_assert_eq!(self.counts, self.recount());
        let c = &self.counts;
        (self.segs.len() as u32 + c.retrans).saturating_sub(c.sacked + c.lost)
    }

    /// The counts from scratch (checks).
    pub(crate) fn recount(&self) -> SentCounts {
        let mut c = SentCounts::default();
        self.segs.iter().for_each(|s| c.add(s));
        c
    }

    /// The first segment marked lost and not retransmitted since: `(start, end)`. The
    /// segments the hint passes over are not pending, and stay so until a mark moves it back.
    pub(crate) fn first_lost(&mut self) -> Option<(u64, u64)> {
        if self.counts.pending == 0 {
            return None;
        }
        let from = self.index(self.lost_hint).min(self.segs.len());
        let k = (from..self.segs.len()).find(|&i| self.segs[i].pending())?;
        self.lost_hint = self.number(k);
        let s = &self.segs[k];
        Some((s.start, s.end()))
    }

    /// The last segment sent: `(start, end)` (the tail loss probe's retransmission).
    pub(crate) fn last_segment(&self) -> Option<(u64, u64)> {
        self.segs.back().map(|s| (s.start, s.end()))
    }

    /// RACK's list from scratch, in send order (checks).
    #[cfg(test)]
    fn scan_candidates(&self) -> Vec<u64> {
        let mut c: Vec<&Sent> = self.segs.iter().filter(|s| s.candidate()).collect();
        c.sort_by_key(|s| (s.at, s.end()));
        c.iter().map(|s| s.start).collect()
    }

    #[cfg(test)]
    fn list(&self) -> Vec<u64> {
        let mut v = Vec::new();
        let mut n = self.head;
        while n != NIL {
            let s = &self.segs[self.index(n)];
            v.push(s.start);
            n = s.next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamKind};

    /// `tcp_timeout_mark_lost` with RACK, by hand: segments 0–3 of 100 bytes sent at 0, 10,
    /// 20 and 30 ns, segment 1 SACKed; at 35 ns with RACK's RTT 10 ns the head is marked
    /// whatever its age, segment 2 (20 + 10 ≤ 35) is, segment 3 (30 + 10 > 35) stays in
    /// flight: 2 marks, in flight 4 − 1 SACKed − 2 lost = 1. At 40 ns segment 3 is marked
    /// too; the head, already marked and not sent again, is not counted twice. A
    /// retransmission of the head lost again is counted again (`tcp_mark_skb_lost`).
    #[test]
    fn a_timeout_marks_what_racks_rtt_says_has_timed_out() {
        let mut rec = SentRecord::default();
        for k in 0..4u64 {
            rec.push(1 + 100 * k, 100, 10 * k);
        }
        rec.sack(1, &[(101, 201)], |_, _| {});
        assert_eq!(rec.mark_timed_out_lost(35, 10), 2);
        let lost: Vec<bool> = (0..4).map(|i| rec.get(i).lost).collect();
        assert_eq!(lost, [true, false, true, false]);
        assert_eq!(rec.rack_in_flight(), 1);
        assert_eq!(rec.mark_timed_out_lost(40, 10), 1);
        assert_eq!(rec.rack_in_flight(), 0);
        rec.retransmit(1, 101, 41);
        assert_eq!(rec.rack_in_flight(), 1);
        assert_eq!(
            rec.mark_timed_out_lost(60, 10),
            1,
            "the retransmission, lost again"
        );
        // Go-back-N's marking counts the same way: everything not SACKed, once.
        let mut all = SentRecord::default();
        for k in 0..4u64 {
            all.push(1 + 100 * k, 100, 10 * k);
        }
        all.sack(1, &[(101, 201)], |_, _| {});
        assert_eq!(all.mark_all_lost(), 3);
        assert_eq!(all.mark_all_lost(), 0);
    }

    /// The indexes against plain scans, over random sequences of sends, retransmissions,
    /// SACKs, cumulative ACKs, loss marks and timeouts: RACK's list is the candidates in send
    /// order, the counts are the recount, the first lost is the first pending segment, and a
    /// SACK tags exactly the segments inside its blocks not tagged before (the cache skips
    /// only tagged ones).
    #[test]
    fn indexes_agree_with_scans_over_random_histories() {
        let mut r = Rng::stream(11, StreamKind::Test, 0);
        for _ in 0..300 {
            let mut rec = SentRecord::default();
            let (mut next, mut ack, mut now) = (1u64, 1u64, 0u64);
            for _ in 0..200 {
                now += 1;
                match r.below(7) {
                    0 | 1 => {
                        let len = 1 + r.below(3) * 50;
                        rec.push(next, len, now);
                        next += len;
                    },
                    2 if rec.len() > 0 => {
                        let s = *rec.get(r.below(rec.len() as u64) as usize);
                        rec.retransmit(s.start, s.end(), now);
                    },
                    3 if next > ack => {
                        let mut blocks = Vec::new();
                        for _ in 0..1 + r.below(3) {
                            let a = ack + r.below(next - ack);
                            let b = (a + 1 + r.below(300)).min(next);
                            blocks.push((a, b));
                        }
                        let plain: Vec<u64> = rec
                            .segs
                            .iter()
                            .filter(|s| {
                                !s.sacked
                                    && blocks
                                        .iter()
                                        .any(|&(a, b)| b > ack && s.start >= a && s.end() <= b)
                            })
                            .map(|s| s.start)
                            .collect();
                        let mut tagged = Vec::new();
                        rec.sack(ack, &blocks, |_, s| tagged.push(s.start));
                        tagged.sort_unstable();
                        assert_eq!(tagged, plain);
                    },
                    4 if rec.len() > 0 => {
                        let i = r.below(rec.len() as u64) as usize;
                        ack = rec.get(i).end();
                        rec.pop_acked(ack, |_| {});
                    },
                    5 if rec.len() > 0 => {
                        let i = r.below(rec.len() as u64) as usize;
                        if !rec.get(i).sacked {
                            rec.mark_lost(i);
                        }
                    },
                    6 if r.below(10) == 0 => {
                        if r.below(2) == 0 {
                            rec.mark_all_lost();
                        } else {
                            rec.mark_timed_out_lost(now, r.below(20));
                        }
                    },
                    _ => {},
                }
                assert_eq!(rec.list(), rec.scan_candidates());
                assert_eq!(rec.counts, rec.recount());
                let plain = rec
                    .segs
                    .iter()
                    .find(|s| s.pending())
                    .map(|s| (s.start, s.end()));
                assert_eq!(rec.first_lost(), plain);
            }
        }
    }

    /// RACK's walk stops where told and marks what it is told, leaving the list in step.
    /// An undo clears the marks of a timeout: nothing is pending, RACK's list holds every
    /// segment not SACKed again, in send order (the plain scan's).
    #[test]
    fn unmark_lost_restores_the_list_in_send_order() {
        let mut rec = SentRecord::default();
        for k in 0..4u64 {
            rec.push(1 + 100 * k, 100, 10 + k);
        }
        rec.sack(1, &[(201, 301)], |_, _| {});
        rec.mark_all_lost();
        rec.retransmit(1, 101, 50);
        assert_eq!(rec.counts().lost, 3);
        assert_eq!(rec.unmark_lost(), 3);
        assert_eq!(rec.counts(), rec.recount());
        assert_eq!(rec.counts().lost, 0);
        assert_eq!(rec.first_lost(), None);
        assert_eq!(rec.list(), rec.scan_candidates());
        assert_eq!(rec.list(), vec![101, 301, 1]);
        // The retransmission still counts beside its original (`retrans_out`).
        assert_eq!(rec.rack_in_flight(), 4);
    }

    #[test]
    fn walk_marks_and_stops() {
        let mut rec = SentRecord::default();
        for k in 0..5u64 {
            rec.push(1 + 100 * k, 100, 10 + k);
        }
        rec.retransmit(101, 201, 20); // segment 1 is now the newest
        let lost = rec.rack_walk(|s| match s.at {
            t if t >= 13 => Visit::Stop,
            _ => Visit::MarkLost,
        });
        // Send order: 1 (10), 201 (12), 301 (13) stop; 101 was resent at 20.
        assert_eq!(lost, 2);
        assert_eq!(rec.list(), vec![301, 401, 101]);
        assert_eq!(rec.first_lost(), Some((1, 101)));
        assert_eq!(rec.counts().pending, 2);
    }
}
