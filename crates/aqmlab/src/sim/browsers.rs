//! HTTP/1.0 + 1.1 browsing users in the manner of Study B (Le et al. 2003, after the UNC
//! model of Smith et al. 2001): a user thinks, then fetches a page — the top-level object,
//! then its embedded objects over at most `parallel` connections at once — a number of
//! consecutive pages from one server, then a new server chosen uniformly. A share of the new
//! connections (15 % in Study B) is persistent and carries several requests in sequence.
//!
//! Two sets of laws drive the same users:
//! - `Substitute` (`kind = "browsers"`): public substitutes for the UNC distributions
//!   (docs/workload.md lists them): PackMime-HTTP 1.1 [model-facts §8.3] for request sizes,
//!   top-level response sizes (its response-size mixture), embedded response sizes (its law
//!   for later responses on a persistent connection), embedded objects per page, requests per
//!   persistent connection and think times (its between-page gap law); Mah's CDF for
//!   consecutive pages per server; one server per page.
//! - `Unc` (`kind = "unc"`): the UNC model's empirical distributions (Smith et al. 2001), read
//!   from UNC's CDF files when a scenario supplies them; an element without a file falls back to
//!   the substitute, except the requests per persistent connection, whose fallback follows Le et
//!   al. 2003's own figures (`UNC_PERSISTENT_REQUESTS_MEAN`).
//!
//! The substitute is the UNC path with no law given (`UncLaws::default()`): the draws, and the
//! random numbers they use, are the same.

use super::one_or_more::OneOrMore;
use super::sources::OpenRequest;
use super::web_app::WebExchange;
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time};
use crate::workload::dist::variates::{gamma, normal_mv, weibull};
use crate::workload::dist::EmpiricalCdf;
use crate::workload::mah::MahModel;
use crate::workload::packmime::request::request_size_at;
use crate::workload::packmime::response::{cache_size_at, download_size_at};

/// Share of PackMime responses in the "download" state (mean run lengths 3.79 vs 1.44 at
/// 100 conn/s, nearly rate-independent [model-facts §8.3.6]).
const DOWNLOAD_SHARE: f64 = 0.725;

/// Cap on sampled response sizes (the extrapolated tails are unbounded): 2³¹ − 1 bytes, as
/// the PackMime source (ns-2 stores sizes in an `int`).
const SIZE_CAP: f64 = 2_147_483_647.0;

#[derive(Clone, Debug)]
struct User {
    rng: Rng,
    parallel: u32,
    server: u32,
    pages_left: u32,
    /// Think-time law parameters (ℓ_b, s_b), drawn once per user.
    think_loc: f64,
    think_scale2: f64,
    /// Embedded objects of the current page not yet assigned to a connection: (request, response).
    pending: Vec<(u64, u64)>,
    in_flight: u32,
    /// The top-level response has arrived (embedded requests may go out).
    primary_done: bool,
    conns: u32,
}

/// Mean requests on a persistent connection when no UNC file gives their law: Le et al. 2003,
/// §3.1: "approximately 15 % of all TCP connections ... were effectively persistent ... but
/// more than 50 % of all objects ... were transferred over these persistent connections". With
/// a share `s` of connections persistent carrying `m` objects each on average and the others
/// one, the objects on persistent connections are `s·m / (s·m + 1 − s)`; 50 % at s = 0.15 needs
/// m = 0.85/0.15 = 5.67 (a lower bound: "more than"). Law: 2 + a geometric number of further
/// requests (the maximum-entropy law on {2, 3, ...} for that mean).
pub const UNC_PERSISTENT_REQUESTS_MEAN: f64 = 0.85 / 0.15;

/// The UNC model's empirical laws (`None`: the element's fallback). Sizes in bytes, think
/// times in seconds, counts as drawn (rounded up).
#[derive(Clone, Debug, Default)]
pub struct UncLaws {
    pub top_request: Option<EmpiricalCdf>,
    pub embedded_request: Option<EmpiricalCdf>,
    pub top_response: Option<EmpiricalCdf>,
    pub embedded_response: Option<EmpiricalCdf>,
    /// Objects per page, the top-level one included (UNC's `obj_page`).
    pub objects_per_page: Option<EmpiricalCdf>,
    pub think_time: Option<EmpiricalCdf>,
    /// Requests carried by a persistent connection (≥ 2).
    pub persistent_requests: Option<EmpiricalCdf>,
    /// Consecutive top-level pages from one server.
    pub consecutive_pages: Option<EmpiricalCdf>,
}

