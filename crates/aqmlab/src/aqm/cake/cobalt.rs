//! COBALT: CoDel and BLUE run side by side on one flow queue (Høiland-Jørgensen, Täht and
//! Morton, "Piece of CAKE", IEEE LANMAN 2018, §III-C; Linux `net/sched/sch_cake.c`,
//! `cobalt_should_drop`, `cobalt_queue_full`, `cobalt_queue_empty`, `cobalt_invsqrt`,
//! `cobalt_control`).
//!
//! Differences from plain CoDel (RFC 8289), all from Linux:
//! * one schedule, `drop_next`, serves both as the delay before the first signal (interval)
//!   and as the signalling clock: the inverse square root of 0 and 1 are both ≈ 1.0;
//! * when the sojourn falls below target the count is not reset but *decays*: each interval
//!   that passes without a signal (`drop_next` reached while not dropping) lowers it by one;
//! * the sojourn must also exceed 4 serialization times of an MTU (and 2 per bulk flow in
//!   ingress mode) to count as above target;
//! * `count` ≥ 1 is kept while dropping, and the inverse square root comes from a 16-entry
//!   table of exact values (4 Newton steps) below 16 and one Newton step above.
//!
//! BLUE: `p_drop` (0.32 fixed point) rises by `p_inc` on a queue-full event and falls by
//! `p_dec` when the flow is found empty, each no more often than once per `target` (the BLUE
//! timer). BLUE always drops (no ECN), whatever the packet's ECN field.

use crate::units::Time;

/// Per-tin COBALT parameters (Linux `struct cobalt_params`, set by `cake_set_rate`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CobaltParams {
    pub interval: Time,
    pub target: Time,
    /// Serialization time of one MTU at the tin's rate (0 when unshaped).
    pub mtu_time: Time,
    /// BLUE increment, 0.32 fixed point (Linux `1 << 24` = 1/256).
    pub p_inc: u32,
    /// BLUE decrement, 0.32 fixed point (Linux `1 << 20` = 1/4096).
    pub p_dec: u32,
}

/// Per-flow COBALT state (Linux `struct cobalt_vars`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltVars {
    pub count: u32,
    /// 1/√count in 0.32 fixed point.
    pub rec_inv_sqrt: u32,
    /// Next signal when dropping; otherwise the activity timeout.
    pub drop_next: Time,
    pub blue_timer: Time,
    /// BLUE drop probability, 0.32 fixed point.
    pub p_drop: u32,
    pub dropping: bool,
    pub ecn_marked: bool,
}

impl Default for CobaltVars {
    /// At rest. `rec_inv_sqrt` starts at table entry 0 (≈ 1.0), so that the first signal
    /// comes one interval after the sojourn first exceeds target, as CoDel specifies and as
    /// Linux's own comment on the table says; Linux's `cobalt_vars_init` zeroes it instead,
    /// which makes a never-used queue's first signal immediate (docs/queues.md, deviations).
    fn default() -> Self {
        CobaltVars {
            count: 0,
            rec_inv_sqrt: INV_SQRT_CACHE[0],
            drop_next: 0,
            blue_timer: 0,
            p_drop: 0,
            dropping: false,
            ecn_marked: false,
        }
    }
}

/// What COBALT decided for a dequeued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Pass,
    /// CoDel asked for a signal and the packet is ECN-capable (or already CE): mark.
    Mark,
    /// CoDel on a Not-ECT packet, or BLUE.
    Drop,
}

/// One Newton step of x ← x·(3 − count·x²)/2 in 0.32 fixed point, with Linux's
/// `cobalt_newton_step` arithmetic (and its truncations).
const fn newton_step(count: u32, invsqrt: u32) -> u32 {
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    let val = val >> 2;
    ((val * invsqrt as u64) >> (32 - 2 + 1)) as u32
}

