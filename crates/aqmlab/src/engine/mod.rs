//! Discrete-event scheduler.
//!
//! Events are ordered by `(time, insertion sequence)`: two events at the same nanosecond run
//! in the order they were scheduled, so every run is reproducible. Cancellation is lazy:
//! components keep a generation number per timer and ignore a fired event whose generation is
//! stale, so cancelling is O(1) and needs no search.
//!
//! The event list is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan 1990) on the integer
//! time, with hexadecimal digits. Event times never precede `last`, the time of the last event
//! taken, so an event is kept in a bucket named by the highest digit in which its time differs
//! from `last` and its value there (bucket 0: equal to `last`). Scheduling appends to a bucket
//! (O(1)). When bucket 0 is exhausted, the lowest non-empty bucket holds the next events; its
//! minimum (kept per bucket) becomes `last`, and its events move to buckets of lower digits
//! (a bucket with a single event is taken directly). An event moves at most 16 times
//! (measured: about once on average), always through contiguous memory, where a binary heap
//! of tens of thousands of events pays a cache miss per level on every pop.
//!
//! Insertion order among equal times needs no sequence number: events with the same time are
//! always in the same bucket (the bucket depends only on the time and `last`), each bucket
//! keeps its events in the order they arrived (appends, and moves that copy a bucket front to
//! back), and bucket 0 is taken front to back. So the order is exactly that of a priority
//! queue on `(time, sequence)` (the `matches_sorted_reference…` tests check it).

use crate::units::Time;

/// Bits per digit of the radix heap: a bucket per (digit position, digit value).
const DIGIT: u32 = 4;
/// Bucket `16q + v` holds events whose time first differs from `last` in hexadecimal digit q,
/// where it has the value v (> last's digit, so v ≥ 1 and index 0 is never used).
const BUCKETS: usize = 1 << (2 * DIGIT);
const WORDS: usize = BUCKETS / 64;
/// Buckets of digit position q span 16^q ns; spreading one of 2^12 to 2^16 ns (4 to 65 µs)
/// hands its events to `pop_until_hinting`'s hint: they will run within that much simulated
/// time, and not so soon that a prefetch could not arrive first (the events of smaller
/// buckets run within the next few events).
const HINT_BITS: (u32, u32) = (12, 16);

