//! RACK-TLP (RFC 8985, Linux 6.x `tcp_recovery.c`, `tcp_send_loss_probe`): a sender driven
//! ACK by ACK with hand-computed times, and short Web-like transfers through a drop-tail
//! bottleneck with and without it.

use aqmlab::packet::{flags, Packet, MAX_SACK_BLOCKS};
use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::{Endpoint, Outbox, Seg};
use aqmlab::units::Time;

use crate::common::*;

const MS: Time = 1_000_000;
/// `linux-reno`'s MSS.
pub const LMSS: u64 = 1448;

/// Byte range of segment `k` of the transfer.
pub fn seg(k: u64) -> (u64, u64) {
    (1 + k * LMSS, 1 + (k + 1) * LMSS)
}

/// A client that sent its SYN at 0 and got the SYN-ACK (SACK permitted, ECN if `cfg.ecn`) at
/// 100 ms: an established Linux sender whose first RTT sample is 100 ms (SRTT 101 ms and RTO
/// 303 ms in the BSD tick arithmetic: the SYN's timer counted 101 ticks), writing `segments`
/// segments at 100 ms. Returns the data segments sent (its initial window's worth).
pub fn sender(cfg: &TcpConfig, segments: u64) -> (Endpoint, Vec<Seg>) {
    let mut cl = Endpoint::new(cfg, 0);
    let mut out = Outbox::default();
    cl.connect(0, cfg, &mut out);
    out.clear();
    let ece = if cfg.ecn { flags::ECE } else { 0 };
    let syn_ack = Packet {
        flags: flags::SYN | flags::ACK | ece,
        seq: 0,
        ack: 1,
        sack_permitted: true,
        ..Default::default()
    };
    cl.on_segment(100 * MS, cfg, &syn_ack, &mut out);
    assert!(cl.sack_ok());
    out.clear();
    cl.write(100 * MS, cfg, segments * LMSS, &mut out);
    let data: Vec<Seg> = out.segs.iter().filter(|s| s.len > 0).copied().collect();
    assert_eq!(data.len() as u64, segments.min(cfg.initial_window as u64));
    (cl, data)
}

/// The receiver's ACK: cumulative `ack`, SACK blocks `blocks` (most recent first).
pub fn ack(ack: u64, blocks: &[(u64, u64)]) -> Packet {
    let mut sack = [(0, 0); MAX_SACK_BLOCKS];
    sack[..blocks.len()].copy_from_slice(blocks);
    Packet {
        flags: flags::ACK,
        seq: 1,
        ack,
        sack,
        sack_n: blocks.len() as u8,
        ..Default::default()
    }
}

pub fn data_of(out: &Outbox) -> Vec<(u64, u32, bool)> {
    out.segs
        .iter()
        .filter(|s| s.len > 0)
        .map(|s| (s.seq, s.len, s.retransmit))
        .collect()
}

