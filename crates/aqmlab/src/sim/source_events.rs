//! Traffic sources' events: the first starts of every source (scheduled when the run is
//! built), a start (a bulk flow, a user's page, PackMime's next connection), the connections
//! a source asks for, and a user told that its connection is over, which may open more or
//! schedule its next page. The sources' own models live in `sources`, `browsers`, `ftp` and
//! `udp_cbr`.

use super::app::App;
use super::browsers::{self, BrowserSource};
use super::bulk_app::BulkApp;
use super::delay_boxes::ExtraRtt;
use super::events::{Ev, MAX_SOURCES};
use super::pages::{self, PageSource};
use super::replay::ReplaySource;
use super::sources::{MahSource, OpenRequest, PackMimeSource};
use super::web_app::WebApp;
use super::{Simulation, Source};
use crate::config::{ResponseEnd, Side, SizeLaw, TrafficConfig};
use crate::rng::{Rng, StreamKind};
use crate::units::secs;

impl Simulation {
    pub(super) fn schedule_sources(&mut self) {
        let seed = self.sc.seed;
        let (left, right) = (self.topo.left, self.topo.right);
        let traffic = self.sc.traffic.clone();
        assert!(traffic.len() < MAX_SOURCES, "too many traffic sources");
        self.response_end = traffic
            .iter()
            .map(|tr| match tr {
                TrafficConfig::Mah { response_end, .. }
                | TrafficConfig::Browsers { response_end, .. }
                | TrafficConfig::Unc { response_end, .. }
                | TrafficConfig::Packmime { response_end, .. }
                | TrafficConfig::Replay { response_end, .. } => *response_end,
                _ => ResponseEnd::LastByte,
            })
            .collect();
        for (s, tr) in traffic.iter().enumerate() {
            let source = s as u32;
            // Hosts to draw clients and servers from: a chain's cross traffic (`hop`) has
            // `cross_hosts` on each side of its hop.
            let cross = self.topo.cross;
            let hop = self.sc.hop_of(s);
            let sides = |side: Side| match (hop, side) {
                (Some(_), _) => (cross, cross),
                (None, Side::Left) => (left, right),
                (None, Side::Right) => (right, left),
            };
            match tr {
                TrafficConfig::Bulk {
                    flows,
                    start_s,
                    start_jitter_s,
                    ..
                } => {
                    for f in 0..*flows {
                        let mut r =
                            Rng::substream(seed, StreamKind::TrafficSource, s as u64, f as u64);
                        let t = secs(start_s + start_jitter_s * r.uniform());
                        self.sched.at(t, Ev::Start { source, flow: f });
                    }
                    self.sources.push(Source::Bulk);
                },
                TrafficConfig::Mah {
                    users,
                    client_side,
                    max_parallel,
                    start_spread_s,
                    think_cap_s,
                    think_wrap_s,
                    size_law,
                    think_law,
                    stationary_start,
                    ..
                } => {
                    let (c, sv) = sides(*client_side);
                    let mut m =
                        MahSource::new(seed, source, *users, *max_parallel, *think_cap_s, c, sv);
                    if let Some(t) = think_wrap_s {
                        m = m.with_think_wrap(*t);
                    }
                    if *size_law == SizeLaw::Exponential {
                        m = m.with_exponential_sizes();
                    }
                    if *think_law == SizeLaw::Exponential {
                        m = m.with_exponential_think_times();
                    } else if *stationary_start {
                        m = m.with_stationary_start();
                    }
                    for u in 0..*users {
                        let t = m.start_time(u, *start_spread_s);
                        self.sched.at(t, Ev::Start { source, flow: u });
                    }
                    self.sources.push(Source::Mah(m));
                },
                TrafficConfig::Browsers {
                    users,
                    client_side,
                    parallel,
                    persistent_share,
                    start_spread_s,
                    ..
                }
                | TrafficConfig::Unc {
                    users,
                    client_side,
                    parallel,
                    persistent_share,
                    start_spread_s,
                    ..
                } => {
                    let (c, sv) = sides(*client_side);
                    let mut b = BrowserSource::new(
                        seed,
                        source,
                        *users,
                        parallel,
                        *persistent_share,
                        c,
                        sv,
                    );
                    if let TrafficConfig::Unc { distributions, .. } = tr {
                        b = b.with_unc_laws(unc_laws(distributions));
                    }
                    for u in 0..*users {
                        let t = b.start_time(u, *start_spread_s);
                        self.sched.at(t, Ev::Start { source, flow: u });
                    }
                    self.sources.push(Source::Browsers(b));
                },
                TrafficConfig::Packmime {
                    rate,
                    client_side,
                    http11,
                    packmime_rtt,
                    response_cap_bytes,
                    ..
                } => {
                    let (c, sv) = sides(*client_side);
                    let mut p = PackMimeSource::new(
                        seed,
                        source,
                        *rate,
                        *http11,
                        *packmime_rtt,
                        *response_cap_bytes,
                        c,
                        sv,
                    );
                    self.sched.at(p.next_gap(), Ev::Start { source, flow: 0 });
                    self.sources.push(Source::PackMime(Box::new(p)));
                },
                TrafficConfig::Ftp { .. } => self.add_ftp_source(source),
                TrafficConfig::Replay {
                    connections,
                    client_side,
                    ..
                } => {
                    let (c, sv) = sides(*client_side);
                    if let Some(t) = ReplaySource::start(connections, 0) {
                        self.sched.at(t, Ev::Start { source, flow: 0 });
                    }
                    self.sources.push(Source::Replay(ReplaySource::new(c, sv)));
                },
                TrafficConfig::UdpCbr { .. } => {
                    self.add_cbr_source(source);
                    self.sources.push(Source::UdpCbr);
                },
                TrafficConfig::Pages(c) => {
                    let (cl, sv) = sides(c.client_side);
                    let mut ps = PageSource::new(seed, self.warmup, source, c, cl, sv);
                    for u in 0..c.users {
                        let t = ps.start_time(u);
                        self.sched.at(t, Ev::Start { source, flow: u });
                    }
                    self.sources.push(Source::Pages(Box::new(ps)));
                },
                TrafficConfig::Dash(d) => {
                    self.add_dash_source(source, d);
                    self.sources.push(Source::Dash);
                },
                TrafficConfig::VideoCall(_) => {
                    self.add_video_source(source);
                    self.sources.push(Source::VideoCall);
                },
                TrafficConfig::Voice(_) | TrafficConfig::Game(_) | TrafficConfig::Ping(_) => {
                    self.add_rt_source(source);
                    self.sources.push(Source::Realtime);
                },
            }
        }
    }

