//! Traffic sources that open Web connections: Mah's browsing users (closed loop: a user's
//! next page waits for the last one) and PackMime-HTTP (open loop: connections arrive at a
//! rate whatever happens to earlier ones).
//!
//! Every random quantity comes from the source's own streams — one per Mah user, one per
//! PackMime model — so a user's pages, sizes and think times, and PackMime's k-th connection,
//! do not depend on the network (common random numbers across queue managers).

use super::delay_boxes::ExtraRtt;
use super::web_app::{Script, WebExchange};
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time};
use crate::workload::dist::{PiecewiseLaw, ResidualLaw};
use crate::workload::mah::MahModel;
use crate::workload::packmime::{
    Exchange, PackMimeArrivals, PackMimePersistence, PackMimeRequestSize, PackMimeResponseSize,
    PackMimeServerDelay, PackMimeXmit, XmitSide,
};

/// A connection a source wants opened: hosts are indices within the client's and the
/// server's side of the dumbbell.
#[derive(Clone, Debug)]
pub struct OpenRequest {
    /// Unique per source: keys the connection's delay-box and timer-phase streams.
    pub identity: u64,
    pub client: u32,
    pub server: u32,
    pub script: Script,
    /// Mah user to notify when the responses have arrived.
    pub user: Option<u32>,
    /// Extra RTT chosen by the source (PackMime's own RTT model) instead of `[rtt]`.
    pub extra_rtt: Option<ExtraRtt>,
    /// A page's top-level connection: its user is told when the first response arrives.
    pub primary: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Primary,
    Embedded,
}

#[derive(Clone, Debug)]
struct MahUser {
    rng: Rng,
    server: u32,
    pages_left: u32,
    embedded_left: u32,
    in_flight: u32,
    phase: Phase,
    conns: u32,
}

/// Mah's HTTP/1.0 users [model-facts §8.1]: think → page (primary object, then the embedded
/// objects on parallel connections, at most `max_parallel` at once) → think …; consecutive
/// pages from one server, then a new server chosen uniformly.
#[derive(Clone, Debug)]
pub struct MahSource {
    model: &'static MahModel,
    users: Vec<MahUser>,
    max_parallel: u32,
    think_cap: Option<f64>,
    /// GloMoSim's threshold: a think time above it becomes its remainder modulo the threshold.
    think_wrap: Option<f64>,
    /// Draw sizes from exponential laws with Mah's means instead of Mah's CDFs.
    exponential_sizes: bool,
    /// Draw think times from an exponential law with Mah's mean (and start stationary).
    exponential_think: bool,
    /// Residual law of the (capped) empirical think time: start in a think period.
    stationary_start: Option<ResidualLaw>,
    client_hosts: u32,
    server_hosts: u32,
}

impl MahSource {
    pub fn new(
        seed: u64,
        source: u32,
        users: u32,
        max_parallel: u32,
        think_cap: Option<f64>,
        client_hosts: u32,
        server_hosts: u32,
    ) -> Self {
        let users = (0..users)
            .map(|u| MahUser {
                rng: Rng::substream(seed, StreamKind::Workload, source as u64, u as u64),
                server: 0,
                pages_left: 0,
                embedded_left: 0,
                in_flight: 0,
                phase: Phase::Idle,
                conns: 0,
            })
            .collect();
        MahSource {
            model: MahModel::shared(),
            users,
            max_parallel,
            think_cap,
            think_wrap: None,
            exponential_sizes: false,
            exponential_think: false,
            stationary_start: None,
            client_hosts,
            server_hosts,
        }
    }

    /// Sizes from exponential laws with the means of Mah's CDFs (a burstiness control).
    pub fn with_exponential_sizes(mut self) -> Self {
        self.exponential_sizes = true;
        self
    }

    /// Think times from an exponential law with the mean of Mah's CDF (a burstiness control:
    /// without heavy-tailed OFF periods, and with exponential sizes, the aggregate has no
    /// long-range dependence — Willinger et al. 1997's ON/OFF result).
    pub fn with_exponential_think_times(mut self) -> Self {
        self.exponential_think = true;
        self
    }

    /// Think times above `threshold` are replaced by their remainder modulo it, as GloMoSim's
    /// and QualNet's HTTP clients do (`workload::dist::piecewise`). Set before
    /// `with_stationary_start`.
    pub fn with_think_wrap(mut self, threshold: f64) -> Self {
        self.think_wrap = Some(threshold);
        self
    }

