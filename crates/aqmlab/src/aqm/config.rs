//! Scenario-level description of a queue discipline, validated and turned into an `Aqm`.
//!
//! `[queue] kind = "..."` in a scenario selects a variant; the remaining keys are that
//! discipline's parameters (unknown keys are rejected). Each variant validates its own fields
//! and reports the first problem as `ConfigError { field, value, allowed }`, the field named
//! `<prefix>.<key>`. Defaults are documented per field and in docs/queues.md; where a
//! default says "ns-2" it is the ns-2.35 `ns-default.tcl` value.
//!
//! Thresholds and limits of RED, GRED-I, ARED and PI are given in **packets**; when the queue
//! is measured in bytes they are multiplied by `mean_pkt_size` (as ns-2 does).

use serde::{Deserialize, Serialize};

use super::ared::{Ared, AredMode, AredParams};
use super::cake::config::CakeConfig;
use super::cake::Cake;
use super::codel::{Codel, CodelParams};
use super::defaults::{d_1000, d_15, d_1500_u32, d_20_u32, d_2_u32};
use super::dualpi2::{DualPi2, DualPi2Params};
use super::fq_codel::{CeThreshold, FqCodel, FqCodelParams};
use super::fq_pie::{FqPie, FqPieParams};
use super::pi::{self, Pi, PiParams};
use super::pie::{Pie, PieEstimator, PieParams};
use super::pie_linux::LinuxPieParams;
use super::red::{auto, EcnPolicy, Red, RedParams};
use super::red_linux::config::RedLinuxConfig;
use super::red_linux::RedLinux;
use super::rem::{Rem, RemParams};
use super::sch_pie::PieLinuxConfig;
use super::{Aqm, DropTail, QueueUnit};
use crate::config::error::ConfigError;
use crate::units::{millis, secs, BitsPerSec, Time};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// FIFO with a finite buffer. (Aliases: the spellings `aqmlab rfc7928 --aqm` takes, so a
    /// name works the same in a scenario and on that command line.)
    #[serde(alias = "drop-tail", alias = "fifo")]
    Droptail {
        /// Buffer size, in `unit`s.
        limit: u64,
        #[serde(default = "default_unit")]
        unit: QueueUnit,
    },
    /// RED as in ns-2.35.
    Red(RedConfig),
    /// Gentle RED on the instantaneous queue (w_q = 1).
    GredI(GredIConfig),
    /// Adaptive RED.
    Ared(AredConfig),
    /// PI controller.
    Pi(PiConfig),
    /// Random Exponential Marking.
    Rem(RemConfig),
    /// CoDel on one FIFO.
    Codel(CodelConfig),
    /// PIE.
    Pie(PieConfig),
    /// FQ-CoDel.
    #[serde(alias = "fq-codel")]
    FqCodel(FqCodelConfig),
    /// DualPI2 (RFC 9332, Linux sch_dualpi2).
    Dualpi2(DualPi2Config),
    /// CAKE (Linux sch_cake, tc-cake keywords).
    Cake(CakeConfig),
    /// FQ-PIE (Linux sch_fq_pie).
    #[serde(alias = "fq-pie")]
    FqPie(FqPieConfig),
    /// RED as Linux's sch_red (tc-red keywords).
    RedLinux(RedLinuxConfig),
    /// Linux's own sch_pie with tc's keys (`aqm/sch_pie.rs`).
    PieLinux(PieLinuxConfig),
}

fn default_unit() -> QueueUnit {
    QueueUnit::Packets
}

/// RED's EWMA weight: a number in (0, 1] or one of ns-2's automatic rules.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Weight {
    Value(f64),
    Auto(WeightRule),
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WeightRule {
    /// `1 − exp(−1/C)`, C in mean-size packets/s (ns-2 `q_weight_ 0`; ARED).
    #[serde(rename = "auto_1s")]
    Auto1s,
    /// `1 − exp(−1/(10·RTT·C))`, `RTT = max(0.1 s, 3·(link_delay + 1/C))` (ns-2.35 default,
    /// `q_weight_ −1`).
    AutoRtt,
    /// `1 − exp(−10/C)` (ns-2 `q_weight_ −2`).
    AutoFast,
}

impl Weight {
    fn resolve(self, ptc: f64, link_delay_s: f64) -> f64 {
        match self {
            Weight::Value(w) => w,
            Weight::Auto(WeightRule::Auto1s) => auto::w_q_1s(ptc),
            Weight::Auto(WeightRule::AutoRtt) => auto::w_q_rtt(ptc, link_delay_s),
            Weight::Auto(WeightRule::AutoFast) => auto::w_q_fast(ptc),
        }
    }
}

/// Which GRED-I threshold convention (docs/queues.md, model-facts §1.7).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GredThresholds {
    /// `max_th = limit`: linear ramp 0 → max_p on [min_th, limit], then overflow.
    MaxThIsBuffer,
    /// `max_th = limit/2`: the gentle ramp reaches 1 exactly when the buffer is full.
    RampEndsAtBuffer,
}

/// `[queue] kind = "red"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Buffer, packets (× mean_pkt_size bytes when `queue_in_bytes`). Required.
    pub limit: u64,
    /// Lower threshold, packets. Default: automatic, `max(5, target_delay·C/2)` (ns-2).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// Upper threshold, packets. Default: `3·min_th` (ns-2).
    #[serde(default)]
    pub max_th: Option<f64>,
    /// Maximum early-drop probability at max_th. Default 0.1 (ns-2 `linterm_ 10`).
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// EWMA weight: a number or "auto_1s" / "auto_rtt" / "auto_fast". Default "auto_rtt"
    /// (ns-2.35).
    #[serde(default = "d_w_auto_rtt")]
    pub w_q: Weight,
    /// Gentle ramp from max_p at max_th to 1 at 2·max_th. Default true (ns-2).
    #[serde(default = "d_true")]
    pub gentle: bool,
    /// ns-2 `wait_`. Default true.
    #[serde(default = "d_true")]
    pub wait: bool,
    /// Average, thresholds and limit in bytes. Default true (ns-2.35).
    #[serde(default = "d_true")]
    pub queue_in_bytes: bool,
    /// Drop probability scaled by size/mean_pkt_size. Default true (ns-2.35).
    #[serde(default = "d_true")]
    pub byte_mode: bool,
    /// Bytes. Default: the scenario's mean packet size (the `build` argument).
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
    /// Queueing delay target for the automatic min_th, ms. Default 5.
    #[serde(default = "d_5")]
    pub target_delay_ms: f64,
    /// Bottleneck one-way delay for `w_q = "auto_rtt"`, ms. Default: the link's delay when
    /// built with `build_for_link`, else 0.
    #[serde(default)]
    pub link_delay_ms: Option<f64>,
    /// "off", "rfc3168", "new_gentle" or "mark_p". Default "off".
    #[serde(default = "d_ecn_off")]
    pub ecn: EcnPolicy,
    /// Mark only while p_b < mark_p (ecn = "mark_p"). Default 0.1 (ns-2).
    #[serde(default = "d_max_p")]
    pub mark_p: f64,
}

