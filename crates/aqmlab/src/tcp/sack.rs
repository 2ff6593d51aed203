//! The SACK sender's scoreboard and its queries (RFC 6675 §3–§4, ns-2 Full-TCP SACK).
//!
//! Sequence numbers are the endpoint's 64-bit offsets; ranges are half-open `[start, end)`.
//! RFC 6675 names: HighACK = `snd_una`, HighData = `snd_max`, HighRxt here is kept as the
//! end (exclusive) of the highest retransmitted byte, RecoveryPoint is the endpoint's
//! `recover`. The endpoint (`endpoint/recovery.rs`, `sack_recovery.rs`) drives entry, exit and
//! transmission; this file only answers "what is lost", "how much is in the pipe" and "what
//! goes next".

use super::ranges::{RangeSet, Span};

/// What `next_seg` chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Retransmit from `seq`, at most up to `end` (the hole's end).
    Retransmit { seq: u64, end: u64, rescue: bool },
    /// Send new data from `snd_max`.
    NewData,
}

/// `Scoreboard::rescue_rxt` before any rescue retransmission.
const NO_RESCUE: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// SACKed ranges above `snd_una` (stamps unused). Bounded by the window: at most one range
    /// per two segments outstanding.
    sacked: RangeSet,
    /// Bytes in `sacked` (kept from what its changes return: read on every ACK).
    sacked_total: u64,
    /// RFC 6675 HighRxt (exclusive end): bytes below it were retransmitted in this recovery.
    pub high_rxt: u64,
    /// RFC 6675 RescueRxt: the RecoveryPoint at the last rescue retransmission (`NO_RESCUE`:
    /// none yet). A plain number, not an `Option`, to keep the scoreboard, and the endpoint
    /// that holds it, within their cache lines.
    rescue_rxt: u64,
    /// ns-2 `pipe_` (bytes): a counter, not recomputed from the scoreboard; may go negative.
    pub ns2_pipe: i64,
    /// ns-2 `h_seqno_`: where the search for the next hole to retransmit starts.
    pub ns2_next: u64,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            sacked: RangeSet::default(),
            sacked_total: 0,
            high_rxt: 0,
            rescue_rxt: NO_RESCUE,
            ns2_pipe: 0,
            ns2_next: 0,
        }
    }
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.sacked_total = 0;
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.sacked.heap_bytes()
    }

    pub fn sacked(&self) -> &[Span] {
        self.sacked.spans()
    }

    pub fn sacked_bytes(&self) -> u64 {
        debug_assert_eq!(self.sacked_total, self.sacked.bytes());
        self.sacked_total
    }

    /// RFC 6675 Update(): records the blocks of an ACK whose cumulative ACK is `ack`, ignoring
    /// what lies at or below it or beyond `snd_max` (RFC 2018 §5: SACKs are advisory), and
    /// forgets what the cumulative ACK now covers. Returns true when a block SACKed bytes not
    /// SACKed before.
    pub fn update(&mut self, ack: u64, snd_max: u64, blocks: &[(u64, u64)]) -> bool {
        if blocks.is_empty() && self.sacked.is_empty() {
            return false; // nothing held, nothing new: the common ACK
        }
        self.sacked_total -= self.sacked.trim_below(ack);
        let mut added = 0;
        for &(s, e) in blocks {
            let (s, e) = (s.max(ack), e.min(snd_max));
            if s < e {
                added += self.sacked.insert(s, e, 0);
            }
        }
        self.sacked_total += added;
        added > 0
    }

    /// Starts a recovery episode: nothing retransmitted yet.
    pub fn start_recovery(&mut self, snd_una: u64) {
        self.high_rxt = snd_una;
        self.ns2_next = snd_una;
    }

    /// The un-SACKed holes between `snd_una` and `snd_max`, in order, each with the SACKed
    /// ranges above it: `(start, end, sacked ranges above, sacked bytes above)`.
    fn holes(
        &self,
        snd_una: u64,
        snd_max: u64,
    ) -> impl Iterator<Item = (u64, u64, usize, u64)> + '_ {
        let spans = self.sacked.spans();
        let total = self.sacked_total;
        let mut from = snd_una;
        let mut above_bytes = total;
        (0..=spans.len()).filter_map(move |i| {
            let end = spans.get(i).map_or(snd_max, |s| s.start);
            let hole = (from, end, spans.len() - i, above_bytes);
            if let Some(s) = spans.get(i) {
                from = s.end;
                above_bytes -= s.len();
            }
            (hole.0 < hole.1).then_some(hole)
        })
    }

    /// RFC 6675 §4 IsLost for a byte of a hole with `ranges_above` discontiguous SACKed ranges
    /// and `bytes_above` SACKed bytes above it: lost once DupThresh ranges, or more than
    /// (DupThresh − 1)·SMSS bytes, are SACKed above it. (Every byte of one hole has the same
    /// ranges above it, so the answer holds for the whole hole.)
    fn is_lost(ranges_above: usize, bytes_above: u64, dupthresh: u32, mss: u64) -> bool {
        ranges_above >= dupthresh as usize || bytes_above > (dupthresh as u64 - 1) * mss
    }

    /// RFC 6675 IsLost(HighACK + 1): is the first unacknowledged byte presumed lost?
    pub fn first_is_lost(&self, snd_una: u64, snd_max: u64, dupthresh: u32, mss: u64) -> bool {
        self.holes(snd_una, snd_max)
            .next()
            .is_some_and(|(s, _, n, b)| s == snd_una && Self::is_lost(n, b, dupthresh, mss))
    }

    /// Bytes at or above `from` that RFC 6675 IsLost presumes lost (for PRR's "new loss on
    /// this ACK" test: IsLost only grows for a byte as SACKs arrive).
    pub fn lost_bytes_from(
        &self,
        from: u64,
        snd_una: u64,
        snd_max: u64,
        dupthresh: u32,
        mss: u64,
    ) -> u64 {
        self.holes(snd_una, snd_max)
            .filter(|&(_, e, n, b)| e > from && Self::is_lost(n, b, dupthresh, mss))
            .map(|(s, e, _, _)| e - s.max(from))
            .sum()
    }

    /// RFC 6675 §4 SetPipe(): each un-SACKed byte between HighACK and HighData counts once if
    /// not presumed lost, and once more if it was retransmitted (below HighRxt).
    ///
    /// Computed without visiting every hole: IsLost only grows towards lower holes (more
    /// ranges and bytes SACKed above them), so the holes not presumed lost are the top ones,
    /// walked down from HighData until the first lost one; and the retransmitted bytes are
    /// those of [HighACK, HighRxt) not SACKed.
    pub fn set_pipe(&self, snd_una: u64, snd_max: u64, dupthresh: u32, mss: u64) -> u64 {
        let spans = self.sacked.spans();
        let n = spans.len();
        // Hole i lies between span i − 1 (or HighACK) and span i (or HighData).
        let hole = |i: usize| {
            let from = if i == 0 { snd_una } else { spans[i - 1].end };
            let end = if i < n { spans[i].start } else { snd_max };
            (from, end)
        };
        let mut unlost = 0;
        let mut bytes_above = 0;
        let mut i = n;
        while !Self::is_lost(n - i, bytes_above, dupthresh, mss) {
            let (from, end) = hole(i);
            unlost += end.saturating_sub(from);
            if i == 0 {
                break;
            }
            i -= 1;
            bytes_above += spans[i].len();
        }
        // Every SACKed range lies in [HighACK, HighData) (`update` trims and clips them).
        let h = self.high_rxt.clamp(snd_una, snd_max);
        let rexmitted = (h - snd_una) - self.sacked.bytes_below(h, self.sacked_total);
        unlost + rexmitted
    }

    /// The end of the hole that starts at `seq` (where a retransmission from `seq` must stop).
    pub fn hole_end(&self, seq: u64, snd_max: u64) -> u64 {
        let spans = self.sacked.spans();
        let i = spans.partition_point(|s| s.end <= seq);
        spans.get(i).map_or(snd_max, |s| s.start.max(seq))
    }

    /// RFC 6675 §4 NextSeg(). `new_data` says whether unsent data may go (rule 2: data
    /// available and the receiver window allows it).
    pub fn next_seg_rfc6675(
        &mut self,
        snd_una: u64,
        snd_max: u64,
        recovery_point: u64,
        new_data: bool,
        dupthresh: u32,
        mss: u64,
    ) -> Option<NextSeg> {
        let above_rxt = |(s, e, n, b): (u64, u64, usize, u64)| {
            let from = s.max(self.high_rxt);
            (from < e).then_some((from, e, n, b))
        };
        // Rule 1: the first lost byte not yet retransmitted.
        let lost = self
            .holes(snd_una, snd_max)
            .filter_map(above_rxt)
            .find(|&(_, _, n, b)| Self::is_lost(n, b, dupthresh, mss));
        if let Some((seq, end, _, _)) = lost {
            return Some(NextSeg::Retransmit {
                seq,
                end,
                rescue: false,
            });
        }
        // Rule 2: new data.
        if new_data {
            return Some(NextSeg::NewData);
        }
        // Rule 3: an un-SACKed byte not yet retransmitted below the highest SACKed byte.
        let below_sack = self
            .holes(snd_una, snd_max)
            .filter_map(above_rxt)
            .find(|&(_, _, n, _)| n > 0);
        if let Some((seq, end, _, _)) = below_sack {
            return Some(NextSeg::Retransmit {
                seq,
                end,
                rescue: false,
            });
        }
        // Rule 4: once per recovery (once HighACK has passed the last RescueRxt), one segment
        // ending at the highest un-SACKed byte; HighRxt is not advanced for it.
        if self.rescue_rxt == NO_RESCUE || snd_una > self.rescue_rxt {
            let top = self.holes(snd_una, snd_max).last();
            if let Some((s, e, _, _)) = top.filter(|&(_, e, _, _)| e > self.high_rxt) {
                self.rescue_rxt = recovery_point;
                return Some(NextSeg::Retransmit {
                    seq: s.max(e.saturating_sub(mss)),
                    end: e,
                    rescue: true,
                });
            }
        }
        None
    }

    /// ns-2 Full-TCP SACK `nxt_tseq()`: the first hole at or after `ns2_next` that lies below
    /// a SACKed block (`sack_rtx_threshmode_` 1, one block above suffices), else new data.
    pub fn next_seg_ns2(&self, snd_una: u64, snd_max: u64) -> NextSeg {
        let from = self.ns2_next.max(snd_una);
        self.holes(snd_una, snd_max)
            .filter(|&(_, e, n, _)| n > 0 && e > from)
            .map(|(s, e, _, _)| NextSeg::Retransmit {
                seq: s.max(from),
                end: e,
                rescue: false,
            })
            .next()
            .unwrap_or(NextSeg::NewData)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SetPipe as RFC 6675 states it, hole by hole.
    fn set_pipe_by_holes(b: &Scoreboard, una: u64, max: u64, dupthresh: u32, mss: u64) -> u64 {
        b.holes(una, max)
            .map(|(s, e, n, bytes)| {
                let unlost = if Scoreboard::is_lost(n, bytes, dupthresh, mss) {
                    0
                } else {
                    e - s
                };
                unlost + (b.high_rxt.clamp(s, e) - s)
            })
            .sum()
    }

    /// The two-walk SetPipe against the hole-by-hole one on random scoreboards.
    #[test]
    fn set_pipe_matches_the_definition() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(8, StreamKind::Test, 0);
        for _ in 0..2000 {
            let mut b = Scoreboard::default();
            let una = r.below(500);
            let max = una + 1 + r.below(5000);
            let blocks: Vec<(u64, u64)> = (0..r.below(12))
                .map(|_| {
                    let a = una + r.below(max - una);
                    (a, a + 1 + r.below(400))
                })
                .collect();
            b.update(una, max, &blocks);
            b.high_rxt = una.saturating_sub(50) + r.below(max - una + 100);
            let (d, mss) = (1 + r.below(4) as u32, 1 + r.below(300));
            assert_eq!(
                b.set_pipe(una, max, d, mss),
                set_pipe_by_holes(&b, una, max, d, mss)
            );
        }
    }

    const MSS: u64 = 100;

    /// Ten segments 0..1000 outstanding, snd_una = 0: [0,200) and [500,600) missing.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        assert!(b.update(0, 1000, &[(200, 500)]));
        assert!(b.update(0, 1000, &[(600, 1000), (200, 500)]));
        assert!(!b.update(0, 1000, &[(600, 1000)]), "nothing new");
        assert!(
            !b.update(0, 1000, &[(1000, 1100)]),
            "beyond snd_max: ignored"
        );
        b.start_recovery(0);
        b
    }

    #[test]
    fn is_lost_counts_ranges_or_bytes_above() {
        // 3 ranges above → lost; 1 range of 3 segments (> 2·SMSS bytes) → lost.
        assert!(Scoreboard::is_lost(3, 3, 3, MSS));
        assert!(Scoreboard::is_lost(1, 201, 3, MSS));
        assert!(!Scoreboard::is_lost(2, 200, 3, MSS));
        let mut b = Scoreboard::default();
        b.update(0, 1000, &[(100, 300)]);
        assert!(!b.first_is_lost(0, 1000, 3, MSS), "2 segments SACKed above");
        b.update(0, 1000, &[(300, 301)]);
        assert!(b.first_is_lost(0, 1000, 3, MSS), "201 bytes above");
    }

    #[test]
    fn pipe_counts_unlost_holes_and_retransmissions() {
        let mut b = board();
        // Holes [0,200) (700 bytes SACKed above) and [500,600) (400 above) are lost: pipe 0.
        assert_eq!(b.set_pipe(0, 1000, 3, MSS), 0);
        // HighData moves to 1200: the new hole [1000,1200) is not lost → 200.
        assert_eq!(b.set_pipe(0, 1200, 3, MSS), 200);
        // [0,100) retransmitted: +100.
        b.high_rxt = 100;
        assert_eq!(b.set_pipe(0, 1200, 3, MSS), 300);
        // The cumulative ACK reaches 500: only [500,600) (lost) and [1000,1200) remain.
        b.update(500, 1200, &[]);
        assert_eq!(b.set_pipe(500, 1200, 3, MSS), 200);
    }

    #[test]
    fn next_seg_follows_rules_1_to_4() {
        let mut b = board();
        let r = |seq, end| {
            Some(NextSeg::Retransmit {
                seq,
                end,
                rescue: false,
            })
        };
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, true, 3, MSS), r(0, 200));
        b.high_rxt = 100;
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, true, 3, MSS), r(100, 200));
        b.high_rxt = 200;
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, true, 3, MSS), r(500, 600));
        b.high_rxt = 600;
        assert_eq!(
            b.next_seg_rfc6675(0, 1000, 1000, true, 3, MSS),
            Some(NextSeg::NewData)
        );
        // One segment SACKed: hole [0,200) is not lost (1 range, 100 bytes above), so rule 3
        // retransmits it when there is no new data; then rule 4 rescues the highest
        // un-SACKed segment, once.
        let mut b = Scoreboard::default();
        b.update(0, 1000, &[(200, 300)]);
        b.start_recovery(0);
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, false, 3, MSS), r(0, 200));
        b.high_rxt = 300;
        let rescue = Some(NextSeg::Retransmit {
            seq: 900,
            end: 1000,
            rescue: true,
        });
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, false, 3, MSS), rescue);
        assert_eq!(b.next_seg_rfc6675(0, 1000, 1000, false, 3, MSS), None);
    }

    #[test]
    fn ns2_retransmits_holes_below_a_sack_in_order() {
        let mut b = board();
        let r = |seq, end| NextSeg::Retransmit {
            seq,
            end,
            rescue: false,
        };
        assert_eq!(b.next_seg_ns2(0, 1000), r(0, 200));
        b.ns2_next = 100;
        assert_eq!(b.next_seg_ns2(0, 1000), r(100, 200));
        b.ns2_next = 200;
        assert_eq!(b.next_seg_ns2(0, 1000), r(500, 600));
        b.ns2_next = 600;
        assert_eq!(b.next_seg_ns2(0, 1200), NextSeg::NewData);
    }

    #[test]
    fn hole_end_stops_at_the_next_sack() {
        let b = board();
        assert_eq!(b.hole_end(0, 1000), 200);
        assert_eq!(b.hole_end(550, 1000), 600);
        assert_eq!(b.hole_end(1000, 1200), 1200);
    }
}
