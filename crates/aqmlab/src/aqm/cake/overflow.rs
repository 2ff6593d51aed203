//! Which queue CAKE prunes when over its memory limit: Linux's lazily kept max-heap of the
//! queues' byte backlogs (`sch_cake.c`: `cake_drop`, `cake_heapify`, `cake_heapify_up`,
//! `overflow_heap`, `overflow_timeout`).
//!
//! The heap holds every queue of all eight possible tins (`CAKE_MAX_TINS`), laid out at
//! first as queue-major (`k = queue·8 + tin`). It is built only when a drop is needed and
//! none was for 65 535 dequeues (`overflow_timeout`); while it is live, an enqueue sifts its
//! queue up and a drop sifts the top down, but dequeues do not touch it. So the top is the
//! longest queue as the heap last saw it, which after dequeues need not be today's longest
//! (and may even be empty: then the heap is rebuilt and the top taken again).

use super::hash::QUEUES;

/// Linux `CAKE_MAX_TINS`.
const MAX_TINS: usize = 8;
const SLOTS: usize = MAX_TINS * QUEUES;
/// Dequeues a live heap outlasts without a drop (`overflow_timeout` after a drop).
const TIMEOUT: u16 = 65535;

#[derive(Clone, Debug)]
pub struct OverflowHeap {
    /// (tin, queue) per heap slot.
    heap: Vec<(u8, u16)>,
    /// The heap slot of each (tin, queue), tin-major.
    slot: Vec<u16>,
    /// Dequeues left before the heap is considered stale; 0: build it at the next drop.
    timeout: u16,
}

impl Default for OverflowHeap {
    /// `cake_init`: slot `queue·8 + tin` holds (tin, queue); no heap built yet.
    fn default() -> Self {
        let mut heap = vec![(0, 0); SLOTS];
        let mut slot = vec![0; SLOTS];
        for t in 0..MAX_TINS {
            for q in 0..QUEUES {
                let k = q * MAX_TINS + t;
                heap[k] = (t as u8, q as u16);
                slot[t * QUEUES + q] = k as u16;
            }
        }
        OverflowHeap {
            heap,
            slot,
            timeout: 0,
        }
    }
}

impl OverflowHeap {
    fn backlog(&self, backlogs: &dyn Fn(usize, usize) -> u32, k: usize) -> u32 {
        let (t, q) = self.heap[k];
        backlogs(t as usize, q as usize)
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        let (ti, qi) = self.heap[i];
        let (tj, qj) = self.heap[j];
        self.slot[ti as usize * QUEUES + qi as usize] = i as u16;
        self.slot[tj as usize * QUEUES + qj as usize] = j as u16;
    }

    /// `cake_heapify`: sift slot `i` down.
    fn sift_down(&mut self, backlogs: &dyn Fn(usize, usize) -> u32, mut i: usize) {
        let mut mb = self.backlog(backlogs, i);
        let mut m = i;
        while m < SLOTS {
            let l = 2 * m + 1;
            let r = l + 1;
            if l < SLOTS {
                let lb = self.backlog(backlogs, l);
                if lb > mb {
                    m = l;
                    mb = lb;
                }
            }
            if r < SLOTS {
                let rb = self.backlog(backlogs, r);
                if rb > mb {
                    m = r;
                    mb = rb;
                }
            }
            if m != i {
                self.swap(i, m);
                i = m;
            } else {
                break;
            }
        }
    }

    /// `cake_heapify_up`: sift slot `i` up.
    fn sift_up(&mut self, backlogs: &dyn Fn(usize, usize) -> u32, mut i: usize) {
        while i > 0 {
            let p = (i - 1) >> 1;
            if self.backlog(backlogs, i) > self.backlog(backlogs, p) {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    /// The queue to prune (`cake_drop`'s choice), given the queues' byte backlogs.
    pub fn victim(&mut self, backlogs: &dyn Fn(usize, usize) -> u32) -> (usize, usize) {
        loop {
            if self.timeout == 0 {
                for i in (0..=SLOTS / 2).rev() {
                    self.sift_down(backlogs, i);
                }
            }
            self.timeout = TIMEOUT;
            let (t, q) = self.heap[0];
            if backlogs(t as usize, q as usize) > 0 {
                return (t as usize, q as usize);
            }
            // Linux finds the queue empty, marks the heap for a rebuild and is called again.
            self.timeout = 0;
        }
    }

    /// The top queue lost its head (`cake_drop`'s final `cake_heapify(q, 0)`).
    pub fn after_drop(&mut self, backlogs: &dyn Fn(usize, usize) -> u32) {
        self.sift_down(backlogs, 0);
    }

    /// Queue (`t`, `q`) grew (`cake_enqueue`): sifted up while the heap is live.
    pub fn after_enqueue(&mut self, backlogs: &dyn Fn(usize, usize) -> u32, t: usize, q: usize) {
        if self.timeout != 0 {
            let k = self.slot[t * QUEUES + q] as usize;
            self.sift_up(backlogs, k);
        }
    }

    /// A dequeue returned a packet (the end of `cake_dequeue`).
    pub fn after_dequeue(&mut self) {
        self.timeout = self.timeout.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queue 5 of tin 0 longest: the first victim; after it shrinks below queue 9's backlog
    /// the heap, live now, still answers 5 until a drop sifts it down.
    #[test]
    fn victim_is_the_heap_top_and_dequeues_leave_it_stale() {
        let mut b = vec![0u32; QUEUES];
        b[5] = 3000;
        b[9] = 2000;
        let mut h = OverflowHeap::default();
        assert_eq!(h.victim(&|_, q| b[q]), (0, 5));
        // A dequeue shrinks queue 5 without telling the heap: still the top.
        b[5] = 1000;
        h.after_dequeue();
        assert_eq!(h.victim(&|_, q| b[q]), (0, 5));
        // A drop from it re-sifts: queue 9 comes up.
        b[5] = 0;
        h.after_drop(&|_, q| b[q]);
        assert_eq!(h.victim(&|_, q| b[q]), (0, 9));
        // An enqueue makes queue 7 the longest.
        b[7] = 5000;
        h.after_enqueue(&|_, q| b[q], 0, 7);
        assert_eq!(h.victim(&|_, q| b[q]), (0, 7));
    }
}
