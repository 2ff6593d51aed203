//! The pcap encoder: the simulator's packets as a classic pcap file of raw IPv4 datagrams.
//!
//! The simulator's packets carry no headers ([`crate::packet::Packet`]: 64-bit sequence offsets
//! from an ISS of 0, one flag byte, an ECN codepoint, SACK blocks). The capture hooks choose
//! addresses, ports, 32-bit wire sequence numbers and option values and hand this encoder a
//! [`WirePacket`]; it lays out the bytes that a real stack would have sent for it.
//!
//! # What is real and what is synthetic
//!
//! Real, laid out to the RFCs and checked byte by byte in the tests below and by Wireshark's
//! dissector in `tests/it/pcap_encoder.rs`:
//! - The file header and records (draft-ietf-opsawg-pcap §4 "File Header", §5 "Packet Record";
//!   tcpdump.org pcap-savefile(5)): the nanosecond-resolution magic 0xa1b23c4d, version 2.4,
//!   thiszone and sigfigs 0, the caller's snap length, link type [`LINKTYPE_RAW`]. Every field
//!   is written little-endian, so a file's bytes do not depend on the host; readers detect the
//!   byte order from the magic. Record timestamps are the simulated time split into seconds and
//!   nanoseconds since the run's start (the file's epoch is 0, i.e. 1970-01-01 00:00:00 UTC).
//!   `incl_len` = min(`orig_len`, snaplen), and only the first `incl_len` bytes are written.
//! - The IPv4 header (RFC 791 §3.1): version 4, IHL 5 (no options), DSCP 0 and the ECN field in
//!   the low two bits of the old TOS byte (RFC 3168 §5: Not-ECT 00, ECT(1) 01, ECT(0) 10,
//!   CE 11), total length, the caller's identification, DF set and fragment offset 0 (the model
//!   never fragments), the caller's TTL, protocol 6 or 17, the header checksum (RFC 791 §3.1,
//!   computed as in RFC 1071), the addresses.
//! - The TCP header (RFC 9293 §3.1): ports, sequence and acknowledgment numbers, data offset,
//!   flags, window, checksum over the pseudo-header (RFC 9293 §3.1 "Checksum"), urgent pointer 0.
//!   aqmlab's flag byte ([`crate::packet::flags`]) is TCP's byte 13 except that its 0x20 is AE,
//!   not URG: AE is written as the lowest bit of byte 12, the bit formerly NS (RFC 9768 §3.2.1),
//!   and URG is never set. ECE and CWR stay at 0x40 and 0x80 of byte 13 (RFC 3168 §6.1).
//! - The UDP header (RFC 768): ports, length, checksum over the pseudo-header, with a computed
//!   checksum of 0 written as 0xFFFF (RFC 768 "Fields": 0 means "no checksum").
//! - The checksums are those of the full packet even when the snap length cuts it short: the
//!   payload is zeros, and zero bytes add nothing to the one's complement sum (RFC 1071 §2).
//!
//! Synthetic, chosen by the caller (or by the model) and written as given:
//! - The payload is `payload` zero bytes: the model has lengths, not data.
//! - Addresses, ports, IP identification, TTL, the window field (the model's receive window,
//!   already scaled down by the caller if it wants a real stack's view), the 32-bit sequence
//!   numbers, and every option value (MSS, window scale shift, TSval/TSecr, SACK edges).
//!
//! # TCP options
//!
//! Written in the order and with the padding Linux uses (`tcp_options_write` in
//! net/ipv4/tcp_output.c), each option group aligned to 4 bytes with NOPs (RFC 9293 §3.2), so no
//! end-of-option-list padding is ever needed:
//! - MSS (RFC 9293 §3.2, kind 2, length 4), when `mss` is set;
//! - SACK-permitted and Timestamps together as `04 02 08 0a TSval TSecr` (RFC 2018 §2,
//!   RFC 7323 §3.2) when both are set, else `01 01 08 0a TSval TSecr` or `01 01 04 02`;
//! - `01 03 03 shift` for window scale (RFC 7323 §2.2), when `wscale` is set;
//! - `01 01 05 len` and the SACK blocks (RFC 2018 §3), when `sack_n` > 0.
//!
//! On a SYN this is Linux's MSS, SACK-permitted, Timestamps, NOP, WScale; on other segments
//! NOP NOP Timestamps, then NOP NOP SACK. The encoder does not look at the SYN flag: it writes
//! the options it is given (RFC 7323 and RFC 2018 say which belong on which segments).
//!
//! The option space is 40 bytes (data offset ≤ 15 words). When the given options would exceed
//! it, SACK blocks are dropped from the end of the list (the oldest, RFC 2018 §4 puts the most
//! recent first) until they fit, as a stack does: with timestamps at most 3 blocks fit
//! (12 + 4 + 3·8 = 40). Every other combination fits (4 + 12 + 4 = 20 bytes at most).
//! `sack_n` above 4 counts as 4.
//!
//! # Lengths
//!
//! A datagram's total length is a 16-bit field: a payload longer than 65535 bytes less the
//! headers is cut to fit (the model's segments are far smaller; this only keeps the header
//! consistent). Timestamps' seconds are 32-bit, enough for 136 years of simulated time.
//!
//! # Cost
//!
//! [`write_record`] builds the headers in a buffer on the stack, sums them once for each
//! checksum and appends to `out` (one reservation); it allocates nothing else.

