//! LEDBAT, the less-than-best-effort congestion control of RFC 6817, as a controller of the
//! Linux-style endpoint's window (`congestion_control = "ledbat"`, preset `linux-ledbat`).
//!
//! The algorithm (RFC 6817 §2.4.2, its pseudo-code):
//!
//! - each acknowledgement carries a one-way delay sample (the receiver's clock at arrival
//!   minus the sender's timestamp in the data segment);
//! - the base delay is the minimum over `BASE_HISTORY` = 10 buckets, one per minute of the
//!   sender's clock (`update_base_delay`: a new bucket when the minute changes, else the
//!   last bucket keeps the minimum);
//! - the current delay is `FILTER` over the last `CURRENT_FILTER` samples
//!   (`update_current_delay`); FILTER is the MIN filter, RFC 6817's suggestion and both
//!   references' choice;
//! - queuing_delay = current − base; off_target = (TARGET − queuing_delay) / TARGET;
//! - cwnd += GAIN · off_target · bytes_newly_acked · MSS / cwnd, then
//!   cwnd ≤ flightsize + ALLOWED_INCREASE · MSS and cwnd ≥ MIN_CWND · MSS;
//! - on loss, at most once per RTT, cwnd = min(cwnd, max(cwnd/2, MIN_CWND · MSS)): the Linux
//!   framework's reduction with ssthresh = max(cwnd/2, 2) segments (`tcp/cong.rs`), one per
//!   recovery episode.
//!
//! Parameters: TARGET = 100 ms (RFC 6817 §2.5: TARGET MUST NOT exceed 100 ms; RFC 7928 §5.4
//! asks for it), GAIN = 1 (§2.5: MUST be 1 or less), BASE_HISTORY = 10 (§2.5, RECOMMENDED),
//! ALLOWED_INCREASE = 1 and MIN_CWND = 2 (§2.5: SHOULD be 1 and 2). CURRENT_FILTER = 4: RFC
//! 6817 leaves its length open (a few samples, under one RTT's worth); 4 is the default of
//! Linux's out-of-tree module (silviov/TCP-LEDBAT `src/tcp_ledbat.c`, commit 8f54877,
//! `noise_filter_len = 4`); libutp uses 3 (`utp_internal.cpp`, commit 2b364cb,
//! `CUR_DELAY_SIZE`).
//!
//! Slow start: RFC 6817's pseudo-code has none; both references make it optional (tcp_ledbat
//! `do_ss`, off by default; libutp always). This follows libutp (`apply_ccontrol`): Linux's
//! slow start runs from the initial window and ends, with ssthresh = cwnd, once the queuing
//! delay exceeds 0.9·TARGET (or at the first loss, as Linux's).
//!
//! The delay measurement (a first-principles choice, docs/tcp.md): the simulator's clocks are
//! exact and shared, so a sample has no clock offset or skew (libutp's and tcp_ledbat's skew
//! corrections have nothing to correct, and are left out). As libutp does (`reply_micro`: the
//! delay of the last packet the peer received, carried on each of its packets), the receiver
//! measures the forward one-way delay of each data segment at its arrival and reports the last
//! one on each segment it sends; the ACK path's delay does not enter (tcp_ledbat's TSval −
//! TSecr would add the receiver's delayed-ACK hold time; this does not).

use crate::units::{Time, MS};

/// TARGET: 100 ms (RFC 6817 §2.5: at most 100 ms; RFC 7928 §5.4).
pub const TARGET: Time = 100 * MS;
/// GAIN = 1, as a ratio (RFC 6817 §2.5).
pub const GAIN_NUM: u64 = 1;
pub const GAIN_DEN: u64 = 1;
/// BASE_HISTORY: minute buckets of the base delay (RFC 6817 §2.5).
pub const BASE_HISTORY: usize = 10;
/// CURRENT_FILTER: samples the MIN filter spans (tcp_ledbat's `noise_filter_len`).
pub const CURRENT_FILTER: usize = 4;
/// ALLOWED_INCREASE (segments) and MIN_CWND (segments) (RFC 6817 §2.5).
pub const ALLOWED_INCREASE: u64 = 1;
pub const MIN_CWND: u64 = 2;
/// libutp's slow-start exit: queuing delay above 9/10 of TARGET (`our_delay > target*0.9`).
pub const SLOW_START_EXIT: Time = TARGET / 10 * 9;
/// The base-delay bucket length: one minute of the sender's clock.
const MINUTE: Time = 60_000 * MS;

/// The sample a segment reports when its sender has measured none yet.
pub const NO_SAMPLE: u64 = u64::MAX;

