//! F-RTO (RFC 5682 §3, SACK-enhanced, as Linux 6.1 runs it with `tcp_frto` = 2) and the undo
//! of a spurious timeout (`tcp_process_loss`, `tcp_try_undo_loss`, `tcp_undo_cwnd_reduction`
//! in `net/ipv4/tcp_input.c`; `bbr_undo_cwnd` in `tcp_bbr.c`): a `linux-bbr` sender driven
//! ACK by ACK through a timeout.

use aqmlab::tcp::config::TcpConfig;
use aqmlab::tcp::snapshot::CaState;
use aqmlab::tcp::{Endpoint, Outbox};
use aqmlab::units::{Time, MS};

use crate::rack::{ack, data_of, seg, sender, LMSS};

fn segs(o: &Outbox) -> Vec<(u64, bool)> {
    data_of(o)
        .into_iter()
        .map(|(s, _, r)| ((s - 1) / LMSS, r))
        .collect()
}

/// A `linux-bbr` sender (F-RTO on or off) whose initial window (10 segments at 100 ms) is
/// ACKed at 200 ms, so that RACK and BBR have their 100-ms RTT; what that ACK lets out is
/// then lost, and nothing arrives until the retransmission timer fires (a tail loss probe,
/// lost too, goes first). Returns the sender, the time of the timeout, the highest segment
/// sent before it, and the segments the timeout sent.
fn timed_out(frto: bool) -> (Endpoint, TcpConfig, Time, u64, Vec<(u64, bool)>) {
    let cfg = TcpConfig {
        frto,
        ..TcpConfig::linux_bbr()
    };
    let (mut cl, data) = sender(&cfg, 200);
    assert_eq!(data.len(), 10);
    let mut o = Outbox::default();
    cl.on_segment(200 * MS, &cfg, &ack(seg(9).1, &[]), &mut o);
    let mut last = 9;
    loop {
        last = segs(&o).iter().map(|s| s.0).fold(last, u64::max);
        let t = cl.next_deadline().expect("a timer");
        o = Outbox::default();
        cl.on_timer(t, &cfg, &mut o);
        if cl.counters.timeouts == 1 {
            return (cl, cfg, t, last, segs(&o));
        }
    }
}

/// The timeout: everything outstanding (segments 10 to `last`) is marked lost, cwnd = 0 in
/// flight + 1, and segment 10 alone is sent again (`tcp_enter_loss`,
/// `tcp_xmit_retransmit_queue`); F-RTO is armed, since no recovery was under way
/// (`new_recovery`). Then the ACK of the original segments 10–14 arrives, 10 ms after the
/// retransmission (the originals were delayed, not lost): they were never retransmitted and
/// end below `high_seq`, so `FLAG_ORIG_SACK_ACKED` makes `tcp_process_loss` undo
/// (`tcp_try_undo_loss(sk, true)`, RFC 5682 step 3.b): the lost marks are cleared, the state
/// is Open, and BBR, leaving Loss, restores its cwnd to what it was before the timeout
/// (`bbr_set_cwnd_to_recover_or_restore`: max(cwnd, prior_cwnd)); what goes out next is new
/// data, never the segments 15–`last` still in flight. Without F-RTO the sender stays in
/// Loss and sends 15, 16, ... again.
#[test]
fn a_spurious_timeout_is_undone_when_original_data_is_acked() {
    let (mut on, cfg, t, last, sent) = timed_out(true);
    assert!(last >= 16, "enough in flight: {last}");
    assert_eq!(sent, [(10, true)]);
    assert_eq!(on.cwnd(), LMSS, "cwnd = in flight (0) + 1");
    assert_eq!(on.snapshot(&cfg).ca_state, CaState::Loss);
    let prior_cwnd = on.frto_state().unwrap().prior_cwnd;
    assert!(on.frto_state().unwrap().armed);
    assert!(prior_cwnd >= 10 * LMSS, "BBR's cwnd before the timeout");
    let mut o = Outbox::default();
    on.on_segment(t + 10 * MS, &cfg, &ack(seg(14).1, &[]), &mut o);
    let f = on.frto_state().unwrap();
    assert_eq!((f.spurious_rtos, f.armed), (1, false));
    assert_eq!(on.snapshot(&cfg).ca_state, CaState::Open);
    assert!(
        on.cwnd() >= prior_cwnd,
        "cwnd {} restored to at least {prior_cwnd}",
        on.cwnd()
    );
    assert!(
        on.rack_state().unwrap().reo_at.is_none(),
        "nothing is marked lost"
    );
    let out = segs(&o);
    assert!(!out.is_empty(), "the restored window sends");
    assert!(
        out.iter().all(|&(k, r)| k > last && !r),
        "new data only: {out:?}"
    );

    // The same ACK without F-RTO: still in Loss, the segments marked lost go again.
    let (mut off, cfg, t, _, sent) = timed_out(false);
    assert_eq!(sent, [(10, true)]);
    assert!(off.frto_state().is_none());
    let mut o = Outbox::default();
    off.on_segment(t + 10 * MS, &cfg, &ack(seg(14).1, &[]), &mut o);
    assert_eq!(off.snapshot(&cfg).ca_state, CaState::Loss);
    let out = segs(&o);
    assert_eq!(out.first(), Some(&(15, true)), "conventional: {out:?}");
}

