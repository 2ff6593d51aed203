//! Today's Web pages as the HTTP Archive measures them: a page's requests and bytes by content
//! type and its number of origins, drawn from the published percentiles of the per-page
//! statistics (`data/pages/page_weight.csv`, which names its sources: the Web Almanac 2019
//! "Page Weight" chapter's p10/p25/p50/p75/p90 per type for July 2019, and the Web Almanac
//! 2020 "HTTP/2" chapter's connections per page).
//!
//! The law between the published percentiles (first-principles choices, docs/workload.md):
//! - Each quantity's quantile function is interpolated linearly in (Φ⁻¹(u), ln x) between the
//!   five published points (u = 0.10, 0.25, 0.50, 0.75, 0.90): log-normal within each segment,
//!   so the interpolation passes through every published percentile exactly; below p10 and
//!   above p90 the first and last segments are extended (log-normal tails), with u confined to
//!   [1e-6, 1 − 1e-6] (`U_MIN`), so the largest page is finite (about 30× the p90).
//! - Dependence: one uniform per page drives every quantity (comonotone: a page at its
//!   requests' 70th percentile is at the 70th percentile of every type's requests and bytes
//!   and of the origins). The published tables give marginals only; this is the one coupling
//!   that keeps every marginal and the totals' marginals exact (the totals are published too),
//!   and "other" (fonts, JSON, video, ...: types the chapter does not list) is what the totals
//!   leave after the listed types. It overstates the correlation between types (a real page
//!   heavy in images need not be heavy in scripts).
//! - Counts are rounded to the nearest integer, at least 1 per listed type; a type's bytes are
//!   split evenly over its requests (the remainder to the first ones), at least 1 byte each.
//!   The main document's bytes come from the `document` row, the other HTML requests (frames)
//!   share the rest of the HTML bytes; a page with one HTML request (u below about 0.18) has
//!   all its HTML bytes in the document, so there the document is larger than the `document`
//!   row says (with one request the two rows cannot both hold): the document's p10 and p25 are
//!   not kept (mobile: 20 % of documents are at most its published p25 of 7 KB, not 25 %).
//! - Origins: the connections per page of 2020, when most requests used HTTP/2 (one connection
//!   per origin), read as origins per page; at most one more than the subresources (each extra
//!   origin serves at least one object) and at most `MAX_ORIGINS`.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::workload::dist::special::norm_cdf;

const TABLE: &str = include_str!("../../data/pages/page_weight.csv");

/// The published percentiles, as probabilities.
pub const PERCENTILES: [f64; 5] = [0.10, 0.25, 0.50, 0.75, 0.90];
/// Φ⁻¹ of `PERCENTILES`.
const Z: [f64; 5] = [
    -1.281_551_565_544_600_5,
    -0.674_489_750_196_081_7,
    0.0,
    0.674_489_750_196_081_7,
    1.281_551_565_544_600_5,
];
/// The page's uniform is confined to [U_MIN, 1 − U_MIN]: z within ±4.75.
pub const U_MIN: f64 = 1e-6;
/// Most origins a page may have (connections are keyed by a 9-bit origin index).
pub const MAX_ORIGINS: u32 = 256;
/// KB of the published tables.
const KB: f64 = 1024.0;

/// Which crawl's tables a page follows.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Device {
    #[default]
    Mobile,
    Desktop,
}

/// A subresource's content type, in the order a page's subresources are requested (the
/// order of discovery and of browsers' default priorities: style sheets, scripts, fonts and
/// the rest, frames, images).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectType {
    Css,
    Js,
    Other,
    Html,
    Image,
}

/// The types the tables list, with their rows' names, in request order (`Other` is derived).
const LISTED: [(ObjectType, &str); 4] = [
    (ObjectType::Css, "css"),
    (ObjectType::Js, "js"),
    (ObjectType::Html, "html"),
    (ObjectType::Image, "image"),
];

/// Five published percentiles of one quantity, and its quantile function between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knots(pub [f64; 5]);

impl Knots {
    /// The quantity at z = Φ⁻¹(u): linear in (z, ln x) between the knots, the end segments
    /// extended.
    pub fn at(&self, z: f64) -> f64 {
        let i = Z
            .iter()
            .filter(|&&k| k <= z)
            .count()
            .saturating_sub(1)
            .min(3);
        let (z0, z1) = (Z[i], Z[i + 1]);
        let (y0, y1) = (self.0[i].ln(), self.0[i + 1].ln());
        (y0 + (y1 - y0) * (z - z0) / (z1 - z0)).exp()
    }
}

