//! Constant-bit-rate UDP flows (`kind = "udp_cbr"`), after ns-2's Application/Traffic/CBR
//! over Agent/UDP: a flow sends packet `k` (numbered from 0) at `start + round(k · T)`, with
//! `T = packet_bytes · 8 / rate`, while that time is before its stop. Computing each time from
//! `k` (not by adding `T` again and again) keeps the rate exact over any run length.
//!
//! The receiver is not TCP: it sends nothing back. It counts losses as Study D does ("at the
//! destination we traced the packet arrivals of the UDP flows to determine the number of
//! consecutive losses in their data stream"): the network keeps a flow's packets in order, so
//! every gap in the packet numbers is a run of consecutive losses of that flow.
//!
//! Metrics count the packets sent at or after the end of the warm-up. Packets still in the
//! network when the run ends, and losses after a flow's last delivered packet, are reported as
//! `unresolved`; the loss probability is lost / (delivered + lost).

use serde::Serialize;

use super::periodic::{measured_gap, Periodic};
use super::records::{CbrFlowRows, LossRunRows};
use super::{Ev, Simulation};
use crate::config::{flow_rate_bps, Direction, TrafficConfig};
use crate::measure::histogram::DelayHistogram;
use crate::measure::runs;
use crate::packet::{Packet, Proto};
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time, MS, US};

/// One CBR flow: its sender's schedule and its receiver's counters.
#[derive(Clone, Debug)]
pub struct CbrFlow {
    source: u32,
    /// Index of the flow within its source.
    index: u32,
    sender: u32,
    receiver: u32,
    route: u32,
    first_link: u32,
    flow_delay: Time,
    flow_hash: u32,
    size: u32,
    rate_bps: f64,
    /// When its packets leave (`sim::periodic`).
    schedule: Periodic,
    /// First packet number sent at or after the warm-up.
    first_measured: Option<u64>,
    /// Next packet number the receiver expects.
    expected: u64,
    sent: u64,
    delivered: u64,
    delivered_bytes: u64,
    lost: u64,
    /// Runs of consecutive losses of measured packets, by length (`measure::runs`).
    runs: Vec<u64>,
}

impl CbrFlow {
    /// Send time of packet `k`.
    fn send_time(&self, k: u64) -> Time {
        self.schedule.send_time(k)
    }

    /// Time of the next packet, if it is before the stop.
    fn next_send(&self) -> Option<Time> {
        self.schedule.next_send()
    }

    fn measured(&self, k: u64) -> bool {
        self.first_measured.is_some_and(|m| k >= m)
    }

    /// Packet `k` arrived: the packets skipped since the last arrival were lost, as one run.
    fn on_arrival(&mut self, k: u64) {
        if k < self.expected {
            return; // cannot happen on FIFO paths; a late duplicate would not be news
        }
        let gap = measured_gap(self.first_measured, self.expected, k);
        if gap > 0 {
            self.lost += gap;
            runs::count_run(&mut self.runs, gap);
        }
        self.expected = k + 1;
        if self.measured(k) {
            self.delivered += 1;
            self.delivered_bytes += self.size as u64;
        }
    }
}

/// Whole-run UDP totals after the warm-up, over every CBR flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UdpSummary {
    pub flows: u64,
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
    /// Sent but neither delivered nor known lost when the run ended.
    pub unresolved: u64,
    /// lost / (delivered + lost).
    pub loss_probability: f64,
    pub delivered_bytes: u64,
    /// Bits delivered per second of measured time.
    pub throughput_mbps: f64,
    /// Runs of consecutive losses within each flow, summed over the flows (index = length).
    pub loss_runs: Vec<u64>,
    /// One-way delay of delivered packets (send to arrival), ms.
    pub delay_mean_ms: f64,
    pub delay_p50_ms: f64,
    pub delay_p99_ms: f64,
    pub delay_max_ms: f64,
}

/// Every CBR flow of a run and their aggregate delay histogram.
#[derive(Default)]
pub struct CbrFlows {
    flows: Vec<CbrFlow>,
    delay: Option<DelayHistogram>,
}

impl CbrFlows {
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flow `id`'s sending and receiving hosts.
    pub(super) fn hosts(&self, id: u32) -> (u32, u32) {
        let f = &self.flows[id as usize];
        (f.sender, f.receiver)
    }
}

