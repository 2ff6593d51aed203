//! Packets on the network: a packet offered to a link (queued at a bottleneck, or scheduled
//! straight through a cut-through access link), the bottlenecks' serialization, a packet's
//! arrival at the next node or at its destination host, and the table of paths between hosts.
//!
//! The hot path of every run: each packet passes here once per hop.

use std::hash::Hasher;

use super::capture_tap;
use super::events::Ev;
use super::Simulation;
use crate::aqm::Aqm;
use crate::net::link::{Link, LinkId};
use crate::net::queue::Offer;
use crate::packet::{flags, Packet, PktId, Proto};
use crate::units::Time;

/// Hasher for the path table's `(host, host)` keys: one multiply-rotate per word (the
/// Fx scheme of rustc). Keys come from the scenario, not from an adversary, so SipHash's
/// flood resistance buys nothing, and the table is looked up twice per connection.
#[derive(Default)]
pub(super) struct PairHasher(u64);

impl Hasher for PairHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Simulation {
    /// A UDP source's packet `p` leaves its host on `link` (UDP CBR, the real-time streams,
    /// video calls): captured there first when a capture watches hosts.
    #[inline]
    pub(super) fn send_from_host(&mut self, link: LinkId, p: Packet) {
        if self.host_observe {
            self.tap_sent(&p);
        }
        let pkt = self.pkts.alloc(p);
        self.send_on(link, pkt);
    }

    #[inline]
    pub(super) fn send_on(&mut self, link: LinkId, id: PktId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        if l.cut_through {
            self.send_cut_through(link, id);
            return;
        }
        let mut owner = None;
        if let Some(m) = l.monitor {
            let p = self.pkts.get(id);
            if p.proto == Proto::Tcp && now >= self.warmup {
                owner = Some((p.conn, p.gen));
            }
            let mon = if m < 2 {
                &mut self.monitors[m as usize]
            } else {
                &mut self.hop_monitors[m as usize - 2]
            };
            mon.arrival(now, p.size, &mut self.arrival_rows);
            if l.tap_in {
                if let Some(taps) = self.taps.as_deref_mut() {
                    let seen = capture_tap::Seen::Ingress(m as usize);
                    capture_tap::tap(taps, &capture_tap::world!(self), seen, now, p);
                }
            }
        }
        let offer = l.queue.enqueue(now, id, &mut self.pkts);
        if l.in_service.is_none() {
            self.start_tx(link);
        }
        if let Some((slot, gen)) = owner {
            self.count_flow_offer(slot, gen, offer);
        }
    }

    /// A packet offered to a cut-through (drop-tail, unmonitored) link: unless the queue is
    /// full, its serialization is scheduled behind everything accepted before it and its
    /// arrival at the far end is scheduled now (or it is lost on the link). Losses on the link
    /// are decided in FIFO order, as at the start of serialization.
    #[inline]
    fn send_cut_through(&mut self, link: LinkId, id: PktId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        let waiting = l.waiting_at(now);
        if let Offer::Dropped(_) = l.queue.offer_fifo(now, id, &mut self.pkts, waiting) {
            return;
        }
        let p = self.pkts.get(id);
        let end = if l.emulated_host {
            emulated_host_end(l, now, p.size)
        } else {
            l.schedule_fifo(now, p.size).1
        };
        let scripted = !l.scripted.is_empty() && l.scripted_drop(self.pkts.get_mut(id));
        let p = self.pkts.get(id);
        if scripted || (l.loss > 0.0 && l.loss_rng.bernoulli(l.loss)) {
            l.lost += 1;
            self.pkts.free(id);
        } else {
            let extra = if l.adds_flow_delay { p.flow_delay } else { 0 };
            let mut at = end + l.delay + extra;
            if l.ticked_box {
                // The host's delay box (links 2h and 2h + 1 belong to host h) releases the
                // packet at a tick of its clock.
                let clock = self.delay_clock.as_ref().expect("a ticked box has a clock");
                at = clock.exit(link / 2, end + l.delay, p.flow_delay);
            }
            let owner = p.owner();
            // Read only by the deep prefetch (`run_until`): not looked up otherwise.
            let to_host = self.prefetch_deep
                && p.hop as usize + 1 == self.paths[p.route as usize].len as usize;
            if l.hands_far_box {
                self.hand_over_far_box(id);
            }
            self.sched.at(
                at,
                Ev::Arrive {
                    pkt: id,
                    owner,
                    to_host,
                },
            );
        }
    }

