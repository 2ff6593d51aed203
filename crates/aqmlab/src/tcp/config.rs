//! TCP end-system parameters: what each means, its checks, and the times derived from them.
//! The presets of the studies' stacks and Linux's are in `tcp/presets.rs`.
//!
//! Sources: model-facts §7 (shared/reference) summarising 4.4BSD-Lite2 `tcp_timer.c`,
//! `tcp_input.c`, `tcp_output.c`, FreeBSD 2.x `tcp_timer.h`, ns-2.35 `tcp.cc`/`tcp-full.cc`
//! and RFC 5681 / 6298 / 3390; for Linux, Linux 6.x `include/net/tcp.h`, `net/ipv4/tcp_*.c`
//! and its sysctl defaults (docs/tcp.md).

use serde::{Deserialize, Serialize};

use super::config_times::{AckJiffies, ConfigTimes};
use crate::config::error::ConfigError;
use crate::units::{Time, MS, SEC};

/// Loss-recovery algorithm: Reno (RFC 5681 §3.2, 4.4BSD), NewReno (RFC 6582) or SACK
/// (RFC 2018 blocks, recovery per `SackVariant`). A SACK endpoint whose peer does not agree
/// to SACK on the SYN falls back to NewReno.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    Reno,
    #[serde(rename = "newreno")]
    NewReno,
    Sack,
}

/// Which SACK-based loss recovery a `recovery = "sack"` sender runs (`tcp/sack.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SackVariant {
    /// RFC 6675: pipe recomputed from the scoreboard (SetPipe), IsLost/NextSeg rules 1–4,
    /// entry on DupThresh SACK-bearing duplicate ACKs or IsLost(HighACK).
    #[default]
    Rfc6675,
    /// ns-2 Full-TCP SACK (`Agent/TCP/FullTcp/Sack`, Sack1-style): on the 3rd duplicate ACK
    /// pipe = outstanding − SACKed bytes, then a counter (−1 segment per ACK, −1 more per
    /// partial ACK, + bytes sent); holes below the highest SACK retransmitted in order.
    Ns2,
}

/// Which version of the L4S team's `net/ipv4/tcp_prague.c` a `prague` sender follows
/// (`tcp/prague/`), named by the L4STeam/linux commit it was read at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum PragueVersion {
    /// Module version 0.7 (893e147): fractional window, RTT independence always on, the
    /// rate-based mode below 4 MTUs of window (`prague_cwnd_mode` 2).
    #[default]
    #[serde(rename = "893e147")]
    V893e147,
    /// Module version 0.5 (b256dae, 2020-08-04: the kernel of the L4S test suite's
    /// testbed, github.com/heistp/l4s-tests): integer cwnd with a 2^-20 carry, RTT
    /// independence a module parameter off by default (`RTT_CONTROL_NONE`), α in 2^-20.
    #[serde(rename = "b256dae")]
    Vb256dae,
}

/// How a `recovery = "newreno"` sender answers a partial ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NewRenoVariant {
    /// RFC 6582 §3.2: retransmit the first unacknowledged segment, deflate cwnd by the data
    /// acknowledged (adding back one SMSS), and send new data if the window allows; on the
    /// full ACK, cwnd = min(ssthresh, FlightSize + SMSS).
    #[default]
    Rfc6582,
    /// ns-2 Full-TCP (`Agent/TCP/FullTcp/Newreno`, 2.1b9 and 2.35): retransmit the first
    /// unacknowledged segment, move `recover_` to the highest sequence sent, set cwnd to
    /// ssthresh, and send at most `recov_maxburst_` (2) segments per ACK until the full ACK;
    /// the full ACK deflates cwnd to ssthresh and then opens it as any ACK does.
    Ns2,
}

/// RFC 2018 §3: at most 4 SACK blocks fit in the 40 bytes of TCP options without timestamps.
pub const MAX_SACK_BLOCKS_ALLOWED: u8 = crate::packet::MAX_SACK_BLOCKS as u8;

fn default_sack_max_blocks() -> u8 {
    3
}

fn default_delack_segments() -> u32 {
    2
}

/// `max_retries = "never"`.
pub const NEVER: u32 = u32::MAX;

