//! TEMPORARY STUB (replaced by the encoder branch).
pub mod pcap;
pub use pcap::{file_header, write_record, TcpOptions, WirePacket};