    /// Each user starts in a think period with the stationary residual of the empirical
    /// (wrapped, capped) think time (`ResidualLaw`), so that the population is stationary from
    /// time 0 rather than fetching its first pages together.
    pub fn with_stationary_start(mut self) -> Self {
        self.stationary_start = Some(ResidualLaw::of(&self.think_law()));
        self
    }

    /// The law of the think times this source draws (Mah's CDF, wrapped, then capped).
    pub fn think_law(&self) -> PiecewiseLaw {
        let mut law = PiecewiseLaw::from_cdf(&self.model.think_time);
        if let Some(t) = self.think_wrap {
            law = law.wrapped(t);
        }
        if let Some(c) = self.think_cap {
            law = law.capped(c);
        }
        law
    }

    fn think_time(&mut self, u: u32) -> f64 {
        let user = &mut self.users[u as usize];
        let mut think = if self.exponential_think {
            user.rng.exponential(self.model.think_time.mean())
        } else {
            self.model.sample_think_time(&mut user.rng)
        };
        if let Some(t) = self.think_wrap {
            if think > t {
                think %= t;
            }
        }
        if let Some(cap) = self.think_cap {
            think = think.min(cap);
        }
        think
    }

    /// When user `u` first starts: within `[0, spread)`, or, with exponential think times,
    /// after a first think (the stationary residual of an exponential OFF period), or, with a
    /// stationary start, after the residual of an empirical think.
    pub fn start_time(&mut self, u: u32, spread: f64) -> Time {
        if self.exponential_think {
            return secs(self.think_time(u));
        }
        if let Some(law) = &self.stationary_start {
            return secs(law.sample(&mut self.users[u as usize].rng));
        }
        secs(spread * self.users[u as usize].rng.uniform())
    }

    fn open(&mut self, u: u32, primary: bool, out: &mut Vec<OpenRequest>) {
        let m = self.model;
        let client = u % self.client_hosts;
        let user = &mut self.users[u as usize];
        let (request, response) = match (self.exponential_sizes, primary) {
            (false, true) => (
                m.sample_primary_request(&mut user.rng),
                m.sample_primary_reply(&mut user.rng),
            ),
            (false, false) => (
                m.sample_secondary_request(&mut user.rng),
                m.sample_secondary_reply(&mut user.rng),
            ),
            (true, _) => {
                let (req, rep) = if primary {
                    (&m.primary_request, &m.primary_reply)
                } else {
                    (&m.secondary_request, &m.secondary_reply)
                };
                let rng = &mut user.rng;
                (
                    rng.exponential(req.mean()).ceil() as u64,
                    rng.exponential(rep.mean()).ceil() as u64,
                )
            },
        };
        user.in_flight += 1;
        user.conns += 1;
        out.push(OpenRequest {
            identity: ((u as u64) << 32) | user.conns as u64,
            client,
            server: user.server,
            // Mah's CDFs give sizes ≥ 1 byte; HTTP/1.0: one exchange, no server delay.
            script: Script::One(WebExchange {
                request: request.max(1),
                response: response.max(1),
                gap: 0,
                server_delay: 0,
            }),
            user: Some(u),
            extra_rtt: None,
            primary: false,
        });
    }

    /// User `u` starts a page (after its think time).
    pub fn start_page(&mut self, u: u32, out: &mut Vec<OpenRequest>) {
        let m = self.model;
        let server_hosts = self.server_hosts;
        let user = &mut self.users[u as usize];
        if user.pages_left == 0 {
            user.server = user.rng.below(server_hosts as u64) as u32;
            user.pages_left = m.sample_consecutive_docs(&mut user.rng).max(1);
        }
        user.pages_left -= 1;
        let files = m.sample_files_per_document(&mut user.rng).max(1);
        user.embedded_left = files - 1;
        user.phase = Phase::Primary;
        self.open(u, true, out);
    }

