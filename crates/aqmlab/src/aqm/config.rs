//! Scenario-level description of a queue discipline, validated and turned into an `Aqm`.
//!
//! `[queue] kind = "..."` in a scenario selects a variant; the remaining keys are that
//! discipline's parameters. Each variant validates its own fields and reports the first
//! problem as `ConfigError { field, value, allowed }`.

use serde::{Deserialize, Serialize};

use super::{Aqm, DropTail, QueueUnit};
use crate::config::ConfigError;
use crate::units::BitsPerSec;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// FIFO with a finite buffer.
    Droptail {
        /// Buffer size, in `unit`s.
        limit: u64,
        #[serde(default = "default_unit")]
        unit: QueueUnit,
    },
}

fn default_unit() -> QueueUnit {
    QueueUnit::Packets
}

impl AqmConfig {
    /// Checks every parameter; `prefix` is the path of this table in the scenario ("queue").
    pub fn validate(&self, prefix: &str) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Droptail { limit, .. } => {
                if *limit == 0 {
                    return Err(ConfigError::new(
                        format!("{prefix}.limit"),
                        limit,
                        "an integer ≥ 1",
                    ));
                }
                Ok(())
            },
        }
    }

    /// Builds the discipline for a link of rate `rate` carrying packets of typically
    /// `mean_pkt_size` bytes (used by disciplines that convert between packets and bytes).
    pub fn build(&self, rate: BitsPerSec, mean_pkt_size: u32) -> Aqm {
        let _ = (rate, mean_pkt_size);
        match self {
            AqmConfig::Droptail { limit, unit } => Aqm::DropTail(DropTail::new(*limit, *unit)),
        }
    }
}
