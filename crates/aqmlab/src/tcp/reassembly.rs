//! The receiver's out-of-order queue: byte ranges held above `rcv_nxt` (RFC 793 §3.9
//! "segment arrives", reassembly). Kept as a short sorted vector of disjoint ranges; a window
//! of 16 KB holds at most a dozen of them, so linear scans beat any tree.

#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    /// Disjoint, non-adjacent `[start, end)` ranges in increasing order, all above `rcv_nxt`.
    ranges: Vec<(u64, u64)>,
}

impl Reassembly {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Records `[start, end)` received out of order, merging with neighbours.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let mut s = start;
        let mut e = end;
        // Absorb every range that overlaps or touches [s, e).
        let mut i = 0;
        while i < self.ranges.len() {
            let (a, b) = self.ranges[i];
            if b < s {
                i += 1;
                continue;
            }
            if a > e {
                break;
            }
            s = s.min(a);
            e = e.max(b);
            self.ranges.remove(i);
        }
        self.ranges.insert(i, (s, e));
    }

    /// Advances `rcv_nxt` over any ranges it now reaches; returns the new `rcv_nxt`.
    pub fn advance(&mut self, mut rcv_nxt: u64) -> u64 {
        while let Some(&(a, b)) = self.ranges.first() {
            if a > rcv_nxt {
                break;
            }
            rcv_nxt = rcv_nxt.max(b);
            self.ranges.remove(0);
        }
        rcv_nxt
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
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
        assert_eq!(r.ranges(), &[(100, 250), (300, 400)]);
        r.insert(240, 310);
        assert_eq!(r.ranges(), &[(100, 400)]);
        assert_eq!(r.advance(50), 50);
        assert_eq!(r.advance(100), 400);
        assert!(r.is_empty());
    }

    /// Randomized check against a byte bitmap.
    #[test]
    fn matches_bitmap_model() {
        use crate::rng::{Rng, StreamKind};
        let mut rng = Rng::stream(5, StreamKind::Test, 0);
        for _ in 0..200 {
            let mut r = Reassembly::default();
            let mut bits = [false; 256];
            for _ in 0..20 {
                let a = rng.below(250);
                let b = a + 1 + rng.below(6);
                r.insert(a, b);
                for x in a..b {
                    bits[x as usize] = true;
                }
            }
            // Reconstruct ranges from the bitmap.
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
            assert_eq!(r.ranges(), expect.as_slice());
        }
    }
}
