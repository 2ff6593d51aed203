//! PRR (RFC 9937, Linux `tcp_cwnd_reduction`) in the endpoint: the RFC's first example ACK by
//! ACK through a Linux sender, and the ECE (CWR) reduction.

use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::Outbox;
use aqmlab::units::Time;

use crate::rack::{ack, data_of, seg, sender, LMSS};

const MS: Time = 1_000_000;

/// RFC 9937 §8 example 1 through the endpoint (RFC 6675 scoreboard, Limited Transmit, PRR;
/// RACK-TLP off so that recovery starts on the third duplicate ACK as in the RFC): cwnd =
/// inflight = 20, segment 0 lost, ACK k SACKs segments 1..=k, ACKs 20 and 21 SACK the two
/// Limited Transmit segments, ACK 22 acknowledges everything up to them. After each ACK the
/// sender's cwnd and what it transmits are the RFC's rows, except from ACK 19 on, where
/// inflight = ssthresh and Linux takes the SSRB branch (see `tcp/prr.rs`): it sends nothing
/// there, and one segment on ACK 20 where the RFC's sender sends none.
#[test]
fn rfc9937_example_1_through_the_sender() {
    let cfg = TcpConfig {
        rack_tlp: false,
        initial_window: 20,
        ..TcpConfig::linux_reno()
    };
    let (mut cl, data) = sender(&cfg, 100);
    assert_eq!(data.len(), 20);
    let mut out = Outbox::default();
    // (cwnd, segments sent, retransmission) after ACKs 1..=22: the RFC's rows ...
    let rfc: Vec<(u64, usize, bool)> = vec![
        (20, 1, false),
        (20, 1, false),
        (19, 1, true),
        (18, 0, false),
        (18, 1, false),
        (17, 0, false),
        (17, 1, false),
        (16, 0, false),
        (16, 1, false),
        (15, 0, false),
        (15, 1, false),
        (14, 0, false),
        (14, 1, false),
        (13, 0, false),
        (13, 1, false),
        (12, 0, false),
        (12, 1, false),
        (11, 0, false),
        (11, 1, false),
        (10, 0, false),
        (10, 1, false),
        (10, 1, false),
    ];
    // ... and Linux's from ACK 19: nothing at 19 (cwnd = inflight = 10), one at 20 (SSRB:
    // inflight 9, prr_delivered − prr_out = 9, bound 1), one at 21, and after the full ACK
    // cwnd = ssthresh with 9 in flight: one more.
    let mut want = rfc.clone();
    want[18] = (10, 0, false);
    want[19] = (10, 1, false);
    let mut got = Vec::new();
    for k in 1..=22u64 {
        let now = 200 * MS + k * MS / 10;
        let pkt = if k <= 21 {
            ack(1, &[(seg(1).0, seg(k).1)])
        } else {
            ack(seg(21).1, &[])
        };
        out.clear();
        cl.on_segment(now, &cfg, &pkt, &mut out);
        let sent = data_of(&out);
        got.push((
            cl.cwnd() / LMSS,
            sent.len(),
            sent.first().is_some_and(|s| s.2),
        ));
        if k == 3 {
            assert!(cl.in_recovery());
            assert_eq!(sent[0].0, 1, "segment 0 retransmitted");
        }
    }
    for k in 0..22 {
        assert_eq!(got[k], want[k], "after ACK {}", k + 1);
    }
    assert!(!cl.in_recovery());
    assert_eq!(cl.ssthresh(), 10 * LMSS);
    // Every RFC row but ACKs 19 and 20 is matched; the totals are the same: 13 segments.
    let total = |v: &[(u64, usize, bool)]| v.iter().map(|r| r.1).sum::<usize>();
    assert_eq!(total(&got), 13);
    assert_eq!(total(&rfc), 13);
    let p = cl.prr_state().unwrap();
    assert_eq!((p.active, p.reductions), (false, 1));
}

/// An ECE reduction with PRR (Linux's CWR state): ssthresh = 10 at the ECE ACK, then cwnd
/// comes down over the window of 20 segments sent before it, one new segment for every two
/// delivered (⌈10·prr_delivered/20⌉ − prr_out) while more than ssthresh is in flight; at the
/// 19th ACK inflight = ssthresh = 10 and the SSRB bound (0) holds the segment back, the 20th
/// (inflight 9) sends it. cwnd is set to ssthresh when the ACK passes the snd_nxt of the
/// reduction's start. Without PRR cwnd drops to 10 at once and nothing is sent for the next
/// 10 ACKs. Both send 10 segments in that window.
#[test]
fn ece_reduction_is_proportional() {
    let run = |prr: bool| {
        let cfg = TcpConfig {
            ecn: true,
            prr,
            initial_window: 20,
            ..TcpConfig::linux_reno()
        };
        let (mut cl, data) = sender(&cfg, 100);
        assert_eq!(data.len(), 20);
        assert!(cl.ecn.ok);
        let mut out = Outbox::default();
        let mut sends = Vec::new();
        let mut cwnds = Vec::new();
        for k in 0..20u64 {
            let mut pkt = ack(seg(k).1, &[]);
            if k == 0 {
                pkt.flags |= aqmlab::packet::flags::ECE;
            }
            out.clear();
            cl.on_segment(200 * MS + k * MS / 10, &cfg, &pkt, &mut out);
            sends.push(data_of(&out).len());
            cwnds.push(cl.cwnd() / LMSS);
        }
        assert_eq!(cl.ssthresh(), 10 * LMSS);
        // The ACK of the first segment sent after the reduction ends the CWR state.
        out.clear();
        cl.on_segment(201 * MS, &cfg, &ack(seg(20).1, &[]), &mut out);
        (sends, cwnds, cl.cwnd() / LMSS)
    };
    let (sends, cwnds, end) = run(true);
    let mut want = [1, 0].repeat(10);
    want.swap(18, 19);
    assert_eq!(sends, want);
    assert_eq!(cwnds[0], 20);
    assert_eq!(cwnds[19], 10);
    assert!(cwnds.windows(2).all(|w| w[1] <= w[0]));
    assert_eq!(end, 10);
    let (sends, cwnds, _) = run(false);
    assert_eq!(sends.iter().sum::<usize>(), 10);
    assert_eq!(&sends[..10], &[0; 10]);
    assert!(cwnds.iter().all(|&c| c == 10));
}
