//! Browsing users loading today's pages (`kind = "pages"`): a user thinks, then loads a page
//! drawn from the HTTP Archive's published per-page statistics (`workload::pages`): the HTML
//! document from its origin, then, once the document has fully arrived, every subresource
//! from its origin, over HTTP/2 or HTTP/1.1; when the last byte of the last object is in, the
//! page is loaded and the user thinks again.
//!
//! Transport, per protocol (docs/workload.md, "Page loads"):
//! - HTTP/2 (RFC 9113): one TCP connection per origin (§9.1: "Clients SHOULD NOT open more
//!   than one HTTP/2 connection to a given host and port pair"); all of an origin's requests
//!   are sent at once as concurrent streams (§5), each a HEADERS frame of a 9-octet frame
//!   header (§4.1) and `request_bytes` of header block; the server answers every stream,
//!   each response's body in DATA frames of at most 16,384 octets (§4.2, the initial
//!   SETTINGS_MAX_FRAME_SIZE of §6.5.2) with a 9-octet header each. The client opens with the
//!   24-octet preface (§3.4) and a SETTINGS frame, the server with its SETTINGS frame, each
//!   acknowledging the other's (§6.5.3): 24 + 9 + 9 octets from the client, 9 + 9 from the
//!   server, on the first write of each side. How the server interleaves the streams'
//!   frames (left to it: RFC 9113 §5.3 deprecates RFC 7540's priority signals; RFC 9218 §4's
//!   defaults, urgency 3 and not incremental, serve one response after another; round robin
//!   in 16 KB frames is the other common choice) changes when each object completes but
//!   not when the origin's last byte arrives, because every response is requested at once
//!   and ready at once (no server think time): the model writes an origin's responses as one
//!   block and measures the page at its last byte, which is the same under round robin in
//!   16 KB frames, under RFC 9218's default, or under any order.
//! - HTTP/1.1 (RFC 9112 §9.3, persistent connections, no pipelining): up to `h1_connections`
//!   connections per origin (6, as browsers: Chromium's `g_max_sockets_per_group` for its
//!   normal socket pool in `net/socket/client_socket_pool_manager.cc`, which Lighthouse's
//!   load simulator also takes as its `CONNECTIONS_PER_ORIGIN`),
//!   one request at a time on each. Objects are dealt to the connections when the document
//!   arrives, each to the one with the fewest bytes dealt so far (list scheduling, ties to
//!   the lowest), which is where a browser's queue would send it if every connection drained
//!   at the same rate; the document's connection is one of its origin's six.
//!
//! Every connection starts with TCP's handshake; TLS is not modelled (no extra round trip).
//! Each origin's connections share one delay-box RTT (`rtt_key`): one server, one path.
//! Metrics per page: time to first byte (from the page's start, the document connection's
//! `connect()`, to the first byte of the document response) and page load time (to the last
//! byte of the last object); a page whose connection failed is recorded as not completed.

use serde::Serialize;

use super::one_or_more::OneOrMore;
use super::records::PageRows;
use super::sources::OpenRequest;
use super::web_app::WebExchange;
use crate::config::pages::{FixedPage, PageProtocol, PagesConfig};
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time};
use crate::workload::pages::{self, Page, PageObject, PageStats};

/// HTTP/2 frame header, octets (RFC 9113 §4.1).
pub const H2_FRAME_HEADER: u64 = 9;
/// Initial SETTINGS_MAX_FRAME_SIZE, octets (RFC 9113 §6.5.2).
pub const H2_MAX_FRAME: u64 = 16_384;
/// The client's first octets: preface (§3.4, 24 octets), its SETTINGS frame (empty) and the
/// acknowledgement of the server's.
pub const H2_CLIENT_PREFACE: u64 = 24 + 2 * H2_FRAME_HEADER;
/// The server's first octets: its SETTINGS frame (empty) and the acknowledgement of the
/// client's.
pub const H2_SERVER_PREFACE: u64 = 2 * H2_FRAME_HEADER;