/// One LEDBAT endpoint's state: the sender's delay history and fractional window, and the
/// receiver's last measured one-way delay (to report on its next segment).
#[derive(Clone, Debug, PartialEq)]
pub struct Ledbat {
    /// Minimum delay of each of the last `BASE_HISTORY` minutes, oldest first.
    base: [Time; BASE_HISTORY],
    base_len: usize,
    /// The minute (now / 60 s) of the last bucket, if any sample was taken.
    last_minute: Option<Time>,
    /// The last `CURRENT_FILTER` samples, a ring (`cur_len` valid, next write at `cur_next`).
    cur: [Time; CURRENT_FILTER],
    cur_len: usize,
    cur_next: usize,
    /// cwnd in bytes, fractional (the endpoint's window is its whole segments).
    pub cwnd: f64,
    /// Receiver role: the one-way delay of the last data segment received (`NO_SAMPLE`).
    pub reply: u64,
}

impl Default for Ledbat {
    fn default() -> Self {
        Ledbat {
            base: [0; BASE_HISTORY],
            base_len: 0,
            last_minute: None,
            cur: [0; CURRENT_FILTER],
            cur_len: 0,
            cur_next: 0,
            cwnd: 0.0,
            reply: NO_SAMPLE,
        }
    }
}

impl Ledbat {
    /// A delay sample arrives at `now` (`update_base_delay`, `update_current_delay`).
    pub fn on_sample(&mut self, now: Time, delay: Time) {
        let minute = now / MINUTE;
        if self.last_minute != Some(minute) {
            self.last_minute = Some(minute);
            if self.base_len == BASE_HISTORY {
                self.base.copy_within(1.., 0);
                self.base_len -= 1;
            }
            self.base[self.base_len] = delay;
            self.base_len += 1;
        } else {
            let tail = &mut self.base[self.base_len - 1];
            *tail = (*tail).min(delay);
        }
        self.cur[self.cur_next] = delay;
        self.cur_next = (self.cur_next + 1) % CURRENT_FILTER;
        self.cur_len = (self.cur_len + 1).min(CURRENT_FILTER);
    }

    /// min(base_delays), None before the first sample.
    pub fn base_delay(&self) -> Option<Time> {
        self.base[..self.base_len].iter().copied().min()
    }

    /// FILTER(current_delays): the MIN filter.
    pub fn current_delay(&self) -> Option<Time> {
        self.cur[..self.cur_len].iter().copied().min()
    }

    /// current − base: never negative, since every sample the filter holds also went into
    /// a bucket the base is the minimum of.
    pub fn queuing_delay(&self) -> Option<Time> {
        Some(self.current_delay()?.saturating_sub(self.base_delay()?))
    }

    /// The window update for `newly_acked` bytes acknowledged with `flightsize` bytes in
    /// flight before the ACK (RFC 6817 §2.4.2, `on acknowledgement`); `cwnd` is the
    /// endpoint's window in bytes, which a reduction may have lowered since the last update
    /// (then it replaces the fractional one). Returns the new window in bytes; none before a
    /// delay sample (tcp_ledbat: no update without a valid one-way delay).
    pub fn on_ack(&mut self, cwnd: u64, newly_acked: u64, flightsize: u64, mss: u64) -> u64 {
        if self.cwnd.floor() as u64 / mss != cwnd / mss {
            self.cwnd = cwnd as f64;
        }
        let Some(q) = self.queuing_delay() else {
            return cwnd;
        };
        // off_target in (−∞, 1]; GAIN · off_target · bytes_newly_acked · MSS / cwnd.
        let off_target = (TARGET as f64 - q as f64) / TARGET as f64;
        let gain = GAIN_NUM as f64 / GAIN_DEN as f64;
        let w0 = self.cwnd.max(1.0);
        let mut w = w0 + gain * off_target * newly_acked as f64 * mss as f64 / w0;
        w = w.min((flightsize + ALLOWED_INCREASE * mss) as f64);
        w = w.max((MIN_CWND * mss) as f64);
        self.cwnd = w;
        w as u64
    }