/// `[queue] kind = "gred_i"`: RED with `w_q = 1`, gentle, instantaneous queue.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GredIConfig {
    /// Buffer B, packets. Required.
    pub limit: u64,
    /// Lower threshold, packets. Required.
    pub min_th: f64,
    /// "max_th_is_buffer" (max_th = B) or "ramp_ends_at_buffer" (max_th = B/2). Default
    /// "max_th_is_buffer".
    #[serde(default = "d_gred")]
    pub thresholds: GredThresholds,
    /// Default 0.1.
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// Default true.
    #[serde(default = "d_true")]
    pub wait: bool,
    /// Default false (packets).
    #[serde(default)]
    pub queue_in_bytes: bool,
    /// Default false.
    #[serde(default)]
    pub byte_mode: bool,
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
    /// Default "off".
    #[serde(default = "d_ecn_off")]
    pub ecn: EcnPolicy,
    /// Default 0.1.
    #[serde(default = "d_max_p")]
    pub mark_p: f64,
}

/// `[queue] kind = "ared"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AredConfig {
    /// Buffer, packets (× mean_pkt_size bytes when `queue_in_bytes`). Required.
    pub limit: u64,
    /// Default: `max(5, target_delay·C/2)` packets.
    #[serde(default)]
    pub min_th: Option<f64>,
    /// Default: `3·min_th`.
    #[serde(default)]
    pub max_th: Option<f64>,
    /// ms. Default 5.
    #[serde(default = "d_5")]
    pub target_delay_ms: f64,
    /// "ns2" (event-driven) or "timer" (paper/Linux). Default "ns2".
    #[serde(default = "d_ared_mode")]
    pub mode: AredMode,
    /// Adaptation interval, s. Default 0.5.
    #[serde(default = "d_half")]
    pub interval_s: f64,
    /// Additive step cap. Default 0.01.
    #[serde(default = "d_alpha_ared")]
    pub alpha: f64,
    /// Multiplicative decrease. Default 0.9.
    #[serde(default = "d_beta_ared")]
    pub beta: f64,
    /// Upper bound of max_p. Default 0.5.
    #[serde(default = "d_half")]
    pub top: f64,
    /// Lower bound of max_p. Default: ns2 mode `min(0.01, 80000/link_bps)`, timer mode 0.01.
    #[serde(default)]
    pub bottom: Option<f64>,
    /// Initial max_p. Default 0.1.
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// Default "auto_1s" (`1 − exp(−1/C)`).
    #[serde(default = "d_w_auto_1s")]
    pub w_q: Weight,
    /// Default true.
    #[serde(default = "d_true")]
    pub gentle: bool,
    /// Default true.
    #[serde(default = "d_true")]
    pub wait: bool,
    /// Default true (ns-2.35).
    #[serde(default = "d_true")]
    pub queue_in_bytes: bool,
    /// Default true (ns-2.35).
    #[serde(default = "d_true")]
    pub byte_mode: bool,
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
    /// Default "off".
    #[serde(default = "d_ecn_off")]
    pub ecn: EcnPolicy,
    /// Default 0.1.
    #[serde(default = "d_max_p")]
    pub mark_p: f64,
}

/// `[queue] kind = "pi"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PiConfig {
    /// Buffer, packets (× mean_pkt_size bytes when `queue_in_bytes`). Required.
    pub limit: u64,
    /// Coefficients; both or neither. Default (neither, no design): 1.822e-5 and 1.816e-5 (ns-2).
    #[serde(default)]
    pub a: Option<f64>,
    #[serde(default)]
    pub b: Option<f64>,
    /// Sampling frequency, Hz. Default 170 (ns-2; the paper used 160).
    #[serde(default = "d_170")]
    pub sample_hz: f64,
    /// Reference queue, packets. Default 50 (ns-2; the paper used 200).
    #[serde(default = "d_50")]
    pub q_ref: f64,
    /// Design a, b from the link capacity, at least `design_n_min` flows and round-trips at
    /// most `design_rtt_max_s` (both or neither; excludes a, b).
    #[serde(default)]
    pub design_n_min: Option<f64>,
    #[serde(default)]
    pub design_rtt_max_s: Option<f64>,
    /// Unity-gain crossover, rad/s. Default: the controller zero `2N⁻/(R⁺²C)`.
    #[serde(default)]
    pub design_omega_g: Option<f64>,
    /// Default false.
    #[serde(default)]
    pub queue_in_bytes: bool,
    /// Default false.
    #[serde(default)]
    pub byte_mode: bool,
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
    /// Mark ECT packets instead of dropping. Default false.
    #[serde(default)]
    pub ecn: bool,
}

/// `[queue] kind = "rem"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemConfig {
    /// Buffer, packets. Required.
    pub limit: u32,
    /// Default 0.001.
    #[serde(default = "d_gamma")]
    pub gamma: f64,
    /// Default 1.001.
    #[serde(default = "d_phi")]
    pub phi: f64,
    /// Default 0.1.
    #[serde(default = "d_max_p")]
    pub alpha: f64,
    /// Target backlog b*, packets. Default 20.
    #[serde(default = "d_20")]
    pub b_ref: f64,
    /// Price update interval, ms. Default 2.
    #[serde(default = "d_2")]
    pub interval_ms: f64,
    /// Weight of the newest input-rate sample. Default 1 (no smoothing).
    #[serde(default = "d_1")]
    pub w_in: f64,
    /// Default false.
    #[serde(default)]
    pub byte_mode: bool,
    /// Mark ECT packets instead of dropping them. Default false.
    #[serde(default)]
    pub mark: bool,
    /// With `mark`: "ns2" (default; ECT marked at dequeue, non-ECT never early-dropped) or
    /// "altq" (decided at enqueue: ECT marked, non-ECT dropped).
    #[serde(default)]
    pub mark_policy: super::rem::RemMarkPolicy,
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
}

/// `[queue] kind = "codel"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    /// Packets. Default 1000 (Linux).
    #[serde(default = "d_1000")]
    pub limit: u32,
    /// ms. Default 5.
    #[serde(default = "d_5")]
    pub target_ms: f64,
    /// ms. Default 100.
    #[serde(default = "d_100")]
    pub interval_ms: f64,
    /// Bytes. Default 1500.
    #[serde(default = "d_1500")]
    pub mtu: u64,
    /// Default false.
    #[serde(default)]
    pub ecn: bool,
}