/// One device's tables.
#[derive(Clone, Debug)]
pub struct PageStats {
    pub total_kb: Knots,
    pub total_requests: Knots,
    pub document_kb: Knots,
    pub connections: Knots,
    /// KB and requests of the listed types, in `LISTED` order.
    pub kb: [Knots; 4],
    pub requests: [Knots; 4],
}

fn parse(device: &str) -> PageStats {
    let row = |quantity: &str, ty: &str, dev: &str| -> Knots {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[0] == dev && f[1] == quantity && f[2] == ty)
            .map(|f| {
                let v: Vec<f64> = f[3..8]
                    .iter()
                    .map(|x| x.parse().expect("a number"))
                    .collect();
                Knots([v[0], v[1], v[2], v[3], v[4]])
            })
            .unwrap_or_else(|| panic!("page_weight.csv lacks {dev},{quantity},{ty}"))
    };
    let listed = |quantity: &str| LISTED.map(|(_, name)| row(quantity, name, device));
    PageStats {
        total_kb: row("kb", "total", device),
        total_requests: row("requests", "total", device),
        document_kb: row("kb", "document", device),
        connections: row("connections", "total", "any"),
        kb: listed("kb"),
        requests: listed("requests"),
    }
}

impl PageStats {
    /// The shipped tables of `device` (parsed once).
    pub fn of(device: Device) -> &'static PageStats {
        static CELLS: [OnceLock<PageStats>; 2] = [OnceLock::new(), OnceLock::new()];
        match device {
            Device::Mobile => CELLS[0].get_or_init(|| parse("mobile")),
            Device::Desktop => CELLS[1].get_or_init(|| parse("desktop")),
        }
    }
}

/// One subresource of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageObject {
    pub kind: ObjectType,
    pub bytes: u64,
    /// Its origin: 0 is the document's.
    pub origin: u32,
}

/// A page: its document (on origin 0), then its subresources in request order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub document_bytes: u64,
    pub objects: Vec<PageObject>,
    pub origins: u32,
}

impl Page {
    /// Bytes of the document and every subresource.
    pub fn bytes(&self) -> u64 {
        self.document_bytes + self.objects.iter().map(|o| o.bytes).sum::<u64>()
    }

    /// Requests: the document and every subresource.
    pub fn requests(&self) -> usize {
        1 + self.objects.len()
    }
}

