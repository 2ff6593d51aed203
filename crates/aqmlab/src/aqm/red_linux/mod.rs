//! RED as Linux implements it (Linux 6.1 `net/sched/sch_red.c` `red_enqueue`, `red_dequeue`,
//! `__red_change`, `red_adaptative_timer`; `include/net/red.h` `red_set_parms`,
//! `red_calc_qavg*`, `red_action`, `red_mark_probability`, `red_random`,
//! `red_adaptative_algo`), in the kernel's own fixed point, with the parameters tc derives
//! from its command line (`tc.rs`). The `red` kind is ns-2.35's RED and stays as it is;
//! this is the `red_linux` kind.
//!
//! * The average `qavg` is a u64 with its point at `Wlog` bits (`W = 2^−Wlog`), updated at
//!   every arrival from the bytes queued before it: `qavg += backlog − (qavg >> Wlog)`.
//! * After an idle period (started by a dequeue that found the queue empty, ended by the next
//!   arrival) the arrival's average is instead `qavg` decayed by the idle time `t` in µs
//!   (capped at `255 << Scell_log`): `qavg >> Stab[t >> Scell_log]`, or, where the table
//!   says 0, the linear `qavg − qavg·t >> Scell_log` floored at `qavg/2`. `qidlestart` = 0
//!   means "not idle", as the kernel's `ktime` 0 does (so an idle start at t = 0 is none).
//! * Thresholds `qth_min`, `qth_max` in bytes `<< Wlog`. Below min: `qcount = −1`, pass.
//!   At or above max: `qcount = −1`, a hard mark. Between: `qcount += 1`; on its first
//!   arrival (0) a random `qR = u32 / (max_P/(max − min))` is drawn (the kernel's
//!   `reciprocal_divide`); later ones are selected when
//!   `((qavg − qth_min) >> Wlog)·qcount ≥ qR`, which draws a new `qR` and sets `qcount = 0`.
//! * A selected packet (prob mark) or a hard mark counts `overlimits`; without `ecn` it is
//!   dropped (`prob_drop`/`forced_drop`); with `ecn` an ECT or CE packet is marked
//!   (`prob_mark`/`forced_mark`; a CE packet stays CE), except that `harddrop` drops hard
//!   marks; a Not-ECT packet is dropped, or with `nodrop` queued.
//! * The packet then enters the child bfifo of `limit` bytes: refused (`pdrop`) when the
//!   queued bytes plus its own exceed the limit (Linux `bfifo_enqueue`).
//! * `adaptive`: every 500 ms (the kernel's timer, `HZ/2`, first 500 ms after creation)
//!   `max_P += min(1 %, max_P/4)` while the average (decayed if idle) is above
//!   `min + 0.6·(max − min)` and `max_P ≤ 50 %`, or `max_P = max_P/10·9` while below
//!   `min + 0.4·(max − min)` and `max_P ≥ 1 %` (Floyd, Gummadi & Shenker 2001, in the
//!   kernel's integers); the divisor of `qR` becomes `max_P/(max − min)` rounded.
//!
//! Random words: the kernel draws `get_random_u32()`; ours is the queue's uniform number
//! taken as `⌊u·2³²⌋` (the replay's recorded words give back the very u32).
//!
//! Checked decision by decision against the kernel's code (validation/linux_qdisc).

pub mod config;
pub mod tc;

use super::{DropCause, QueueLen, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::UniformSource;
use crate::units::{Time, MS};

/// `RED_ONE_PERCENT`: `DIV_ROUND_CLOSEST(2³², 100)`.
const ONE_PERCENT: u32 = 42_949_673;
/// `MAX_P_MIN`, `MAX_P_MAX`: the adaptive range of `max_P`, 1 % and 50 %.
const MAX_P_MIN: u32 = ONE_PERCENT;
const MAX_P_MAX: u32 = 50 * ONE_PERCENT;
/// The adaptive timer's period (`HZ/2`).
pub const ADAPT_PERIOD: Time = 500 * MS;

/// `struct reciprocal_value` (`include/linux/reciprocal_div.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Reciprocal {
    pub m: u32,
    pub sh1: u8,
    pub sh2: u8,
}