    /// A source's scheduled start: a bulk flow, a Mah user's next page, PackMime's next
    /// connection.
    pub(super) fn on_start(&mut self, source: u32, flow: u32) {
        let now = self.sched.now();
        let mut opens = std::mem::take(&mut self.opens);
        match &mut self.sources[source as usize] {
            Source::Bulk => {
                self.start_bulk(source, flow);
            },
            Source::Mah(m) => m.start_page(flow, &mut opens),
            Source::Browsers(b) => b.start_page(flow, &mut opens),
            Source::Ftp(_) => self.start_ftp(source, flow),
            Source::UdpCbr | Source::VideoCall | Source::Realtime => {
                unreachable!("UDP flows are not started by Ev::Start")
            },
            Source::Pages(p) => p.start_page(flow, now, &mut opens),
            Source::Dash => self.start_dash(source, flow),
            Source::Replay(r) => {
                let TrafficConfig::Replay { connections, .. } = &self.sc.traffic[source as usize]
                else {
                    unreachable!("a replay source")
                };
                let k = flow as usize;
                opens.push(r.connection(connections, k));
                if let Some(t) = ReplaySource::start(connections, k + 1) {
                    self.sched.at(
                        t.max(now),
                        Ev::Start {
                            source,
                            flow: flow + 1,
                        },
                    );
                }
            },
            Source::PackMime(p) => {
                opens.push(p.next_connection());
                let gap = p.next_gap();
                self.sched.at(
                    now + gap,
                    Ev::Start {
                        source,
                        flow: flow + 1,
                    },
                );
            },
        }
        self.open_requests(source, &mut opens);
        self.opens = opens;
    }

    fn open_requests(&mut self, source: u32, opens: &mut Vec<OpenRequest>) {
        let client_left = match self.sc.traffic[source as usize] {
            TrafficConfig::Mah { client_side, .. }
            | TrafficConfig::Packmime { client_side, .. }
            | TrafficConfig::Replay { client_side, .. }
            | TrafficConfig::Browsers { client_side, .. }
            | TrafficConfig::Unc { client_side, .. } => client_side == Side::Left,
            TrafficConfig::Bulk { client_side, .. }
            | TrafficConfig::Ftp { client_side, .. }
            | TrafficConfig::UdpCbr { client_side, .. } => client_side == Side::Left,
            TrafficConfig::Pages(ref c) => c.client_side == Side::Left,
            TrafficConfig::Dash(ref d) => d.client_side == Side::Left,
            TrafficConfig::VideoCall(ref v) => v.client_side == Side::Left,
            TrafficConfig::Voice(_) | TrafficConfig::Game(_) | TrafficConfig::Ping(_) => {
                unreachable!("real-time flows open no connections")
            },
        };
        let pages = matches!(self.sources[source as usize], Source::Pages(_));
        let now = self.sched.now();
        let hop = self.sc.hop_of(source as usize);
        for r in opens.drain(..) {
            let (client_host, server_host) = (
                self.side_host(hop, client_left, r.client),
                self.side_host(hop, !client_left, r.server),
            );
            let app = App::Web(WebApp::new(
                r.script,
                now,
                self.response_end[source as usize],
            ));
            // A page's connections to one origin share its RTT (`pages::rtt_key`).
            let extra_rtt = match r.extra_rtt {
                None if pages => Some(ExtraRtt::shared(
                    self.sample_rtt(source, pages::rtt_key(r.identity), client_host, server_host),
                    self.sc.delay_box.client_share(),
                )),
                e => e,
            };
            self.open(
                source,
                r.identity,
                client_host,
                server_host,
                app,
                r.user,
                extra_rtt,
                r.primary,
            );
        }
    }

