//! Integration tests: one binary, one module per behaviour.

mod aggregate;
mod aqm_network;
mod bbr;
mod cake;
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
mod prague;
mod prr;
mod queues_every_traffic;
mod rack;
mod rate_steps;
mod sack;
mod slicing;
mod tc_stats;
mod tcp_traces;
mod traffic_classes;
mod web;
