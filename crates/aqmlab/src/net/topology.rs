//! The chain of bottlenecks (a parking lot), of which the dumbbell is the chain of one hop.
//!
//! ```text
//!  left hosts                                                           right hosts
//!  L0 ─┐     hop 0          hop 1                     hop N−1          ┌─ R0
//!  L1 ─┤ R_0 ══════ R_1 ══════ R_2  …  R_{N−1} ══════ R_N ├─ R1
//!  …  ─┘        │  │        │  │                      │  │             └─ …
//!            X0l  X0r    X1l  X1r               X(N−1)l  X(N−1)r
//!   (hop k's cross hosts: `cross` hosts on R_k, its left side, and `cross` on R_{k+1})
//! ```
//! Every host is on a full-duplex access link to its router; hop `k` joins routers `R_k` and
//! `R_{k+1}` (forward = towards the right, R_k → R_{k+1}). Left hosts hang on `R_0`, right
//! hosts on `R_N`. With one hop and no cross hosts this is the dumbbell.
//!
//! Host numbering: left hosts `0..left`, right hosts `left..left + right`, then the cross
//! hosts of hop 0, hop 1, …, each hop's `cross` left-side hosts before its `cross` right-side
//! ones. Link numbering: host `h` has uplink `2h` (host → router) and downlink `2h + 1`;
//! hop `k`'s forward direction is `2·hosts + 2k`, its reverse `2·hosts + 2k + 1`. A dumbbell
//! keeps the numbering it always had (hop 0 at `2·hosts`, `2·hosts + 1`).

use super::link::LinkId;

/// Most links on a path: an uplink, every hop of the longest chain, a downlink
/// (`config::MAX_HOPS`).
pub const MAX_PATH_LINKS: usize = crate::config::MAX_HOPS + 2;

/// A route: the links a packet crosses in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    pub links: [LinkId; MAX_PATH_LINKS],
    pub len: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Chain {
    pub left: u32,
    pub right: u32,
    /// Number of hops (≥ 1; 1 is the dumbbell).
    pub hops: u32,
    /// Cross hosts at each end of every hop.
    pub cross: u32,
}

impl Chain {
    /// The dumbbell: one hop, no cross hosts.
    pub fn dumbbell(left: u32, right: u32) -> Self {
        Chain {
            left,
            right,
            hops: 1,
            cross: 0,
        }
    }

