//! The network: links, queues and the topology.

pub mod delaybox;
pub mod framing;
pub mod link;
pub mod queue;
pub mod topology;
