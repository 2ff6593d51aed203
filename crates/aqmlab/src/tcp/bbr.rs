//! BBR v1 as Linux 6.x has it (`net/ipv4/tcp_bbr.c`), in Linux's fixed-point arithmetic:
//! bandwidths in segments per µs scaled by 2^24 (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`).
//!
//! The model: the bottleneck bandwidth is the max of the delivery-rate samples
//! (`tcp/rate.rs`) over the last 10 round trips (`bbr_bw_rtts`, a `Minmax` keyed by the
//! round count), the min RTT the min over 10 s (`bbr_min_rtt_win_sec`). The pacing rate is
//! gain × bandwidth (less a 1 % margin), cwnd gain × BDP plus 3 × the TSO goal
//! (`bbr_quantization_budget`) plus the ACK-aggregation allowance. Modes (`bbr_update_gains`):
//!
//! - STARTUP: pacing and cwnd gain 2/ln 2 (`bbr_high_gain` = 739/256), until three rounds
//!   in a row (not application-limited) grow the max bandwidth by less than 25 %
//!   (`bbr_check_full_bw_reached`);
//! - DRAIN: pacing gain ln 2 / 2 (`bbr_drain_gain` = 88/256) until what is in flight (at
//!   the next departure time) is at most one BDP (`bbr_check_drain`);
//! - PROBE_BW: the 8-phase cycle 5/4, 3/4, 1 × 6 of pacing gain, cwnd gain 2; a phase lasts
//!   a min RTT, the 5/4 one also until in flight reaches 5/4 BDP (or a loss), the 3/4 one
//!   ends early once in flight is down to a BDP (`bbr_is_next_cycle_phase`). It starts at a
//!   random phase other than 3/4 (`bbr_reset_probe_bw_mode`), drawn here from the
//!   connection's seeded stream (`Bbr::new`'s `seed`);
//! - PROBE_RTT: when the min RTT is 10 s old, cwnd 4 for max(200 ms, one round) once in
//!   flight is down to 4, then back to the previous mode with the saved cwnd.
//!
//! Losses: BBR leaves cwnd to `bbr_set_cwnd` even in recovery (Linux's `tcp_cong_control`
//! calls `cong_control` and returns: no PRR): the lost segments come off cwnd, the first
//! round of recovery conserves packets (cwnd = in flight + ACKed), later rounds grow it by
//! what is ACKed, and the cwnd saved at the start is restored at the end
//! (`bbr_set_cwnd_to_recover_or_restore`). A timeout (`bbr_set_state(TCP_CA_Loss)`) resets
//! full-bandwidth detection's reference and counts as the end of a round. Long-term
//! bandwidth (`bbr_lt_bw_sampling`): two consecutive intervals of 4–16 rounds with ≥ 20 %
//! loss and rates within 1/8 (or 4 kbit/s) of each other mean a policer: BBR then paces at
//! their average for 48 rounds.

use super::rate::{Minmax, RateEstimator, RateSample};
use crate::units::Time;

pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// `CYCLE_LEN`: phases of the PROBE_BW gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: the max-bandwidth filter's window, round trips.
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// `bbr_min_rtt_win_sec`.
pub const MIN_RTT_WIN_SEC: u64 = 10;
/// `bbr_probe_rtt_mode_ms`.
pub const PROBE_RTT_MODE_MS: u64 = 200;
/// `bbr_min_tso_rate` (bit/s): below it the TSO goal is 1 segment.
pub const MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent`: pace 1 % below the estimated rate.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain` = 2/ln 2 ≈ 2.885 (+1 rounds it up): STARTUP.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain`: the inverse of 2.885.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: PROBE_BW's cwnd gain.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain`: the PROBE_BW cycle.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`: the random start phase is drawn from 7 values.
pub const CYCLE_RAND: u64 = 7;
/// `bbr_cwnd_min_target`.
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`: 25 % growth.
pub const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without it.
pub const FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts`, `bbr_lt_loss_thresh` (in 1/256), `bbr_lt_bw_ratio` (1/256),
/// `bbr_lt_bw_diff` (bytes/s), `bbr_lt_bw_max_rtts`.
pub const LT_INTVL_MIN_RTTS: u32 = 4;
pub const LT_LOSS_THRESH: u64 = 50;
pub const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
pub const LT_BW_DIFF: u64 = 4000 / 8;
pub const LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_extra_acked_gain`, `bbr_extra_acked_win_rtts`, `bbr_ack_epoch_acked_reset_thresh`,
/// `bbr_extra_acked_max_us`.
pub const EXTRA_ACKED_GAIN: u64 = BBR_UNIT as u64;
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
pub const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `TCP_INIT_CWND`, `TCP_INFINITE_SSTHRESH`.
pub const TCP_INIT_CWND: u32 = 10;
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// `sk_pacing_shift` (default 10: about 1 ms of data per TSO burst), and the GSO size cap
/// of `bbr_tso_segs_goal` (`GSO_MAX_SIZE − 1 − MAX_TCP_HEADER`, with a 320-byte
/// `MAX_TCP_HEADER`).
pub const PACING_SHIFT: u32 = 10;
pub const GSO_BYTES_CAP: u64 = 65_536 - 1 - 320;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Linux's `icsk_ca_state`, as far as BBR tells them apart (ordered as Linux's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Recovery = 3,
    Loss = 4,
}