/// `[queue] kind = "pie"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    /// Packets. Default 1000 (Linux).
    #[serde(default = "d_1000")]
    pub limit: u32,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub target_ms: f64,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub t_update_ms: f64,
    /// 1/s. Default 0.125.
    #[serde(default = "d_alpha_pie")]
    pub alpha: f64,
    /// 1/s. Default 1.25.
    #[serde(default = "d_beta_pie")]
    pub beta: f64,
    /// ms. Default 150.
    #[serde(default = "d_150")]
    pub max_burst_ms: f64,
    /// Bytes. Default 16384.
    #[serde(default = "d_dq")]
    pub dq_threshold: u64,
    /// "departure_rate" or "timestamp". Default "departure_rate" (RFC 8033).
    #[serde(default = "d_pie_est")]
    pub estimator: PieEstimator,
    /// Default true.
    #[serde(default = "d_true")]
    pub derandomize: bool,
    /// Default false.
    #[serde(default)]
    pub ecn: bool,
    /// Mark only while p ≤ this. Default 0.1.
    #[serde(default = "d_max_p")]
    pub ecn_max_p: f64,
    /// p·size/mtu per packet. Default false.
    #[serde(default)]
    pub byte_mode: bool,
    /// Bytes. Default 1500.
    #[serde(default = "d_1500_u32")]
    pub mtu: u32,
    #[serde(default)]
    pub mean_pkt_size: Option<u32>,
}

/// `[queue] kind = "fq_codel"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Default 1024.
    #[serde(default = "d_1024")]
    pub flows: u32,
    /// Bytes. Default 1514.
    #[serde(default = "d_1514")]
    pub quantum: u32,
    /// Packets. Default 10240.
    #[serde(default = "d_10240")]
    pub limit: u32,
    /// Bytes. Default 33554432 (32 MiB).
    #[serde(default = "d_mem")]
    pub memory_limit: u64,
    /// Default 64.
    #[serde(default = "d_64")]
    pub drop_batch: u32,
    /// ms. Default 5.
    #[serde(default = "d_5")]
    pub target_ms: f64,
    /// ms. Default 100.
    #[serde(default = "d_100")]
    pub interval_ms: f64,
    /// Bytes. Default 1514.
    #[serde(default = "d_1514_u64")]
    pub mtu: u64,
    /// Default true (Linux).
    #[serde(default = "d_true")]
    pub ecn: bool,
    /// ms: CE-mark ECT packets leaving with a longer sojourn (tc `ce_threshold`). Default
    /// absent (off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ms: Option<f64>,
    /// DS-byte value the masked DS byte must equal (tc `ce_threshold_selector VALUE/MASK`);
    /// only the ECN bits, 0 to 3. Default absent (every ECT packet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_selector: Option<u32>,
    /// The MASK of tc's `ce_threshold_selector`, 0 to 3. Default absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_mask: Option<u32>,
}

/// `[queue] kind = "fq_pie"`. Keys are tc's (`tc-fq_pie`), times with a `_ms` suffix;
/// defaults are Linux's `fq_pie_init` and `pie_params_init`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqPieConfig {
    /// Packets in all flows. Default 10240.
    #[serde(default = "d_10240")]
    pub limit: u32,
    /// Default 1024.
    #[serde(default = "d_1024")]
    pub flows: u32,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub target_ms: f64,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub tupdate_ms: f64,
    /// 1/16 s⁻¹, an integer in [0, 32]. Default 2 (0.125/s).
    #[serde(default = "d_2_u32")]
    pub alpha: u32,
    /// 1/16 s⁻¹, an integer in [0, 32]. Default 20 (1.25/s).
    #[serde(default = "d_20_u32")]
    pub beta: u32,
    /// Bytes. Default 1500 (the IP MTU; Linux's `psched_mtu` 1514 counts the Ethernet
    /// header).
    #[serde(default = "d_1500_u32")]
    pub quantum: u32,
    /// Bytes, only counted (`overmemory`). Default 33554432 (32 MiB).
    #[serde(default = "d_mem")]
    pub memory_limit: u64,
    /// %: mark instead of drop while the flow's probability is at most this. Default 10.
    #[serde(default = "d_10_u32")]
    pub ecn_prob: u32,
    /// Default false (Linux).
    #[serde(default)]
    pub ecn: bool,
    /// Default false.
    #[serde(default)]
    pub bytemode: bool,
    /// Delay from the departure rate instead of timestamps. Default false.
    #[serde(default)]
    pub dq_rate_estimator: bool,
    /// Bytes, IP MTU for the 2-MTU backlog floor and byte mode. Default 1500.
    #[serde(default = "d_1500_u32")]
    pub mtu: u32,
}

/// `[queue] kind = "dualpi2"`. Keys are tc's (`tc-dualpi2`), times with a `_ms` suffix;
/// defaults are Linux's `dualpi2_reset_default`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// Packets in both queues. Default 10000.
    #[serde(default = "d_10000")]
    pub limit: u32,
    /// ms. Default 15.
    #[serde(default = "d_15")]
    pub target_ms: f64,
    /// ms. Default 16.
    #[serde(default = "d_16")]
    pub tupdate_ms: f64,
    /// 1/s, per update. Default 0.16.
    #[serde(default = "d_alpha_dualpi2")]
    pub alpha: f64,
    /// 1/s, per update. Default 3.2.
    #[serde(default = "d_beta_dualpi2")]
    pub beta: f64,
    /// ms of L-queue sojourn. Default 1.
    #[serde(default = "d_1")]
    pub step_thresh_ms: f64,
    /// k, an integer in [1, 255]. Default 2.
    #[serde(default = "d_2_u32")]
    pub coupling_factor: u32,
    /// C queue's scheduler weight in %, [0, 100]. Default 10.
    #[serde(default = "d_10_u32")]
    pub c_protection: u32,
    /// Drop (true, tc `drop_on_overload`) or keep marking L (false, tc `overflow`). Default true.
    #[serde(default = "d_true")]
    pub drop_on_overload: bool,
    /// Mark/drop at enqueue (tc `drop_enqueue`) instead of dequeue (`drop_dequeue`). Default
    /// false.
    #[serde(default)]
    pub drop_enqueue: bool,
    /// Bytes, IP MTU (Linux: 1514 with the Ethernet header its packet lengths include).
    /// Default 1500.
    #[serde(default = "d_1500_u32")]
    pub mtu: u32,
    /// tc `min_qlen_step`: the step marks an L packet only if the L queue held at least this
    /// many packets when it arrived (upstream `skb_apply_step`). Default 0 (always, upstream's
    /// default); the L4S team's out-of-tree qdisc of the 2020 testbeds applied it only with
    /// more than one packet queued ("only apply the step if a queue is building up"), i.e. 2.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub min_qlen_step: u32,
    /// Linux's integer probability and rolls (sch_dualpi2.c, which the model matches decision
    /// by decision with it, validation/linux_qdisc) instead of RFC 9332's real-valued PI².
    /// Default true: the reference implementation's arithmetic (its gains are those tc can
    /// send, Hz × 256 rounded); false gives the RFC's f64 arithmetic with any gains.
    #[serde(
        default = "linux_arithmetic",
        skip_serializing_if = "is_linux_arithmetic"
    )]
    pub linux_fixed_point: bool,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn linux_arithmetic() -> bool {
    true
}

fn is_linux_arithmetic(v: &bool) -> bool {
    *v
}

/// Linux `ALPHA_BETA_MAX` (sch_dualpi2.c): the largest α or β tc may send (Hz × 256).
const ALPHA_BETA_MAX_TC: f64 = 2_147_483_647.0;

