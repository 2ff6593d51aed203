//! A run: builds the network and traffic of a scenario and advances it in chunks.
//!
//! The caller (the Python layer, or a test) drives it:
//! `Simulation::new(scenario)?`, then `run_until(t)` in steps, `drain()` after each step to take
//! the records produced so far, and `finish()` once `finished()`, which closes the books
//! (unfinished connections are reported as such) and returns the last records.

mod app;
mod app_action;
mod browsers;
mod bulk_app;
pub mod estimate;
mod flow_losses;
mod ftp;
mod monitor;
mod one_or_more;
mod records;
mod sources;
mod udp_cbr;
mod web_app;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use crate::config::{
    ConfigError, DelayPlacement, ResponseEnd, Scenario, Side, SizeLaw, TrafficConfig,
};
use crate::engine::Scheduler;
use crate::measure::Table;
use crate::net::delay_clock::DelayClock;
use crate::net::delaybox::RttSampler;
use crate::net::framing::Framing;
use crate::net::jitter::SendJitter;
use crate::net::link::{Link, LinkId};
use crate::net::queue::{Offer, Queue};
use crate::net::topology::{Dumbbell, Path};
use crate::packet::{Packet, PacketStore, PktId, Proto};
use crate::rng::{Rng, StreamKind};
use crate::tcp::{Endpoint, Outbox};
use crate::units::{millis, secs, BitsPerSec, Time};

use app::App;
use app_action::AppAction;
use browsers::BrowserSource;
use bulk_app::BulkApp;
use flow_losses::NO_TIME;
use ftp::FtpSource;
use monitor::Monitor;
use records::{
    ArrivalRows, BottleneckRows, CbrFlowRows, ConnectionRows, ExchangeRows, LossRunRows,
    QueueDelayRows, QueueRows,
};
use sources::{MahSource, OpenRequest, PackMimeSource};
use web_app::WebApp;

pub use monitor::DirectionSummary;
pub use udp_cbr::UdpSummary;

/// Simulation events. Components are named by index; payloads stay small and `Copy`.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A packet reaches the node at the end of its current link.
    Arrive(PktId),
    /// A TCP timer of endpoint `side` (0 client, 1 server) of connection slot `slot`.
    Timer { slot: u32, side: u8, gen: u32 },
    /// A traffic source starts flow `flow` (a bulk flow, a Mah user's page, PackMime's next
    /// connection).
    Start { source: u32, flow: u32 },
    /// The application on endpoint `side` of a connection resumes (think gap, server delay).
    AppWake { slot: u32, side: u8, gen: u32 },
    /// A queue discipline's periodic update.
    QueueTick(LinkId),
    /// UDP CBR flow `.0` sends its next packet.
    CbrSend(u32),
    /// Queue sampling for the monitors.
    Sample,
    /// End of a reporting interval.
    Interval,
    /// End of the warm-up period: metrics start here.
    Warmup,
    /// Timer deadlines due before the next sweep get their events (`Simulation::arm_at`).
    TimerSweep,
}

/// An `Ev` packed into 64 bits for the event list, whose entries (time and event) are then 16
/// bytes instead of 24: the list moves each event about once and holds tens of thousands, so
/// entry size is memory traffic. Bits 60–63: the variant; 32–59: a second field (a timer's
/// or wake-up's `slot << 1 | side`, a start's source); 0–31: the first (link, packet, flow,
/// generation). Slots stay below 2^27 and sources below 2^28 (checked where they are made).
#[derive(Clone, Copy, Debug)]
struct PackedEv(u64);

const MAX_SLOTS: usize = 1 << 27;
const MAX_SOURCES: usize = 1 << 28;

/// Period of the timer sweep (`Simulation::arm_at`): deadlines less than this far ahead (a
/// delayed ACK, 100-200 ms) are mostly scheduled when set; retransmit timers (1 s and more)
/// wait for a sweep. A cost/benefit choice with no effect on when timers fire.
const TIMER_SWEEP: Time = 250 * crate::units::MS;

impl PackedEv {
    #[inline(always)]
    fn new(tag: u64, hi: u32, lo: u32) -> Self {
        PackedEv(tag << 60 | (hi as u64) << 32 | lo as u64)
    }

    #[inline(always)]
    fn unpack(self) -> Ev {
        let lo = self.0 as u32;
        let hi = (self.0 >> 32) as u32 & ((1 << 28) - 1);
        match self.0 >> 60 {
            0 => Ev::Arrive(lo),
            1 => Ev::Timer {
                slot: hi >> 1,
                side: (hi & 1) as u8,
                gen: lo,
            },
            2 => Ev::Start {
                source: hi,
                flow: lo,
            },
            3 => Ev::AppWake {
                slot: hi >> 1,
                side: (hi & 1) as u8,
                gen: lo,
            },
            4 => Ev::QueueTick(lo),
            5 => Ev::CbrSend(lo),
            6 => Ev::Sample,
            7 => Ev::Interval,
            8 => Ev::Warmup,
            _ => Ev::TimerSweep,
        }
    }
}

impl From<Ev> for PackedEv {
    #[inline(always)]
    fn from(e: Ev) -> Self {
        match e {
            Ev::Arrive(p) => PackedEv::new(0, 0, p),
            Ev::Timer { slot, side, gen } => {
                debug_assert!((slot as usize) < MAX_SLOTS && side < 2);
                PackedEv::new(1, slot << 1 | side as u32, gen)
            },
            Ev::Start { source, flow } => {
                debug_assert!((source as usize) < MAX_SOURCES);
                PackedEv::new(2, source, flow)
            },
            Ev::AppWake { slot, side, gen } => {
                debug_assert!((slot as usize) < MAX_SLOTS && side < 2);
                PackedEv::new(3, slot << 1 | side as u32, gen)
            },
            Ev::QueueTick(l) => PackedEv::new(4, 0, l),
            Ev::CbrSend(f) => PackedEv::new(5, 0, f),
            Ev::Sample => PackedEv::new(6, 0, 0),
            Ev::Interval => PackedEv::new(7, 0, 0),
            Ev::Warmup => PackedEv::new(8, 0, 0),
            Ev::TimerSweep => PackedEv::new(9, 0, 0),
        }
    }
}

/// Schedules the timer event of endpoint `side` of `slot` at its deadline `d`, the earliest
/// one now pending for it (`ConnTag::timer_at`).
#[inline]
fn schedule_timer(
    sched: &mut Scheduler<PackedEv>,
    t: &mut flow_losses::ConnTag,
    slot: u32,
    side: usize,
    d: Time,
) {
    t.timer_at[side] = d;
    let gen = t.gen;
    sched.at(
        d,
        Ev::Timer {
            slot,
            side: side as u8,
            gen,
        },
    );
}

