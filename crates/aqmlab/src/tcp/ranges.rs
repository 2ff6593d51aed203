//! A short sorted list of disjoint byte ranges `[start, end)`, each with a stamp: the
//! receiver's out-of-order queue (stamp = arrival order, for RFC 2018 §4's "most recent
//! first") and the sender's SACK scoreboard (RFC 6675 §3) are both kept in one.
//!
//! A window of 16 KB (or a few hundred segments) holds at most a few dozen ranges, so a vector
//! with linear scans beats any tree; its capacity grows to the largest window seen and is then
//! reused, so nothing is allocated per packet.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    /// Largest stamp of the insertions merged into this range.
    pub stamp: u64,
}

impl Span {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// Disjoint, non-adjacent ranges in increasing order.
    spans: Vec<Span>,
}

impl RangeSet {
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.spans.capacity() * std::mem::size_of::<Span>()
    }

    pub fn clear(&mut self) {
        self.spans.clear();
    }

    /// Total bytes held (a walk: a user that needs it often keeps the total from what
    /// `insert` and `trim_below` return, as the SACK scoreboard does).
    pub fn bytes(&self) -> u64 {
        self.spans.iter().map(Span::len).sum()
    }

    /// Bytes held below `x`, given the `total` held: a binary search, then a walk from
    /// whichever end is nearer (the bytes above come off the total).
    pub fn bytes_below(&self, x: u64, total: u64) -> u64 {
        debug_assert_eq!(total, self.bytes());
        let i = self.spans.partition_point(|s| s.end <= x);
        let whole = if i <= self.spans.len() / 2 {
            self.spans[..i].iter().map(Span::len).sum()
        } else {
            total - self.spans[i..].iter().map(Span::len).sum::<u64>()
        };
        let cut = self.spans.get(i).map_or(0, |s| x.saturating_sub(s.start));
        whole + cut
    }

    /// Adds `[start, end)`, merging with every range it overlaps or touches; the merged range
    /// takes the largest stamp. Returns the bytes newly held.
    pub fn insert(&mut self, start: u64, end: u64, stamp: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut absorbed = 0;
        let mut merged = Span { start, end, stamp };
        // First range that ends at or after `start` (may touch it).
        let i = self.spans.partition_point(|s| s.end < start);
        let mut j = i;
        while j < self.spans.len() && self.spans[j].start <= end {
            let s = self.spans[j];
            merged.start = merged.start.min(s.start);
            merged.end = merged.end.max(s.end);
            merged.stamp = merged.stamp.max(s.stamp);
            absorbed += s.len();
            j += 1;
        }
        let added = merged.len() - absorbed;
        if j == i {
            self.spans.insert(i, merged);
        } else {
            self.spans[i] = merged;
            self.spans.drain(i + 1..j);
        }
        added
    }

    /// Forgets every byte below `seq` (cutting a range that straddles it). Returns the bytes
    /// forgotten.
    pub fn trim_below(&mut self, seq: u64) -> u64 {
        let n = self.spans.partition_point(|s| s.end <= seq);
        let mut removed: u64 = self.spans[..n].iter().map(Span::len).sum();
        self.spans.drain(..n);
        if let Some(first) = self.spans.first_mut() {
            let cut = seq.max(first.start);
            removed += cut - first.start;
            first.start = cut;
        }
        removed
    }

    /// Removes and returns the first range if it starts at or below `seq`.
    pub fn pop_first_reaching(&mut self, seq: u64) -> Option<Span> {
        match self.spans.first() {
            Some(s) if s.start <= seq => Some(self.spans.remove(0)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(r: &RangeSet) -> Vec<(u64, u64)> {
        r.spans().iter().map(|s| (s.start, s.end)).collect()
    }

    #[test]
    fn merges_touching_ranges_and_keeps_the_newest_stamp() {
        let mut r = RangeSet::default();
        r.insert(300, 400, 1);
        r.insert(100, 200, 2);
        r.insert(200, 250, 3); // touches [100, 200)
        assert_eq!(pairs(&r), vec![(100, 250), (300, 400)]);
        assert_eq!(r.spans()[0].stamp, 3);
        assert_eq!(r.spans()[1].stamp, 1);
        r.insert(240, 310, 4);
        assert_eq!(pairs(&r), vec![(100, 400)]);
        assert_eq!(r.spans()[0].stamp, 4);
        assert_eq!(r.bytes(), 300);
    }

    #[test]
    fn trims_below_a_point() {
        let mut r = RangeSet::default();
        r.insert(100, 200, 0);
        r.insert(300, 400, 0);
        r.trim_below(150);
        assert_eq!(pairs(&r), vec![(150, 200), (300, 400)]);
        r.trim_below(350);
        assert_eq!(pairs(&r), vec![(350, 400)]);
        r.trim_below(400);
        assert!(r.is_empty());
    }

    /// Randomized check against a byte bitmap.
    #[test]
    fn matches_bitmap_model() {
        use crate::rng::{Rng, StreamKind};
        let mut rng = Rng::stream(5, StreamKind::Test, 0);
        for _ in 0..200 {
            let mut r = RangeSet::default();
            let mut bits = [false; 256];
            let held = |bits: &[bool]| bits.iter().filter(|&&b| b).count() as u64;
            let cut = rng.below(128);
            let mut total = 0;
            for k in 0..20 {
                let a = rng.below(250);
                let b = a + 1 + rng.below(6);
                total += r.insert(a, b, k);
                for x in a..b {
                    bits[x as usize] = true;
                }
                assert_eq!(total, held(&bits));
            }
            total -= r.trim_below(cut);
            bits[..cut as usize].fill(false);
            assert_eq!((r.bytes(), total), (held(&bits), held(&bits)));
            for x in [0, cut, rng.below(256), rng.below(256), 255, 256, 300] {
                let below = held(&bits[..(x as usize).min(256)]);
                assert_eq!(r.bytes_below(x, total), below, "below {x}");
            }
            let mut expect = Vec::new();
            let mut i = 0;
            while i < 256 {
                if bits[i] {
                    let s = i;
                    while i < 256 && bits[i] {
                        i += 1;
                    }
                    expect.push((s as u64, i as u64));
                } else {
                    i += 1;
                }
            }
            assert_eq!(pairs(&r), expect);
        }
    }
}