impl Reciprocal {
    /// `reciprocal_value(d)` (`lib/math/reciprocal_div.c`).
    pub fn new(d: u32) -> Self {
        let l = 32 - d.wrapping_sub(1).leading_zeros(); // fls(d − 1)
        let m = ((1u64 << 32) * ((1u64 << l) - d as u64)) / d as u64 + 1;
        Reciprocal {
            m: m as u32,
            sh1: l.min(1) as u8,
            sh2: l.saturating_sub(1) as u8,
        }
    }

    /// `reciprocal_divide(a, R)`: `a / d`.
    pub fn divide(self, a: u32) -> u32 {
        let t = ((a as u64 * self.m as u64) >> 32) as u32;
        (t.wrapping_add(a.wrapping_sub(t) >> self.sh1)) >> self.sh2
    }
}

/// What tc sends (`struct tc_red_qopt`, `TCA_RED_STAB`, `TCA_RED_MAX_P`, the flags).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TcRedOpt {
    /// Bytes (the child bfifo's limit).
    pub limit: u32,
    /// Bytes.
    pub qth_min: u32,
    pub qth_max: u32,
    #[serde(rename = "Wlog")]
    pub wlog: u8,
    #[serde(rename = "Plog")]
    pub plog: u8,
    #[serde(rename = "Scell_log")]
    pub scell_log: u8,
    /// Units of 2⁻³².
    #[serde(rename = "max_P")]
    pub max_p: u32,
    #[serde(with = "stab_serde")]
    pub stab: [u8; 256],
    pub ecn: bool,
    pub harddrop: bool,
    pub nodrop: bool,
    pub adaptive: bool,
}

mod stab_serde {
    pub fn serialize<S: serde::Serializer>(v: &[u8; 256], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }
}

/// `struct red_parms` after `red_set_parms`.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParms {
    /// Bytes `<< Wlog`.
    pub qth_min: u32,
    pub qth_max: u32,
    pub scell_max: u32,
    pub max_p: u32,
    pub max_p_reciprocal: Reciprocal,
    /// `max − min` in bytes (at least 1).
    pub qth_delta: u32,
    /// Bytes: `min + 0.4·delta`, `min + 0.6·delta` (delta/5 truncated).
    pub target_min: u32,
    pub target_max: u32,
    pub scell_log: u8,
    pub wlog: u8,
    pub plog: u8,
    pub stab: [u8; 256],
}

impl RedParms {
    /// `red_set_parms(qth_min, qth_max, Wlog, Plog, Scell_log, stab, max_P)`.
    pub fn new(o: &TcRedOpt) -> Self {
        // `int delta = qth_max − qth_min`, at least 1.
        let delta = (o.qth_max.wrapping_sub(o.qth_min) as i32).max(1) as u32;
        let max_p = if o.max_p == 0 {
            let maxp = if o.plog < 32 {
                u32::MAX >> o.plog
            } else {
                u32::MAX
            };
            maxp.wrapping_mul(delta)
        } else {
            o.max_p
        };
        let per_byte = (max_p / delta).max(1);
        RedParms {
            qth_min: o.qth_min.wrapping_shl(o.wlog as u32),
            qth_max: o.qth_max.wrapping_shl(o.wlog as u32),
            scell_max: 255u32.wrapping_shl(o.scell_log as u32),
            max_p,
            max_p_reciprocal: Reciprocal::new(per_byte),
            qth_delta: delta,
            target_min: o.qth_min.wrapping_add(2 * (delta / 5)),
            target_max: o.qth_min.wrapping_add(3 * (delta / 5)),
            scell_log: o.scell_log,
            wlog: o.wlog,
            plog: o.plog,
            stab: o.stab,
        }
    }
}

