//! aqmlab core: a packet-level simulator of TCP Web traffic through a bottleneck router whose
//! queue is managed by drop-tail or an AQM.
//!
//! Layers, bottom up:
//! - `units`, `rng`: integer nanosecond time; seeded per-component random streams.
//! - `engine`: the event list, ordered by (time, insertion order).
//! - `packet`: packets in a slab, addressed by index.
//! - `aqm`: queue disciplines that decide; `net::queue` acts on the decision and counts it.
//! - `net`: links (serialization + propagation), the dumbbell topology, per-flow delay boxes.
//! - `tcp`: a BSD/ns-2 style TCP written as a state machine that emits segments and deadlines.
//! - `workload`: applications and traffic models that open connections and write bytes.
//! - `measure`: per-connection records and bottleneck monitors, streamed out in chunks.
//! - `sim`: wires the layers together and runs a scenario (`config`).

pub mod aqm;
pub mod bounds;
pub mod capture;
pub mod config;
pub mod engine;
pub mod measure;
pub mod net;
pub mod packet;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod units;
pub mod workload;