/// Hasher for the path table's `(host, host)` keys: one multiply-rotate per word (the
/// Fx scheme of rustc). Keys come from the scenario, not from an adversary, so SipHash's
/// flood resistance buys nothing, and the table is looked up twice per connection.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// One connection: both endpoints, the application driving them, and its record so far.
/// Whether the slot is in use and by which generation, and its timers: `Simulation::tags`.
struct Conn {
    id: u64,
    ep: [Endpoint; 2],
    /// Path ids client → server and server → client.
    paths: [u32; 2],
    /// Delay-box delay of the packets the client (0) and the server (1) send.
    flow_delay: [Time; 2],
    flow_hash: u32,
    app: App,
    source: u32,
    /// Identity of the connection within its source (a bulk flow's index; a Mah user's
    /// `user << 32 | connection number`; PackMime's arrival number).
    identity: u64,
    /// Mah user that opened the connection.
    user: Option<u32>,
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
    /// UDP CBR flows live in `Simulation::udp`.
    UdpCbr,
}

/// Engine counters, for progress displays and benchmarks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    pub events: u64,
    pub sim_time_s: f64,
    pub bottleneck_packets: u64,
    pub peak_packets_in_flight: u64,
    pub connections_opened: u64,
    pub active_connections: u64,
    /// Packets that reached their destination host, and those that arrived for a connection
    /// that had already ended.
    pub delivered_packets: u64,
    pub stale_packets: u64,
    /// Events waiting in the scheduler (including stale timer events not yet popped).
    pub pending_events: u64,
}

/// Whole-run totals after the warm-up.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub measured_s: f64,
    /// The bottleneck disciplines and the parameters in force, per direction.
    pub queue_forward: serde_json::Value,
    pub queue_reverse: serde_json::Value,
    pub forward: DirectionSummary,
    pub reverse: DirectionSummary,
    pub connections_started: u64,
    pub connections_completed: u64,
    pub connections_aborted: u64,
    pub connections_unfinished: u64,
    pub bytes_written: u64,
    pub bytes_delivered: u64,
    /// Request/response exchanges started after the warm-up: completed, and still open when
    /// the run (or their connection) ended.
    pub exchanges_completed: u64,
    pub exchanges_unfinished: u64,
    /// Aggregate TCP goodput: application bytes delivered in order (each byte once, however
    /// often it was sent) at times after the warm-up, every connection and both directions;
    /// and the same per bottleneck direction the bytes crossed, in Mb/s of measured time.
    pub tcp_goodput_bytes: u64,
    pub tcp_goodput_mbps: f64,
    pub tcp_goodput_forward_mbps: f64,
    pub tcp_goodput_reverse_mbps: f64,
    /// Runs of consecutive losses of each TCP connection's packets at the bottleneck queues
    /// (on arrival, after the warm-up), summed over the connections (index = run length).
    pub tcp_loss_runs: Vec<u64>,
    /// UDP CBR totals (all zero without `udp_cbr` sources).
    pub udp: UdpSummary,
}

pub struct Simulation {
    sc: Scenario,
    sched: Scheduler<PackedEv>,
    pkts: PacketStore,
    links: Vec<Link>,
    topo: Dumbbell,
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
    /// `Endpoint::new` of the scenario's TCP configuration, copied by every connection.
    ep_template: Endpoint,
    rtt: RttSampler,
    /// The delay emulator's clock (`[delay_box] tick_ms`), when it has one.
    delay_clock: Option<DelayClock>,
    end: Time,
    warmup: Time,
    monitors: [Monitor; 2],
    conn_rows: ConnectionRows,
    exch_rows: ExchangeRows,
    arrival_rows: ArrivalRows,
    bneck_rows: BottleneckRows,
    queue_rows: QueueRows,
    udp_rows: CbrFlowRows,
    loss_run_rows: LossRunRows,
    queue_delay_rows: QueueDelayRows,
    udp: udp_cbr::CbrFlows,
    /// Goodput bytes after the warm-up by bottleneck direction crossed (0 forward, 1 reverse).
    goodput: [u64; 2],
    /// Runs of consecutive losses of TCP connections, summed over the connections recorded.
    tcp_loss_runs: Vec<u64>,
    summary: Summary,
    finished_books: bool,
    trace: Option<Vec<TraceEntry>>,
    sources: Vec<Source>,
    /// When each source's Web responses end (`TrafficConfig` `response_end`).
    response_end: Vec<ResponseEnd>,
    opens: Vec<OpenRequest>,
    /// Exchanges started after the warm-up and completed so far (for `max_exchanges`).
    exchanges_done: u64,
    /// Time of the next `TimerSweep`: timer deadlines from then on wait for a sweep.
    next_sweep: Time,
    delivered_packets: u64,
    /// End of the serialization in progress on each bottleneck (by direction; `Time::MAX`
    /// when idle). These are the only links with a serialization event, and each has at most
    /// one pending: kept here rather than in the event list (`run_until`), they skip its
    /// filing and moves, about a third of all events in a Web run.
    tx_due: [Time; 2],
    /// Ends of serialization handled (counted with the events).
    tx_done_events: u64,
    stale_packets: u64,
}

