//! What the integer representation can hold: every physical quantity of a scenario, by the
//! unit its key names (`_s`, `_ms`, `_us`: a time; `_mbps`: a rate; `_hz`: a frequency, the
//! inverse of a period), checked in one walk of the document before anything runs.
//!
//! Why a walk by unit and not a check per field: times become integer nanoseconds (`Time`,
//! a u64: at most ≈ 1.8·10¹⁰ s) and rates integer bits per second, so a value that is valid as
//! a number can still overflow (a delay of 10¹⁴ ms wraps to nearly zero), saturate (a
//! duration of 10¹¹ s never ends) or round to zero (a rate of 10⁻⁹ Mb/s divides by zero, a
//! period of 10⁻⁹ s schedules events at one instant forever). One rule per unit covers every
//! field, including the ones added later, as long as keys keep naming their unit.
//!
//! The field-specific rules (`Scenario::validate`) run first and give the sharper message
//! (e.g. "a number > 0"); this walk then bounds what they let through.

use serde_json::Value;

use crate::config::error::ConfigError;

/// The longest time a scenario may name, in seconds (about 116 days). Sums and small
/// multiples of such times (a duration plus delays, an RTO times its backoff of at most 64)
/// stay far below what a `Time` holds (≈ 1.8·10¹⁰ s), so no later arithmetic overflows.
pub const MAX_TIME_S: f64 = 1e7;

/// The shortest non-zero time, in seconds: 1 µs. Periods below it (sampling intervals, timer
/// ticks, control-law updates) would fill memory with rows or the event queue with events at
/// nearly one instant; no model of this simulator has a meaningful time constant below it.
pub const MIN_TIME_S: f64 = 1e-6;

/// Link and flow rates, Mb/s: at least 1 b/s (a rate must not round to 0 b/s) and at most
/// 10 Tb/s (a 40-byte packet still takes at least one nanosecond).
pub const MIN_RATE_MBPS: f64 = 1e-6;
pub const MAX_RATE_MBPS: f64 = 1e7;

/// The unit a key names, and its scale to seconds.
fn time_scale(key: &str) -> Option<f64> {
    if key.ends_with("_ms") {
        Some(1e-3)
    } else if key.ends_with("_us") {
        Some(1e-6)
    } else if key.ends_with("_s") {
        Some(1.0)
    } else {
        None
    }
}

/// Checks every number of the scenario document `doc` against the range its key's unit can
/// hold (module doc). Scalars must be 0 or within `[MIN, MAX]`; numbers inside arrays (the
/// points of an empirical law, an RTT matrix) only against the maximum, since such arrays
/// also hold probabilities.
pub fn check_units(doc: &Value) -> Result<(), ConfigError> {
    walk(doc, "", None)
}

fn walk(v: &Value, path: &str, unit_key: Option<&str>) -> Result<(), ConfigError> {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(child, &p, Some(k))?;
            }
            Ok(())
        },
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                match child {
                    Value::Number(n) => check_in_array(&p, unit_key, n.as_f64())?,
                    _ => walk(child, &p, unit_key)?,
                }
            }
            Ok(())
        },
        Value::Number(n) => check_scalar(path, unit_key.unwrap_or(""), n.as_f64()),
        _ => Ok(()),
    }
}

fn check_scalar(path: &str, key: &str, x: Option<f64>) -> Result<(), ConfigError> {
    let Some(x) = x else { return Ok(()) };
    if let Some(scale) = time_scale(key) {
        let (lo, hi) = (MIN_TIME_S / scale, MAX_TIME_S / scale);
        if x > 0.0 && !(lo..=hi).contains(&x) {
            let unit = &key[key.rfind('_').map_or(0, |i| i + 1)..];
            return Err(ConfigError::new(
                path,
                x,
                format!("0 or a time in [{lo:e}, {hi:e}] {unit} (1 µs to 10^7 s)"),
            ));
        }
    } else if key.ends_with("_hz") && x > 0.0 && !(1.0 / MAX_TIME_S..=1.0 / MIN_TIME_S).contains(&x)
    {
        // A frequency is a period's inverse: the same 1 µs to 10^7 s (PI's `sample_hz = 1e9`
        // scheduled an update every nanosecond and never ended).
        return Err(ConfigError::new(
            path,
            x,
            format!(
                "0 or a frequency in [{:e}, {:e}] Hz (a period of 1 µs to 10^7 s)",
                1.0 / MAX_TIME_S,
                1.0 / MIN_TIME_S
            ),
        ));
    } else if (key.ends_with("_mbps") || key == "mbps")
        && x > 0.0
        && !(MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&x)
    {
        return Err(ConfigError::new(
            path,
            x,
            format!("a rate in [{MIN_RATE_MBPS:e}, {MAX_RATE_MBPS:e}] Mb/s (1 b/s to 10 Tb/s)"),
        ));
    }
    Ok(())
}