    /// Slow start ends (libutp's exit) once the queuing delay exceeds 0.9·TARGET.
    pub fn ends_slow_start(&self) -> bool {
        self.queuing_delay().is_some_and(|q| q > SLOW_START_EXIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Base delay: one bucket per minute, the minimum within it, at most 10 buckets, the
    /// minimum over them; the filter: the least of the last 4 samples.
    #[test]
    fn base_buckets_and_filter() {
        let mut l = Ledbat::default();
        assert_eq!(l.queuing_delay(), None);
        l.on_sample(0, 50 * MS);
        l.on_sample(MS, 40 * MS);
        l.on_sample(2 * MS, 70 * MS);
        assert_eq!(l.base_delay(), Some(40 * MS));
        assert_eq!(l.current_delay(), Some(40 * MS));
        l.on_sample(3 * MS, 80 * MS);
        l.on_sample(4 * MS, 90 * MS);
        // Last four: 40, 70, 80, 90 → 40; one more pushes 40 out.
        assert_eq!(l.current_delay(), Some(40 * MS));
        l.on_sample(5 * MS, 60 * MS);
        assert_eq!(l.current_delay(), Some(60 * MS));
        assert_eq!(l.queuing_delay(), Some(20 * MS));
        // Minutes 1..=9 (each one sample of 45 ms + k) fill buckets 2..=10: the first,
        // 40 ms, still counts; minute 10 pushes it out, leaving minute 1's 46 ms.
        for k in 1..=9u64 {
            l.on_sample(k * MINUTE, 45 * MS + k * MS);
        }
        assert_eq!(l.base_len, BASE_HISTORY);
        assert_eq!(l.base_delay(), Some(40 * MS));
        l.on_sample(10 * MINUTE, 100 * MS);
        assert_eq!(l.base_delay(), Some(46 * MS));
        // Within a minute the bucket keeps its least: minute 10 holds 100 then 47.
        l.on_sample(10 * MINUTE + 5 * MS, 47 * MS);
        assert_eq!(l.base[BASE_HISTORY - 1], 47 * MS);
    }

    /// The window update by hand: cwnd 10 000 B, MSS 1000 B.
    #[test]
    fn window_growth_and_decrease() {
        let mut l = Ledbat::default();
        // No sample yet: no change.
        assert_eq!(l.on_ack(10_000, 2000, 10_000, MSS), 10_000);
        l.on_sample(0, 40 * MS); // base 40 ms, queuing 0: off_target 1
                                 // cwnd += 1 · 2000 · 1000 / 10 000 = 200 B.
        assert_eq!(l.on_ack(10_000, 2000, 10_000, MSS), 10_200);
        assert!((l.cwnd - 10_200.0).abs() < 1e-9);
        // Queuing 50 ms: off_target 0.5: += 0.5 · 1000 · 1000 / 10 200 = 49.0196 B.
        for k in 1..=4 {
            l.on_sample(k * MS, 90 * MS);
        }
        assert_eq!(l.queuing_delay(), Some(50 * MS));
        let w = l.on_ack(10_200, 1000, 10_200, MSS);
        assert!((l.cwnd - (10_200.0 + 500_000.0 / 10_200.0)).abs() < 1e-9);
        assert_eq!(w, 10_249);
        // Queuing 300 ms: off_target −2: −= 2 · 4000 · 1000 / 10 249.02 = 780.56 B.
        for k in 5..=8 {
            l.on_sample(k * MS, 340 * MS);
        }
        let before = l.cwnd;
        l.on_ack(w, 4000, 12_000, MSS);
        assert!((l.cwnd - (before - 2.0 * 4_000_000.0 / before)).abs() < 1e-9);
        // Far above target: floored at MIN_CWND · MSS.
        assert_eq!(l.on_ack(3000, 20_000, 20_000, MSS), 2 * MSS);
        // Queuing at exactly TARGET: no change.
        for k in 9..=12 {
            l.on_sample(k * MS, 140 * MS);
        }
        assert_eq!(l.queuing_delay(), Some(TARGET));
        assert_eq!(l.on_ack(2000, 1000, 2000, MSS), 2000);
    }

    /// ALLOWED_INCREASE caps the window at flightsize + 1 MSS (an application-limited sender
    /// does not grow), and a reduction outside (Linux's recovery) replaces the fractional
    /// window.
    #[test]
    fn allowed_increase_and_outside_reduction() {
        let mut l = Ledbat::default();
        l.on_sample(0, 10 * MS);
        // Only 4000 B in flight of a 10 000 B window: cwnd ≤ 5000 B.
        assert_eq!(l.on_ack(10_000, 1000, 4000, MSS), 5000);
        // The endpoint halved the window to 2 segments meanwhile: start from 2000 B.
        l.cwnd = 20_500.0;
        assert_eq!(l.on_ack(2000, 1000, 2000, MSS), 2500);
    }

    #[test]
    fn slow_start_exit_at_nine_tenths_of_target() {
        let mut l = Ledbat::default();
        l.on_sample(0, 10 * MS);
        assert!(!l.ends_slow_start());
        for k in 1..=4 {
            l.on_sample(k, 10 * MS + 90 * MS);
        }
        assert!(!l.ends_slow_start(), "90 ms is not above 0.9·TARGET");
        for k in 5..=8 {
            l.on_sample(k, 10 * MS + 90 * MS + 1);
        }
        assert!(l.ends_slow_start());
    }
}
