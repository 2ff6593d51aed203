//! BBR's new data in GSO skbs as Linux 6.x sends it with the device's GSO off (`tcp/gso.rs`:
//! TCP's GSO is always on, `sk_setup_caps`): skbs of `min(tcp_tso_autosize, cwnd quota)`
//! segments whose frames leave together, paced as one (`tcp_update_skb_after_send`).

use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::Outbox;
use aqmlab::units::MS;

use crate::rack::{ack, data_of, seg, sender, LMSS};

/// SYN-ACK at 100 ms: SRTT 100 ms, BBR's initial pacing rate 739/256 · 10 · 1448 B / 0.1 s
/// · 99 % ≈ 414 kB/s, above `bbr_min_tso_rate` (150 kB/s) and under a segment per ms, so
/// `tcp_tso_autosize` gives 2 segments. The ACK of segments 0–1 at 200 ms: cwnd 12 in
/// STARTUP, 8 in flight, quota min(12/2, 4) = 4: segments 10 and 11 leave at once, and the
/// pacer's next departure is one 2-segment interval later less the credit for leaving late
/// (half an interval); there 12 and 13 leave together, and cwnd is full.
#[test]
fn new_data_leaves_in_pairs_paced_as_one() {
    let cfg = TcpConfig::linux_bbr();
    let (mut cl, _) = sender(&cfg, 40);
    let rate = cl.pacing_rate().unwrap();
    assert!(rate > 150_000 && rate < 1_448_000, "{rate}");
    let mut out = Outbox::default();
    cl.on_segment(200 * MS, &cfg, &ack(seg(1).1, &[]), &mut out);
    assert_eq!(cl.cwnd(), 12 * LMSS);
    let rate = cl.pacing_rate().unwrap();
    let starts: Vec<u64> = data_of(&out).into_iter().map(|(s, _, _)| s).collect();
    assert_eq!(starts, [seg(10).0, seg(11).0]);
    let len_ns = 2 * LMSS * 1_000_000_000 / rate;
    let next = 200 * MS + len_ns - len_ns / 2;
    assert_eq!(cl.next_deadline(), Some(next));
    out.clear();
    cl.on_timer(next, &cfg, &mut out);
    let starts: Vec<u64> = data_of(&out).into_iter().map(|(s, _, _)| s).collect();
    assert_eq!(starts, [seg(12).0, seg(13).0]);
    assert!(cl.next_deadline().unwrap() > next + 50 * MS, "cwnd is full");
}