use super::checksum;
use crate::packet::{flags, Ecn, Proto};
use crate::units::Time;

/// TCP options as the capture writes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (SYN / SYN-ACK).
    pub mss: Option<u16>,
    /// SACK-permitted (SYN / SYN-ACK).
    pub sack_permitted: bool,
    /// Window scale shift count (SYN / SYN-ACK).
    pub wscale: Option<u8>,
    /// (TSval, TSecr), RFC 7323.
    pub timestamps: Option<(u32, u32)>,
    /// RFC 2018 blocks (left edge, right edge), the first `sack_n` valid, most recent first.
    pub sack: [(u32, u32); 4],
    pub sack_n: u8,
}

/// One packet as a capture writes it: addresses, ports and 32-bit wire sequence numbers are
/// already chosen by the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WirePacket {
    /// ns since the start of the run; the file's epoch is 0.
    pub t: Time,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// Tcp or Udp.
    pub proto: Proto,
    pub sport: u16,
    pub dport: u16,
    pub ip_id: u16,
    pub ttl: u8,
    /// The IP header's ECN bits (RFC 3168: Not-ECT 00, ECT(1) 01, ECT(0) 10, CE 11).
    pub ecn: Ecn,
    /// Payload bytes: written as zeros, up to the snap length.
    pub payload: u32,
    /// TCP only from here on.
    pub seq: u32,
    pub ack: u32,
    /// aqmlab's flag byte (crate::packet::flags): FIN SYN RST ACK AE(0x20) ECE CWR.
    pub flags: u8,
    pub window: u16,
    pub options: TcpOptions,
}

/// Link type of the file: LINKTYPE_RAW (101), raw IP whose version is read from the first
/// nibble. LINKTYPE_IPV4 (228) would say "IPv4 only" as well, but 101 is the one every reader
/// has supported for longest (tcpdump, Wireshark, Scapy, dpkt), and our packets are all IPv4,
/// so it says the same thing to more tools.
pub const LINKTYPE_RAW: u32 = 101;

/// The nanosecond-resolution pcap magic (draft-ietf-opsawg-pcap §4).
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;

/// Bytes of a pcap record header (ts_sec, ts_nsec, incl_len, orig_len).
pub const RECORD_HEADER_LEN: usize = 16;

const IP_HLEN: usize = 20;
const TCP_HLEN: usize = 20;
const UDP_HLEN: usize = 8;
/// The most option bytes a TCP header can carry (data offset 15 words, less 5).
pub const MAX_OPTION_LEN: usize = 40;
const MAX_HLEN: usize = IP_HLEN + TCP_HLEN + MAX_OPTION_LEN;

/// TCP option kinds (RFC 9293 §3.2, RFC 2018, RFC 7323).
const NOP: u8 = 1;
const KIND_MSS: u8 = 2;
const KIND_WSCALE: u8 = 3;
const KIND_SACK_PERMITTED: u8 = 4;
const KIND_SACK: u8 = 5;
const KIND_TIMESTAMPS: u8 = 8;

/// The 24-byte pcap file header: nanosecond-resolution magic 0xa1b23c4d, version 2.4,
/// thiszone 0, sigfigs 0, snaplen, linktype. Little-endian.
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone (8..12) and sigfigs (12..16) stay 0.
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// The IP header's ECN field (RFC 3168 §5).
#[inline]
pub fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect1 => 0b01,
        Ecn::Ect0 => 0b10,
        Ecn::Ce => 0b11,
    }
}