/// A real loss: the timeout's retransmission of segment 10 is ACKed one RTT later (100 ms)
/// and nothing else: snd_una moved, nothing never retransmitted was delivered, the episode
/// is not over, so F-RTO sends new data first (step 2.b, `REXMIT_NEW`; `high_seq` =
/// snd_nxt) instead of retransmitting 11. The next ACK SACKs that new data with snd_una
/// unchanged (a duplicate ACK): the loss was real (step 3.a), F-RTO ends, and the segments
/// marked lost are retransmitted from 11 on (`REXMIT_LOST`), while the timeout's reduction
/// stands.
#[test]
fn a_real_loss_sends_new_data_first_then_recovers_conventionally() {
    let (mut cl, cfg, t, last, sent) = timed_out(true);
    assert_eq!(sent, [(10, true)]);
    let t1 = t + 100 * MS;
    assert!(cl.next_deadline().unwrap() > t1, "no timer before the ACK");
    let mut o = Outbox::default();
    cl.on_segment(t1, &cfg, &ack(seg(10).1, &[]), &mut o);
    let f = cl.frto_state().unwrap();
    assert_eq!((f.new_data_first, f.spurious_rtos, f.armed), (1, 0, true));
    let new = segs(&o);
    assert!(!new.is_empty(), "step 2.b sends");
    assert!(
        new.iter().all(|&(k, r)| k > last && !r),
        "new data, not segment 11 again: {new:?}"
    );
    assert_eq!(cl.snapshot(&cfg).ca_state, CaState::Loss);
    let first_new = new[0].0;
    let mut o = Outbox::default();
    cl.on_segment(
        t1 + 100 * MS,
        &cfg,
        &ack(seg(10).1, &[seg(first_new)]),
        &mut o,
    );
    let f = cl.frto_state().unwrap();
    assert_eq!((f.real_losses, f.spurious_rtos, f.armed), (1, 0, false));
    assert_eq!(cl.snapshot(&cfg).ca_state, CaState::Loss);
    let out = segs(&o);
    assert_eq!(out.first(), Some(&(11, true)), "conventional: {out:?}");
}

/// F-RTO is armed only by a timeout outside recovery (`tcp_enter_loss`: `new_recovery`) or
/// one repeated on the same snd_una (`icsk_retransmits`): the second timeout, with nothing
/// ACKed since the first, arms it again; after progress in Loss a timeout does not.
#[test]
fn a_repeated_timeout_arms_again() {
    let (mut cl, cfg, t, _, _) = timed_out(true);
    assert!(cl.frto_state().unwrap().armed);
    // Nothing arrives: the second timeout on the same snd_una.
    let t2 = cl.next_deadline().unwrap();
    assert!(t2 > t);
    let mut o = Outbox::default();
    cl.on_timer(t2, &cfg, &mut o);
    assert_eq!(cl.counters.timeouts, 2);
    assert!(cl.frto_state().unwrap().armed, "repeated: armed");
    // Its retransmission is ACKed: step 2.b sends new data, and the episode goes on. A third
    // timeout now follows progress made in Loss: no F-RTO.
    let mut o = Outbox::default();
    cl.on_segment(t2 + 100 * MS, &cfg, &ack(seg(10).1, &[]), &mut o);
    let mut o = Outbox::default();
    while cl.counters.timeouts < 3 {
        let t = cl.next_deadline().unwrap();
        cl.on_timer(t, &cfg, &mut o);
    }
    assert!(
        !cl.frto_state().unwrap().armed,
        "progress in Loss: not armed"
    );
}