    #[inline]
    fn start_tx(&mut self, link: LinkId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        if let Some(id) = l.queue.dequeue(now, &mut self.pkts) {
            let size = self.pkts.get(id).size;
            let tx = l.tx_time(size);
            l.in_service = Some(id);
            l.tx_size = size;
            l.tx_len = tx;
            l.busy_time += tx;
            l.tx_end = now + tx;
            let dir = l
                .monitor
                .expect("a link with serialization events is a bottleneck")
                as usize;
            let observe = l.observe_tx;
            self.set_tx_due(dir, now + tx);
            // `run_until` hands the end back to `bottleneck(dir)`: the monitor's index.
            debug_assert_eq!(self.bottleneck(dir), link);
            if observe {
                self.observe_tx(now, dir, id);
            }
        } else if let Some(t) = l.queue.take_wake() {
            // A shaper holds the queued packets until `t`: ask again then, through the same
            // end-of-serialization slot (`on_tx_done` with nothing in service).
            let dir = l.monitor.expect("a shaped queue is a bottleneck's") as usize;
            self.set_tx_due(dir, t);
        }
    }

    /// A TCP packet of a connection still open starts its transmission on the link of monitor
    /// `dir` (hop `dir / 2`, direction `dir % 2`):
    /// its sojourn goes to its source's histogram (`source_delay`), after the warm-up.
    #[cold]
    pub(super) fn note_source_delay(&mut self, now: Time, dir: usize, id: PktId) {
        let p = self.pkts.get(id);
        if now < self.warmup || p.proto != Proto::Tcp {
            return;
        }
        let tag = &self.tags[p.conn as usize];
        if tag.is(p.gen) {
            let delays = self.source_delays.as_mut().expect("checked by the caller");
            delays.add(tag.source, dir, now - p.enqueued_at);
        }
    }

    #[inline]
    pub(super) fn on_tx_done(&mut self, link: LinkId) {
        let now = self.sched.now();
        let m = self.links[link as usize].monitor.expect("a bottleneck") as usize;
        self.set_tx_due(m, Time::MAX);
        let l = &mut self.links[link as usize];
        let Some(id) = l.in_service.take() else {
            // A shaper's wake-up (`start_tx`), not an end of serialization.
            self.start_tx(link);
            return;
        };
        let p = self.pkts.get(id);
        l.tx_packets += 1;
        l.tx_bytes += p.size as u64;
        let scripted = !l.scripted.is_empty() && l.scripted_drop(self.pkts.get_mut(id));
        let p = self.pkts.get(id);
        if scripted || (l.loss > 0.0 && l.loss_rng.bernoulli(l.loss)) {
            l.lost += 1;
            self.pkts.free(id);
            self.start_tx(link);
        } else {
            let extra = if l.adds_flow_delay { p.flow_delay } else { 0 };
            let at = now + l.delay + extra;
            let owner = p.owner();
            self.start_tx(link);
            if at == now {
                // Zero propagation delay: the packet is at the next node now. Handling it here
                // saves an event per hop; the order stays deterministic.
                self.on_arrive(id);
            } else {
                // A bottleneck never ends a path: the packet reaches a node, not a host.
                let to_host = false;
                self.sched.at(
                    at,
                    Ev::Arrive {
                        pkt: id,
                        owner,
                        to_host,
                    },
                );
            }
        }
    }

