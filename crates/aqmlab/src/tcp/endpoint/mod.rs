//! One TCP endpoint as a state machine (RFC 793 states), in the manner of 4.4BSD's
//! `tcp_input`/`tcp_output`/`tcp_timer` and ns-2 Full-TCP.
//!
//! The endpoint does no I/O and keeps no clock: every call gets `now`, the configuration and an
//! `Outbox` in which it leaves the segments to transmit and what the application should learn
//! (connection established, bytes delivered, end of stream). Timers are deadlines the caller
//! reads with `next_deadline()` and reports back through `on_timer()`.
//!
//! Sequence numbers are 64-bit offsets from ISS = 0: the SYN occupies 0, application byte `k`
//! occupies `1 + k`, the FIN the number after the last byte.
//!
//! This file holds the endpoint's state, its construction, what a caller may inspect, the
//! application's calls and the small helpers the other files share. Each other file adds the
//! methods of one role to `Endpoint` (a child module reads the endpoint's private fields);
//! they are listed below.

use super::config::{CongestionControl, Recovery, TcpConfig, TimerModel};
use super::cong::LinuxCong;
use super::delack::{AckClock, LinuxAck};
use super::ecn::EcnState;
use super::prr::Prr;
use super::rack::Rack;
use super::reassembly::Reassembly;
use super::rtt::RtoEstimator;
use super::sack::Scoreboard;
use crate::units::Time;

// A timer's deadline in 8 bytes (`tcp/deadline.rs`).
use super::deadline::{Deadline, Timing};
// What a call produces (`outbox.rs`).
mod outbox;
pub use outbox::{Counters, Outbox, Seg};

// A segment arrives (tcp_input): the handshake, ACK processing, RTT samples.
mod arrival;
// The receiving side: payload, the FIN, delayed ACKs, DCTCP's receiver.
mod receive;
// Transmission (tcp_output): the segment loop, one segment, pure ACKs, the counters.
mod output;
// The timers (tcp_timer): pacing, the delayed ACK, RACK-TLP's, the retransmission timeout.
mod timers;
// The classic stacks' congestion window: growth and reductions.
mod window;
// Loss recovery on duplicate and partial ACKs: Reno, NewReno, Limited Transmit.
mod recovery;
// SACK loss recovery (RFC 6675, ns-2 SACK).
mod sack_recovery;
// Linux congestion control's hooks.
mod linux_cong;
// PRR's and RACK-TLP's hooks (`linux_recovery.rs`).
mod linux_recovery;
// Pacing's, BBR's and Prague's hooks (`paced.rs`).
mod paced;
// F-RTO and the undo of a spurious timeout (`frto.rs`).
mod frto;

/// Largest window BSD can use without window scaling, times the maximum scale: a cap on cwnd.
const MAX_CWND: u64 = 1_073_725_440;
/// `Endpoint::peer_fin_seq` before the peer's FIN (never a sequence number in use).
const NO_FIN: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynRcvd,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

