//! Queue managers driven through `net::queue::Queue` (the one place that acts and counts) with
//! synthetic arrival/departure sequences and hand-computed expectations.

use aqmlab::aqm::codel::{Codel, CodelParams};
use aqmlab::aqm::config::AqmConfig;
use aqmlab::aqm::fq_codel::{FqCodel, FqCodelParams};
use aqmlab::aqm::{Aqm, DropCause};
use aqmlab::net::queue::{Offer, Queue};
use aqmlab::packet::{Packet, PacketStore};
use aqmlab::rng::{Rng, StreamKind};
use aqmlab::units::{BitsPerSec, MS};

fn rng() -> Rng {
    Rng::stream(5, StreamKind::Test, 0)
}

fn pkt(seq: u64, size: u32, flow_hash: u32) -> Packet {
    Packet {
        seq,
        size,
        flow_hash,
        ..Default::default()
    }
}

fn fq(flows: u32, limit: u32) -> Aqm {
    Aqm::FqCodel(FqCodel::new(FqCodelParams::linux_defaults(flows, limit)))
}

/// Offers a packet that must be queued.
fn enq(q: &mut Queue, st: &mut PacketStore, p: Packet) {
    let id = st.alloc(p);
    assert_eq!(q.enqueue(0, id, st), Offer::Queued);
}

/// Takes the next packet and returns its sequence number.
fn deq(q: &mut Queue, st: &mut PacketStore) -> u64 {
    let id = q.dequeue(0, st).expect("packet");
    let s = st.get(id).seq;
    st.free(id);
    s
}

const FAT: u32 = 0; // flow 0 of 1024
const THIN: u32 = 1 << 31; // flow 512

#[test]
fn fq_codel_drr_order_between_fat_and_thin_flow() {
    let mut q = Queue::new(fq(1024, 10240), rng());
    let mut st = PacketStore::default();
    // Fat flow: F1..F6 (1500 B, seq 1..6); thin flow: T1..T3 (100 B, seq 101..103).
    for s in 1..=6 {
        enq(&mut q, &mut st, pkt(s, 1500, FAT));
    }
    let mut order = Vec::new();
    // fat is new with deficit 1514: F1 (deficit 14).
    order.push(deq(&mut q, &mut st));
    // T1 arrives: thin joins new_flows behind fat.
    enq(&mut q, &mut st, pkt(101, 100, THIN));
    // fat still has 14 > 0: F2 (deficit −1486).
    order.push(deq(&mut q, &mut st));
    // fat exhausted → +1514 = 28, moved to old_flows; thin (new, 1514): T1.
    order.push(deq(&mut q, &mut st));
    enq(&mut q, &mut st, pkt(102, 100, THIN));
    // thin still first on new_flows: T2.
    order.push(deq(&mut q, &mut st));
    // thin empty, old_flows non-empty → thin to old tail; fat (28): F3 (deficit −1472).
    order.push(deq(&mut q, &mut st));
    // T3 arrives; thin is on old_flows, so it is not new again.
    enq(&mut q, &mut st, pkt(103, 100, THIN));
    // fat ≤ 0 → +1514 = 42, to the tail: old = [thin, fat]; thin (1314): T3.
    order.push(deq(&mut q, &mut st));
    // thin empty on old → unlinked; fat: F4, then F5, F6.
    for _ in 0..3 {
        order.push(deq(&mut q, &mut st));
    }
    assert_eq!(order, vec![1, 2, 101, 102, 3, 103, 4, 5, 6]);
    assert!(q.dequeue(0, &mut st).is_none());
    assert!(q.is_empty());
    assert_eq!(q.stats.departures, 9);
    assert_eq!(st.live(), 0);
}