/// Exact-enough 1/√count for count < 16 (Linux `cobalt_cache_init`: entry 0 is 0xFFFFFFFF,
/// each next entry four Newton steps from the previous one).
const INV_SQRT_CACHE: [u32; 16] = {
    let mut cache = [0u32; 16];
    cache[0] = u32::MAX;
    let mut v = u32::MAX;
    let mut count = 1;
    while count < 16 {
        let mut i = 0;
        while i < 4 {
            v = newton_step(count, v);
            i += 1;
        }
        cache[count as usize] = v;
        count += 1;
    }
    cache
};

impl CobaltVars {
    /// Linux `cobalt_invsqrt`.
    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = if self.count < INV_SQRT_CACHE.len() as u32 {
            INV_SQRT_CACHE[self.count as usize]
        } else {
            newton_step(self.count, self.rec_inv_sqrt)
        };
    }

    /// A queue-full (overflow) drop on this flow (Linux `cobalt_queue_full`). True when BLUE
    /// was quiescent before and active after (a newly unresponsive flow).
    pub fn queue_full(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut up = false;
        if signed(now, self.blue_timer) > p.target as i64 {
            up = self.p_drop == 0;
            self.p_drop = self.p_drop.saturating_add(p.p_inc);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// The flow was served and found empty (Linux `cobalt_queue_empty`). True when BLUE was
    /// active before and quiescent after.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut down = false;
        if self.p_drop != 0 && signed(now, self.blue_timer) > p.target as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
            down = self.p_drop == 0;
        }
        self.dropping = false;
        if self.count != 0 && signed(now, self.drop_next) >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
        }
        down
    }

    /// The decision for a freshly dequeued packet (Linux `cobalt_should_drop`): `sojourn` its
    /// queueing delay, `ect` whether it can carry CE (ECT(0), ECT(1) or already CE),
    /// `bulk_flows` the tin's bulk flows in ingress mode (0 otherwise), `draw` a uniform
    /// 32-bit number for BLUE (drawn only when `p_drop` > 0).
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: Time,
        sojourn: Time,
        ect: bool,
        bulk_flows: u32,
        draw: impl FnOnce() -> u32,
    ) -> Signal {
        let mut schedule = signed(now, self.drop_next);
        let over_target = sojourn > p.target
            && sojourn > p.mtu_time.saturating_mul(bulk_flows as u64 * 2)
            && sojourn > p.mtu_time.saturating_mul(4);
        let next_due = self.count != 0 && schedule >= 0;
        self.ecn_marked = false;
        let mut drop = false;

        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control(now, p.interval, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }

        if next_due && self.dropping {
            // CoDel's signal: CE where possible, otherwise a drop.
            self.ecn_marked = ect;
            drop = !ect;
            self.count = self.count.saturating_add(1);
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
            schedule = signed(now, self.drop_next);
        } else {
            // Decay: one count per interval elapsed without signalling.
            let mut due = next_due;
            while due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
                schedule = signed(now, self.drop_next);
                due = self.count != 0 && schedule >= 0;
            }
        }

        // BLUE, deliberately without ECN.
        if self.p_drop != 0 && draw() < self.p_drop {
            drop = true;
        }

        // `drop_next` doubles as an activity timeout while the count is 0.
        if self.count == 0 {
            self.drop_next = now + p.interval;
        } else if schedule > 0 && !drop {
            self.drop_next = now;
        }

        if drop {
            Signal::Drop
        } else if self.ecn_marked {
            Signal::Mark
        } else {
            Signal::Pass
        }
    }

    /// Whether the state has returned to rest (a flow is kept on the decaying list until
    /// then; Linux `cake_dequeue`).
    pub fn at_rest(&self, now: Time) -> bool {
        self.p_drop == 0 && self.count == 0 && now >= self.drop_next
    }
}

/// `t + interval/√count` (Linux `cobalt_control`, `reciprocal_scale`).
fn control(t: Time, interval: Time, rec_inv_sqrt: u32) -> Time {
    t + ((interval as u128 * rec_inv_sqrt as u128) >> 32) as Time
}

