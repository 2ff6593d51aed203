//! A `udp_cbr` traffic entry's rules (`TrafficConfig::UdpCbr`): its checks, and the per-flow
//! rate that the simulation (`sim::udp_cbr`) and the checks both derive from it.

use super::error::{integer_in, non_negative, ConfigError};
use super::{Scenario, TrafficConfig};

/// The per-flow rate of a `udp_cbr` entry, bits per second (a `share` is of the capacity of
/// the bottleneck direction its packets cross).
pub(crate) fn flow_rate_bps(sc: &Scenario, tr: &TrafficConfig) -> f64 {
    let TrafficConfig::UdpCbr {
        flows,
        rate_mbps,
        share,
        direction,
        client_side,
        ..
    } = tr
    else {
        unreachable!("a udp_cbr entry")
    };
    // A share is of the capacity of the direction the flows' packets cross.
    let capacity = sc.bottleneck_rate_mbps(direction.bottleneck_dir(*client_side));
    match (rate_mbps, share) {
        (Some(r), _) => r * 1e6,
        (None, Some(s)) => s * capacity * 1e6 / *flows as f64,
        (None, None) => unreachable!("validated: rate_mbps or share"),
    }
}

/// Checks traffic entry `i`, a `udp_cbr` source.
pub(super) fn validate(sc: &Scenario, i: usize, tr: &TrafficConfig) -> Result<(), ConfigError> {
    let TrafficConfig::UdpCbr {
        flows,
        rate_mbps,
        share,
        packet_bytes,
        start_s,
        start_jitter_s,
        stop_s,
        ..
    } = tr
    else {
        unreachable!("a udp_cbr entry")
    };
    let p = format!("traffic[{i}]");
    integer_in(format!("{p}.flows"), *flows, 1..=1_000_000)?;
    match (rate_mbps, share) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ConfigError::new(
                format!("{p}.rate_mbps"),
                rate_mbps.map_or("absent".to_string(), |r| r.to_string()),
                "either rate_mbps (per flow) or share (of the bottleneck, all flows), not both",
            ))
        },
        (Some(r), None) if !(r.is_finite() && *r > 0.0 && *r <= 1e6) => {
            return Err(ConfigError::new(
                format!("{p}.rate_mbps"),
                r,
                "a rate in (0, 1e6] Mb/s",
            ))
        },
        (None, Some(s)) if !(s.is_finite() && *s > 0.0 && *s <= 10.0) => {
            return Err(ConfigError::new(
                format!("{p}.share"),
                s,
                "a fraction of the bottleneck capacity in (0, 10]",
            ))
        },
        _ => {},
    }
    integer_in(format!("{p}.packet_bytes"), *packet_bytes, 1..=65_535)?;
    if (*packet_bytes as f64 * 8e9 / flow_rate_bps(sc, tr)) < 1.0 {
        return Err(ConfigError::new(
            format!("{p}.rate_mbps"),
            flow_rate_bps(sc, tr) * 1e-6,
            "a rate giving at least 1 ns between packets",
        ));
    }
    non_negative(&format!("{p}.start_s"), *start_s)?;
    non_negative(&format!("{p}.start_jitter_s"), *start_jitter_s)?;
    if let Some(stop) = stop_s {
        if !(stop.is_finite() && *stop > *start_s) {
            return Err(ConfigError::new(
                format!("{p}.stop_s"),
                stop,
                format!("a time > start_s ({start_s}), or absent (the end of the run)"),
            ));
        }
    }
    Ok(())
}
