//! Packet captures (`[[trace.pcap]]`): packets seen at a bottleneck's egress or ingress or at
//! a host's interface, encoded as pcap records (`capture::pcap`) into a buffer per capture
//! that the run drains with its tables, so a long capture streams to disk in chunks.
//!
//! The model's packets carry no addresses, ports or 32-bit sequence numbers; the capture
//! gives them the ones a real network would have, consistently for a connection:
//! - host `h`: 10.0.0.1 + h for left hosts, 10.128.0.1 + (h − left_hosts) for right hosts;
//! - a connection's client port 1024 + (id mod 64512) (ports are reused after 64512
//!   connections, as an ephemeral range is), its server port 80 (Web sources), 5201 (bulk,
//!   iperf3's) or 21 (FTP); UDP flow `i`: 1024 + (i mod 64512) → 5001;
//! - each side's initial sequence number a hash of the connection id and side (RFC 9293
//!   §3.4.1 wants them unpredictable; a hash keeps them reproducible), plus the model's
//!   64-bit offsets, modulo 2^32;
//! - the window field: the receiver's `rwnd`, scaled by the smallest RFC 7323 shift that fits
//!   it in 16 bits (the SYN's field unscaled, as RFC 7323 §2.2 requires);
//! - TCP options: MSS, SACK-permitted and window scale on SYNs; the SACK blocks the model
//!   sends; timestamps when the configuration counts their 12 bytes (`header_bytes` ≥ 52).
//!   The model keeps no timestamp values: TSval is the capture point's clock in ms, TSecr the
//!   last TSval this capture saw from the other end of the connection;
//! - TTL 64 less the hops travelled; the IP identification a per-capture counter.
//!
//! The IP length of a captured packet is that of its real encoding (the model's packet size
//! counts ns-2's unpadded SACK option and no SYN options, so the two can differ by a few
//! bytes). A packet still travelling after its connection ended (a FIN retransmitted just
//! before the peer's ACK arrived) is captured with the identity of its connection, which the
//! captures keep for `RETIRED_KEEP` of simulated time after the connection ends (far longer
//! than any packet can travel); one older than that would be skipped.

use super::flow_losses::ConnTag;
use super::realtime::{RtFlows, RT_GEN};
use super::trace_select::Selector;
use super::udp_cbr::CbrFlows;
use super::video_call::{self, VideoCalls};
use super::{Conn, Simulation, Source};
use crate::capture::{file_header, write_record, TcpOptions, WirePacket};
use crate::config::trace::{CapturePoint, PcapConfig};
use crate::packet::{flags, Packet, Proto};
use crate::tcp::config::TcpConfig;
use crate::units::Time;

/// Where `Simulation::tap` is called from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// Starting transmission on bottleneck direction 0/1.
    Egress(usize),
    /// Arriving at bottleneck direction 0/1's queue.
    Ingress(usize),
    /// Leaving its sending host.
    Sent,
    /// Arriving at its destination host.
    Received,
}

pub(super) struct Tap {
    point: CapturePoint,
    host: u32,
    snaplen: u32,
    sel: Selector,
    pub file: String,
    /// Encoded records not yet drained (the file header first).
    buf: Vec<u8>,
    pub packets: u64,
    pub bytes: u64,
    /// Per connection slot and side, the last TSval written (TSecr of the other side).
    echo: Vec<[u32; 2]>,
    ip_id: u16,
}

/// How long the captures remember an ended connection (`Taps::retired`).
const RETIRED_KEEP: Time = 120 * crate::units::SEC;

/// What a capture needs to know of a connection to write its packets.
#[derive(Clone, Copy, Default)]
struct ConnWire {
    id: u64,
    client: u32,
    server: u32,
    server_port: u16,
    mss: u32,
    rwnd: u32,
    timestamps: bool,
}

/// The captures of a run and the points they watch (checked on the hot path).
pub(super) struct Taps {
    pub list: Vec<Tap>,
    /// Connections ended in the last `RETIRED_KEEP`, by (slot, generation), and their end
    /// times in order (memory stays bounded by the connections ended in that time).
    retired: std::collections::HashMap<(u32, u32), ConnWire>,
    retired_order: std::collections::VecDeque<(Time, u32, u32)>,
    pub egress: [bool; 2],
    pub ingress: [bool; 2],
    pub hosts: bool,
}