impl Simulation {
    /// Creates the flows of `udp_cbr` entry `source` and schedules their first packets.
    pub(super) fn add_cbr_source(&mut self, source: u32) {
        let tr = self.sc.traffic[source as usize].clone();
        let TrafficConfig::UdpCbr {
            flows,
            packet_bytes,
            direction,
            client_side,
            start_s,
            start_jitter_s,
            stop_s,
            ..
        } = tr
        else {
            unreachable!("a udp_cbr entry")
        };
        let rate_bps = flow_rate_bps(&self.sc, &tr);
        let seed = self.sc.seed;
        let stop = stop_s.map_or(self.end, |s| secs(s).min(self.end));
        if self.udp.delay.is_none() {
            self.udp.delay = Some(DelayHistogram::new(100 * US, 20_000));
        }
        for f in 0..flows {
            let (client, server) = self.host_pair(source, client_side, f);
            let (sender, receiver) = match direction {
                Direction::Download => (server, client),
                Direction::Upload => (client, server),
            };
            // The flow's delay-box RTT, drawn as a TCP connection's; its packets get the one-way
            // delay that a connection's packets sent by the same end would get.
            let extra = self.sample_rtt(source, f as u64, client, server);
            let flow_delay = self.one_way_delays(extra)[(sender == server) as usize];
            let mut start_rng =
                Rng::substream(seed, StreamKind::TrafficSource, source as u64, f as u64);
            let start = secs(start_s + start_jitter_s * start_rng.uniform());
            let (route, _) = self.path_id(sender, receiver);
            let global = self.udp.flows.len() as u64;
            let flow = CbrFlow {
                source,
                index: f,
                sender,
                receiver,
                route,
                first_link: self.paths[route as usize].links[0],
                flow_delay,
                // Distinct from every connection's hash (those come from small ids).
                flow_hash: (u64::MAX - global)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .rotate_left(29) as u32,
                size: packet_bytes,
                rate_bps,
                schedule: Periodic::new(start, stop, packet_bytes as f64 * 8e9 / rate_bps),
                first_measured: None,
                expected: 0,
                sent: 0,
                delivered: 0,
                delivered_bytes: 0,
                lost: 0,
                runs: Vec::new(),
            };
            if let Some(t) = flow.next_send() {
                self.sched.at(t, Ev::CbrSend(global as u32));
            }
            self.udp.flows.push(flow);
        }
    }

    /// Flow `id` sends its next packet and schedules the one after.
    pub(super) fn on_cbr_send(&mut self, id: u32) {
        let now = self.sched.now();
        let f = &mut self.udp.flows[id as usize];
        let k = f.schedule.take();
        if now >= self.warmup {
            f.first_measured.get_or_insert(k);
            f.sent += 1;
        }
        let p = Packet {
            conn: id,
            route: f.route,
            proto: Proto::Udp,
            size: f.size,
            len: f.size,
            seq: k,
            flow_delay: f.flow_delay,
            flow_hash: f.flow_hash,
            ..Default::default()
        };
        let (link, next) = (f.first_link, f.next_send());
        if let Some(t) = next {
            self.sched.at(t, Ev::CbrSend(id));
        }
        self.send_from_host(link, p);
    }

    /// A UDP packet reached its receiver.
    pub(super) fn deliver_udp(&mut self, pkt: &Packet) {
        let now = self.sched.now();
        let f = &mut self.udp.flows[pkt.conn as usize];
        f.on_arrival(pkt.seq);
        if f.measured(pkt.seq) {
            if let Some(h) = &mut self.udp.delay {
                h.add(now - f.send_time(pkt.seq));
            }
        }
    }

