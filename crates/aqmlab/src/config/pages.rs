//! A `pages` traffic entry (`TrafficConfig::Pages`): browsing users loading today's pages over
//! HTTP/2 or HTTP/1.1 (`sim::pages`, the page law in `workload::pages`), its keys and checks.

use serde::{Deserialize, Serialize};

use super::error::{integer_in, non_negative, ConfigError};
use super::Side;
pub use crate::workload::pages::Device;
use crate::workload::pages::MAX_ORIGINS;

/// How a page's requests travel, named by their ALPN protocol IDs (RFC 7301's registry).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
pub enum PageProtocol {
    /// HTTP/2 (RFC 9113): one connection per origin, every request of the origin on it at once.
    #[default]
    #[serde(rename = "h2")]
    Http2,
    /// HTTP/1.1 (RFC 9112): up to `h1_connections` persistent connections per origin, one
    /// request at a time on each (no pipelining).
    #[serde(rename = "http/1.1")]
    Http11,
}

impl PageProtocol {
    pub fn name(self) -> &'static str {
        match self {
            PageProtocol::Http2 => "h2",
            PageProtocol::Http11 => "http/1.1",
        }
    }
}

/// One page, fixed, instead of the drawn ones (worked examples and tests): the document's bytes
/// and each subresource's bytes and origin (0 is the document's origin; the origins used must
/// be 0..k without gaps).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FixedPage {
    pub document_bytes: u64,
    #[serde(default)]
    pub object_bytes: Vec<u64>,
    #[serde(default)]
    pub object_origins: Vec<u32>,
}

fn default_h1_connections() -> u32 {
    6
}

fn default_request_bytes() -> u64 {
    700
}

fn default_spread() -> f64 {
    super::default_start_spread()
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PagesConfig {
    pub users: u32,
    /// The side the browsers sit on; their servers are on the other.
    #[serde(default)]
    pub client_side: Side,
    #[serde(default)]
    pub protocol: PageProtocol,
    /// Which tables pages follow: `"mobile"` (default) or `"desktop"`.
    #[serde(default)]
    pub device: Device,
    /// HTTP/1.1's connections per origin (browsers: 6).
    #[serde(default = "default_h1_connections")]
    pub h1_connections: u32,
    /// Bytes of each request's header block (the SPDY white paper's "700-800 bytes").
    #[serde(default = "default_request_bytes")]
    pub request_bytes: u64,
    /// Users start their first page at uniform times in `[0, start_spread_s)`.
    #[serde(default = "default_spread")]
    pub start_spread_s: f64,
    /// A fixed think time between pages, s; absent = PackMime-HTTP's between-page gap law per
    /// user (the `browsers` users' law).
    #[serde(default)]
    pub think_s: Option<f64>,
    /// Every page is this one instead of a draw.
    #[serde(default)]
    pub page: Option<FixedPage>,
}

/// Checks traffic entry `p` (`traffic[i]`), a `pages` source.
pub(super) fn validate(p: &str, c: &PagesConfig) -> Result<(), ConfigError> {
    // At most ~200 connections open per user (HTTP/1.1, a page at the tables' tail): the
    // slots (2^26) hold 100,000 users' worth.
    integer_in(format!("{p}.users"), c.users, 1..=100_000)?;
    integer_in(format!("{p}.h1_connections"), c.h1_connections, 1..=6)?;
    integer_in(format!("{p}.request_bytes"), c.request_bytes, 1..=65_536)?;
    non_negative(&format!("{p}.start_spread_s"), c.start_spread_s)?;
    if let Some(t) = c.think_s {
        if !(t.is_finite() && (0.001..=86_400.0).contains(&t)) {
            return Err(ConfigError::new(
                format!("{p}.think_s"),
                t,
                "a think time in [0.001, 86400] s, or absent (PackMime-HTTP's law)",
            ));
        }
    }
    if let Some(page) = &c.page {
        validate_page(&format!("{p}.page"), page)?;
        // Each page holds at most one connection per object and the document's open at once:
        // within half the simulation's connection slots (2^26).
        let per_page = page.object_bytes.len() as u64 + 1;
        if c.users as u64 * per_page > 1 << 25 {
            return Err(ConfigError::new(
                format!("{p}.users"),
                c.users,
                format!(
                    "at most {} users for a page of {per_page} requests (2^25 connections)",
                    (1u64 << 25) / per_page
                ),
            ));
        }
    }
    Ok(())
}

/// Sizes ≥ 1 byte and ≤ 1 GB, one origin per object, origins 0..k all used.
fn validate_page(p: &str, page: &FixedPage) -> Result<(), ConfigError> {
    const MAX_BYTES: u64 = 1 << 30;
    integer_in(
        format!("{p}.document_bytes"),
        page.document_bytes,
        1..=MAX_BYTES,
    )?;
    if page.object_bytes.len() > 10_000 {
        return Err(ConfigError::new(
            format!("{p}.object_bytes"),
            format!("{} objects", page.object_bytes.len()),
            "at most 10000 objects",
        ));
    }
    if let Some(b) = page
        .object_bytes
        .iter()
        .find(|&&b| !(1..=MAX_BYTES).contains(&b))
    {
        return Err(ConfigError::new(
            format!("{p}.object_bytes"),
            b,
            format!("sizes in 1..={MAX_BYTES} bytes"),
        ));
    }
    if page.object_origins.len() != page.object_bytes.len() {
        return Err(ConfigError::new(
            format!("{p}.object_origins"),
            format!("{} origins", page.object_origins.len()),
            format!(
                "one origin per object ({} objects)",
                page.object_bytes.len()
            ),
        ));
    }
    let most = page.object_origins.iter().copied().max().unwrap_or(0);
    let all_used = (1..=most).all(|o| page.object_origins.contains(&o));
    if most >= MAX_ORIGINS || !all_used {
        return Err(ConfigError::new(
            format!("{p}.object_origins"),
            format!("{:?}", page.object_origins),
            format!("origins 0..k with every one of 1..k used, k < {MAX_ORIGINS}"),
        ));
    }
    Ok(())
}
