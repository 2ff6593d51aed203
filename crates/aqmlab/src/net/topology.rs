//! The dumbbell: `left` hosts and `right` hosts, each on a full-duplex access link to its
//! side's router, and the two routers joined by the bottleneck.
//!
//! ```text
//!  L0 ─┐                         ┌─ R0
//!  L1 ─┤ router A ══ bottleneck ══ router B ├─ R1
//!  …  ─┘      (forward A→B, reverse B→A)     └─ …
//! ```
//! Link numbering: host `h` (left hosts first) has uplink `2h` (host → router) and downlink
//! `2h + 1`; the bottleneck's forward direction (left → right) is `2n`, reverse `2n + 1`.

use super::link::LinkId;

/// A route: the links a packet crosses in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    pub links: [LinkId; 3],
    pub len: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Dumbbell {
    pub left: u32,
    pub right: u32,
}

impl Dumbbell {
    pub fn hosts(&self) -> u32 {
        self.left + self.right
    }

    pub fn is_left(&self, host: u32) -> bool {
        host < self.left
    }

    /// Global host number of the `i`-th host of a side.
    pub fn left_host(&self, i: u32) -> u32 {
        i % self.left
    }
    pub fn right_host(&self, i: u32) -> u32 {
        self.left + i % self.right
    }

    pub fn uplink(&self, host: u32) -> LinkId {
        2 * host
    }
    pub fn downlink(&self, host: u32) -> LinkId {
        2 * host + 1
    }
    pub fn forward(&self) -> LinkId {
        2 * self.hosts()
    }
    pub fn reverse(&self) -> LinkId {
        2 * self.hosts() + 1
    }
    pub fn link_count(&self) -> usize {
        2 * self.hosts() as usize + 2
    }

    pub fn path(&self, src: u32, dst: u32) -> Path {
        let up = self.uplink(src);
        let down = self.downlink(dst);
        match (self.is_left(src), self.is_left(dst)) {
            (true, false) => Path {
                links: [up, self.forward(), down],
                len: 3,
            },
            (false, true) => Path {
                links: [up, self.reverse(), down],
                len: 3,
            },
            _ => Path {
                links: [up, down, 0],
                len: 2,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_cross_the_bottleneck_only_between_sides() {
        let d = Dumbbell { left: 2, right: 3 };
        assert_eq!(d.forward(), 10);
        assert_eq!(
            d.path(0, 2),
            Path {
                links: [0, 10, 5],
                len: 3
            }
        );
        assert_eq!(
            d.path(4, 1),
            Path {
                links: [8, 11, 3],
                len: 3
            }
        );
        assert_eq!(
            d.path(0, 1),
            Path {
                links: [0, 3, 0],
                len: 2
            }
        );
    }
}
