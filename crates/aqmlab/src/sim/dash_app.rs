//! A DASH session on one persistent TCP connection (HTTP/1.1, one request at a time): the
//! client (side 0) is the player (`dash_player`), which writes a GET of `request_bytes` for
//! each segment when its schedule says so; the server (side 1) answers each whole request
//! with the segment's bytes (bitrate × duration). A full buffer makes the player wait
//! (`WakeAt`): the connection is idle in between, an ON-OFF source. When every segment of a
//! finite video is in, the client closes and the server closes after it.

use std::sync::Arc;

use super::app_action::AppAction;
use super::dash_player::{Next, Player, SegmentRecord};
use crate::config::dash::DashConfig;
use crate::tcp::Outbox;
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct DashApp {
    cfg: Arc<DashConfig>,
    pub player: Player,
    /// Bytes received by the client (segments) and by the server (requests).
    received: [u64; 2],
    /// Cumulative request bytes at which the server owes the next response, and its size.
    owed: Option<(u64, u64)>,
    /// The segment in flight: cumulative response bytes before it and at its end, its
    /// request time and first byte.
    in_flight: Option<(u64, u64, Time, Option<Time>)>,
    /// A request decided but waiting for BOLA's delay: `(index, quality)`.
    delayed: bool,
    requests_written: u64,
    bytes_requested: u64,
    closed: [bool; 2],
    /// The last segment record, for the `dash_segments` table.
    pub last_segment: SegmentRecord,
    /// The session's row has been written.
    pub recorded: bool,
    /// When the last segment arrived (a finished video).
    pub finished_at: Option<Time>,
}

impl DashApp {
    pub fn new(cfg: Arc<DashConfig>, opened: Time) -> Self {
        let player = Player::new(&cfg, opened);
        DashApp {
            cfg,
            player,
            received: [0; 2],
            owed: None,
            in_flight: None,
            delayed: false,
            requests_written: 0,
            bytes_requested: 0,
            closed: [false; 2],
            last_segment: SegmentRecord::default(),
            recorded: false,
            finished_at: None,
        }
    }

    pub fn config(&self) -> &DashConfig {
        &self.cfg
    }

    pub fn heap_bytes(&self) -> usize {
        // The throughput history: at most 20 samples of each kind (two f64 deques).
        2 * 20 * 8 + self.cfg.ladder_kbps.len() * 8
    }

    /// Segments downloaded.
    pub fn completed(&self) -> usize {
        self.player.done as usize
    }

    pub fn request_bytes(&self) -> u64 {
        self.requests_written * self.cfg.request_bytes
    }

    /// Bytes of the segments requested so far.
    pub fn bytes_requested(&self) -> u64 {
        self.bytes_requested
    }

    pub fn bytes_received(&self) -> u64 {
        self.received[0]
    }

    /// Every segment of a finite video has arrived.
    pub fn all_done(&self) -> bool {
        self.finished_at.is_some()
    }

    pub fn on_event(&mut self, side: usize, out: &Outbox, now: Time) -> AppAction {
        self.received[side] += out.delivered;
        if side == 0 {
            self.client(out, now)
        } else {
            self.server(out)
        }
    }

    fn client(&mut self, out: &Outbox, now: Time) -> AppAction {
        if out.established && self.requests_written == 0 && !self.delayed {
            return self.schedule(now);
        }
        if let Some((start, end, request, first)) = self.in_flight.as_mut() {
            if first.is_none() && self.received[0] > *start {
                *first = Some(now);
            }
            if self.received[0] >= *end {
                let (request, first) = (*request, first.unwrap_or(now));
                self.in_flight = None;
                self.last_segment = self.player.on_segment(&self.cfg, request, first, now);
                return self.schedule(now);
            }
        }
        if out.peer_closed && !self.closed[0] {
            self.closed[0] = true;
            return AppAction::Close;
        }
        AppAction::None
    }

    /// Asks the player what next: a request now, a wake-up later, or the end (close).
    fn schedule(&mut self, now: Time) -> AppAction {
        match self.player.schedule(&self.cfg, now) {
            Next::Request { index, quality, at } => {
                let size = Player::segment_bytes(&self.cfg, index, quality);
                self.bytes_requested += size;
                if at > now {
                    self.delayed = true;
                    self.owed_next(size);
                    return AppAction::WakeAt(at);
                }
                self.owed_next(size);
                self.write_request(now)
            },
            Next::Check { at } => AppAction::WakeAt(at),
            Next::Done => {
                self.finished_at = Some(now);
                if self.closed[0] {
                    return AppAction::None;
                }
                self.closed[0] = true;
                AppAction::Close
            },
        }
    }

    /// The server will owe `size` bytes once the next request is in.
    fn owed_next(&mut self, size: u64) {
        let req_end = (self.requests_written + 1) * self.cfg.request_bytes;
        self.owed = Some((req_end, size));
    }

    fn write_request(&mut self, now: Time) -> AppAction {
        let size = self.owed.expect("a response owed").1;
        let start = self.bytes_requested - size;
        self.in_flight = Some((start, start + size, now, None));
        self.requests_written += 1;
        AppAction::Write(self.cfg.request_bytes)
    }

    fn server(&mut self, out: &Outbox) -> AppAction {
        if let Some((req_end, size)) = self.owed {
            if self.received[1] >= req_end && self.in_flight.is_some() {
                self.owed = None;
                return AppAction::Write(size);
            }
        }
        if out.peer_closed && !self.closed[1] {
            self.closed[1] = true;
            return AppAction::Close;
        }
        AppAction::None
    }

    /// A wait is over: the delayed request leaves, or the schedule is checked again.
    pub fn on_wake(&mut self, side: usize, now: Time) -> AppAction {
        if side != 0 || self.closed[0] || self.in_flight.is_some() {
            return AppAction::None;
        }
        if std::mem::take(&mut self.delayed) {
            return self.write_request(now);
        }
        self.schedule(now)
    }
}