/// `a − b` as a signed number of nanoseconds (Linux `ktime_sub`).
fn signed(a: Time, b: Time) -> i64 {
    a as i64 - b as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn params() -> CobaltParams {
        // Unshaped CAKE: target 5 ms, interval 100 ms, no MTU floor.
        CobaltParams {
            interval: 100 * MS,
            target: 5 * MS,
            mtu_time: 0,
            p_inc: 1 << 24,
            p_dec: 1 << 20,
        }
    }

    #[test]
    fn inverse_square_root_table() {
        // Entries 0 and 1 are both ≈ 1.0; the others approach 1/√n from the previous entry
        // in four Newton steps: entry 2 is 0.706708 (not 0.707107), the rest within 10⁻³.
        assert_eq!(INV_SQRT_CACHE[0], u32::MAX);
        let near = |i: usize, x: f64| {
            let got = INV_SQRT_CACHE[i] as f64 / 4294967296.0;
            assert!((got - x).abs() < 1e-3, "entry {i}: {got} vs {x}");
        };
        near(1, 1.0);
        near(2, 0.5f64.sqrt());
        let e2 = INV_SQRT_CACHE[2] as f64 / 4294967296.0;
        assert!((e2 - 0.706708).abs() < 1e-6, "{e2}");
        near(4, 0.5);
        near(9, 1.0 / 3.0);
        near(15, 1.0 / 15f64.sqrt());
    }

    /// Sojourn 10 ms on every packet from t = 0, one packet per ms. CoDel's first signal is
    /// one interval after the sojourn first exceeded target, then interval/√count:
    /// t = 100 ms (count 1→2), then +100/√2 = 70.71 ms → 170.71 ms (count 3), then
    /// +100/√3 = 57.735 ms → 228.446 ms, then +50 ms → 278.45 ms.
    #[test]
    fn codel_signal_times_follow_interval_over_sqrt_count() {
        let p = params();
        let mut v = CobaltVars::default();
        let mut marks = Vec::new();
        for ms in 0..=300u64 {
            let now = ms * MS;
            if v.should_drop(&p, now, 10 * MS, true, 0, || unreachable!()) == Signal::Mark {
                marks.push(now);
            }
        }
        // Signals at the first packet at or after each scheduled time.
        assert_eq!(marks, vec![100 * MS, 171 * MS, 229 * MS, 279 * MS]);
        assert_eq!(v.count, 5);
        assert_eq!(v.p_drop, 0);
    }

    #[test]
    fn not_ect_is_dropped_where_ect_is_marked() {
        let p = params();
        let mut v = CobaltVars::default();
        assert_eq!(v.should_drop(&p, 0, 10 * MS, false, 0, || 0), Signal::Pass);
        assert_eq!(
            v.should_drop(&p, 100 * MS, 10 * MS, false, 0, || 0),
            Signal::Drop
        );
    }

    /// Below target the count decays by one per interval instead of resetting.
    #[test]
    fn count_decays_below_target() {
        let p = params();
        let mut v = CobaltVars::default();
        for ms in 0..=300u64 {
            v.should_drop(&p, ms * MS, 10 * MS, true, 0, || 0);
        }
        assert_eq!(v.count, 5);
        // From here sojourn 1 ms: drop_next = 300 ms (the last signal was at 279 ms and the
        // next was due at 279 + 100/√5 = 323.7; `schedule` < 0 so drop_next stays).
        let mut counts = Vec::new();
        for ms in 301..=700u64 {
            v.should_drop(&p, ms * MS, MS, true, 0, || 0);
            counts.push(v.count);
        }
        assert!(v.count < 5, "count decays");
        assert!(counts.windows(2).all(|w| w[1] <= w[0]));
    }

    /// BLUE: p_drop rises by 1/256 per queue-full event spaced more than `target` apart
    /// (events 3 ms apart: every second counts), and falls by 1/4096 when found empty.
    #[test]
    fn blue_rises_on_queue_full_and_falls_on_empty() {
        let p = params();
        let mut v = CobaltVars::default();
        // First event at 10 ms (> 5 ms after blue_timer = 0): up, p = 1/256.
        assert!(v.queue_full(&p, 10 * MS));
        assert_eq!(v.p_drop, 1 << 24);
        // 13 ms: only 3 ms after; unchanged. 16 ms: 6 ms after: 2/256.
        assert!(!v.queue_full(&p, 13 * MS));
        assert_eq!(v.p_drop, 1 << 24);
        assert!(!v.queue_full(&p, 16 * MS));
        assert_eq!(v.p_drop, 2 << 24);
        // Empty 2 ms later: too soon. 6 ms later: 2/256 − 1/4096 = 31/4096.
        assert!(!v.queue_empty(&p, 18 * MS));
        assert_eq!(v.p_drop, 2 << 24);
        assert!(!v.queue_empty(&p, 22 * MS));
        assert_eq!(v.p_drop, (2 << 24) - (1 << 20));
        // Saturation at 1.0 (u32::MAX).
        let mut w = CobaltVars {
            p_drop: u32::MAX - 5,
            ..Default::default()
        };
        w.queue_full(&p, 10 * MS);
        assert_eq!(w.p_drop, u32::MAX);
    }

    /// BLUE drops even an ECT packet (no ECN), while CoDel marks it: with p_drop = 1/256 a
    /// draw below 2²⁴ drops, a draw at 2²⁴ passes; CoDel's own mark at its due time stands.
    #[test]
    fn blue_drops_regardless_of_ecn_while_codel_marks() {
        let p = params();
        let mut v = CobaltVars::default();
        v.queue_full(&p, 10 * MS); // p_drop = 2^24, dropping, count 1, drop_next = 10 ms
        assert_eq!(
            v.should_drop(&p, 11 * MS, MS, true, 0, || (1 << 24) - 1),
            Signal::Drop
        );
        assert_eq!(
            v.should_drop(&p, 12 * MS, MS, true, 0, || 1 << 24),
            Signal::Pass
        );
        // A Not-ECT packet with low sojourn: dropped by BLUE alone.
        assert_eq!(v.should_drop(&p, 13 * MS, MS, false, 0, || 0), Signal::Drop);
        // CoDel: sojourn 10 ms from 20 ms; count is 1 (decayed? no: drop_next was pushed to
        // now each pass), so the first mark comes 100 ms after entering the dropping state.
        let mut w = CobaltVars {
            p_drop: 1 << 24,
            ..Default::default()
        };
        let mut marks = 0;
        let mut drops = 0;
        for ms in 0..=100u64 {
            match w.should_drop(&p, ms * MS, 10 * MS, true, 0, || u32::MAX) {
                Signal::Mark => marks += 1,
                Signal::Drop => drops += 1,
                Signal::Pass => {},
            }
        }
        assert_eq!((marks, drops), (1, 0));
        assert_eq!(
            w.should_drop(&p, 101 * MS, 10 * MS, true, 0, || 0),
            Signal::Drop,
            "BLUE's draw below p_drop drops an ECT packet"
        );
    }

    /// The MTU floor: with mtu_time 2 ms, a 6 ms sojourn (> target 5 ms but < 4·2 ms) does
    /// not count as above target.
    #[test]
    fn mtu_floor_on_target() {
        let p = CobaltParams {
            mtu_time: 2 * MS,
            ..params()
        };
        let mut v = CobaltVars::default();
        v.should_drop(&p, 0, 6 * MS, true, 0, || 0);
        assert!(!v.dropping);
        v.should_drop(&p, MS, 9 * MS, true, 0, || 0);
        assert!(v.dropping);
    }
}
