//! An `ftp` traffic entry's checks (`TrafficConfig::Ftp`); the source itself is
//! `sim::ftp`.

use super::error::{non_negative, ConfigError};
use super::TrafficConfig;

/// Checks an `ftp` entry (`p` = its field path).
pub(super) fn validate(p: &str, tr: &TrafficConfig) -> Result<(), ConfigError> {
    let TrafficConfig::Ftp {
        sessions,
        rate,
        size,
        think_mean_s,
        start_s,
        start_spread_s,
        ..
    } = tr
    else {
        unreachable!("an ftp entry")
    };
    match (sessions, rate) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ConfigError::new(
                format!("{p}.sessions"),
                sessions.map_or("absent".to_string(), |s| s.to_string()),
                "either sessions (closed loop) or rate (Poisson arrivals per second), not both",
            ))
        },
        (Some(n), None) if *n == 0 || *n > 10_000_000 => {
            return Err(ConfigError::new(
                format!("{p}.sessions"),
                n,
                "an integer in 1..=10000000",
            ))
        },
        (None, Some(r)) if !(r.is_finite() && *r > 0.0 && *r <= 1e6) => {
            return Err(ConfigError::new(
                format!("{p}.rate"),
                r,
                "transfers per second in (0, 1e6]",
            ))
        },
        _ => {},
    }
    size.validate(&format!("{p}.size"))?;
    for (name, v) in [
        ("think_mean_s", *think_mean_s),
        ("start_s", *start_s),
        ("start_spread_s", *start_spread_s),
    ] {
        non_negative(&format!("{p}.{name}"), v)?;
    }
    Ok(())
}