    pub fn hosts(&self) -> u32 {
        self.left + self.right + 2 * self.cross * self.hops
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

    /// The `i`-th cross host of hop `hop` on its left side (on router `R_hop`) or right side
    /// (on `R_{hop+1}`).
    pub fn cross_host(&self, hop: u32, right_side: bool, i: u32) -> u32 {
        self.left
            + self.right
            + 2 * self.cross * hop
            + self.cross * right_side as u32
            + i % self.cross
    }

    /// Whether a host is on the left side: a left host, or a cross host on the left side of
    /// its hop (so that a source's `client_side` keeps its meaning for cross traffic).
    pub fn on_left_side(&self, host: u32) -> bool {
        host < self.left
            || (host >= self.left + self.right
                && (host - self.left - self.right) % (2 * self.cross) < self.cross)
    }

    /// The router a host hangs on (0 for left hosts, `hops` for right hosts).
    pub fn router_of(&self, host: u32) -> u32 {
        if host < self.left {
            0
        } else if host < self.left + self.right {
            self.hops
        } else {
            let c = host - self.left - self.right;
            let hop = c / (2 * self.cross);
            hop + (c % (2 * self.cross) >= self.cross) as u32
        }
    }

    /// A host's index among the hosts of its side group (left, right, or one hop's cross hosts
    /// on one side): the row or column of an RTT matrix.
    pub fn side_index(&self, host: u32) -> u32 {
        if host < self.left {
            host
        } else if host < self.left + self.right {
            host - self.left
        } else {
            (host - self.left - self.right) % self.cross
        }
    }

    pub fn uplink(&self, host: u32) -> LinkId {
        2 * host
    }
    pub fn downlink(&self, host: u32) -> LinkId {
        2 * host + 1
    }
    /// Hop `k`'s forward (`dir` 0, left → right) or reverse (`dir` 1) link.
    pub fn hop_link(&self, k: u32, dir: u32) -> LinkId {
        2 * self.hosts() + 2 * k + dir
    }
    pub fn forward(&self) -> LinkId {
        self.hop_link(0, 0)
    }
    pub fn reverse(&self) -> LinkId {
        self.hop_link(0, 1)
    }
    pub fn link_count(&self) -> usize {
        2 * self.hosts() as usize + 2 * self.hops as usize
    }

    pub fn path(&self, src: u32, dst: u32) -> Path {
        let mut links = [0; MAX_PATH_LINKS];
        links[0] = self.uplink(src);
        let (a, b) = (self.router_of(src), self.router_of(dst));
        let mut len = 1;
        if a < b {
            for k in a..b {
                links[len] = self.hop_link(k, 0);
                len += 1;
            }
        } else {
            for k in (b..a).rev() {
                links[len] = self.hop_link(k, 1);
                len += 1;
            }
        }
        links[len] = self.downlink(dst);
        Path {
            links,
            len: len as u8 + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(p: Path) -> Vec<LinkId> {
        p.links[..p.len as usize].to_vec()
    }

    #[test]
    fn paths_cross_the_bottleneck_only_between_sides() {
        let d = Chain::dumbbell(2, 3);
        assert_eq!(d.forward(), 10);
        assert_eq!(d.link_count(), 12);
        assert_eq!(links(d.path(0, 2)), vec![0, 10, 5]);
        assert_eq!(links(d.path(4, 1)), vec![8, 11, 3]);
        assert_eq!(links(d.path(0, 1)), vec![0, 3]);
    }

    /// A 3-hop chain, 1 left, 1 right and 1 cross host per hop end: hosts 0 (left), 1 (right),
    /// 2/3 (hop 0's left/right cross hosts, on R0/R1), 4/5 (hop 1's, on R1/R2), 6/7 (hop 2's,
    /// on R2/R3). 8 hosts: access links 0..16, hop k forward 16 + 2k, reverse 17 + 2k.
    #[test]
    fn chain_paths_for_every_pair_of_host_kinds() {
        let c = Chain {
            left: 1,
            right: 1,
            hops: 3,
            cross: 1,
        };
        assert_eq!(c.hosts(), 8);
        assert_eq!(c.link_count(), 22);
        assert_eq!(
            (0..8).map(|h| c.router_of(h)).collect::<Vec<_>>(),
            vec![0, 3, 0, 1, 1, 2, 2, 3]
        );
        assert_eq!(c.cross_host(1, false, 0), 4);
        assert_eq!(
            (0..8).map(|h| c.on_left_side(h)).collect::<Vec<_>>(),
            vec![true, false, true, false, true, false, true, false]
        );
        assert_eq!(c.cross_host(2, true, 5), 7);
        // Left to right crosses every hop forward; right to left every hop in reverse.
        assert_eq!(links(c.path(0, 1)), vec![0, 16, 18, 20, 3]);
        assert_eq!(links(c.path(1, 0)), vec![2, 21, 19, 17, 1]);
        // A hop's cross traffic crosses that hop only, either way.
        assert_eq!(links(c.path(4, 5)), vec![8, 18, 11]);
        assert_eq!(links(c.path(5, 4)), vec![10, 19, 9]);
        assert_eq!(links(c.path(2, 3)), vec![4, 16, 7]);
        assert_eq!(links(c.path(6, 7)), vec![12, 20, 15]);
        // Left host to a cross host on R2: hops 0 and 1; a cross host on R1 to the right
        // host: hops 1 and 2.
        assert_eq!(links(c.path(0, 5)), vec![0, 16, 18, 11]);
        assert_eq!(links(c.path(3, 1)), vec![6, 18, 20, 3]);
        // Hosts on the same router (hop 0's right cross host and hop 1's left one, both on
        // R1): no hop.
        assert_eq!(links(c.path(3, 4)), vec![6, 9]);
        // Right host to hop 0's left cross host (on R0): every hop in reverse.
        assert_eq!(links(c.path(1, 2)), vec![2, 21, 19, 17, 5]);
    }

    #[test]
    fn side_indices_restart_in_every_group() {
        let c = Chain {
            left: 2,
            right: 3,
            hops: 2,
            cross: 2,
        };
        let idx: Vec<u32> = (0..c.hosts()).map(|h| c.side_index(h)).collect();
        assert_eq!(idx, vec![0, 1, 0, 1, 2, 0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn the_longest_chain_fits_a_path() {
        let c = Chain {
            left: 1,
            right: 1,
            hops: crate::config::MAX_HOPS as u32,
            cross: 0,
        };
        assert_eq!(c.path(0, 1).len as usize, MAX_PATH_LINKS);
    }
}
