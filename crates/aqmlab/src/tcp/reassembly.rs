//! The receiver's out-of-order queue: byte ranges held above `rcv_nxt` (RFC 793 §3.9
//! "segment arrives", reassembly), and the SACK blocks that describe it (RFC 2018 §4).

use super::ranges::RangeSet;
use crate::packet::MAX_SACK_BLOCKS;

/// SACK blocks as carried in a segment: `[start, end)` pairs, the first `n` valid.
pub type SackBlocks = [(u64, u64); MAX_SACK_BLOCKS];

#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    /// Ranges held above `rcv_nxt`; each range's stamp is the arrival number of the latest
    /// segment that landed in it.
    held: RangeSet,
    /// Out-of-order segments received so far (the stamp source).
    arrivals: u64,
}

impl Reassembly {
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.held.heap_bytes()
    }

    /// The held ranges in sequence order.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.held.spans().iter().map(|s| (s.start, s.end))
    }

    /// Records `[start, end)` received out of order, merging with neighbours.
    pub fn insert(&mut self, start: u64, end: u64) {
        self.arrivals += 1;
        self.held.insert(start, end, self.arrivals);
    }

    /// Advances `rcv_nxt` over any ranges it now reaches; returns the new `rcv_nxt`.
    pub fn advance(&mut self, mut rcv_nxt: u64) -> u64 {
        while let Some(s) = self.held.pop_first_reaching(rcv_nxt) {
            rcv_nxt = rcv_nxt.max(s.end);
        }
        rcv_nxt
    }

    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// Fills `out` with up to `max` SACK blocks and returns how many (RFC 2018 §4): the first
    /// block holds the most recently received segment, the others follow in the order they
    /// last held the newest segment — i.e. the most recently reported blocks first. Every
    /// held range is above `rcv_nxt`, so no block is ever at or below the cumulative ACK.
    pub fn sack_blocks(&self, max: usize, out: &mut SackBlocks) -> u8 {
        // The `max` ranges with the largest stamps (stamps are distinct: each arrival lands in
        // one range), newest first: one pass keeping them in order, from the top of the
        // sequence space, where the latest arrivals usually are (so that later ranges rarely
        // displace the ones kept).
        let max = max.min(MAX_SACK_BLOCKS);
        if max == 0 {
            return 0;
        }
        let mut top = [(0u64, 0u64, 0u64); MAX_SACK_BLOCKS]; // (stamp, start, end)
        let mut n = 0;
        for s in self.held.spans().iter().rev() {
            if n == max && s.stamp <= top[n - 1].0 {
                continue;
            }
            let mut k = n.min(max - 1);
            while k > 0 && top[k - 1].0 < s.stamp {
                top[k] = top[k - 1];
                k -= 1;
            }
            top[k] = (s.stamp, s.start, s.end);
            n = (n + 1).min(max);
        }
        for (o, t) in out.iter_mut().zip(&top[..n]) {
            *o = (t.1, t.2);
        }
        n as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_advances() {
        let mut r = Reassembly::default();
        r.insert(300, 400);
        r.insert(100, 200);
        r.insert(200, 250); // touches [100,200)
        assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(100, 250), (300, 400)]);
        r.insert(240, 310);
        assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(100, 400)]);
        assert_eq!(r.advance(50), 50);
        assert_eq!(r.advance(100), 400);
        assert!(r.is_empty());
    }

    /// RFC 2018 §4's example pattern: segments 2, 4, 6, 8 of 1..8 arrive (1, 3, 5, 7 lost); each
    /// ACK reports the newest block first, then the earlier ones, newest first.
    #[test]
    fn blocks_follow_rfc_2018_ordering() {
        let mut r = Reassembly::default();
        let mut b = [(0, 0); MAX_SACK_BLOCKS];
        for (k, expect) in [
            (2u64, &[(200u64, 300u64)][..]),
            (4, &[(400, 500), (200, 300)]),
            (6, &[(600, 700), (400, 500), (200, 300)]),
            (8, &[(800, 900), (600, 700), (400, 500)]), // 3 blocks at most
        ] {
            r.insert(k * 100, k * 100 + 100);
            let n = r.sack_blocks(3, &mut b) as usize;
            assert_eq!(&b[..n], expect);
        }
        // Segment 5 arrives: it joins 4 and 6 into one block, reported first.
        r.insert(500, 600);
        let n = r.sack_blocks(3, &mut b) as usize;
        assert_eq!(&b[..n], &[(400, 700), (800, 900), (200, 300)]);
    }

    /// The blocks are the held ranges of the largest stamps, newest first, whatever the
    /// pattern of arrivals (against a sort of all ranges by stamp).
    #[test]
    fn blocks_are_the_newest_ranges() {
        use crate::rng::{Rng, StreamKind};
        let mut rng = Rng::stream(6, StreamKind::Test, 0);
        let mut b = [(0, 0); MAX_SACK_BLOCKS];
        for _ in 0..200 {
            let mut r = Reassembly::default();
            for _ in 0..30 {
                let a = 100 + rng.below(2000);
                r.insert(a, a + 1 + rng.below(80));
                for max in 0..=MAX_SACK_BLOCKS + 1 {
                    let mut all: Vec<_> = r.held.spans().to_vec();
                    all.sort_by_key(|s| std::cmp::Reverse(s.stamp));
                    let expect: Vec<(u64, u64)> = all
                        .iter()
                        .take(max.min(MAX_SACK_BLOCKS))
                        .map(|s| (s.start, s.end))
                        .collect();
                    let n = r.sack_blocks(max, &mut b) as usize;
                    assert_eq!(&b[..n], &expect[..]);
                }
            }
        }
    }
}