/// `struct red_vars`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedVars {
    /// Packets since the last selection, −1 below the range (`red_set_vars`).
    pub qcount: i32,
    /// The cached random number.
    pub qr: u32,
    /// Bytes, point at `Wlog`.
    pub qavg: u64,
    /// ns; 0 = not idle.
    pub qidlestart: Time,
}

/// `struct red_stats` and the qdisc's `overlimits`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedStats {
    pub prob_drop: u64,
    pub prob_mark: u64,
    pub forced_drop: u64,
    pub forced_mark: u64,
    pub pdrop: u64,
    pub overlimits: u64,
}

/// `red_action`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    DontMark,
    ProbMark,
    HardMark,
}

#[derive(Clone, Debug)]
pub struct RedLinux {
    pub opt: TcRedOpt,
    pub p: RedParms,
    pub v: RedVars,
    pub stats: RedStats,
}

impl RedLinux {
    /// The qdisc as `red_init` leaves it at t = 0: `red_set_vars`, and an idle period
    /// started at `ktime` 0, which is none.
    pub fn new(opt: TcRedOpt) -> Self {
        RedLinux {
            p: RedParms::new(&opt),
            opt,
            v: RedVars {
                qcount: -1,
                ..Default::default()
            },
            stats: RedStats::default(),
        }
    }

    fn is_idling(&self) -> bool {
        self.v.qidlestart != 0
    }

    /// `red_calc_qavg_from_idle_time` at `now`.
    pub fn qavg_from_idle_time(&self, now: Time) -> u64 {
        let p = &self.p;
        let qavg = self.v.qavg;
        // ktime_us_delta, capped at Scell_max.
        let us_idle = ((now as i64 - self.v.qidlestart as i64) / 1000).min(p.scell_max as i64);
        let shift = p.stab[((us_idle >> p.scell_log) & 255) as usize];
        if shift != 0 {
            return qavg >> shift;
        }
        // (1 − W)^m ≈ 1 − mW, floored at half.
        let dec = qavg.wrapping_mul(us_idle as u64) >> p.scell_log;
        if dec < qavg >> 1 {
            qavg - dec
        } else {
            qavg >> 1
        }
    }

    /// `red_calc_qavg` with `backlog` bytes queued.
    pub fn calc_qavg(&self, now: Time, backlog: u32) -> u64 {
        if self.is_idling() {
            self.qavg_from_idle_time(now)
        } else {
            let q = self.v.qavg;
            q.wrapping_add((backlog as u64).wrapping_sub(q >> self.p.wlog))
        }
    }

    /// `red_random`: a u32 divided by `max_P/(max − min)`.
    fn random(&self, rng: &mut impl UniformSource) -> u32 {
        let word = (rng.uniform() * 4_294_967_296.0) as u64 as u32;
        self.p.max_p_reciprocal.divide(word)
    }

    /// `red_action` on the average `qavg`.
    pub fn action(&mut self, qavg: u64, rng: &mut impl UniformSource) -> Action {
        let p = &self.p;
        if qavg < p.qth_min as u64 {
            self.v.qcount = -1;
            return Action::DontMark;
        }
        if qavg >= p.qth_max as u64 {
            self.v.qcount = -1;
            return Action::HardMark;
        }
        self.v.qcount = self.v.qcount.wrapping_add(1);
        if self.v.qcount != 0 {
            // red_mark_probability, in unsigned long.
            let excess = (qavg - p.qth_min as u64) >> p.wlog;
            if excess.wrapping_mul(self.v.qcount as i64 as u64) >= self.v.qr as u64 {
                self.v.qcount = 0;
                self.v.qr = self.random(rng);
                return Action::ProbMark;
            }
        } else {
            self.v.qr = self.random(rng);
        }
        Action::DontMark
    }