/// A count that may be `"never"` (`NEVER`) in scenarios.
mod never_u32 {
    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
        if *v == super::NEVER {
            s.serialize_str("never")
        } else {
            s.serialize_u32(*v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum V {
            N(u32),
            S(String),
        }
        match V::deserialize(d)? {
            V::N(n) => Ok(n),
            V::S(s) if s == "never" => Ok(super::NEVER),
            V::S(s) => Err(de::Error::custom(format!(
                "{s:?}: expected an integer or \"never\""
            ))),
        }
    }
}

/// A time in seconds that may be `"never"` (infinity) in scenarios.
mod never_f64 {
    use serde::{de, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_infinite() && *v > 0.0 {
            s.serialize_str("never")
        } else {
            s.serialize_f64(*v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum V {
            N(f64),
            S(String),
        }
        match V::deserialize(d)? {
            V::N(n) => Ok(n),
            V::S(s) if s == "never" => Ok(f64::INFINITY),
            V::S(s) => Err(de::Error::custom(format!(
                "{s:?}: expected a number of seconds or \"never\""
            ))),
        }
    }
}

/// When a pending delayed ACK is sent if no second segment arrives first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DelackClock {
    /// At the next tick of a global clock of period `delack_interval_ms` (4.4BSD/FreeBSD 2.x
    /// `tcp_fasttimo`, ns-2 Full-TCP's aligned `interval_` timer): 0 to one period later.
    #[default]
    Global,
    /// Exactly `delack_interval_ms` after the segment that made the ACK pending: a
    /// per-connection callout (FreeBSD 4.x `tcp_delacktime`, `TCPTV_DELACK` = hz/10).
    Connection,
}

/// The retransmit timer of a connection with no RTT sample yet (the SYN's timer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InitialTimer {
    /// 4.4BSD `tcp_newtcpcb`: SRTT = 0 and RTTVAR chosen so that the first timer,
    /// `SRTT + 2·RTTVAR` ("A + 2D"), is `initial_rto_s`; after it, `SRTT + 4·RTTVAR` = twice
    /// that, times the backoff (FreeBSD 2.x SYNs at 0, 6, 30 s).
    #[default]
    APlus2d,
    /// FreeBSD 4.x: RTTVAR seeded so that `SRTT + 4·RTTVAR` = `initial_rto_s`
    /// (`TCPTV_RTOBASE` = 3 s), the same value for the first and later SYN timers, times the
    /// SYN backoff table.
    Base,
}

/// How the RTT estimator and the retransmit timer see time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerModel {
    /// BSD: a global clock ticks every `tick`; RTTs are counted in ticks (`t_rtt` starts at 1),
    /// the retransmit timer is a tick counter, so it fires on a tick boundary; the minimum RTO
    /// is applied after the backoff; the backoff is kept until a new RTT sample.
    Bsd,
    /// ns-2 Full-TCP: RTTs measured in ticks against a free-running clock with a random phase
    /// per connection; the timer fires exactly `max(rto, min_rto)·backoff` after it is set; the
    /// backoff is reset by any ACK of new data.
    Ns2,
    /// Linux 6.x: RTT samples in microseconds from every ACK that gives one (the sender's
    /// per-segment send times, Karn's rule, the echoed timestamp as a fallback), Linux's
    /// estimator (`tcp_rtt_estimator`: RTO = SRTT + max(minimum RTO, the window's largest
    /// 4·mean deviation)), timers on the jiffy clock of `tick_ms` expiring on Linux's timer
    /// wheel, and a delayed-ACK engine with quick-ACK mode (`tcp/rtt.rs`, docs/tcp.md).
    Linux,
}