/// A segment sent by an endpoint, for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEntry {
    pub t: Time,
    pub conn: u64,
    /// 0 = client, 1 = server.
    pub side: u8,
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: u8,
    pub retransmit: bool,
    pub ecn: crate::packet::Ecn,
    /// SACK blocks carried (the first `sack_n`).
    pub sack: [(u64, u64); crate::packet::MAX_SACK_BLOCKS],
    pub sack_n: u8,
    /// The sender's congestion window and slow-start threshold as it sent (bytes).
    pub cwnd: u64,
    pub ssthresh: u64,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Self, ConfigError> {
        scenario.validate()?;
        let sc = scenario;
        let topo = Dumbbell {
            left: sc.topology.left_hosts,
            right: sc.topology.right_hosts,
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
            let boxed = uplink != sc.delay_box.placement.inbound();
            let mut link = Link::new(
                access_rate,
                access_delay,
                q,
                0.0,
                Rng::stream(seed, StreamKind::LinkLoss, l as u64),
                boxed,
            );
            if uplink && sc.topology.host_jitter_us > 0.0 {
                let max = crate::units::round_ns(sc.topology.host_jitter_us * 1e3);
                link.jitter = Some(Box::new(SendJitter::new(max, seed, l / 2)));
            }
            links.push(link);
        }
        let b_rate = BitsPerSec::from_mbps(sc.topology.bottleneck_mbps);
        let b_delay = millis(sc.topology.bottleneck_delay_ms);
        let rev_cfg = sc.queue_reverse.clone().unwrap_or_else(|| sc.queue.clone());
        for (dir, (qcfg, loss)) in [
            (&sc.queue, sc.topology.loss_rate),
            (&rev_cfg, sc.topology.loss_rate_reverse),
        ]
        .into_iter()
        .enumerate()
        {
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
            ep_template: Endpoint::new(&sc.tcp, 0),
            rtt: RttSampler::new(&sc.rtt),
            delay_clock: (sc.delay_box.tick_ms > 0.0)
                .then(|| DelayClock::new(millis(sc.delay_box.tick_ms).max(1), topo.hosts(), seed)),
            end,
            warmup,
            monitors: [
                Monitor::new("forward", &sc.measure),
                Monitor::new("reverse", &sc.measure),
            ],
            conn_rows: ConnectionRows::default(),
            exch_rows: ExchangeRows::default(),
            arrival_rows: ArrivalRows::default(),
            bneck_rows: BottleneckRows::default(),
            queue_rows: QueueRows::default(),
            udp_rows: CbrFlowRows::default(),
            loss_run_rows: LossRunRows::default(),
            queue_delay_rows: QueueDelayRows::default(),
            udp: udp_cbr::CbrFlows::default(),
            goodput: [0; 2],
            tcp_loss_runs: Vec::new(),
            summary: Summary::default(),
            finished_books: false,
            trace: None,
            sources: Vec::new(),
            response_end: Vec::new(),
            opens: Vec::new(),
            exchanges_done: 0,
            next_sweep: TIMER_SWEEP,
            delivered_packets: 0,
            tx_due: [Time::MAX; 2],
            tx_done_events: 0,
            stale_packets: 0,
            sc,
        };
        sim.schedule_sources();
        for dir in 0..2 {
            let lid = sim.bottleneck(dir);
            if let Some(p) = sim.links[lid as usize].queue.aqm.tick_period() {
                sim.sched.at(p, Ev::QueueTick(lid));
            }
        }
        sim.sched.at(0, Ev::Sample);
        sim.sched.at(sim.monitors[0].interval, Ev::Interval);
        sim.sched.at(warmup, Ev::Warmup);
        sim.sched.at(TIMER_SWEEP, Ev::TimerSweep);
        Ok(sim)
    }

    fn bottleneck(&self, dir: usize) -> LinkId {
        if dir == 0 {
            self.topo.forward()
        } else {
            self.topo.reverse()
        }
    }

    fn schedule_sources(&mut self) {
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
                | TrafficConfig::Packmime { response_end, .. } => *response_end,
                _ => ResponseEnd::LastByte,
            })
            .collect();
        for (s, tr) in traffic.iter().enumerate() {
            let source = s as u32;
            let sides = |side: Side| match side {
                Side::Left => (left, right),
                Side::Right => (right, left),
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
                TrafficConfig::UdpCbr { .. } => {
                    self.add_cbr_source(source);
                    self.sources.push(Source::UdpCbr);
                },
            }
        }
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
            let due = self.tx_due[dir];
            if let Some(ev) = self.sched.pop_until(until.min(due)) {
                self.dispatch(ev.unpack());
            } else if due <= until {
                self.sched.advance_to(due);
                self.tx_done_events += 1;
                self.on_tx_done(self.bottleneck(dir));
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

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive(p) => self.on_arrive(p),
            Ev::Timer { slot, side, gen } => self.on_timer(slot, side, gen),
            Ev::Start { source, flow } => self.on_start(source, flow),
            Ev::AppWake { slot, side, gen } => self.on_app_wake(slot, side, gen),
            Ev::CbrSend(f) => self.on_cbr_send(f),
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
                let p = self.monitors[0].sample_period;
                self.sched.after(p, Ev::Sample);
            },
            Ev::Interval => {
                let now = self.sched.now();
                for dir in 0..2 {
                    let link = &self.links[self.bottleneck(dir) as usize];
                    self.monitors[dir].interval(now, link, &mut self.bneck_rows);
                }
                let p = self.monitors[0].interval;
                self.sched.after(p, Ev::Interval);
            },
            Ev::TimerSweep => self.sweep_timers(),
            Ev::Warmup => {
                for dir in 0..2 {
                    let b = self.bottleneck(dir) as usize;
                    let link = &mut self.links[b];
                    link.queue.stats.measured_from = self.sched.now();
                    self.monitors[dir].start_measuring(self.sched.now(), link);
                }
            },
        }
    }

    // ----- network -----

    #[inline]
    fn send_on(&mut self, link: LinkId, id: PktId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        if l.cut_through {
            self.send_cut_through(link, id);
            return;
        }
        let mut owner = None;
        if let Some(m) = l.monitor {
            let p = self.pkts.get(id);
            if p.proto == Proto::Tcp && now >= self.warmup {
                owner = Some((p.conn, p.gen));
            }
            self.monitors[m as usize].arrival(now, p.size, &mut self.arrival_rows);
        }
        let offer = l.queue.enqueue(now, id, &mut self.pkts);
        if l.in_service.is_none() {
            self.start_tx(link);
        }
        if let Some((slot, gen)) = owner {
            self.count_flow_offer(slot, gen, offer);
        }
    }

    /// A packet offered to a cut-through (drop-tail, unmonitored) link: unless the queue is
    /// full, its serialization is scheduled behind everything accepted before it and its
    /// arrival at the far end is scheduled now (or it is lost on the link). Losses on the link
    /// are decided in FIFO order, as at the start of serialization.
    #[inline]
    fn send_cut_through(&mut self, link: LinkId, id: PktId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        let waiting = l.waiting_at(now);
        if let Offer::Dropped(_) = l.queue.offer_fifo(now, id, &mut self.pkts, waiting) {
            return;
        }
        let p = self.pkts.get(id);
        let end = if l.emulated_host {
            emulated_host_end(l, now, p.size)
        } else {
            l.schedule_fifo(now, p.size).1
        };
        let scripted = !l.scripted.is_empty() && l.scripted_drop(self.pkts.get_mut(id));
        let p = self.pkts.get(id);
        if scripted || (l.loss > 0.0 && l.loss_rng.bernoulli(l.loss)) {
            l.lost += 1;
            self.pkts.free(id);
        } else {
            let extra = if l.adds_flow_delay { p.flow_delay } else { 0 };
            let mut at = end + l.delay + extra;
            if l.ticked_box {
                // The host's delay box (links 2h and 2h + 1 belong to host h) releases the
                // packet at a tick of its clock.
                let clock = self.delay_clock.as_ref().expect("a ticked box has a clock");
                at = clock.exit(link / 2, end + l.delay, p.flow_delay);
            }
            self.sched.at(at, Ev::Arrive(id));
        }
    }

    #[inline]
    fn start_tx(&mut self, link: LinkId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        if let Some(id) = l.queue.dequeue(now, &mut self.pkts) {
            let size = self.pkts.get(id).size;
            let tx = l.tx_time(size);
            l.in_service = Some(id);
            l.tx_size = size;
            l.tx_len = tx;
            l.busy_time += tx;
            l.tx_end = now + tx;
            let dir = l
                .monitor
                .expect("a link with serialization events is a bottleneck")
                as usize;
            self.tx_due[dir] = now + tx;
            // `run_until` hands the end back to `bottleneck(dir)`: the monitor's index.
            debug_assert_eq!(self.bottleneck(dir), link);
        }
    }

    #[inline]
    fn on_tx_done(&mut self, link: LinkId) {
        let now = self.sched.now();
        let l = &mut self.links[link as usize];
        let id = l
            .in_service
            .take()
            .expect("end of serialization without a packet in service");
        self.tx_due[l.monitor.expect("a bottleneck") as usize] = Time::MAX;
        let p = self.pkts.get(id);
        l.tx_packets += 1;
        l.tx_bytes += p.size as u64;
        let scripted = !l.scripted.is_empty() && l.scripted_drop(self.pkts.get_mut(id));
        let p = self.pkts.get(id);
        if scripted || (l.loss > 0.0 && l.loss_rng.bernoulli(l.loss)) {
            l.lost += 1;
            self.pkts.free(id);
            self.start_tx(link);
        } else {
            let extra = if l.adds_flow_delay { p.flow_delay } else { 0 };
            let at = now + l.delay + extra;
            self.start_tx(link);
            if at == now {
                // Zero propagation delay: the packet is at the next node now. Handling it here
                // saves an event per hop; the order stays deterministic.
                self.on_arrive(id);
            } else {
                self.sched.at(at, Ev::Arrive(id));
            }
        }
    }

    #[inline]
    fn on_arrive(&mut self, id: PktId) {
        let p = self.pkts.get_mut(id);
        p.hop += 1;
        let path = self.paths[p.route as usize];
        let hop = p.hop;
        if hop < path.len {
            if hop + 1 == path.len && p.proto == Proto::Tcp {
                // Onto the last link: the receiving endpoint will be needed in a few events.
                let (slot, side) = (p.conn as usize, p.to_server as usize);
                if let Some(c) = self.conns.get(slot) {
                    prefetch(&c.ep[side]);
                    prefetch(&c.app);
                }
            }
            self.send_on(path.links[hop as usize], id);
        } else {
            // A copy without the SACK blocks unless it carries some: they fill the packet's
            // second cache line, which most packets (no SACK) never need to load.
            let mut pkt = Packet {
                sack: Default::default(),
                ..*p
            };
            if pkt.sack_n > 0 {
                pkt.sack = p.sack;
            }
            self.pkts.free(id);
            self.deliver(&pkt);
        }
    }

    /// The id of the path from `src` to `dst` (made on first use) and its propagation delay.
    fn path_id(&mut self, src: u32, dst: u32) -> (u32, Time) {
        if let Some(&id) = self.path_ids.get(&(src, dst)) {
            return (id, self.path_delays[id as usize]);
        }
        let id = self.paths.len() as u32;
        let path = self.topo.path(src, dst);
        let delay = (0..path.len as usize)
            .map(|i| self.links[path.links[i] as usize].delay)
            .sum::<Time>();
        self.paths.push(path);
        self.path_delays.push(delay);
        self.path_ids.insert((src, dst), id);
        (id, delay)
    }

    // ----- connections -----

    /// A source's scheduled start: a bulk flow, a Mah user's next page, PackMime's next
    /// connection.
    fn on_start(&mut self, source: u32, flow: u32) {
        let now = self.sched.now();
        let mut opens = std::mem::take(&mut self.opens);
        match &mut self.sources[source as usize] {
            Source::Bulk => {
                self.start_bulk(source, flow);
            },
            Source::Mah(m) => m.start_page(flow, &mut opens),
            Source::Browsers(b) => b.start_page(flow, &mut opens),
            Source::Ftp(_) => self.start_ftp(source, flow),
            Source::UdpCbr => unreachable!("UDP flows are not started by Ev::Start"),
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
            | TrafficConfig::Browsers { client_side, .. }
            | TrafficConfig::Unc { client_side, .. } => client_side == Side::Left,
            TrafficConfig::Bulk { client_side, .. }
            | TrafficConfig::Ftp { client_side, .. }
            | TrafficConfig::UdpCbr { client_side, .. } => client_side == Side::Left,
        };
        let now = self.sched.now();
        for r in opens.drain(..) {
            let (client_host, server_host) = if client_left {
                (
                    self.topo.left_host(r.client),
                    self.topo.right_host(r.server),
                )
            } else {
                (
                    self.topo.right_host(r.client),
                    self.topo.left_host(r.server),
                )
            };
            let app = App::Web(WebApp::new(
                r.script,
                now,
                self.response_end[source as usize],
            ));
            self.open(
                source,
                r.identity,
                client_host,
                server_host,
                app,
                r.user,
                r.extra_rtt,
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
        let (client_host, server_host) = self.host_pair(client_side, flow);
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

    /// The delay-box RTT of flow `identity` of `source` between two hosts, from the flow's own
    /// stream.
    fn sample_rtt(&self, source: u32, identity: u64, client_host: u32, server_host: u32) -> Time {
        let mut rng = Rng::substream(self.sc.seed, StreamKind::DelayBox, source as u64, identity);
        let side_index = |h: u32| {
            if self.topo.is_left(h) {
                h
            } else {
                h - self.topo.left
            }
        };
        self.rtt
            .sample(&mut rng, side_index(client_host), side_index(server_host))
    }

    /// The delay-box delays of the packets a connection's client and server send, for a
    /// connection whose extra round-trip time is `extra` (`[delay_box] placement`).
    fn one_way_delays(&self, extra: Time) -> [Time; 2] {
        match self.sc.delay_box.placement {
            DelayPlacement::Split | DelayPlacement::Inbound => [extra / 2, extra / 2],
            DelayPlacement::ClientOutbound => [extra, 0],
            DelayPlacement::ClientInbound => [0, extra],
        }
    }

    /// The `i`-th client host on `client_side` and the `i`-th host on the other side (bulk
    /// flows, FTP sessions, UDP flows).
    fn host_pair(&self, client_side: Side, i: u32) -> (u32, u32) {
        match client_side {
            Side::Left => (self.topo.left_host(i), self.topo.right_host(i)),
            Side::Right => (self.topo.right_host(i), self.topo.left_host(i)),
        }
    }

    /// Opens a connection from `client_host` to `server_host`. Its delay-box RTT (unless the
    /// source chose one) and timer phase come from streams of the connection's identity
    /// `(source, identity)`, so they do not depend on the order in which connections happen
    /// to open (common random numbers).
    fn open(
        &mut self,
        source: u32,
        identity: u64,
        client_host: u32,
        server_host: u32,
        app: App,
        user: Option<u32>,
        extra_rtt: Option<Time>,
        primary: bool,
    ) {
        let now = self.sched.now();
        let seed = self.sc.seed;
        let extra = match extra_rtt {
            Some(e) => e,
            None => self.sample_rtt(source, identity, client_host, server_host),
        };
        // ns-2 gives each agent its own tick clock (a random phase per endpoint); BSD's clock
        // is global (phase 0), and its connections need no stream.
        let phases = match self.sc.tcp.timer_model {
            crate::tcp::config::TimerModel::Bsd => [0, 0],
            crate::tcp::config::TimerModel::Ns2 => {
                let mut clock = Rng::substream(seed, StreamKind::TcpClock, source as u64, identity);
                let tick = self.sc.tcp.tick();
                [clock.below(tick), clock.below(tick)]
            },
        };
        let (to_server, delay_to_server) = self.path_id(client_host, server_host);
        let (to_client, delay_to_client) = self.path_id(server_host, client_host);
        let paths = [to_server, to_client];
        // Propagation RTT of the topology (no serialization) plus the delay box.
        let base_rtt = delay_to_server + delay_to_client + extra;
        let id = self.next_conn_id;
        self.next_conn_id += 1;
        let conn = Conn {
            id,
            ep: [
                self.ep_template.fresh_with_phase(phases[0]),
                self.ep_template.fresh_with_phase(phases[1]),
            ],
            paths,
            flow_delay: self.one_way_delays(extra),
            flow_hash: (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32,
            app,
            source,
            identity,
            user,
            notified: false,
            primary,
            client_host,
            server_host,
            client_left: self.topo.is_left(client_host),
            base_rtt,
            start: now,
            established: None,
            first_byte: None,
            last_byte: None,
            aborted: false,
            delivered_measured: 0,
            losses: Default::default(),
        };
        let slot = if let Some(s) = self.free_slots.pop() {
            let gen = self.tags[s as usize].gen.wrapping_add(1);
            self.conns[s as usize] = conn;
            self.tags[s as usize] = flow_losses::ConnTag {
                gen,
                active: true,
                ..Default::default()
            };
            s
        } else {
            assert!(self.conns.len() < MAX_SLOTS, "too many open connections");
            self.conns.push(conn);
            self.tags.push(flow_losses::ConnTag {
                active: true,
                ..Default::default()
            });
            (self.conns.len() - 1) as u32
        };
        if now >= self.warmup {
            self.summary.connections_started += 1;
        }
        let c = &mut self.conns[slot as usize];
        c.ep[1].listen(now);
        self.out.clear();
        c.ep[0].connect(now, &self.sc.tcp, &mut self.out);
        self.after_call(slot, 0);
    }

    fn deliver(&mut self, pkt: &Packet) {
        let slot = pkt.conn;
        self.delivered_packets += 1;
        if pkt.proto == Proto::Udp {
            self.deliver_udp(pkt);
            return;
        }
        if !self.tags[slot as usize].is(pkt.gen) {
            self.stale_packets += 1;
            return; // a late packet of a connection that has ended
        }
        let c = &mut self.conns[slot as usize];
        let side = pkt.to_server as usize;
        self.out.clear();
        c.ep[side].on_segment(self.sched.now(), &self.sc.tcp, pkt, &mut self.out);
        self.after_call(slot, side);
    }

    fn on_timer(&mut self, slot: u32, side: u8, gen: u32) {
        let now = self.sched.now();
        if !self.tags[slot as usize].is(gen) {
            return;
        }
        let side = side as usize;
        let t = &mut self.tags[slot as usize];
        if t.timer_at[side] == now {
            t.timer_at[side] = NO_TIME;
        }
        if t.deadline[side] > now {
            // Nothing due (the deadline moved later since this event was scheduled): the
            // endpoint would do nothing, and `after_call` would only re-arm the timers. Done
            // here from the tag, without touching the (likely cold) connection.
            let deadlines = t.deadline;
            self.arm_at(slot, 0, deadlines[0]);
            self.arm_at(slot, 1, deadlines[1]);
            return;
        }
        let c = &mut self.conns[slot as usize];
        self.out.clear();
        c.ep[side].on_timer(now, &self.sc.tcp, &mut self.out);
        self.after_call(slot, side);
    }

    /// A paused application resumes (client think gap, server service delay).
    fn on_app_wake(&mut self, slot: u32, side: u8, gen: u32) {
        let now = self.sched.now();
        if !self.tags[slot as usize].is(gen) {
            return;
        }
        let c = &mut self.conns[slot as usize];
        let side = side as usize;
        let action = c.app.on_wake(side, now);
        self.out.clear();
        self.perform(slot, side, action);
        self.after_call(slot, side);
    }

    /// Carries out an application action on endpoint `side`; false when there is nothing
    /// more to do now.
    fn perform(&mut self, slot: u32, side: usize, action: AppAction) -> bool {
        let now = self.sched.now();
        let cfg = &self.sc.tcp;
        let gen = self.tags[slot as usize].gen;
        let c = &mut self.conns[slot as usize];
        match action {
            AppAction::None => return false,
            AppAction::Write(b) => c.ep[side].write(now, cfg, b, &mut self.out),
            // ns-2 (`fin_when_idle`): one `sendmsg(n, "MSG_EOF")`. BSD: write(2), whose
            // tcp_output sends what it may, then close(2).
            AppAction::WriteClose(b) if cfg.fin_when_idle => {
                c.ep[side].write_close(now, cfg, b, &mut self.out)
            },
            AppAction::WriteClose(b) => {
                c.ep[side].write(now, cfg, b, &mut self.out);
                self.transmit(slot, side);
                self.out.clear();
                let c = &mut self.conns[slot as usize];
                c.ep[side].close(now, &self.sc.tcp, &mut self.out);
            },
            AppAction::Close => c.ep[side].close(now, cfg, &mut self.out),
            AppAction::WakeAt(t) => {
                self.sched.at(
                    t,
                    Ev::AppWake {
                        slot,
                        side: side as u8,
                        gen,
                    },
                );
                return false;
            },
            AppAction::WakeAfter(d) => {
                self.sched.at(
                    now + d,
                    Ev::AppWake {
                        slot,
                        side: side as u8,
                        gen,
                    },
                );
                return false;
            },
        }
        true
    }

    /// After an endpoint call: transmit its segments, let the application react (which may
    /// produce more segments), re-arm timers, tell the owning user when the responses are in,
    /// and retire the connection when both ends are done.
    fn after_call(&mut self, slot: u32, side: usize) {
        let now = self.sched.now();
        loop {
            self.transmit(slot, side);
            let c = &mut self.conns[slot as usize];
            if self.out.aborted {
                c.aborted = true;
                self.notify_user(slot);
                self.retire(slot);
                return;
            }
            if self.out.established && side == 0 && c.established.is_none() {
                c.established = Some(now);
            }
            if self.out.delivered > 0 && side == c.app.receiver_side() && c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            if self.out.delivered > 0 && now >= self.warmup {
                c.delivered_measured += self.out.delivered;
                // Bytes reaching the client crossed server → client: right → left (reverse)
                // when the client is on the left.
                let reverse = (side == 0) == c.client_left;
                self.goodput[reverse as usize] += self.out.delivered;
            }
            let before = Self::completed_exchanges(&c.app);
            let action = c.app.on_event(side, &self.out, now);
            let after = Self::completed_exchanges(&c.app);
            if after > before {
                self.count_completed(slot, before, after);
                if before == 0 && self.conns[slot as usize].primary {
                    self.notify_primary(slot);
                }
            }
            let c = &mut self.conns[slot as usize];
            if c.last_byte.is_none() && c.app.transfer_complete() {
                c.last_byte = Some(now);
                if !c.app.ends_at_close() {
                    self.notify_user(slot);
                }
            }
            if self.out.peer_closed && side == 0 && self.conns[slot as usize].app.ends_at_close() {
                // The client read the end of the stream and closed (often in the same segment
                // as the last byte): for a source whose responses end at the close (Study A),
                // the user's connection is over now.
                self.notify_user(slot);
            }
            self.out.clear();
            if !self.perform(slot, side, action) {
                break;
            }
        }
        let c = &self.conns[slot as usize];
        if c.ep[side].is_done() && c.ep[1 - side].is_done() {
            self.retire(slot);
            return;
        }
        // Only this endpoint was called (the application acts on the side it was called for),
        // so only its deadline can have changed; the other's line stays untouched.
        self.arm_timer(slot, side);
    }

    fn completed_exchanges(app: &App) -> usize {
        match app {
            App::Web(w) => w.completed(),
            App::Bulk(_) => 0,
        }
    }

    /// Exchanges `[from, to)` of a connection completed now; counts those started after the
    /// warm-up and stops the run at `max_exchanges`.
    fn count_completed(&mut self, slot: u32, from: usize, to: usize) {
        let App::Web(w) = &self.conns[slot as usize].app else {
            return;
        };
        let n = (from..to)
            .filter(|&i| w.start(i).is_some_and(|t| t >= self.warmup))
            .count() as u64;
        self.exchanges_done += n;
        if let Some(max) = self.sc.max_exchanges {
            if self.exchanges_done >= max && self.end > self.sched.now() {
                self.end = self.sched.now();
            }
        }
    }

    /// Tells a Study B user that its page's top-level response has arrived: the embedded
    /// requests may go out.
    fn notify_primary(&mut self, slot: u32) {
        let c = &self.conns[slot as usize];
        let (Some(u), source) = (c.user, c.source) else {
            return;
        };
        let mut opens = std::mem::take(&mut self.opens);
        if let Source::Browsers(b) = &mut self.sources[source as usize] {
            b.on_primary_response(u, &mut opens);
        }
        self.open_requests(source, &mut opens);
        self.opens = opens;
    }

    /// Tells a Mah user that one of its connections is over (responses in, or failed), once;
    /// the user may open more connections or start thinking.
    fn notify_user(&mut self, slot: u32) {
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
            Source::Bulk | Source::PackMime(_) | Source::UdpCbr => None,
        };
        if let Some(t) = next_page {
            self.sched.at(t, Ev::Start { source, flow: u });
        }
        self.open_requests(source, &mut opens);
        self.opens = opens;
    }

    /// Puts the outbox's segments on the wire from endpoint `side` of `slot`.
    fn transmit(&mut self, slot: u32, side: usize) {
        if self.out.segs.is_empty() {
            return;
        }
        let c = &self.conns[slot as usize];
        let hdr = self.sc.tcp.header_bytes;
        let padded = self.sc.tcp.sack_variant != crate::tcp::config::SackVariant::Ns2;
        let route = c.paths[side];
        let first_link = self.paths[route as usize].links[0];
        let template = Packet {
            conn: slot,
            route,
            to_server: side == 0,
            flow_delay: c.flow_delay[side],
            flow_hash: c.flow_hash,
            gen: self.tags[slot as usize].gen,
            ..Default::default()
        };
        for i in 0..self.out.segs.len() {
            let s = self.out.segs[i];
            let p = Packet {
                flags: s.flags,
                size: s.len + hdr + s.option_bytes(padded),
                len: s.len,
                seq: s.seq,
                ack: s.ack,
                retransmit: s.retransmit,
                ecn: s.ecn,
                sack: s.sack,
                sack_n: s.sack_n,
                sack_permitted: s.sack_permitted,
                ..template
            };
            if let Some(tr) = &mut self.trace {
                let c = &self.conns[slot as usize];
                let (conn, ep) = (c.id, &c.ep[side]);
                let t = self.sched.now();
                tr.push(TraceEntry {
                    t,
                    conn,
                    side: side as u8,
                    seq: s.seq,
                    ack: s.ack,
                    len: s.len,
                    flags: s.flags,
                    retransmit: s.retransmit,
                    ecn: s.ecn,
                    sack: s.sack,
                    sack_n: s.sack_n,
                    cwnd: ep.cwnd(),
                    ssthresh: ep.ssthresh(),
                });
            }
            let id = self.pkts.alloc(p);
            self.send_on(first_link, id);
        }
        self.out.segs.clear();
    }

    /// Lazy timers: keep at most the earliest deadline scheduled. A deadline that moved later
    /// (the retransmit timer restarted by every ACK) costs nothing until the old event fires.
    fn arm_timer(&mut self, slot: u32, side: usize) {
        let d = self.conns[slot as usize].ep[side]
            .next_deadline()
            .unwrap_or(NO_TIME);
        self.arm_at(slot, side, d);
    }

    /// Records endpoint `side`'s next deadline `d` (`NO_TIME`: none) in the slot's tag and
    /// schedules a timer event for it unless one is already due no later, or unless `d` is
    /// not before the next timer sweep, which will schedule it if it is still pending then.
    ///
    /// Most deadlines never fire: a Web connection re-arms its retransmit timer (seconds
    /// ahead: the 3-s SYN timer, a 1-s minimum RTO) with every segment and is over long
    /// before. Scheduled at once, every such deadline that moved earlier left an event that
    /// fired after the connection had gone (a tenth of all events in Study B's benchmark).
    /// A deadline is kept in the tag until a sweep finds it due before the following sweep;
    /// its event then runs at exactly the deadline, as before.
    #[inline]
    fn arm_at(&mut self, slot: u32, side: usize, d: Time) {
        let t = &mut self.tags[slot as usize];
        t.deadline[side] = d;
        if d < t.timer_at[side] && d < self.next_sweep {
            schedule_timer(&mut self.sched, t, slot, side, d);
        }
    }

    /// A timer sweep: schedules the events of the deadlines due before the next sweep (those
    /// `arm_at` left to it), in slot order. Every deadline `d` is scheduled by the sweep at
    /// `S` ≤ `d` < `S + TIMER_SWEEP`, or directly when it is set before the next sweep.
    fn sweep_timers(&mut self) {
        let now = self.sched.now();
        self.next_sweep = now + TIMER_SWEEP;
        for (slot, t) in self.tags.iter_mut().enumerate() {
            if !t.active {
                continue;
            }
            for side in 0..2 {
                let d = t.deadline[side];
                if d < self.next_sweep && d < t.timer_at[side] {
                    schedule_timer(&mut self.sched, t, slot as u32, side, d);
                }
            }
        }
        self.sched.at(self.next_sweep, Ev::TimerSweep);
    }

    /// Writes the connection's record and frees its slot.
    fn retire(&mut self, slot: u32) {
        let now = self.sched.now();
        self.record(slot, Some(now));
        self.tags[slot as usize].active = false;
        self.free_slots.push(slot);
        // A user whose connection ended without delivering (e.g. the server closed early)
        // must not wait forever.
        self.notify_user(slot);
    }

    /// Books a connection that ended (or is still open at the end of the run): the summary's
    /// counters, its loss runs, its exchanges, and its row when connections are kept
    /// (`measure.connections`: the row is not built at all otherwise).
    fn record(&mut self, slot: u32, closed: Option<Time>) {
        let c = &self.conns[slot as usize];
        let completed = c.app.transfer_complete() && !c.aborted;
        if c.start >= self.warmup {
            let sm = &mut self.summary;
            if c.aborted {
                sm.connections_aborted += 1;
            } else if completed {
                sm.connections_completed += 1;
            } else if closed.is_none() {
                sm.connections_unfinished += 1;
            }
            sm.bytes_written += c.app.bytes_expected();
            sm.bytes_delivered += c.app.bytes_received();
        }
        if self.sc.measure.connections {
            self.record_connection(slot, closed, completed);
        }
        self.record_flow_losses(slot);
        self.record_exchanges(slot);
    }

    /// The connection's row, but for its bottleneck drops (`record_flow_losses`).
    fn record_connection(&mut self, slot: u32, closed: Option<Time>, completed: bool) {
        let c = &self.conns[slot as usize];
        let r = &mut self.conn_rows;
        let s = |t: Option<Time>| t.map_or(f64::NAN, |t| t as f64 * 1e-9);
        r.conn_id.push(c.id);
        r.source.push(c.source as u64);
        r.flow.push(c.identity);
        r.client_side
            .push(if c.client_left { "left" } else { "right" });
        r.client_host.push(c.client_host as u64);
        r.server_host.push(c.server_host as u64);
        r.base_rtt_ms.push(c.base_rtt as f64 * 1e-6);
        r.start_s.push(c.start as f64 * 1e-9);
        r.established_s.push(s(c.established));
        r.first_byte_s.push(s(c.first_byte));
        r.last_byte_s.push(s(c.last_byte));
        r.closed_s.push(s(closed));
        r.request_bytes.push(c.app.request_bytes());
        r.response_bytes.push(c.app.response_bytes());
        r.bytes_delivered.push(c.app.bytes_received());
        r.bytes_delivered_measured.push(c.delivered_measured);
        r.completed.push(completed);
        r.aborted.push(c.aborted);
        let (a, b) = (&c.ep[0].counters, &c.ep[1].counters);
        r.syn_retransmits
            .push(a.syn_retransmits + b.syn_retransmits);
        r.fin_retransmits
            .push(a.fin_retransmits + b.fin_retransmits);
        r.data_retransmits
            .push(a.data_retransmits + b.data_retransmits);
        r.timeouts.push(a.timeouts + b.timeouts);
        r.fast_retransmits
            .push(a.fast_retransmits + b.fast_retransmits);
        r.segments_sent.push(a.segments + b.segments);
        let m = [c.ep[0].min_rtt_sample, c.ep[1].min_rtt_sample]
            .into_iter()
            .filter(|&x| x > 0)
            .min();
        r.min_rtt_sample_ms
            .push(m.map_or(f64::NAN, |x| x as f64 * 1e-6));
        r.ecn.push(c.ep[0].ecn.ok && c.ep[1].ecn.ok);
        r.ecn_reductions
            .push(c.ep[0].ecn.reductions + c.ep[1].ecn.reductions);
        r.ce_received
            .push(c.ep[0].ecn.ce_received + c.ep[1].ecn.ce_received);
    }

    /// One row per exchange of a Web connection; an exchange without an end is unfinished.
    fn record_exchanges(&mut self, slot: u32) {
        let c = &self.conns[slot as usize];
        let App::Web(w) = &c.app else { return };
        let (a, b) = (&c.ep[0].counters, &c.ep[1].counters);
        let r = &mut self.exch_rows;
        let secs = |t: Option<Time>| t.map_or(f64::NAN, |t| t as f64 * 1e-9);
        let eof = secs(w.eof());
        for (i, e) in w.exchanges().iter().enumerate() {
            let (start, end) = (w.start(i), w.response_end(i));
            r.conn_id.push(c.id);
            r.source.push(c.source as u64);
            r.user.push(c.user.map_or(c.identity, |u| u as u64));
            r.index.push(i as u64);
            r.client_side
                .push(if c.client_left { "left" } else { "right" });
            r.persistent.push(w.persistent());
            r.start_s.push(secs(start));
            r.end_s.push(secs(w.end(i)));
            r.close_s.push(eof);
            r.response_time_s.push(match (start, end) {
                (Some(s), Some(e)) => (e - s) as f64 * 1e-9,
                _ => f64::NAN,
            });
            r.request_bytes.push(e.request);
            r.response_bytes.push(e.response);
            r.completed.push(end.is_some());
            r.base_rtt_ms.push(c.base_rtt as f64 * 1e-6);
            r.syn_retransmits
                .push(a.syn_retransmits + b.syn_retransmits);
            r.fin_retransmits
                .push(a.fin_retransmits + b.fin_retransmits);
            r.data_retransmits
                .push(a.data_retransmits + b.data_retransmits);
            r.timeouts.push(a.timeouts + b.timeouts);
            // An exchange that never started (its connection failed first) starts at the
            // connection's start for the books.
            if start.unwrap_or(c.start) >= self.warmup {
                if end.is_some() {
                    self.summary.exchanges_completed += 1;
                } else {
                    self.summary.exchanges_unfinished += 1;
                }
            }
        }
    }

    /// Records produced since the last drain, one batch per table.
    pub fn drain(&mut self) -> Vec<Table> {
        vec![
            self.conn_rows.take(),
            self.exch_rows.take(),
            self.bneck_rows.take(),
            self.queue_rows.take(),
            self.arrival_rows.take(),
            self.udp_rows.take(),
            self.loss_run_rows.take(),
            self.queue_delay_rows.take(),
        ]
    }

    /// Ends the run: reports connections still open as unfinished and returns the last records.
    pub fn finish(&mut self) -> Vec<Table> {
        if !self.finished_books {
            self.finished_books = true;
            for slot in 0..self.conns.len() as u32 {
                if self.tags[slot as usize].active {
                    self.record(slot, None);
                }
            }
            let now = self.sched.now();
            for dir in 0..2 {
                let link = &self.links[self.bottleneck(dir) as usize];
                self.monitors[dir].close(
                    now,
                    link,
                    &mut self.bneck_rows,
                    &mut self.queue_rows,
                    &mut self.arrival_rows,
                );
            }
            self.summary.measured_s = (now.saturating_sub(self.warmup)) as f64 * 1e-9;
            self.summary.forward = self.monitors[0].summary.clone();
            self.summary.queue_forward = self.links[self.topo.forward() as usize]
                .queue
                .aqm
                .params_json();
            self.summary.queue_reverse = self.links[self.topo.reverse() as usize]
                .queue
                .aqm
                .params_json();
            self.summary.reverse = self.monitors[1].summary.clone();
            self.close_mix_metrics();
        }
        self.drain()
    }

    /// End of run: goodput, UDP flows, and the loss-run and queueing-delay distributions.
    fn close_mix_metrics(&mut self) {
        let measured = self.summary.measured_s;
        let mbps = |bytes: u64| {
            if measured > 0.0 {
                bytes as f64 * 8.0 / measured * 1e-6
            } else {
                0.0
            }
        };
        let sm = &mut self.summary;
        sm.tcp_goodput_bytes = self.goodput[0] + self.goodput[1];
        sm.tcp_goodput_mbps = mbps(sm.tcp_goodput_bytes);
        sm.tcp_goodput_forward_mbps = mbps(self.goodput[0]);
        sm.tcp_goodput_reverse_mbps = mbps(self.goodput[1]);
        for (dir, scope) in [(0, "queue_forward"), (1, "queue_reverse")] {
            let runs = if dir == 0 {
                &self.summary.forward.drop_runs
            } else {
                &self.summary.reverse.drop_runs
            };
            self.loss_run_rows.push_histogram(scope, -1, runs);
            let link = &self.links[self.bottleneck(dir) as usize];
            self.monitors[dir].write_delay_rows(link, &mut self.queue_delay_rows);
        }
        self.loss_run_rows
            .push_histogram("tcp_all", -1, &self.tcp_loss_runs);
        self.summary.tcp_loss_runs = self.tcp_loss_runs.clone();
        let (mut rows, mut runs) = (
            std::mem::take(&mut self.udp_rows),
            std::mem::take(&mut self.loss_run_rows),
        );
        if !self.udp.is_empty() {
            self.close_udp(&mut rows, &mut runs);
        }
        self.udp_rows = rows;
        self.loss_run_rows = runs;
    }

    /// Whole-run totals (after `finish`), as a struct.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Whole-run totals as JSON.
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&self.summary).expect("summary serializes")
    }

    pub fn engine_stats(&self) -> EngineStats {
        EngineStats {
            events: self.sched.executed() + self.tx_done_events,
            sim_time_s: self.sched.now() as f64 * 1e-9,
            bottleneck_packets: self.links[self.topo.forward() as usize].tx_packets
                + self.links[self.topo.reverse() as usize].tx_packets,
            peak_packets_in_flight: self.pkts.peak() as u64,
            connections_opened: self.next_conn_id,
            active_connections: self.tags.iter().filter(|t| t.active).count() as u64,
            delivered_packets: self.delivered_packets,
            stale_packets: self.stale_packets,
            pending_events: (self.sched.pending()
                + self.tx_due.iter().filter(|&&t| t != Time::MAX).count())
                as u64,
        }
    }

    /// Records every segment sent from now on (see `trace`).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn trace(&self) -> &[TraceEntry] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Scripts losses on a link (tests and teaching): see `ScriptedLoss`.
    pub fn script_loss(&mut self, link: LinkId, loss: crate::net::link::ScriptedLoss) {
        self.links[link as usize].scripted.push(loss);
    }

    /// Number of links (ids `0..link_count()`; `net::topology` gives their numbering).
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The trace as record columns (`segments`): one row per segment sent.
    pub fn trace_table(&self) -> Table {
        use crate::measure::Column;
        let tr = self.trace();
        let ecn = |e: crate::packet::Ecn| match e {
            crate::packet::Ecn::NotEct => "not_ect",
            crate::packet::Ecn::Ect0 => "ect0",
            crate::packet::Ecn::Ect1 => "ect1",
            crate::packet::Ecn::Ce => "ce",
        };
        let sack = |r: &TraceEntry, k: usize, end: usize| {
            if k < r.sack_n as usize {
                [r.sack[k].0, r.sack[k].1][end] as i64
            } else {
                -1
            }
        };
        let u = |f: &dyn Fn(&TraceEntry) -> u64| Column::U64(tr.iter().map(f).collect());
        let mut columns = vec![
            (
                "t_s",
                Column::F64(tr.iter().map(|r| r.t as f64 * 1e-9).collect()),
            ),
            ("t_ns", u(&|r| r.t)),
            ("conn", u(&|r| r.conn)),
            ("side", u(&|r| r.side as u64)),
            ("seq", u(&|r| r.seq)),
            ("ack", u(&|r| r.ack)),
            ("len", u(&|r| r.len as u64)),
            ("flags", u(&|r| r.flags as u64)),
            (
                "retransmit",
                Column::Bool(tr.iter().map(|r| r.retransmit).collect()),
            ),
            ("ecn", Column::Str(tr.iter().map(|r| ecn(r.ecn)).collect())),
            ("cwnd", u(&|r| r.cwnd)),
            ("ssthresh", u(&|r| r.ssthresh)),
            ("sack_n", u(&|r| r.sack_n as u64)),
        ];
        const NAMES: [[&str; 2]; crate::packet::MAX_SACK_BLOCKS] = [
            ["sack0_start", "sack0_end"],
            ["sack1_start", "sack1_end"],
            ["sack2_start", "sack2_end"],
            ["sack3_start", "sack3_end"],
        ];
        for (k, names) in NAMES.iter().enumerate() {
            for (end, name) in names.iter().enumerate() {
                columns.push((
                    name,
                    Column::I64(tr.iter().map(|r| sack(r, k, end)).collect()),
                ));
            }
        }
        Table {
            name: "segments",
            columns,
        }
    }

    /// Read access for tests and tools: a link (see `net::topology` for numbering).
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id as usize]
    }

    pub fn topology(&self) -> Dumbbell {
        self.topo
    }

    /// Packets currently in the network (queues, links, delay boxes).
    pub fn packets_in_network(&self) -> usize {
        self.pkts.live()
    }
}

