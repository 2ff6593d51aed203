//! TEMPORARY STUB.
use crate::packet::{Ecn, Proto};
use crate::units::Time;
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub sack_permitted: bool,
    pub wscale: Option<u8>,
    pub timestamps: Option<(u32, u32)>,
    pub sack: [(u32, u32); 4],
    pub sack_n: u8,
}
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WirePacket {
    pub t: Time,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub proto: Proto,
    pub sport: u16,
    pub dport: u16,
    pub ip_id: u16,
    pub ttl: u8,
    pub ecn: Ecn,
    pub payload: u32,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub options: TcpOptions,
}
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h
}
pub fn write_record(out: &mut Vec<u8>, p: &WirePacket, snaplen: u32) -> usize {
    let n = 16 + (40 + p.payload).min(snaplen) as usize;
    out.resize(out.len() + n, 0);
    n
}