fn check_in_array(path: &str, key: Option<&str>, x: Option<f64>) -> Result<(), ConfigError> {
    let (Some(x), Some(scale)) = (x, key.and_then(time_scale)) else {
        return Ok(());
    };
    let hi = MAX_TIME_S / scale;
    if x > hi {
        return Err(ConfigError::new(
            path,
            x,
            format!("at most {hi:e} (10^7 s)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(doc: Value) -> String {
        check_units(&doc).unwrap_err().to_string()
    }

    #[test]
    fn times_are_zero_or_between_a_microsecond_and_ten_million_seconds() {
        assert!(check_units(&json!({"duration_s": 1e7, "warmup_s": 0.0})).is_ok());
        assert!(check_units(&json!({"topology": {"access_delay_ms": 1e-3}})).is_ok());
        let e = err(json!({"duration_s": 1e11}));
        assert!(
            e.starts_with("duration_s = 100000000000: expected 0 or a time in"),
            "{e}"
        );
        let e = err(json!({"topology": {"access_delay_ms": 1e14}}));
        assert!(e.starts_with("topology.access_delay_ms = "), "{e}");
        assert!(e.contains("1e10] ms"), "{e}");
        let e = err(json!({"measure": {"interval_s": 1e-9}}));
        assert!(e.starts_with("measure.interval_s = 0.000000001"), "{e}");
        let e = err(json!({"topology": {"host_jitter_us": 0.5}}));
        assert!(e.contains("[1e0, 1e13] us"), "{e}");
    }

    #[test]
    fn rates_hold_at_least_one_bit_per_second() {
        assert!(check_units(&json!({"topology": {"bottleneck_mbps": 1e-6}})).is_ok());
        let e = err(json!({"topology": {"bottleneck_mbps": 1e-9}}));
        assert!(
            e.starts_with("topology.bottleneck_mbps = 0.000000001: expected a rate in"),
            "{e}"
        );
        // An asymmetric link's reverse rate is a rate too (a fuzzer's 1e-9 Mb/s divided by 0).
        let e = err(json!({"topology": {"bottleneck_reverse_mbps": 1e-9}}));
        assert!(
            e.starts_with("topology.bottleneck_reverse_mbps = 0.000000001: expected a rate"),
            "{e}"
        );
        // A capacity step's rate (`mbps`) has the same bounds: 1e-9 Mb/s rounded to 0 b/s.
        let e = err(json!({"topology": {"bottleneck_steps": [{"at_s": 1.0, "mbps": 1e-9}]}}));
        assert!(
            e.starts_with("topology.bottleneck_steps[0].mbps = 0.000000001: expected a rate"),
            "{e}"
        );
        let e = err(json!({"traffic": [{"kind": "udp_cbr", "rate_mbps": 1e8}]}));
        assert!(e.starts_with("traffic[0].rate_mbps = 100000000"), "{e}");
    }

    #[test]
    fn frequencies_are_periods_of_a_microsecond_to_ten_million_seconds() {
        assert!(check_units(&json!({"queue": {"sample_hz": 1e6}})).is_ok());
        assert!(check_units(&json!({"queue": {"sample_hz": 160.0}})).is_ok());
        let e = err(json!({"queue": {"sample_hz": 1e9}}));
        assert!(
            e.starts_with(
                "queue.sample_hz = 1000000000: expected 0 or a frequency in [1e-7, 1e6] Hz"
            ),
            "{e}"
        );
    }

    /// Arrays carry probabilities beside times (empirical laws): only the maximum applies.
    #[test]
    fn arrays_are_bounded_above_only() {
        let ok = json!({"traffic": [{"distributions": {"think_time_s": [[0.0, 0.0], [1e-9, 0.5], [5.0, 1.0]]}}]});
        assert!(check_units(&ok).is_ok());
        let e = err(json!({"rtt": {"rtt_ms": [[1.0, 2.0], [3.0, 1e11]]}}));
        assert!(e.starts_with("rtt.rtt_ms[1][1] = 100000000000"), "{e}");
    }

    /// Keys without a unit, and negative values (the field rules answer those), pass here.
    #[test]
    fn other_keys_are_left_to_the_field_rules() {
        assert!(check_units(&json!({"seed": 1e30, "queue": {"limit": 1e12}})).is_ok());
        assert!(check_units(&json!({"warmup_s": -1.0})).is_ok());
    }
}
