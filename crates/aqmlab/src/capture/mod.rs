//! Packet capture: the simulator's packets written as files that standard tools read.
//!
//! - `pcap`: a pure encoder from [`WirePacket`] (a packet whose addresses, ports and 32-bit
//!   sequence numbers the caller has chosen) to pcap records of raw IPv4 with real TCP/UDP
//!   headers, options and checksums and zero payloads; its module documentation says what is
//!   real and what is synthetic.
//! - `checksum`: the Internet checksum (RFC 1071).

pub mod checksum;
pub mod pcap;

pub use pcap::{
    file_header, write_record, TcpOptions, WirePacket, LINKTYPE_RAW, MAGIC_NS, RECORD_HEADER_LEN,
};