/// What BBR reads of the connection at an ACK.
#[derive(Clone, Copy, Debug)]
pub struct BbrCtx {
    /// `tcp_mstamp` (µs stamp) and `tcp_jiffies32`, jiffies per second.
    pub now_us: u64,
    pub jiffies: u64,
    pub hz: u64,
    /// The clock and the pacer's next departure time (`tcp_clock_cache`, `tcp_wstamp_ns`).
    pub now_ns: Time,
    pub wstamp_ns: Time,
    /// `tcp_snd_cwnd`, `snd_cwnd_clamp` (segments).
    pub cwnd: u32,
    pub clamp: u32,
    /// `tcp_packets_in_flight` after the ACK.
    pub in_flight: u32,
    pub state: CaState,
}

/// BBR's per-connection state (Linux `struct bbr`), plus the pacing rate it sets and the
/// ssthresh it keeps.
#[derive(Clone, Debug)]
pub struct Bbr {
    pub mss: u64,
    pub mode: Mode,
    pub min_rtt_us: u64,
    /// Jiffies.
    pub min_rtt_stamp: u64,
    pub probe_rtt_done_stamp: u64,
    /// Max bandwidth filter, keyed by `rtt_cnt`.
    pub bw: Minmax,
    pub rtt_cnt: u64,
    pub next_rtt_delivered: u64,
    pub cycle_mstamp: u64,
    pub prev_ca_state: CaState,
    pub packet_conservation: bool,
    pub round_start: bool,
    pub idle_restart: bool,
    pub probe_rtt_round_done: bool,
    pub lt_is_sampling: bool,
    pub lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u64,
    pub lt_last_delivered: u64,
    /// ms.
    pub lt_last_stamp: u64,
    pub lt_last_lost: u64,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub full_bw_reached: bool,
    pub full_bw_cnt: u32,
    pub cycle_idx: u32,
    pub has_seen_rtt: bool,
    pub prior_cwnd: u32,
    pub full_bw: u64,
    pub ack_epoch_mstamp: u64,
    pub ack_epoch_acked: u32,
    pub extra_acked_win_rtts: u32,
    pub extra_acked_win_idx: usize,
    pub extra_acked: [u32; 2],
    /// `sk_pacing_rate`, bytes per second.
    pub pacing_rate: u64,
    /// `snd_ssthresh` as BBR sets it (segments).
    pub ssthresh: u32,
    /// The random stream for the start phase of gain cycling (SplitMix64 state).
    rng: u64,
    /// Mode changes (µs stamp, new mode), for inspection: a handful per 10 s.
    pub log: Vec<(u64, Mode)>,
    /// Times PROBE_RTT was entered.
    pub probe_rtt_count: u32,
}

/// Linux's `after(a, b)` on 32-bit jiffies, here on 64-bit counts.
#[inline]
fn after(a: u64, b: u64) -> bool {
    a > b
}