impl Taps {
    pub fn new(cfgs: &[PcapConfig], seed: u64) -> Option<Box<Taps>> {
        if cfgs.is_empty() {
            return None;
        }
        let mut t = Taps {
            list: Vec::new(),
            retired: Default::default(),
            retired_order: Default::default(),
            egress: [false; 2],
            ingress: [false; 2],
            hosts: false,
        };
        for c in cfgs {
            match c.point {
                CapturePoint::Forward => t.egress[0] = true,
                CapturePoint::Reverse => t.egress[1] = true,
                CapturePoint::ForwardIn => t.ingress[0] = true,
                CapturePoint::ReverseIn => t.ingress[1] = true,
                CapturePoint::Host => t.hosts = true,
            }
            t.list.push(Tap {
                point: c.point,
                host: c.host.unwrap_or(u32::MAX),
                snaplen: c.snaplen,
                sel: Selector::new(&c.selection(), seed),
                file: c.file_name(),
                buf: file_header(c.snaplen).to_vec(),
                packets: 0,
                bytes: 0,
                echo: Vec::new(),
                ip_id: 0,
            });
        }
        Some(Box::new(t))
    }

    /// Each capture's file name and the bytes encoded since the last drain.
    pub fn drain(&mut self) -> Vec<(String, Vec<u8>)> {
        self.list
            .iter_mut()
            .map(|t| (t.file.clone(), std::mem::take(&mut t.buf)))
            .collect()
    }
}

impl Tap {
    fn watches(&self, seen: Seen, src: u32, dst: u32) -> bool {
        match (self.point, seen) {
            (CapturePoint::Forward, Seen::Egress(0)) => true,
            (CapturePoint::Reverse, Seen::Egress(1)) => true,
            (CapturePoint::ForwardIn, Seen::Ingress(0)) => true,
            (CapturePoint::ReverseIn, Seen::Ingress(1)) => true,
            (CapturePoint::Host, Seen::Sent) => src == self.host,
            (CapturePoint::Host, Seen::Received) => dst == self.host,
            _ => false,
        }
    }
}

/// The IPv4 address of host `h` (module comment).
pub(super) fn address(h: u32, left_hosts: u32) -> [u8; 4] {
    let a = if h < left_hosts {
        0x0a00_0001 + h
    } else {
        0x0a80_0001 + (h - left_hosts)
    };
    a.to_be_bytes()
}

fn ephemeral_port(i: u64) -> u16 {
    1024 + (i % 64512) as u16
}

/// A side's initial sequence number: SplitMix64's finalizer of the id and side.
fn iss(id: u64, side: usize) -> u32 {
    let mut z = id.wrapping_mul(2).wrapping_add(side as u64) ^ 0x5851_f42d_4c95_7f2d;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// The RFC 7323 shift that fits `rwnd` in the 16-bit window field (at most 14).
fn window_shift(rwnd: u32) -> u8 {
    let mut s = 0;
    while s < 14 && (rwnd >> s) > 0xffff {
        s += 1;
    }
    s
}

/// What a capture reads of the simulation besides its own state: borrowed field by field
/// (`world!`), so that the hot path can call `tap` while it holds a link.
pub(super) struct World<'a> {
    pub tags: &'a [ConnTag],
    pub conns: &'a [Conn],
    pub tcps: &'a [TcpConfig],
    pub sources: &'a [Source],
    pub udp: &'a CbrFlows,
    pub rt: &'a RtFlows,
    pub video: &'a VideoCalls,
    pub left: u32,
}

/// The simulation's `World`, borrowing only the fields it names.
macro_rules! world {
    ($sim:expr) => {
        $crate::sim::capture_tap::World {
            tags: &$sim.tags,
            conns: &$sim.conns,
            tcps: &$sim.tcps,
            sources: &$sim.sources,
            udp: &$sim.udp,
            rt: &$sim.rt,
            video: &$sim.video,
            left: $sim.topo.left,
        }
    };
}
pub(super) use world;