fn d_10000() -> u32 {
    10_000
}
fn d_16() -> f64 {
    16.0
}
fn d_alpha_dualpi2() -> f64 {
    0.16
}
fn d_beta_dualpi2() -> f64 {
    3.2
}
fn d_10_u32() -> u32 {
    10
}

fn d_true() -> bool {
    true
}
fn d_max_p() -> f64 {
    0.1
}
fn d_w_auto_rtt() -> Weight {
    Weight::Auto(WeightRule::AutoRtt)
}
fn d_w_auto_1s() -> Weight {
    Weight::Auto(WeightRule::Auto1s)
}
fn d_5() -> f64 {
    5.0
}
fn d_ecn_off() -> EcnPolicy {
    EcnPolicy::Off
}
fn d_gred() -> GredThresholds {
    GredThresholds::MaxThIsBuffer
}
fn d_ared_mode() -> AredMode {
    AredMode::Ns2
}
fn d_half() -> f64 {
    0.5
}
fn d_alpha_ared() -> f64 {
    0.01
}
fn d_beta_ared() -> f64 {
    0.9
}
fn d_170() -> f64 {
    170.0
}
fn d_50() -> f64 {
    50.0
}
fn d_gamma() -> f64 {
    0.001
}
fn d_phi() -> f64 {
    1.001
}
fn d_20() -> f64 {
    20.0
}
fn d_2() -> f64 {
    2.0
}
fn d_1() -> f64 {
    1.0
}
fn d_100() -> f64 {
    100.0
}
fn d_1500() -> u64 {
    1500
}
fn d_alpha_pie() -> f64 {
    0.125
}
fn d_beta_pie() -> f64 {
    1.25
}
fn d_150() -> f64 {
    150.0
}
fn d_dq() -> u64 {
    16384
}
fn d_pie_est() -> PieEstimator {
    PieEstimator::DepartureRate
}
fn d_1024() -> u32 {
    1024
}
fn d_1514() -> u32 {
    1514
}
fn d_1514_u64() -> u64 {
    1514
}
fn d_10240() -> u32 {
    10240
}
fn d_mem() -> u64 {
    32 << 20
}
fn d_64() -> u32 {
    64
}

// ---- validation helpers ----

type R = Result<(), ConfigError>;

fn err(prefix: &str, field: &str, value: impl std::fmt::Display, allowed: &str) -> ConfigError {
    ConfigError::new(format!("{prefix}.{field}"), value, allowed)
}

fn positive(prefix: &str, field: &str, v: f64) -> R {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(err(prefix, field, v, "a finite number > 0"))
    }
}

fn non_negative(prefix: &str, field: &str, v: f64) -> R {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(err(prefix, field, v, "a finite number ≥ 0"))
    }
}

/// In (0, 1].
fn prob(prefix: &str, field: &str, v: f64) -> R {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(err(prefix, field, v, "a probability in (0, 1]"))
    }
}

fn at_least_one(prefix: &str, field: &str, v: u64) -> R {
    if v >= 1 {
        Ok(())
    } else {
        Err(err(prefix, field, v, "an integer ≥ 1"))
    }
}

fn mean_size(prefix: &str, v: Option<u32>) -> R {
    match v {
        Some(0) => Err(err(prefix, "mean_pkt_size", 0, "an integer ≥ 1 (bytes)")),
        _ => Ok(()),
    }
}

fn weight(prefix: &str, w: Weight) -> R {
    match w {
        Weight::Value(v) => prob(prefix, "w_q", v),
        Weight::Auto(_) => Ok(()),
    }
}

/// min_th < max_th ≤ limit for whichever are explicit.
fn thresholds(prefix: &str, min_th: Option<f64>, max_th: Option<f64>, limit: u64) -> R {
    if let Some(lo) = min_th {
        non_negative(prefix, "min_th", lo)?;
        if lo >= limit as f64 {
            return Err(err(prefix, "min_th", lo, &format!("< limit ({limit})")));
        }
    }
    if let Some(hi) = max_th {
        positive(prefix, "max_th", hi)?;
        if let Some(lo) = min_th {
            if hi <= lo {
                return Err(err(prefix, "max_th", hi, &format!("> min_th ({lo})")));
            }
        }
        if hi > limit as f64 {
            return Err(err(prefix, "max_th", hi, &format!("≤ limit ({limit})")));
        }
    }
    Ok(())
}

impl RedConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit)?;
        thresholds(p, self.min_th, self.max_th, self.limit)?;
        prob(p, "max_p", self.max_p)?;
        weight(p, self.w_q)?;
        mean_size(p, self.mean_pkt_size)?;
        positive(p, "target_delay_ms", self.target_delay_ms)?;
        if let Some(d) = self.link_delay_ms {
            non_negative(p, "link_delay_ms", d)?;
        }
        prob(p, "mark_p", self.mark_p)
    }
}

impl GredIConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit)?;
        let max_th = match self.thresholds {
            GredThresholds::MaxThIsBuffer => self.limit as f64,
            GredThresholds::RampEndsAtBuffer => self.limit as f64 / 2.0,
        };
        non_negative(p, "min_th", self.min_th)?;
        if self.min_th >= max_th {
            return Err(err(
                p,
                "min_th",
                self.min_th,
                &format!("< max_th ({max_th}, from limit and thresholds)"),
            ));
        }
        prob(p, "max_p", self.max_p)?;
        mean_size(p, self.mean_pkt_size)?;
        prob(p, "mark_p", self.mark_p)
    }
}

impl AredConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit)?;
        thresholds(p, self.min_th, self.max_th, self.limit)?;
        positive(p, "target_delay_ms", self.target_delay_ms)?;
        positive(p, "interval_s", self.interval_s)?;
        prob(p, "alpha", self.alpha)?;
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(err(p, "beta", self.beta, "a number in (0, 1)"));
        }
        prob(p, "top", self.top)?;
        if let Some(b) = self.bottom {
            prob(p, "bottom", b)?;
            if b >= self.top {
                return Err(err(p, "bottom", b, &format!("< top ({})", self.top)));
            }
        }
        prob(p, "max_p", self.max_p)?;
        weight(p, self.w_q)?;
        mean_size(p, self.mean_pkt_size)?;
        prob(p, "mark_p", self.mark_p)
    }
}

