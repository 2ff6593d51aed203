//! The network: links, queues and the topology.

pub mod queue;