/// Bytes on the connection for a response body of `b` bytes over HTTP/2: a HEADERS frame
/// (its header block not counted, as in HTTP/1.1) and the DATA frames' headers.
pub fn h2_response_bytes(b: u64) -> u64 {
    H2_FRAME_HEADER + b + H2_FRAME_HEADER * b.div_ceil(H2_MAX_FRAME)
}

/// One connection of a page: its origin, its index within the origin, its exchanges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnPlan {
    pub origin: u32,
    pub index: u32,
    pub exchanges: Vec<WebExchange>,
}

fn exchange(request: u64, response: u64) -> WebExchange {
    WebExchange {
        request,
        response,
        gap: 0,
        server_delay: 0,
    }
}

/// A page's connections: the document's first (it opens at the page's start), then those that
/// open when the document has arrived.
pub fn plan(
    page: &Page,
    protocol: PageProtocol,
    h1_connections: u32,
    request: u64,
) -> Vec<ConnPlan> {
    let by_origin =
        |o: u32| -> Vec<&PageObject> { page.objects.iter().filter(|x| x.origin == o).collect() };
    let mut plans = Vec::new();
    for o in 0..page.origins {
        let objects = by_origin(o);
        match protocol {
            PageProtocol::Http2 => {
                let preface = |first: bool| {
                    if first {
                        (H2_CLIENT_PREFACE, H2_SERVER_PREFACE)
                    } else {
                        (0, 0)
                    }
                };
                let mut exchanges = Vec::new();
                if o == 0 {
                    let (c, s) = preface(true);
                    exchanges.push(exchange(
                        c + H2_FRAME_HEADER + request,
                        s + h2_response_bytes(page.document_bytes),
                    ));
                }
                if !objects.is_empty() {
                    let (c, s) = preface(o != 0);
                    let n = objects.len() as u64;
                    exchanges.push(exchange(
                        c + n * (H2_FRAME_HEADER + request),
                        s + objects
                            .iter()
                            .map(|x| h2_response_bytes(x.bytes))
                            .sum::<u64>(),
                    ));
                }
                plans.push(ConnPlan {
                    origin: o,
                    index: 0,
                    exchanges,
                });
            },
            PageProtocol::Http11 => {
                let k = (objects.len() as u32).clamp(1, h1_connections) as usize;
                let mut conns: Vec<Vec<WebExchange>> = vec![Vec::new(); k];
                if o == 0 {
                    conns[0].push(exchange(request, page.document_bytes));
                }
                let mut load = vec![0u64; k];
                for x in objects {
                    let c = (0..k).min_by_key(|&c| (load[c], c)).expect("k ≥ 1");
                    load[c] += x.bytes;
                    conns[c].push(exchange(request, x.bytes));
                }
                for (i, exchanges) in conns.into_iter().enumerate() {
                    if !exchanges.is_empty() {
                        plans.push(ConnPlan {
                            origin: o,
                            index: i as u32,
                            exchanges,
                        });
                    }
                }
            },
        }
    }
    plans
}

/// Connections one page opens, upper side (the cost estimate): the fixed page's, or a drawn
/// page's at the 99th percentile of the tables.
pub fn connections_per_page(cfg: &PagesConfig) -> f64 {
    match &cfg.page {
        Some(p) => plan(
            &fixed(p),
            cfg.protocol,
            cfg.h1_connections,
            cfg.request_bytes,
        )
        .len() as f64,
        None => {
            let lv = pages::levels(PageStats::of(cfg.device), pages::normal_quantile(0.99));
            let requests = lv.requests.iter().sum::<u64>() as f64;
            match cfg.protocol {
                PageProtocol::Http2 => lv.origins as f64,
                PageProtocol::Http11 => requests.min(lv.origins as f64 * cfg.h1_connections as f64),
            }
        },
    }
}

