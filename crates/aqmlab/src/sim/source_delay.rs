//! Queueing delay at the bottleneck by traffic source, for comparing classes of users in one
//! run (L4S beside classic senders, short beside long RTTs): each TCP packet that starts its
//! transmission on a bottleneck after the warm-up adds its sojourn (enqueue to start of
//! transmission, as the `queue_delay` table) to its connection's source's histogram for that
//! direction. Kept only for scenarios whose sources differ in TCP or RTT
//! (`Scenario::traffic_tcp`, `traffic_rtt`): elsewhere it costs one branch per packet and
//! writes no rows, so historic runs are unchanged. UDP packets are not attributed. A chain of
//! bottlenecks keeps them too, per hop and direction, with a `hop` column: the queueing delay
//! each source sees at each hop (RFC 7928 §10's multi-AQM scenario).

use super::records::{SourceDelayRows, SourceIntervalRows};
use crate::measure::histogram::DelayHistogram;
use crate::units::{Time, US};

/// One source's sums over the current reporting interval in one direction of hop 0.
#[derive(Clone, Copy, Default)]
struct IntervalSums {
    /// Sojourns of its TCP packets that started transmission, ns.
    delay_ns: u64,
    packets: u64,
    /// Bytes its connections delivered in order, in this direction.
    bytes: u64,
}

/// One histogram per (source, monitored link: hop `m / 2`, direction `m % 2`), with the bins
/// of the bottleneck's own queueing-delay histogram (`Queue::track_sojourn`: 0.1 ms up to
/// 2 s); and per source and direction of hop 0 the sums of the current reporting interval
/// (`source_intervals`: each source's goodput and queueing delay over time).
pub struct SourceDelays {
    hists: Vec<Vec<DelayHistogram>>,
    /// Rows carry their hop (a chain).
    chained: bool,
    interval: Vec<[IntervalSums; 2]>,
    /// When the current reporting interval began.
    interval_from: Time,
    interval_rows: SourceIntervalRows,
}

impl SourceDelays {
    pub fn new(sources: usize, hops: usize, chained: bool) -> Self {
        let h = DelayHistogram::new(100 * US, 20_000);
        SourceDelays {
            hists: vec![vec![h; 2 * hops]; sources],
            chained,
            interval: vec![[IntervalSums::default(); 2]; sources],
            interval_from: 0,
            interval_rows: SourceIntervalRows::default(),
        }
    }

    #[inline]
    pub fn add(&mut self, source: u16, m: usize, delay: Time) {
        self.hists[source as usize][m].add(delay);
        if m < 2 {
            let s = &mut self.interval[source as usize][m];
            s.delay_ns += delay;
            s.packets += 1;
        }
    }

    /// The warm-up is over at `now`: the first reporting interval measured starts there.
    pub fn start(&mut self, now: Time) {
        self.interval_from = now;
    }

    /// Source `source`'s connections delivered `bytes` in order in direction `dir` (0
    /// forward, 1 reverse), after the warm-up.
    #[inline]
    pub fn deliver(&mut self, source: u16, dir: usize, bytes: u64) {
        self.interval[source as usize][dir].bytes += bytes;
    }

    /// The reporting interval ending at `now` is over: one row per source and direction that
    /// had packets or deliveries in it, then the sums start again.
    pub fn close_interval(&mut self, now: Time) {
        let span_s = now.saturating_sub(self.interval_from) as f64 * 1e-9;
        self.interval_from = now;
        if span_s <= 0.0 {
            return;
        }
        let rows = &mut self.interval_rows;
        for (source, dirs) in self.interval.iter_mut().enumerate() {
            for (dir, s) in dirs.iter_mut().enumerate() {
                if s.packets == 0 && s.bytes == 0 {
                    continue;
                }
                rows.t_s.push(now as f64 * 1e-9);
                rows.source.push(source as u64);
                rows.direction
                    .push(if dir == 0 { "forward" } else { "reverse" });
                rows.goodput_mbps.push(s.bytes as f64 * 8.0 / span_s / 1e6);
                rows.packets.push(s.packets);
                rows.delay_mean_ms.push(if s.packets > 0 {
                    s.delay_ns as f64 / s.packets as f64 * 1e-6
                } else {
                    f64::NAN
                });
                *s = IntervalSums::default();
            }
        }
    }

    /// The `source_intervals` rows written so far.
    pub fn take_interval_rows(&mut self) -> crate::measure::Table {
        self.interval_rows.take()
    }

    /// One row per non-empty bin, by source, then hop, then direction.
    pub fn write_rows(&self, rows: &mut SourceDelayRows) {
        for (source, links) in self.hists.iter().enumerate() {
            for (m, h) in links.iter().enumerate() {
                for (lo, width, count) in h.nonzero_bins() {
                    rows.source.push(source as u64);
                    rows.direction
                        .push(if m % 2 == 0 { "forward" } else { "reverse" });
                    if self.chained {
                        rows.hop.push(m as u64 / 2);
                    }
                    rows.delay_ms.push(lo as f64 * 1e-6);
                    rows.width_ms
                        .push(width.map_or(f64::INFINITY, |w| w as f64 * 1e-6));
                    rows.count.push(count);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    #[test]
    fn delays_are_kept_apart_by_source_and_direction() {
        let mut d = SourceDelays::new(2, 1, false);
        d.add(1, 0, 3 * MS + 50 * US);
        d.add(1, 0, 3 * MS + 10 * US);
        d.add(0, 1, 0);
        let mut rows = SourceDelayRows::default();
        d.write_rows(&mut rows);
        assert_eq!(rows.source, vec![0, 1]);
        assert_eq!(rows.direction, vec!["reverse", "forward"]);
        assert_eq!(rows.count, vec![1, 2]);
        assert!((rows.delay_ms[1] - 3.0).abs() < 1e-12);
        assert!((rows.width_ms[1] - 0.1).abs() < 1e-12);
        assert!(rows.hop.is_empty());
    }

    #[test]
    fn a_chain_keeps_them_apart_by_hop() {
        let mut d = SourceDelays::new(1, 3, true);
        d.add(0, 5, MS);
        d.add(0, 2, 2 * MS);
        let mut rows = SourceDelayRows::default();
        d.write_rows(&mut rows);
        assert_eq!(rows.hop, vec![1, 2]);
        assert_eq!(rows.direction, vec!["forward", "reverse"]);
    }

    /// Two sources over a 0.5-s interval: source 1 had two packets (3 ms and 1 ms: mean 2 ms)
    /// forward and 125,000 bytes delivered reverse (2 Mb/s); source 0 nothing (no row).
    #[test]
    fn each_interval_gives_each_sources_goodput_and_mean_delay() {
        let mut d = SourceDelays::new(2, 1, false);
        d.close_interval(500 * MS); // nothing happened in the first interval: no rows
        d.add(1, 0, 3 * MS);
        d.add(1, 0, MS);
        d.deliver(1, 1, 125_000);
        d.close_interval(1000 * MS);
        let rows = &d.interval_rows;
        assert_eq!(rows.source, vec![1, 1]);
        assert_eq!(rows.direction, vec!["forward", "reverse"]);
        assert_eq!(rows.packets, vec![2, 0]);
        assert!((rows.delay_mean_ms[0] - 2.0).abs() < 1e-12);
        assert!(rows.delay_mean_ms[1].is_nan());
        assert!((rows.goodput_mbps[1] - 2.0).abs() < 1e-12);
        assert_eq!(rows.goodput_mbps[0], 0.0);
        assert_eq!(d.take_interval_rows().rows(), 2);
    }
}