/// The event list. `E` is the simulation's event type (small and `Copy`: an entry is `E` and
/// its time).
pub struct Scheduler<E> {
    /// Events at `last`, in order, taken from index `head` on.
    current: Vec<(Time, E)>,
    head: usize,
    /// `buckets[16q + v]`: events at `t` that agree with `last` on the hexadecimal digits
    /// above q and have digit v (> last's) at q. Bucket order is time order: all of a bucket's
    /// events precede those of any later bucket.
    buckets: Box<[Vec<(Time, E)>; BUCKETS]>,
    /// Earliest time in each bucket (`Time::MAX` when empty).
    min: Box<[Time; BUCKETS]>,
    /// Bit b set when bucket b is non-empty.
    occupied: [u64; WORDS],
    /// Time of the last event taken; no pending event is earlier and `last` ≤ `now`.
    last: Time,
    len: usize,
    now: Time,
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
            current: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            min: Box::new([Time::MAX; BUCKETS]),
            occupied: [0; WORDS],
            last: 0,
            len: 0,
            now: 0,
            executed: 0,
        }
    }

    /// Current simulated time (the time of the event being processed).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Files an event at `t` ≥ `last` by the highest hexadecimal digit where `t` and `last`
    /// differ.
    #[inline]
    fn file(&mut self, t: Time, e: E) {
        let x = t ^ self.last;
        if x == 0 {
            self.current.push((t, e));
            return;
        }
        let shift = (Time::BITS - 1 - x.leading_zeros()) & !(DIGIT - 1);
        let b = ((shift << 2) as usize | (t >> shift) as usize & 15) & (BUCKETS - 1);
        self.buckets[b].push((t, e));
        let m = &mut self.min[b];
        *m = (*m).min(t);
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    /// Schedules `event` at absolute time `at`. Scheduling in the past is a logic error; it
    /// is clamped to `now` in release builds so that time never goes backwards.
    #[inline]
    pub fn at(&mut self, at: Time, event: impl Into<E>) {
        let event = event.into();
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let time = at.max(self.now);
        self.file(time, event);
        self.len += 1;
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, event: impl Into<E>) {
        self.at(self.now + delay, event);
    }

    /// The lowest non-empty bucket, if any.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        let w = self.occupied.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.occupied[w].trailing_zeros() as usize)
    }

    #[inline]
    fn take(&mut self, t: Time, e: E) -> E {
        self.len -= 1;
        self.now = t;
        self.executed += 1;
        e
    }

    /// Pops the next event if it is due no later than `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<E> {
        self.pop_until_hinting(until, |_| {})
    }

    /// `pop_until`, handing `hint` every event of a bucket being spread whose span is within
    /// `HINT_BITS`: events that will run within that much simulated time, so that the caller
    /// can ask for their data in advance (a prefetch; no effect on the order).
    #[inline]
    pub fn pop_until_hinting(&mut self, until: Time, mut hint: impl FnMut(&E)) -> Option<E> {
        if let Some(&(t, e)) = self.current.get(self.head) {
            if t > until {
                return None;
            }
            self.head += 1;
            return Some(self.take(t, e));
        }
        let i = self.lowest()?;
        let m = self.min[i];
        if m > until {
            return None;
        }
        self.current.clear();
        self.head = 0;
        self.last = m;
        self.min[i] = Time::MAX;
        self.occupied[i / 64] &= !(1 << (i % 64));
        if self.buckets[i].len() == 1 {
            let (t, e) = self.buckets[i].pop().expect("one event");
            return Some(self.take(t, e));
        }
        // Spread the bucket over lower ones: its events at `m` become `current`, in order.
        let mut bucket = std::mem::take(&mut self.buckets[i]);
        let span_bits = (i >> 4) as u32 * DIGIT;
        if (HINT_BITS.0..=HINT_BITS.1).contains(&span_bits) {
            for &(t, e) in &bucket {
                hint(&e);
                self.file(t, e);
            }
        } else {
            for &(t, e) in &bucket {
                self.file(t, e);
            }
        }
        bucket.clear();
        self.buckets[i] = bucket;
        let (t, e) = self.current[0];
        self.head = 1;
        Some(self.take(t, e))
    }

    /// Advances the clock to `t` (after the events up to `t` have run).
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Time of the next pending event.
    pub fn peek_time(&self) -> Option<Time> {
        match self.current.get(self.head) {
            Some(&(t, _)) => Some(t),
            None => self.lowest().map(|i| self.min[i]),
        }
    }

    pub fn pending(&self) -> usize {
        self.len
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

    /// Removes and returns the reference's next event: earliest time, then lowest id
    /// (= insertion order).
    fn take_earliest(reference: &mut Vec<(u64, u64)>) -> (u64, u64) {
        let (pos, _) = reference
            .iter()
            .enumerate()
            .min_by_key(|(_, &(t, i))| (t, i))
            .unwrap();
        reference.remove(pos)
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
                assert_eq!((s.now(), e), take_earliest(&mut reference));
            }
        }
    }

    /// As above with times over many scales (ties, nanoseconds to hours) and horizons that
    /// stop short of the next event, then schedule earlier ones.
    #[test]
    fn matches_sorted_reference_across_scales_and_horizons() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(4, StreamKind::Test, 0);
        let mut s = Scheduler::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut id = 0u64;
        for _ in 0..50_000 {
            match r.below(8) {
                0..=3 => {
                    let scale = [1, 2, 50, 1 << 12, 1 << 20, 1 << 33, 1 << 42][r.below(7) as usize];
                    let t = s.now() + r.below(scale);
                    s.at(t, id);
                    reference.push((t, id));
                    id += 1;
                },
                4..=6 => {
                    if let Some(e) = s.pop_until(u64::MAX) {
                        assert_eq!((s.now(), e), take_earliest(&mut reference));
                    }
                },
                _ => {
                    // Run up to a horizon, possibly short of the next event.
                    let until = s.now() + r.below(1 << 20);
                    while let Some(e) = s.pop_until(until) {
                        assert_eq!((s.now(), e), take_earliest(&mut reference));
                    }
                    assert!(reference.iter().all(|&(t, _)| t > until));
                    s.advance_to(until);
                },
            }
            assert_eq!(s.pending(), reference.len());
        }
    }
}
