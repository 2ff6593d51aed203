//! Round-trip-time estimation and the retransmission timeout (Jacobson/Karels, RFC 6298),
//! in the integer tick arithmetic of the BSD and ns-2 stacks.
//!
//! State is kept as in 4.4BSD `tcp_var.h`: `srtt8` = 8·SRTT and `rttvar4` = 4·RTTVAR, both in
//! ticks, so that `rexmtval() = srtt8/8 + rttvar4 = SRTT + 4·RTTVAR` (RFC 6298 (2.3)).

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
        }
    }

    /// Sets the phase of the tick clock (a new connection's, before any timing).
    pub fn set_phase(&mut self, phase: Time) {
        self.phase = phase;
    }

    /// Smoothed RTT in seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        self.srtt8 as f64 / 8.0 * self.tick as f64 * 1e-9
    }

    /// The RTT sample, in ticks, of a segment timed from `start` and acknowledged at `now`.
    /// BSD counts slow-timer ticks from 1 (`t_rtt`); ns-2 counts tick boundaries crossed on a
    /// free-running clock, at least 1.
    pub fn sample_ticks(&self, model: TimerModel, start: Time, now: Time) -> i64 {
        let crossings = ((now + self.phase) / self.tick - (start + self.phase) / self.tick) as i64;
        match model {
            TimerModel::Bsd => crossings + 1,
            TimerModel::Ns2 => crossings.max(1),
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

    /// SRTT + 4·RTTVAR in ticks (`TCP_REXMTVAL`).
    fn rexmtval_ticks(&self) -> i64 {
        (self.srtt8 >> 3) + self.rttvar4
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

    /// A timeout: advance the backoff. BSD (`tcp_timers`, TCPT_REXMT) sets
    /// `t_rxtcur = TCP_REXMTVAL · backoff[t_rxtshift]` clamped to [t_rttmin, TCPTV_REXMTMAX]
    /// (4.4BSD: the first SYN timer was "A + 2D", the later ones use SRTT + 4·RTTVAR, twice
    /// that); after the 4th consecutive timeout it folds SRTT into RTTVAR and forgets SRTT, so
    /// that the next sample re-seeds the estimator (`t_rxtshift > TCP_MAXRXTSHIFT / 4`; ns-2
    /// does the same for backoff > 8). The fold keeps SRTT + 4·RTTVAR unchanged.
    pub fn on_timeout(&mut self, cfg: &TcpConfig, syn_sent: bool, max_shift_before_reset: u32) {
        self.shift += 1;
        let mult = Self::multiplier(Self::table(cfg, syn_sent), self.shift) as i64;
        self.rxtcur_ticks = (self.rexmtval_ticks() * mult).clamp(self.min_ticks, self.max_ticks);
        if self.shift > max_shift_before_reset && self.srtt8 != 0 {
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
        }
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
}
