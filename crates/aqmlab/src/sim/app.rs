//! The application on a connection: what each end writes, and when it pauses or closes.

use super::app_action::AppAction;
use super::bulk_app::BulkApp;
use super::dash_app::DashApp;
use super::web_app::WebApp;
use crate::tcp::Outbox;
use crate::units::Time;

#[derive(Clone, Debug)]
pub enum App {
    Bulk(BulkApp),
    Web(WebApp),
    /// Boxed: a player's state is larger than the other applications'.
    Dash(Box<DashApp>),
}

impl App {
    /// Bytes the application holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        match self {
            App::Bulk(_) => 0,
            App::Web(a) => a.heap_bytes(),
            App::Dash(a) => std::mem::size_of::<DashApp>() + a.heap_bytes(),
        }
    }

    /// Inlined into the connection's dispatch (`connections::after_call`), where the
    /// per-packet path has it; left to the compiler, a change elsewhere in the crate moved it
    /// out of line (+0.8 % instructions on Study B's 120-s form).
    #[inline]
    pub fn on_event(&mut self, side: usize, out: &Outbox, now: Time) -> AppAction {
        match self {
            App::Bulk(a) => a.on_event(side, out),
            App::Web(a) => a.on_event(side, out, now),
            App::Dash(a) => a.on_event(side, out, now),
        }
    }

    pub fn on_wake(&mut self, side: usize, now: Time) -> AppAction {
        match self {
            App::Bulk(_) => AppAction::None,
            App::Web(a) => a.on_wake(side, now),
            App::Dash(a) => a.on_wake(side, now),
        }
    }

    /// The side (0 client, 1 server) that receives the main transfer.
    pub fn receiver_side(&self) -> usize {
        match self {
            App::Bulk(a) => a.receiver_side(),
            App::Web(_) => 0,
            App::Dash(_) => 0,
        }
    }

    /// A Web connection whose last response ends when the client has closed (Study A).
    pub fn ends_at_close(&self) -> bool {
        match self {
            App::Bulk(_) => false,
            App::Web(a) => a.ends_at_close(),
            App::Dash(_) => false,
        }
    }

    /// Everything the connection was opened for has arrived.
    pub fn transfer_complete(&self) -> bool {
        match self {
            App::Bulk(a) => a.transfer_complete(),
            App::Web(a) => a.all_done(),
            App::Dash(a) => a.all_done(),
        }
    }

    pub fn request_bytes(&self) -> u64 {
        match self {
            App::Bulk(a) => a.request_bytes(),
            App::Web(a) => a.request_bytes(),
            App::Dash(a) => a.request_bytes(),
        }
    }

    pub fn response_bytes(&self) -> u64 {
        match self {
            App::Bulk(a) => a.response_bytes(),
            App::Web(a) => a.bytes_expected(),
            App::Dash(a) => a.bytes_requested(),
        }
    }

    pub fn bytes_received(&self) -> u64 {
        match self {
            App::Bulk(a) => a.bytes_received(),
            App::Web(a) => a.bytes_received(),
            App::Dash(a) => a.bytes_received(),
        }
    }

    pub fn bytes_expected(&self) -> u64 {
        match self {
            App::Bulk(a) => a.bytes_expected(),
            App::Web(a) => a.bytes_expected(),
            App::Dash(a) => a.bytes_requested(),
        }
    }
}
