//! TCP: a BSD / ns-2 Full-TCP style implementation.

pub mod config;
