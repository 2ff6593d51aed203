//! The network: links, queues and the topology.

pub mod delay_clock;
pub mod delaybox;
pub mod framing;
pub mod jitter;
pub mod link;
pub mod queue;
pub mod topology;
