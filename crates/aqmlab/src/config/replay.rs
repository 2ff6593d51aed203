//! A `replay` traffic entry (`TrafficConfig::Replay`): a recorded workload, one HTTP/1.0
//! connection per row, given as columns. The Python layer reads them from a CSV file
//! (`file = "..."`, docs/scenario.md); the source itself is `sim::replay`.
//!
//! Why: two simulators that draw their own random workloads can only be compared through
//! statistics over many seeds; replaying one's recorded connections in the other pairs the
//! runs connection by connection (validation/suites/e2e.py replays ns-2.35's PackMime runs).

use serde::{Deserialize, Serialize};

use super::error::ConfigError;

/// Upper bound on the rows of one entry (the scenario is held in memory).
pub const MAX_CONNECTIONS: usize = 10_000_000;

/// The connections, one value per row in each column.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ReplayConnections {
    /// When the client opens the connection (its SYN), seconds from the start of the run;
    /// non-decreasing.
    pub start_s: Vec<f64>,
    /// The request the client writes once the connection is open, bytes (≥ 1).
    pub request_bytes: Vec<u64>,
    /// The response the server writes after its delay, bytes (≥ 1).
    pub response_bytes: Vec<u64>,
    /// The server's delay between the request's last byte and the response, seconds
    /// (absent: 0 for every row).
    #[serde(default)]
    pub server_delay_s: Option<Vec<f64>>,
    /// The connection's extra round-trip time, ms (a delay box, half in each direction as
    /// `[rtt]` places it; absent: drawn from `[rtt]` or the entry's `rtt`).
    #[serde(default)]
    pub rtt_ms: Option<Vec<f64>>,
    /// The client-side delay box's part of `rtt_ms`, ms (the rest is the server side's; read
    /// by `[delay_box] placement = "boxes"` only; absent: half).
    #[serde(default)]
    pub client_rtt_ms: Option<Vec<f64>>,
}

impl ReplayConnections {
    pub fn len(&self) -> usize {
        self.start_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_s.is_empty()
    }

    /// Checks the columns (`p` = the entry's field path): equal lengths, at least one row,
    /// starts finite, ≥ 0 and in order, sizes ≥ 1, delays finite and ≥ 0.
    pub(super) fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let n = self.len();
        if n == 0 || n > MAX_CONNECTIONS {
            return Err(ConfigError::new(
                format!("{p}.connections.start_s"),
                format!("{n} rows"),
                format!("1..={MAX_CONNECTIONS} connections"),
            ));
        }
        let lengths = [
            ("request_bytes", Some(self.request_bytes.len())),
            ("response_bytes", Some(self.response_bytes.len())),
            ("server_delay_s", self.server_delay_s.as_ref().map(Vec::len)),
            ("rtt_ms", self.rtt_ms.as_ref().map(Vec::len)),
            ("client_rtt_ms", self.client_rtt_ms.as_ref().map(Vec::len)),
        ];
        for (name, len) in lengths {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(ConfigError::new(
                    format!("{p}.connections.{name}"),
                    format!("{len} rows"),
                    format!("as many rows as start_s ({n})"),
                ));
            }
        }
        let mut last = 0.0;
        for (i, &t) in self.start_s.iter().enumerate() {
            if !(t.is_finite() && t >= last) {
                return Err(ConfigError::new(
                    format!("{p}.connections.start_s[{i}]"),
                    t,
                    format!("a time in seconds ≥ 0 and ≥ the previous row's ({last})"),
                ));
            }
            last = t;
        }
        for (name, col) in [
            ("request_bytes", &self.request_bytes),
            ("response_bytes", &self.response_bytes),
        ] {
            if let Some(i) = col.iter().position(|&b| b == 0) {
                return Err(ConfigError::new(
                    format!("{p}.connections.{name}[{i}]"),
                    0,
                    "an integer ≥ 1 (bytes)",
                ));
            }
        }
        for (name, col) in [
            ("server_delay_s", &self.server_delay_s),
            ("rtt_ms", &self.rtt_ms),
            ("client_rtt_ms", &self.client_rtt_ms),
        ] {
            let Some(col) = col else { continue };
            if let Some(i) = col.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(ConfigError::new(
                    format!("{p}.connections.{name}[{i}]"),
                    col[i],
                    "a number ≥ 0",
                ));
            }
        }
        if let Some(part) = &self.client_rtt_ms {
            let Some(total) = &self.rtt_ms else {
                return Err(ConfigError::new(
                    format!("{p}.connections.client_rtt_ms"),
                    "given",
                    "a part of rtt_ms: give rtt_ms too",
                ));
            };
            if let Some(i) = part.iter().zip(total).position(|(c, t)| c > t) {
                return Err(ConfigError::new(
                    format!("{p}.connections.client_rtt_ms[{i}]"),
                    part[i],
                    format!("a number ≤ rtt_ms[{i}] ({})", total[i]),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> ReplayConnections {
        ReplayConnections {
            start_s: vec![0.0, 0.5, 0.5],
            request_bytes: vec![300, 200, 1],
            response_bytes: vec![1, 9000, 40],
            server_delay_s: Some(vec![0.0, 0.01, 0.2]),
            rtt_ms: None,
            client_rtt_ms: None,
        }
    }

    #[test]
    fn well_formed_columns_pass() {
        assert_eq!(three().validate("traffic[0]"), Ok(()));
    }

    /// Each kind of bad column is named with its row.
    #[test]
    fn bad_columns_name_the_field_and_row() {
        let mut c = three();
        c.start_s[2] = 0.4;
        let e = c.validate("traffic[1]").unwrap_err();
        assert_eq!(e.field, "traffic[1].connections.start_s[2]");

        let mut c = three();
        c.start_s[0] = f64::NAN;
        assert_eq!(
            c.validate("t").unwrap_err().field,
            "t.connections.start_s[0]"
        );

        let mut c = three();
        c.response_bytes[1] = 0;
        assert_eq!(
            c.validate("t").unwrap_err().field,
            "t.connections.response_bytes[1]"
        );

        let mut c = three();
        c.rtt_ms = Some(vec![1.0, -1.0, 2.0]);
        assert_eq!(
            c.validate("t").unwrap_err().field,
            "t.connections.rtt_ms[1]"
        );

        let mut c = three();
        c.request_bytes.pop();
        let e = c.validate("t").unwrap_err();
        assert_eq!(e.field, "t.connections.request_bytes");
        assert!(e.allowed.contains("(3)"), "{e}");

        let mut c = three();
        c.client_rtt_ms = Some(vec![1.0, 1.0, 1.0]);
        assert_eq!(
            c.validate("t").unwrap_err().field,
            "t.connections.client_rtt_ms"
        );
        c.rtt_ms = Some(vec![1.0, 0.5, 2.0]);
        assert_eq!(
            c.validate("t").unwrap_err().field,
            "t.connections.client_rtt_ms[1]"
        );
        c.rtt_ms = Some(vec![1.0, 1.0, 2.0]);
        assert_eq!(c.validate("t"), Ok(()));

        let e = ReplayConnections::default().validate("t").unwrap_err();
        assert_eq!(e.field, "t.connections.start_s");
    }
}