/// A fixed page (`page` key) as a `Page`.
pub fn fixed(p: &FixedPage) -> Page {
    let objects = p
        .object_bytes
        .iter()
        .zip(&p.object_origins)
        .map(|(&bytes, &origin)| PageObject {
            kind: pages::ObjectType::Other,
            bytes,
            origin,
        })
        .collect();
    Page {
        document_bytes: p.document_bytes,
        objects,
        origins: 1 + p.object_origins.iter().copied().max().unwrap_or(0),
    }
}

/// Connection identity: user (20 bits: at most 100,000 users), page (28), origin (9), connection
/// within it (3).
fn identity(user: u32, page: u64, origin: u32, index: u32) -> u64 {
    ((user as u64) << 40) | ((page & 0x0FFF_FFFF) << 12) | ((origin as u64) << 3) | index as u64
}

/// The key of a connection's delay-box RTT: its origin's (every connection to one origin of
/// one page has the same RTT).
pub fn rtt_key(identity: u64) -> u64 {
    identity & !7
}

/// A page being loaded.
#[derive(Clone, Debug)]
struct PageLoad {
    index: u64,
    start: Time,
    ttfb: Option<Time>,
    /// Connections that open when the document has arrived.
    waiting: Vec<OpenRequest>,
    open: u32,
    objects: u64,
    bytes: u64,
    delivered: u64,
    origins: u32,
    connections: u32,
    failed: bool,
}

#[derive(Clone, Debug)]
struct PageUser {
    rng: Rng,
    think_loc: f64,
    think_scale2: f64,
    pages: u64,
    current: Option<PageLoad>,
}

/// A page that ended (or was still loading when the run ended).
#[derive(Clone, Debug, PartialEq)]
pub struct PageRecord {
    pub user: u32,
    pub page: u64,
    pub start: Time,
    pub ttfb: Option<Time>,
    pub end: Option<Time>,
    pub objects: u64,
    pub bytes: u64,
    pub delivered: u64,
    pub origins: u32,
    pub connections: u32,
    pub completed: bool,
}

/// The `pages` section of the run summary: pages started after the warm-up, how they ended,
/// and the percentiles of the completed ones' load times and times to first byte (linear
/// interpolation between order statistics, NumPy's default; NaN without pages).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PageSummary {
    pub pages_started: u64,
    pub pages_completed: u64,
    /// Ended with a connection that failed (aborted) or short of bytes.
    pub pages_failed: u64,
    /// Still loading at the end of the run.
    pub pages_unfinished: u64,
    pub plt_mean_s: f64,
    pub plt_p50_s: f64,
    pub plt_p95_s: f64,
    pub ttfb_p50_s: f64,
    pub ttfb_p95_s: f64,
}

/// The q-quantile of `v` (sorted here), interpolated between order statistics; NaN if empty.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let h = (v.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (h - lo as f64)
}

impl PageSummary {
    /// The summary over every `pages` source of a run.
    pub fn of<'a>(sources: impl Iterator<Item = &'a PageSource>) -> PageSummary {
        let mut sm = PageSummary::default();
        let (mut plt, mut ttfb) = (Vec::new(), Vec::new());
        for s in sources {
            sm.pages_started += s.measured.started;
            sm.pages_failed += s.measured.failed;
            sm.pages_unfinished += s.unfinished().filter(|r| r.start >= s.warmup).count() as u64;
            plt.extend_from_slice(&s.measured.plt);
            ttfb.extend_from_slice(&s.measured.ttfb);
        }
        sm.pages_completed = plt.len() as u64;
        sm.plt_mean_s = if plt.is_empty() {
            f64::NAN
        } else {
            plt.iter().sum::<f64>() / plt.len() as f64
        };
        sm.plt_p50_s = quantile(&mut plt, 0.5);
        sm.plt_p95_s = quantile(&mut plt, 0.95);
        sm.ttfb_p50_s = quantile(&mut ttfb, 0.5);
        sm.ttfb_p95_s = quantile(&mut ttfb, 0.95);
        sm
    }
}