#[derive(Clone, Debug)]
pub struct Endpoint {
    pub state: State,
    // --- send side (RFC 793 names) ---
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Sequence number just past the last byte the application has written.
    app_end: u64,
    /// The application has closed: a FIN follows the last byte, at sequence `app_end`.
    fin_queued: bool,
    cwnd: u64,
    /// ns-2's `cwnd_` (segments, a double) for the ns-2 timer model, valid while `cwnd` is
    /// still `ns2_cwnd_bytes` (any other change of `cwnd` restarts it from `cwnd`).
    ns2_cwnd: f64,
    ns2_cwnd_bytes: u64,
    ssthresh: u64,
    dupacks: u32,
    /// In fast recovery (NewReno keeps it across partial ACKs).
    in_recovery: bool,
    /// The last window reduction was for ECE (ns-2 `last_cwnd_action_ == CWND_ACTION_ECN`).
    ecn_reduced: bool,
    /// The last window reduction was a fast retransmit (ns-2 `last_cwnd_action_ ==
    /// CWND_ACTION_DUPACK`): ns-2 Full-TCP lets the next DupThresh duplicates fast-retransmit
    /// again even below `recover` (`dupack_action`); a timeout or an ECE reduction clears it.
    ns2_after_fast_rexmit: bool,
    /// This segment was ns-2's third duplicate ACK: `dupack_action` sends what it sends and
    /// `recv` ends (`goto drop`) without its closing `send_much`.
    ns2_skip_output: bool,
    /// NewReno's `recover` (RFC 6582): snd_max when recovery (or a timeout) began; fast
    /// retransmit is entered again only once the cumulative ACK reaches it.
    recover: u64,
    /// A partial ACK has already restarted the retransmit timer in this recovery (and, under
    /// ns-2 NewReno, limits output to `NS2_RECOV_MAXBURST` segments per ACK).
    partial_seen: bool,
    /// Segment being timed for an RTT sample (Karn: one at a time, never a retransmission).
    timing: Timing,
    pub rto: RtoEstimator,
    rexmt_at: Deadline,
    /// When the connection was opened (for the connection-establishment timeout).
    opened_at: Time,
    // --- receive side ---
    rcv_nxt: u64,
    reasm: Reassembly,
    /// Sequence number of the peer's FIN once it has arrived out of order or in order and
    /// not yet been taken (`NO_FIN`: none). A plain number, not an `Option`: the endpoint
    /// stays within its cache lines (each 8 bytes more cost the classic stacks ≈2 %).
    peer_fin_seq: u64,
    /// In-order bytes received since the last ACK went out (delayed ACKs). 32 bits, added
    /// saturating: the sender cannot send beyond the last ACK plus `rwnd` (a u32), and every
    /// comparison is with a threshold of a few segments, which saturation leaves exact.
    unacked_bytes: u32,
    delack_at: Deadline,
    ack_now: bool,
    pub counters: Counters,
    pub ecn: EcnState,
    /// Smallest RTT sample seen, in ns of tick-rounded time (for records); 0 if none.
    pub min_rtt_sample: Time,
    /// Both ends agreed to SACK on the SYN exchange (RFC 2018 §2).
    sack_ok: bool,
    /// The SACK sender's scoreboard (`tcp/sack.rs`).
    board: Scoreboard,
    /// Linux's congestion control (`congestion_control` `"linux_reno"` or `"cubic"`,
    /// `tcp/cong.rs`), with PRR and RACK-TLP when they are on (`LinuxCong::prr`, `rack`;
    /// hooks in `linux_recovery.rs`); None for the stacks' own Reno, whose endpoints are as
    /// before.
    linux: Option<Box<LinuxCong>>,
    /// Linux's delayed-ACK engine (`timer_model = "linux"`, `tcp/delack.rs`): small, and read
    /// on every segment, so held in place.
    lack: Option<LinuxAck>,
    /// Segments the current ACK delivered (Linux `acked_sacked`), for PRR.
    ack_delivered: u32,
    /// The pacer holds data until this time (`tcp/pacing.rs`); output resumes then.
    pace_at: Deadline,
}

/// The delayed-ACK engine's constants for this configuration, in jiffies (`tick_ms`):
/// `TCP_ATO_MIN` = `delack_interval_ms`, `TCP_DELACK_MAX` = 200 ms, HZ/2.
#[inline]
fn ack_clock(cfg: &TcpConfig) -> AckClock {
    let j = cfg.ack_jiffies();
    AckClock {
        ato_min: j.ato_min,
        delack_max: j.delack_max,
        half_second: j.half_second,
    }
}

/// PRR's and RACK's state inside Linux's (`LinuxCong::prr`, `rack`), borrowing only the
/// endpoint's `linux` field.
#[inline]
fn prr_mut(linux: &mut Option<Box<LinuxCong>>) -> Option<&mut Prr> {
    linux.as_deref_mut().and_then(|l| l.prr.as_mut())
}

#[inline]
fn rack_mut(linux: &mut Option<Box<LinuxCong>>) -> Option<&mut Rack> {
    linux.as_deref_mut().and_then(|l| l.rack.as_mut())
}

