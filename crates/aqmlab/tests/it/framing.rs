//! Link-layer framing (`topology.*_framing`): frame counts and link time computed by hand from
//! IEEE 802.3's sizes, and the two utilizations (on the wire, at IP) the monitor reports.

use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::QueueUnit;
use aqmlab::config::{Direction, RttConfig, Side, TrafficConfig};
use aqmlab::net::framing::{FramingConfig, FramingName};

use crate::common::*;

const ETHERNET: FramingConfig = FramingConfig::Named(FramingName::Ethernet);

/// A UDP flow at twice the rate of a 10 Mb/s Ethernet bottleneck keeps it busy: 1,000-byte IP
/// packets are 1,038-byte frames on the wire (8 preamble/SFD + 14 header + 4 FCS + 12 gap), so
/// the link sends one every 830.4 µs: 12,042 in the 10 measured seconds, 9.634 Mb/s of IP.
#[test]
fn saturated_ethernet_link_sends_frames_not_packets() {
    let mut sc = base(12.0);
    sc.warmup_s = 2.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.left_hosts = 1;
    sc.topology.right_hosts = 1;
    sc.topology.bottleneck_framing = ETHERNET;
    sc.queue = AqmConfig::Droptail {
        limit: 100,
        unit: QueueUnit::Packets,
    };
    sc.rtt = RttConfig::None;
    sc.traffic = vec![TrafficConfig::UdpCbr {
        flows: 1,
        rate_mbps: Some(20.0),
        share: None,
        packet_bytes: 1000,
        direction: Direction::Upload,
        client_side: Side::Left,
        start_s: 0.0,
        start_jitter_s: 0.0,
        stop_s: None,
    }];
    let (sim, _) = run(sc);
    let f = &sim.summary().forward;
    let frame_time_s = 1038.0 * 8.0 / 10e6; // 830.4 µs
    let expected = 10.0 / frame_time_s; // 12,042.4
    assert!(
        (f.tx_packets as f64 - expected).abs() <= 1.0,
        "{} frames sent, {expected:.1} expected",
        f.tx_packets
    );
    assert_eq!(
        f.tx_bytes,
        f.tx_packets * 1000,
        "IP bytes are counted, not frames"
    );
    assert!((f.utilization - 1.0).abs() < 1e-4, "{}", f.utilization);
    assert!((f.throughput_wire_mbps - 10.0).abs() < 1e-3);
    assert!(
        (f.utilization_ip - 1000.0 / 1038.0).abs() < 1e-3,
        "{}",
        f.utilization_ip
    );
    assert!((f.throughput_mbps - 10.0 * 1000.0 / 1038.0).abs() < 0.01);
}

/// Pure ACKs (40-byte IP packets) are padded to the 64-byte minimum frame: 84 bytes of link
/// time each, 2.1 times their IP size. A greedy download's ACK direction therefore shows
/// `utilization` = `utilization_ip` × 84/40 exactly, and its data direction 1,538/1,500.
#[test]
fn minimum_frame_pads_pure_acks() {
    let mut sc = base(10.0);
    sc.warmup_s = 2.0;
    sc.topology.bottleneck_mbps = 10.0;
    sc.topology.access_mbps = 100.0;
    sc.topology.bottleneck_framing = ETHERNET;
    sc.topology.access_framing = ETHERNET;
    sc.tcp.delayed_ack = false;
    sc.queue = AqmConfig::Droptail {
        limit: 1000,
        unit: QueueUnit::Packets,
    };
    sc.rtt = RttConfig::Constant { rtt_ms: 20.0 };
    sc.traffic = vec![bulk(1, None)];
    let (sim, _) = run(sc);
    let s = sim.summary();
    // Data flows right → left (reverse), ACKs left → right (forward); every packet has one
    // of the two sizes (no options: the base scenario has no SACK).
    let (data, acks) = (&s.reverse, &s.forward);
    assert!(data.tx_packets > 5000 && acks.tx_packets > 5000);
    assert_eq!(acks.tx_bytes, acks.tx_packets * 40);
    let ack_ratio = acks.utilization / acks.utilization_ip;
    assert!((ack_ratio - 84.0 / 40.0).abs() < 1e-6, "{ack_ratio}");
    let data_ratio = data.utilization / data.utilization_ip;
    assert!((data_ratio - 1538.0 / 1500.0).abs() < 1e-4, "{data_ratio}");
}

/// Without framing both utilizations and both throughputs coincide (historic scenarios), up
/// to the packet in service at either end of the measured 10 s (busy time counts the part
/// already sent, IP bytes whole packets: 1.2 ms at most each end, 2.4e-4 of the time).
#[test]
fn no_framing_keeps_ip_and_wire_equal() {
    let (sim, _) = run(greedy_10mbps(4, 20.0, 1));
    for d in [&sim.summary().forward, &sim.summary().reverse] {
        assert!((d.utilization - d.utilization_ip).abs() < 2.4e-4);
        assert!((d.throughput_mbps - d.throughput_wire_mbps).abs() < 2.4e-3);
    }
}
