//! The times a TCP configuration gives in milliseconds and seconds, as integer nanoseconds
//! and jiffies, computed once per configuration rather than on every segment.
//!
//! The endpoint asks for its tick, delayed-ACK interval and RTO bounds several times per
//! segment; each conversion is a floating-point product and a rounding (`units::round_ns`), and
//! the delayed-ACK engine's constants are three divisions more. A configuration is
//! `prepare`d once (`Simulation::new`); each value keeps the bit pattern of the field it came
//! from, so a field changed after that (tests change presets' fields freely) is converted
//! afresh, and an unprepared configuration converts every time: the values are always those
//! of the fields.

use crate::units::{round_ns, Time, MS, SEC};

/// One derived value and the bits of the field it was derived from.
#[derive(Clone, Copy, Default)]
pub struct Derived {
    from: u64,
    value: Time,
}

impl Derived {
    fn of(field: f64, unit: Time) -> Self {
        Derived {
            from: field.to_bits(),
            value: round_ns(field * unit as f64),
        }
    }

    /// The value for `field` (in `unit`s): the kept one if the field is unchanged.
    #[inline]
    pub fn get(&self, field: f64, unit: Time) -> Time {
        if self.from == field.to_bits() && self.from != 0 {
            self.value
        } else {
            round_ns(field * unit as f64)
        }
    }
}

/// The delayed-ACK engine's constants in jiffies (`tcp/delack.rs` `AckClock`), kept with the
/// bits of the tick and interval they come from.
#[derive(Clone, Copy, Default)]
pub struct AckJiffies {
    from: (u64, u64),
    pub ato_min: u64,
    pub delack_max: u64,
    pub half_second: u64,
}

impl AckJiffies {
    /// `TCP_ATO_MIN` = the delayed-ACK interval, `TCP_DELACK_MAX` = 200 ms and HZ/2, each
    /// rounded up to whole ticks.
    pub fn of(tick: Time, delack_interval: Time, from: (u64, u64)) -> Self {
        let tick = tick.max(1);
        AckJiffies {
            from,
            ato_min: delack_interval.div_ceil(tick),
            delack_max: (200 * MS).div_ceil(tick),
            half_second: (500 * MS).div_ceil(tick),
        }
    }

    /// Kept for these fields' bits (`tick_ms`, `delack_interval_ms`).
    #[inline]
    pub fn valid_for(&self, from: (u64, u64)) -> bool {
        self.from == from && from.0 != 0
    }
}

/// Every derived time of a configuration (`TcpConfig::prepare`). Compared equal and printed
/// as nothing: it is a cache of the fields, not part of the configuration.
#[derive(Clone, Copy, Default)]
pub struct ConfigTimes {
    pub tick: Derived,
    pub delack_interval: Derived,
    pub min_rto: Derived,
    pub max_rto: Derived,
    pub initial_rto: Derived,
    pub ack: AckJiffies,
}

impl ConfigTimes {
    pub fn new(
        tick_ms: f64,
        delack_interval_ms: f64,
        min_rto_s: f64,
        max_rto_s: f64,
        initial_rto_s: f64,
    ) -> Self {
        let tick = Derived::of(tick_ms, MS);
        let delack_interval = Derived::of(delack_interval_ms, MS);
        ConfigTimes {
            tick,
            delack_interval,
            min_rto: Derived::of(min_rto_s, SEC),
            max_rto: Derived::of(max_rto_s, SEC),
            initial_rto: Derived::of(initial_rto_s, SEC),
            ack: AckJiffies::of(
                tick.value,
                delack_interval.value,
                (tick_ms.to_bits(), delack_interval_ms.to_bits()),
            ),
        }
    }
}

impl PartialEq for ConfigTimes {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ConfigTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfigTimes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept value is the conversion of the field; a changed field is converted afresh; an
    /// empty cache (never prepared) converts every time.
    #[test]
    fn kept_values_follow_their_fields() {
        let t = ConfigTimes::new(4.0, 40.0, 0.2, 120.0, 1.0);
        assert_eq!(t.tick.get(4.0, MS), 4 * MS);
        assert_eq!(t.tick.get(10.0, MS), 10 * MS, "a changed field");
        assert_eq!(t.min_rto.get(0.2, SEC), 200 * MS);
        assert_eq!(ConfigTimes::default().max_rto.get(60.0, SEC), 60 * SEC);
        assert_eq!(
            (t.ack.ato_min, t.ack.delack_max, t.ack.half_second),
            (10, 50, 125)
        );
        assert!(t.ack.valid_for((4.0f64.to_bits(), 40.0f64.to_bits())));
        assert!(!t.ack.valid_for((4.0f64.to_bits(), 30.0f64.to_bits())));
        assert!(!ConfigTimes::default().ack.valid_for((0, 0)));
    }
}
