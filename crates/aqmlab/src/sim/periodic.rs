//! A periodic sender's schedule, shared by UDP CBR flows (`sim::udp_cbr`) and the real-time
//! streams (`sim::realtime`): packet `k` (numbered from 0) leaves at `start + round(k · T)`
//! while that is before `stop`. Computing each time from `k`, not by adding `T` again and
//! again, keeps the rate exact over any run length (ns-2's Application/Traffic/CBR keeps it in
//! floating point for the same reason).

use crate::units::Time;

#[derive(Clone, Debug)]
pub(super) struct Periodic {
    pub start: Time,
    pub stop: Time,
    /// `T`, ns between packets (fractional: times are rounded per packet, never accumulated);
    /// 0 for a stream that sends only in answer (ping's echoes).
    pub interval: f64,
    /// Next packet number to send.
    pub next: u64,
}

impl Periodic {
    pub fn new(start: Time, stop: Time, interval: f64) -> Self {
        Periodic {
            start,
            stop,
            interval,
            next: 0,
        }
    }

    /// Send time of packet `k`.
    #[inline]
    pub fn send_time(&self, k: u64) -> Time {
        self.start + (k as f64 * self.interval).round() as Time
    }

    /// Time of the next packet, if the stream sends on its own and it is before the stop.
    #[inline]
    pub fn next_send(&self) -> Option<Time> {
        let t = self.send_time(self.next);
        (self.interval > 0.0 && t < self.stop).then_some(t)
    }

    /// The number of the packet leaving now; the schedule moves to the next.
    #[inline]
    pub fn take(&mut self) -> u64 {
        let k = self.next;
        self.next += 1;
        k
    }
}

/// The receiver's side of a numbered stream: when packet `k` arrives and the receiver expected
/// packet `expected`, the packets of the gap `[expected, k)` did not come (lost, on FIFO
/// paths); returns how many of them were measured (numbered at or after `first_measured`, the
/// first packet sent after the warm-up; none before it is known).
pub(super) fn measured_gap(first_measured: Option<u64>, expected: u64, k: u64) -> u64 {
    let from = first_measured.map_or(k, |m| m.max(expected));
    k.saturating_sub(from)
}