/// Two segments sent at 100 ms, the first lost. The second's SACK arrives at 200 ms: RACK.rtt
/// = 100 ms, min_RTT = 100 ms; with one segment SACKed (fewer than 3, no reordering seen) the
/// reordering window is min_RTT/4 = 25 ms, so segment 0 is lost at 100 + 100 + 25 = 225 ms
/// and the reorder timer is set for 25 ms rounded up to 7 jiffies of 4 ms, plus 2
/// (`TCP_TIMEOUT_MIN`), after jiffy 50: jiffy 59, which the timer wheel fires at its next
/// jiffy boundary, 240 ms (`linux_timer_expiry`). It fires there, marks
/// segment 0 lost and starts recovery with its retransmission; the ACK of everything at
/// 327 ms ends recovery. RFC 6675 alone (one duplicate ACK, below DupThresh, and Limited
/// Transmit has no new data) waits for the retransmission timer instead.
#[test]
fn rack_detects_a_loss_by_time_after_the_reordering_window() {
    let cfg = TcpConfig::linux_reno();
    let (mut cl, data) = sender(&cfg, 2);
    let mut out = Outbox::default();
    assert!(data.iter().all(|s| !s.retransmit));
    cl.on_segment(200 * MS, &cfg, &ack(1, &[seg(1)]), &mut out);
    assert!(data_of(&out).is_empty(), "nothing lost yet");
    let r = cl.rack_state().unwrap();
    // Segment 1 left a nanosecond after segment 0 (stamps follow the transmission order).
    assert_eq!((r.rtt, r.min_rtt), (100 * MS - 1, 100 * MS - 1));
    assert_eq!(r.reo_at.get(), Some(240 * MS));
    assert_eq!(cl.next_deadline(), Some(240 * MS));
    cl.on_timer(239 * MS, &cfg, &mut out);
    assert!(out.segs.is_empty());
    cl.on_timer(240 * MS, &cfg, &mut out);
    assert_eq!(data_of(&out), vec![(1, LMSS as u32, true)]);
    assert!(cl.in_recovery());
    assert_eq!(cl.counters.fast_retransmits, 1);
    assert_eq!(cl.rack_state().unwrap().reo_timeouts, 1);
    // Recovery: ssthresh = max(10/2, 2) = 5 segments; PRR's first step lets one segment go
    // (in flight: segment 0's retransmission only, as 1 is SACKed).
    assert_eq!(cl.ssthresh(), 5 * LMSS);
    out.clear();
    cl.on_segment(327 * MS, &cfg, &ack(seg(1).1, &[]), &mut out);
    assert!(!cl.in_recovery());
    assert_eq!(cl.cwnd(), 5 * LMSS, "recovery ends with cwnd = ssthresh");
    assert_eq!(cl.counters.timeouts, 0);

    // Without RACK-TLP the same ACK leaves the sender waiting for its retransmission timer.
    let off = TcpConfig {
        rack_tlp: false,
        ..TcpConfig::linux_reno()
    };
    let (mut cl, _) = sender(&off, 2);
    let mut out = Outbox::default();
    cl.on_segment(200 * MS, &off, &ack(1, &[seg(1)]), &mut out);
    assert!(data_of(&out).is_empty());
    let rto = cl.next_deadline().unwrap();
    assert!(rto > 300 * MS, "the next event is the RTO, at {rto}");
    cl.on_timer(rto, &off, &mut out);
    assert_eq!(cl.counters.timeouts, 1);
}

/// The retransmission timer when RACK retransmits the head again (Linux 6.1
/// `tcp_xmit_retransmit_queue`: a retransmission of the head of the retransmission queue
/// restarts the timer, a full icsk_rto ahead, `rearm_timer`). Twelve segments, ten sent at
/// 100 ms; segment 0 is lost. At 200 ms an ACK SACKs 1–9: RACK marks 0 lost (nine SACKed,
/// no reordering seen: no reordering window), recovery retransmits it and 10 and 11 go out
/// (new data first in the model, after in Linux: the same instant); the timer is set a full
/// icsk_rto after 200 ms. That retransmission is lost too:
/// at 300 ms the SACK of 10 and 11, sent after it, lets RACK mark it lost again, and the
/// second retransmission of the head moves the timer to icsk_rto after 300 ms. Without the
/// rule it stayed at 200 ms + icsk_rto and fired while the retransmission was under way (the
/// model's BBR flows, 64 at 40 ms: 27 timeouts a flow in 60 s, ~10 with it).
#[test]
fn a_head_retransmission_restarts_the_retransmission_timer() {
    use aqmlab::tcp::rtt::linux_timer_expiry;
    let cfg = TcpConfig::linux_reno();
    let (mut cl, data) = sender(&cfg, 12);
    assert_eq!(data.len(), 10);
    let mut out = Outbox::default();
    let tick = cfg.tick();
    let rto = cl.snapshot(&cfg).rto;
    let jiffies = rto / tick;
    assert_eq!(jiffies * tick, rto, "icsk_rto is whole jiffies");
    cl.on_segment(200 * MS, &cfg, &ack(1, &[(seg(1).0, seg(9).1)]), &mut out);
    assert!(cl.in_recovery());
    let mut sent = data_of(&out);
    sent.sort();
    let new = |k| (seg(k).0, LMSS as u32, false);
    assert_eq!(sent, vec![(1, LMSS as u32, true), new(10), new(11)]);
    let first = linux_timer_expiry(200 * MS, jiffies, tick);
    assert_eq!(cl.rexmt_deadline(), Some(first));
    out.clear();
    let blocks = [(seg(10).0, seg(11).1), (seg(1).0, seg(9).1)];
    cl.on_segment(300 * MS, &cfg, &ack(1, &blocks), &mut out);
    assert_eq!(data_of(&out), vec![(1, LMSS as u32, true)]);
    let again = linux_timer_expiry(300 * MS, jiffies, tick);
    assert!(again > first);
    assert_eq!(cl.rexmt_deadline(), Some(again));
    out.clear();
    cl.on_timer(first, &cfg, &mut out);
    assert!(out.segs.is_empty() && cl.counters.timeouts == 0);
    cl.on_segment(400 * MS, &cfg, &ack(seg(11).1, &[]), &mut out);
    assert!(!cl.in_recovery());
    assert_eq!(cl.rexmt_deadline(), None);
}

