//! CAKE's set-associative flow hash with host isolation (paper §III-B; Linux `cake_hash`).
//!
//! A flow's 32-bit hash picks a set of `SET_WAYS` = 8 queues among `QUEUES` = 1024 (the set
//! is `(hash mod 1024)` rounded down to a multiple of 8); the queue whose tag equals the
//! hash is used, else an idle queue of the set (searched from the hash's own way), else the
//! hash's own queue is shared (a collision). Tags make collisions rare: two flows share a
//! queue only when all 8 queues of their set are busy.
//!
//! Hosts get the same treatment in a separate 1024-slot table (source and destination tags
//! and bulk-flow counts), used by the dual and triple isolation modes to divide a host's
//! quantum among its bulk flows.
//!
//! aqmlab's packets carry no addresses: the source and destination hosts are the route's
//! end hosts (`Cake::learn_route`), hashed here with a fixed mixer; the flow hash is the
//! packet's `flow_hash` (Linux uses the skb's L4 hash likewise).

use super::flow::{Flow, Set};

pub const QUEUES: usize = 1024;
pub const SET_WAYS: usize = 8;

/// Flow isolation mode (tc-cake keywords; Linux `CAKE_FLOW_*` values 0–7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowMode {
    Flowblind,
    Srchost,
    Dsthost,
    Hosts,
    Flows,
    DualSrchost,
    DualDsthost,
    TripleIsolate,
}

