//! The events of a run and their packing for the event list.
//!
//! `Ev` says what happens (components named by index, small `Copy` payloads); `PackedEv` is
//! the 64-bit form the scheduler holds. `Simulation::dispatch` (`mod.rs`) routes each event
//! to its handler.

use crate::net::link::LinkId;
use crate::packet::PktId;

/// Simulation events. Components are named by index; payloads stay small and `Copy`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// A packet reaches the node at the end of its current link; `to_host`: that node is its
    /// destination host. `owner`: `(slot << 1 | side) + 1` for a TCP packet (the connection's
    /// slot and the receiving endpoint), 0 for others; read only to fetch the slot's state
    /// ahead (`PackedEv::arrival`).
    Arrive {
        pkt: PktId,
        owner: u32,
        to_host: bool,
    },
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
    /// The bottleneck's rate changes to step `.0` of `topology.bottleneck_steps`.
    RateStep(u32),
    /// Video call `call`'s event `what` (`sim::video_call`: frame, pacing, feedback, report).
    Video { what: u32, call: u32 },
    /// Real-time stream `.0` (`realtime`) sends its next packet.
    RtSend(u32),
}

/// An `Ev` packed into 64 bits for the event list, whose entries (time and event) are then 16
/// bytes instead of 24: the list moves each event about once and holds tens of thousands, so
/// entry size is memory traffic. Bits 60–63: the variant; 32–59: a second field (a timer's
/// or wake-up's `slot << 1 | side`, a start's source); 0–31: the first (link, packet, flow,
/// generation). Slots stay below 2^27 and sources below 2^28 (checked where they are made).
#[derive(Clone, Copy, Debug)]
pub(super) struct PackedEv(u64);

pub(super) const MAX_SLOTS: usize = 1 << 26;
pub(super) const MAX_SOURCES: usize = 1 << 28;

/// The tag of an `Arrive` event at the packet's destination host (0: at a node on the way).
const ARRIVE_HOST: u64 = 11;
/// The tag of `Ev::Video`.
const VIDEO: u64 = 12;
/// The tag of `Ev::RtSend`.
const RT_SEND: u64 = 13;

impl PackedEv {
    #[inline(always)]
    fn new(tag: u64, hi: u32, lo: u32) -> Self {
        PackedEv(tag << 60 | (hi as u64) << 32 | lo as u64)
    }

    /// The packet of an `Arrive` event, its owner and whether it reaches its host
    /// (`Ev::Arrive`).
    #[inline(always)]
    pub(super) fn arrival(self) -> Option<(PktId, u32, bool)> {
        let tag = self.0 >> 60;
        (tag == 0 || tag == ARRIVE_HOST).then_some((
            self.0 as u32,
            (self.0 >> 32) as u32 & ((1 << 28) - 1),
            tag == ARRIVE_HOST,
        ))
    }

    #[inline(always)]
    pub(super) fn unpack(self) -> Ev {
        let lo = self.0 as u32;
        let hi = (self.0 >> 32) as u32 & ((1 << 28) - 1);
        match self.0 >> 60 {
            0 => Ev::Arrive {
                pkt: lo,
                owner: hi,
                to_host: false,
            },
            ARRIVE_HOST => Ev::Arrive {
                pkt: lo,
                owner: hi,
                to_host: true,
            },
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
            9 => Ev::TimerSweep,
            10 => Ev::RateStep(lo),
            RT_SEND => Ev::RtSend(lo),
            _ => Ev::Video { what: hi, call: lo },
        }
    }
}

impl From<Ev> for PackedEv {
    #[inline(always)]
    fn from(e: Ev) -> Self {
        match e {
            Ev::Arrive {
                pkt,
                owner,
                to_host,
            } => {
                debug_assert!((owner as usize) <= 2 * MAX_SLOTS);
                PackedEv::new(if to_host { ARRIVE_HOST } else { 0 }, owner, pkt)
            },
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
            Ev::RateStep(i) => PackedEv::new(10, 0, i),
            Ev::Video { what, call } => PackedEv::new(VIDEO, what, call),
            Ev::RtSend(s) => PackedEv::new(RT_SEND, 0, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    #[test]
    fn packed_events_round_trip() {
        let top = (MAX_SLOTS - 1) as u32;
        for e in [
            Ev::Arrive {
                pkt: 7,
                owner: 0,
                to_host: false,
            },
            Ev::Arrive {
                pkt: u32::MAX,
                owner: 2 * MAX_SLOTS as u32,
                to_host: true,
            },
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
            Ev::RateStep(2),
            Ev::Video { what: 3, call: 9 },
            Ev::CbrSend(u32::MAX),
            Ev::RtSend(u32::MAX),
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