#[test]
fn fq_codel_new_flow_that_empties_goes_to_old_list_not_new_again() {
    let mut q = Queue::new(fq(1024, 10240), rng());
    let mut st = PacketStore::default();
    // Fat: ten 500-byte packets (seq 1..10); thin: 100-byte packets (seq 101, 102).
    for s in 1..=10 {
        enq(&mut q, &mut st, pkt(s, 500, FAT));
    }
    enq(&mut q, &mut st, pkt(101, 100, THIN));
    let mut order = Vec::new();
    // Fat deficit 1514 → 1014, 514, 14, −486: F1..F4; then +1514 = 1028, fat to old; T1.
    for _ in 0..5 {
        order.push(deq(&mut q, &mut st));
    }
    // Thin empties while on new_flows with old_flows = [fat] → old = [fat, thin]; F5 (528).
    order.push(deq(&mut q, &mut st));
    // T2 arrives: thin is on old_flows, so it does NOT jump ahead as a new flow:
    // F6 (28), F7 (−472); then fat +1514 to the tail, old = [thin, fat]: T2.
    enq(&mut q, &mut st, pkt(102, 100, THIN));
    for _ in 0..3 {
        order.push(deq(&mut q, &mut st));
    }
    assert_eq!(order, vec![1, 2, 3, 4, 101, 5, 6, 7, 102]);
}

#[test]
fn fq_codel_overflow_drops_half_of_the_fattest_flow_from_its_head() {
    let mut q = Queue::new(fq(1024, 10), rng());
    let mut st = PacketStore::default();
    for s in 1..=8 {
        let id = st.alloc(pkt(s, 1000, FAT));
        assert_eq!(q.enqueue(0, id, &mut st), Offer::Queued);
    }
    for s in 101..=102 {
        let id = st.alloc(pkt(s, 100, THIN));
        assert_eq!(q.enqueue(0, id, &mut st), Offer::Queued);
    }
    // 11th packet (thin): 11 > 10 → fattest = fat (8000 B); drop its head until ≥ 4000 B are
    // gone: F1..F4. The arrival itself is queued.
    let id = st.alloc(pkt(103, 100, THIN));
    assert_eq!(q.enqueue(0, id, &mut st), Offer::Queued);
    assert_eq!(q.stats.drops_overflow, 4);
    assert_eq!(q.len().packets, 7);
    assert_eq!(q.len().bytes, 4000 + 300);
    let Aqm::FqCodel(f) = &q.aqm else { panic!() };
    assert_eq!(f.codel[0].count, 4, "CoDel count grows by the batch");
    // Fat is first on new_flows: its next packet is F5.
    let id = q.dequeue(0, &mut st).unwrap();
    assert_eq!(st.get(id).seq, 5);
}

/// CoDel (target 5 ms, interval 100 ms) with 60 packets of 1,000 bytes queued at time 0.
fn codel_holding_60_packets() -> (Queue, PacketStore) {
    let aqm = Aqm::Codel(Codel::new(CodelParams {
        target: 5 * MS,
        interval: 100 * MS,
        mtu: 1500,
        ecn: false,
        limit: 1000,
    }));
    let mut q = Queue::new(aqm, rng());
    let mut st = PacketStore::default();
    for s in 0..60 {
        let id = st.alloc(pkt(s, 1000, 0));
        q.enqueue(0, id, &mut st);
    }
    (q, st)
}

#[test]
fn codel_drop_times_through_the_queue() {
    let (mut q, mut st) = codel_holding_60_packets();
    // The link takes one packet every 10 ms; all were queued at 0, so every sojourn is above
    // target. Linux's arithmetic (codel time, 1024-ns units): first above at 10 ms →
    // first_above_time = 9765 + 97 656 = 107 421 units (109.999 ms); 110 ms is 107 421 too,
    // not strictly after it, so the first drop is at 120 ms (count 1, drop_next 219.997 ms);
    // then drops at the first dequeue at or after each drop_next, spaced by Linux's Newton
    // approximation of 100 ms/√count (47.7 ms for count 2, 53.6, 46.5): 220, 270, 330,
    // 380 ms.
    let mut drop_times = Vec::new();
    let mut expected_seq = 0;
    for k in 1..=40u64 {
        let t = k * 10 * MS;
        let before = q.stats.drops_early;
        let id = q.dequeue(t, &mut st).unwrap();
        let seq = st.get(id).seq;
        st.free(id);
        if q.stats.drops_early > before {
            drop_times.push(t / MS);
            expected_seq += 1; // the head was dropped; its successor is sent
        }
        assert_eq!(seq, expected_seq);
        expected_seq += 1;
    }
    assert_eq!(drop_times, vec![120, 220, 270, 330, 380]);
    assert_eq!(q.stats.drops(), 5);
}

