//! Integration tests: one binary, one module per behaviour.

mod aggregate;
mod common;
mod tcp_traces;