impl Bbr {
    /// `bbr_init` when the connection is established: `min_rtt_us` is Linux's `tcp_min_rtt`
    /// (`u64::MAX`: none), `srtt_us8` its `srtt_us` (8 × SRTT, µs; 0: none), `cwnd` the
    /// initial window; `seed` seeds the stream of the gain cycle's start phase.
    pub fn new(
        mss: u64,
        cwnd: u32,
        min_rtt_us: u64,
        srtt_us8: u64,
        now_us: u64,
        jiffies: u64,
        seed: u64,
    ) -> Self {
        let mut bw = Minmax::default();
        bw.reset(0, 0);
        let mut b = Bbr {
            mss,
            mode: Mode::Startup,
            min_rtt_us,
            min_rtt_stamp: jiffies,
            probe_rtt_done_stamp: 0,
            bw,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: now_us,
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            extra_acked: [0, 0],
            pacing_rate: super::pacing::UNLIMITED,
            ssthresh: TCP_INFINITE_SSTHRESH,
            rng: seed ^ 0x6262_725f_6379_636c,
            log: vec![(now_us, Mode::Startup)],
            probe_rtt_count: 0,
        };
        // `bbr_reset_lt_bw_sampling` at delivered = lost = 0 and delivered_mstamp = 0.
        b.init_pacing_rate_from_rtt(cwnd, srtt_us8);
        b
    }

    fn set_mode(&mut self, mode: Mode, now_us: u64) {
        if self.mode != mode {
            self.mode = mode;
            self.log.push((now_us, mode));
        }
    }

