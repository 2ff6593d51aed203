//! Discrete-event scheduler.
//!
//! Events are ordered by `(time, insertion sequence)`: two events at the same nanosecond run
//! in the order they were scheduled, whatever the heap does inside, so every run is
//! reproducible. Cancellation is lazy: components keep a generation number per timer and ignore
//! a fired event whose generation is stale, so cancelling is O(1) and needs no search.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::Time;

/// A scheduled event: key `(time, seq)` and a payload.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

/// The event list. `E` is the simulation's event enum (small and `Copy`).
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    now: Time,
    seq: u64,
    executed: u64,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            heap: BinaryHeap::with_capacity(1024),
            now: 0,
            seq: 0,
            executed: 0,
        }
    }

    /// Current simulated time (the time of the event being processed).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at absolute time `at`. Scheduling in the past is a logic error; it
    /// is clamped to `now` in release builds so that time never goes backwards.
    #[inline]
    pub fn at(&mut self, at: Time, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let time = at.max(self.now);
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, event: E) {
        self.at(self.now + delay, event);
    }

    /// Pops the next event if it is due no later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<E> {
        match self.heap.peek() {
            Some(e) if e.time <= until => {
                let e = self.heap.pop().expect("peeked");
                self.now = e.time;
                self.executed += 1;
                Some(e.event)
            },
            _ => None,
        }
    }

    /// Advances the clock to `t` (after the events up to `t` have run).
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Time of the next pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Events executed so far (including stale timer events that were ignored).
    pub fn executed(&self) -> u64 {
        self.executed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut s = Scheduler::new();
        s.at(10, 'a');
        s.at(5, 'b');
        s.at(10, 'c');
        s.at(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop_until(u64::MAX)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn pop_until_stops_at_horizon_and_clock_follows() {
        let mut s = Scheduler::new();
        s.at(10, 1);
        s.at(20, 2);
        assert_eq!(s.pop_until(15), Some(1));
        assert_eq!(s.now(), 10);
        assert_eq!(s.pop_until(15), None);
        s.advance_to(15);
        assert_eq!(s.now(), 15);
        assert_eq!(s.pop_until(25), Some(2));
    }

    /// Shadow-model check: random inserts and pops agree with a sorted reference.
    #[test]
    fn matches_sorted_reference_under_random_operations() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(3, StreamKind::Test, 0);
        let mut s = Scheduler::new();
        let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, id)
        let mut id = 0u64;
        for _ in 0..20_000 {
            if r.below(3) < 2 {
                let t = s.now() + r.below(50);
                s.at(t, id);
                reference.push((t, id));
                id += 1;
            } else if let Some(e) = s.pop_until(u64::MAX) {
                // Earliest time, then lowest id (= insertion order).
                let (pos, _) = reference
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, &(t, i))| (t, i))
                    .unwrap();
                let (t, i) = reference.remove(pos);
                assert_eq!((s.now(), e), (t, i));
            }
        }
    }
}