/// Congestion control: how the window grows and how much it is cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// Reno as the configured stack does it (RFC 5681 in 4.4BSD's byte arithmetic: one MSS
    /// per ACK in slow start, MSS²/cwnd per ACK above ssthresh; ns-2's `opencwnd` with the
    /// ns-2 timer model); a loss halves `min(cwnd, rwnd)`. The historic presets.
    #[default]
    Reno,
    /// Linux's Reno (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`) in Linux's framework
    /// (`tcp/cong.rs`): whole segments, slow start by segments ACKed, growth only while
    /// cwnd-limited, ssthresh = max(cwnd/2, 2).
    LinuxReno,
    /// CUBIC as Linux 6.x has it (`tcp_cubic.c`: RFC 9438 with β = 717/1024, C ≈ 0.4, fast
    /// convergence, the Reno-friendly region, and HyStart when `hystart`), in the same
    /// framework (`tcp/cubic.rs`, `tcp/cong.rs`).
    Cubic,
    /// DCTCP (RFC 8257) as Linux 6.x has it (`tcp_dctcp.c`): Linux Reno's growth; per window
    /// of data, α ← α − α/16 + F/16 in 1/1024 units from the fraction F of segments delivered
    /// with ECE; an ECE reduction cuts cwnd·α/2, a loss halves. The receiver's ECE follows the
    /// CE state of the data it acknowledges. Needs `ecn` (without it, Linux Reno).
    Dctcp,
    /// BBR v1 as Linux 6.x has it (`tcp_bbr.c`, `tcp/bbr.rs`): a model of the path's
    /// bottleneck bandwidth (windowed max of delivery-rate samples, `tcp/rate.rs`) and min
    /// RTT sets the pacing rate and cwnd; STARTUP, DRAIN, PROBE_BW gain cycling, PROBE_RTT,
    /// policer detection. Always paced (Linux's internal pacing), whatever `pacing` says.
    Bbr,
    /// TCP Prague, the L4S team's Linux module (`tcp_prague.c`, `tcp/prague/`): ECT(1)
    /// on every segment, a DCTCP-like α from Accurate ECN's CE counts, a fractional window
    /// cut by α/2 once per round, RTT independence, always paced. Needs `ecn` and `accecn`;
    /// when the peer does not agree on AccECN it runs Linux Reno without ECN or pacing
    /// (the module's `prague-reno` fallback).
    Prague,
    /// LEDBAT (RFC 6817), a less-than-best-effort sender (`tcp/ledbat.rs`): the window
    /// follows the queuing delay (one-way delay over its minimum) towards a 100 ms target,
    /// GAIN 1, at most one segment per RTT faster; halved on loss as Linux Reno. Its segments
    /// carry the timestamp option's one-way-delay feedback, so `sack_max_blocks` ≤ 3.
    Ledbat,
}

fn default_prague_rtt_target_ms() -> f64 {
    25.0
}

fn default_prague_rtt_transition() -> u32 {
    4
}

