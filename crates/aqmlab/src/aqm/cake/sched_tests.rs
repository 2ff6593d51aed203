//! Scheduling across tins, driven the way `net::queue::Queue` drives CAKE but with packets
//! classified by an explicit DSCP (`Cake::classify_dscp`; aqmlab's packets carry none).

use std::collections::VecDeque;

use super::hash::QUEUES;
use super::{Cake, CakeParams, Pick};
use crate::aqm::Verdict;
use crate::packet::Packet;
use crate::rng::{Rng, StreamKind};
use crate::units::Time;

struct Bench {
    cake: Cake,
    queues: Vec<VecDeque<(Packet, u8)>>,
    rng: Rng,
    now: Time,
}

impl Bench {
    fn new(p: CakeParams) -> Self {
        let cake = Cake::new(p);
        let queues = (0..cake.queues()).map(|_| VecDeque::new()).collect();
        Bench {
            cake,
            queues,
            rng: Rng::stream(1, StreamKind::Test, 0),
            now: 0,
        }
    }

    fn enqueue(&mut self, flow_hash: u32, dscp: u8) {
        let pkt = Packet {
            size: 1500,
            flow_hash,
            enqueued_at: self.now,
            ..Default::default()
        };
        let (t, q) = self.cake.classify_dscp(&pkt, dscp);
        self.queues[t * QUEUES + q].push_back((pkt, dscp));
        self.cake
            .on_enqueued(self.now, t, q, pkt.size, &mut self.rng);
    }

    /// The DSCP of the next packet sent (time advancing to the shaper's release times).
    fn dequeue(&mut self) -> Option<u8> {
        let mut first = true;
        loop {
            match self.cake.select(self.now, first, &mut self.rng) {
                Pick::Idle => return None,
                Pick::Wait(t) => self.now = t,
                Pick::Flow(t, q) => {
                    first = false;
                    let k = t * QUEUES + q;
                    let Some((pkt, dscp)) = self.queues[k].pop_front() else {
                        self.cake.on_flow_empty(self.now, t, q);
                        continue;
                    };
                    let more = !self.queues[k].is_empty();
                    match self
                        .cake
                        .on_dequeue(self.now, t, q, &pkt, more, &mut self.rng)
                    {
                        Verdict::Drop(_) => continue,
                        _ => return Some(dscp),
                    }
                },
            }
        }
    }
}

/// Unshaped diffserv3: Best Effort (quantum 1024) and Bulk (CS1, quantum 64) both
/// backlogged share by DRR on the tin quanta: Bulk gets 64/1088 = 1/17 = 0.0588 of the
/// bytes (equal packets). All at t = 0, so COBALT never acts. Both tins start with deficit 0
/// and serve one packet each before the quanta take over.
#[test]
fn unshaped_tins_share_by_quantum() {
    let mut b = Bench::new(CakeParams::linux_defaults());
    for _ in 0..1200 {
        b.enqueue(1, 0);
        b.enqueue(2, 8);
    }
    // 1190 = 70·17 departures (fewer than either backlog): 70 from Bulk, the 1st and every
    // 17th after.
    let seq: Vec<u8> = (0..1190).map(|_| b.dequeue().unwrap()).collect();
    let bulk = seq.iter().filter(|&&d| d == 8).count();
    assert_eq!(&seq[..3], &[0, 8, 0]);
    let share = bulk as f64 / 1190.0;
    assert!((share - 1.0 / 17.0).abs() < 0.005, "bulk share {share}");
}

/// Shaped to 10 Mbit/s, diffserv3: Voice (EF, threshold 1/4 of the rate) has priority while
/// within its threshold, so with Voice and Best Effort backlogged Voice gets 1/4 of the
/// packets (each Voice packet moves the Voice schedule 4.8 ms, the global one 1.2 ms), and
/// the packets leave every 1.2 ms.
#[test]
fn shaped_priority_within_threshold() {
    let mut p = CakeParams::linux_defaults();
    p.bandwidth = 1_250_000;
    let mut b = Bench::new(p);
    for _ in 0..600 {
        b.enqueue(1, 0);
        b.enqueue(2, 46);
    }
    let mut voice = 0;
    let mut times = Vec::new();
    for _ in 0..400 {
        if b.dequeue() == Some(46) {
            voice += 1;
        }
        times.push(b.now);
    }
    let share = voice as f64 / 400.0;
    assert!((share - 0.25).abs() < 0.01, "voice share {share}");
    // Back-to-back at the shaped rate, apart from COBALT's drops (which do not advance it).
    assert!(times
        .windows(2)
        .all(|w| w[1] - w[0] == 1_200_000 || w[1] == w[0]));
    assert_eq!(times[399] - times[0], 399 * 1_200_000);
}
