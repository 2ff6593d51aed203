//! Queueing delay at the bottleneck by traffic source, for comparing classes of users in one
//! run (L4S beside classic senders, short beside long RTTs): each TCP packet that starts its
//! transmission on a bottleneck after the warm-up adds its sojourn (enqueue to start of
//! transmission, as the `queue_delay` table) to its connection's source's histogram for that
//! direction. Kept only for scenarios whose sources differ in TCP or RTT
//! (`Scenario::traffic_tcp`, `traffic_rtt`): elsewhere it costs one branch per packet and
//! writes no rows, so historic runs are unchanged. UDP packets are not attributed. A chain of
//! bottlenecks keeps them too, per hop and direction, with a `hop` column: the queueing delay
//! each source sees at each hop (RFC 7928 §10's multi-AQM scenario).

use super::records::SourceDelayRows;
use crate::measure::histogram::DelayHistogram;
use crate::units::{Time, US};

/// One histogram per (source, monitored link: hop `m / 2`, direction `m % 2`), with the bins
/// of the bottleneck's own queueing-delay histogram (`Queue::track_sojourn`: 0.1 ms up to
/// 2 s).
pub struct SourceDelays {
    hists: Vec<Vec<DelayHistogram>>,
    /// Rows carry their hop (a chain).
    chained: bool,
}

impl SourceDelays {
    pub fn new(sources: usize, hops: usize, chained: bool) -> Self {
        let h = DelayHistogram::new(100 * US, 20_000);
        SourceDelays {
            hists: vec![vec![h; 2 * hops]; sources],
            chained,
        }
    }

    #[inline]
    pub fn add(&mut self, source: u16, m: usize, delay: Time) {
        self.hists[source as usize][m].add(delay);
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
}
