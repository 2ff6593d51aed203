//! BBR's losses as the kernel counts and repairs them (Linux 6.x `tcp_input.c`,
//! `tcp_output.c`, `tcp_rate.c`): a `linux-bbr` sender driven ACK by ACK. RACK's marks are
//! the ACK's `rs.losses` at the ACK that makes them (`tcp_ack`: `tp->lost` less its value on
//! entry), not one per retransmission later; a retransmission timeout keeps the SACK marks,
//! marks lost what RACK's RTT says has timed out (`tcp_timeout_mark_lost`), sets cwnd to what
//! is in flight + 1 and sends again only what is marked lost (`tcp_xmit_retransmit_queue`).

use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::{Endpoint, Outbox};
use aqmlab::units::{Time, MS};

use crate::rack::{ack, data_of, seg, sender, LMSS};

/// The data segments sent while the endpoint's timers run up to `until` (nothing arrives):
/// (time, segment number, retransmission).
fn run_timers(cl: &mut Endpoint, cfg: &TcpConfig, until: Time) -> Vec<(Time, u64, bool)> {
    let mut sent = Vec::new();
    while let Some(t) = cl.next_deadline().filter(|&t| t <= until) {
        let mut out = Outbox::default();
        cl.on_timer(t, cfg, &mut out);
        for (s, _, rexmit) in data_of(&out) {
            sent.push((t, (s - 1) / LMSS, rexmit));
        }
    }
    sent
}

fn lost_and_losses(cl: &Endpoint) -> (u64, u32) {
    let r = cl.linux_cong().unwrap().rate().unwrap();
    (r.lost, r.rs.losses)
}

/// Ten segments at 100 ms (the initial window, not paced). At 200 ms segment 0 is ACKed and
/// 5–9 SACKed: RACK (RTT 100 ms, no reordering window with 3 or more SACKed) marks 1–4 lost
/// at once, and that ACK's sample carries the 4 losses (before: 1, the one retransmission
/// sent during the ACK). Then nothing more arrives: the retransmissions of 1–4 and the new
/// data go out and are lost; the retransmission timer fires. The kernel keeps 5–9 SACKed,
/// marks everything else (all older than RACK's RTT), sets cwnd = 0 in flight + 1 and
/// retransmits segment 1 alone. The ACKs that follow (1, then up to 3, each with 5–9
/// SACKed) let BBR's cwnd grow by what they deliver, and what goes out is 2, 3, 4 and then
/// the lost new data — never 5–9, which go-back-N over a cleared scoreboard sent again.
#[test]
fn a_timeout_resends_only_what_is_marked_lost() {
    let cfg = TcpConfig::linux_bbr();
    let (mut cl, data) = sender(&cfg, 40);
    assert_eq!(data.len(), 10);
    let sacked = (seg(5).0, seg(9).1);
    let mut out = Outbox::default();
    cl.on_segment(200 * MS, &cfg, &ack(seg(0).1, &[sacked]), &mut out);
    assert!(cl.in_recovery());
    assert_eq!(
        lost_and_losses(&cl),
        (4, 4),
        "RACK's 4 marks are this ACK's losses"
    );
    // Everything sent from now on is lost: the timers run until the timeout.
    let mut before = data_of(&out)
        .into_iter()
        .map(|(s, _, r)| (200 * MS, (s - 1) / LMSS, r))
        .collect::<Vec<_>>();
    let mut t_rto = 0;
    while cl.counters.timeouts == 0 {
        let t = cl.next_deadline().expect("a timer");
        let mut o = Outbox::default();
        cl.on_timer(t, &cfg, &mut o);
        if cl.counters.timeouts == 1 {
            (out, t_rto) = (o, t);
            break;
        }
        before.extend(
            data_of(&o)
                .into_iter()
                .map(|(s, _, r)| (t, (s - 1) / LMSS, r)),
        );
    }
    let rexmits: Vec<u64> = before.iter().filter(|s| s.2).map(|s| s.1).collect();
    assert_eq!(
        rexmits,
        [1, 2, 3, 4],
        "recovery resends the 4 lost segments"
    );
    let new = before.iter().filter(|s| !s.2).count() as u64;
    assert!(new > 0, "and sends new data: {before:?}");
    // The timeout: 1–4 lost again and the new data lost, counted in tp->lost at once.
    assert_eq!(lost_and_losses(&cl).0, 4 + 4 + new);
    assert_eq!(data_of(&out), [(seg(1).0, LMSS as u32, true)]);
    assert_eq!(cl.cwnd(), LMSS, "cwnd = in flight (0) + 1");
    // The retransmission of 1 arrives 100 ms later: ACK up to 1, 5–9 still SACKed.
    let t1 = t_rto + 100 * MS;
    assert!(cl.next_deadline().unwrap() > t1, "no other timer before it");
    let mut o = Outbox::default();
    cl.on_segment(t1, &cfg, &ack(seg(1).1, &[sacked]), &mut o);
    assert_eq!(
        lost_and_losses(&cl).1,
        0,
        "the timeout's marks are in no ACK's sample"
    );
    let mut after: Vec<u64> = data_of(&o)
        .into_iter()
        .map(|(s, _, _)| (s - 1) / LMSS)
        .collect();
    after.extend(run_timers(&mut cl, &cfg, t1 + 20 * MS).iter().map(|s| s.1));
    let mut o = Outbox::default();
    cl.on_segment(t1 + 30 * MS, &cfg, &ack(seg(3).1, &[sacked]), &mut o);
    after.extend(data_of(&o).into_iter().map(|(s, _, _)| (s - 1) / LMSS));
    after.extend(run_timers(&mut cl, &cfg, t1 + 60 * MS).iter().map(|s| s.1));
    assert!(after.len() >= 3, "cwnd grows in the loss state: {after:?}");
    assert_eq!(after[..3], [2, 3, 4], "the lost segments first, in order");
    assert!(
        after.iter().all(|k| !(5..=9).contains(k)),
        "nothing SACKed is sent again: {after:?}"
    );
    assert!(
        after[3..].iter().all(|&k| k >= 10),
        "then the lost new data: {after:?}"
    );
}
