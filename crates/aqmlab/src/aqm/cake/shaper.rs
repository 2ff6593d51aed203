//! CAKE's deficit-mode shaper and per-packet overhead compensation (paper §III-A; Linux
//! `cake_set_rate`, `cake_advance_shaper`, `cake_calc_overhead`, and the shaper checks in
//! `cake_enqueue`/`cake_dequeue`).
//!
//! No token bucket: the shaper keeps the time the next packet may start
//! (`time_next_packet`), advanced by each sent packet's serialization time at the shaped
//! rate; a packet is held while that time is in the future. A failsafe schedule at 1.5× the
//! rate bounds the hold. The rate is kept as nanoseconds per byte in fixed point
//! (`rate_ns >> rate_shft`), exactly as Linux rounds it.

use crate::units::{Time, SEC};

/// A rate as time per byte: `duration(len) = (len · ns) >> shift`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Rate {
    /// Bytes per second; 0 = unlimited.
    pub bytes_per_sec: u64,
    pub ns: u64,
    pub shift: u8,
}

impl Rate {
    /// Linux `cake_set_rate`'s conversion: 2³⁴·10⁹/rate, then halved (and the shift lowered)
    /// until it fits in 34 bits; rates below 64 B/s count as 64.
    pub fn new(bytes_per_sec: u64) -> Self {
        if bytes_per_sec == 0 {
            return Rate::default();
        }
        let mut shift = 34u8;
        let mut ns = ((SEC as u128) << 34) / bytes_per_sec.max(64) as u128;
        while ns >> 34 != 0 {
            ns >>= 1;
            shift -= 1;
        }
        Rate {
            bytes_per_sec,
            ns: ns as u64,
            shift,
        }
    }

    #[inline]
    pub fn duration(&self, len: u32) -> Time {
        (len as u64 * self.ns) >> self.shift
    }

    pub fn unlimited(&self) -> bool {
        self.ns == 0
    }
}

/// Link-layer cell framing (tc-cake `atm`, `ptm`, `noatm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Atm {
    #[default]
    Noatm,
    /// ATM/AAL5: 48 payload bytes per 53-byte cell.
    Atm,
    /// PTM (VDSL2, 64b/65b): one byte per 64 or part thereof.
    Ptm,
}

/// Per-packet overhead compensation (tc-cake `overhead`, `mpu`, `atm`/`ptm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Overhead {
    /// Bytes added to each packet's IP size (may be negative).
    pub overhead: i32,
    /// Minimum packet unit: the adjusted size is at least this.
    pub mpu: u32,
    pub atm: Atm,
}

impl Overhead {
    /// Linux `cake_calc_overhead` on an IP packet of `len` bytes (aqmlab's sizes are IP
    /// sizes: Linux first removes the skb's MAC header when an overhead is set, which is
    /// the same thing).
    pub fn adjusted_len(&self, len: u32) -> u32 {
        let mut l = (len as i64 + self.overhead as i64).max(0) as u64;
        l = l.max(self.mpu as u64);
        match self.atm {
            Atm::Noatm => {},
            Atm::Atm => l = l.div_ceil(48) * 53,
            Atm::Ptm => l += l.div_ceil(64),
        }
        l.min(u32::MAX as u64) as u32
    }
}

/// The global shaper's schedule (Linux `time_next_packet`, `failsafe_next_packet`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Shaper {
    pub rate: Rate,
    pub time_next_packet: Time,
    pub failsafe_next_packet: Time,
}

impl Shaper {
    /// A packet arrives to an empty queue: a schedule left in the past restarts now. Returns
    /// whether the shaper still holds the queue (Linux `cake_enqueue` counts an overlimit and
    /// arms its watchdog then).
    pub fn on_arrival_to_empty(&mut self, now: Time) -> bool {
        if self.time_next_packet < now {
            self.time_next_packet = now;
            self.failsafe_next_packet = now;
            false
        } else {
            self.time_next_packet > now && self.failsafe_next_packet > now
        }
    }