/// Whole segments in `bytes` (Linux keeps cwnd and ssthresh in segments).
#[inline]
fn segments(bytes: u64, mss: u64) -> u32 {
    (bytes / mss).min(u32::MAX as u64) as u32
}

impl Endpoint {
    /// A closed endpoint; `tick_phase` is this connection's timer-clock phase (ns-2).
    pub fn new(cfg: &TcpConfig, tick_phase: Time) -> Self {
        Endpoint {
            state: State::Closed,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 1,
            fin_queued: false,
            cwnd: cfg.initial_cwnd(),
            ns2_cwnd: 0.0,
            ns2_cwnd_bytes: u64::MAX,
            ssthresh: cfg.initial_ssthresh,
            dupacks: 0,
            in_recovery: false,
            ecn_reduced: false,
            ns2_after_fast_rexmit: false,
            ns2_skip_output: false,
            recover: 0,
            partial_seen: false,
            timing: Timing::NONE,
            rto: RtoEstimator::new(cfg, tick_phase),
            rexmt_at: Deadline::NONE,
            opened_at: 0,
            rcv_nxt: 0,
            reasm: Reassembly::default(),
            peer_fin_seq: NO_FIN,
            unacked_bytes: 0,
            delack_at: Deadline::NONE,
            ack_now: false,
            counters: Counters::default(),
            ecn: EcnState::default(),
            min_rtt_sample: 0,
            sack_ok: false,
            board: Scoreboard::default(),
            lack: (cfg.timer_model == TimerModel::Linux).then(LinuxAck::default),
            linux: (cfg.congestion_control != CongestionControl::Reno)
                .then(|| Box::new(LinuxCong::new(cfg))),
            ack_delivered: 0,
            pace_at: Deadline::NONE,
        }
    }

    /// Bytes the endpoint holds on the heap: its Linux state (with what that holds) and the
    /// receiver's and the SACK sender's range lists.
    pub fn heap_bytes(&self) -> usize {
        let linux = self
            .linux
            .as_deref()
            .map_or(0, |l| std::mem::size_of::<LinuxCong>() + l.heap_bytes());
        linux + self.reasm.heap_bytes() + self.board.heap_bytes()
    }

    /// Sets the tick clock's phase of a copy of a new endpoint (`tcp/template.rs`):
    /// connections copy one template instead of deriving the timer constants from the
    /// configuration each time.
    pub(super) fn set_tick_phase(&mut self, tick_phase: Time) {
        self.rto.set_phase(tick_phase);
    }

    /// The endpoint's Linux state, taken out (`tcp/template.rs`: templates and reuse).
    pub(super) fn take_linux(&mut self) -> Option<Box<LinuxCong>> {
        self.linux.take()
    }

    pub(super) fn put_linux(&mut self, b: Box<LinuxCong>) {
        self.linux = Some(b);
    }