fn default_true() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Maximum segment payload (bytes).
    pub mss: u32,
    /// IP + TCP header bytes per packet (40 without options).
    pub header_bytes: u32,
    /// Receiver window advertised by every endpoint (bytes); the sender's window is
    /// `min(cwnd, rwnd)`.
    pub rwnd: u32,
    /// Initial congestion window in segments; 0 selects RFC 3390
    /// (`min(4·MSS, max(2·MSS, 4380))`).
    pub initial_window: u32,
    /// Initial slow-start threshold in bytes (BSD: effectively unlimited).
    pub initial_ssthresh: u64,
    pub recovery: Recovery,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Delayed ACKs: acknowledge at once when `delack_segments` full segments' worth of data is
    /// unacknowledged, otherwise after the delayed-ACK timer.
    pub delayed_ack: bool,
    /// Full segments that make an immediate ACK with delayed ACKs on: 2 in BSD (`tcp_output`'s
    /// window-update test), 1 in ns-2.35 Full-TCP (`segsperack_` 1: only sub-MSS data waits
    /// for the timer).
    #[serde(default = "default_delack_segments")]
    pub delack_segments: u32,
    /// Period of the (global) delayed-ACK clock: BSD's fast timer, 200 ms.
    pub delack_interval_ms: f64,
    /// Global delayed-ACK clock (BSD fast timer) or a per-connection timer (FreeBSD 4.x).
    #[serde(default)]
    pub delack_clock: DelackClock,
    /// Nagle's algorithm (RFC 896).
    pub nagle: bool,
    pub timer_model: TimerModel,
    /// Timer granularity: BSD's 500 ms slow tick, ns-2's `tcpTick_` 10 ms.
    pub tick_ms: f64,
    pub min_rto_s: f64,
    pub max_rto_s: f64,
    /// RTO before any RTT sample (the SYN's first timeout).
    pub initial_rto_s: f64,
    /// How `initial_rto_s` seeds the estimator before the first RTT sample.
    #[serde(default)]
    pub initial_timer: InitialTimer,
    /// Multipliers of the RTO for the 1st, 2nd... retransmission of the same segment
    /// (BSD `tcp_backoff[]`); the last value repeats.
    pub backoff: Vec<u32>,
    /// Multipliers used while the connection is being opened (SYN / SYN-ACK); empty = `backoff`.
    pub syn_backoff: Vec<u32>,
    /// Consecutive timeouts after which the connection is dropped (BSD `TCP_MAXRXTSHIFT` 12);
    /// `"never"` (ns-2 Full-TCP retransmits forever) is stored as `NEVER`.
    #[serde(with = "never_u32")]
    pub max_retries: u32,
    /// Give up opening a connection after this long (BSD `TCPTV_KEEP_INIT`, 75 s); `"never"`
    /// (ns-2) is stored as infinity.
    #[serde(with = "never_f64")]
    pub connect_timeout_s: f64,
    /// Take an RTT sample from the SYN / SYN-ACK exchange (BSD and ns-2 Full-TCP both do, when the
    /// SYN or SYN-ACK was not retransmitted).
    pub rtt_sample_from_syn: bool,
    /// The passive opener's window opens by one segment when the ACK of its SYN-ACK arrives
    /// (4.4BSD / FreeBSD `tcp_input`: SYN_RECEIVED falls into the ESTABLISHED ACK processing,
    /// and the SYN counts as one acknowledged byte), so a server starts sending with
    /// `initial_window + 1` segments. ns-2 Full-TCP opens cwnd only on ACKs received in
    /// ESTABLISHED (`last_state_`), so it starts with `initial_window`.
    #[serde(default)]
    pub ack_of_syn_opens_cwnd: bool,
    /// Negotiate and use ECN (RFC 3168). Off in the studies' stacks unless an experiment turns
    /// it on.
    #[serde(default)]
    pub ecn: bool,
    /// SACK loss recovery model (used when `recovery = "sack"`).
    #[serde(default)]
    pub sack_variant: SackVariant,
    /// Most SACK blocks a receiver puts in one ACK (RFC 2018: 1..=4 without timestamps;
    /// ns-2 Full-TCP `max_sack_blocks_` 3).
    #[serde(default = "default_sack_max_blocks")]
    pub sack_max_blocks: u8,
    /// The FIN goes only when nothing sent is unacknowledged: on the segment that empties the
    /// send buffer if that segment leaves an idle connection (Nagle then holds a last partial
    /// segment until all before it is acknowledged), else alone once the last ACK arrives.
    /// ns-2 Full-TCP, 2.1b9 and 2.35 alike: `foutput` sets `TF_NEEDCLOSE` only when `quiet`
    /// (`highest_ack_ == maxseq_`) and its Nagle test has no FIN exemption. `false`: BSD
    /// `tcp_output`, where the FIN rides the segment carrying the last byte, which Nagle lets
    /// go at once.
    #[serde(default)]
    pub fin_when_idle: bool,
    /// NewReno partial-ACK rules (used when `recovery = "newreno"`).
    #[serde(default)]
    pub newreno_variant: NewRenoVariant,
    /// An ECN window reduction sets cwnd to exactly half of `min(cwnd, rwnd)` rather than to
    /// the new ssthresh in whole segments: ns-2.35's `precisionReduce_` (true since 2006;
    /// false in 2.1b9), which makes `slowdown` halve `windowd()`, a double.
    #[serde(default)]
    pub exact_halving: bool,
    /// After a window reduction, CWR goes on the next data segment even if it is a
    /// retransmission (ns-2 Full-TCP: 2.1b9 sets CWR whenever `cong_action_` is pending,
    /// 2.35 keeps it with `SetCWRonRetransmit_` true); otherwise on the next new data segment
    /// only (RFC 3168 §6.1.2's wording).
    #[serde(default)]
    pub cwr_on_retransmit: bool,
    /// Limited Transmit (RFC 3042): the first and second duplicate ACKs each release one new
    /// segment, as long as the outstanding data stays within cwnd + 2·SMSS and the receiver's
    /// window; cwnd itself is unchanged. None of the presets' originals has it: FreeBSD
    /// 2.2.8 and 4.x predate it (FreeBSD's `net.inet.tcp.rfc3042` arrived in the 5.x line),
    /// ns-2 Full-TCP never implemented it (ns-2's `singledup_` belongs to the one-way
    /// agents). Linux implements it unconditionally (no sysctl turns it off).
    #[serde(default)]
    pub limited_transmit: bool,
    /// `"reno"` (the stack's own Reno, every historic preset), `"linux_reno"`, `"cubic"` or
    /// `"dctcp"` (Linux's algorithms and window accounting; docs/tcp.md).
    #[serde(default)]
    pub congestion_control: CongestionControl,
    /// HyStart (Linux `tcp_cubic.c` `hystart` = 1: ACK-train and delay-increase detection
    /// end slow start); only CUBIC has it.
    #[serde(default = "default_true")]
    pub hystart: bool,
    /// HyStart++ (RFC 9406) in the first slow start in place of CUBIC's HyStart, for any
    /// Linux congestion control (`tcp/hystart_pp.rs`); not a Linux default (Linux has no
    /// HyStart++).
    #[serde(default)]
    pub hystart_plus_plus: bool,
    /// Linux's `tcp_slow_start_after_idle` (1 by default; RFC 2861 §3's restart window): when
    /// the application writes to a connection that has sent nothing for longer than its RTO
    /// and has nothing in flight, ssthresh becomes `tcp_current_ssthresh` and cwnd is halved
    /// once per RTO of idle time, down to the initial window (`tcp_slow_start_after_idle_check`,
    /// `tcp_cwnd_restart`, net/ipv4/tcp_output.c). Not for algorithms that set cwnd themselves
    /// (`cong_control`: BBR, Prague). Linux endpoints only; the Linux presets set it.
    #[serde(default)]
    pub slow_start_after_idle: bool,
    /// Proportional Rate Reduction (RFC 9937; Linux `tcp_cwnd_reduction`, always on in Linux)
    /// during SACK recovery and ECE reductions, `tcp/prr.rs`; off: cwnd = ssthresh at once.
    /// Ignored with `congestion_control = "reno"`.
    #[serde(default)]
    pub prr: bool,
    /// RACK-TLP loss detection (RFC 8985; Linux `tcp_recovery` = 1, `tcp_early_retrans` = 3),
    /// `tcp/rack.rs`: time-based loss marking with a reordering window and its timer, and
    /// tail loss probes. Used by the Linux algorithms on SACK connections; ignored with
    /// `congestion_control = "reno"`.
    #[serde(default)]
    pub rack_tlp: bool,
    /// F-RTO (RFC 5682, SACK-enhanced, as Linux runs it with `tcp_frto` = 2) after a
    /// retransmission timeout, and the undo of the timeout's reduction when F-RTO finds it
    /// spurious (`tcp_process_loss`, `tcp_try_undo_loss`; `tcp/undo.rs`). Used where the
    /// model runs the kernel's loss state after a timeout (BBR with RACK-TLP on SACK
    /// connections); ignored elsewhere. True in the Linux presets.
    #[serde(default)]
    pub frto: bool,
    /// TCP-internal pacing as Linux does it without `sch_fq` (`tcp_pacing_check`,
    /// `tcp_update_skb_after_send`): data segments, retransmissions included, leave at most
    /// at the pacing rate, 200 % of cwnd/SRTT in slow start and 120 % otherwise
    /// (`tcp_update_pacing_rate`); the first 10 data segments are not paced. Linux
    /// congestion controls only; BBR always paces, at its own rate.
    #[serde(default)]
    pub pacing: bool,
    /// Accurate ECN (RFC 9768, `tcp/accecn.rs`): the SYN asks for it (AE, CWR, ECE) and a
    /// server answers it; the ACE counter then replaces ECE/CWR. Falls back to RFC 3168 ECN
    /// or none as the peer answers. Needs `ecn`; for `linux_reno`, `cubic` and `prague`.
    #[serde(default)]
    pub accecn: bool,
    /// Prague's RTT independence (`tcp_prague.c` `prague_ai_ack_increase`, the module's
    /// `RTT_CONTROL_RATE`): after `prague_rtt_transition` rounds, growth of one segment per
    /// target RTT for flows with a shorter RTT. false: the unscaled 1/W per ACK.
    #[serde(default = "default_true")]
    pub prague_rtt_scaling: bool,
    /// Prague's target RTT (`prague_rtt_target`, 25 ms), milliseconds.
    #[serde(default = "default_prague_rtt_target_ms")]
    pub prague_rtt_target_ms: f64,
    /// Rounds out of slow start before Prague becomes RTT-independent
    /// (`prague_rtt_transition`, 4).
    #[serde(default = "default_prague_rtt_transition")]
    pub prague_rtt_transition: u32,
    /// The version of `tcp_prague.c` followed (`"893e147"`, the default, or `"b256dae"`).
    #[serde(default)]
    pub prague_version: PragueVersion,
    /// The times above as nanoseconds and jiffies, once `prepare`d (`tcp/config_times.rs`):
    /// a cache, not part of the configuration (never serialized, always equal).
    #[serde(skip)]
    pub times: ConfigTimes,
}