#[test]
fn red_idle_period_through_the_queue() {
    // RED from config, w_q 0.5, packets: the average seen by an arrival after an idle period
    // decays as (1 − w_q)^(m+1) with m = ⌊C·idle⌋.
    let c: AqmConfig = serde_json::from_str(
        r#"{"kind":"red","limit":50,"min_th":5,"max_th":15,"w_q":0.5,
            "queue_in_bytes":false,"byte_mode":false}"#,
    )
    .unwrap();
    c.validate("queue").unwrap();
    // 1 Mb/s, 500 B: C = 250 pkt/s → m = ⌊250·0.01⌋ = 2 for a 10 ms idle period.
    let mut q = Queue::new(c.build(BitsPerSec::from_mbps(1.0), 500), rng());
    let mut st = PacketStore::default();
    // Three arrivals at t = 1 ms: avg after each = 0.5·avg + 0.5·q_before: 0, 0.5, 1.25.
    // (The first arrival also decays the initial idle period, on avg = 0.)
    for s in 0..3 {
        let id = st.alloc(pkt(s, 500, 0));
        q.enqueue(MS, id, &mut st);
    }
    let avg = |q: &Queue| q.aqm.state_probe().unwrap().1;
    assert!((avg(&q) - 1.25).abs() < 1e-12);
    for _ in 0..3 {
        let id = q.dequeue(2 * MS, &mut st).unwrap();
        st.free(id);
    }
    // Empty at 2 ms: idle starts.
    assert!(q.dequeue(2 * MS, &mut st).is_none());
    let id = st.alloc(pkt(9, 500, 0));
    q.enqueue(12 * MS, id, &mut st);
    // avg = 1.25·0.5^(2+1) + 0.5·0.
    assert!((avg(&q) - 1.25 / 8.0).abs() < 1e-12);
}

#[test]
fn every_drop_is_counted_once_and_freed() {
    // A drop-heavy RED: the packet store must end empty and arrivals = queued + dropped.
    let c: AqmConfig = serde_json::from_str(
        r#"{"kind":"gred_i","limit":20,"min_th":2,"queue_in_bytes":false,"max_p":1.0}"#,
    )
    .unwrap();
    let mut q = Queue::new(c.build(BitsPerSec::from_mbps(1.0), 500), rng());
    let mut st = PacketStore::default();
    let mut queued = 0;
    for s in 0..2000u64 {
        let id = st.alloc(pkt(s, 500, 0));
        if q.enqueue(s * MS, id, &mut st) == Offer::Queued {
            queued += 1;
        }
        if s % 3 == 0 {
            if let Some(id) = q.dequeue(s * MS, &mut st) {
                st.free(id);
            }
        }
    }
    assert_eq!(q.stats.arrivals, 2000);
    assert_eq!(queued + q.stats.drops(), 2000);
    assert!(q.stats.drops_early > 0 && q.stats.drops_overflow > 0);
    assert_eq!(st.live() as u32, q.len().packets);
    let _ = DropCause::Early;
}

/// A measured period that starts with a full CoDel queue and receives nothing: every drop it
/// sees is of a packet that entered before it (`QueueStats::drops_of_earlier`), so a loss rate
/// over its arrivals leaves them out (the summary's rate was 1.125 on such a run before).
#[test]
fn drops_of_packets_queued_before_the_measured_period_are_told_apart() {
    let (mut q, mut st) = codel_holding_60_packets();
    q.stats.measured_from = 50 * MS;
    let arrivals_before = q.stats.arrivals;
    for k in 1..=40u64 {
        let id = q.dequeue(k * 10 * MS, &mut st).unwrap();
        st.free(id);
    }
    // The five drops of `codel_drop_times_through_the_queue`, all of packets queued at 0.
    assert_eq!(q.stats.drops(), 5);
    assert_eq!(q.stats.drops_of_earlier, 5);
    assert_eq!(
        q.stats.arrivals, arrivals_before,
        "no arrival in the period"
    );
    // One arrival in the period, then the queue drains with more drops: the period's own
    // drops never exceed its arrivals, though all its drops do.
    let id = st.alloc(pkt(99, 1000, 0));
    q.enqueue(500 * MS, id, &mut st);
    while q
        .dequeue(2000 * MS, &mut st)
        .map(|id| st.free(id))
        .is_some()
    {}
    let arrivals = q.stats.arrivals - arrivals_before;
    assert!(q.stats.drops() > arrivals);
    assert!(q.stats.drops() - q.stats.drops_of_earlier <= arrivals);
}