impl World<'_> {
    fn conn_wire(&self, slot: usize) -> ConnWire {
        let c = &self.conns[slot];
        let cfg = &self.tcps[c.tcp as usize];
        ConnWire {
            id: c.id,
            client: c.client_host,
            server: c.server_host,
            server_port: match self.sources[c.source as usize] {
                Source::Bulk => 5201,
                Source::Ftp(_) => 21,
                _ => 80,
            },
            mss: cfg.mss,
            rwnd: cfg.rwnd,
            timestamps: cfg.header_bytes >= 52,
        }
    }
}

/// Packet `p` is seen at `seen` at `now`: every capture watching that point and selecting its
/// connection records it. Out of line: the hot path only tests a flag.
#[cold]
#[inline(never)]
pub(super) fn tap(taps: &mut Taps, w: &World, seen: Seen, now: Time, p: &Packet) {
    let left = w.left;
    match p.proto {
        Proto::Udp => {
            let rt = p.gen == RT_GEN;
            // A video call's packets carry flags (media or feedback; `sim::video_call`).
            let video = !rt && p.flags != 0;
            let (src, dst) = if rt {
                w.rt.hosts(p.conn)
            } else if video {
                w.video.hosts(p.conn, p.flags)
            } else {
                w.udp.hosts(p.conn)
            };
            let (sport, dport) = if rt {
                w.rt.wire_ports(p.conn, ephemeral_port)
            } else if video {
                // Media to RTP's port 5004 at the receiver (RFC 3551 §8); feedback back from it.
                let eph = ephemeral_port(p.conn as u64);
                if p.flags == video_call::MEDIA {
                    (eph, 5004)
                } else {
                    (5004, eph)
                }
            } else {
                (ephemeral_port(p.conn as u64), 5001)
            };
            for t in taps.list.iter_mut() {
                if !(t.watches(seen, src, dst) && t.sel.at(now) && t.sel.udp_flow(src, dst)) {
                    continue;
                }
                t.ip_id = t.ip_id.wrapping_add(1);
                let wire = WirePacket {
                    t: now,
                    src: address(src, left),
                    dst: address(dst, left),
                    proto: Proto::Udp,
                    sport,
                    dport,
                    ip_id: t.ip_id,
                    ttl: 64 - p.hop.min(63),
                    ecn: p.ecn,
                    payload: p.len,
                    ..Default::default()
                };
                t.record(&wire);
            }
        },
        Proto::Tcp => {
            let slot = p.conn as usize;
            let cw = if w.tags[slot].is(p.gen) {
                w.conn_wire(slot)
            } else {
                // Travelling after its connection ended.
                match taps.retired.get(&(p.conn, p.gen)) {
                    Some(&cw) => cw,
                    None => return,
                }
            };
            let side = (!p.to_server) as usize;
            let (client, server) = (cw.client, cw.server);
            let (src, dst) = if side == 0 {
                (client, server)
            } else {
                (server, client)
            };
            let ports = [ephemeral_port(cw.id), cw.server_port];
            let iss = [iss(cw.id, 0), iss(cw.id, 1)];
            let shift = window_shift(cw.rwnd);
            let syn = p.has(flags::SYN);
            for t in taps.list.iter_mut() {
                if !(t.watches(seen, src, dst)
                    && t.sel.at(now)
                    && t.sel.connection(cw.id, client, server))
                {
                    continue;
                }
                let wire = t.tcp_wire(
                    now,
                    p,
                    side,
                    &ports,
                    &iss,
                    cw.mss,
                    cw.rwnd,
                    shift,
                    cw.timestamps,
                    syn,
                    src,
                    dst,
                    left,
                );
                t.record(&wire);
            }
        },
    }
}

impl Simulation {
    /// Packet `p` seen at `seen` now (where no other field of the simulation is borrowed).
    pub(super) fn tap(&mut self, seen: Seen, p: &Packet) {
        let now = self.sched.now();
        if let Some(taps) = self.taps.as_deref_mut() {
            tap(taps, &world!(self), seen, now, p);
        }
    }