impl TcpConfig {
    /// Data segments are paced: `pacing`, or BBR or Prague (which always pace).
    #[inline]
    pub fn paced(&self) -> bool {
        self.pacing
            || matches!(
                self.congestion_control,
                CongestionControl::Bbr | CongestionControl::Prague
            )
    }

    /// Converts the times once (`tcp/config_times.rs`): the accessors below then read them.
    pub fn prepare(&mut self) {
        self.times = ConfigTimes::new(
            self.tick_ms,
            self.delack_interval_ms,
            self.min_rto_s,
            self.max_rto_s,
            self.initial_rto_s,
        );
    }

    #[inline]
    pub fn tick(&self) -> Time {
        self.times.tick.get(self.tick_ms, MS)
    }
    #[inline]
    pub fn delack_interval(&self) -> Time {
        self.times.delack_interval.get(self.delack_interval_ms, MS)
    }
    #[inline]
    pub fn min_rto(&self) -> Time {
        self.times.min_rto.get(self.min_rto_s, SEC)
    }
    #[inline]
    pub fn max_rto(&self) -> Time {
        self.times.max_rto.get(self.max_rto_s, SEC)
    }
    #[inline]
    pub fn initial_rto(&self) -> Time {
        self.times.initial_rto.get(self.initial_rto_s, SEC)
    }

