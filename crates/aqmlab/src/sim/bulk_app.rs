//! A bulk transfer is one request/response exchange in the manner of HTTP/1.0: the client
//! connects and writes its request (possibly empty); once the whole request has arrived the
//! server writes the response and closes; the client closes when it reads the end of stream.
//! An upload reverses the roles of the bytes: the client writes them and closes. A transfer
//! without a size is greedy: it never ends.

use super::app_action::AppAction;
use crate::config::Direction;
use crate::tcp::Outbox;

/// Bytes written by a greedy source: more than any run can send.
const INFINITE: u64 = 1 << 62;

#[derive(Clone, Debug)]
pub struct BulkApp {
    upload: bool,
    request: u64,
    /// Bytes of the main transfer (the response, or the upload); `None` = greedy.
    size: Option<u64>,
    started: [bool; 2],
    closed: [bool; 2],
    responded: bool,
    /// Bytes each side has received.
    received: [u64; 2],
}

impl BulkApp {
    pub fn bulk(direction: Direction, size: Option<u64>, request: u64) -> Self {
        let upload = direction == Direction::Upload;
        BulkApp {
            upload,
            request: if upload { 0 } else { request },
            size,
            started: [false; 2],
            closed: [false; 2],
            responded: false,
            received: [0; 2],
        }
    }

    /// The side (0 client, 1 server) that receives the main transfer.
    pub fn receiver_side(&self) -> usize {
        if self.upload {
            1
        } else {
            0
        }
    }

    /// Reacts to what endpoint `side` just reported.
    pub fn on_event(&mut self, side: usize, out: &Outbox) -> AppAction {
        self.received[side] += out.delivered;
        if out.established {
            self.started[side] = true;
        }
        let close_on_eof = out.peer_closed && !self.closed[side];
        let writes_main = match (side, self.upload) {
            (0, false) if out.established && self.request > 0 => {
                return AppAction::Write(self.request)
            },
            (0, true) => out.established,
            (1, false) => self.started[1] && !self.responded && self.received[1] >= self.request,
            _ => false,
        };
        if writes_main {
            self.responded = true;
            self.closed[side] = self.size.is_some();
            return match self.size {
                Some(n) => AppAction::WriteClose(n),
                None => AppAction::Write(INFINITE),
            };
        }
        if close_on_eof {
            self.closed[side] = true;
            return AppAction::Close;
        }
        AppAction::None
    }

    pub fn transfer_complete(&self) -> bool {
        match self.size {
            Some(n) => self.received[self.receiver_side()] >= n,
            None => false,
        }
    }

    pub fn request_bytes(&self) -> u64 {
        self.request
    }

    /// Size of the main transfer (0 for a greedy source).
    pub fn response_bytes(&self) -> u64 {
        self.size.unwrap_or(0)
    }

    pub fn bytes_received(&self) -> u64 {
        self.received[self.receiver_side()]
    }

    /// Bytes the main transfer should deliver (for a greedy source: what was delivered).
    pub fn bytes_expected(&self) -> u64 {
        self.size.unwrap_or(self.bytes_received())
    }
}
