//! A fixed-resolution histogram of durations (queueing delays): linear bins of `bin` up to
//! `bins · bin`, one overflow bin, and the exact sum for the mean. Quantiles are exact to one
//! bin width (they return the bin's upper edge).

use crate::units::{Divisor, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct DelayHistogram {
    /// The bin width (a division per departing packet: by multiplication).
    bin: Divisor,
    counts: Vec<u64>,
    overflow: u64,
    n: u64,
    sum: u128,
    max: Time,
}

impl DelayHistogram {
    pub fn new(bin: Time, bins: usize) -> Self {
        DelayHistogram {
            bin: Divisor::new(bin),
            counts: vec![0; bins],
            overflow: 0,
            n: 0,
            sum: 0,
            max: 0,
        }
    }

    #[inline]
    pub fn add(&mut self, d: Time) {
        let i = self.bin.quotient(d) as usize;
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.overflow += 1,
        }
        self.n += 1;
        self.sum += d as u128;
        self.max = self.max.max(d);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    pub fn max(&self) -> Time {
        self.max
    }

    /// Smallest bin upper edge below which at least a fraction `q` of the samples lie, but
    /// never above the largest sample (a quantile beyond the maximum would be a value no
    /// packet had); the maximum when the quantile falls in the overflow bin.
    pub fn quantile(&self, q: f64) -> Time {
        if self.n == 0 {
            return 0;
        }
        let want = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return ((i as Time + 1) * self.bin.get()).min(self.max);
            }
        }
        self.max
    }

    /// Non-empty bins as `(lower edge, width, count)`; the overflow bin, if used, comes last
    /// with width `None`.
    pub fn nonzero_bins(&self) -> impl Iterator<Item = (Time, Option<Time>, u64)> + '_ {
        let top = self.counts.len() as Time * self.bin.get();
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i as Time * self.bin.get(), Some(self.bin.get()), c))
            .chain((self.overflow > 0).then_some((top, None, self.overflow)))
    }

    /// Counts since `base` (same binning), for post-warm-up statistics.
    pub fn since(&self, base: &DelayHistogram) -> DelayHistogram {
        DelayHistogram {
            bin: self.bin,
            counts: self
                .counts
                .iter()
                .zip(&base.counts)
                .map(|(a, b)| a - b)
                .collect(),
            overflow: self.overflow - base.overflow,
            n: self.n - base.n,
            sum: self.sum - base.sum,
            max: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_index_equals_division() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(9, StreamKind::Test, 0);
        for (bin, bins) in [
            (100_000, 20_000),
            (7, 1000),
            (3, 1 << 20),
            (1, 10),
            (1 << 40, 4),
        ] {
            let mut h = DelayHistogram::new(bin, bins);
            let mut expect = vec![0u64; bins];
            let edge = bin * bins as Time;
            let mut samples: Vec<Time> = (0..20_000).map(|_| r.below(edge)).collect();
            // Every bin edge and its neighbours, the last in-range value and the first beyond.
            for k in [1, 2, bins as Time / 2, bins as Time - 1] {
                samples.extend([k * bin - 1, k * bin, k * bin + 1]);
            }
            samples.extend([edge - 1, edge]);
            let mut overflow = 0;
            for &d in &samples {
                h.add(d);
                match expect.get_mut((d / bin) as usize) {
                    Some(c) => *c += 1,
                    None => overflow += 1,
                }
            }
            assert_eq!(h.counts, expect, "bin {bin}");
            assert_eq!(h.overflow, overflow);
        }
    }

    #[test]
    fn quantiles_and_mean_of_a_known_sample() {
        let mut h = DelayHistogram::new(10, 100);
        for d in 0..1000 {
            h.add(d); // uniform on 0..999: bins of 10 hold 10 each
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.mean(), 499.5);
        assert_eq!(h.quantile(0.5), 500);
        assert_eq!(h.quantile(0.9), 900);
        h.add(5000); // overflow
        assert_eq!(h.quantile(1.0), 5000);
        let base = h.clone();
        h.add(15);
        let d = h.since(&base);
        assert_eq!((d.count(), d.quantile(0.5)), (1, 20));
        assert_eq!(
            d.nonzero_bins().collect::<Vec<_>>(),
            vec![(10, Some(10), 1)]
        );
        let bins: Vec<_> = h.nonzero_bins().collect();
        assert_eq!(bins.len(), 101);
        assert_eq!(bins[100], (1000, None, 1));
        assert_eq!(bins.iter().map(|b| b.2).sum::<u64>(), h.count());
    }

    /// Every sample 3,992 in bins of 100: the bin's upper edge (4,000) would put the
    /// quantiles above the maximum; they are the maximum.
    #[test]
    fn quantiles_never_exceed_the_maximum() {
        let mut h = DelayHistogram::new(100, 100);
        for _ in 0..10 {
            h.add(3992);
        }
        assert_eq!(
            (h.quantile(0.5), h.quantile(0.99), h.max()),
            (3992, 3992, 3992)
        );
    }
}