/// A source's pages started after the warm-up, and the completed ones' times, s.
#[derive(Clone, Debug, Default)]
struct Measured {
    started: u64,
    failed: u64,
    plt: Vec<f64>,
    ttfb: Vec<f64>,
}

impl PageRows {
    /// A page's row.
    pub fn push_record(&mut self, source: u32, protocol: &'static str, r: &PageRecord) {
        let since = |t: Option<Time>| t.map_or(f64::NAN, |t| (t - r.start) as f64 * 1e-9);
        self.source.push(source as u64);
        self.user.push(r.user as u64);
        self.page.push(r.page);
        self.protocol.push(protocol);
        self.start_s.push(r.start as f64 * 1e-9);
        self.ttfb_s.push(since(r.ttfb));
        self.plt_s.push(since(r.end));
        self.objects.push(r.objects);
        self.bytes.push(r.bytes);
        self.bytes_delivered.push(r.delivered);
        self.origins.push(r.origins as u64);
        self.connections.push(r.connections as u64);
        self.completed.push(r.completed);
    }
}

#[derive(Clone, Debug)]
pub struct PageSource {
    seed: u64,
    warmup: Time,
    measured: Measured,
    source: u32,
    cfg: PagesConfig,
    stats: &'static PageStats,
    users: Vec<PageUser>,
    client_hosts: u32,
    server_hosts: u32,
}

impl PageSource {
    pub fn new(
        seed: u64,
        warmup: Time,
        source: u32,
        cfg: &PagesConfig,
        client_hosts: u32,
        server_hosts: u32,
    ) -> Self {
        let users = (0..cfg.users)
            .map(|u| {
                let mut rng = Rng::substream(seed, StreamKind::Workload, source as u64, u as u64);
                let (think_loc, think_scale2) = super::browsers::think_law(&mut rng);
                PageUser {
                    rng,
                    think_loc,
                    think_scale2,
                    pages: 0,
                    current: None,
                }
            })
            .collect();
        PageSource {
            seed,
            warmup,
            measured: Measured::default(),
            source,
            cfg: cfg.clone(),
            stats: PageStats::of(cfg.device),
            users,
            client_hosts,
            server_hosts,
        }
    }

