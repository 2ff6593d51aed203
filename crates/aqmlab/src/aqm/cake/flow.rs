//! One CAKE flow queue's scheduling state (Linux `struct cake_flow`): its DRR++ deficit,
//! COBALT state, host slots, and which set and list it belongs to.

use super::cobalt::CobaltVars;

/// The flow's set (Linux `CAKE_SET_*`): what it is counted as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Set {
    /// Idle and on no list.
    #[default]
    None,
    /// New (sparse) flow on `new_flows`.
    Sparse,
    /// Counted as sparse but already in the bulk rotation (`old_flows`), empty.
    SparseWait,
    /// On `old_flows` with packets.
    Bulk,
    /// Empty, kept (on `decaying_flows`) until its COBALT state is at rest.
    Decaying,
}

/// The list a flow is on. Linux keeps this implicit in its intrusive lists; here it is
/// recorded so that a flow can be found without a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum List {
    #[default]
    None,
    New,
    Old,
    Decaying,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Flow {
    pub deficit: i32,
    pub dropped: u32,
    pub cvars: CobaltVars,
    /// Slots in the tin's host table (`hash::FlowTable::hosts`).
    pub srchost: u16,
    pub dsthost: u16,
    pub set: Set,
    pub list: List,
}