/// Φ⁻¹(u) by bisection on Φ (60 halvings of [−9, 9]: far below the tables' resolution).
pub fn normal_quantile(u: f64) -> f64 {
    let (mut lo, mut hi) = (-9.0_f64, 9.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if norm_cdf(mid) < u {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The per-page quantities at one level z: requests and bytes of each type (`LISTED` order,
/// then `Other`), the document's bytes and the origins.
#[derive(Clone, Debug, PartialEq)]
pub struct PageLevels {
    pub requests: [u64; 5],
    pub bytes: [u64; 5],
    pub document_bytes: u64,
    pub origins: u32,
}

/// Every quantity of a page at z = Φ⁻¹(u) (module doc: rounding, minimums, `Other`).
pub fn levels(stats: &PageStats, z: f64) -> PageLevels {
    let mut requests = [0u64; 5];
    let mut bytes = [0u64; 5];
    for t in 0..4 {
        requests[t] = (stats.requests[t].at(z).round() as u64).max(1);
        bytes[t] = ((stats.kb[t].at(z) * KB).round() as u64).max(requests[t]);
    }
    let total_requests = stats.total_requests.at(z).round() as u64;
    let total_bytes = (stats.total_kb.at(z) * KB).round() as u64;
    let listed_requests: u64 = requests[..4].iter().sum();
    let listed_bytes: u64 = bytes[..4].iter().sum();
    let mut other_requests = total_requests.saturating_sub(listed_requests);
    let other_bytes = total_bytes.saturating_sub(listed_bytes);
    if other_requests == 0 && other_bytes > 0 {
        other_requests = 1;
    }
    requests[4] = other_requests;
    bytes[4] = other_bytes.max(other_requests);
    // The document is one of the HTML requests; the other HTML requests need a byte each.
    let html = 2; // LISTED index of Html
                  // A page with one HTML request has its HTML bytes in the document.
    let document_bytes = if requests[html] == 1 {
        bytes[html]
    } else {
        ((stats.document_kb.at(z) * KB).round() as u64).clamp(1, bytes[html] - (requests[html] - 1))
    };
    let subresources: u64 = requests.iter().sum::<u64>() - 1;
    let origins = (stats.connections.at(z).round() as u64)
        .clamp(1, subresources + 1)
        .min(MAX_ORIGINS as u64) as u32;
    PageLevels {
        requests,
        bytes,
        document_bytes,
        origins,
    }
}

/// A page drawn from `stats` with the page's own stream: its level u (one uniform), then the
/// origins of its subresources (each extra origin serves one, the rest uniformly over all
/// origins, in a shuffled order).
pub fn draw(stats: &PageStats, rng: &mut Rng) -> Page {
    let u = rng.uniform().clamp(U_MIN, 1.0 - U_MIN);
    let lv = levels(stats, normal_quantile(u));
    let kinds = [
        ObjectType::Css,
        ObjectType::Js,
        ObjectType::Html,
        ObjectType::Image,
        ObjectType::Other,
    ];
    let mut objects = Vec::new();
    for (t, &kind) in kinds.iter().enumerate() {
        let (n, mut b) = (lv.requests[t], lv.bytes[t]);
        let n = if kind == ObjectType::Html {
            b -= lv.document_bytes;
            n - 1
        } else {
            n
        };
        for i in 0..n {
            // An even split, the remainder to the first objects.
            let share = b / n + u64::from(i < b % n);
            objects.push(PageObject {
                kind,
                bytes: share,
                origin: 0,
            });
        }
    }
    // Request order: the tables' order has `Other` last; browsers fetch it before frames.
    objects.sort_by_key(|o| o.kind as u8);
    let o = lv.origins;
    let mut origins: Vec<u32> = (1..o).collect();
    while origins.len() < objects.len() {
        origins.push(rng.below(o as u64) as u32);
    }
    for i in (1..origins.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        origins.swap(i, j);
    }
    for (obj, origin) in objects.iter_mut().zip(origins) {
        obj.origin = origin;
    }
    Page {
        document_bytes: lv.document_bytes,
        objects,
        origins: o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    /// The interpolation passes through every published point and extends the end segments.
    #[test]
    fn knots_pass_through_the_published_percentiles() {
        let k = Knots([5.0, 8.0, 13.0, 20.0, 33.0]);
        for (i, &z) in Z.iter().enumerate() {
            assert!((k.at(z) - k.0[i]).abs() < 1e-9, "{i}");
        }
        // Midway in z between p25 and p50: the geometric mean.
        assert!((k.at(Z[1] / 2.0) - (8.0f64 * 13.0).sqrt()).abs() < 1e-9);
        // Beyond p90, the last segment's slope in ln x per unit z.
        let slope = (33.0f64 / 20.0).ln() / (Z[4] - Z[3]);
        assert!((k.at(3.0).ln() - (33.0f64.ln() + slope * (3.0 - Z[4]))).abs() < 1e-9);
        assert!((normal_quantile(0.9) - Z[4]).abs() < 1e-6);
        // Φ is the crate's erfc (relative error 1.2e-7): z within 1e-6.
        assert!((normal_quantile(0.5)).abs() < 1e-6);
    }

    /// Every published table parses, with non-decreasing percentiles, and the levels at the
    /// published points reproduce the tables (the derived `Other` is never negative there).
    #[test]
    fn tables_parse_and_levels_reproduce_them() {
        for device in [Device::Mobile, Device::Desktop] {
            let s = PageStats::of(device);
            let all = [s.total_kb, s.total_requests, s.document_kb, s.connections];
            for k in all.iter().chain(&s.kb).chain(&s.requests) {
                assert!(k.0.windows(2).all(|w| w[0] <= w[1] && w[0] > 0.0), "{k:?}");
            }
            for (i, &z) in Z.iter().enumerate() {
                let lv = levels(s, z);
                assert_eq!(
                    lv.requests.iter().sum::<u64>(),
                    s.total_requests.0[i] as u64
                );
                assert_eq!(
                    lv.bytes.iter().sum::<u64>(),
                    (s.total_kb.0[i] * KB) as u64,
                    "{device:?} p{}",
                    PERCENTILES[i]
                );
                let document = if s.requests[2].0[i] == 1.0 {
                    s.kb[2].0[i] // one HTML request: the document holds the HTML bytes
                } else {
                    s.document_kb.0[i]
                };
                assert_eq!(lv.document_bytes, (document * KB) as u64);
            }
        }
    }

    /// Draws N pages and checks every published percentile of every quantity: with X the
    /// drawn value and q the published p-quantile, P(X ≤ q) ≥ p and P(X < q) ≤ p (the
    /// definition of a quantile, counts being integers), each within 4 binomial standard
    /// deviations √(p(1 − p)/N).
    #[test]
    fn drawn_pages_have_the_published_marginals() {
        let n = 20_000usize;
        for device in [Device::Mobile, Device::Desktop] {
            let s = PageStats::of(device);
            let mut rng = Rng::stream(7, StreamKind::Test, device as u64);
            let pages: Vec<Page> = (0..n).map(|_| draw(s, &mut rng)).collect();
            let count = |kind: ObjectType, p: &Page| {
                p.objects.iter().filter(|o| o.kind == kind).count() as f64
                    + f64::from(kind == ObjectType::Html)
            };
            let kb = |kind: ObjectType, p: &Page| {
                let b: u64 = p
                    .objects
                    .iter()
                    .filter(|o| o.kind == kind)
                    .map(|o| o.bytes)
                    .sum();
                (b + if kind == ObjectType::Html {
                    p.document_bytes
                } else {
                    0
                }) as f64
                    / KB
            };
            let mut checks: Vec<(String, Knots, Vec<f64>)> = vec![
                (
                    "total requests".into(),
                    s.total_requests,
                    pages.iter().map(|p| p.requests() as f64).collect(),
                ),
                (
                    "total KB".into(),
                    s.total_kb,
                    pages.iter().map(|p| p.bytes() as f64 / KB).collect(),
                ),
                (
                    "document KB".into(),
                    s.document_kb,
                    pages.iter().map(|p| p.document_bytes as f64 / KB).collect(),
                ),
                (
                    "origins".into(),
                    s.connections,
                    pages.iter().map(|p| p.origins as f64).collect(),
                ),
            ];
            for (t, (kind, name)) in LISTED.iter().enumerate() {
                let reqs = pages.iter().map(|p| count(*kind, p)).collect();
                checks.push((format!("{name} requests"), s.requests[t], reqs));
                let bytes = pages.iter().map(|p| kb(*kind, p)).collect();
                checks.push((format!("{name} KB"), s.kb[t], bytes));
            }
            for (what, knots, xs) in checks {
                for (i, &p) in PERCENTILES.iter().enumerate() {
                    if what == "document KB" && p < 0.5 {
                        // Pages with one HTML request (u below about 0.18) carry their HTML
                        // bytes in the document: there it is larger than the row says
                        // (mobile: P(document ≤ 7 KB) = 0.20, not 0.25; module doc).
                        continue;
                    }
                    let q = knots.0[i];
                    let tol = 4.0 * (p * (1.0 - p) / n as f64).sqrt();
                    // Bytes are whole: a KB percentile q holds up to one byte's rounding.
                    let eps = 1.0 / KB;
                    let at_most = xs.iter().filter(|&&x| x <= q + eps).count() as f64 / n as f64;
                    let below = xs.iter().filter(|&&x| x < q - eps).count() as f64 / n as f64;
                    assert!(
                        at_most >= p - tol && below <= p + tol,
                        "{device:?} {what} p{p}: published {q}, P(X ≤ q) = {at_most}, \
                         P(X < q) = {below}"
                    );
                }
            }
        }
    }

    /// Every extra origin serves at least one subresource; bytes add up.
    #[test]
    fn origins_are_all_used_and_bytes_add_up() {
        let s = PageStats::of(Device::Mobile);
        let mut rng = Rng::stream(3, StreamKind::Test, 0);
        for _ in 0..2_000 {
            let p = draw(s, &mut rng);
            let mut used = vec![false; p.origins as usize];
            used[0] = true;
            for o in &p.objects {
                used[o.origin as usize] = true;
                assert!(o.bytes >= 1);
            }
            assert!(used.iter().all(|&u| u), "{:?}", p.origins);
            assert!(p.document_bytes >= 1);
        }
    }
}
