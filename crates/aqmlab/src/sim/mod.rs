//! A run: builds the network and traffic of a scenario and advances it in chunks.
//!
//! The caller (the Python layer, or a test) drives it:
//! `Simulation::new(scenario)?`, then `run_until(t)` in steps, `drain()` after each step to take
//! the records produced so far, and `finish()` once `finished()`, which closes the books
//! (unfinished connections are reported as such) and returns the last records.
//!
//! This file holds the `Simulation` itself, its construction and the event loop that routes
//! each event to its handler. The handlers live by role beside it, each file an
//! `impl Simulation` block: `events` (the events and their packing), `network` (packets on
//! links and paths), `connections` (a TCP connection from open to retirement), `timers` (TCP
//! timers and their sweep), `source_events` (traffic sources' starts and users), `books`
//! (records, summary, closing the books) and `trace` (the segment trace).

mod app;
mod app_action;
mod books;
mod browsers;
mod bulk_app;
mod capture_tap;
mod connections;
mod dash;
mod dash_abr;
mod dash_app;
mod dash_player;
mod delay_boxes;
pub mod estimate;
mod events;
mod flow_losses;
mod ftp;
mod monitor;
mod nada;
mod network;
mod observe;
mod one_or_more;
pub mod packmime_draws;
mod pages;
mod periodic;
mod qdisc;
mod records;
mod replay;
mod row_buffer;
mod source_delay;
mod source_events;
mod sources;
mod tcp_trace;
mod timers;
mod trace;
mod trace_select;
mod udp_cbr;
mod video_call;
// Real-time UDP applications (issue 37): voice, game, ping.
mod realtime;
mod web_app;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::config::{ConfigError, DelayPlacement, ResponseEnd, Scenario};
use crate::engine::Scheduler;
use crate::net::delay_clock::DelayClock;
use crate::net::delaybox::RttSampler;
use crate::net::framing::Framing;
use crate::net::jitter::SendJitter;
use crate::net::link::{Link, LinkId};
use crate::net::queue::Queue;
use crate::net::topology::{Chain, Path};
use crate::packet::PacketStore;
use crate::rng::{Rng, StreamKind};
use crate::tcp::template::{EndpointTemplate, LinuxPool};
use crate::tcp::{Endpoint, Outbox};
use crate::units::{millis, secs, BitsPerSec, Time};

use app::App;
use browsers::BrowserSource;
use events::{Ev, PackedEv};
use ftp::FtpSource;
use monitor::Monitor;
use network::PairHasher;
use records::{
    ArrivalRows, BottleneckRows, CbrFlowRows, ConnectionRows, ExchangeRows, LossRunRows,
    QueueDelayRows, QueueRows,
};
use sources::{MahSource, OpenRequest, PackMimeSource};
use timers::TIMER_SWEEP;

pub use books::{EngineStats, Summary};
pub use dash::DashSummary;
pub use monitor::DirectionSummary;
pub use realtime::{GameSummary, PingSummary, VoiceSummary};
pub use trace::TraceEntry;
pub use udp_cbr::UdpSummary;
pub use video_call::VideoCallSummary;

/// One connection: both endpoints, the application driving them, and its record so far.
/// Whether the slot is in use and by which generation, and its timers: `Simulation::tags`.
struct Conn {
    id: u64,
    ep: [Endpoint; 2],
    /// Path ids client → server and server → client.
    paths: [u32; 2],
    /// Delay-box delay of the packets the client (0) and the server (1) send, as they leave
    /// the sender, and (`[delay_box] placement = "boxes"`) before they reach the receiver.
    flow_delay: [Time; 2],
    far_delay: [Time; 2],
    flow_hash: u32,
    app: App,
    source: u32,
    /// Identity of the connection within its source (a bulk flow's index; a Mah user's
    /// `user << 32 | connection number`; PackMime's arrival number).
    identity: u64,
    /// Mah user that opened the connection.
    user: Option<u32>,
    /// Its TCP configuration (index in `Simulation::tcps`).
    tcp: u8,
    /// The user has been told the connection is over.
    notified: bool,
    /// A page's top-level connection (Study B users wait for its first response).
    primary: bool,
    client_host: u32,
    server_host: u32,
    client_left: bool,
    base_rtt: Time,
    start: Time,
    established: Option<Time>,
    first_byte: Option<Time>,
    last_byte: Option<Time>,
    aborted: bool,
    /// Application bytes delivered in order at either end after the warm-up (goodput).
    delivered_measured: u64,
    /// The connection's packets dropped on arrival at a bottleneck queue after the warm-up.
    losses: flow_losses::FlowLosses,
}

