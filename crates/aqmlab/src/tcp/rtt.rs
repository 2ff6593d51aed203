//! Round-trip-time estimation and the retransmission timeout (Jacobson/Karels, RFC 6298),
//! in the integer tick arithmetic of the BSD and ns-2 stacks.
//!
//! State is kept as in 4.4BSD `tcp_var.h`: `srtt8` = 8·SRTT and `rttvar4` = 4·RTTVAR, both in
//! ticks, so that `rexmtval() = srtt8/8 + rttvar4 = SRTT + 4·RTTVAR` (RFC 6298 (2.3)).
//!
//! The Linux model (`timer_model = "linux"`) keeps Linux's estimator instead
//! (`tcp_rtt_estimator`, `tcp_set_rto` in `net/ipv4/tcp_input.c`, Linux 6.x), in microseconds:
//! `srtt8` = 8·SRTT, `rttvar4` = `mdev_us` (4·the mean deviation), and beside them the largest
//! `mdev_us` of the current window of data (`mdev_max_us`, never below the minimum RTO) and
//! `rttvar_us`, which follows the windows' maxima up at once and down by a quarter of the gap
//! per window. RTO = SRTT + `rttvar_us`, rounded up to whole jiffies: the minimum RTO is added
//! to SRTT rather than bounding the sum as in RFC 6298 (2.4). Timers expire on Linux's timer
//! wheel (`linux_timer_expiry`).

use super::config::{InitialTimer, TcpConfig, TimerModel};
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    /// 8·SRTT in ticks; 0 until the first sample.
    srtt8: i64,
    /// 4·RTTVAR in ticks.
    rttvar4: i64,
    /// ns-2's current RTO before backoff (`t_rtxcur_`), in ns.
    rtxcur: Time,
    /// Consecutive timeouts of the same segment (`t_rxtshift`); indexes the backoff table.
    pub shift: u32,
    tick: Time,
    /// Phase of this connection's tick clock (ns-2 `boot_time`; 0 for BSD's global clock).
    phase: Time,
    /// BSD's RTO bounds in ticks, [t_rttmin, TCPTV_REXMTMAX] (from the configuration).
    min_ticks: i64,
    max_ticks: i64,
    /// BSD `t_rxtcur` in ticks: what the retransmit timer is set to. Only an RTT sample
    /// (`tcp_xmit_timer`) and a timeout (`tcp_timers`, with the backoff of that moment)
    /// recompute it; every other restart of the timer reuses it.
    rxtcur_ticks: i64,
    /// The Linux model's state (module comment); None for the other models.
    linux: Option<LinuxRtt>,
}

/// Linux's estimator beside `srtt8` (µs) and `rttvar4` (`mdev_us`).
#[derive(Clone, Debug)]
struct LinuxRtt {
    mdev_max_us: i64,
    rttvar_us: i64,
    /// `rtt_seq`: the window of data whose end closes a `mdev_max_us` period.
    rtt_seq: u64,
    /// `icsk_rto` before backoff, in jiffies (`__tcp_set_rto`).
    base_ticks: i64,
    min_rto_us: i64,
}

/// Linux's timer wheel (`kernel/time/timer.c`, `calc_wheel_index` and `calc_index`): a timer
/// armed `n` jiffies ahead at `now` goes to the level whose range holds `n` (level 0 below 63
/// jiffies, level k below 63·8^k) and expires at the first multiple of that level's
/// granularity (8^k jiffies) strictly after jiffy `now/tick + n`: between n and n + 1 jiffies
/// later on level 0, up to 8^k later above. `tick` is one jiffy; jiffy 0 is time 0.
pub fn linux_timer_expiry(now: Time, n: u64, tick: Time) -> Time {
    const LVL_CLK_SHIFT: u32 = 3;
    const LVL_DEPTH: u32 = 9;
    let expires = now / tick + n;
    let mut lvl = 0;
    while lvl + 1 < LVL_DEPTH && n >= 63u64 << (lvl * LVL_CLK_SHIFT) {
        lvl += 1;
    }
    let shift = lvl * LVL_CLK_SHIFT;
    (((expires >> shift) + 1) << shift) * tick
}

