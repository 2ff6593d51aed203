//! Traffic models: the random variables of the Web traffic generators.
//!
//! - `dist`: building blocks (empirical CDFs, Weibull, gamma, normal CDF, the FSD long-range
//!   dependent generator).
//! - `mah`: Mah's 1997 empirical HTTP/1.0 model (seven CDFs shipped as data files).
//! - `packmime`: PackMime-HTTP as implemented in ns-2.35 (inter-arrivals, request and response
//!   sizes, HTTP/1.1 connection structure, server delay, DelayBox RTTs).
//! - `pages`: today's Web pages from the HTTP Archive's published per-page statistics.
//! - `rtt`: per-flow minimum RTT tables of the studies (Study A's 7×7 matrix).
//!
//! See `docs/workload.md` for sources, substitutions and what is not public.

pub mod dist;
pub mod file_size;
pub mod mah;
pub mod packmime;
pub mod pages;
pub mod rtt;
/// RFC 8593's statistical video encoder (`kind = "video_call"`).
pub mod video_encoder;