/// Number of SACK blocks written for `o`: `sack_n` (at most 4), less those that do not fit in
/// the 40 option bytes.
#[inline]
pub fn sack_blocks_written(o: &TcpOptions) -> usize {
    let fixed = options_len_without_sack(o);
    let n = (o.sack_n as usize).min(4);
    // Each block is 8 bytes, plus 4 (NOP NOP kind len) for the option when n > 0.
    let room = MAX_OPTION_LEN - fixed;
    if room < 4 + 8 {
        0
    } else {
        n.min((room - 4) / 8)
    }
}

#[inline]
fn options_len_without_sack(o: &TcpOptions) -> usize {
    let mut n = 0;
    if o.mss.is_some() {
        n += 4;
    }
    if o.timestamps.is_some() {
        n += 12;
    } else if o.sack_permitted {
        n += 4;
    }
    if o.wscale.is_some() {
        n += 4;
    }
    n
}

/// Bytes of TCP options written for `o` (a multiple of 4, at most 40).
#[inline]
pub fn options_len(o: &TcpOptions) -> usize {
    let k = sack_blocks_written(o);
    options_len_without_sack(o) + if k > 0 { 4 + 8 * k } else { 0 }
}

/// Writes the options into `b` (at least `options_len(o)` bytes); returns the length written.
#[inline]
fn write_options(b: &mut [u8], o: &TcpOptions) -> usize {
    let mut i = 0;
    if let Some(mss) = o.mss {
        b[i..i + 2].copy_from_slice(&[KIND_MSS, 4]);
        b[i + 2..i + 4].copy_from_slice(&mss.to_be_bytes());
        i += 4;
    }
    if let Some((tsval, tsecr)) = o.timestamps {
        if o.sack_permitted {
            b[i..i + 4].copy_from_slice(&[KIND_SACK_PERMITTED, 2, KIND_TIMESTAMPS, 10]);
        } else {
            b[i..i + 4].copy_from_slice(&[NOP, NOP, KIND_TIMESTAMPS, 10]);
        }
        b[i + 4..i + 8].copy_from_slice(&tsval.to_be_bytes());
        b[i + 8..i + 12].copy_from_slice(&tsecr.to_be_bytes());
        i += 12;
    } else if o.sack_permitted {
        b[i..i + 4].copy_from_slice(&[NOP, NOP, KIND_SACK_PERMITTED, 2]);
        i += 4;
    }
    if let Some(shift) = o.wscale {
        b[i..i + 4].copy_from_slice(&[NOP, KIND_WSCALE, 3, shift]);
        i += 4;
    }
    let k = sack_blocks_written(o);
    if k > 0 {
        b[i..i + 4].copy_from_slice(&[NOP, NOP, KIND_SACK, (2 + 8 * k) as u8]);
        i += 4;
        for &(left, right) in &o.sack[..k] {
            b[i..i + 4].copy_from_slice(&left.to_be_bytes());
            b[i + 4..i + 8].copy_from_slice(&right.to_be_bytes());
            i += 8;
        }
    }
    debug_assert_eq!(i, options_len(o));
    i
}

/// Appends one pcap record (16-byte record header with ts_sec/ts_nsec,
/// incl_len = min(orig_len, snaplen), orig_len) and the packet's first incl_len bytes: the IPv4
/// header, then the TCP header with options (or the UDP header), then the zero payload. Returns
/// the record's total length in bytes (16 + incl_len).
pub fn write_record(out: &mut Vec<u8>, p: &WirePacket, snaplen: u32) -> usize {
    let mut h = [0u8; MAX_HLEN];
    let hlen = encode_headers(&mut h, p);
    let payload = clamp_payload(p.payload, hlen);
    let orig_len = hlen + payload;
    let incl_len = orig_len.min(snaplen as usize);

    out.reserve(RECORD_HEADER_LEN + incl_len);
    let ts_sec = (p.t / 1_000_000_000) as u32;
    let ts_nsec = (p.t % 1_000_000_000) as u32;
    out.extend_from_slice(&ts_sec.to_le_bytes());
    out.extend_from_slice(&ts_nsec.to_le_bytes());
    out.extend_from_slice(&(incl_len as u32).to_le_bytes());
    out.extend_from_slice(&(orig_len as u32).to_le_bytes());
    let head = hlen.min(incl_len);
    out.extend_from_slice(&h[..head]);
    out.resize(out.len() + (incl_len - head), 0);
    RECORD_HEADER_LEN + incl_len
}

