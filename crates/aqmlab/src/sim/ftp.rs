//! Finite file transfers (`kind = "ftp"`): one TCP connection per file, carried as a bulk
//! transfer with a size (request, then the file, then FIN).
//!
//! Two start processes, the two a Study D user meets:
//! - closed loop, `sessions = N`: N sessions each transfer a file, wait an exponential think
//!   time of mean `think_mean_s` once it has arrived (0: restart at once, as the testbed
//!   connections of Study D that "restart after the last file transfer is finished"), then
//!   transfer the next file on a new connection (slow start again);
//! - open loop, `rate = λ`: transfers arrive as a Poisson process of rate λ per second,
//!   whatever happens to earlier ones (the usual model of FTP session arrivals, Paxson & Floyd
//!   1995).
//!
//! Each session has its own random stream (sizes, think times), and the open-loop process one
//! for its gaps and one for its sizes, so a source's k-th file does not depend on the network
//! (common random numbers across queue managers).

use super::app::App;
use super::bulk_app::BulkApp;
use super::{Ev, Simulation, Source};
use crate::config::TrafficConfig;
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time};
use crate::workload::file_size::FileSizeSampler;

/// A `kind = "ftp"` source's state.
#[derive(Clone, Debug)]
pub struct FtpSource {
    sizes: FileSizeSampler,
    think_mean_s: f64,
    /// Closed loop: one stream and a transfer counter per session.
    sessions: Vec<(Rng, u32)>,
    /// Open loop: gap and size streams, and the number of arrivals so far.
    poisson: Option<(f64, Rng, Rng)>,
    arrivals: u64,
}

/// One file to transfer: its identity within the source, its size and its host index.
pub struct Transfer {
    pub identity: u64,
    pub bytes: u64,
    pub host: u32,
    pub session: Option<u32>,
}

impl FtpSource {
    pub fn new(seed: u64, source: u32, tr: &TrafficConfig) -> Self {
        let TrafficConfig::Ftp {
            sessions,
            rate,
            size,
            think_mean_s,
            ..
        } = tr
        else {
            unreachable!("an ftp entry")
        };
        let st = |k: u64| Rng::substream(seed, StreamKind::Workload, source as u64, k);
        FtpSource {
            sizes: size.sampler(),
            think_mean_s: *think_mean_s,
            sessions: (0..sessions.unwrap_or(0))
                .map(|u| (st(u as u64), 0))
                .collect(),
            poisson: rate.map(|r| (r, st(1 << 40), st((1 << 40) + 1))),
            arrivals: 0,
        }
    }

    /// Time from the previous arrival to the next (open loop).
    pub fn next_gap(&mut self) -> Time {
        let (rate, gaps, _) = self.poisson.as_mut().expect("open-loop source");
        secs(gaps.exponential(1.0 / *rate))
    }

    /// The next file of session `flow` (closed loop) or the next arrival (open loop).
    pub fn next_transfer(&mut self, flow: u32) -> Transfer {
        if let Some((_, _, sizes)) = &mut self.poisson {
            self.arrivals += 1;
            return Transfer {
                identity: self.arrivals,
                bytes: self.sizes.sample(sizes),
                host: (self.arrivals - 1) as u32,
                session: None,
            };
        }
        let (rng, count) = &mut self.sessions[flow as usize];
        *count += 1;
        Transfer {
            identity: ((flow as u64) << 32) | *count as u64,
            bytes: self.sizes.sample(rng),
            host: flow,
            session: Some(flow),
        }
    }

    /// Session `u`'s file has arrived (or its connection failed): when it starts the next.
    pub fn on_done(&mut self, u: u32, now: Time) -> Time {
        let (rng, _) = &mut self.sessions[u as usize];
        let think = if self.think_mean_s > 0.0 {
            rng.exponential(self.think_mean_s)
        } else {
            0.0
        };
        now + secs(think)
    }
}

impl Simulation {
    /// Schedules the first starts of `ftp` entry `source`.
    pub(super) fn add_ftp_source(&mut self, source: u32) {
        let tr = &self.sc.traffic[source as usize];
        let TrafficConfig::Ftp {
            sessions,
            start_s,
            start_spread_s,
            ..
        } = tr
        else {
            unreachable!("an ftp entry")
        };
        let (sessions, start_s, spread) = (*sessions, *start_s, *start_spread_s);
        let mut f = FtpSource::new(self.sc.seed, source, tr);
        match sessions {
            Some(n) => {
                for u in 0..n {
                    let mut r = Rng::substream(
                        self.sc.seed,
                        StreamKind::TrafficSource,
                        source as u64,
                        u as u64,
                    );
                    let t = secs(start_s + spread * r.uniform());
                    self.sched.at(t, Ev::Start { source, flow: u });
                }
            },
            None => {
                let t = secs(start_s) + f.next_gap();
                self.sched.at(t, Ev::Start { source, flow: 0 });
            },
        }
        self.sources.push(Source::Ftp(Box::new(f)));
    }

    /// A session's next file, or the next Poisson arrival (which schedules the one after).
    pub(super) fn start_ftp(&mut self, source: u32, flow: u32) {
        let now = self.sched.now();
        let Source::Ftp(f) = &mut self.sources[source as usize] else {
            unreachable!("an ftp source")
        };
        let t = f.next_transfer(flow);
        if t.session.is_none() {
            let gap = f.next_gap();
            self.sched.at(now + gap, Ev::Start { source, flow: 0 });
        }
        let TrafficConfig::Ftp {
            request_bytes,
            direction,
            client_side,
            ..
        } = self.sc.traffic[source as usize]
        else {
            unreachable!("an ftp entry")
        };
        let (client_host, server_host) = self.host_pair(source, client_side, t.host);
        let app = App::Bulk(BulkApp::bulk(direction, Some(t.bytes), request_bytes));
        self.open(
            source,
            t.identity,
            client_host,
            server_host,
            app,
            t.session,
            None,
            false,
        );
    }
}
