//! The error every invalid scenario field becomes (which field, its value, what is allowed),
//! and the checks that the scenario's sections share. It depends on nothing else in the
//! crate, so every configuration module below `config` can use it without a cycle.

use std::fmt;

/// A configuration problem: which field, its value, and what is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub value: String,
    pub allowed: String,
}

impl ConfigError {
    pub fn new(
        field: impl Into<String>,
        value: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> Self {
        ConfigError {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {}: expected {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ConfigError {}

/// `v` within `range` (an integer field with bounds), else the error naming them.
pub(crate) fn integer_in(
    field: impl Into<String>,
    v: impl Into<u64>,
    range: std::ops::RangeInclusive<u64>,
) -> Result<(), ConfigError> {
    let v = v.into();
    if range.contains(&v) {
        Ok(())
    } else {
        let (lo, hi) = range.into_inner();
        Err(ConfigError::new(
            field,
            v,
            format!("an integer in {lo}..={hi}"),
        ))
    }
}

/// A finite number > 0.
pub(crate) fn positive(field: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(field, v, "a number > 0"))
    }
}

pub(crate) fn non_negative(field: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(field, v, "a number ≥ 0"))
    }
}

/// In [0, 1).
pub(crate) fn probability(field: &str, v: f64) -> Result<(), ConfigError> {
    if (0.0..1.0).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(field, v, "a probability in [0, 1)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both bounds are allowed, one past either is refused with the field, the value and the
    /// range in the message.
    #[test]
    fn integer_in_accepts_the_bounds_and_names_the_range() {
        assert!(integer_in("traffic[0].users", 1u32, 1..=64).is_ok());
        assert!(integer_in("traffic[0].users", 64u32, 1..=64).is_ok());
        let e = integer_in("traffic[0].users", 0u32, 1..=64).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.value.as_str(), e.allowed.as_str()),
            ("traffic[0].users", "0", "an integer in 1..=64")
        );
        let e = integer_in("topology.left_hosts", 1_000_001u32, 1..=1_000_000).unwrap_err();
        assert_eq!(e.value, "1000001");
        assert_eq!(e.allowed, "an integer in 1..=1000000");
    }
}