    /// The delayed-ACK engine's constants in jiffies (`TCP_ATO_MIN` = `delack_interval_ms`,
    /// `TCP_DELACK_MAX` = 200 ms, HZ/2).
    #[inline]
    pub fn ack_jiffies(&self) -> AckJiffies {
        let from = (self.tick_ms.to_bits(), self.delack_interval_ms.to_bits());
        if self.times.ack.valid_for(from) {
            self.times.ack
        } else {
            AckJiffies::of(self.tick(), self.delack_interval(), from)
        }
    }

    /// Initial congestion window in bytes (RFC 3390 when `initial_window` is 0).
    pub fn initial_cwnd(&self) -> u64 {
        let mss = self.mss as u64;
        if self.initial_window == 0 {
            (4 * mss).min((2 * mss).max(4380))
        } else {
            self.initial_window as u64 * mss
        }
    }

    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let err = |f: &str, v: &dyn std::fmt::Display, a: &str| {
            Err(ConfigError::new(format!("{p}.{f}"), v, a))
        };
        if !(64..=65_495).contains(&self.mss) {
            return err("mss", &self.mss, "an integer in 64..=65495 (bytes)");
        }
        if self.header_bytes > 120 {
            return err("header_bytes", &self.header_bytes, "an integer in 0..=120");
        }
        if self.rwnd < self.mss {
            return err("rwnd", &self.rwnd, "at least one MSS (bytes)");
        }
        if self.initial_window > 64 {
            return err(
                "initial_window",
                &self.initial_window,
                "0 (RFC 3390) or 1..=64 segments",
            );
        }
        if self.initial_ssthresh < 2 * self.mss as u64 {
            return err(
                "initial_ssthresh",
                &self.initial_ssthresh,
                "at least 2·MSS bytes",
            );
        }
        if self.dupack_threshold == 0 {
            return err("dupack_threshold", &self.dupack_threshold, "an integer ≥ 1");
        }
        if !(self.delack_interval_ms > 0.0 && self.delack_interval_ms < 500.0) {
            return err(
                "delack_interval_ms",
                &self.delack_interval_ms,
                "a time in (0, 500) ms (RFC 1122 §4.2.3.2)",
            );
        }
        if !(self.tick_ms >= 0.001 && self.tick_ms <= 1000.0) {
            return err("tick_ms", &self.tick_ms, "a time in [0.001, 1000] ms");
        }
        if !(self.min_rto_s > 0.0 && self.min_rto_s <= self.max_rto_s) {
            return err("min_rto_s", &self.min_rto_s, "a time > 0 and ≤ max_rto_s");
        }
        if !(self.initial_rto_s > 0.0 && self.initial_rto_s <= 600.0) {
            return err("initial_rto_s", &self.initial_rto_s, "a time in (0, 600] s");
        }
        if self.max_rto_s > 3600.0 {
            return err("max_rto_s", &self.max_rto_s, "a time ≤ 3600 s");
        }
        if self.backoff.is_empty() || self.backoff.iter().any(|&b| b == 0 || b > 4096) {
            return err(
                "backoff",
                &format!("{:?}", self.backoff),
                "a non-empty list of integers in 1..=4096",
            );
        }
        if self.syn_backoff.iter().any(|&b| b == 0 || b > 4096) {
            return err(
                "syn_backoff",
                &format!("{:?}", self.syn_backoff),
                "integers in 1..=4096",
            );
        }
        if self.max_retries == 0 || (self.max_retries > 64 && self.max_retries != NEVER) {
            return err(
                "max_retries",
                &self.max_retries,
                "an integer in 1..=64, or \"never\"",
            );
        }
        if !(1..=64).contains(&self.delack_segments) {
            return err(
                "delack_segments",
                &self.delack_segments,
                "an integer in 1..=64",
            );
        }
        if !(1..=MAX_SACK_BLOCKS_ALLOWED).contains(&self.sack_max_blocks) {
            return err(
                "sack_max_blocks",
                &self.sack_max_blocks,
                "an integer in 1..=4 (RFC 2018 §3, no timestamps)",
            );
        }
        if self.congestion_control == CongestionControl::Ledbat && self.sack_max_blocks > 3 {
            return err(
                "sack_max_blocks",
                &self.sack_max_blocks,
                "an integer in 1..=3 with congestion_control = \"ledbat\" (its timestamp \
                 option takes the room of a fourth block)",
            );
        }
        if self.pacing && self.congestion_control == CongestionControl::Reno {
            return err(
                "pacing",
                &self.pacing,
                "false with congestion_control = \"reno\" (pacing is Linux's)",
            );
        }
        if self.connect_timeout_s.is_nan() || self.connect_timeout_s <= 0.0 {
            return err(
                "connect_timeout_s",
                &self.connect_timeout_s,
                "a time > 0 s, or \"never\"",
            );
        }
        // HyStart++ replaces the window-based slow start of Linux's Reno, CUBIC and DCTCP;
        // the stacks' own Reno has no such hook and BBR has its own STARTUP, so there it
        // would be a silent no-op.
        if self.hystart_plus_plus
            && matches!(
                self.congestion_control,
                CongestionControl::Reno
                    | CongestionControl::Bbr
                    | CongestionControl::Prague
                    | CongestionControl::Ledbat
            )
        {
            let cc = format!("{:?}", self.congestion_control).to_lowercase();
            return err(
                "hystart_plus_plus",
                &true,
                &format!(
                    "false with congestion_control = \"{cc}\" (HyStart++ runs in \
                     linux_reno, cubic and dctcp)"
                ),
            );
        }
        let cc = format!("{:?}", self.congestion_control).to_lowercase();
        if self.accecn && !self.ecn {
            return err(
                "accecn",
                &true,
                "false unless ecn = true (AccECN is a form of ECN)",
            );
        }
        if self.accecn
            && !matches!(
                self.congestion_control,
                CongestionControl::LinuxReno | CongestionControl::Cubic | CongestionControl::Prague
            )
        {
            return err(
                "accecn",
                &true,
                &format!(
                    "false with congestion_control = \"{cc}\" (AccECN is modelled for \
                     linux_reno, cubic and prague)"
                ),
            );
        }
        if self.congestion_control == CongestionControl::Prague && !(self.ecn && self.accecn) {
            return err(
                "congestion_control",
                &"prague",
                "prague only with ecn = true and accecn = true (Prague needs AccECN feedback)",
            );
        }
        if !(self.prague_rtt_target_ms > 0.0 && self.prague_rtt_target_ms <= 1000.0) {
            return err(
                "prague_rtt_target_ms",
                &self.prague_rtt_target_ms,
                "a time in (0, 1000] ms",
            );
        }
        if self.prague_rtt_transition > 1_000_000 {
            return err(
                "prague_rtt_transition",
                &self.prague_rtt_transition,
                "an integer in 0..=1000000 (rounds)",
            );
        }
        Ok(())
    }
}