/// The payload length that fits in one datagram after `hlen` header bytes.
#[inline]
fn clamp_payload(payload: u32, hlen: usize) -> usize {
    (payload as usize).min(usize::from(u16::MAX) - hlen)
}

/// Lays out the IPv4 and TCP/UDP headers of `p`, checksums included, at the start of `h`;
/// returns their length.
fn encode_headers(h: &mut [u8; MAX_HLEN], p: &WirePacket) -> usize {
    let (l4_hlen, proto) = match p.proto {
        Proto::Tcp => (TCP_HLEN + options_len(&p.options), 6u8),
        Proto::Udp => (UDP_HLEN, 17u8),
    };
    let hlen = IP_HLEN + l4_hlen;
    let payload = clamp_payload(p.payload, hlen);
    let total = (hlen + payload) as u16;
    let l4_len = (l4_hlen + payload) as u16;

    // IPv4 (RFC 791 §3.1).
    let ip = &mut h[..IP_HLEN];
    ip[0] = 0x45; // version 4, IHL 5
    ip[1] = ecn_bits(p.ecn); // DSCP 0 (RFC 2474) + ECN (RFC 3168 §5)
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&p.ip_id.to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
    ip[8] = p.ttl;
    ip[9] = proto;
    ip[10..12].copy_from_slice(&[0, 0]);
    ip[12..16].copy_from_slice(&p.src);
    ip[16..20].copy_from_slice(&p.dst);
    let c = checksum::checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());

    // The pseudo-header (RFC 9293 §3.1, RFC 768): addresses, zero, protocol, L4 length.
    let mut acc = checksum::add(0, &p.src);
    acc = checksum::add(acc, &p.dst);
    acc += u64::from(proto) + u64::from(l4_len);

    let l4 = &mut h[IP_HLEN..hlen];
    match p.proto {
        Proto::Tcp => {
            l4[0..2].copy_from_slice(&p.sport.to_be_bytes());
            l4[2..4].copy_from_slice(&p.dport.to_be_bytes());
            l4[4..8].copy_from_slice(&p.seq.to_be_bytes());
            l4[8..12].copy_from_slice(&p.ack.to_be_bytes());
            // Data offset in the high nibble; AE (RFC 9768 §3.2.1) in the lowest bit.
            l4[12] = ((l4_hlen / 4) as u8) << 4 | u8::from(p.flags & flags::AE != 0);
            // aqmlab's 0x20 is AE, never URG.
            l4[13] = p.flags & !flags::AE;
            l4[14..16].copy_from_slice(&p.window.to_be_bytes());
            l4[16..20].copy_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
            write_options(&mut l4[TCP_HLEN..], &p.options);
            // The zero payload adds nothing to the sum.
            let c = checksum::finish(checksum::add(acc, l4));
            l4[16..18].copy_from_slice(&c.to_be_bytes());
        },
        Proto::Udp => {
            l4[0..2].copy_from_slice(&p.sport.to_be_bytes());
            l4[2..4].copy_from_slice(&p.dport.to_be_bytes());
            l4[4..6].copy_from_slice(&l4_len.to_be_bytes());
            l4[6..8].copy_from_slice(&[0, 0]);
            let c = match checksum::finish(checksum::add(acc, l4)) {
                0 => 0xffff, // RFC 768: a computed 0 is sent as all ones
                c => c,
            };
            l4[6..8].copy_from_slice(&c.to_be_bytes());
        },
    }
    hlen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(p: &WirePacket, snaplen: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let n = write_record(&mut out, p, snaplen);
        assert_eq!(n, out.len());
        out
    }

    fn u32le(b: &[u8]) -> u32 {
        u32::from_le_bytes(b[..4].try_into().unwrap())
    }

    #[test]
    fn file_header_bytes() {
        let h = file_header(262_144);
        assert_eq!(
            h,
            [
                0x4d, 0x3c, 0xb2, 0xa1, // magic, nanosecond resolution, little-endian
                2, 0, 4, 0, // version 2.4
                0, 0, 0, 0, // thiszone
                0, 0, 0, 0, // sigfigs
                0x00, 0x00, 0x04, 0x00, // snaplen 262144
                101, 0, 0, 0, // LINKTYPE_RAW
            ]
        );
    }

    /// The IPv4 header of the well-known example (Wikipedia, "Internet checksum" / "IPv4
    /// header checksum"): 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7, whose checksum
    /// b861 is computed by hand there: 4500 + 0073 + 0000 + 4000 + 4011 + c0a8 + 0001 + c0a8 +
    /// 00c7 = 2479c, folded 479e, complemented b861.
    #[test]
    fn ipv4_header_checksum_of_the_textbook_example() {
        let p = WirePacket {
            src: [192, 168, 0, 1],
            dst: [192, 168, 0, 199],
            proto: Proto::Udp,
            ttl: 64,
            payload: 0x73 - 20 - 8,
            ..Default::default()
        };
        let r = record(&p, 65_535);
        let ip = &r[16..36];
        assert_eq!(
            ip,
            [
                0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
                0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7
            ]
        );
    }

    /// An ECN-setup SYN (RFC 3168 §6.1.1: ECE and CWR) with Linux's options, every byte laid out
    /// by hand. IP checksum: 4500 + 003c + 1234 + 4000 + 4006 + 0a00 + 0001 + 0a00 + 0002 = eb79
    /// (no carry), complemented 1486. TCP checksum 92a6: the one's complement sum of the
    /// pseudo-header (0a00 0001 0a00 0002 0006 0028) and the 40 header bytes below with a zero
    /// checksum field, computed apart from this crate by a few lines of Python (RFC 1071 §4.1's
    /// algorithm), and checked again below by re-summing to zero.
    #[test]
    fn syn_byte_by_byte() {
        let p = WirePacket {
            t: 1_500_000_001,
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            proto: Proto::Tcp,
            sport: 40_000,
            dport: 80,
            ip_id: 0x1234,
            ttl: 64,
            ecn: Ecn::NotEct,
            payload: 0,
            seq: 0x0102_0304,
            ack: 0,
            flags: flags::SYN | flags::ECE | flags::CWR,
            window: 65_535,
            options: TcpOptions {
                mss: Some(1460),
                sack_permitted: true,
                wscale: Some(7),
                timestamps: Some((1, 0)),
                ..Default::default()
            },
        };
        let r = record(&p, 65_535);
        let want: Vec<u8> = [
            // pcap record header: 1 s, 500000001 ns, 60 bytes captured of 60
            &[1, 0, 0, 0][..],
            &500_000_001u32.to_le_bytes(),
            &[60, 0, 0, 0],
            &[60, 0, 0, 0],
            // IPv4
            &[0x45, 0x00, 0x00, 60, 0x12, 0x34, 0x40, 0x00, 64, 6],
            &[0x14, 0x86], // header checksum, computed above
            &[10, 0, 0, 1, 10, 0, 0, 2],
            // TCP: ports 40000 (9c40) → 80, seq, ack
            &[0x9c, 0x40, 0x00, 0x50, 1, 2, 3, 4, 0, 0, 0, 0],
            // data offset 10 words (40 bytes), AE 0; flags CWR|ECE|SYN = 0xc2; window ffff
            &[0xa0, 0xc2, 0xff, 0xff],
            &[0x92, 0xa6], // checksum, see above
            &[0, 0],       // urgent pointer
            // MSS 1460, SACK-permitted, Timestamps (1, 0), NOP, WScale 7
            &[
                2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
            ],
        ]
        .concat();
        assert_eq!(r, want);
        // The TCP checksum verifies: pseudo-header + segment sum to all ones.
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 40]);
        pseudo.extend_from_slice(&r[36..]);
        assert_eq!(checksum::checksum(&pseudo), 0);
        assert_eq!(checksum::checksum(&r[16..36]), 0);
    }

    #[test]
    fn ae_ece_cwr_bit_positions_and_no_urg() {
        let tcp = |f: u8| {
            let r = record(
                &WirePacket {
                    flags: f,
                    ..Default::default()
                },
                65_535,
            );
            (r[16 + 20 + 12], r[16 + 20 + 13])
        };
        // AE: lowest bit of byte 12 (RFC 9768 §3.2.1); data offset 5 in the high nibble.
        assert_eq!(tcp(flags::AE), (0x51, 0x00));
        assert_eq!(tcp(flags::ECE), (0x50, 0x40));
        assert_eq!(tcp(flags::CWR), (0x50, 0x80));
        assert_eq!(
            tcp(flags::ACK | flags::AE | flags::ECE | flags::CWR),
            (0x51, 0xd0)
        );
        assert_eq!(tcp(flags::FIN | flags::ACK), (0x50, 0x11));
        assert_eq!(tcp(flags::RST), (0x50, 0x04));
        // URG (0x20 of byte 13) is never set, whatever the flag byte.
        for f in 0..=255u8 {
            let (b12, b13) = tcp(f);
            assert_eq!(b13 & 0x20, 0);
            assert_eq!(b12 & 1, u8::from(f & flags::AE != 0));
            assert_eq!(b13 | (f & flags::AE), f);
        }
    }

    #[test]
    fn ecn_codepoints_in_the_tos_byte() {
        for (e, bits) in [
            (Ecn::NotEct, 0),
            (Ecn::Ect1, 1),
            (Ecn::Ect0, 2),
            (Ecn::Ce, 3),
        ] {
            let r = record(
                &WirePacket {
                    ecn: e,
                    ..Default::default()
                },
                65_535,
            );
            assert_eq!(r[17], bits);
            assert_eq!(checksum::checksum(&r[16..36]), 0);
        }
    }

    #[test]
    fn timestamps_and_sack_layout_on_an_ack() {
        let p = WirePacket {
            flags: flags::ACK | flags::ECE,
            options: TcpOptions {
                timestamps: Some((0xdead_beef, 0x0102_0304)),
                sack: [(100, 200), (300, 400), (0, 0), (0, 0)],
                sack_n: 2,
                ..Default::default()
            },
            ..Default::default()
        };
        let r = record(&p, 65_535);
        let tcp = &r[36..];
        // 20 + 12 (NOP NOP TS) + 4 + 16 (NOP NOP SACK, 2 blocks) = 52 bytes: 13 words.
        assert_eq!(tcp.len(), 52);
        assert_eq!(tcp[12] >> 4, 13);
        assert_eq!(
            &tcp[20..],
            [
                1, 1, 8, 10, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, // NOP NOP TS
                1, 1, 5, 18, 0, 0, 0, 100, 0, 0, 0, 200, 0, 0, 1, 44, 0, 0, 1, 144 // SACK
            ]
        );
    }

    #[test]
    fn options_without_timestamps_and_the_40_byte_limit() {
        // SACK-permitted without timestamps: NOP NOP SACK-permitted (Linux).
        let o = TcpOptions {
            sack_permitted: true,
            ..Default::default()
        };
        let r = record(
            &WirePacket {
                options: o,
                ..Default::default()
            },
            65_535,
        );
        assert_eq!(&r[56..], [1, 1, 4, 2]);
        assert_eq!(r[48] >> 4, 6);

        // Four blocks fit without timestamps: 4 + 32 = 36 bytes.
        let mut o = TcpOptions {
            sack_n: 4,
            ..Default::default()
        };
        for (i, b) in o.sack.iter_mut().enumerate() {
            *b = (i as u32 * 10, i as u32 * 10 + 5);
        }
        assert_eq!(options_len(&o), 36);
        assert_eq!(sack_blocks_written(&o), 4);
        // With timestamps only three: the last (oldest) block is dropped; 40 bytes exactly.
        o.timestamps = Some((1, 2));
        assert_eq!(sack_blocks_written(&o), 3);
        assert_eq!(options_len(&o), 40);
        let r = record(
            &WirePacket {
                options: o,
                ..Default::default()
            },
            65_535,
        );
        let tcp = &r[36..];
        assert_eq!(tcp.len(), 60);
        assert_eq!(tcp[12] >> 4, 15);
        assert_eq!(&tcp[32..36], [1, 1, 5, 26]);
        assert_eq!(&tcp[52..60], [0, 0, 0, 20, 0, 0, 0, 25]);
        // Everything at once: MSS + SACKOK/TS + WScale = 20 bytes, room for two blocks.
        o.mss = Some(1000);
        o.sack_permitted = true;
        o.wscale = Some(14);
        assert_eq!(sack_blocks_written(&o), 2);
        assert_eq!(options_len(&o), 40);
        // More than four counts as four.
        let o = TcpOptions {
            sack_n: 9,
            ..Default::default()
        };
        assert_eq!(sack_blocks_written(&o), 4);
        // Every combination: a multiple of 4, at most 40, and the data offset says so.
        for bits in 0..32u8 {
            let o = TcpOptions {
                mss: (bits & 1 != 0).then_some(1460),
                sack_permitted: bits & 2 != 0,
                wscale: (bits & 4 != 0).then_some(7),
                timestamps: (bits & 8 != 0).then_some((5, 6)),
                sack_n: if bits & 16 != 0 { 4 } else { 0 },
                ..Default::default()
            };
            let n = options_len(&o);
            assert!(n.is_multiple_of(4) && n <= 40, "{o:?}: {n}");
            let r = record(
                &WirePacket {
                    options: o,
                    ..Default::default()
                },
                65_535,
            );
            assert_eq!(r.len(), 16 + 40 + n);
            assert_eq!(usize::from(r[48] >> 4) * 4, 20 + n);
        }
    }

    #[test]
    fn snap_length_truncates_incl_len_not_orig_len() {
        let p = WirePacket {
            flags: flags::ACK,
            payload: 1448,
            options: TcpOptions {
                timestamps: Some((7, 8)),
                ..Default::default()
            },
            ..Default::default()
        };
        let full = record(&p, 65_535);
        assert_eq!(u32le(&full[8..]), 20 + 32 + 1448);
        assert_eq!(u32le(&full[12..]), 20 + 32 + 1448);
        assert!(full[16 + 52..].iter().all(|&b| b == 0));
        // Cut inside the payload: the header (with the full packet's checksum) and 8 zeros.
        let cut = record(&p, 60);
        assert_eq!(cut.len(), 16 + 60);
        assert_eq!(u32le(&cut[8..]), 60);
        assert_eq!(u32le(&cut[12..]), 1500);
        assert_eq!(&cut[16..], &full[16..76]);
        // Cut inside the headers.
        let cut = record(&p, 30);
        assert_eq!(u32le(&cut[8..]), 30);
        assert_eq!(u32le(&cut[12..]), 1500);
        assert_eq!(&cut[16..], &full[16..46]);
        // The full packet's TCP checksum verifies over the pseudo-header and all of it.
        let mut pseudo = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 6];
        pseudo.extend_from_slice(&(32u16 + 1448).to_be_bytes());
        pseudo.extend_from_slice(&full[36..]);
        assert_eq!(checksum::checksum(&pseudo), 0);
    }

    #[test]
    fn udp_checksum_zero_is_written_as_all_ones() {
        // A UDP datagram whose checksum computes to 0: the pseudo-header and header sum to
        // 0xffff. With addresses 0 and sport 0, the sum is 17 + 8 (pseudo) + dport + 8
        // (length), so dport = 0xffff - 33 makes it 0xffff.
        let p = WirePacket {
            proto: Proto::Udp,
            dport: 0xffff - 33,
            ..Default::default()
        };
        let r = record(&p, 65_535);
        assert_eq!(r.len(), 16 + 28);
        assert_eq!(&r[16 + 20..], [0, 0, 0xff, 0xde, 0, 8, 0xff, 0xff]);
        // Any other checksum is written as computed: dport one less gives checksum 1.
        let p = WirePacket {
            dport: 0xffff - 34,
            ..p
        };
        let r = record(&p, 65_535);
        assert_eq!(&r[16 + 26..], [0, 1]);
    }

    #[test]
    fn nanosecond_timestamp_split() {
        for (t, s, ns) in [
            (0u64, 0u32, 0u32),
            (999_999_999, 0, 999_999_999),
            (1_000_000_000, 1, 0),
            (123_456_789_012, 123, 456_789_012),
        ] {
            let r = record(
                &WirePacket {
                    t,
                    ..Default::default()
                },
                65_535,
            );
            assert_eq!((u32le(&r[0..]), u32le(&r[4..])), (s, ns), "t = {t}");
        }
    }

    #[test]
    fn records_append_and_the_payload_length_is_bounded() {
        let mut out = file_header(100).to_vec();
        let a = write_record(
            &mut out,
            &WirePacket {
                payload: 10,
                ..Default::default()
            },
            100,
        );
        let b = write_record(
            &mut out,
            &WirePacket {
                payload: 1000,
                ..Default::default()
            },
            100,
        );
        assert_eq!((a, b), (16 + 50, 16 + 100));
        assert_eq!(out.len(), 24 + a + b);
        // A payload that would overflow the 16-bit total length is cut to fit.
        let r = record(
            &WirePacket {
                payload: u32::MAX,
                ..Default::default()
            },
            65_535,
        );
        assert_eq!(u32le(&r[12..]), 65_535);
        assert_eq!(&r[18..20], [0xff, 0xff]);
    }
}