/// Reordering within the window: segment 0 arrives 10 ms late, after segment 1's SACK. The
/// reorder timer (240 ms) is cancelled by the cumulative ACK at 210 ms: no retransmission, no
/// recovery; the late delivery of a never-retransmitted segment below the highest SACK marks
/// reordering as seen, so the window stays min_RTT/4 even with 3 segments SACKed.
#[test]
fn rack_rides_out_reordering_within_the_window() {
    let cfg = TcpConfig::linux_reno();
    let (mut cl, _) = sender(&cfg, 6);
    let mut out = Outbox::default();
    cl.on_segment(200 * MS, &cfg, &ack(1, &[seg(1)]), &mut out);
    assert_eq!(cl.rack_state().unwrap().reo_at.get(), Some(240 * MS));
    cl.on_segment(210 * MS, &cfg, &ack(seg(1).1, &[]), &mut out);
    assert!(data_of(&out).iter().all(|s| !s.2), "no retransmission");
    assert!(!cl.in_recovery());
    let r = cl.rack_state().unwrap();
    assert!(r.reord_seen);
    assert_eq!(
        r.reo_at.get(),
        None,
        "the reorder timer is replaced by the probe timer"
    );
    assert!(r.tlp_at.get().is_some());
    // Segment 2 now arrives after 3, 4 and 5 (3 SACKed): reordering was seen, so the window
    // is still 25 ms and nothing is marked lost at once, where RFC 6675's IsLost would be.
    out.clear();
    let (s3, s5) = (seg(3).0, seg(5).1);
    cl.on_segment(211 * MS, &cfg, &ack(seg(2).0, &[(s3, s5)]), &mut out);
    assert!(data_of(&out).iter().all(|s| !s.2));
    assert!(!cl.in_recovery());
    assert_eq!(cl.counters.fast_retransmits, 0);
    // Segment 2 (sent at 100 ms with the others, before 5) is lost at 100 + 111 + 25 ms: 25 ms
    // from now (jiffy 52), 7 jiffies + 2, fired by the wheel at jiffy 62.
    let r = cl.rack_state().unwrap();
    assert_eq!(
        r.rtt,
        111 * MS - 5,
        "segment 5, stamped 5 ns after segment 0"
    );
    assert_eq!(r.reo_at.get(), Some(248 * MS));
}

/// Without reordering seen, three SACKed segments close the window (Linux keeps the
/// duplicate-ACK threshold under RACK, `tcp_rack_reo_wnd`): the third SACK starts recovery
/// at once, as DupThresh would.
#[test]
fn rack_keeps_the_dupack_threshold() {
    let cfg = TcpConfig::linux_reno();
    let (mut cl, _) = sender(&cfg, 6);
    let mut out = Outbox::default();
    let s1 = seg(1).0;
    cl.on_segment(200 * MS, &cfg, &ack(1, &[(s1, seg(1).1)]), &mut out);
    cl.on_segment(200 * MS, &cfg, &ack(1, &[(s1, seg(2).1)]), &mut out);
    assert!(!cl.in_recovery());
    out.clear();
    cl.on_segment(200 * MS, &cfg, &ack(1, &[(s1, seg(3).1)]), &mut out);
    assert!(cl.in_recovery());
    assert_eq!(data_of(&out)[0], (1, LMSS as u32, true));
}

