//! A Web connection: one or more request/response exchanges, strictly in sequence (HTTP/1.0,
//! or HTTP/1.1 persistent without pipelining).
//!
//! The client writes request k once response k − 1 has fully arrived and its gap has passed;
//! the server writes response k once request k has fully arrived and its service delay has
//! passed, and closes after the last response (the server closes, as in HTTP/1.0 and in
//! PackMime-HTTP); the client closes when it reads the end of stream.
//!
//! Response time of exchange k (Studies A–C): from `connect()` for the first exchange, from
//! the request write for later ones, to the arrival of the last byte of the response; or, when
//! the connection ends at its close (`ResponseEnd::Close`, Study A: "the response is completed
//! and the connection is closed"), the last exchange ends when the client reads the end of the
//! stream (the server's FIN, in order) and closes its socket.

use super::app_action::AppAction;
use super::one_or_more::OneOrMore;
use crate::config::ResponseEnd;
use crate::tcp::Outbox;
use crate::units::Time;

/// A connection's exchanges, in order (one, inline, on most connections).
pub type Script = OneOrMore<WebExchange>;

/// One exchange of a connection's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebExchange {
    pub request: u64,
    pub response: u64,
    /// Client's pause between the end of the previous response and this request.
    pub gap: Time,
    /// Server's service delay between the end of this request and its response.
    pub server_delay: Time,
}

#[derive(Clone, Debug)]
pub struct WebApp {
    script: Script,
    /// Client: exchanges whose response has fully arrived.
    done: usize,
    /// Client: the request of exchange `done` has been written.
    requested: bool,
    /// Server: responses written.
    served: usize,
    /// Server: waiting for the service delay of exchange `served`.
    serving: bool,
    /// Bytes received by the client (responses) and by the server (requests).
    received: [u64; 2],
    /// Cumulative byte counts at which each response / request ends.
    resp_end: u64,
    req_end: u64,
    closed: [bool; 2],
    /// Start and end (last byte) of each exchange (one allocation for both).
    times: OneOrMore<[Option<Time>; 2]>,
    /// When the client read the end of the stream (the peer's FIN in order) and closed;
    /// meaningful once `closed[0]` (no `Option`: the struct is copied with every connection).
    eof_at: Time,
    /// The last exchange ends at `eof` rather than at its last byte.
    ends_at_close: bool,
}

impl WebApp {
    /// A connection opened at `connect_time` that will carry `script` (at least one exchange);
    /// its last exchange ends at its last byte or at the close (`end`).
    /// Bytes the application holds on the heap (a script of more than one exchange).
    pub fn heap_bytes(&self) -> usize {
        self.script.heap_bytes() + self.times.heap_bytes()
    }

    pub fn new(script: Script, connect_time: Time, end: ResponseEnd) -> Self {
        assert!(
            !script.is_empty(),
            "a Web connection carries at least one exchange"
        );
        let mut times: OneOrMore<_> = (0..script.len()).map(|_| [None; 2]).collect();
        times[0][0] = Some(connect_time);
        let (resp_end, req_end) = (script[0].response, script[0].request);
        WebApp {
            script,
            done: 0,
            requested: false,
            served: 0,
            serving: false,
            received: [0; 2],
            resp_end,
            req_end,
            closed: [false; 2],
            times,
            eof_at: 0,
            ends_at_close: end == ResponseEnd::Close,
        }
    }

    pub fn exchanges(&self) -> &[WebExchange] {
        &self.script
    }

    pub fn persistent(&self) -> bool {
        self.script.len() > 1
    }

    /// Every response has fully arrived.
    pub fn all_done(&self) -> bool {
        self.done == self.script.len()
    }

    pub fn bytes_received(&self) -> u64 {
        self.received[0]
    }

    pub fn bytes_expected(&self) -> u64 {
        self.script.iter().map(|e| e.response).sum()
    }

    pub fn request_bytes(&self) -> u64 {
        self.script.iter().map(|e| e.request).sum()
    }

    /// Exchanges completed at the client so far.
    /// When exchange `i` started (its request write; the connect for the first).
    pub fn start(&self, i: usize) -> Option<Time> {
        self.times[i][0]
    }

    /// When the last byte of exchange `i`'s response arrived.
    pub fn end(&self, i: usize) -> Option<Time> {
        self.times[i][1]
    }

    /// When the client read the end of the stream and closed (none yet: `None`).
    pub fn eof(&self) -> Option<Time> {
        self.closed[0].then_some(self.eof_at)
    }

    /// The last exchange ends at the close, not at its last byte.
    pub fn ends_at_close(&self) -> bool {
        self.ends_at_close
    }

    /// When exchange `i` ended by the connection's definition: its last byte, or for the last
    /// exchange of a connection that ends at its close, the close (after the last byte).
    pub fn response_end(&self, i: usize) -> Option<Time> {
        if self.ends_at_close && i + 1 == self.script.len() {
            self.times[i][1].and(self.eof())
        } else {
            self.times[i][1]
        }
    }

    pub fn completed(&self) -> usize {
        self.done
    }

    #[inline]
    pub fn on_event(&mut self, side: usize, out: &Outbox, now: Time) -> AppAction {
        self.received[side] += out.delivered;
        if side == 0 {
            self.client(out, now)
        } else {
            self.server(out)
        }
    }