    // ----- inspection -----

    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// Application bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.app_end - 1
    }
    /// Application bytes the peer has acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.bytes_written())
    }
    pub fn rexmt_deadline(&self) -> Option<Time> {
        self.rexmt_at.get()
    }
    /// SACK is in use on this connection (both ends asked for it on the SYNs).
    pub fn sack_ok(&self) -> bool {
        self.sack_ok
    }
    /// The state a per-connection trace records (`tcp/snapshot.rs`).
    pub fn snapshot(&self, cfg: &TcpConfig) -> super::snapshot::TcpSnapshot {
        use super::snapshot::CaState;
        let ca_state = if self.in_recovery {
            CaState::Recovery
        } else if self.counters.timeouts > 0 && self.snd_una < self.recover {
            // A timeout set `recover` to snd_max: Linux stays in Loss until it is acked.
            CaState::Loss
        } else if self.dupacks > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        super::snapshot::TcpSnapshot {
            ca_state,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt_s: self.rto.srtt_s(),
            rttvar_s: self.rto.rttvar_s(),
            rto: self.rto.rto_ns(cfg, self.state == State::SynSent),
            in_flight: self.snd_max - self.snd_una,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        }
    }

    fn has_prr(&self) -> bool {
        self.linux.as_deref().is_some_and(|l| l.prr.is_some())
    }

    fn has_rack(&self) -> bool {
        self.linux.as_deref().is_some_and(|l| l.rack.is_some())
    }

    /// In fast recovery (any variant).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Linux's congestion-control state (CUBIC's included), for the Linux algorithms.
    pub fn linux_cong(&self) -> Option<&LinuxCong> {
        self.linux.as_deref()
    }
    /// PRR's state (`prr`).
    pub fn prr_state(&self) -> Option<&Prr> {
        self.linux.as_deref().and_then(|l| l.prr.as_ref())
    }
    /// RACK-TLP's state and counters (`rack_tlp`).
    pub fn rack_state(&self) -> Option<&Rack> {
        self.linux.as_deref().and_then(|l| l.rack.as_ref())
    }

    /// The loss recovery in force: SACK only if both ends agreed to it on the SYNs, else a
    /// SACK endpoint falls back to NewReno (RFC 6582), as SACK stacks do without the option.
    fn recovery(&self, cfg: &TcpConfig) -> Recovery {
        match cfg.recovery {
            Recovery::Sack if !self.sack_ok => Recovery::NewReno,
            r => r,
        }
    }

    fn sack_recovery(&self, cfg: &TcpConfig) -> bool {
        self.in_recovery && self.recovery(cfg) == Recovery::Sack
    }

    /// Earliest pending timer.
    #[inline]
    pub fn next_deadline(&self) -> Option<Time> {
        let t = self.rexmt_at.min(self.delack_at).min(self.pace_at);
        match self.rack_state() {
            None => t.get(),
            Some(r) => t.min(r.reo_at).min(r.tlp_at).get(),
        }
    }

    /// Nothing more will happen on this endpoint (TIME_WAIT is not simulated: its only role,
    /// re-acknowledging a lost final FIN, is kept by staying responsive until the peer is done).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Closed | State::TimeWait)
    }

    fn opening(&self) -> bool {
        matches!(self.state, State::SynSent | State::SynRcvd)
    }

    // ----- application calls -----

    /// Active open: send a SYN.
    pub fn connect(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        debug_assert_eq!(self.state, State::Closed);
        self.state = State::SynSent;
        self.opened_at = now;
        self.output(now, cfg, out);
    }

    /// Passive open.
    pub fn listen(&mut self, now: Time) {
        self.state = State::Listen;
        self.opened_at = now;
    }

    /// The application writes `bytes` more bytes (an unbounded buffer: the send window, not
    /// the socket buffer, limits transmission).
    pub fn write(&mut self, now: Time, cfg: &TcpConfig, bytes: u64, out: &mut Outbox) {
        debug_assert!(!self.fin_queued, "write after close");
        if cfg.congestion_control == CongestionControl::Bbr {
            self.rate_check_app_limited(cfg);
        }
        if cfg.slow_start_after_idle {
            self.linux_idle_restart(now, cfg);
        }
        self.app_end = self.app_end.saturating_add(bytes);
        self.output(now, cfg, out);
    }

    /// The application closes: a FIN follows the data already written.
    pub fn close(&mut self, now: Time, cfg: &TcpConfig, out: &mut Outbox) {
        if self.fin_queued {
            return;
        }
        self.queue_fin();
        self.output(now, cfg, out);
    }

    /// Writes `bytes` and closes in one call, before anything is sent: ns-2's
    /// `sendmsg(n, "MSG_EOF")` (tcp-full.cc: `close_on_empty_` is set before
    /// `advance_bytes`), so the segment that empties the buffer of an idle connection carries
    /// the FIN. (`write` then `close` sends that segment first and the FIN after it.)
    pub fn write_close(&mut self, now: Time, cfg: &TcpConfig, bytes: u64, out: &mut Outbox) {
        debug_assert!(!self.fin_queued, "write after close");
        if cfg.slow_start_after_idle {
            self.linux_idle_restart(now, cfg);
        }
        self.app_end = self.app_end.saturating_add(bytes);
        self.queue_fin();
        self.output(now, cfg, out);
    }

    fn queue_fin(&mut self) {
        self.fin_queued = true;
        self.state = match self.state {
            State::Established | State::SynRcvd => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        };
    }
}