impl RtoEstimator {
    /// A new connection's estimator. BSD (`tcp_newtcpcb`) starts with SRTT = 0 and
    /// RTTVAR such that the first timer, `(SRTT/4 + 4·RTTVAR)/2`, equals `initial_rto`
    /// (the "A + 2D" rule: 6 s for FreeBSD 2.x with RTTVAR = 3 s); FreeBSD 4.x seeds RTTVAR so
    /// that `SRTT + 4·RTTVAR` is `TCPTV_RTOBASE`; ns-2 uses `rtxcur_init_`.
    pub fn new(cfg: &TcpConfig, phase: Time) -> Self {
        let tick = cfg.tick();
        let init_ticks = (cfg.initial_rto() / tick) as i64;
        let rttvar4 = match cfg.initial_timer {
            InitialTimer::APlus2d => 2 * init_ticks,
            InitialTimer::Base => init_ticks,
        };
        let min_ticks = ((cfg.min_rto() / tick) as i64).max(1);
        let max_ticks = ((cfg.max_rto() / tick) as i64).max(1);
        // First timer: "A + 2D" = ((SRTT/4 + 4·RTTVAR)/2) (4.4BSD) or SRTT + 4·RTTVAR
        // (FreeBSD 4.x `t_rxtcur = TCPTV_RTOBASE`): `init_ticks` either way.
        let linux = (cfg.timer_model == TimerModel::Linux).then(|| LinuxRtt {
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            base_ticks: init_ticks,
            min_rto_us: (cfg.min_rto() / 1000) as i64,
        });
        RtoEstimator {
            srtt8: 0,
            rttvar4,
            rtxcur: cfg.initial_rto(),
            shift: 0,
            tick,
            phase,
            min_ticks,
            max_ticks,
            rxtcur_ticks: init_ticks.clamp(min_ticks, max_ticks),
            linux,
        }
    }

    /// Sets the phase of the tick clock (a new connection's, before any timing).
    pub fn set_phase(&mut self, phase: Time) {
        self.phase = phase;
    }