/// A traffic source's state.
enum Source {
    Bulk,
    Mah(MahSource),
    PackMime(Box<PackMimeSource>),
    Browsers(BrowserSource),
    Ftp(Box<FtpSource>),
    Replay(replay::ReplaySource),
    /// Adaptive video players (`dash`): their configuration lives in `Simulation::dash`.
    Dash,
    /// UDP CBR flows live in `Simulation::udp`.
    UdpCbr,
    Pages(Box<pages::PageSource>),
    /// Video calls live in `Simulation::video`.
    VideoCall,
    /// Voice, game and ping flows live in `Simulation::rt`.
    Realtime,
}

pub struct Simulation {
    sc: Scenario,
    sched: Scheduler<PackedEv>,
    pkts: PacketStore,
    links: Vec<Link>,
    topo: Chain,
    /// Hop 0's forward link; hop `k`'s direction `dir` (monitor `2k + dir`) is this + 2k + dir.
    first_hop_link: LinkId,
    paths: Vec<Path>,
    /// Propagation delay of each path (sum of its links' delays).
    path_delays: Vec<Time>,
    /// Path ids by (source host, destination host), made as connections need them.
    path_ids: HashMap<(u32, u32), u32, BuildHasherDefault<PairHasher>>,
    conns: Vec<Conn>,
    /// Per slot: generation, whether active, bottleneck drops (`flow_losses::ConnTag`).
    tags: Vec<flow_losses::ConnTag>,
    free_slots: Vec<u32>,
    next_conn_id: u64,
    out: Outbox,
    /// The TCP configurations in use: `[tcp]` first, then each traffic source's own
    /// (`Scenario::traffic_tcp`); a connection's `tcp` indexes this list.
    tcps: Vec<crate::tcp::config::TcpConfig>,
    /// `Endpoint::new` of each of `tcps`, copied by every connection of that configuration,
    /// and the Linux states of ended connections they reuse (`tcp/template.rs`).
    ep_templates: Vec<EndpointTemplate>,
    linux_pool: LinuxPool,
    /// Index in `tcps` of each traffic source's configuration.
    source_tcp: Vec<u8>,
    /// Each traffic source's delay-box RTT law (`Scenario::rtt_of`).
    rtts: Vec<RttSampler>,
    /// The delay emulator's clock (`[delay_box] tick_ms`), when it has one.
    delay_clock: Option<DelayClock>,
    end: Time,
    warmup: Time,
    /// Hop 0's monitors (forward, reverse): the dumbbell's bottleneck.
    monitors: [Monitor; 2],
    /// A chain's other hops' monitors: monitor `m ≥ 2` (hop `m / 2`, direction `m % 2`) is
    /// `hop_monitors[m - 2]`. Empty for the dumbbell.
    hop_monitors: Vec<Monitor>,
    conn_rows: ConnectionRows,
    exch_rows: ExchangeRows,
    arrival_rows: ArrivalRows,
    bneck_rows: BottleneckRows,
    queue_rows: QueueRows,
    udp_rows: CbrFlowRows,
    loss_run_rows: LossRunRows,
    queue_delay_rows: QueueDelayRows,
    /// tc-style statistics over time (`[trace] qdisc`).
    qdisc_rows: records::QdiscRows,
    /// Bottleneck queueing delay by traffic source, when the sources differ in TCP or RTT.
    source_delays: Option<source_delay::SourceDelays>,
    source_delay_rows: records::SourceDelayRows,
    /// Pages of `pages` sources (`sim::pages`); drained only when the scenario has one.
    page_rows: records::PageRows,
    udp: udp_cbr::CbrFlows,
    /// DASH sessions' tables and sums (`None` without a `dash` source).
    dash: Option<Box<dash::DashBooks>>,
    video: video_call::VideoCalls,
    video_call_rows: records::VideoCallRows,
    video_rate_rows: records::VideoRateRows,
    /// Voice, game and ping flows (`realtime`) and their tables.
    rt: realtime::RtFlows,
    rt_rows: Box<(
        realtime::VoiceStreamRows,
        realtime::GameFlowRows,
        realtime::PingProbeRows,
    )>,
    /// Goodput bytes after the warm-up by bottleneck direction crossed (0 forward, 1 reverse).
    goodput: [u64; 2],
    /// Runs of consecutive losses of TCP connections, summed over the connections recorded.
    tcp_loss_runs: Vec<u64>,
    summary: Summary,
    finished_books: bool,
    trace: Option<Vec<TraceEntry>>,
    /// Packet captures (`[[trace.pcap]]`) and per-connection TCP traces (`[trace.tcp]`).
    taps: Option<Box<capture_tap::Taps>>,
    tcp_trace: Option<Box<tcp_trace::TcpTracer>>,
    /// What the hot path checks before calling out of line (`observe`): a packet reaching a
    /// host, a segment sent (`trace`, `[trace.tcp]` or a host capture); a bottleneck's own
    /// observers are flags of its link (`Link::tap_in`, `observe_tx`).
    host_observe: bool,
    seg_observe: bool,
    sources: Vec<Source>,
    /// When each source's Web responses end (`TrafficConfig` `response_end`).
    response_end: Vec<ResponseEnd>,
    opens: Vec<OpenRequest>,
    /// Exchanges started after the warm-up and completed so far (for `max_exchanges`).
    exchanges_done: u64,
    /// Time of the next `TimerSweep`: timer deadlines from then on wait for a sweep.
    next_sweep: Time,
    /// The run's state outgrows the processor's private cache, so packets and tags are
    /// fetched ahead of the events that need them; and outgrows the shared cache too, so the
    /// receiving connection's other lines and its Linux state are as well (`prefetch_pays`,
    /// set at every timer sweep). Below those sizes the prefetches cost instructions and save
    /// nothing.
    prefetch_ahead: bool,
    prefetch_deep: bool,
    delivered_packets: u64,
    /// End of the serialization in progress on each bottleneck (by direction; `Time::MAX`
    /// when idle). These are the only links with a serialization event, and each has at most
    /// one pending: kept here rather than in the event list (`run_until`), they skip its
    /// filing and moves, about a third of all events in a Web run.
    tx_due: [Time; 2],
    /// The same for a chain's other hops (monitor `m ≥ 2` at `m - 2`), and the earliest of
    /// them with its monitor (`Time::MAX` for the dumbbell, so that `run_until` compares one
    /// more number and the dumbbell's path is otherwise unchanged).
    chain_due: Vec<Time>,
    chain_next: (Time, usize),
    /// Ends of serialization handled (counted with the events).
    tx_done_events: u64,
    stale_packets: u64,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Self, ConfigError> {
        scenario.validate()?;
        let sc = scenario;
        let topo = Chain {
            left: sc.topology.left_hosts,
            right: sc.topology.right_hosts,
            hops: sc.hop_count(),
            cross: sc.topology.cross_hosts,
        };
        let seed = sc.seed;
        let mean_pkt = sc.tcp.mss + sc.tcp.header_bytes;
        let access_rate = BitsPerSec::from_mbps(sc.topology.access_mbps);
        let access_delay = millis(sc.topology.access_delay_ms);
        let mut links = Vec::with_capacity(topo.link_count());
        for l in 0..2 * topo.hosts() {
            let access = crate::aqm::config::AqmConfig::Droptail {
                limit: sc.topology.access_queue_packets,
                unit: crate::aqm::QueueUnit::Packets,
            };
            let q = Queue::new(
                access.build(access_rate, mean_pkt),
                Rng::stream(seed, StreamKind::Queue, l as u64 + 2),
            );
            let uplink = l % 2 == 0;
            // Outbound delay boxes sit on the links leaving hosts, inbound ones on those
            // reaching them.
            let placement = sc.delay_box.placement;
            let boxed = uplink != placement.inbound() || placement == DelayPlacement::Boxes;
            let mut link = Link::new(
                access_rate,
                access_delay,
                q,
                0.0,
                Rng::stream(seed, StreamKind::LinkLoss, l as u64),
                boxed,
            );
            link.hands_far_box = uplink && placement == DelayPlacement::Boxes;
            if uplink && sc.topology.host_jitter_us > 0.0 {
                let max = crate::units::round_ns(sc.topology.host_jitter_us * 1e3);
                link.jitter = Some(Box::new(SendJitter::new(max, seed, l / 2)));
            }
            links.push(link);
        }
        let b_delay = millis(sc.topology.bottleneck_delay_ms);
        let rev_cfg = sc.queue_reverse.clone().unwrap_or_else(|| sc.queue.clone());
        for (dir, (qcfg, loss)) in [
            (&sc.queue, sc.topology.loss_rate),
            (&rev_cfg, sc.topology.loss_rate_reverse),
        ]
        .into_iter()
        .enumerate()
        {
            let b_rate = BitsPerSec::from_mbps(sc.bottleneck_rate_mbps(dir));
            // Queue streams 0 and 1 belong to the bottleneck: the same across queue managers.
            let mut q = Queue::new(
                qcfg.build_for_link(b_rate, mean_pkt, b_delay),
                Rng::stream(seed, StreamKind::Queue, dir as u64),
            );
            q.track_sojourn();
            let lid = topo.link_count() as u64 - 2 + dir as u64;
            links.push(Link::new(
                b_rate,
                b_delay,
                q,
                loss,
                Rng::stream(seed, StreamKind::LinkLoss, lid),
                false,
            ));
            links.last_mut().expect("just pushed").monitor = Some(dir as u8);
        }
        for k in 1..topo.hops {
            let (mbps, delay_ms, fwd, rev) = sc.hop_link(k as usize);
            let (rate, delay) = (BitsPerSec::from_mbps(mbps), millis(delay_ms));
            for (dir, qcfg) in [fwd, rev].into_iter().enumerate() {
                // A chain's other hops take the streams a host's link would have if it had
                // the hop's number: after every stream of hop 0 and the access links.
                let lid = topo.hop_link(k, dir as u32) as u64;
                let mut q = Queue::new(
                    qcfg.build_for_link(rate, mean_pkt, delay),
                    Rng::stream(seed, StreamKind::Queue, lid + 2),
                );
                q.track_sojourn();
                let mut link = Link::new(
                    rate,
                    delay,
                    q,
                    0.0,
                    Rng::stream(seed, StreamKind::LinkLoss, lid),
                    false,
                );
                link.monitor = Some((2 * k + dir as u32) as u8);
                links.push(link);
            }
        }
        debug_assert_eq!(links.len(), topo.link_count());
        let access_framing = Framing::new(sc.topology.access_framing);
        let bottleneck_framing = Framing::new(sc.topology.bottleneck_framing);
        let ticked = sc.delay_box.tick_ms > 0.0;
        for l in &mut links {
            l.cut_through = l.monitor.is_none();
            l.ticked_box = ticked && l.cut_through && l.adds_flow_delay;
            l.emulated_host = l.ticked_box || l.jitter.is_some();
            l.framing = if l.cut_through {
                access_framing
            } else {
                bottleneck_framing
            };
        }
        let end = secs(sc.duration_s);
        let warmup = secs(sc.warmup_s);
        let mut tcps = vec![sc.tcp.clone()];
        let source_tcp: Vec<u8> = (0..sc.traffic.len())
            .map(|i| match sc.traffic_tcp.get(i).and_then(Option::as_ref) {
                Some(t) => {
                    tcps.push(t.clone());
                    (tcps.len() - 1) as u8
                },
                None => 0,
            })
            .collect();
        // Their times converted once (`tcp/config_times.rs`), before the endpoints copy them.
        tcps.iter_mut()
            .for_each(crate::tcp::config::TcpConfig::prepare);
        let ep_templates = tcps.iter().map(EndpointTemplate::new).collect();
        let mut sim = Simulation {
            sched: Scheduler::new(),
            pkts: PacketStore::default(),
            links,
            topo,
            paths: Vec::new(),
            path_delays: Vec::new(),
            path_ids: HashMap::default(),
            conns: Vec::new(),
            tags: Vec::new(),
            free_slots: Vec::new(),
            next_conn_id: 0,
            out: Outbox::default(),
            tcps,
            ep_templates,
            linux_pool: LinuxPool::default(),
            source_tcp,
            rtts: (0..sc.traffic.len())
                .map(|i| RttSampler::new(sc.rtt_of(i)))
                .collect(),
            delay_clock: (sc.delay_box.tick_ms > 0.0)
                .then(|| DelayClock::new(millis(sc.delay_box.tick_ms).max(1), topo.hosts(), seed)),
            end,
            warmup,
            monitors: [
                Monitor::new("forward", &sc.measure).in_chain(&sc, 0),
                Monitor::new("reverse", &sc.measure).in_chain(&sc, 0),
            ],
            hop_monitors: (2..2 * topo.hops)
                .map(|m| {
                    let name = if m % 2 == 0 { "forward" } else { "reverse" };
                    Monitor::new(name, &sc.measure).in_chain(&sc, m / 2)
                })
                .collect(),
            conn_rows: ConnectionRows::default(),
            exch_rows: ExchangeRows::default(),
            arrival_rows: ArrivalRows::default(),
            bneck_rows: BottleneckRows::default(),
            queue_rows: QueueRows::default(),
            udp_rows: CbrFlowRows::default(),
            loss_run_rows: LossRunRows::default(),
            queue_delay_rows: QueueDelayRows::default(),
            qdisc_rows: records::QdiscRows::default(),
            source_delays: (!sc.traffic_tcp.is_empty()
                || !sc.traffic_rtt.is_empty()
                || !sc.topology.hops.is_empty())
            .then(|| {
                source_delay::SourceDelays::new(
                    sc.traffic.len(),
                    topo.hops as usize,
                    !sc.topology.hops.is_empty(),
                )
            }),
            source_delay_rows: Default::default(),
            page_rows: Default::default(),
            udp: udp_cbr::CbrFlows::default(),
            dash: None,
            video: video_call::VideoCalls::default(),
            video_call_rows: records::VideoCallRows::default(),
            video_rate_rows: records::VideoRateRows::default(),
            rt: realtime::RtFlows::default(),
            rt_rows: Box::default(),
            goodput: [0; 2],
            tcp_loss_runs: Vec::new(),
            summary: Summary::default(),
            finished_books: false,
            trace: None,
            taps: capture_tap::Taps::new(&sc.trace.pcap, seed),
            tcp_trace: sc
                .trace
                .tcp
                .as_ref()
                .map(|t| Box::new(tcp_trace::TcpTracer::new(t, seed))),
            host_observe: false,
            seg_observe: false,
            sources: Vec::new(),
            response_end: Vec::new(),
            opens: Vec::new(),
            exchanges_done: 0,
            next_sweep: TIMER_SWEEP,
            prefetch_ahead: false,
            prefetch_deep: false,
            delivered_packets: 0,
            tx_due: [Time::MAX; 2],
            chain_due: vec![Time::MAX; 2 * (topo.hops as usize - 1)],
            chain_next: (Time::MAX, 0),
            first_hop_link: topo.forward(),
            tx_done_events: 0,
            stale_packets: 0,
            sc,
        };
        let chained = !sim.sc.topology.hops.is_empty();
        sim.bneck_rows.chained = chained;
        sim.queue_rows.chained = chained;
        sim.queue_delay_rows.chained = chained;
        sim.source_delay_rows.chained = chained;
        sim.set_observers();
        sim.schedule_sources();
        for m in 0..sim.monitor_count() {
            let lid = sim.bottleneck(m);
            if let Some(p) = sim.links[lid as usize].queue.aqm.tick_period() {
                sim.sched.at(p, Ev::QueueTick(lid));
            }
        }
        sim.sched.at(0, Ev::Sample);
        sim.sched.at(sim.monitors[0].interval, Ev::Interval);
        sim.sched.at(warmup, Ev::Warmup);
        sim.sched.at(TIMER_SWEEP, Ev::TimerSweep);
        for (i, step) in sim.sc.topology.bottleneck_steps.iter().enumerate() {
            sim.sched.at(secs(step.at_s), Ev::RateStep(i as u32));
        }
        Ok(sim)
    }