    /// The time before which nothing may be sent, if it is in the future.
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        if self.time_next_packet > now && self.failsafe_next_packet > now {
            Some(self.time_next_packet.min(self.failsafe_next_packet))
        } else {
            None
        }
    }

    /// Charges a sent (or, `dropped`, a dropped-in-ingress-mode) packet's adjusted length.
    pub fn advance(&mut self, len: u32, dropped: bool) {
        if self.rate.unlimited() {
            return;
        }
        let d = self.rate.duration(len);
        self.time_next_packet += d;
        if !dropped {
            self.failsafe_next_packet += d + (d >> 1);
        }
    }
}

/// A tin's own schedule against its threshold rate (Linux `b->time_next_packet`): a tin
/// that has sent faster than its share is behind "now" no more.
pub fn advance_tin(time_next: &mut Time, rate: &Rate, len: u32, now: Time) {
    if rate.unlimited() {
        return;
    }
    let d = rate.duration(len);
    if *time_next < now {
        *time_next += d;
    } else if *time_next < now + d {
        *time_next = now + d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 Mbit/s = 1 250 000 B/s: 800 ns per byte, kept as 800·2²⁴ >> 24, so exact.
    #[test]
    fn rate_fixed_point() {
        let r = Rate::new(1_250_000);
        assert_eq!((r.ns, r.shift), (800 << 24, 24));
        assert_eq!(r.duration(1500), 1_200_000);
        // 3 Mbit/s = 375 000 B/s: 2666.67 ns per byte; 1500 B → 3 999 999 ns (truncated).
        assert_eq!(Rate::new(375_000).duration(1500), 3_999_999);
        assert!(Rate::new(0).unlimited());
    }

    /// tc-cake keywords: ethernet (overhead 38, mpu 84), docsis (18, mpu 64), ATM with
    /// pppoe-llcsnap (40), PTM with bridged-ptm (22).
    #[test]
    fn overhead_compensation() {
        let eth = Overhead {
            overhead: 38,
            mpu: 84,
            atm: Atm::Noatm,
        };
        assert_eq!(eth.adjusted_len(1500), 1538);
        assert_eq!(eth.adjusted_len(40), 84);
        let docsis = Overhead {
            overhead: 18,
            mpu: 64,
            atm: Atm::Noatm,
        };
        assert_eq!(docsis.adjusted_len(40), 64);
        // 1500 + 40 = 1540 → 33 cells (32.08 → 33) → 1749 B.
        let atm = Overhead {
            overhead: 40,
            mpu: 0,
            atm: Atm::Atm,
        };
        assert_eq!(atm.adjusted_len(1500), 33 * 53);
        // 1500 + 22 = 1522 → + ⌈1522/64⌉ = 24 → 1546.
        let ptm = Overhead {
            overhead: 22,
            mpu: 0,
            atm: Atm::Ptm,
        };
        assert_eq!(ptm.adjusted_len(1500), 1546);
        let neg = Overhead {
            overhead: -2000,
            mpu: 0,
            atm: Atm::Noatm,
        };
        assert_eq!(neg.adjusted_len(1500), 0);
    }

    /// Back-to-back 1500-byte packets with ethernet overhead at 10 Mbit/s leave every
    /// 1538 · 800 ns = 1 230 400 ns.
    #[test]
    fn shaper_spaces_packets_by_adjusted_length() {
        let eth = Overhead {
            overhead: 38,
            mpu: 84,
            atm: Atm::Noatm,
        };
        let mut s = Shaper {
            rate: Rate::new(1_250_000),
            ..Default::default()
        };
        assert!(!s.on_arrival_to_empty(1_000));
        let mut now = 1_000;
        let mut sent = Vec::new();
        for _ in 0..3 {
            if let Some(t) = s.hold_until(now) {
                now = t;
            }
            sent.push(now);
            s.advance(eth.adjusted_len(1500), false);
        }
        assert_eq!(sent, [1_000, 1_231_400, 2_461_800]);
    }
}