    pub fn protocol(&self) -> &'static str {
        self.cfg.protocol.name()
    }

    pub fn start_time(&mut self, u: u32) -> Time {
        secs(self.cfg.start_spread_s * self.users[u as usize].rng.uniform())
    }

    /// User `u` starts a page: draws it from the page's own stream (user, page index), plans
    /// its connections and opens the document's.
    pub fn start_page(&mut self, u: u32, now: Time, out: &mut Vec<OpenRequest>) {
        if now >= self.warmup {
            self.measured.started += 1;
        }
        let user = &mut self.users[u as usize];
        let index = user.pages;
        user.pages += 1;
        // A stream per page: Workload sub-streams above 2^62 (users' own are below 2^20).
        let sub = (1 << 62) | ((u as u64) << 32) | (index & 0xFFFF_FFFF);
        let mut rng = Rng::substream(self.seed, StreamKind::Workload, self.source as u64, sub);
        let page = match &self.cfg.page {
            Some(p) => fixed(p),
            None => pages::draw(self.stats, &mut rng),
        };
        let servers: Vec<u32> = (0..page.origins)
            .map(|_| rng.below(self.server_hosts as u64) as u32)
            .collect();
        let client = u % self.client_hosts;
        let plans = plan(
            &page,
            self.cfg.protocol,
            self.cfg.h1_connections,
            self.cfg.request_bytes,
        );
        let mut opens: Vec<OpenRequest> = plans
            .iter()
            .map(|p| OpenRequest {
                identity: identity(u, index, p.origin, p.index),
                client,
                server: servers[p.origin as usize],
                script: p.exchanges.iter().copied().collect::<OneOrMore<_>>(),
                user: Some(u),
                extra_rtt: None,
                primary: p.origin == 0 && p.index == 0,
            })
            .collect();
        let bytes = opens
            .iter()
            .map(|r| r.script.iter().map(|e| e.response).sum::<u64>())
            .sum();
        let first = opens.remove(0);
        debug_assert!(first.primary);
        out.push(first);
        user.current = Some(PageLoad {
            index,
            start: now,
            ttfb: None,
            connections: opens.len() as u32 + 1,
            waiting: opens,
            open: 1,
            objects: page.requests() as u64,
            bytes,
            delivered: 0,
            origins: page.origins,
            failed: false,
        });
    }

    /// User `u`'s document has fully arrived (its first byte at `first_byte`): the other
    /// connections open.
    pub fn on_document(&mut self, u: u32, first_byte: Option<Time>, out: &mut Vec<OpenRequest>) {
        if let Some(p) = self.users[u as usize].current.as_mut() {
            p.ttfb = first_byte;
            p.open += p.waiting.len() as u32;
            out.append(&mut p.waiting);
        }
    }

    /// A connection of user `u` is over (`complete`: every response arrived; `expected` and
    /// `received` its response bytes). When it was the page's last, returns the page's record
    /// and the next page's start (after the think time, drawn now).
    pub fn on_done(
        &mut self,
        u: u32,
        now: Time,
        complete: bool,
        expected: u64,
        received: u64,
        out: &mut Vec<OpenRequest>,
    ) -> Option<(PageRecord, Time)> {
        let user = &mut self.users[u as usize];
        let p = user.current.as_mut()?;
        p.open -= 1;
        p.delivered += received;
        p.failed |= !complete || received < expected;
        if !p.waiting.is_empty() {
            // The document's connection failed before the document: go on with the page.
            p.open += p.waiting.len() as u32;
            out.append(&mut p.waiting);
        }
        if p.open > 0 {
            return None;
        }
        let p = user.current.take().expect("a page");
        let think = match self.cfg.think_s {
            Some(t) => t,
            None => super::browsers::think_time_s(&mut user.rng, user.think_loc, user.think_scale2),
        };
        let record = PageRecord {
            user: u,
            page: p.index,
            start: p.start,
            ttfb: p.ttfb,
            end: Some(now),
            objects: p.objects,
            bytes: p.bytes,
            delivered: p.delivered,
            origins: p.origins,
            connections: p.connections,
            completed: !p.failed,
        };
        if record.start >= self.warmup {
            let m = &mut self.measured;
            match (record.completed, record.ttfb) {
                (true, Some(ttfb)) => {
                    m.plt.push((now - record.start) as f64 * 1e-9);
                    m.ttfb.push((ttfb - record.start) as f64 * 1e-9);
                },
                _ => m.failed += 1,
            }
        }
        Some((record, now + secs(think)))
    }

    /// Pages still loading (the end of the run).
    pub fn unfinished(&self) -> impl Iterator<Item = PageRecord> + '_ {
        self.users.iter().enumerate().filter_map(|(u, user)| {
            user.current.as_ref().map(|p| PageRecord {
                user: u as u32,
                page: p.index,
                start: p.start,
                ttfb: p.ttfb,
                end: None,
                objects: p.objects,
                bytes: p.bytes,
                delivered: p.delivered,
                origins: p.origins,
                connections: p.connections,
                completed: false,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(document: u64, objects: &[(u64, u32)]) -> Page {
        fixed(&FixedPage {
            document_bytes: document,
            object_bytes: objects.iter().map(|o| o.0).collect(),
            object_origins: objects.iter().map(|o| o.1).collect(),
        })
    }

    /// HTTP/2: one connection per origin; the document's carries the document, then its
    /// origin's objects as one block; frame overhead by RFC 9113's sizes, counted by hand.
    #[test]
    fn http2_plans_one_connection_per_origin_with_its_framing() {
        let p = page(20_000, &[(40_000, 0), (1_000, 1), (2_000, 1)]);
        let plans = plan(&p, PageProtocol::Http2, 6, 700);
        assert_eq!(plans.len(), 2);
        let e0 = &plans[0].exchanges;
        // Document: 20,000 B in 2 DATA frames (16,384 + 3,616): 9 + 20,000 + 18, after the
        // server's 18-octet preface; the request: 42 + 9 + 700.
        assert_eq!((e0[0].request, e0[0].response), (751, 18 + 9 + 20_000 + 18));
        // 40,000 B in 3 frames: 9 + 40,000 + 27.
        assert_eq!((e0[1].request, e0[1].response), (709, 40_036));
        let e1 = &plans[1].exchanges;
        assert_eq!(e1.len(), 1);
        assert_eq!(e1[0].request, 42 + 2 * 709);
        assert_eq!(e1[0].response, 18 + (9 + 1_000 + 9) + (9 + 2_000 + 9));
    }

    /// HTTP/1.1: at most six connections per origin, objects dealt to the least-loaded one in
    /// order; 13 equal objects on the document's origin: conns 0..5 get 3, 2, 2, 2, 2, 2
    /// objects (object 12 goes back to connection 0, the lowest of the ties), the document
    /// first on connection 0.
    #[test]
    fn http11_deals_objects_over_six_connections() {
        let objects: Vec<(u64, u32)> = (0..13).map(|_| (10_000, 0)).collect();
        let p = page(5_000, &objects);
        let plans = plan(&p, PageProtocol::Http11, 6, 500);
        let counts: Vec<usize> = plans.iter().map(|c| c.exchanges.len()).collect();
        assert_eq!(counts, vec![4, 2, 2, 2, 2, 2]);
        assert_eq!(plans[0].exchanges[0].response, 5_000);
        assert!(plans
            .iter()
            .flat_map(|c| &c.exchanges)
            .all(|e| e.request == 500));
        // Two objects on another origin: two connections there, none idle.
        let p = page(5_000, &[(1, 1), (2, 1)]);
        let plans = plan(&p, PageProtocol::Http11, 6, 500);
        assert_eq!(plans.len(), 3);
        assert_eq!(
            plans
                .iter()
                .map(|c| (c.origin, c.index))
                .collect::<Vec<_>>(),
            vec![(0, 0), (1, 0), (1, 1)]
        );
    }

    /// Bytes conserved: a plan carries the page's bytes plus exactly its framing.
    #[test]
    fn plans_carry_every_byte_of_the_page() {
        let s = PageStats::of(pages::Device::Mobile);
        let mut rng = Rng::stream(5, StreamKind::Test, 0);
        for _ in 0..500 {
            let p = pages::draw(s, &mut rng);
            let body = |plans: &[ConnPlan]| -> u64 {
                plans
                    .iter()
                    .flat_map(|c| &c.exchanges)
                    .map(|e| e.response)
                    .sum()
            };
            assert_eq!(body(&plan(&p, PageProtocol::Http11, 6, 700)), p.bytes());
            let framing: u64 = std::iter::once(p.document_bytes)
                .chain(p.objects.iter().map(|o| o.bytes))
                .map(|b| h2_response_bytes(b) - b)
                .sum::<u64>()
                + H2_SERVER_PREFACE * p.origins as u64;
            assert_eq!(
                body(&plan(&p, PageProtocol::Http2, 6, 700)),
                p.bytes() + framing
            );
            let h1 = plan(&p, PageProtocol::Http11, 6, 700);
            for o in 0..p.origins {
                let n = h1.iter().filter(|c| c.origin == o).count();
                assert!((1..=6).contains(&n));
            }
        }
    }
}
