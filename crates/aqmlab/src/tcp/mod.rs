//! TCP: a BSD / ns-2 Full-TCP style implementation.

pub mod accecn;
pub mod bbr;
pub mod config;
pub mod config_times;
pub mod cong;
pub mod cong_cold;
pub mod cubic;
pub mod dctcp;
pub mod deadline;
pub mod delack;
pub mod ecn;
pub mod endpoint;
pub mod gso;
pub mod hystart_pp;
pub mod ledbat;
pub mod pacing;
pub mod prague;
mod presets;
pub mod prr;
pub mod rack;
pub mod ranges;
pub mod rate;
pub mod reassembly;
pub mod rtt;
pub mod sack;
pub mod sent;
pub mod snapshot;
pub mod template;
pub mod undo;
pub mod window_growth;

#[cfg(test)]
mod layout_tests;

pub use endpoint::{Counters, Endpoint, Outbox, Seg, State};