impl PiConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit)?;
        match (self.a, self.b) {
            (Some(a), Some(b)) => {
                positive(p, "a", a)?;
                positive(p, "b", b)?;
                if self.design_n_min.is_some() || self.design_rtt_max_s.is_some() {
                    return Err(err(
                        p,
                        "design_n_min",
                        "set",
                        "absent when a and b are given",
                    ));
                }
            },
            (None, None) => {},
            (Some(a), None) => return Err(err(p, "b", "missing", &format!("given with a ({a})"))),
            (None, Some(b)) => return Err(err(p, "a", "missing", &format!("given with b ({b})"))),
        }
        match (self.design_n_min, self.design_rtt_max_s) {
            (Some(n), Some(r)) => {
                positive(p, "design_n_min", n)?;
                positive(p, "design_rtt_max_s", r)?;
            },
            (None, None) => {},
            (Some(_), None) => {
                return Err(err(
                    p,
                    "design_rtt_max_s",
                    "missing",
                    "given with design_n_min",
                ))
            },
            (None, Some(_)) => {
                return Err(err(
                    p,
                    "design_n_min",
                    "missing",
                    "given with design_rtt_max_s",
                ))
            },
        }
        if let Some(w) = self.design_omega_g {
            positive(p, "design_omega_g", w)?;
        }
        positive(p, "sample_hz", self.sample_hz)?;
        non_negative(p, "q_ref", self.q_ref)?;
        if self.q_ref >= self.limit as f64 {
            return Err(err(
                p,
                "q_ref",
                self.q_ref,
                &format!("< limit ({})", self.limit),
            ));
        }
        mean_size(p, self.mean_pkt_size)
    }
}

impl RemConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit as u64)?;
        positive(p, "gamma", self.gamma)?;
        if !(self.phi.is_finite() && self.phi > 1.0) {
            return Err(err(p, "phi", self.phi, "a number > 1"));
        }
        positive(p, "alpha", self.alpha)?;
        non_negative(p, "b_ref", self.b_ref)?;
        positive(p, "interval_ms", self.interval_ms)?;
        prob(p, "w_in", self.w_in)?;
        mean_size(p, self.mean_pkt_size)
    }
}

fn codel_common(p: &str, target_ms: f64, interval_ms: f64) -> R {
    positive(p, "target_ms", target_ms)?;
    positive(p, "interval_ms", interval_ms)?;
    if target_ms >= interval_ms {
        return Err(err(
            p,
            "target_ms",
            target_ms,
            &format!("< interval_ms ({interval_ms})"),
        ));
    }
    Ok(())
}

impl CodelConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit as u64)?;
        codel_common(p, self.target_ms, self.interval_ms)?;
        at_least_one(p, "mtu", self.mtu)
    }
}

impl PieConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit as u64)?;
        positive(p, "target_ms", self.target_ms)?;
        positive(p, "t_update_ms", self.t_update_ms)?;
        positive(p, "alpha", self.alpha)?;
        positive(p, "beta", self.beta)?;
        non_negative(p, "max_burst_ms", self.max_burst_ms)?;
        at_least_one(p, "dq_threshold", self.dq_threshold)?;
        prob(p, "ecn_max_p", self.ecn_max_p)?;
        at_least_one(p, "mtu", self.mtu as u64)?;
        mean_size(p, self.mean_pkt_size)
    }
}

impl FqCodelConfig {
    fn validate(&self, p: &str) -> R {
        if !(1..=65536).contains(&self.flows) {
            return Err(err(p, "flows", self.flows, "an integer in [1, 65536]"));
        }
        at_least_one(p, "quantum", self.quantum as u64)?;
        at_least_one(p, "limit", self.limit as u64)?;
        at_least_one(p, "memory_limit", self.memory_limit)?;
        at_least_one(p, "drop_batch", self.drop_batch as u64)?;
        codel_common(p, self.target_ms, self.interval_ms)?;
        at_least_one(p, "mtu", self.mtu)?;
        self.validate_ce_threshold(p)
    }

    /// Only the ECN bits of the DS byte exist here: a mask or selector with DSCP bits is
    /// refused rather than silently never matching.
    fn validate_ce_threshold(&self, p: &str) -> R {
        if let Some(t) = self.ce_threshold_ms {
            non_negative(p, "ce_threshold_ms", t)?;
        }
        let ecn_bits = "0 to 3, the ECN bits of the DS byte (DSCP is not modelled)";
        for (key, v) in [
            ("ce_threshold_mask", self.ce_threshold_mask),
            ("ce_threshold_selector", self.ce_threshold_selector),
        ] {
            match v {
                Some(v) if v > 3 => return Err(err(p, key, v, ecn_bits)),
                Some(v) if self.ce_threshold_ms.is_none() => {
                    return Err(err(p, key, v, "only with ce_threshold_ms"))
                },
                _ => {},
            }
        }
        let mask = self.ce_threshold_mask.unwrap_or(0);
        match self.ce_threshold_selector {
            Some(sel) if sel & !mask != 0 => Err(err(
                p,
                "ce_threshold_selector",
                sel,
                &format!("bits within ce_threshold_mask ({mask}); others never match"),
            )),
            _ => Ok(()),
        }
    }

    fn ce_threshold(&self) -> Option<CeThreshold> {
        self.ce_threshold_ms.map(|t| CeThreshold {
            threshold: millis(t),
            mask: self.ce_threshold_mask.unwrap_or(0) as u8,
            selector: self.ce_threshold_selector.unwrap_or(0) as u8,
        })
    }
}

impl FqPieConfig {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit as u64)?;
        if !(1..=65536).contains(&self.flows) {
            return Err(err(p, "flows", self.flows, "an integer in [1, 65536]"));
        }
        non_negative(p, "target_ms", self.target_ms)?;
        positive(p, "tupdate_ms", self.tupdate_ms)?;
        let sixteenths = "an integer in [0, 32] (1/16 s⁻¹)";
        if self.alpha > 32 {
            return Err(err(p, "alpha", self.alpha, sixteenths));
        }
        if self.beta > 32 {
            return Err(err(p, "beta", self.beta, sixteenths));
        }
        if !(1..=1 << 20).contains(&self.quantum) {
            return Err(err(
                p,
                "quantum",
                self.quantum,
                "an integer in [1, 1048576]",
            ));
        }
        at_least_one(p, "memory_limit", self.memory_limit)?;
        if self.ecn_prob > 100 {
            return Err(err(
                p,
                "ecn_prob",
                self.ecn_prob,
                "an integer in [0, 100] (%)",
            ));
        }
        at_least_one(p, "mtu", self.mtu as u64)
    }
}

impl DualPi2Config {
    fn validate(&self, p: &str) -> R {
        at_least_one(p, "limit", self.limit as u64)?;
        non_negative(p, "target_ms", self.target_ms)?;
        positive(p, "tupdate_ms", self.tupdate_ms)?;
        positive(p, "alpha", self.alpha)?;
        positive(p, "beta", self.beta)?;
        non_negative(p, "step_thresh_ms", self.step_thresh_ms)?;
        if !(1..=255).contains(&self.coupling_factor) {
            return Err(err(
                p,
                "coupling_factor",
                self.coupling_factor,
                "an integer in [1, 255]",
            ));
        }
        if self.c_protection > 100 {
            return Err(err(
                p,
                "c_protection",
                self.c_protection,
                "an integer in [0, 100] (%)",
            ));
        }
        if self.linux_fixed_point {
            // Linux takes α and β as tc's Hz × 256 in [1, 2³¹ − 1] (sch_dualpi2.c
            // dualpi2_alpha_beta_range); our rounding of the gain must land there.
            for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
                let tc = (v * 256.0).round();
                if !(1.0..=ALPHA_BETA_MAX_TC).contains(&tc) {
                    return Err(err(
                        p,
                        name,
                        v,
                        "a gain whose tc value (Hz × 256, rounded) is in [1, 2147483647] \
                         (Linux's arithmetic; linux_fixed_point = false takes any gain)",
                    ));
                }
            }
        }
        at_least_one(p, "mtu", self.mtu as u64)
    }
}