    fn client(&mut self, out: &Outbox, now: Time) -> AppAction {
        if out.established && !self.requested && self.done == 0 {
            self.requested = true;
            return AppAction::Write(self.script[0].request);
        }
        while self.done < self.script.len() && self.requested && self.received[0] >= self.resp_end {
            self.times[self.done][1] = Some(now);
            self.done += 1;
            self.requested = false;
            if let Some(next) = self.script.get(self.done) {
                self.resp_end += next.response;
                return if next.gap == 0 {
                    self.request_now(now)
                } else {
                    AppAction::WakeAt(now + next.gap)
                };
            }
        }
        if out.peer_closed && !self.closed[0] {
            self.closed[0] = true;
            self.eof_at = now;
            return AppAction::Close;
        }
        AppAction::None
    }

    fn request_now(&mut self, now: Time) -> AppAction {
        self.times[self.done][0] = Some(now);
        self.requested = true;
        AppAction::Write(self.script[self.done].request)
    }

    fn server(&mut self, out: &Outbox) -> AppAction {
        if !self.serving && self.served < self.script.len() && self.received[1] >= self.req_end {
            let delay = self.script[self.served].server_delay;
            if delay > 0 {
                self.serving = true;
                return AppAction::WakeAfter(delay);
            }
            return self.respond();
        }
        if out.peer_closed && !self.closed[1] {
            self.closed[1] = true;
            return AppAction::Close;
        }
        AppAction::None
    }

    fn respond(&mut self) -> AppAction {
        self.serving = false;
        let resp = self.script[self.served].response;
        self.served += 1;
        if let Some(next) = self.script.get(self.served) {
            self.req_end += next.request;
            AppAction::Write(resp)
        } else {
            self.closed[1] = true;
            AppAction::WriteClose(resp)
        }
    }

    /// A pause requested with `WakeAt` / `WakeAfter` is over.
    pub fn on_wake(&mut self, side: usize, now: Time) -> AppAction {
        if side == 0 {
            if self.done < self.script.len() && !self.requested {
                return self.request_now(now);
            }
        } else if self.serving {
            return self.respond();
        }
        AppAction::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(delivered: u64, established: bool, peer_closed: bool) -> Outbox {
        Outbox {
            delivered,
            established,
            peer_closed,
            ..Default::default()
        }
    }

    #[test]
    fn persistent_exchanges_run_in_sequence_with_gaps_and_service_delays() {
        let script = vec![
            WebExchange {
                request: 300,
                response: 5000,
                gap: 0,
                server_delay: 10,
            },
            WebExchange {
                request: 200,
                response: 1000,
                gap: 50,
                server_delay: 0,
            },
        ];
        let mut a = WebApp::new(script.into(), 7, ResponseEnd::LastByte);
        // Client connects: writes request 0.
        assert_eq!(
            a.on_event(0, &out(0, true, false), 100),
            AppAction::Write(300)
        );
        // Server gets part of the request: nothing; then the rest: waits its service delay.
        assert_eq!(a.on_event(1, &out(100, true, false), 150), AppAction::None);
        assert_eq!(
            a.on_event(1, &out(200, false, false), 160),
            AppAction::WakeAfter(10)
        );
        assert_eq!(a.on_wake(1, 170), AppAction::Write(5000));
        // Client receives the response: exchange 0 ends, the next request waits its gap.
        assert_eq!(
            a.on_event(0, &out(4999, false, false), 200),
            AppAction::None
        );
        assert_eq!(
            a.on_event(0, &out(1, false, false), 210),
            AppAction::WakeAt(260)
        );
        assert_eq!(a.on_wake(0, 260), AppAction::Write(200));
        assert_eq!(
            a.on_event(1, &out(200, false, false), 300),
            AppAction::WriteClose(1000)
        );
        assert_eq!(
            a.on_event(0, &out(1000, false, true), 400),
            AppAction::Close
        );
        assert!(a.all_done());
        assert_eq!((a.start(0), a.start(1)), (Some(7), Some(260)));
        assert_eq!((a.end(0), a.end(1)), (Some(210), Some(400)));
        assert_eq!(a.eof(), Some(400));
        assert_eq!(a.response_end(1), Some(400));
    }

    /// Study A's definition: the response is over when the client has read the server's FIN
    /// and closed, which can be later than the last byte (a FIN sent or recovered separately).
    #[test]
    fn response_ends_at_the_close_when_asked() {
        let one = || {
            vec![WebExchange {
                request: 300,
                response: 2000,
                gap: 0,
                server_delay: 0,
            }]
            .into()
        };
        for (end, expected) in [(ResponseEnd::LastByte, 200), (ResponseEnd::Close, 900)] {
            let mut a = WebApp::new(one(), 0, end);
            assert_eq!(
                a.on_event(0, &out(0, true, false), 50),
                AppAction::Write(300)
            );
            assert_eq!(
                a.on_event(1, &out(300, false, false), 100),
                AppAction::WriteClose(2000)
            );
            // Last byte at 200 ms; the FIN only at 900 ms.
            assert_eq!(
                a.on_event(0, &out(2000, false, false), 200),
                AppAction::None
            );
            assert!(a.all_done());
            assert_eq!(a.end(0), Some(200));
            assert_eq!(a.eof(), None);
            let before_close = a.response_end(0);
            assert_eq!(a.on_event(0, &out(0, false, true), 900), AppAction::Close);
            assert_eq!(a.eof(), Some(900));
            assert_eq!(a.response_end(0), Some(expected));
            assert_eq!(before_close.is_some(), end == ResponseEnd::LastByte);
        }
    }
}