/// A tail loss: 10 segments sent at 100 ms, the last lost; the ACK of the first nine at
/// 200 ms leaves one segment out. The probe timer is 2·SRTT + 200 ms (one segment in flight:
/// the delayed-ACK allowance), but never later than the retransmission timer, which the ACK
/// set for 200 ms + RTO: the timer fires then as a probe, the last segment is sent again, and
/// its ACK (300 ms later at the latest) completes the transfer with no timeout, cwnd intact.
/// Without TLP the retransmission timer fires instead: a timeout, cwnd 1.
#[test]
fn tlp_repairs_a_tail_loss_without_a_timeout() {
    let run = |rack_tlp: bool| {
        let cfg = TcpConfig {
            rack_tlp,
            ..TcpConfig::linux_reno()
        };
        let (mut cl, data) = sender(&cfg, 10);
        let mut out = Outbox::default();
        let last = data[9];
        cl.on_segment(200 * MS, &cfg, &ack(last.seq, &[]), &mut out);
        assert!(data_of(&out).is_empty());
        let rto_at = cl.rexmt_deadline().unwrap();
        let fire = cl.next_deadline().unwrap();
        if rack_tlp {
            let r = cl.rack_state().unwrap();
            let srtt = (cl.rto.srtt_s() * 1e9) as Time;
            let pto = (2 * srtt + 200 * MS).div_ceil(MS) * MS;
            assert_eq!(r.tlp_at.get(), Some((200 * MS + pto).min(rto_at)));
        }
        assert_eq!(fire, rto_at.min(fire));
        cl.on_timer(fire, &cfg, &mut out);
        let sent = data_of(&out);
        assert_eq!(
            sent,
            vec![(last.seq, last.len, true)],
            "the last segment again"
        );
        out.clear();
        cl.on_segment(
            fire + 100 * MS,
            &cfg,
            &ack(last.seq + last.len as u64, &[]),
            &mut out,
        );
        assert_eq!(cl.snd_una(), cl.snd_max());
        (
            fire,
            cl.counters.timeouts,
            cl.cwnd() / LMSS,
            cl.rack_state().map(|r| r.probes),
        )
    };
    let (t_on, timeouts_on, cwnd_on, probes) = run(true);
    let (t_off, timeouts_off, cwnd_off, _) = run(false);
    assert_eq!((timeouts_on, probes), (0, Some(1)));
    assert_eq!(timeouts_off, 1);
    assert!(t_on <= t_off, "the probe goes no later than the RTO would");
    // The probe's ACK equals TLP.end_seq: Linux reduces only for an ACK beyond it, so cwnd
    // keeps its slow-start growth (10 + 9 + 1 ACKed = 20); after the timeout cwnd is 1 + 1.
    assert_eq!(cwnd_on, 20);
    assert_eq!(cwnd_off, 2);
}