    /// The link of monitor `m`: hop `m / 2`'s forward (`m` even) or reverse direction; 0 and 1
    /// are the bottleneck of the dumbbell.
    #[inline]
    fn bottleneck(&self, m: usize) -> LinkId {
        self.first_hop_link + m as LinkId
    }

    /// Number of monitored links: two per hop.
    fn monitor_count(&self) -> usize {
        2 * self.topo.hops as usize
    }

    fn monitor(&self, m: usize) -> &Monitor {
        if m < 2 {
            &self.monitors[m]
        } else {
            &self.hop_monitors[m - 2]
        }
    }

    /// Sets when monitor `m`'s link next ends a serialization (`Time::MAX`: idle).
    #[inline]
    fn set_tx_due(&mut self, m: usize, t: Time) {
        if m < 2 {
            self.tx_due[m] = t;
        } else {
            self.set_chain_due(m, t);
        }
    }

    /// `set_tx_due` for a chain's other hops: the earliest of them is kept for `run_until`
    /// (ties to the lowest monitor, for a deterministic order).
    #[inline(never)]
    fn set_chain_due(&mut self, m: usize, t: Time) {
        self.chain_due[m - 2] = t;
        let mut next = (Time::MAX, 0);
        for (i, &due) in self.chain_due.iter().enumerate() {
            if due < next.0 {
                next = (due, i + 2);
            }
        }
        self.chain_next = next;
    }

