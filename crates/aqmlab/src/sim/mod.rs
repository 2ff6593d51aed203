//! A run: builds the network and traffic of a scenario and advances it in chunks.
//!
//! The caller (the Python layer, or a test) drives it:
//! `Simulation::new(scenario)?`, then `run_until(t)` in steps, `drain()` after each step to take
//! the records produced so far, and `finish()` once `finished()`, which closes the books
//! (unfinished connections are reported as such) and returns the last records.

use serde::Serialize;

use crate::config::{ConfigError, Scenario};
use crate::measure::Table;
use crate::units::{secs, Time};

/// Engine counters, for progress displays and benchmarks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    pub events: u64,
    pub sim_time_s: f64,
    pub bottleneck_packets: u64,
    pub peak_packets_in_flight: u64,
}

pub struct Simulation {
    scenario: Scenario,
    now: Time,
    end: Time,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Self, ConfigError> {
        scenario.validate()?;
        let end = secs(scenario.duration_s);
        Ok(Simulation {
            scenario,
            now: 0,
            end,
        })
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Runs every event up to `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Time) {
        self.now = t.min(self.end);
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end_time(&self) -> Time {
        self.end
    }

    pub fn finished(&self) -> bool {
        self.now >= self.end
    }

    /// Records produced since the last drain, one batch per table (possibly empty).
    pub fn drain(&mut self) -> Vec<Table> {
        Vec::new()
    }

    /// Ends the run: reports connections still open as unfinished and returns the last records.
    pub fn finish(&mut self) -> Vec<Table> {
        Vec::new()
    }

    /// Whole-run totals (bottleneck counters per direction, connection counts), as JSON.
    pub fn summary_json(&self) -> String {
        "{}".to_string()
    }

    pub fn engine_stats(&self) -> EngineStats {
        EngineStats::default()
    }
}