/// The whole initial window (10 segments, sent at 100 ms) is lost and the application has
/// more: the probe timer, 2·SRTT + 2 jiffies = 208 ms = 52 jiffies after the transmission
/// (jiffy 25; several segments out), fires on the timer wheel at jiffy 78 = 312 ms (the RTO,
/// SRTT + 200 ms = 75 jiffies, a level-1 timer, would fire at jiffy 104 = 416 ms), and sends
/// one new segment,
/// beyond cwnd. Its SACK at 404 ms (RACK.rtt 100 ms) shows segments 0–9 lost (sent at 100 ms,
/// 100 + 100 + 25 ms < 404 ms): recovery starts with ssthresh 5, PRR lets one segment go
/// (nothing else in flight: max(prr_delivered − prr_out, 1) = 1), the first lost one; the
/// retransmission timer was restarted by the probe and has not fired.
#[test]
fn tlp_probes_with_new_data_when_the_whole_flight_is_lost() {
    let cfg = TcpConfig::linux_reno();
    let (mut cl, data) = sender(&cfg, 20);
    assert_eq!(data.len(), 10);
    let r = cl.rack_state().unwrap();
    assert_eq!(r.tlp_at.get(), Some(312 * MS));
    assert_eq!(cl.rexmt_deadline(), Some(416 * MS));
    let mut out = Outbox::default();
    cl.on_timer(312 * MS, &cfg, &mut out);
    assert_eq!(
        data_of(&out),
        vec![(seg(10).0, LMSS as u32, false)],
        "new data"
    );
    let r = cl.rack_state().unwrap();
    assert_eq!(
        (r.tlp_high_seq, r.tlp_retrans, r.probes),
        (Some(seg(10).1), false, 1)
    );
    assert_eq!(
        cl.rexmt_deadline(),
        Some(640 * MS),
        "restarted from the probe: 75 jiffies after jiffy 78, rounded up to a multiple of 8"
    );
    out.clear();
    cl.on_segment(404 * MS, &cfg, &ack(1, &[seg(10)]), &mut out);
    assert!(cl.in_recovery());
    assert_eq!(cl.ssthresh(), 5 * LMSS);
    assert_eq!(data_of(&out), vec![(1, LMSS as u32, true)]);
    assert_eq!(cl.cwnd(), LMSS);
    assert_eq!(cl.rack_state().unwrap().marked_lost, 10);
    assert_eq!(cl.counters.timeouts, 0);
}

/// Short transfers through a drop-tail bottleneck with the Linux presets: tail losses are
/// repaired by probes and RACK's timer instead of retransmission timeouts. The same Web
/// workload (PackMime HTTP/1.0, 10 Mb/s, 30-packet drop-tail queue) with RACK-TLP off and on.
#[test]
fn web_transfers_time_out_less_with_rack_tlp() {
    let run = |rack_tlp: bool, preset: fn() -> TcpConfig| {
        let mut sc = crate::web::packmime(60.0, false, 40.0, 7);
        sc.topology.bottleneck_mbps = 10.0;
        sc.queue = aqmlab::aqm::config::AqmConfig::Droptail {
            limit: 30,
            unit: aqmlab::aqm::QueueUnit::Packets,
        };
        sc.tcp = TcpConfig {
            rack_tlp,
            ..preset()
        };
        let (sim, tables) = run(sc);
        let (dropped, _) = assert_packets_conserved(&sim, &tables);
        let c = table(&tables, "connections");
        let sum = |col| u64s(c, col).iter().sum::<u64>();
        let done = bools(c, "completed").iter().filter(|&&d| d).count();
        // Timeouts of data or FINs: those of SYNs (one SYN retransmission each) aside.
        let (to, syn) = (u64s(c, "timeouts"), u64s(c, "syn_retransmits"));
        let data_timeouts: u64 = to.iter().zip(&syn).map(|(t, s)| t.saturating_sub(*s)).sum();
        (
            sum("timeouts"),
            data_timeouts,
            sum("fast_retransmits"),
            dropped,
            done,
            bools(c, "completed").len(),
        )
    };
    for (name, preset) in [
        ("linux-reno", TcpConfig::linux_reno as fn() -> TcpConfig),
        ("linux-cubic", TcpConfig::linux_cubic),
    ] {
        let off = run(false, preset);
        let on = run(true, preset);
        eprintln!(
            "{name}: (timeouts, of data, fast recoveries, drops, completed, connections) \
             off {off:?} on {on:?}"
        );
        assert!(off.3 > 100 && on.3 > 100, "{name}: congested");
        assert!(
            on.1 * 2 < off.1,
            "{name}: data timeouts {} with RACK-TLP, {} without",
            on.1,
            off.1
        );
    }
}
