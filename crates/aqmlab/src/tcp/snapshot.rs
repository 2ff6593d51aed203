//! An endpoint's congestion-control state at one instant, for per-connection traces (the
//! fields `ss -ti` and `tcp_info` show, and tcptrace's cwnd graph).

use crate::units::Time;

/// The sender's loss-recovery state, named as Linux's `tcp_ca_state` (`include/net/tcp.h`):
/// Open (nothing wrong), Disorder (duplicate ACKs below the fast-retransmit threshold),
/// Recovery (fast recovery), Loss (after a retransmission timeout, until the data outstanding
/// then is acknowledged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    Disorder,
    Recovery,
    Loss,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpSnapshot {
    pub ca_state: CaState,
    /// Bytes.
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Seconds (0 before the first sample).
    pub srtt_s: f64,
    pub rttvar_s: f64,
    pub rto: Time,
    /// snd_max − snd_una: sequence space sent and not yet acknowledged (bytes; a timeout
    /// rewinds snd_nxt but not this).
    pub in_flight: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}
