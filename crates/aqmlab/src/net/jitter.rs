//! Hosts' send jitter: a small random delay between a host's TCP/IP stack and its interface.
//!
//! A deterministic simulator sends a segment the very nanosecond an ACK arrives, so flows whose
//! round-trip times stand in simple ratios lock into phase with a drop-tail queue and the
//! queue's drops fall on some of them only (Floyd & Jacobson, "On traffic phase effects in
//! packet-switched gateways", Internetworking: Research and Experience 3(3), 1992: a random
//! processing time at the sources removes the effect). ns-2 offers the same remedy as
//! `Agent/TCP overhead_` (default 0, off): Full-TCP delays each segment by a uniform time in
//! `[0, overhead_)` (tcp-full.cc), which ns-2's manual describes as a device "to avoid phase
//! effects", not a model of CPU time. Real hosts have such a delay anyway (interrupts,
//! scheduling, the driver), of tens of microseconds on the testbeds' PCs.
//!
//! Law: each packet a host sends becomes ready for its interface a uniform random time in
//! `[0, max]` after the stack produced it, but never before the packet the host sent before it
//! (the stack and the driver are a FIFO: a host does not reorder its own packets). Each host
//! draws from its own stream, so the draws do not depend on other hosts' traffic.

use crate::rng::{Rng, StreamKind};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct SendJitter {
    max: Time,
    rng: Rng,
    last_ready: Time,
}

impl SendJitter {
    /// Jitter of up to `max` for host `host` of the run with `seed`.
    pub fn new(max: Time, seed: u64, host: u32) -> Self {
        SendJitter {
            max,
            rng: Rng::stream(seed, StreamKind::HostJitter, host as u64),
            last_ready: 0,
        }
    }

    /// When a packet the host sends at `now` reaches its interface.
    #[inline]
    pub fn ready(&mut self, now: Time) -> Time {
        let delay = self.rng.below(self.max + 1);
        self.last_ready = (now + delay).max(self.last_ready);
        self.last_ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    /// Delays are uniform on [0, max] (mean max/2, both ends reached) when packets are far
    /// apart, and a host never reorders: a packet sent right after another waits for it.
    #[test]
    fn uniform_delay_in_order() {
        let mut j = SendJitter::new(100 * US, 3, 0);
        let n = 200_000;
        let mut sum = 0.0;
        let (mut lo, mut hi) = (Time::MAX, 0);
        for i in 0..n {
            let now = i as Time * 1_000 * US;
            let d = j.ready(now) - now;
            sum += d as f64;
            lo = lo.min(d);
            hi = hi.max(d);
        }
        let mean = sum / n as f64 / US as f64;
        assert!((mean - 50.0).abs() < 0.3, "{mean}");
        assert_eq!((lo, hi), (0, 100 * US));
        let mut j = SendJitter::new(100 * US, 4, 0);
        let mut last = 0;
        for i in 0..10_000 {
            let r = j.ready(i as Time * US);
            assert!(r >= last);
            last = r;
        }
    }
}