#[derive(Clone, Debug)]
pub struct BrowserSource {
    users: Vec<User>,
    persistent_share: f64,
    client_hosts: u32,
    server_hosts: u32,
    /// The UNC model's laws; all `None` for the substitute (`kind = "browsers"`). Shared: a
    /// page start reads them while it changes the users.
    laws: std::sync::Arc<UncLaws>,
    /// `kind = "unc"`: the requests on a persistent connection follow the UNC model's file or
    /// Le et al.'s figures rather than PackMime-HTTP 1.1's law.
    unc: bool,
}

fn log2_law(rng: &mut Rng, loc: f64, scale2: f64, extra_var: f64) -> f64 {
    // 2^{ℓ + √s·√v·N(0,1)} [§8.3.7]
    (loc + scale2.sqrt() * extra_var.sqrt() * rng.normal()).exp2()
}

/// A user's parameters of PackMime-HTTP 1.1's between-page gap law: ℓ_b ~ N(3.22, 0.73),
/// s_b ~ Gamma(1.85, rate 1.85) [§8.3.7], drawn once per user (also `sim::pages`' users).
pub(super) fn think_law(rng: &mut Rng) -> (f64, f64) {
    let loc = normal_mv(rng, 3.22, 0.73);
    (loc, gamma(rng, 1.85, 1.0 / 1.85))
}

/// A between-page gap: 2^{ℓ_b + √s_b·√1.21·N} seconds [§8.3.7].
pub(super) fn think_time_s(rng: &mut Rng, loc: f64, scale2: f64) -> f64 {
    log2_law(rng, loc, scale2, 1.21)
}

impl BrowserSource {
    pub fn new(
        seed: u64,
        source: u32,
        users: u32,
        parallel: &[u32],
        persistent_share: f64,
        client_hosts: u32,
        server_hosts: u32,
    ) -> Self {
        let users = (0..users)
            .map(|u| {
                let mut rng = Rng::substream(seed, StreamKind::Workload, source as u64, u as u64);
                let parallel = parallel[rng.below(parallel.len() as u64) as usize];
                let (think_loc, think_scale2) = think_law(&mut rng);
                User {
                    rng,
                    parallel,
                    server: 0,
                    pages_left: 0,
                    think_loc,
                    think_scale2,
                    pending: Vec::new(),
                    in_flight: 0,
                    primary_done: false,
                    conns: 0,
                }
            })
            .collect();
        BrowserSource {
            users,
            persistent_share,
            client_hosts,
            server_hosts,
            laws: Default::default(),
            unc: false,
        }
    }

    /// Draw from the UNC model's laws (their files, or each element's fallback).
    pub fn with_unc_laws(mut self, laws: UncLaws) -> Self {
        self.laws = std::sync::Arc::new(laws);
        self.unc = true;
        self
    }

    pub fn start_time(&mut self, u: u32, spread: f64) -> Time {
        secs(spread * self.users[u as usize].rng.uniform())
    }

    /// Requests on a new connection: 1, or for a persistent connection PackMime-HTTP 1.1's
    /// count — pages (1 w.p. 0.82, else ⌈1 + Exp(0.417)⌉) times objects per page
    /// (⌈1 + Exp(1.578)⌉ on a one-page connection; 1 w.p. 0.69 per page otherwise) [§8.3.7].
    fn requests_on_new_connection(&mut self, u: usize) -> usize {
        let share = self.persistent_share;
        let rng = &mut self.users[u].rng;
        if !rng.bernoulli(share) {
            return 1;
        }
        if self.unc {
            return match &self.laws.persistent_requests {
                Some(cdf) => (cdf.sample(rng) as usize).max(2),
                None => {
                    // 2 + Geometric(q) further requests, mean 2 + q/(1 − q).
                    let q = 1.0 - 1.0 / (UNC_PERSISTENT_REQUESTS_MEAN - 1.0);
                    let u = 1.0 - rng.uniform(); // (0, 1]
                    2 + (u.ln() / q.ln()).floor() as usize
                },
            };
        }
        let multi = |rng: &mut Rng| (1.0 + weibull(rng, 1.0, 1.578)).ceil() as usize;
        if rng.bernoulli(0.82) {
            return multi(rng);
        }
        let pages = (1.0 + weibull(rng, 1.0, 0.417)).ceil() as usize;
        (0..pages)
            .map(|_| if rng.bernoulli(0.69) { 1 } else { multi(rng) })
            .sum()
    }