    /// `red_enqueue`: `q` is the occupancy before the packet (the child's backlog).
    pub fn on_enqueue(
        &mut self,
        now: Time,
        pkt: &Packet,
        q: QueueLen,
        rng: &mut impl UniformSource,
    ) -> Verdict {
        self.v.qavg = self.calc_qavg(now, q.bytes as u32);
        self.v.qidlestart = 0;
        let ecn_capable = pkt.ecn != Ecn::NotEct; // INET_ECN_set_ce succeeds
        let mut verdict = Verdict::Pass;
        match self.action(self.v.qavg, rng) {
            Action::DontMark => {},
            Action::ProbMark => {
                self.stats.overlimits += 1;
                if self.opt.ecn && ecn_capable {
                    self.stats.prob_mark += 1;
                    verdict = mark(pkt);
                } else if !self.opt.ecn || !self.opt.nodrop {
                    self.stats.prob_drop += 1;
                    return Verdict::Drop(DropCause::Early);
                }
            },
            Action::HardMark => {
                self.stats.overlimits += 1;
                if self.opt.ecn && !self.opt.harddrop && ecn_capable {
                    self.stats.forced_mark += 1;
                    verdict = mark(pkt);
                } else if !self.opt.ecn || self.opt.harddrop || !self.opt.nodrop {
                    self.stats.forced_drop += 1;
                    return Verdict::Drop(DropCause::Forced);
                }
            },
        }
        // The child bfifo (bfifo_enqueue): backlog + len ≤ limit.
        if q.bytes + pkt.size as u64 > self.opt.limit as u64 {
            self.stats.pdrop += 1;
            return Verdict::Drop(DropCause::Overflow);
        }
        verdict
    }

    /// `red_dequeue` found the queue empty: the idle period starts (unless one has).
    pub fn on_idle(&mut self, now: Time) {
        if !self.is_idling() {
            self.v.qidlestart = now;
        }
    }

    pub fn tick_period(&self) -> Option<Time> {
        self.opt.adaptive.then_some(ADAPT_PERIOD)
    }

    /// `red_adaptative_algo`, run by the timer at `now` (armed only with `adaptive`).
    pub fn on_tick(&mut self, now: Time) {
        if !self.opt.adaptive {
            return;
        }
        let qavg = if self.is_idling() {
            self.qavg_from_idle_time(now)
        } else {
            self.v.qavg
        } >> self.p.wlog;
        let p = &mut self.p;
        if qavg > p.target_max as u64 && p.max_p <= MAX_P_MAX {
            p.max_p += MAX_P_MIN.min(p.max_p / 4);
        } else if qavg < p.target_min as u64 && p.max_p >= MAX_P_MIN {
            p.max_p = (p.max_p / 10) * 9;
        }
        // DIV_ROUND_CLOSEST in u32.
        let per_byte = (p.max_p.wrapping_add(p.qth_delta / 2) / p.qth_delta).max(1);
        p.max_p_reciprocal = Reciprocal::new(per_byte);
    }

    /// tc's red xstats (`red_dump_stats`, iproute2 `red_print_xstats`): `marked`, `early`,
    /// `pdrop`, `other` (always 0), and the counters behind them; `probability` is the
    /// current `max_P` as tc prints it (`max_P/2³²`).
    pub fn qdisc_stats(&self) -> serde_json::Map<String, serde_json::Value> {
        let s = &self.stats;
        super::json_map(serde_json::json!({
            "marked": s.prob_mark + s.forced_mark,
            "early": s.prob_drop + s.forced_drop,
            "pdrop": s.pdrop,
            "other": 0,
            "prob_drop": s.prob_drop,
            "prob_mark": s.prob_mark,
            "forced_drop": s.forced_drop,
            "forced_mark": s.forced_mark,
            "probability": self.p.max_p as f64 / 4_294_967_296.0,
        }))
    }

    /// The average in bytes, for the queue trace.
    pub fn state_probe(&self) -> (&'static str, f64) {
        ("avg", self.v.qavg as f64 / (1u64 << self.p.wlog) as f64)
    }
}

/// A mark that changes the packet (ECT → CE) is the queue's `Mark`; a CE packet stays as it is.
fn mark(pkt: &Packet) -> Verdict {
    if pkt.ecn == Ecn::Ce {
        Verdict::Pass
    } else {
        Verdict::Mark
    }
}

#[cfg(test)]
mod tests;
