//! Units of simulated time and rate.
//!
//! Simulated time is an integer number of nanoseconds (`Time`), so that event order and
//! every result are exact and reproducible; floating point appears only inside control laws
//! (RED's average, PI's probability) and in reported statistics.

/// Absolute simulated time or a duration, in nanoseconds.
pub type Time = u64;

/// Exact floor division by a divisor fixed in advance (a timer tick, a histogram bin), by a
/// multiplication: per packet, a 64-bit division costs tens of cycles, a multiplication a few.
/// With m = ⌊2^64/d⌋ = (2^64 − e)/d (0 ≤ e ≤ d), t·m/2^64 = t/d − t·e/(d·2^64), and the
/// error term is below 1 for every 64-bit t, so ⌊t·m/2^64⌋ is ⌊t/d⌋ or one less; one
/// comparison of the remainder fixes it (Granlund and Montgomery 1994, §4, in its simplest
/// form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    m: u64,
}

impl Divisor {
    pub fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        let m = ((1u128 << 64) / d as u128).min(u64::MAX as u128) as u64;
        Divisor { d, m }
    }

    /// The divisor.
    #[inline]
    pub fn get(self) -> u64 {
        self.d
    }

    /// ⌊t / d⌋, exactly.
    #[inline]
    pub fn quotient(self, t: u64) -> u64 {
        let q = ((t as u128 * self.m as u128) >> 64) as u64;
        if t - q * self.d >= self.d {
            q + 1
        } else {
            q
        }
    }
}

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// `x.round() as Time` (nearest, halves away from zero, saturating; 0 for NaN and negative
/// values), without the libm call `round` costs on baseline x86-64: truncate, then compare the
/// exact remainder with one half (the truncation is exact below 2^53 and `x` is an integer
/// above).
#[inline]
pub fn round_ns(x: f64) -> Time {
    let t = x as Time;
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

/// Converts seconds (as written in scenarios) to integer nanoseconds, rounding to nearest.
#[inline]
pub fn secs(s: f64) -> Time {
    round_ns(s * SEC as f64)
}

/// Converts milliseconds to integer nanoseconds, rounding to nearest.
#[inline]
pub fn millis(ms: f64) -> Time {
    round_ns(ms * MS as f64)
}

/// Nanoseconds as seconds, for reports.
pub fn as_secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    pub fn from_mbps(mbps: f64) -> Self {
        BitsPerSec((mbps * 1e6).round() as u64)
    }

    pub fn mbps(self) -> f64 {
        self.0 as f64 * 1e-6
    }

    /// Serialization time of `bytes` at this rate, rounded up to the next nanosecond so that a
    /// link never transmits faster than its rate.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> Time {
        // 64-bit arithmetic whenever bytes·8·10⁹ fits (any packet: up to 2.3 GB), a 128-bit
        // division (a library call) otherwise; the results are the same.
        match (bytes as u64).checked_mul(8 * SEC) {
            Some(bits) => bits.div_ceil(self.0),
            None => (bytes as u128 * 8 * SEC as u128).div_ceil(self.0 as u128) as Time,
        }
    }

    /// Packets per second of `size`-byte packets (RED's `ptc`, ARED's `C`).
    pub fn packets_per_sec(self, size: u32) -> f64 {
        self.0 as f64 / (8.0 * size as f64)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn round_ns_is_round_as_time() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(8, StreamKind::Test, 0);
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.4,
            -0.6,
            -3.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4503599627370495.5,
            9007199254740993.0,
            1.8446744073709552e19,
            1e30,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        for _ in 0..200_000 {
            let scale = 10f64.powi(r.below(20) as i32 - 3);
            xs.push(r.uniform() * scale);
            xs.push((r.below(1 << 40) as f64) + 0.5);
            xs.push(f64::from_bits(r.next_u64()));
        }
        for x in xs {
            assert_eq!(round_ns(x), x.round() as Time, "{x:e}");
        }
    }

    use super::*;

    #[test]
    fn tx_time_of_1500_bytes_at_10mbps_is_1_2_ms() {
        assert_eq!(BitsPerSec::from_mbps(10.0).tx_time(1500), 1_200_000);
        // 40-byte ACK at 100 Mb/s: 3.2 us exactly.
        assert_eq!(BitsPerSec::from_mbps(100.0).tx_time(40), 3_200);
    }

    #[test]
    fn divisor_equals_division_everywhere() {
        use crate::rng::{Rng, StreamKind};
        let mut r = Rng::stream(10, StreamKind::Test, 0);
        let mut divisors = vec![
            1,
            2,
            3,
            7,
            10_000_000,
            100_000,
            500_000_000,
            u64::MAX,
            1 << 63,
        ];
        divisors.extend((0..200).map(|_| r.below(u64::MAX) + 1));
        divisors.extend((0..200).map(|_| r.below(1 << 40) + 1));
        for d in divisors {
            let div = Divisor::new(d);
            let mut ts = vec![0, 1, d - 1, d, d.saturating_add(1), u64::MAX, u64::MAX - 1];
            ts.extend(
                (1..5)
                    .filter_map(|k| d.checked_mul(k))
                    .flat_map(|x| [x - 1, x, x.saturating_add(1)]),
            );
            ts.extend((0..500).map(|_| r.below(u64::MAX)));
            ts.extend((0..500).map(|_| r.below(1 << 44)));
            for t in ts {
                assert_eq!(div.quotient(t), t / d, "{t} / {d}");
            }
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 b/s = 2.666.. s -> rounded up.
        assert_eq!(BitsPerSec(3).tx_time(1), 2_666_666_667);
    }

    #[test]
    fn tx_time_is_the_same_on_both_sides_of_the_64_bit_limit() {
        // 2,305,843,009 bytes is the largest size whose bit count times 10^9 fits in 64 bits.
        let exact = |bytes: u32, rate: u64| (bytes as u128 * 8_000_000_000).div_ceil(rate as u128);
        for bytes in [1, 1500, 2_305_843_009, 2_305_843_010, u32::MAX] {
            for rate in [3, 10_000_000, 1_000_000_007] {
                assert_eq!(BitsPerSec(rate).tx_time(bytes) as u128, exact(bytes, rate));
            }
        }
    }
}
