//! A timer's deadline, or none, in 8 bytes: `Option<Time>` takes 16 (a discriminant and
//! padding). Also the segment timed for an RTT sample (`Timing`), 16 bytes for the 24 of
//! `Option<(u64, Time)>`. The endpoint keeps three (retransmission, delayed ACK, pacing); each 8 bytes
//! saved is memory every packet of the connection brings into the cache (issue 34,
//! docs/performance.md "Memory per open connection"). `Time::MAX` stands for "none": no
//! deadline is that late (≈584 years of simulated time; deadlines are now plus an RTO, a
//! delayed-ACK interval or a pacing gap, each bounded by the configuration), so the
//! endpoint's behaviour is that of the `Option` it replaces.

use crate::units::Time;

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Deadline(Time);

impl Deadline {
    pub const NONE: Deadline = Deadline(Time::MAX);

    #[inline]
    pub fn at(t: Time) -> Self {
        debug_assert!(t != Time::MAX, "a deadline at the end of time");
        Deadline(t)
    }

    /// The deadline an `Option` names.
    #[inline]
    pub fn from_option(t: Option<Time>) -> Self {
        t.map_or(Deadline::NONE, Deadline::at)
    }

    #[inline]
    pub fn get(self) -> Option<Time> {
        (self.0 != Time::MAX).then_some(self.0)
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == Time::MAX
    }

    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != Time::MAX
    }

    /// The earlier of two deadlines (none if neither is set).
    #[inline]
    pub fn min(self, other: Deadline) -> Deadline {
        Deadline(self.0.min(other.0))
    }
}

/// None, as `Option::default`.
impl Default for Deadline {
    fn default() -> Self {
        Deadline::NONE
    }
}

/// Printed as the `Option<Time>` it stands for.
impl std::fmt::Debug for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The segment being timed for an RTT sample (Karn: one at a time), as `(sequence, send
/// time)`, or none: the sequence number `u64::MAX` stands for "none" (no segment starts
/// there, as for `NO_FIN`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    seq: u64,
    start: Time,
}

impl Timing {
    pub const NONE: Timing = Timing {
        seq: u64::MAX,
        start: 0,
    };

    #[inline]
    pub fn of(seq: u64, start: Time) -> Self {
        debug_assert!(
            seq != u64::MAX,
            "a timed segment at the end of sequence space"
        );
        Timing { seq, start }
    }

    #[inline]
    pub fn get(self) -> Option<(u64, Time)> {
        (self.seq != u64::MAX).then_some((self.seq, self.start))
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.seq == u64::MAX
    }
}

/// Printed as the `Option<(u64, Time)>` it stands for.
impl std::fmt::Debug for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stands_for_an_option() {
        assert_eq!(Deadline::NONE.get(), None);
        assert_eq!(Deadline::at(0).get(), Some(0));
        assert_eq!(Deadline::at(5).min(Deadline::NONE).get(), Some(5));
        assert_eq!(Deadline::NONE.min(Deadline::at(7)).get(), Some(7));
        assert_eq!(Deadline::at(9).min(Deadline::at(3)).get(), Some(3));
        assert!(Deadline::NONE.min(Deadline::NONE).is_none());
        assert_eq!(Deadline::from_option(Some(3)).get(), Some(3));
        assert!(Deadline::default().is_none());
        assert!(Deadline::from_option(None).is_none() && !Deadline::at(1).is_none());
        assert_eq!(format!("{:?}", Deadline::at(4)), "Some(4)");
        assert_eq!(format!("{:?}", Deadline::NONE), "None");
    }

    #[test]
    fn timing_stands_for_an_option() {
        assert_eq!(Timing::NONE.get(), None);
        assert!(Timing::NONE.is_none() && !Timing::of(0, 0).is_none());
        assert_eq!(Timing::of(1, 7).get(), Some((1, 7)));
        assert_eq!(format!("{:?}", Timing::of(1, 7)), "Some((1, 7))");
        assert_eq!(format!("{:?}", Timing::NONE), "None");
    }
}