    /// End of run: one row per flow, the run-length tables, and the UDP summary.
    pub(super) fn close_udp(&mut self, rows: &mut CbrFlowRows, runs_rows: &mut LossRunRows) {
        let measured_s = self.end.min(self.sched.now()).saturating_sub(self.warmup) as f64 * 1e-9;
        let mut s = UdpSummary {
            flows: self.udp.flows.len() as u64,
            ..Default::default()
        };
        for (id, f) in self.udp.flows.iter().enumerate() {
            let resolved = f.delivered + f.lost;
            rows.flow.push(id as u64);
            rows.source.push(f.source as u64);
            rows.index.push(f.index as u64);
            rows.sender_host.push(f.sender as u64);
            rows.receiver_host.push(f.receiver as u64);
            rows.rate_mbps.push(f.rate_bps * 1e-6);
            rows.packet_bytes.push(f.size as u64);
            rows.one_way_extra_ms.push(f.flow_delay as f64 / MS as f64);
            rows.start_s.push(f.schedule.start as f64 * 1e-9);
            rows.sent.push(f.sent);
            rows.delivered.push(f.delivered);
            rows.lost.push(f.lost);
            rows.unresolved.push(f.sent - resolved);
            rows.loss_probability.push(if resolved > 0 {
                f.lost as f64 / resolved as f64
            } else {
                f64::NAN
            });
            rows.delivered_bytes.push(f.delivered_bytes);
            rows.throughput_mbps.push(if measured_s > 0.0 {
                f.delivered_bytes as f64 * 8.0 / measured_s * 1e-6
            } else {
                f64::NAN
            });
            rows.longest_run
                .push(f.runs.iter().rposition(|&c| c > 0).unwrap_or(0) as u64);
            runs_rows.push_histogram("udp_flow", id as i64, &f.runs);
            s.sent += f.sent;
            s.delivered += f.delivered;
            s.lost += f.lost;
            s.unresolved += f.sent - resolved;
            s.delivered_bytes += f.delivered_bytes;
            runs::merge(&mut s.loss_runs, &f.runs);
        }
        runs_rows.push_histogram("udp_all", -1, &s.loss_runs);
        let resolved = s.delivered + s.lost;
        s.loss_probability = if resolved > 0 {
            s.lost as f64 / resolved as f64
        } else {
            f64::NAN
        };
        if measured_s > 0.0 {
            s.throughput_mbps = s.delivered_bytes as f64 * 8.0 / measured_s * 1e-6;
        }
        if let Some(h) = &self.udp.delay {
            let ms = |t: Time| t as f64 / MS as f64;
            s.delay_mean_ms = h.mean() / MS as f64;
            s.delay_p50_ms = ms(h.quantile(0.5));
            s.delay_p99_ms = ms(h.quantile(0.99));
            s.delay_max_ms = ms(h.max());
        }
        self.summary.udp = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(interval: f64) -> CbrFlow {
        CbrFlow {
            source: 0,
            index: 0,
            sender: 0,
            receiver: 1,
            route: 0,
            first_link: 0,
            flow_delay: 0,
            flow_hash: 0,
            size: 1000,
            rate_bps: 8e9 / interval,
            schedule: Periodic::new(5, u64::MAX, interval),
            first_measured: Some(0),
            expected: 0,
            sent: 0,
            delivered: 0,
            delivered_bytes: 0,
            lost: 0,
            runs: Vec::new(),
        }
    }

    #[test]
    fn send_times_do_not_drift() {
        // 1000 bytes at 3 Mb/s: 2_666_666.67 ns apart; after 3 million packets the schedule is
        // still exactly start + 8e9 s · k / 3 rounded, not k times a rounded interval.
        let f = flow(1000.0 * 8e9 / 3e6);
        assert_eq!(f.send_time(0), 5);
        assert_eq!(f.send_time(3), 5 + 8_000_000);
        assert_eq!(f.send_time(3_000_000), 5 + 8_000_000_000_000);
    }

    #[test]
    fn gaps_in_packet_numbers_are_runs_of_losses() {
        // Hand-built pattern: packets 2, 5, 6, 7 and 10..=14 lost, the rest delivered.
        let mut f = flow(1e6);
        let lost = [2, 5, 6, 7, 10, 11, 12, 13, 14];
        for k in 0..20u64 {
            if !lost.contains(&k) {
                f.on_arrival(k);
            }
        }
        assert_eq!((f.delivered, f.lost), (11, 9));
        let mut want = vec![0u64; runs::MAX_RUN + 1];
        want[1] = 1;
        want[3] = 1;
        want[5] = 1;
        assert_eq!(f.runs, want);
    }

    #[test]
    fn packets_before_the_warm_up_are_not_counted() {
        let mut f = flow(1e6);
        f.first_measured = Some(10);
        // 3..=4 lost before the warm-up; 8..=11 straddle it: only 10 and 11 count.
        for k in [0, 1, 2, 5, 6, 7, 12, 13] {
            f.on_arrival(k);
        }
        assert_eq!((f.delivered, f.lost), (2, 2));
        assert_eq!(f.runs[2], 1);
        assert_eq!(f.runs.iter().sum::<u64>(), 1);
    }
}
