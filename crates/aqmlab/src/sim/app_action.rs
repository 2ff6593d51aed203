//! What an application asks of its endpoint next: the one word the applications (`bulk_app`,
//! `web_app`) and the simulation that carries it out (`Simulation::perform`) share.

use crate::units::Time;

/// What the application does next on one endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppAction {
    None,
    Write(u64),
    WriteClose(u64),
    Close,
    /// Pause until the absolute time (client think gap).
    WakeAt(Time),
    /// Pause for a duration (server service delay).
    WakeAfter(Time),
}
