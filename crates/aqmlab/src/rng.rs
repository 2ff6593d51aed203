//! Seeded random streams, one per model component.
//!
//! Every component that draws random numbers (a traffic source, a queue, a delay box, a lossy
//! link) owns its own stream, derived from the experiment seed and a stable label
//! `(kind, index)`. Changing the queue manager therefore changes only the queue's stream: the
//! users, their pages and their round-trip times stay the same (common random numbers).
//!
//! The generator is xoshiro256++ (Blackman & Vigna, 2019), seeded through SplitMix64 as its
//! authors recommend; both are a few lines and need no dependency.

/// Labels of the components that own a stream; the numeric value is part of the derivation, so
/// never renumber an existing entry (results would change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum StreamKind {
    Queue = 1,
    DelayBox = 2,
    LinkLoss = 3,
    TrafficSource = 4,
    TcpClock = 5,
    Workload = 6,
    /// Phases of the delay emulator's per-host clocks (`net::delay_clock`).
    DelayClock = 7,
    /// Hosts' send jitter (`net::jitter`).
    HostJitter = 8,
    /// BBR's random choices (`tcp::bbr`), one stream per connection.
    TcpBbr = 9,
    /// Which connections a sampled trace keeps (`config::trace`); never drawn otherwise.
    TraceSample = 10,
    Test = 99,
}

/// SplitMix64 step (Steele, Lea, Flood 2014): used only to expand seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xoshiro256++ stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// A source of uniform numbers on [0, 1): what the queue disciplines draw their decisions from.
/// `Rng` in simulations; a replay can answer with scripted values instead (`aqm::replay`), so
/// that a discipline's decisions follow a reference run's.
pub trait UniformSource {
    fn uniform(&mut self) -> f64;
}

impl UniformSource for Rng {
    #[inline]
    fn uniform(&mut self) -> f64 {
        Rng::uniform(self)
    }
}

impl Rng {
    /// The stream of component `(kind, index)` in the experiment with `seed`.
    pub fn stream(seed: u64, kind: StreamKind, index: u64) -> Self {
        // Mix the three words through SplitMix64 so that neighbouring labels give unrelated
        // streams.
        let mut st = seed;
        let a = splitmix64(&mut st);
        let mut st = a ^ (kind as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let b = splitmix64(&mut st);
        let mut st = b ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1; // the all-zero state is the one state xoshiro must avoid
        }
        Rng { s }
    }

    /// A sub-stream of this stream's component, e.g. one per user of a traffic source.
    pub fn substream(seed: u64, kind: StreamKind, index: u64, sub: u64) -> Self {
        Self::stream(
            seed ^ sub.wrapping_mul(0x9FB2_1C65_1E98_DF25).rotate_left(17),
            kind,
            index,
        )
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on (0, 1]: safe for `ln`.
    #[inline]
    pub fn uniform_pos(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer on [0, n) by Lemire's multiply-shift (bias < n / 2^64, negligible).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Exponential with the given mean (inverse transform).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_pos().ln()
    }

    /// Standard normal by the Box–Muller transform (one draw per call; the pair's second value
    /// is discarded so that the stream position does not depend on call history).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_pos();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_label_same_stream_other_label_other_stream() {
        let mut a = Rng::stream(7, StreamKind::Queue, 0);
        let mut b = Rng::stream(7, StreamKind::Queue, 0);
        let mut c = Rng::stream(7, StreamKind::Queue, 1);
        let mut d = Rng::stream(8, StreamKind::Queue, 0);
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_passes_chi_square_over_20_bins() {
        // 20 bins, 19 degrees of freedom: the 0.999 quantile of chi^2(19) is 43.82.
        let mut r = Rng::stream(1, StreamKind::Test, 0);
        let n = 200_000;
        let mut bins = [0u32; 20];
        for _ in 0..n {
            bins[(r.uniform() * 20.0) as usize] += 1;
        }
        let e = n as f64 / 20.0;
        let chi2: f64 = bins.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 43.82, "chi2 = {chi2}");
    }

    #[test]
    fn exponential_and_normal_moments() {
        let mut r = Rng::stream(2, StreamKind::Test, 0);
        let n = 400_000;
        let mean: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        // sd of the sample mean = 3/sqrt(n) = 0.0047; allow 5 sd.
        assert!((mean - 3.0).abs() < 0.024, "{mean}");
        let xs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.008 && (v - 1.0).abs() < 0.012, "{m} {v}");
    }
}