impl FlowMode {
    /// Linux's bit encoding: 1 source host, 2 destination host, 4 flows.
    fn bits(self) -> u8 {
        self as u8
    }
    /// Per-source-host fairness (Linux `cake_dsrc`: dual-srchost, triple-isolate).
    pub fn dual_src(self) -> bool {
        self.bits() & 5 == 5
    }
    /// Per-destination-host fairness (Linux `cake_ddst`: dual-dsthost, triple-isolate).
    pub fn dual_dst(self) -> bool {
        self.bits() & 6 == 6
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Host {
    pub src_tag: u32,
    pub dst_tag: u32,
    pub src_bulk: u16,
    pub dst_bulk: u16,
}

/// Hash-table counters (tc's `way_inds`, `way_miss`, `way_cols`; `directs` are first-way hits).
#[derive(Clone, Copy, Debug, Default)]
pub struct WayStats {
    pub directs: u64,
    pub hits: u64,
    pub misses: u64,
    pub collisions: u64,
}

#[derive(Clone, Debug)]
pub struct FlowTable {
    pub tags: Vec<u32>,
    pub hosts: Vec<Host>,
    pub ways: WayStats,
}

/// A host number's 32-bit hash (murmur3's finalizer on the number and a side salt): any fixed
/// mixing will do, as Linux's keyed hash of the address does.
pub fn host_hash(host: u32, salt: u32) -> u32 {
    let mut h = host ^ salt;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Salts for a source and a destination host, so that a host's two roles hash apart.
pub const SRC_SALT: u32 = 0x5352_4348;
pub const DST_SALT: u32 = 0x4453_5448;

impl Default for FlowTable {
    fn default() -> Self {
        FlowTable {
            tags: vec![0; QUEUES],
            hosts: vec![Host::default(); QUEUES],
            ways: WayStats::default(),
        }
    }
}

impl FlowTable {
    /// The queue for a packet (Linux `cake_hash`): `flow_hash` the packet's flow hash,
    /// `src`/`dst` its end hosts' hashes. Reserves the queue and, in the dual and triple
    /// modes, the host slots of a queue that becomes (or is taken over as) active.
    pub fn lookup(
        &mut self,
        flows: &mut [Flow],
        mode: FlowMode,
        flow_hash: u32,
        src: u32,
        dst: u32,
    ) -> usize {
        if mode == FlowMode::Flowblind {
            return 0;
        }
        let bits = mode.bits();
        let hash = if bits & 4 != 0 {
            flow_hash
        } else {
            // Host-only modes: the flow is the host (pair). tc-cake(8): "flows are defined
            // only by source/destination address".
            (if bits & 1 != 0 { src } else { 0 }) ^ (if bits & 2 != 0 { dst } else { 0 })
        };
        let reduced = hash as usize % QUEUES;
        if self.tags[reduced] == hash && flows[reduced].set != Set::None {
            self.ways.directs += 1;
            return reduced;
        }
        let inner = reduced % SET_WAYS;
        let outer = reduced - inner;
        let mut k = inner;
        let mut allocate = false;
        let mut found = None;
        // A queue of the set already tagged for this flow.
        for i in 0..SET_WAYS {
            if self.tags[outer + k] == hash {
                if i > 0 {
                    self.ways.hits += 1;
                }
                allocate = flows[outer + k].set == Set::None;
                found = Some(outer + k);
                break;
            }
            k = (k + 1) % SET_WAYS;
        }
        if found.is_none() {
            // An idle queue of the set.
            for _ in 0..SET_WAYS {
                if flows[outer + k].set == Set::None {
                    self.ways.misses += 1;
                    allocate = true;
                    found = Some(outer + k);
                    break;
                }
                k = (k + 1) % SET_WAYS;
            }
        }
        let slot = match found {
            Some(s) => s,
            None => {
                // All 8 busy: share the hash's own queue, which leaves its old hosts.
                self.ways.collisions += 1;
                let f = &flows[reduced];
                if f.set == Set::Bulk {
                    let (s, d) = (f.srchost as usize, f.dsthost as usize);
                    self.hosts[s].src_bulk = self.hosts[s].src_bulk.saturating_sub(1);
                    self.hosts[d].dst_bulk = self.hosts[d].dst_bulk.saturating_sub(1);
                }
                allocate = true;
                reduced
            },
        };
        self.tags[slot] = hash;
        if allocate {
            if mode.dual_src() {
                let h = self.host_slot(src, true);
                if flows[slot].set == Set::Bulk {
                    self.hosts[h].src_bulk += 1;
                }
                flows[slot].srchost = h as u16;
            }
            if mode.dual_dst() {
                let h = self.host_slot(dst, false);
                if flows[slot].set == Set::Bulk {
                    self.hosts[h].dst_bulk += 1;
                }
                flows[slot].dsthost = h as u16;
            }
        }
        slot
    }

    /// The host table slot for a host hash: the set's slot tagged with it, else the first
    /// (from the hash's own way) with no bulk flows, whose tag it takes; else the last tried.
    fn host_slot(&mut self, hash: u32, src: bool) -> usize {
        let reduced = hash as usize % QUEUES;
        let inner = reduced % SET_WAYS;
        let outer = reduced - inner;
        let mut k = inner;
        for _ in 0..SET_WAYS {
            let h = &self.hosts[outer + k];
            if (if src { h.src_tag } else { h.dst_tag }) == hash {
                return outer + k;
            }
            k = (k + 1) % SET_WAYS;
        }
        for _ in 0..SET_WAYS {
            let h = &self.hosts[outer + k];
            if (if src { h.src_bulk } else { h.dst_bulk }) == 0 {
                break;
            }
            k = (k + 1) % SET_WAYS;
        }
        let h = &mut self.hosts[outer + k];
        if src {
            h.src_tag = hash;
        } else {
            h.dst_tag = hash;
        }
        outer + k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows() -> Vec<Flow> {
        vec![Flow::default(); QUEUES]
    }

    /// Hashes 8·n + w for n fixed all fall in set n; the first goes to its own way (a miss:
    /// the queue was idle), a second flow with the same reduced hash (hash + 1024) to the
    /// next idle way.
    #[test]
    fn set_associative_placement_and_counters() {
        let mut t = FlowTable::default();
        let mut f = flows();
        let m = FlowMode::Flows;
        let a = 8 * 5 + 3; // set 40..48, way 3
        assert_eq!(t.lookup(&mut f, m, a, 0, 0), 43);
        assert_eq!(t.ways.misses, 1);
        f[43].set = Set::Bulk;
        // Same flow again: a direct hit.
        assert_eq!(t.lookup(&mut f, m, a, 0, 0), 43);
        assert_eq!(t.ways.directs, 1);
        // Another flow whose hash reduces to 43: tag differs, so the next idle way, 44.
        let b = a + 1024;
        assert_eq!(t.lookup(&mut f, m, b, 0, 0), 44);
        assert_eq!(t.ways.misses, 2);
        f[44].set = Set::Bulk;
        // b again: its reduced slot 43 is tagged a, so it is found in way 4: an indirect hit.
        assert_eq!(t.lookup(&mut f, m, b, 0, 0), 44);
        assert_eq!(t.ways.hits, 1);
        assert_eq!(t.ways.collisions, 0);
    }

    /// With all 8 queues of a set busy, a ninth flow shares its own reduced queue.
    #[test]
    fn forced_collision_when_the_set_is_full() {
        let mut t = FlowTable::default();
        let mut f = flows();
        let m = FlowMode::Flows;
        for i in 0..8u32 {
            let slot = t.lookup(&mut f, m, 16 + i * 1024, 0, 0);
            assert_eq!(slot, 16 + i as usize, "way {i}");
            f[slot].set = Set::Bulk;
        }
        assert_eq!(t.ways.misses, 8);
        let ninth = 16 + 8 * 1024 + 2; // reduces to 18
        assert_eq!(t.lookup(&mut f, m, ninth, 0, 0), 18);
        assert_eq!(t.ways.collisions, 1);
        assert_eq!(
            t.tags[18], ninth,
            "the shared queue now carries the newcomer's tag"
        );
    }

    #[test]
    fn host_modes_hash_hosts_and_flowblind_uses_one_queue() {
        let mut t = FlowTable::default();
        let mut f = flows();
        assert_eq!(t.lookup(&mut f, FlowMode::Flowblind, 77, 1, 2), 0);
        let (s, d) = (host_hash(3, SRC_SALT), host_hash(9, DST_SALT));
        // srchost: two flows of one source share a queue.
        let q1 = t.lookup(&mut f, FlowMode::Srchost, 1, s, d);
        f[q1].set = Set::Bulk;
        assert_eq!(t.lookup(&mut f, FlowMode::Srchost, 2, s, d), q1);
        assert_eq!(q1, s as usize % QUEUES);
        // hosts: the pair.
        let q2 = t.lookup(&mut f, FlowMode::Hosts, 1, s, d);
        assert_eq!(q2, (s ^ d) as usize % QUEUES);
    }

    /// Triple isolation gives a new flow the slots of its hosts; a second flow of the same
    /// source host finds the same source slot by its tag.
    #[test]
    fn triple_isolate_allocates_host_slots() {
        let mut t = FlowTable::default();
        let mut f = flows();
        let m = FlowMode::TripleIsolate;
        let (s, d1, d2) = (
            host_hash(0, SRC_SALT),
            host_hash(5, DST_SALT),
            host_hash(6, DST_SALT),
        );
        let a = t.lookup(&mut f, m, 100, s, d1);
        f[a].set = Set::Sparse;
        let b = t.lookup(&mut f, m, 200, s, d2);
        assert_ne!(a, b);
        assert_eq!(f[a].srchost, f[b].srchost);
        assert_ne!(f[a].dsthost, f[b].dsthost);
        assert_eq!(t.hosts[f[a].srchost as usize].src_tag, s);
    }
}
