//! Units of simulated time and rate.
//!
//! Simulated time is an integer number of nanoseconds (`Time`), so that event order and
//! every result are exact and reproducible; floating point appears only inside control laws
//! (RED's average, PI's probability) and in reported statistics.

/// Absolute simulated time or a duration, in nanoseconds.
pub type Time = u64;

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Converts seconds (as written in scenarios) to integer nanoseconds, rounding to nearest.
pub fn secs(s: f64) -> Time {
    (s * SEC as f64).round() as Time
}

/// Converts milliseconds to integer nanoseconds, rounding to nearest.
pub fn millis(ms: f64) -> Time {
    (ms * MS as f64).round() as Time
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

    /// Serialization time of `bytes` at this rate, rounded up to the next nanosecond so that a
    /// link never transmits faster than its rate.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> Time {
        let bits = bytes as u128 * 8 * SEC as u128;
        bits.div_ceil(self.0 as u128) as Time
    }

    /// Packets per second of `size`-byte packets (RED's `ptc`, ARED's `C`).
    pub fn packets_per_sec(self, size: u32) -> f64 {
        self.0 as f64 / (8.0 * size as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_1500_bytes_at_10mbps_is_1_2_ms() {
        assert_eq!(BitsPerSec::from_mbps(10.0).tx_time(1500), 1_200_000);
        // 40-byte ACK at 100 Mb/s: 3.2 us exactly.
        assert_eq!(BitsPerSec::from_mbps(100.0).tx_time(40), 3_200);
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 b/s = 2.666.. s -> rounded up.
        assert_eq!(BitsPerSec(3).tx_time(1), 2_666_666_667);
    }
}
