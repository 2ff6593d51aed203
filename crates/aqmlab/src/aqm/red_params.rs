//! RED's parameters and state, apart from its algorithm (`red.rs`) so that Adaptive RED
//! (`ared.rs`), which reads the one and adapts the other, does not depend on the queue that
//! holds it.

use crate::units::Time;

/// What RED does with an ECT packet it has selected (non-ECT packets are always dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnPolicy {
    /// No ECN: drop.
    Off,
    /// RFC 3168 §7: mark only while `avg < max_th` (the linear region); drop in the gentle
    /// region and above.
    Rfc3168,
    /// Mark in the linear and the gentle region; drop only in the forced region (and on
    /// overflow).
    NewGentle,
    /// ns-2 `use_mark_p_`: no forced region (the early path runs with `p_b` clipped to 1),
    /// mark when `p_b < mark_p`, drop otherwise.
    MarkP,
}

impl EcnPolicy {
    pub fn enabled(self) -> bool {
        self != EcnPolicy::Off
    }
}

/// Parameters, already converted to the queue's unit (packets or bytes).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RedParams {
    /// Thresholds in the queue's unit.
    pub min_th: f64,
    pub max_th: f64,
    /// Initial (and, without ARED, constant) maximum early-drop probability.
    pub max_p: f64,
    /// EWMA weight.
    pub w_q: f64,
    pub gentle: bool,
    /// ns-2 `wait_`: inter-drop gap uniform on [1/p_b, 2/p_b] instead of [1, 1/p_b].
    pub wait: bool,
    /// Average, thresholds and limit in bytes (ns-2 `queue_in_bytes_`).
    pub queue_in_bytes: bool,
    /// Scale the drop probability by size/mean_pkt_size (ns-2 `bytes_`).
    pub byte_mode: bool,
    pub mean_pkt_size: u32,
    /// Buffer size in the queue's unit; an arrival finding `q ≥ limit` is dropped.
    pub limit: u64,
    /// Mean-sized packets per second of the link, for the idle correction.
    pub ptc: f64,
    pub ecn: EcnPolicy,
    /// Used by `EcnPolicy::MarkP` only.
    pub mark_p: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RedState {
    pub avg: f64,
    /// Arrivals since the last drop/mark (ns-2 convention: incremented before the test).
    pub count: u64,
    pub count_bytes: u64,
    /// True once the first arrival above `min_th` has been seen (ns-2 `old`).
    pub old: bool,
    pub idle: bool,
    pub idle_since: Time,
    /// Current max_p (changed by ARED).
    pub max_p: f64,
    /// The max_p that defines the gentle line (ns-2: fixed at the initial value).
    pub gentle_max_p: f64,
    /// Last computed p_b and p_a (for traces and tests).
    pub p_b: f64,
    pub p_a: f64,
}
