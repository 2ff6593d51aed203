//! Measurement: record tables streamed out of the simulation.

pub mod histogram;
pub mod runs;
pub mod table;

pub use table::{Column, Table};