/// End of serialization of a packet of `size` bytes accepted at `now` on a host's link with
/// send jitter (the packet waits its jitter, never overtaking the one before) or a ticked delay
/// box (no jitter: the plain FIFO). Out of line: the common path has neither.
#[inline(never)]
fn emulated_host_end(l: &mut Link, now: Time, size: u32) -> Time {
    match &mut l.jitter {
        Some(j) => {
            let ready = j.ready(now);
            l.schedule_fifo_from(now, ready, size).1
        },
        None => l.schedule_fifo(now, size).1,
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

/// Asks the processor to bring `x` into cache (a hint: no effect on results). Used for the
/// receiving endpoint of a packet a few events before it arrives: with thousands of open
/// connections its state has usually left the cache since its last packet.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = x as *const T as *const i8;
        for off in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch never faults and has no effect on memory contents; the
            // addresses lie within `x`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_events_round_trip() {
        let top = (MAX_SLOTS - 1) as u32;
        for e in [
            Ev::Arrive(7),
            Ev::Timer {
                slot: top,
                side: 1,
                gen: u32::MAX,
            },
            Ev::Timer {
                slot: 0,
                side: 0,
                gen: 0,
            },
            Ev::Start {
                source: (MAX_SOURCES - 1) as u32,
                flow: u32::MAX,
            },
            Ev::AppWake {
                slot: top,
                side: 0,
                gen: 12345,
            },
            Ev::QueueTick(3),
            Ev::CbrSend(u32::MAX),
            Ev::Sample,
            Ev::Interval,
            Ev::Warmup,
            Ev::TimerSweep,
        ] {
            assert_eq!(
                format!("{:?}", PackedEv::from(e).unpack()),
                format!("{e:?}")
            );
        }
        assert_eq!(std::mem::size_of::<(Time, PackedEv)>(), 16);
    }
}