    /// A connection of user `u` has delivered its response (or failed). Returns the time the
    /// user's next page starts when the page is complete (the think time is drawn now).
    pub fn on_done(&mut self, u: u32, now: Time, out: &mut Vec<OpenRequest>) -> Option<Time> {
        let user = &mut self.users[u as usize];
        user.in_flight -= 1;
        if user.phase == Phase::Primary {
            user.phase = Phase::Embedded;
        }
        while self.users[u as usize].embedded_left > 0
            && self.users[u as usize].in_flight < self.max_parallel
        {
            self.users[u as usize].embedded_left -= 1;
            self.open(u, false, out);
        }
        let user = &mut self.users[u as usize];
        if user.in_flight == 0 && user.embedded_left == 0 {
            user.phase = Phase::Idle;
            return Some(now + secs(self.think_time(u)));
        }
        None
    }
}

/// PackMime-HTTP [model-facts §8.3]: connection arrivals, sizes, server delays, HTTP/1.1
/// structure and (optionally) its own per-connection RTTs, each model on its own stream.
#[derive(Clone, Debug)]
pub struct PackMimeSource {
    arrivals: PackMimeArrivals,
    requests: PackMimeRequestSize,
    responses: PackMimeResponseSize,
    delays: PackMimeServerDelay,
    persistence: Option<PackMimePersistence>,
    rtt: Option<(PackMimeXmit, PackMimeXmit)>,
    hosts: Rng,
    client_hosts: u32,
    server_hosts: u32,
    next_id: u64,
    buf: Vec<Exchange>,
}

impl PackMimeSource {
    pub fn new(
        seed: u64,
        source: u32,
        rate: f64,
        http11: bool,
        packmime_rtt: bool,
        response_cap: Option<u64>,
        client_hosts: u32,
        server_hosts: u32,
    ) -> Self {
        // One stream per model, as ns-2 gives each PackMime random variable its own RNG.
        let st = |k: u64| Rng::substream(seed, StreamKind::Workload, source as u64, (1 << 40) + k);
        let mut responses = PackMimeResponseSize::new(rate, st(2));
        if let Some(cap) = response_cap {
            responses = responses.with_cap(cap);
        }
        PackMimeSource {
            arrivals: PackMimeArrivals::new(rate, st(0)),
            requests: PackMimeRequestSize::new(rate, st(1)),
            responses,
            delays: PackMimeServerDelay::new(st(3)),
            persistence: http11.then(|| PackMimePersistence::new(st(4))),
            rtt: packmime_rtt.then(|| {
                (
                    PackMimeXmit::new(XmitSide::Client, rate, st(5)),
                    PackMimeXmit::new(XmitSide::Server, rate, st(6)),
                )
            }),
            hosts: st(7),
            client_hosts,
            server_hosts,
            next_id: 0,
            buf: Vec::new(),
        }
    }

    /// Time until the next connection arrives.
    pub fn next_gap(&mut self) -> Time {
        secs(self.arrivals.next_gap_secs())
    }

    /// The next connection.
    pub fn next_connection(&mut self) -> OpenRequest {
        // Zero-byte sizes are replaced by 1 byte, as ns-2's PackMime does.
        let req = self.requests.next_bytes().max(1);
        let resp = self.responses.next_bytes().max(1);
        let script: Script = match &mut self.persistence {
            Some(p) => {
                p.next_connection(req, resp, &mut self.buf);
                self.buf
                    .iter()
                    .map(|e| WebExchange {
                        request: e.request_bytes.max(1),
                        response: e.response_bytes.max(1),
                        gap: secs(e.gap_secs),
                        server_delay: 0,
                    })
                    .collect()
            },
            None => Script::One(WebExchange {
                request: req,
                response: resp,
                gap: 0,
                server_delay: 0,
            }),
        };
        let mut script = script;
        for e in script.iter_mut() {
            e.server_delay = secs(self.delays.next_secs());
        }
        // DelayBox: each side's box adds its RTT sample (half in each direction), so the
        // connection's extra RTT is the sum of the client-side and server-side samples (§8.3.10).
        let extra_rtt = self.rtt.as_mut().map(|(c, s)| {
            let (c, s) = (c.next_rtt_ms(), s.next_rtt_ms());
            ExtraRtt {
                total: secs((c + s) * 1e-3),
                client: secs(c * 1e-3),
            }
        });
        self.next_id += 1;
        OpenRequest {
            identity: self.next_id,
            client: self.hosts.below(self.client_hosts as u64) as u32,
            server: self.hosts.below(self.server_hosts as u64) as u32,
            script,
            user: None,
            extra_rtt,
            primary: false,
        }
    }
}