    /// Packet `p` leaves its sending host now (for the sources outside `sim/observe.rs`,
    /// which need not name `Seen`).
    pub(super) fn tap_sent(&mut self, p: &Packet) {
        self.tap(Seen::Sent, p);
    }

    /// The connection in `slot` ends: the captures keep its identity for the packets still
    /// on their way, and forget those ended more than `RETIRED_KEEP` ago.
    #[cold]
    pub(super) fn tap_retire(&mut self, slot: u32) {
        let now = self.sched.now();
        let cw = world!(self).conn_wire(slot as usize);
        let gen = self.tags[slot as usize].gen;
        let Some(taps) = self.taps.as_mut() else {
            return;
        };
        while let Some(&(t, s, g)) = taps.retired_order.front() {
            if t + RETIRED_KEEP > now {
                break;
            }
            taps.retired_order.pop_front();
            taps.retired.remove(&(s, g));
        }
        taps.retired.insert((slot, gen), cw);
        taps.retired_order.push_back((now, slot, gen));
    }
}

impl Tap {
    #[allow(clippy::too_many_arguments)]
    fn tcp_wire(
        &mut self,
        now: Time,
        p: &Packet,
        side: usize,
        ports: &[u16; 2],
        iss: &[u32; 2],
        mss: u32,
        rwnd: u32,
        shift: u8,
        timestamps: bool,
        syn: bool,
        src: u32,
        dst: u32,
        left: u32,
    ) -> WirePacket {
        let slot = p.conn as usize;
        if self.echo.len() <= slot {
            self.echo.resize(slot + 1, [0; 2]);
        }
        if syn && !p.has(flags::ACK) {
            self.echo[slot] = [0; 2]; // a new connection in this slot
        }
        let tsval = (now / crate::units::MS) as u32;
        let options = TcpOptions {
            mss: syn.then_some(mss.min(0xffff) as u16),
            sack_permitted: syn && p.sack_permitted,
            wscale: (syn && shift > 0).then_some(shift),
            timestamps: timestamps.then(|| (tsval, self.echo[slot][1 - side])),
            sack: std::array::from_fn(|k| {
                let (a, b) = p.sack[k];
                let base = iss[1 - side];
                (base.wrapping_add(a as u32), base.wrapping_add(b as u32))
            }),
            sack_n: p.sack_n,
        };
        self.echo[slot][side] = tsval;
        self.ip_id = self.ip_id.wrapping_add(1);
        let window = if syn { rwnd } else { rwnd >> shift }.min(0xffff) as u16;
        WirePacket {
            t: now,
            src: address(src, left),
            dst: address(dst, left),
            proto: Proto::Tcp,
            sport: ports[side],
            dport: ports[1 - side],
            ip_id: self.ip_id,
            ttl: 64 - p.hop.min(63),
            ecn: p.ecn,
            payload: p.len,
            seq: iss[side].wrapping_add(p.seq as u32),
            ack: if p.has(flags::ACK) {
                iss[1 - side].wrapping_add(p.ack as u32)
            } else {
                0
            },
            flags: p.flags,
            window,
            options,
        }
    }

    fn record(&mut self, w: &WirePacket) {
        let n = write_record(&mut self.buf, w, self.snaplen);
        self.packets += 1;
        self.bytes += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_ports_and_window_shifts() {
        assert_eq!(address(0, 3), [10, 0, 0, 1]);
        assert_eq!(address(2, 3), [10, 0, 0, 3]);
        assert_eq!(address(3, 3), [10, 128, 0, 1]);
        assert_eq!(address(3 + 300, 3), [10, 128, 1, 45]);
        assert_eq!(ephemeral_port(0), 1024);
        assert_eq!(ephemeral_port(64512), 1024);
        assert_eq!(window_shift(65535), 0);
        assert_eq!(window_shift(65536), 1);
        assert_eq!(window_shift(6_000_000), 7); // 6e6 >> 7 = 46875
        assert_ne!(iss(1, 0), iss(1, 1));
        assert_ne!(iss(1, 0), iss(2, 0));
    }
}