fn scale(queue_in_bytes: bool, mean: u32) -> f64 {
    if queue_in_bytes {
        mean as f64
    } else {
        1.0
    }
}

impl AqmConfig {
    /// Checks every parameter; `prefix` is the path of this table in the scenario ("queue").
    pub fn validate(&self, prefix: &str) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Droptail { limit, .. } => {
                if *limit == 0 {
                    return Err(ConfigError::new(
                        format!("{prefix}.limit"),
                        limit,
                        "an integer ≥ 1",
                    ));
                }
                Ok(())
            },
            AqmConfig::Red(c) => c.validate(prefix),
            AqmConfig::GredI(c) => c.validate(prefix),
            AqmConfig::Ared(c) => c.validate(prefix),
            AqmConfig::Pi(c) => c.validate(prefix),
            AqmConfig::Rem(c) => c.validate(prefix),
            AqmConfig::Codel(c) => c.validate(prefix),
            AqmConfig::Pie(c) => c.validate(prefix),
            AqmConfig::FqCodel(c) => c.validate(prefix),
            AqmConfig::Dualpi2(c) => c.validate(prefix),
            AqmConfig::Cake(c) => c.validate(prefix),
            AqmConfig::FqPie(c) => c.validate(prefix),
            AqmConfig::RedLinux(c) => c.validate(prefix),
            AqmConfig::PieLinux(c) => c.validate(prefix),
        }
    }

    /// Builds the discipline for a link of rate `rate` carrying packets of typically
    /// `mean_pkt_size` bytes (used by disciplines that convert between packets and bytes).
    /// Same as `build_for_link` with a zero link delay.
    pub fn build(&self, rate: BitsPerSec, mean_pkt_size: u32) -> Aqm {
        self.build_for_link(rate, mean_pkt_size, 0)
    }

    /// As `build`, also given the link's propagation delay (RED's `w_q = "auto_rtt"`).
    pub fn build_for_link(&self, rate: BitsPerSec, mean_pkt_size: u32, link_delay: Time) -> Aqm {
        let bps = rate.0 as f64;
        match self {
            AqmConfig::Droptail { limit, unit } => Aqm::DropTail(DropTail::new(*limit, *unit)),
            AqmConfig::Red(c) => {
                let mean = c.mean_pkt_size.unwrap_or(mean_pkt_size);
                let ptc = rate.packets_per_sec(mean);
                let min_th = c
                    .min_th
                    .unwrap_or_else(|| auto::min_th(c.target_delay_ms / 1e3, ptc));
                let max_th = c.max_th.unwrap_or(3.0 * min_th);
                let delay_s = c.link_delay_ms.map_or(link_delay as f64 / 1e9, |d| d / 1e3);
                let k = scale(c.queue_in_bytes, mean);
                let p = RedParams {
                    min_th: min_th * k,
                    max_th: max_th * k,
                    max_p: c.max_p,
                    w_q: c.w_q.resolve(ptc, delay_s),
                    gentle: c.gentle,
                    wait: c.wait,
                    queue_in_bytes: c.queue_in_bytes,
                    byte_mode: c.byte_mode,
                    mean_pkt_size: mean,
                    limit: (c.limit as f64 * k) as u64,
                    ptc,
                    ecn: c.ecn,
                    mark_p: c.mark_p,
                };
                Aqm::Red(Red::new("red", p, None))
            },
            AqmConfig::GredI(c) => {
                let mean = c.mean_pkt_size.unwrap_or(mean_pkt_size);
                let k = scale(c.queue_in_bytes, mean);
                let max_th = match c.thresholds {
                    GredThresholds::MaxThIsBuffer => c.limit as f64,
                    GredThresholds::RampEndsAtBuffer => c.limit as f64 / 2.0,
                };
                let p = RedParams {
                    min_th: c.min_th * k,
                    max_th: max_th * k,
                    max_p: c.max_p,
                    w_q: 1.0,
                    gentle: true,
                    wait: c.wait,
                    queue_in_bytes: c.queue_in_bytes,
                    byte_mode: c.byte_mode,
                    mean_pkt_size: mean,
                    limit: (c.limit as f64 * k) as u64,
                    ptc: rate.packets_per_sec(mean),
                    ecn: c.ecn,
                    mark_p: c.mark_p,
                };
                Aqm::Red(Red::new("gred_i", p, None))
            },
            AqmConfig::Ared(c) => {
                let mean = c.mean_pkt_size.unwrap_or(mean_pkt_size);
                let ptc = rate.packets_per_sec(mean);
                let min_th = c
                    .min_th
                    .unwrap_or_else(|| auto::min_th(c.target_delay_ms / 1e3, ptc));
                let max_th = c.max_th.unwrap_or(3.0 * min_th);
                let k = scale(c.queue_in_bytes, mean);
                let p = RedParams {
                    min_th: min_th * k,
                    max_th: max_th * k,
                    max_p: c.max_p,
                    w_q: c.w_q.resolve(ptc, link_delay as f64 / 1e9),
                    gentle: c.gentle,
                    wait: c.wait,
                    queue_in_bytes: c.queue_in_bytes,
                    byte_mode: c.byte_mode,
                    mean_pkt_size: mean,
                    limit: (c.limit as f64 * k) as u64,
                    ptc,
                    ecn: c.ecn,
                    mark_p: c.mark_p,
                };
                let bottom = c.bottom.unwrap_or(match c.mode {
                    AredMode::Ns2 => auto::bottom(bps),
                    AredMode::Timer => 0.01,
                });
                let a = AredParams {
                    mode: c.mode,
                    interval: secs(c.interval_s),
                    alpha: c.alpha,
                    beta: c.beta,
                    top: c.top,
                    bottom,
                };
                Aqm::Red(Red::new("ared", p, Some(Ared::new(a))))
            },
            AqmConfig::Pi(c) => {
                let mean = c.mean_pkt_size.unwrap_or(mean_pkt_size);
                let t = 1.0 / c.sample_hz;
                let (a, b) = match (c.a, c.b, c.design_n_min, c.design_rtt_max_s) {
                    (Some(a), Some(b), _, _) => (a, b),
                    (_, _, Some(n), Some(r)) => {
                        let cap = rate.packets_per_sec(mean);
                        let z = 2.0 * n / (r * r * cap);
                        let (k, z) = pi::design(cap, n, r, c.design_omega_g.unwrap_or(z));
                        pi::tustin(k, z, t)
                    },
                    _ => (1.822e-5, 1.816e-5),
                };
                Aqm::Pi(Pi::new(PiParams {
                    a,
                    b,
                    period: secs(t),
                    q_ref: c.q_ref,
                    queue_in_bytes: c.queue_in_bytes,
                    byte_mode: c.byte_mode,
                    mean_pkt_size: mean,
                    limit: (c.limit as f64 * scale(c.queue_in_bytes, mean)) as u64,
                    ecn: c.ecn,
                }))
            },
            AqmConfig::Rem(c) => {
                let mean = c.mean_pkt_size.unwrap_or(mean_pkt_size);
                let interval = millis(c.interval_ms);
                Aqm::Rem(Rem::new(RemParams {
                    gamma: c.gamma,
                    phi: c.phi,
                    alpha: c.alpha,
                    b_ref: c.b_ref,
                    interval,
                    w_in: c.w_in,
                    c: c.interval_ms / 1e3 * rate.packets_per_sec(mean),
                    mean_pkt_size: mean,
                    byte_mode: c.byte_mode,
                    mark: c.mark,
                    mark_policy: c.mark_policy,
                    limit: c.limit,
                }))
            },
            AqmConfig::Codel(c) => Aqm::Codel(Codel::new(CodelParams {
                target: millis(c.target_ms),
                interval: millis(c.interval_ms),
                mtu: c.mtu,
                ecn: c.ecn,
                limit: c.limit,
            })),
            AqmConfig::Pie(c) => Aqm::Pie(Pie::new(PieParams {
                target: millis(c.target_ms),
                t_update: millis(c.t_update_ms),
                alpha: c.alpha,
                beta: c.beta,
                max_burst: millis(c.max_burst_ms),
                dq_threshold: c.dq_threshold,
                estimator: c.estimator,
                derandomize: c.derandomize,
                ecn: c.ecn,
                ecn_max_p: c.ecn_max_p,
                byte_mode: c.byte_mode,
                mtu: c.mtu,
                mean_pkt_size: c.mean_pkt_size.unwrap_or(mean_pkt_size),
                limit: c.limit,
            })),
            AqmConfig::FqCodel(c) => Aqm::FqCodel(FqCodel::new(FqCodelParams {
                flows: c.flows,
                quantum: c.quantum,
                limit: c.limit,
                memory_limit: c.memory_limit,
                drop_batch: c.drop_batch,
                codel: CodelParams {
                    target: millis(c.target_ms),
                    interval: millis(c.interval_ms),
                    mtu: c.mtu,
                    ecn: c.ecn,
                    limit: c.limit,
                },
                ce_threshold: c.ce_threshold(),
            })),
            AqmConfig::Dualpi2(c) => Aqm::DualPi2(DualPi2::new(DualPi2Params {
                limit: c.limit,
                target: millis(c.target_ms),
                tupdate: millis(c.tupdate_ms),
                alpha: c.alpha,
                beta: c.beta,
                step_thresh: millis(c.step_thresh_ms),
                coupling_factor: c.coupling_factor as f64,
                c_protection: c.c_protection,
                drop_overload: c.drop_on_overload,
                drop_early: c.drop_enqueue,
                mtu: c.mtu,
                min_qlen_step: c.min_qlen_step,
                linux_fixed_point: c.linux_fixed_point,
            })),
            AqmConfig::Cake(c) => Aqm::Cake(Box::new(Cake::new(c.params()))),
            AqmConfig::RedLinux(c) => match c.opt("queue") {
                Ok(opt) => Aqm::RedLinux(Box::new(RedLinux::new(opt))),
                Err(e) => panic!("red_linux built without validation: {e}"),
            },
            AqmConfig::PieLinux(c) => Aqm::FqPie(c.build()),
            AqmConfig::FqPie(c) => Aqm::FqPie(FqPie::new(FqPieParams {
                flows: c.flows,
                quantum: c.quantum,
                limit: c.limit,
                memory_limit: c.memory_limit,
                ecn_prob: c.ecn_prob,
                pie: LinuxPieParams {
                    target: millis(c.target_ms),
                    tupdate: millis(c.tupdate_ms),
                    alpha: c.alpha,
                    beta: c.beta,
                    ecn: c.ecn,
                    bytemode: c.bytemode,
                    dq_rate_estimator: c.dq_rate_estimator,
                    mtu: c.mtu,
                },
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<AqmConfig, serde_json::Error> {
        serde_json::from_str(s)
    }

    /// The names `aqmlab rfc7928 --aqm` takes are the scenario's too (issue 36).
    #[test]
    fn rfc7928_spellings_are_kinds() {
        for (alias, canonical) in [
            ("fq-codel", r#"{"kind":"fq_codel"}"#),
            ("fq-pie", r#"{"kind":"fq_pie"}"#),
            ("fifo", r#"{"kind":"droptail","limit":5}"#),
            ("drop-tail", r#"{"kind":"droptail","limit":5}"#),
        ] {
            let want: AqmConfig = serde_json::from_str(canonical).unwrap();
            let text = canonical.replace(
                &format!("\"{}\"", want_kind(canonical)),
                &format!("\"{alias}\""),
            );
            let got: AqmConfig = serde_json::from_str(&text).unwrap();
            assert_eq!(got, want, "{alias}");
        }
    }

    /// With Linux's integers, α and β must be gains tc could send: Hz × 256, rounded, in
    /// [1, 2³¹ − 1]; the defaults (0.16 → 41, 3.2 → 819) are. The f64 model takes any
    /// positive gain. Linux's fixed point, the default, is absent from the serialized form.
    #[test]
    fn dualpi2_linux_fixed_point_gains_in_tc_range() {
        let ok = parse(r#"{"kind":"dualpi2","linux_fixed_point":true}"#).unwrap();
        assert!(ok.validate("queue").is_ok());
        let tiny = r#"{"kind":"dualpi2","linux_fixed_point":true,"alpha":0.001}"#;
        let e = parse(tiny)
            .unwrap()
            .validate("queue")
            .unwrap_err()
            .to_string();
        assert!(e.contains("queue.alpha") && e.contains("0.001"), "{e}");
        let huge = r#"{"kind":"dualpi2","linux_fixed_point":true,"beta":1e7}"#;
        let e = parse(huge)
            .unwrap()
            .validate("queue")
            .unwrap_err()
            .to_string();
        assert!(e.contains("queue.beta"), "{e}");
        let f64_model =
            parse(r#"{"kind":"dualpi2","alpha":0.001,"beta":1e7,"linux_fixed_point":false}"#)
                .unwrap();
        assert!(f64_model.validate("queue").is_ok());
        let default = parse(r#"{"kind":"dualpi2"}"#).unwrap();
        assert_eq!(
            default,
            parse(r#"{"kind":"dualpi2","linux_fixed_point":true}"#).unwrap()
        );
        let text = serde_json::to_string(&default).unwrap();
        assert!(!text.contains("linux_fixed_point"), "{text}");
    }

    fn want_kind(json: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["kind"].as_str().unwrap().to_string()
    }

    #[test]
    fn every_kind_parses_with_defaults_and_validates() {
        for s in [
            r#"{"kind":"droptail","limit":50}"#,
            r#"{"kind":"red","limit":50}"#,
            r#"{"kind":"gred_i","limit":100,"min_th":10}"#,
            r#"{"kind":"ared","limit":100}"#,
            r#"{"kind":"pi","limit":300}"#,
            r#"{"kind":"rem","limit":100}"#,
            r#"{"kind":"codel"}"#,
            r#"{"kind":"pie"}"#,
            r#"{"kind":"fq_codel"}"#,
            r#"{"kind":"fq_pie"}"#,
            r#"{"kind":"red_linux","limit":400000,"avpkt":1000}"#,
        ] {
            let c = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            c.validate("queue").unwrap_or_else(|e| panic!("{s}: {e}"));
            let a = c.build(BitsPerSec::from_mbps(10.0), 500);
            assert!(!a.name().is_empty());
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        assert!(parse(r#"{"kind":"red","limit":50,"maxth":3}"#).is_err());
        assert!(parse(r#"{"kind":"codel","target":5}"#).is_err());
    }

    #[test]
    fn weight_is_a_number_or_a_rule() {
        let c = parse(r#"{"kind":"red","limit":50,"w_q":0.002}"#).unwrap();
        let AqmConfig::Red(r) = &c else { panic!() };
        assert_eq!(r.w_q, Weight::Value(0.002));
        let c = parse(r#"{"kind":"red","limit":50,"w_q":"auto_1s"}"#).unwrap();
        let AqmConfig::Red(r) = &c else { panic!() };
        assert_eq!(r.w_q, Weight::Auto(WeightRule::Auto1s));
        assert!(parse(r#"{"kind":"red","limit":50,"w_q":"often"}"#).is_err());
    }

    #[test]
    fn red_automatic_parameters_worked_example() {
        // 10 Mb/s, 500-byte mean packets: C = 2500 pkt/s; min_th = max(5, 0.005·2500/2) = 6.25,
        // max_th = 18.75 packets, ×500 bytes in byte mode (the default);
        // auto_rtt: RTT = max(0.1, 3·(0 + 1/2500)) = 0.1 → w_q = 1 − e^(−1/2500).
        let c = parse(r#"{"kind":"red","limit":50}"#).unwrap();
        let Aqm::Red(r) = c.build(BitsPerSec::from_mbps(10.0), 500) else {
            panic!()
        };
        assert!((r.p.min_th - 6.25 * 500.0).abs() < 1e-9);
        assert!((r.p.max_th - 18.75 * 500.0).abs() < 1e-9);
        assert_eq!(r.p.limit, 25_000);
        assert!((r.p.w_q - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        // A 50 ms link: RTT = 3·(0.05 + 0.0004) = 0.1512 s.
        let Aqm::Red(r) = c.build_for_link(BitsPerSec::from_mbps(10.0), 500, 50_000_000) else {
            panic!()
        };
        let w = 1.0 - (-1.0 / (10.0 * 0.1512 * 2500.0f64)).exp();
        assert!((r.p.w_q - w).abs() < 1e-15);
    }

    #[test]
    fn ared_and_gred_builds() {
        let c = parse(r#"{"kind":"ared","limit":100,"queue_in_bytes":false}"#).unwrap();
        let Aqm::Red(r) = c.build(BitsPerSec::from_mbps(10.0), 500) else {
            panic!()
        };
        assert_eq!(r.name, "ared");
        assert!((r.p.min_th - 6.25).abs() < 1e-12);
        let a = r.adaptive.as_ref().unwrap();
        // bottom = min(0.01, 80000/1e7) = 0.008.
        assert!((a.p.bottom - 0.008).abs() < 1e-15);
        for (conv, max_th) in [("max_th_is_buffer", 100.0), ("ramp_ends_at_buffer", 50.0)] {
            let s = format!(r#"{{"kind":"gred_i","limit":100,"min_th":10,"thresholds":"{conv}"}}"#);
            let Aqm::Red(r) = parse(&s).unwrap().build(BitsPerSec::from_mbps(10.0), 500) else {
                panic!()
            };
            assert_eq!((r.p.w_q, r.p.gentle, r.p.max_th), (1.0, true, max_th));
        }
    }

    #[test]
    fn validation_names_field_value_and_range() {
        let e = parse(r#"{"kind":"red","limit":50,"min_th":20,"max_th":10}"#)
            .unwrap()
            .validate("queue")
            .unwrap_err();
        assert_eq!(e.field, "queue.max_th");
        assert_eq!(e.value, "10");
        assert!(e.allowed.contains("min_th"));
        let e = parse(r#"{"kind":"red","limit":50,"max_th":60}"#)
            .unwrap()
            .validate("queue")
            .unwrap_err();
        assert_eq!((e.field.as_str(), e.value.as_str()), ("queue.max_th", "60"));
        let cases = [
            (r#"{"kind":"red","limit":50,"max_p":1.5}"#, "queue.max_p"),
            (r#"{"kind":"red","limit":50,"w_q":0}"#, "queue.w_q"),
            (r#"{"kind":"red","limit":0}"#, "queue.limit"),
            (
                r#"{"kind":"gred_i","limit":100,"min_th":60,"thresholds":"ramp_ends_at_buffer"}"#,
                "queue.min_th",
            ),
            (r#"{"kind":"ared","limit":100,"beta":1.0}"#, "queue.beta"),
            (r#"{"kind":"pi","limit":300,"a":1e-5}"#, "queue.b"),
            (r#"{"kind":"pi","limit":30}"#, "queue.q_ref"),
            (r#"{"kind":"rem","limit":100,"phi":0.9}"#, "queue.phi"),
            (r#"{"kind":"codel","target_ms":200}"#, "queue.target_ms"),
            (r#"{"kind":"pie","ecn_max_p":2}"#, "queue.ecn_max_p"),
            (r#"{"kind":"fq_codel","flows":0}"#, "queue.flows"),
            (r#"{"kind":"fq_pie","ecn_prob":101}"#, "queue.ecn_prob"),
        ];
        for (s, field) in cases {
            let e = parse(s).unwrap().validate("queue").unwrap_err();
            assert_eq!(e.field, field, "{s}");
        }
    }

    #[test]
    fn pi_design_from_link() {
        // 15 Mb/s, 500 B → C = 3750; N⁻ = 60, R⁺ = 0.246 s, ω_g = z: a − b = K·T.
        let c = parse(
            r#"{"kind":"pi","limit":800,"q_ref":200,"sample_hz":160,"design_n_min":60,"design_rtt_max_s":0.246}"#,
        )
        .unwrap();
        c.validate("queue").unwrap();
        let Aqm::Pi(p) = c.build(BitsPerSec::from_mbps(15.0), 500) else {
            panic!()
        };
        let z = 120.0 / (0.246f64 * 0.246 * 3750.0);
        let (k, _) = pi::design(3750.0, 60.0, 0.246, z);
        assert!((p.p.a - p.p.b - k / 160.0).abs() < 1e-18);
        assert!(p.p.a > p.p.b && p.p.b > 0.0);
    }
}
