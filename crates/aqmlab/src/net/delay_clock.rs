//! The delay emulator's clock: dummynet moves delayed packets on clock ticks.
//!
//! FreeBSD's dummynet (Rizzo 1997; `sys/netinet/ip_dummynet.c` of 2.2.x and 4.x) keeps time in
//! ticks of the kernel clock (`hz`, 100 by default, 1,000 as its documentation recommends):
//!
//! * a pipe's delay is converted to ticks with integer division, `delay_ms · hz / 1000`,
//!   i.e. rounded **down** (`config_pipe`; ipfw's man page says "rounded to the next multiple",
//!   the code truncates; a delay shorter than one tick is no delay at all);
//! * a packet entering the delay line while the tick counter reads `k` is stamped
//!   `output_time = k + d` and leaves in the callout that runs at the tick making the counter
//!   `k + d` (`dummynet()`, re-armed every tick with `timeout(dummynet, NULL, 1)`), together
//!   with every other packet due at that tick, in FIFO order;
//! * so its real delay lies in `((d − 1)·T, d·T]`, and packets leave in bursts at tick
//!   boundaries. There is no sub-tick precision.
//!
//! Each host has its own clock: its ticks fall at `φ_h + m·T` with a phase `φ_h` uniform in
//! `[0, T)`, drawn from the host's own stream (hosts' clocks are not synchronised). A packet
//! arriving exactly at a tick sees that tick as already counted.

use crate::rng::{Rng, StreamKind};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct DelayClock {
    tick: Time,
    phase: Vec<Time>,
}

impl DelayClock {
    /// A clock of period `tick` (> 0) for `hosts` hosts, phases from the run's `seed`.
    pub fn new(tick: Time, hosts: u32, seed: u64) -> Self {
        assert!(tick > 0, "a delay clock ticks");
        let phase = (0..hosts)
            .map(|h| Rng::stream(seed, StreamKind::DelayClock, h as u64).below(tick))
            .collect();
        DelayClock { tick, phase }
    }

    pub fn tick(&self) -> Time {
        self.tick
    }

    /// Ticks of a configured delay: rounded down (`config_pipe`).
    pub fn ticks(&self, delay: Time) -> Time {
        delay / self.tick
    }

    /// When a packet that enters the delay line of `host` at `t` with a configured delay
    /// `delay` leaves it.
    #[inline]
    pub fn exit(&self, host: u32, t: Time, delay: Time) -> Time {
        let d = self.ticks(delay);
        if d == 0 {
            // `transmit_event` sends a packet due now at once, inside `dummynet_io`.
            return t;
        }
        let (tick, phase) = (self.tick, self.phase[host as usize]);
        // Ticks of this host counted by `t`, plus one (no negative numbers before the first).
        let k1 = (t + tick - phase) / tick;
        phase + (k1 + d - 1) * tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, US};

    fn clock_with_phase(tick: Time, phase: Time) -> DelayClock {
        DelayClock {
            tick,
            phase: vec![phase],
        }
    }

    /// Hand-computed from `ip_dummynet.c`: HZ = 100 (10 ms ticks), phase 3 ms, so ticks at
    /// 3, 13, 23, ... ms. A 50 ms delay is 5 ticks; a packet entering at 14 ms (counter 1)
    /// is due at counter 6, the tick at 63 ms: 49 ms of delay; one entering at 22.9 ms also
    /// leaves at 63 ms (40.1 ms); one entering exactly at the tick of 23 ms leaves at 73 ms.
    #[test]
    fn packets_leave_at_ticks_in_bursts() {
        let c = clock_with_phase(10 * MS, 3 * MS);
        assert_eq!(c.exit(0, 14 * MS, 50 * MS), 63 * MS);
        assert_eq!(c.exit(0, 22_900 * US, 50 * MS), 63 * MS);
        assert_eq!(c.exit(0, 23 * MS, 50 * MS), 73 * MS);
        // Before the host's first tick (3 ms): it leaves at the 5th tick, 43 ms.
        assert_eq!(c.exit(0, MS, 50 * MS), 43 * MS);
    }

    /// Delays are truncated to whole ticks: 15 ms is one 10-ms tick, 9 ms none (no delay).
    #[test]
    fn delays_round_down_to_ticks() {
        let c = clock_with_phase(10 * MS, 0);
        assert_eq!(c.ticks(15 * MS), 1);
        assert_eq!(c.exit(0, 5 * MS, 15 * MS), 10 * MS);
        assert_eq!(c.exit(0, 5 * MS, 9 * MS), 5 * MS);
        assert_eq!(c.exit(0, 5 * MS, 19_999 * US), 10 * MS);
        assert_eq!(c.exit(0, 5 * MS, 20 * MS), 20 * MS);
    }

    /// Over arrivals uniform in phase, the delay of d ticks is uniform on ((d−1)·T, d·T].
    #[test]
    fn delay_is_uniform_between_d_minus_one_and_d_ticks() {
        let c = DelayClock::new(MS, 4, 11);
        let mut r = Rng::stream(1, StreamKind::Test, 0);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let t = r.below(1_000 * MS);
            let out = c.exit(2, t, 37_400 * US); // 37 ticks
            let delay = out - t;
            assert!(delay > 36 * MS && delay <= 37 * MS, "{delay}");
            sum += delay as f64;
        }
        let mean_ms = sum / n as f64 / MS as f64;
        assert!((mean_ms - 36.5).abs() < 0.01, "{mean_ms}");
    }

    #[test]
    fn hosts_have_their_own_phases() {
        let c = DelayClock::new(10 * MS, 8, 5);
        let mut phases: Vec<Time> = c.phase.clone();
        assert!(phases.iter().all(|&p| p < 10 * MS));
        phases.dedup();
        assert!(phases.len() > 1);
        assert_eq!(c.phase, DelayClock::new(10 * MS, 8, 5).phase);
    }
}