    fn open(
        &mut self,
        u: u32,
        objects: impl Iterator<Item = (u64, u64)>,
        primary: bool,
        out: &mut Vec<OpenRequest>,
    ) {
        let client = u % self.client_hosts;
        let user = &mut self.users[u as usize];
        user.in_flight += 1;
        user.conns += 1;
        out.push(OpenRequest {
            identity: ((u as u64) << 32) | user.conns as u64,
            client,
            server: user.server,
            script: objects
                .map(|(request, response)| WebExchange {
                    request,
                    response,
                    gap: 0,
                    server_delay: 0,
                })
                .collect(),
            user: Some(u),
            extra_rtt: None,
            primary,
        });
    }

    /// User `u` starts a page after thinking: each element from the UNC model's law when the
    /// source has it, else from the substitute's (the only laws of `kind = "browsers"`).
    pub fn start_page(&mut self, u: u32, out: &mut Vec<OpenRequest>) {
        let laws = std::sync::Arc::clone(&self.laws);
        self.start_page_with(u, &laws, out);
    }

    fn start_page_with(&mut self, u: u32, laws: &UncLaws, out: &mut Vec<OpenRequest>) {
        let ui = u as usize;
        let server_hosts = self.server_hosts;
        let user = &mut self.users[ui];
        if user.pages_left == 0 {
            user.server = user.rng.below(server_hosts as u64) as u32;
            user.pages_left = match &laws.consecutive_pages {
                Some(c) => c.sample(&mut user.rng) as u32,
                None => MahModel::shared().sample_consecutive_docs(&mut user.rng),
            }
            .max(1);
        }
        user.pages_left -= 1;
        let rng = &mut user.rng;
        let request = |rng: &mut Rng, law: &Option<EmpiricalCdf>| match law {
            Some(c) => (c.sample(rng) as u64).max(1),
            None => (request_size_at(rng.uniform()) as u64).max(1),
        };
        let top_request = request(rng, &laws.top_request);
        let top_response = match &laws.top_response {
            Some(c) => c.sample(rng),
            None if rng.bernoulli(DOWNLOAD_SHARE) => download_size_at(rng.uniform()),
            None => cache_size_at(rng.uniform()),
        }
        .min(SIZE_CAP);
        let embedded = match &laws.objects_per_page {
            Some(c) => (c.sample(rng) as usize).max(1) - 1,
            None => (1.0 + weibull(rng, 1.0, 1.578)).ceil() as usize - 1,
        };
        // Embedded objects: the substitute's ⌈1 + Exp(1.578)⌉ − 1 ≥ 1; its sizes follow the law
        // of later responses on a persistent connection, ℓ ~ N(10.62, 0.94), s ~ Gamma(3.22,
        // rate 3.22) drawn per page.
        let (loc, scale2) = match &laws.embedded_response {
            Some(_) => (0.0, 0.0),
            None => (normal_mv(rng, 10.62, 0.94), gamma(rng, 3.22, 1.0 / 3.22)),
        };
        user.pending.clear();
        for _ in 0..embedded {
            let req = request(&mut user.rng, &laws.embedded_request);
            let resp = match &laws.embedded_response {
                Some(c) => c.sample(&mut user.rng),
                None => log2_law(&mut user.rng, loc, scale2, 2.43),
            }
            .min(SIZE_CAP) as u64;
            user.pending.push((req, resp.max(1)));
        }
        user.pending.reverse(); // taken from the back, in page order
        user.primary_done = false;
        // The top-level connection, if persistent, carries the first embedded objects too.
        let k = self.requests_on_new_connection(ui);
        let top = (top_request, (top_response as u64).max(1));
        let rest = self.take(ui, k - 1);
        self.open(
            u,
            std::iter::once(top).chain(rest.iter().copied()),
            true,
            out,
        );
    }