    /// The queue discipline of a bottleneck (direction 0 forward, 1 reverse), for its state.
    pub fn bottleneck_aqm(&self, dir: usize) -> &crate::aqm::Aqm {
        &self.links[self.bottleneck(dir) as usize].queue.aqm
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    /// Runs every event up to `t` (capped at the end of the run). A bottleneck's end of
    /// serialization (`tx_due`) runs after the listed events of the same nanosecond.
    pub fn run_until(&mut self, t: Time) {
        loop {
            // `end` can move earlier while running (max_exchanges): read at every step.
            let until = t.min(self.end);
            let dir = (self.tx_due[1] < self.tx_due[0]) as usize;
            let (mut due, mut m) = (self.tx_due[dir], dir);
            if self.chain_next.0 < due {
                (due, m) = self.chain_next;
            }
            // A packet arriving soon is fetched ahead, with its connection's tag: it has waited
            // on a link (half an RTT in a delay box) long enough to leave the caches
            // (`Scheduler::pop_until_hinting`).
            // At its host, the receiving endpoint's Linux state too: the endpoint's lines
            // were fetched when the packet went onto its last link (`on_arrive`), so the
            // pointer to it can now be read without a wait.
            let (pkts, tags, conns) = (&self.pkts, &self.tags, &self.conns);
            let deep = self.prefetch_deep;
            let next = if self.prefetch_ahead {
                self.sched.pop_until_hinting(until.min(due), |e| {
                    let Some((id, owner, to_host)) = e.arrival() else {
                        return;
                    };
                    pkts.prefetch(id);
                    // The tags (a few MiB) stay in the shared cache until the state is larger.
                    let Some(o) = (owner as usize).checked_sub(1).filter(|_| deep) else {
                        return;
                    };
                    let slot = o >> 1;
                    if let Some(t) = tags.get(slot) {
                        network::prefetch(t);
                    }
                    if to_host {
                        if let Some(lx) = conns.get(slot).and_then(|c| c.ep[o & 1].linux_cong()) {
                            network::prefetch(lx);
                        }
                    }
                })
            } else {
                self.sched.pop_until(until.min(due))
            };
            if let Some(ev) = next {
                self.dispatch(ev.unpack());
            } else if due <= until {
                self.sched.advance_to(due);
                self.tx_done_events += 1;
                self.on_tx_done(self.bottleneck(m));
            } else {
                break;
            }
        }
        self.sched.advance_to(t.min(self.end));
    }

    pub fn now(&self) -> Time {
        self.sched.now()
    }

    pub fn end_time(&self) -> Time {
        self.end
    }

    pub fn finished(&self) -> bool {
        self.sched.now() >= self.end
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt, .. } => self.on_arrive(pkt),
            Ev::Timer { slot, side, gen } => self.on_timer(slot, side, gen),
            Ev::Start { source, flow } => self.on_start(source, flow),
            Ev::AppWake { slot, side, gen } => self.on_app_wake(slot, side, gen),
            Ev::CbrSend(f) => self.on_cbr_send(f),
            Ev::Video { what, call } => self.on_video(what, call),
            Ev::RtSend(s) => self.on_rt_send(s),
            Ev::QueueTick(l) => {
                let now = self.sched.now();
                let link = &mut self.links[l as usize];
                let len = link.queue.len();
                link.queue.aqm.on_tick(now, len);
                if let Some(p) = link.queue.aqm.tick_period() {
                    self.sched.at(now + p, Ev::QueueTick(l));
                }
            },
            Ev::Sample => {
                for dir in 0..2 {
                    let q = &self.links[self.bottleneck(dir) as usize].queue;
                    self.monitors[dir].sample(self.sched.now(), q, &mut self.queue_rows);
                }
                for (i, mon) in self.hop_monitors.iter_mut().enumerate() {
                    let q = &self.links[self.first_hop_link as usize + 2 + i].queue;
                    mon.sample(self.sched.now(), q, &mut self.queue_rows);
                }
                let p = self.monitors[0].sample_period;
                self.sched.after(p, Ev::Sample);
            },
            Ev::Interval => {
                let now = self.sched.now();
                if now >= self.end {
                    // The interval that ends the run is closed by `finish`, after every event
                    // due at the end: an arrival at exactly `duration_s` (queued after this
                    // event) is in the summary, so it must be in the table too.
                    return;
                }
                for dir in 0..2 {
                    let link = &self.links[self.bottleneck(dir) as usize];
                    self.monitors[dir].interval(now, link, &mut self.bneck_rows);
                }
                for (i, mon) in self.hop_monitors.iter_mut().enumerate() {
                    let link = &self.links[self.first_hop_link as usize + 2 + i];
                    mon.interval(now, link, &mut self.bneck_rows);
                }
                if self.sc.trace.qdisc {
                    self.sample_qdisc(now);
                }
                if now > self.warmup {
                    if let Some(d) = self.source_delays.as_mut() {
                        d.close_interval(now);
                    }
                }
                let p = self.monitors[0].interval;
                self.sched.after(p, Ev::Interval);
            },
            Ev::TimerSweep => self.sweep_timers(),
            Ev::Warmup => {
                if let Some(d) = self.source_delays.as_mut() {
                    d.start(self.sched.now());
                }
                for m in 0..self.monitor_count() {
                    let b = self.bottleneck(m) as usize;
                    let now = self.sched.now();
                    self.links[b].queue.stats.measured_from = now;
                    let link = &self.links[b];
                    let mon = if m < 2 {
                        &mut self.monitors[m]
                    } else {
                        &mut self.hop_monitors[m - 2]
                    };
                    mon.start_measuring(now, link);
                }
            },
            Ev::RateStep(i) => {
                let t = &self.sc.topology;
                let step = &t.bottleneck_steps[i as usize];
                // The reverse direction follows `mbps` only on a symmetric link.
                let symmetric = t.bottleneck_reverse_mbps.is_none();
                let reverse = step.reverse_mbps.or(symmetric.then_some(step.mbps));
                let now = self.sched.now();
                for (dir, rate) in [(0, Some(step.mbps)), (1, reverse)] {
                    if let Some(r) = rate {
                        let b = self.bottleneck(dir) as usize;
                        self.links[b].set_rate(now, BitsPerSec::from_mbps(r));
                    }
                }
            },
        }
    }

    /// tc-style statistics of both bottleneck queues at `now`, as rows of the `qdisc` table.
    #[cold]
    fn sample_qdisc(&mut self, now: Time) {
        for (dir, name) in [(0, "forward"), (1, "reverse")] {
            let link = &self.links[self.bottleneck(dir) as usize];
            let stats = qdisc::tc_stats(link, now);
            qdisc::push_rows(&mut self.qdisc_rows, now, name, &stats);
        }
    }

    /// Scripts losses on a link (tests and teaching): see `ScriptedLoss`.
    pub fn script_loss(&mut self, link: LinkId, loss: crate::net::link::ScriptedLoss) {
        self.links[link as usize].scripted.push(loss);
    }

    /// Number of links (ids `0..link_count()`; `net::topology` gives their numbering).
    /// The endpoints (client, server) of every connection slot, in slot order (for
    /// inspecting a sender's state in tests).
    pub fn endpoints(&self) -> impl Iterator<Item = &[Endpoint; 2]> {
        self.conns.iter().map(|c| &c.ep)
    }

    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Read access for tests and tools: a link (see `net::topology` for numbering).
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id as usize]
    }

    pub fn topology(&self) -> Chain {
        self.topo
    }

    /// Packets currently in the network (queues, links, delay boxes).
    pub fn packets_in_network(&self) -> usize {
        self.pkts.live()
    }
}
