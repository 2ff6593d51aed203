//! Integration tests: one binary, one module per behaviour.

mod aggregate;
mod aqm_network;
mod bbr;
mod common;
mod cubic;
mod dctcp;
mod delay_emulation;
mod dualpi2;
mod ecn;
mod fq_pie;
mod framing;
mod fuzz_scenarios;
mod mixes;
mod prr;
mod rack;
mod sack;
mod slicing;
mod tcp_traces;
mod web;