    fn start_bulk(&mut self, source: u32, flow: u32) {
        let TrafficConfig::Bulk {
            bytes,
            request_bytes,
            direction,
            client_side,
            ..
        } = self.sc.traffic[source as usize].clone()
        else {
            unreachable!("bulk source")
        };
        let (client_host, server_host) = self.host_pair(source, client_side, flow);
        let app = App::Bulk(BulkApp::bulk(direction, bytes, request_bytes));
        self.open(
            source,
            flow as u64,
            client_host,
            server_host,
            app,
            None,
            None,
            false,
        );
    }

    /// The `i`-th client host on `client_side` and the `i`-th host on the other side (bulk
    /// flows, FTP sessions, UDP flows).
    pub(super) fn host_pair(&self, source: u32, client_side: Side, i: u32) -> (u32, u32) {
        let hop = self.sc.hop_of(source as usize);
        let left = client_side == Side::Left;
        (self.side_host(hop, left, i), self.side_host(hop, !left, i))
    }

    /// The `i`-th host of a side: of the left or right hosts, or, for a source crossing only
    /// hop `hop`, of that hop's cross hosts on that side.
    fn side_host(&self, hop: Option<u32>, left: bool, i: u32) -> u32 {
        match (hop, left) {
            (None, true) => self.topo.left_host(i),
            (None, false) => self.topo.right_host(i),
            (Some(k), left) => self.topo.cross_host(k, !left, i),
        }
    }

    /// Tells a Study B user that its page's top-level response has arrived: the embedded
    /// requests may go out.
    pub(super) fn notify_primary(&mut self, slot: u32) {
        let c = &self.conns[slot as usize];
        let (Some(u), source) = (c.user, c.source) else {
            return;
        };
        let first_byte = c.first_byte;
        let mut opens = std::mem::take(&mut self.opens);
        match &mut self.sources[source as usize] {
            Source::Browsers(b) => b.on_primary_response(u, &mut opens),
            Source::Pages(p) => p.on_document(u, first_byte, &mut opens),
            _ => {},
        }
        self.open_requests(source, &mut opens);
        self.opens = opens;
    }

    /// Tells a Mah user that one of its connections is over (responses in, or failed), once;
    /// the user may open more connections or start thinking.
    pub(super) fn notify_user(&mut self, slot: u32) {
        let now = self.sched.now();
        let c = &mut self.conns[slot as usize];
        let (Some(u), source) = (c.user, c.source) else {
            return;
        };
        if c.notified {
            return;
        }
        c.notified = true;
        let mut opens = std::mem::take(&mut self.opens);
        let next_page = match &mut self.sources[source as usize] {
            Source::Mah(m) => m.on_done(u, now, &mut opens),
            Source::Browsers(b) => b.on_done(u, now, &mut opens),
            Source::Ftp(f) => Some(f.on_done(u, now)),
            Source::Bulk
            | Source::PackMime(_)
            | Source::Replay(_)
            | Source::UdpCbr
            | Source::Dash
            | Source::VideoCall
            | Source::Realtime => None,
            Source::Pages(p) => {
                let c = &self.conns[slot as usize];
                let complete = c.app.transfer_complete() && !c.aborted;
                let (expected, received) = (c.app.bytes_expected(), c.app.bytes_received());
                let done = p.on_done(u, now, complete, expected, received, &mut opens);
                let protocol = p.protocol();
                done.map(|(record, next)| {
                    self.page_rows.push_record(source, protocol, &record);
                    next
                })
            },
        };
        if let Some(t) = next_page {
            self.sched.at(t, Ev::Start { source, flow: u });
        }
        self.open_requests(source, &mut opens);
        self.opens = opens;
    }
}

/// The UNC model's laws of a scenario (validated: every point list is a CDF).
fn unc_laws(d: &crate::config::UncDistributions) -> browsers::UncLaws {
    let law = |points: &Option<Vec<(f64, f64)>>, round_up: bool| {
        points.as_ref().map(|p| {
            crate::workload::dist::EmpiricalCdf::from_points(p, round_up)
                .expect("validated UNC distribution")
        })
    };
    browsers::UncLaws {
        top_request: law(&d.top_request, true),
        embedded_request: law(&d.embedded_request, true),
        top_response: law(&d.top_response, true),
        embedded_response: law(&d.embedded_response, true),
        objects_per_page: law(&d.objects_per_page, true),
        think_time: law(&d.think_time_s, false),
        persistent_requests: law(&d.persistent_requests, true),
        consecutive_pages: law(&d.consecutive_pages, true),
    }
}