    /// Smoothed RTT in seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        if self.linux.is_some() {
            return self.srtt8 as f64 / 8.0 * 1e-6;
        }
        self.srtt8 as f64 / 8.0 * self.tick as f64 * 1e-9
    }

    /// RTTVAR in seconds, as `tcp_info` reports it (`mdev_us >> 2` for Linux; BSD's
    /// `t_rttvar` / 4 ticks otherwise); 0 before the first sample.
    pub fn rttvar_s(&self) -> f64 {
        if self.linux.is_some() {
            return self.rttvar4 as f64 / 4.0 * 1e-6;
        }
        self.rttvar4 as f64 / 4.0 * self.tick as f64 * 1e-9
    }

    /// The retransmission timeout the next arming of the timer would use, backoff included
    /// (`t_rxtcur`, `icsk_rto`, ns-2's `rtxcur_`·backoff as `timer_deadline` computes it), in
    /// ns; without the timer wheel's or the tick clock's rounding.
    pub fn rto_ns(&self, cfg: &TcpConfig, syn_sent: bool) -> Time {
        match cfg.timer_model {
            TimerModel::Bsd | TimerModel::Linux => self.rto_ticks() * self.tick,
            TimerModel::Ns2 => {
                let mult = Self::multiplier(Self::table(cfg, syn_sent), self.shift);
                (self.rtxcur.max(cfg.min_rto()) * mult)
                    .min(cfg.max_rto())
                    .max(2 * self.tick)
            },
        }
    }

    /// The Linux model's RTO before backoff, in µs (`(srtt_us >> 3) + rttvar_us`), for
    /// records and tests; None for the other models or before a sample.
    pub fn linux_rto_us(&self) -> Option<i64> {
        let l = self.linux.as_ref()?;
        (self.srtt8 != 0).then(|| (self.srtt8 >> 3) + l.rttvar_us)
    }

    /// Folds in an RTT sample of `mrtt_us` µs under the Linux model (`tcp_rtt_estimator`,
    /// then `tcp_set_rto`): `snd_una` after the ACK that gave it and `snd_nxt` mark the
    /// windows of `mdev_max_us`. An RTT decrease moves the deviation with an eighth of the
    /// usual gain (Linux's variant of the Eifel response). No-op for the other models.
    pub fn on_sample_linux(&mut self, mrtt_us: i64, snd_una: u64, snd_nxt: u64) {
        let Some(l) = self.linux.as_mut() else {
            return;
        };
        let mut m = mrtt_us.max(0);
        let mut srtt = self.srtt8;
        if srtt != 0 {
            m -= srtt >> 3;
            srtt += m;
            if m < 0 {
                m = -m - (self.rttvar4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.rttvar4 >> 2;
            }
            self.rttvar4 += m;
            if self.rttvar4 > l.mdev_max_us {
                l.mdev_max_us = self.rttvar4;
                l.rttvar_us = l.rttvar_us.max(l.mdev_max_us);
            }
            if snd_una > l.rtt_seq {
                if l.mdev_max_us < l.rttvar_us {
                    l.rttvar_us -= (l.rttvar_us - l.mdev_max_us) >> 2;
                }
                l.rtt_seq = snd_nxt;
                l.mdev_max_us = l.min_rto_us;
            }
        } else {
            srtt = m << 3;
            self.rttvar4 = m << 1;
            l.rttvar_us = self.rttvar4.max(l.min_rto_us);
            l.mdev_max_us = l.rttvar_us;
            l.rtt_seq = snd_nxt;
        }
        self.srtt8 = srtt.max(1);
        // usecs_to_jiffies rounds up; tcp_bound_rto caps at the maximum RTO.
        let tick_us = (self.tick / 1000).max(1) as i64;
        let rto_us = (self.srtt8 >> 3) + l.rttvar_us;
        l.base_ticks = ((rto_us + tick_us - 1) / tick_us).clamp(1, self.max_ticks);
        self.rtxcur = l.base_ticks as Time * self.tick;
        self.rxtcur_ticks = l.base_ticks;
    }

    /// The RTT sample, in ticks, of a segment timed from `start` and acknowledged at `now`.
    /// BSD counts slow-timer ticks from 1 (`t_rtt`); ns-2 counts tick boundaries crossed on a
    /// free-running clock, at least 1.
    pub fn sample_ticks(&self, model: TimerModel, start: Time, now: Time) -> i64 {
        let crossings = ((now + self.phase) / self.tick - (start + self.phase) / self.tick) as i64;
        match model {
            TimerModel::Bsd => crossings + 1,
            TimerModel::Ns2 | TimerModel::Linux => crossings.max(1),
        }
    }

    /// Folds in an RTT sample (`tcp_xmit_timer` in 4.4BSD, `rtt_update` in ns-2).
    /// RFC 6298 (2.2): first sample SRTT = R, RTTVAR = R/2; (2.3): RTTVAR ← ¾·RTTVAR + ¼·|SRTT − R|,
    /// SRTT ← ⅞·SRTT + ⅛·R, here in fixed point.
    pub fn on_sample(&mut self, model: TimerModel, rtt_ticks: i64) {
        if self.srtt8 != 0 {
            // BSD's t_rtt started at 1, so it subtracts that 1 back (tcp_input.c tcp_xmit_timer).
            let bias = if model == TimerModel::Bsd { 1 } else { 0 };
            let mut delta = rtt_ticks - bias - (self.srtt8 >> 3);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            delta = delta.abs() - (self.rttvar4 >> 2);
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = rtt_ticks << 3;
            self.rttvar4 = rtt_ticks << 1;
        }
        self.rtxcur = self.rexmtval_ticks() as Time * self.tick;
        // tcp_xmit_timer: TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL, t_rttmin, TCPTV_REXMTMAX).
        self.rxtcur_ticks = self.rexmtval_ticks().clamp(self.min_ticks, self.max_ticks);
    }

    /// SRTT + 4·RTTVAR in ticks (`TCP_REXMTVAL`); the Linux model's RTO before backoff.
    fn rexmtval_ticks(&self) -> i64 {
        match &self.linux {
            Some(l) => l.base_ticks,
            None => (self.srtt8 >> 3) + self.rttvar4,
        }
    }

    fn multiplier(table: &[u32], shift: u32) -> u64 {
        let i = (shift as usize).min(table.len() - 1);
        table[i] as u64
    }

    /// The backoff table in force: `syn_backoff` while our SYN is unanswered (FreeBSD
    /// `tcp_timer_rexmt` uses `tcp_syn_backoff` in SYN_SENT only), else `backoff`.
    fn table(cfg: &TcpConfig, syn_sent: bool) -> &[u32] {
        if syn_sent && !cfg.syn_backoff.is_empty() {
            &cfg.syn_backoff
        } else {
            &cfg.backoff
        }
    }

    /// The absolute time the retransmit timer fires if set at `now`. `syn_sent` selects the
    /// SYN backoff table (ns-2 model; the BSD model fixed its value at the last timeout).
    pub fn timer_deadline(&self, cfg: &TcpConfig, now: Time, syn_sent: bool) -> Time {
        match cfg.timer_model {
            TimerModel::Bsd => {
                // t_timer[TCPT_REXMT] = t_rxtcur: a tick counter decremented by the global slow
                // timer fires on the rxtcur-th boundary after it is set, between (rxtcur − 1)
                // and rxtcur ticks from now.
                (now / self.tick + self.rxtcur_ticks as u64) * self.tick
            },
            // `inet_csk_reset_xmit_timer` → `sk_reset_timer` on the timer wheel, icsk_rto
            // jiffies ahead (backoff included).
            TimerModel::Linux => linux_timer_expiry(now, self.rxtcur_ticks as u64, self.tick),
            TimerModel::Ns2 => {
                // tcp.cc set_rtx_timer (rfc2988_): max(rtxcur, minrto)·backoff, capped at maxrto,
                // at least two ticks.
                let mult = Self::multiplier(Self::table(cfg, syn_sent), self.shift);
                let v = (self.rtxcur.max(cfg.min_rto()) * mult)
                    .min(cfg.max_rto())
                    .max(2 * self.tick);
                now + v
            },
        }
    }

    /// Linux `tcp_rearm_rto` when the reorder or probe timer held the timer's slot: the
    /// retransmission timer for what is left of icsk_rto since the head of the retransmission
    /// queue was last sent (`tcp_rto_delta_us`, at least 1 µs), rounded up to jiffies
    /// (`usecs_to_jiffies`), on the timer wheel.
    pub fn linux_rearm_deadline(&self, now: Time, head_sent: Time) -> Time {
        let rto_us = self.rto_ticks() * self.tick / 1_000;
        let left_us = (head_sent / 1_000 + rto_us)
            .saturating_sub(now / 1_000)
            .max(1);
        let jiffies = (left_us * 1_000).div_ceil(self.tick);
        linux_timer_expiry(now, jiffies, self.tick)
    }

    /// A timeout: advance the backoff. BSD (`tcp_timers`, TCPT_REXMT) sets
    /// `t_rxtcur = TCP_REXMTVAL · backoff[t_rxtshift]` clamped to [t_rttmin, TCPTV_REXMTMAX]
    /// (4.4BSD: the first SYN timer was "A + 2D", the later ones use SRTT + 4·RTTVAR, twice
    /// that); after the 4th consecutive timeout it folds SRTT into RTTVAR and forgets SRTT, so
    /// that the next sample re-seeds the estimator (`t_rxtshift > TCP_MAXRXTSHIFT / 4`; ns-2
    /// does the same for backoff > 8). The fold keeps SRTT + 4·RTTVAR unchanged.
    pub fn on_timeout(&mut self, cfg: &TcpConfig, syn_sent: bool, max_shift_before_reset: u32) {
        self.shift += 1;
        let mult = Self::multiplier(Self::table(cfg, syn_sent), self.shift) as i64;
        // Linux doubles icsk_rto up to the maximum (`tcp_retransmit_timer`; its minimum RTO
        // is already inside the base) and never forgets SRTT.
        let min = if self.linux.is_some() {
            1
        } else {
            self.min_ticks
        };
        self.rxtcur_ticks = (self.rexmtval_ticks() * mult).clamp(min, self.max_ticks);
        if self.linux.is_some() {
            return;
        }
        if self.shift > max_shift_before_reset && self.srtt8 != 0 {
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
        }
    }

    /// The retransmit timer's current value in ticks, backoff included (`icsk_rto`).
    pub fn rto_ticks(&self) -> u64 {
        self.rxtcur_ticks.max(1) as u64
    }

    pub fn reset_backoff(&mut self) {
        self.shift = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, SEC};

    #[test]
    fn bsd_syn_schedule_is_6_then_24_seconds() {
        let cfg = TcpConfig::freebsd_228();
        let mut r = RtoEstimator::new(&cfg, 0);
        // SYN sent at t = 0: fires at the 12th 500 ms boundary = 6 s.
        assert_eq!(r.timer_deadline(&cfg, 0, true), 6 * SEC);
        r.on_timeout(&cfg, true, 3);
        // First SYN timeout: (SRTT + 4·RTTVAR)·2 = 12 s · 2 = 24 s after the 6 s tick.
        assert_eq!(r.timer_deadline(&cfg, 6 * SEC, true), 30 * SEC);
    }

    #[test]
    fn bsd_timer_fires_on_a_tick_boundary() {
        let cfg = TcpConfig::freebsd_228();
        let r = RtoEstimator::new(&cfg, 0);
        // Set at 0.7 s: 12 ticks later on the global 500 ms grid = 6.5 s (5.8 s after setting).
        assert_eq!(r.timer_deadline(&cfg, 700 * MS, true), 6_500 * MS);
    }

    #[test]
    fn rfc6298_first_and_second_sample_ns2() {
        let mut cfg = TcpConfig::ns2_fulltcp();
        cfg.min_rto_s = 0.01;
        let mut r = RtoEstimator::new(&cfg, 0);
        // 10 ms ticks. First sample R = 10 ticks (100 ms): SRTT = 100 ms, RTTVAR = 50 ms,
        // RTO = 100 + 4·50 = 300 ms.
        r.on_sample(TimerModel::Ns2, 10);
        assert_eq!(r.timer_deadline(&cfg, 0, false), 300 * MS);
        // Second sample R' = 20 ticks: RTTVAR = ¾·5 + ¼·|10 − 20| = 6.25 ticks (fixed point:
        // rttvar4 = 20 + (10 − 5) = 25), SRTT = 10 + 10/8 = 11.25 (srtt8 = 90) → RTO =
        // 11 + 25 = 36 ticks.
        r.on_sample(TimerModel::Ns2, 20);
        assert_eq!(r.timer_deadline(&cfg, 0, false), 360 * MS);
    }

    #[test]
    fn min_rto_and_backoff_cap() {
        let cfg = TcpConfig::ns2_fulltcp(); // min 1 s, max 60 s
        let mut r = RtoEstimator::new(&cfg, 0);
        r.on_sample(TimerModel::Ns2, 10); // RTO 300 ms → raised to the 1 s minimum
        assert_eq!(r.timer_deadline(&cfg, 0, false), SEC);
        let mut expect = Vec::new();
        for _ in 0..8 {
            r.on_timeout(&cfg, false, 64);
            expect.push(r.timer_deadline(&cfg, 0, false) / SEC);
        }
        // Doubling 2, 4, ..., 64 capped at max_rto 60 s.
        assert_eq!(expect, vec![2, 4, 8, 16, 32, 60, 60, 60]);
    }

    #[test]
    fn bsd_sample_counts_ticks_from_one() {
        let cfg = TcpConfig::freebsd_228();
        let r = RtoEstimator::new(&cfg, 0);
        // Sent at 0.1 s, acked at 0.2 s: no boundary crossed, t_rtt = 1.
        assert_eq!(r.sample_ticks(TimerModel::Bsd, 100 * MS, 200 * MS), 1);
        assert_eq!(r.sample_ticks(TimerModel::Bsd, 400 * MS, 600 * MS), 2);
        assert_eq!(r.sample_ticks(TimerModel::Ns2, 100 * MS, 200 * MS), 1);
    }

    fn linux_cfg() -> TcpConfig {
        TcpConfig {
            timer_model: TimerModel::Linux,
            tick_ms: 4.0,
            ..TcpConfig::linux_reno()
        }
    }

    /// Values the real kernel reported (`TCP_INFO` on the testbed, HZ = 250): a first sample
    /// of 40 274 µs gave `rto` 244 000 µs (40 274 + 200 000 rounded up to 61 jiffies), and
    /// an SRTT of 153 789 µs with a small deviation gave 356 000 µs (89 jiffies).
    #[test]
    fn linux_rto_is_srtt_plus_the_minimum_in_whole_jiffies() {
        let cfg = linux_cfg();
        let mut r = RtoEstimator::new(&cfg, 0);
        r.on_sample_linux(40_274, 1, 15_000);
        assert_eq!(r.linux_rto_us(), Some(240_274));
        assert_eq!(r.rto_ticks(), 61);
        // A steady RTT of 153 789 µs: mdev decays, rttvar_us falls to the 200 ms floor.
        let mut una = 1;
        for _ in 0..400 {
            una += 1448;
            r.on_sample_linux(153_789, una, una + 14_480);
        }
        assert_eq!(r.rto_ticks(), 89);
        assert_eq!(r.rto_ticks() * 4_000, 356_000);
    }

    /// `tcp_rearm_rto` after the reorder timer, by hand (HZ 250): icsk_rto 61 jiffies
    /// (244 ms); the head was sent at 100 ms and it is 240 ms: 104 ms are left, 26 jiffies
    /// after jiffy 60, so the timer wheel fires at jiffy 87 (348 ms). With the head sent
    /// more than icsk_rto ago (at 0, now 300 ms), at least 1 µs: one jiffy after jiffy 75,
    /// fired at jiffy 77 (308 ms).
    #[test]
    fn linux_rearm_after_the_reorder_timer_keeps_what_is_left() {
        let cfg = linux_cfg();
        let mut r = RtoEstimator::new(&cfg, 0);
        r.on_sample_linux(40_274, 1, 15_000);
        assert_eq!(r.rto_ticks(), 61);
        let ms = 1_000_000;
        assert_eq!(r.linux_rearm_deadline(240 * ms, 100 * ms), 348 * ms);
        assert_eq!(r.linux_rearm_deadline(300 * ms, 0), 308 * ms);
    }

    /// `tcp_rtt_estimator` by hand: first sample 100 ms → srtt8 = 800 000, mdev = 200 000,
    /// rttvar = max(200 000, 200 000); a second sample of 60 ms in the same window: error
    /// −40 000 → srtt8 = 760 000; |error| − mdev/4 = −10 000 < 0, so mdev += −10 000 (the
    /// eighth-gain rule applies only to a positive remainder) → 190 000; a third of 20 ms:
    /// error 20 000 − 95 000 = −75 000 → srtt8 = 685 000; 75 000 − 47 500 = 27 500 > 0 → /8
    /// = 3 437 → mdev = 193 437.
    #[test]
    fn linux_estimator_by_hand() {
        let cfg = linux_cfg();
        let mut r = RtoEstimator::new(&cfg, 0);
        r.on_sample_linux(100_000, 1, 10_000);
        assert_eq!((r.srtt8, r.rttvar4), (800_000, 200_000));
        r.on_sample_linux(60_000, 2, 10_000);
        assert_eq!((r.srtt8, r.rttvar4), (760_000, 190_000));
        r.on_sample_linux(20_000, 3, 10_000);
        assert_eq!((r.srtt8, r.rttvar4), (685_000, 193_437));
        // Still the first window (snd_una ≤ 10 000): rttvar_us keeps its 200 000.
        assert_eq!(r.linux_rto_us(), Some(685_000 / 8 + 200_000));
        // A timeout doubles the jiffies; the next sample clears the backoff's effect.
        let base = r.rto_ticks();
        r.on_timeout(&cfg, false, 3);
        assert_eq!(r.rto_ticks(), 2 * base);
    }

    /// The timer wheel: 10 jiffies ahead is level 0 (fires on jiffy now + 11); 89 jiffies is
    /// level 1, rounded up to the next multiple of 8 after the nominal jiffy; 250 jiffies
    /// (1 s at HZ = 250) also level 1; 600 is level 2 (granularity 64).
    #[test]
    fn linux_timer_wheel_rounds_up_by_level() {
        let tick = 4 * MS;
        assert_eq!(linux_timer_expiry(0, 10, tick), 11 * tick);
        assert_eq!(linux_timer_expiry(5 * tick + 1, 10, tick), 16 * tick);
        assert_eq!(linux_timer_expiry(0, 62, tick), 63 * tick);
        assert_eq!(linux_timer_expiry(0, 63, tick), 64 * tick);
        assert_eq!(linux_timer_expiry(3 * tick, 89, tick), 96 * tick);
        assert_eq!(linux_timer_expiry(0, 250, tick), 256 * tick);
        assert_eq!(linux_timer_expiry(0, 600, tick), 640 * tick);
        assert_eq!(linux_timer_expiry(100 * tick, 600, tick), 704 * tick);
    }
}