    #[inline]
    pub(super) fn on_arrive(&mut self, id: PktId) {
        let p = self.pkts.get_mut(id);
        p.hop += 1;
        // By reference: a path holds up to `MAX_PATH_LINKS` links, of which one is needed.
        let path = &self.paths[p.route as usize];
        let hop = p.hop;
        if hop < path.len {
            let next = path.links[hop as usize];
            if hop + 1 == path.len && p.proto == Proto::Tcp {
                // Onto the last link: the receiving endpoint will be needed in a few events.
                let (slot, side) = (p.conn as usize, p.to_server as usize);
                if let Some(c) = self.conns.get(slot) {
                    prefetch(&c.ep[side]);
                    prefetch(&c.app);
                    if self.prefetch_deep {
                        // Beyond the shared cache too: the connection's own fields that
                        // delivery reads (its configuration, paths and delays for the answer,
                        // its timestamps), wherever the layout puts them, and its tag. Its
                        // Linux state is fetched from the event list's hint (`run_until`),
                        // once these lines are in.
                        prefetch(&c.tcp);
                        prefetch(&c.paths);
                        prefetch(&c.established);
                        if let Some(t) = self.tags.get(slot) {
                            prefetch(t);
                        }
                    }
                }
            }
            self.send_on(next, id);
        } else {
            // A copy without the SACK blocks unless it carries some (or LEDBAT's timestamp
            // option, `flags::TS`, in their last slot): they fill the packet's second cache
            // line, which most packets (no SACK) never need to load.
            let mut pkt = Packet {
                sack: Default::default(),
                ..*p
            };
            if (pkt.sack_n | (pkt.flags & flags::TS)) != 0 {
                pkt.sack = p.sack;
            }
            self.pkts.free(id);
            if self.host_observe {
                self.tap(capture_tap::Seen::Received, &pkt);
            }
            self.deliver(&pkt);
        }
    }

    /// The id of the path from `src` to `dst` (made on first use) and its propagation delay.
    pub(super) fn path_id(&mut self, src: u32, dst: u32) -> (u32, Time) {
        if let Some(&id) = self.path_ids.get(&(src, dst)) {
            return (id, self.path_delays[id as usize]);
        }
        let id = self.paths.len() as u32;
        let path = self.topo.path(src, dst);
        let delay = (0..path.len as usize)
            .map(|i| self.links[path.links[i] as usize].delay)
            .sum::<Time>();
        self.paths.push(path);
        self.path_delays.push(delay);
        // CAKE isolates hosts: it learns each route's end hosts (aqmlab's packets carry no
        // addresses).
        for m in 0..self.monitor_count() {
            let l = self.bottleneck(m);
            if let Aqm::Cake(c) = &mut self.links[l as usize].queue.aqm {
                c.learn_route(id, src, dst);
            }
        }
        self.path_ids.insert((src, dst), id);
        (id, delay)
    }
}

/// End of serialization of a packet of `size` bytes accepted at `now` on a host's link with
/// send jitter (the packet waits its jitter, never overtaking the one before) or a ticked delay
/// box (no jitter: the plain FIFO). Out of line: the common path has neither.
#[inline(never)]
fn emulated_host_end(l: &mut Link, now: Time, size: u32) -> Time {
    match &mut l.jitter {
        Some(j) => {
            let ready = j.ready(now);
            l.schedule_fifo_from(now, ready, size).1
        },
        None => l.schedule_fifo(now, size).1,
    }
}

/// Asks the processor to bring `x` into cache (a hint: no effect on results). Used for the
/// receiving endpoint of a packet a few events before it arrives: with thousands of open
/// connections its state has usually left the cache since its last packet.
#[inline(always)]
pub(super) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // Every line `x` touches: from the line its first byte is in, so that an object that
        // does not start on a line boundary has its last line fetched too. The count of whole
        // lines is a constant (the loop unrolls); one more line only when `x` straddles it.
        let size = std::mem::size_of::<T>();
        let lines = size.div_ceil(64);
        let start = x as *const T as usize;
        let first = (start & !63) as *const i8;
        for i in 0..lines {
            // SAFETY: a prefetch never faults and has no effect on memory contents.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(64 * i)) };
        }
        if start % 64 + size > 64 * lines {
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(64 * lines)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
