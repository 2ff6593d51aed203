//! The parts of Linux's per-connection state (`LinuxCong`) that a plain Linux Reno or CUBIC
//! connection never reads per packet: DCTCP's α, HyStart++, the pacer, BBR with its
//! delivery-rate estimator, Prague and LEDBAT, and their loss-episode marks. They live in one
//! allocation of their own (`LinuxCong::cold`), made only for a configuration that uses one
//! of them (`LinuxCold::needed`); the state an ACK of a plain connection walks then holds
//! one pointer in their place (issue 34: the Linux state was 800 bytes, 13 cache lines, and a
//! CUBIC ACK read discriminants spread over them). A layout choice only: the fields, their
//! values and the order in which they are read are those of `LinuxCong` before.

use std::collections::VecDeque;

use super::bbr::Bbr;
use super::config::{CongestionControl, TcpConfig};
use super::dctcp::Dctcp;
use super::hystart_pp::HystartPP;
use super::ledbat::Ledbat;
use super::pacing::Pacer;
use super::prague::Prague;
use super::rate::{RateEstimator, TxState};
use super::undo::Frto;

/// Linux's per-connection state for DCTCP, HyStart++, pacing, BBR, Prague and LEDBAT.
#[derive(Clone, Debug, Default)]
pub struct LinuxCold {
    /// DCTCP's state (`congestion_control = "dctcp"`), from the connection's establishment.
    pub dctcp: Option<Dctcp>,
    /// HyStart++ (`hystart_plus_plus`), which then replaces CUBIC's HyStart; from the
    /// establishment.
    pub hspp: Option<HystartPP>,
    /// The pacer (`pacing`, or BBR).
    pub pacer: Option<Pacer>,
    /// Delivery-rate estimation (BBR only), and the delivery state of each segment of the
    /// record of segments (`LinuxCong::sent`), index for index.
    pub rate: Option<Box<RateEstimator>>,
    pub(crate) rate_tx: VecDeque<TxState>,
    /// BBR's state, from the connection's establishment.
    pub bbr: Option<Box<Bbr>>,
    /// Prague's state, from an establishment with AccECN (`tcp/prague/`); None otherwise,
    /// also for `congestion_control = "prague"` without AccECN (Linux Reno then).
    pub prague: Option<Box<Prague>>,
    /// snd_max at Prague's last loss (fast recovery or timeout): its loss state lasts until
    /// snd_una reaches it.
    pub prague_loss_high: u64,
    /// snd_max at the last timeout, while its loss episode lasts (BBR's `TCP_CA_Loss`).
    pub bbr_loss_high: Option<u64>,
    /// Seed of the algorithm's random stream (BBR), set per connection.
    pub cc_seed: u64,
    /// LEDBAT's state (`congestion_control = "ledbat"`, `tcp/ledbat.rs`), both roles: the
    /// sender's delay history and window, the receiver's delay to report.
    pub ledbat: Option<Box<Ledbat>>,
    /// F-RTO and the undo of a spurious timeout (`frto`, `tcp/undo.rs`), where the kernel's
    /// loss state runs (BBR with RACK-TLP).
    pub frto: Option<Box<Frto>>,
}

impl LinuxCold {
    /// Whether a configuration uses any of this state: otherwise its connections never
    /// allocate it.
    pub fn needed(cfg: &TcpConfig) -> bool {
        use CongestionControl::*;
        cfg.paced()
            || cfg.hystart_plus_plus
            || matches!(cfg.congestion_control, Dctcp | Bbr | Prague | Ledbat)
    }

    /// The state a new connection of `cfg` starts with.
    pub fn new(cfg: &TcpConfig) -> Self {
        LinuxCold {
            pacer: cfg.paced().then(Pacer::default),
            rate: (cfg.congestion_control == CongestionControl::Bbr)
                .then(|| Box::new(RateEstimator::default())),
            ledbat: (cfg.congestion_control == CongestionControl::Ledbat)
                .then(|| Box::new(Ledbat::default())),
            frto: (cfg.frto && cfg.rack_tlp && cfg.congestion_control == CongestionControl::Bbr)
                .then(|| Box::new(Frto::default())),
            ..LinuxCold::default()
        }
    }

    /// Bytes held on the heap besides itself: BBR's delivery states and the boxes of BBR,
    /// Prague, LEDBAT, F-RTO and the rate estimator.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.rate_tx.capacity() * size_of::<TxState>()
            + self.rate.as_ref().map_or(0, |_| size_of::<RateEstimator>())
            + self.bbr.as_ref().map_or(0, |_| size_of::<Bbr>())
            + self.prague.as_ref().map_or(0, |_| size_of::<Prague>())
            + self.ledbat.as_ref().map_or(0, |_| size_of::<Ledbat>())
            + self.frto.as_ref().map_or(0, |_| size_of::<Frto>())
    }
}