    /// The user's next `n` (at most) pending objects, in page order.
    fn take(&mut self, u: usize, n: usize) -> OneOrMore<(u64, u64)> {
        let p = &mut self.users[u].pending;
        let n = n.min(p.len());
        if n == 1 {
            return OneOrMore::One(p.pop().expect("an object is pending"));
        }
        let at = p.len() - n;
        let mut v = p.split_off(at);
        v.reverse();
        OneOrMore::More(v)
    }

    fn open_embedded(&mut self, u: u32, out: &mut Vec<OpenRequest>) {
        let ui = u as usize;
        while !self.users[ui].pending.is_empty()
            && self.users[ui].in_flight < self.users[ui].parallel
        {
            let k = self.requests_on_new_connection(ui);
            let objects = self.take(ui, k);
            self.open(u, objects.iter().copied(), false, out);
        }
    }

    /// The top-level response of user `u`'s page has arrived: embedded requests may go out.
    pub fn on_primary_response(&mut self, u: u32, out: &mut Vec<OpenRequest>) {
        self.users[u as usize].primary_done = true;
        self.open_embedded(u, out);
    }

    /// A connection of user `u` is over. Returns the next page's start time when the page is
    /// complete (the think time is drawn now).
    pub fn on_done(&mut self, u: u32, now: Time, out: &mut Vec<OpenRequest>) -> Option<Time> {
        let ui = u as usize;
        self.users[ui].in_flight -= 1;
        if !self.users[ui].primary_done {
            // The top-level connection failed before its response: go on with the page.
            self.users[ui].primary_done = true;
        }
        self.open_embedded(u, out);
        let user = &mut self.users[ui];
        if user.in_flight == 0 && user.pending.is_empty() {
            let think = match &self.laws.think_time {
                Some(law) => law.sample(&mut user.rng),
                None => think_time_s(&mut user.rng, user.think_loc, user.think_scale2),
            };
            return Some(now + secs(think));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a UNC file for it, a persistent connection of the `unc` model carries 2 + a
    /// geometric number of further requests with mean 0.85/0.15 = 5.67 (Le et al. 2003's 15 %
    /// of connections carrying 50 % of the objects): hand-computed mean and P(2) = 1 − q with
    /// q = 1 − 1/(m − 1) = 0.7857.
    #[test]
    fn unc_persistent_requests_fallback_has_the_papers_mean() {
        let mut b = BrowserSource::new(3, 0, 1, &[4], 1.0, 1, 1).with_unc_laws(UncLaws::default());
        let n = 200_000;
        let draws: Vec<usize> = (0..n).map(|_| b.requests_on_new_connection(0)).collect();
        let mean = draws.iter().sum::<usize>() as f64 / n as f64;
        assert!((mean - UNC_PERSISTENT_REQUESTS_MEAN).abs() < 0.03, "{mean}");
        assert!(draws.iter().all(|&k| k >= 2));
        let p2 = draws.iter().filter(|&&k| k == 2).count() as f64 / n as f64;
        let q = 1.0 - 1.0 / (UNC_PERSISTENT_REQUESTS_MEAN - 1.0);
        assert!((p2 - (1.0 - q)).abs() < 0.005, "{p2}");
        // With 15 % persistent, half the objects travel on persistent connections.
        let s = 0.15;
        assert!((s * mean / (s * mean + 1.0 - s) - 0.5).abs() < 0.002);
    }

    /// The substitute keeps its own law (PackMime-HTTP 1.1's pages × objects, mean ≈ 3.19).
    #[test]
    fn substitute_persistent_requests_keep_packmimes_mean() {
        let mut b = BrowserSource::new(3, 0, 1, &[4], 1.0, 1, 1);
        let n = 200_000;
        let mean = (0..n)
            .map(|_| b.requests_on_new_connection(0))
            .sum::<usize>() as f64
            / n as f64;
        assert!((mean - 3.19).abs() < 0.1, "{mean}");
    }
}