    /// A uniform draw in `0..n` (Linux `get_random_u32_below`), from SplitMix64.
    fn random_below(&mut self, n: u64) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 32) * n) >> 32
    }

    /// `bbr_max_bw`.
    #[inline]
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term rate while policed, else the max filter.
    #[inline]
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// The bandwidth estimate in bytes per second (for inspection).
    pub fn bw_bytes_per_sec(&self) -> f64 {
        self.bw() as f64 * self.mss as f64 * 1e6 / BW_UNIT as f64
    }

    /// `bbr_extra_acked`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: `rate` (segments/µs << 24) × `gain` in bytes per second,
    /// 1 % under.
    pub fn rate_bytes_per_sec(&self, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * self.mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / SRTT (1 ms without an SRTT).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u32, srtt_us8: u64) {
        let rtt_us = if srtt_us8 > 0 {
            self.has_seen_rtt = true;
            (srtt_us8 >> 3).max(1)
        } else {
            1000
        };
        let bw = cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower before the pipe is full.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, cwnd: u32, srtt_us8: u64) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && srtt_us8 > 0 {
            self.init_pacing_rate_from_rtt(cwnd, srtt_us8);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal` without TSO autosizing by the driver: about 1 ms of data at the
    /// pacing rate (`sk_pacing_rate >> sk_pacing_shift`), at least `bbr_min_tso_segs` (1
    /// below 1.2 Mbit/s, else 2), at most 127.
    pub fn tso_segs_goal(&self) -> u32 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_BYTES_CAP);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        };
        ((bytes / self.mss) as u32).max(min_segs).min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending resumes with nothing in flight;
    /// `app_limited`: `tp->app_limited` is set. Returns a new cwnd if PROBE_RTT ends.
    pub fn on_tx_start(
        &mut self,
        app_limited: bool,
        now_us: u64,
        jiffies: u64,
        delivered_mstamp: u64,
        cwnd: u32,
    ) -> Option<u32> {
        if !app_limited {
            return None;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = now_us;
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => {
                let bw = self.bw();
                self.set_pacing_rate(bw, BBR_UNIT, cwnd, 0);
                None
            },
            Mode::ProbeRtt => self.check_probe_rtt_done(jiffies, now_us, delivered_mstamp, cwnd),
            _ => None,
        }
    }

    /// `bbr_bdp`: ⌈bw × min_rtt × gain⌉ segments (the initial window without an RTT).
    pub fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal());
        cwnd = (cwnd.saturating_add(1)) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in flight at the next departure time, less what the
    /// bottleneck delivers until then.
    fn packets_in_net_at_edt(&self, ctx: &BbrCtx, inflight_now: u32) -> u32 {
        let edt = ctx.wstamp_ns.max(ctx.now_ns);
        let interval_us = (edt - ctx.now_ns) / 1000;
        let delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal() as u64;
        }
        at_edt.saturating_sub(delivered) as u32
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) while conserving packets.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        rs: &RateSample,
        ctx: &BbrCtx,
        acked: u32,
        delivered: u64,
        cwnd: &mut u32,
    ) -> bool {
        let prev = self.prev_ca_state;
        let state = ctx.state;
        let mut w = ctx.cwnd;
        if rs.losses > 0 {
            w = (w as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation, from what is in flight.
            self.packet_conservation = true;
            self.next_rtt_delivered = delivered;
            w = ctx.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Recovery (or a timeout) is over: back to the cwnd saved when it began.
            w = w.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *cwnd = w.max(ctx.in_flight + acked);
            return true;
        }
        *cwnd = w;
        false
    }

    /// `bbr_set_cwnd`: returns the new cwnd.
    fn set_cwnd(
        &mut self,
        rs: &RateSample,
        ctx: &BbrCtx,
        acked: u32,
        bw: u64,
        gain: u32,
        delivered: u64,
    ) -> u32 {
        let mut cwnd = ctx.cwnd;
        if acked > 0 && !self.set_cwnd_to_recover_or_restore(rs, ctx, acked, delivered, &mut cwnd) {
            let mut target = self.bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(target);
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || delivered < TCP_INIT_CWND as u64 {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        cwnd = cwnd.min(ctx.clamp);
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample, ctx: &BbrCtx, delivered_mstamp: u64) -> bool {
        let full_length = delivered_mstamp.saturating_sub(self.cycle_mstamp) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(ctx, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, delivered_mstamp: u64) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = delivered_mstamp;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than the 3/4 one.
    fn reset_probe_bw_mode(&mut self, now_us: u64, delivered_mstamp: u64) {
        self.set_mode(Mode::ProbeBw, now_us);
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND) as u32;
        self.advance_cycle_phase(delivered_mstamp);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, now_us: u64, delivered_mstamp: u64) {
        if !self.full_bw_reached {
            self.set_mode(Mode::Startup, now_us);
        } else {
            self.reset_probe_bw_mode(now_us, delivered_mstamp);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, r: &RateEstimator) {
        self.lt_last_stamp = r.delivered_mstamp / 1000;
        self.lt_last_delivered = r.delivered;
        self.lt_last_lost = r.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, r: &RateEstimator) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(r);
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_bw_interval_done(&mut self, bw: u64, r: &RateEstimator) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // Two intervals alike: policed.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(r);
    }

    /// `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, rs: &RateSample, r: &RateEstimator, now_us: u64) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(r);
                    self.reset_probe_bw_mode(now_us, r.delivered_mstamp);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(r);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(r);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(r);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = r.lost - self.lt_last_lost;
        let delivered = r.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (r.delivered_mstamp / 1000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        if t as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(r);
            return;
        }
        let bw = delivered * BW_UNIT / (t as u64 * 1000);
        self.lt_bw_interval_done(bw, r);
    }

    /// `bbr_update_bw`.
    fn update_bw(&mut self, rs: &RateSample, r: &RateEstimator, now_us: u64) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = r.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, r, now_us);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &RateSample, r: &RateEstimator, cwnd: u32) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = r.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked as u64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = r.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64)
            .saturating_sub(expected)
            .min(cwnd as u64) as u32;
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, ctx: &BbrCtx, delivered_mstamp: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.set_mode(Mode::Drain, ctx.now_us);
            self.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(ctx, ctx.in_flight)
                <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(ctx.now_us, delivered_mstamp);
        }
    }

    /// `bbr_check_probe_rtt_done`: returns the restored cwnd if PROBE_RTT ends.
    fn check_probe_rtt_done(
        &mut self,
        jiffies: u64,
        now_us: u64,
        delivered_mstamp: u64,
        cwnd: u32,
    ) -> Option<u32> {
        if !(self.probe_rtt_done_stamp != 0 && after(jiffies, self.probe_rtt_done_stamp)) {
            return None;
        }
        self.min_rtt_stamp = jiffies;
        let w = cwnd.max(self.prior_cwnd);
        self.reset_mode(now_us, delivered_mstamp);
        Some(w)
    }

    /// `bbr_update_min_rtt`; may change cwnd (end of PROBE_RTT).
    fn update_min_rtt(
        &mut self,
        rs: &RateSample,
        ctx: &BbrCtx,
        r: &mut RateEstimator,
        cwnd: &mut u32,
    ) {
        let expired = after(ctx.jiffies, self.min_rtt_stamp + MIN_RTT_WIN_SEC * ctx.hz);
        if rs.rtt_us >= 0
            && ((rs.rtt_us as u64) <= self.min_rtt_us || (expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us as u64;
            self.min_rtt_stamp = ctx.jiffies;
        }
        if PROBE_RTT_MODE_MS > 0 && expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.set_mode(Mode::ProbeRtt, ctx.now_us);
            self.probe_rtt_count += 1;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples in PROBE_RTT are application-limited.
            r.mark_app_limited(ctx.in_flight);
            if self.probe_rtt_done_stamp == 0 && ctx.in_flight <= CWND_MIN_TARGET {
                let ms_jiffies = (PROBE_RTT_MODE_MS * ctx.hz).div_ceil(1000);
                self.probe_rtt_done_stamp = ctx.jiffies + ms_jiffies.max(1);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = r.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    let dm = r.delivered_mstamp;
                    if let Some(w) = self.check_probe_rtt_done(ctx.jiffies, ctx.now_us, dm, *cwnd) {
                        *cwnd = w;
                    }
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_main` for the ACK whose sample is `r.rs`: updates the model, the pacing rate
    /// (`self.pacing_rate`) and returns the new cwnd. `srtt_us8`: Linux's `srtt_us`.
    pub fn on_ack(&mut self, ctx: &BbrCtx, r: &mut RateEstimator, srtt_us8: u64) -> u32 {
        let rs = r.rs;
        let mut cwnd = ctx.cwnd;
        // bbr_update_model
        self.update_bw(&rs, r, ctx.now_us);
        self.update_ack_aggregation(&rs, r, ctx.cwnd);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(&rs, ctx, r.delivered_mstamp) {
            self.advance_cycle_phase(r.delivered_mstamp);
        }
        self.check_full_bw_reached(&rs);
        self.check_drain(ctx, r.delivered_mstamp);
        self.update_min_rtt(&rs, ctx, r, &mut cwnd);
        self.update_gains();
        // bbr_main
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, cwnd, srtt_us8);
        let ctx = BbrCtx { cwnd, ..*ctx };
        self.set_cwnd(&rs, &ctx, rs.acked_sacked, bw, self.cwnd_gain, r.delivered)
    }

    /// `bbr_ssthresh`, at the start of a recovery or a timeout: saves cwnd, leaves ssthresh.
    pub fn on_reduction(&mut self, cwnd: u32) -> u32 {
        self.save_cwnd(cwnd);
        self.ssthresh
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; full-pipe detection and long-term sampling
    /// start again (cwnd itself is left as it is).
    pub fn on_undo(&mut self, r: &RateEstimator) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(r);
    }

    /// `bbr_set_state(TCP_CA_Loss)` at a retransmission timeout.
    pub fn on_loss_state(&mut self, r: &RateEstimator, now_us: u64) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            rtt_us: -1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, r, now_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_as_linux() {
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(PACING_GAIN[..2], [320, 192]);
        assert_eq!(FULL_BW_THRESH, 320);
        assert_eq!(LT_BW_RATIO, 32);
    }

    /// 10 Mb/s of 1448-byte segments is 863.3 segments/s: bw = 863.3e-6 << 24 ≈ 14 484;
    /// the pacing rate at gain 1 is 99 % of 1.25 MB/s; the BDP at 40 ms is ⌈34.5⌉ = 35.
    #[test]
    fn rate_and_bdp_arithmetic() {
        let mut b = Bbr::new(1448, 10, 40_000, 8 * 40_000, 0, 0, 1);
        let bw = (10e6 / 8.0 / 1448.0 * 1e-6 * BW_UNIT as f64) as u64;
        assert_eq!(bw, 14_483);
        let r = b.rate_bytes_per_sec(bw, BBR_UNIT);
        assert!((r as f64 / 1_237_500.0 - 1.0).abs() < 1e-3, "{r}");
        assert_eq!(b.bdp(bw, BBR_UNIT), 35);
        assert_eq!(b.bdp(bw, CWND_GAIN), 70);
        // The TSO goal at 1.24 MB/s: 1.24e6 >> 10 = 1208 B < 1 MSS, so min_tso_segs = 2.
        b.pacing_rate = r;
        assert_eq!(b.tso_segs_goal(), 2);
        // cwnd target in PROBE_BW at phase 2: 70 + 3·2 = 76.
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 2;
        assert_eq!(b.inflight(bw, CWND_GAIN), 76);
        b.cycle_idx = 0;
        assert_eq!(b.inflight(bw, CWND_GAIN), 78);
        // Below 150 kB/s the goal is 1 segment.
        b.pacing_rate = 100_000;
        assert_eq!(b.tso_segs_goal(), 1);
        // Initial pacing rate: 739/256 × 10 segments per 40 ms × 99 %.
        let b = Bbr::new(1448, 10, 40_000, 8 * 40_000, 0, 0, 1);
        assert!((b.pacing_rate as f64 / (2.8867 * 362_000.0 * 0.99) - 1.0).abs() < 1e-3);
    }

    #[test]
    fn probe_bw_start_phase_is_never_the_drain_phase() {
        let mut seen = [0u32; 8];
        for seed in 0..200 {
            let mut b = Bbr::new(1448, 10, 40_000, 0, 0, 0, seed);
            b.full_bw_reached = true;
            b.reset_probe_bw_mode(0, 0);
            seen[b.cycle_idx as usize] += 1;
        }
        assert_eq!(seen[1], 0, "3/4 never first");
        assert!(
            seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 10),
            "{seen:?}"
        );
    }

    /// Long-term bandwidth (`bbr_lt_bw_sampling`) on a policer's signature: rounds of 100 ms
    /// delivering 100 segments with `lost_per_round` lost. Returns the state after `rounds`.
    fn policed(lost_per_round: u64, second_rate: u64, rounds: u32) -> (Bbr, RateEstimator) {
        let mut b = Bbr::new(1448, 10, 40_000, 0, 0, 0, 3);
        b.mode = Mode::ProbeBw;
        b.full_bw_reached = true;
        let mut r = RateEstimator::default();
        for k in 0..rounds {
            // From the 5th round the rate may change (second interval).
            let d = if k >= 4 { second_rate } else { 100 };
            r.delivered += d;
            r.lost += lost_per_round;
            r.delivered_mstamp += 100_000;
            b.round_start = true;
            let rs = RateSample {
                losses: lost_per_round as u32,
                rtt_us: -1,
                ..RateSample::default()
            };
            b.lt_bw_sampling(&rs, &r, r.delivered_mstamp);
        }
        (b, r)
    }

    #[test]
    fn long_term_bandwidth_detects_a_policer() {
        // 1000 segments/s is 2^24/1000 = 16 777 in BW units.
        let (b, _) = policed(30, 100, 3);
        assert!(
            b.lt_is_sampling && b.lt_bw == 0,
            "an interval needs 4 rounds"
        );
        let (b, _) = policed(30, 100, 4);
        assert_eq!((b.lt_bw, b.lt_use_bw), (16_777, false), "first interval");
        let (b, _) = policed(30, 100, 8);
        assert!(b.lt_use_bw, "two consistent lossy intervals: policed");
        assert_eq!(b.lt_bw, 16_777);
        assert_eq!(b.bw(), 16_777, "the long-term rate replaces the max filter");
        assert_eq!(b.pacing_gain, BBR_UNIT);
        // A second interval 50 % faster is not consistent: a new first interval.
        let (b, _) = policed(30, 150, 8);
        assert!(!b.lt_use_bw);
        assert_eq!(
            b.lt_bw,
            150 * BW_UNIT / 100_000,
            "the second interval's rate"
        );
        // Loss below 50/256 (here 15 %) never ends an interval; 17 rounds reset sampling.
        let (b, _) = policed(15, 100, 12);
        assert_eq!(b.lt_bw, 0);
        // Policed for 48 rounds of PROBE_BW, then back to the max filter and gain cycling.
        let (mut b, r) = policed(30, 100, 8);
        for _ in 0..LT_BW_MAX_RTTS - 1 {
            b.lt_bw_sampling(&RateSample::default(), &r, 0);
        }
        assert!(b.lt_use_bw);
        b.lt_bw_sampling(&RateSample::default(), &r, 0);
        assert!(!b.lt_use_bw && b.lt_bw == 0);
    }
}
