//! Python bindings of the aqmlab core: module `aqmlab._core`.
//!
//! Thin on purpose: the Python package owns configuration files, storage and reports. This
//! module parses a scenario given as JSON, drives a `Simulation` and hands record tables back
//! as plain Python containers, or encodes them to Parquet files for a run that has a
//! directory (`ParquetSink`, `sink.rs`: the Python package still decides where and what).
//!
//! Errors: a bad scenario raises `ValueError` with one line naming the field path; a Rust
//! panic never unwinds into Python (it is caught and raised as `RuntimeError`, and the
//! simulation is then unusable).

mod json_errors;
mod queue_kinds;
mod sink;
mod table_file;
mod zstd_pages;

use std::any::Any;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Mutex, Once};

use aqmlab::config::Scenario;
use aqmlab::measure::{Column, Table};
use aqmlab::sim::Simulation;
use aqmlab::tcp::config::TcpConfig;
use aqmlab::units::{as_secs, secs, Time, MS};
use json_errors::parse_json;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

thread_local! {
    /// Message and location of the last panic on this thread (set by our panic hook).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

// `measure.columns` names a column the table does not have: args (table, column, [its
// columns]), for the Python side to word (`aqmlab.runs.runner`).
pyo3::create_exception!(_core, UnknownColumn, pyo3::exceptions::PyLookupError);

/// Replaces the default panic hook (which prints to stderr) with one that records the message
/// for the exception; with `AQMLAB_DEBUG` set it also prints it and a backtrace.
fn install_panic_hook() {
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let msg = payload_message(info.payload());
            let loc = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let text = format!("{msg}{loc}");
            if std::env::var_os("AQMLAB_DEBUG").is_some_and(|v| !v.is_empty() && v != "0") {
                eprintln!(
                    "aqmlab core panicked: {text}\n{}",
                    std::backtrace::Backtrace::force_capture()
                );
            }
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
        }));
    });
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning a panic into a `RuntimeError` with a one-line message.
fn guard<T>(what: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let text = LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| payload_message(payload.as_ref()));
        PyRuntimeError::new_err(format!(
            "internal error in the simulator core during {what}: {}",
            text.replace('\n', " ")
        ))
    })
}

/// Parses and validates a scenario; every error is one line.
fn parse_scenario(json: &str) -> Result<Scenario, String> {
    let scenario: Scenario = parse_json(json)?;
    scenario.validate().map_err(|e| e.to_string())?;
    Scenario::check_units(json)?;
    Ok(scenario)
}

fn column_parts<'py>(py: Python<'py>, col: Column) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match col {
        Column::U64(v) => ("u64", v.into_pyobject(py)?.into_any()),
        Column::I64(v) => ("i64", v.into_pyobject(py)?.into_any()),
        Column::F64(v) => ("f64", v.into_pyobject(py)?.into_any()),
        Column::Bool(v) => ("bool", v.into_pyobject(py)?.into_any()),
        Column::Str(v) => ("str", v.into_pyobject(py)?.into_any()),
    })
}

fn append_column(into: &mut Column, from: Column) -> Result<(), String> {
    match (into, from) {
        (Column::U64(a), Column::U64(b)) => a.extend(b),
        (Column::I64(a), Column::I64(b)) => a.extend(b),
        (Column::F64(a), Column::F64(b)) => a.extend(b),
        (Column::Bool(a), Column::Bool(b)) => a.extend(b),
        (Column::Str(a), Column::Str(b)) => a.extend(b),
        _ => return Err("a column changed type between batches".to_string()),
    }
    Ok(())
}

/// Concatenates batches of the same table, keeping first-seen order.
fn merge_tables(tables: Vec<Table>) -> Result<Vec<Table>, String> {
    let mut out: Vec<Table> = Vec::new();
    for t in tables {
        if let Some(existing) = out.iter_mut().find(|e| e.name == t.name) {
            if existing.columns.len() != t.columns.len() {
                return Err(format!(
                    "table {} changed its columns between batches",
                    t.name
                ));
            }
            for ((n1, c1), (n2, c2)) in existing.columns.iter_mut().zip(t.columns) {
                if *n1 != n2 {
                    return Err(format!(
                        "table {} changed its columns between batches",
                        t.name
                    ));
                }
                append_column(c1, c2).map_err(|e| format!("table {}: {e}", t.name))?;
            }
        } else {
            out.push(t);
        }
    }
    Ok(out)
}

/// `{table: {column: values}}`, or with `typed` `{table: {column: (dtype, values)}}` where
/// dtype is one of "u64", "i64", "f64", "bool", "str".
fn tables_to_py<'py>(
    py: Python<'py>,
    tables: Vec<Table>,
    typed: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let tables = merge_tables(tables).map_err(PyRuntimeError::new_err)?;
    let out = PyDict::new(py);
    for t in tables {
        let cols = PyDict::new(py);
        for (name, col) in t.columns {
            let (dtype, values) = column_parts(py, col)?;
            if typed {
                cols.set_item(
                    name,
                    PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), values])?,
                )?;
            } else {
                cols.set_item(name, values)?;
            }
        }
        out.set_item(t.name, cols)?;
    }
    Ok(out)
}

fn json_to_py<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (json,))
}

// `run_until` releases the GIL, so the simulation may be driven from any thread: it must be
// `Send` (no `Rc`, no thread-bound state inside).
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Simulation>();
};

struct State {
    /// `None` once a panic left the simulation in an unknown state.
    sim: Option<Simulation>,
}

/// A run of one scenario, driven in chunks.
#[pyclass(name = "Simulation", module = "aqmlab._core", frozen)]
struct PySimulation {
    state: Mutex<State>,
}

impl PySimulation {
    fn with<T>(&self, what: &str, f: impl FnOnce(&mut Simulation) -> T) -> PyResult<T> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| PyRuntimeError::new_err("simulation state poisoned"))?;
        let sim = state.sim.as_mut().ok_or_else(|| {
            PyRuntimeError::new_err("this simulation was aborted by an earlier internal error")
        })?;
        let result = guard(what, || f(sim));
        if result.is_err() {
            state.sim = None;
        }
        result
    }
}

#[pymethods]
impl PySimulation {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str) -> PyResult<Self> {
        let scenario = parse_scenario(scenario_json).map_err(PyValueError::new_err)?;
        let sim = py.detach(|| guard("setup", || Simulation::new(scenario)))?;
        let sim = sim.map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PySimulation {
            state: Mutex::new(State { sim: Some(sim) }),
        })
    }

    /// Runs every event up to `t_s` simulated seconds (capped at the end of the run); the GIL
    /// is released meanwhile.
    fn run_until(&self, py: Python<'_>, t_s: f64) -> PyResult<()> {
        if !(t_s.is_finite() && t_s >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "run_until: t_s = {t_s}: expected a finite time ≥ 0 (seconds)"
            )));
        }
        // In slices of simulated time, checking for signals between them, so that Ctrl-C or
        // SIGTERM stops the run within a fraction of a second instead of at the end of the
        // chunk, however long that is. The slice adapts to keep each near 0.1 s of wall time
        // (the core's event loop itself stays free of any check: no cost per event).
        let t = secs(t_s);
        let mut step: Time = 10 * MS;
        loop {
            let now = self.with("now", |s| s.now())?;
            let until = t.min(now.saturating_add(step));
            let t0 = std::time::Instant::now();
            py.detach(|| self.with("run_until", |s| s.run_until(until)))?;
            if until >= t || self.with("finished", |s| s.finished())? {
                return Ok(());
            }
            py.check_signals()?;
            let wall = t0.elapsed().as_secs_f64();
            if wall < 0.05 {
                step = step.saturating_mul(2);
            } else if wall > 0.2 {
                step = (step / 2).max(1);
            }
        }
    }

    /// Simulated time reached, in seconds.
    fn now(&self) -> PyResult<f64> {
        self.with("now", |s| as_secs(s.now()))
    }

    /// End of the run, in simulated seconds.
    fn end_time(&self) -> PyResult<f64> {
        self.with("end_time", |s| as_secs(s.end_time()))
    }

    fn finished(&self) -> PyResult<bool> {
        self.with("finished", |s| s.finished())
    }

    /// Records produced since the last drain: `{table: {column: list}}`.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = py.detach(|| self.with("drain", |s| s.drain()))?;
        tables_to_py(py, tables, false)
    }

    /// Like `drain`, with each column as `(dtype, list)`.
    fn drain_typed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = py.detach(|| self.with("drain", |s| s.drain()))?;
        tables_to_py(py, tables, true)
    }

    /// Ends the run and returns the last records: `{table: {column: list}}`.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = py.detach(|| self.with("finish", |s| s.finish()))?;
        tables_to_py(py, tables, false)
    }

    /// Like `finish`, with each column as `(dtype, list)`.
    fn finish_typed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = py.detach(|| self.with("finish", |s| s.finish()))?;
        tables_to_py(py, tables, true)
    }

    /// Moves the records produced since the last drain into `sink` (no Python objects made).
    fn drain_into(&self, py: Python<'_>, sink: &PyParquetSink) -> PyResult<()> {
        let tables = py.detach(|| self.with("drain", |s| s.drain()))?;
        sink.add(py, tables)
    }

    /// Ends the run and moves the last records into `sink`.
    fn finish_into(&self, py: Python<'_>, sink: &PyParquetSink) -> PyResult<()> {
        let tables = py.detach(|| self.with("finish", |s| s.finish()))?;
        sink.add(py, tables)
    }

    /// The packet captures' pcap bytes encoded since the last call, `[(file name, bytes)]`
    /// (each capture's file header in its first batch); empty without `[[trace.pcap]]`.
    fn drain_captures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let parts = py.detach(|| self.with("drain_captures", |s| s.drain_captures()))?;
        let items = parts
            .into_iter()
            .map(|(name, bytes)| (name, PyBytes::new(py, &bytes)))
            .collect::<Vec<_>>();
        PyList::new(py, items)
    }

    /// Records every segment sent from now on (`trace`): for packet-level comparisons.
    fn enable_trace(&self) -> PyResult<()> {
        self.with("enable_trace", |s| s.enable_trace())
    }

    /// Scripts `count` packets with sequence number `seq` (SYNs when `syn`, else data
    /// segments; with `ack`, pure ACKs acknowledging `seq`) on link `link` to be lost, or with
    /// `mark` to have CE set, after the first `skip` such packets have passed
    /// (`ScriptedLoss`: the n-th transmission is `skip = n - 1`).
    #[pyo3(signature = (link, seq, syn=false, count=1, mark=false, ack=false, skip=0))]
    #[allow(clippy::too_many_arguments)]
    fn script_loss(
        &self,
        link: u32,
        seq: u64,
        syn: bool,
        count: u32,
        mark: bool,
        ack: bool,
        skip: u32,
    ) -> PyResult<()> {
        let links = self.with("script_loss", |s| s.link_count())?;
        if link as usize >= links {
            return Err(PyValueError::new_err(format!(
                "script_loss: link = {link}: expected a link id below {links}"
            )));
        }
        if ack && syn {
            return Err(PyValueError::new_err(
                "script_loss: ack = true with syn = true: expected one kind of packet, a SYN \
                 or a pure ACK",
            ));
        }
        self.with("script_loss", |s| {
            s.script_loss(
                link,
                aqmlab::net::link::ScriptedLoss {
                    seq,
                    syn,
                    count,
                    mark,
                    ack,
                    skip,
                },
            )
        })
    }

    /// The segments sent since `enable_trace`, as `{column: list}` (`Simulation::trace_table`).
    fn trace<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let table = self.with("trace", |s| s.trace_table())?;
        let d = tables_to_py(py, vec![table], false)?;
        Ok(d.get_item("segments")?
            .expect("the segments table")
            .downcast_into::<PyDict>()?)
    }

    /// Whole-run totals from the core, as a dict.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = self.with("summary", |s| s.summary_json())?;
        json_to_py(py, &json)
    }

    /// Engine counters (events, simulated time, packets), as a dict.
    fn engine_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = self
            .with("engine_stats", |s| serde_json::to_string(&s.engine_stats()))?
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        json_to_py(py, &json)
    }

    /// `engine_stats()["events"]` without the dict (a JSON text parsed in Python, 0.1 ms): a
    /// run's progress reads it after every chunk.
    fn events(&self) -> PyResult<u64> {
        self.with("events", |s| s.engine_stats().events)
    }
}

/// A run's record tables written to Parquet files in `directory`, one per table, in row
/// groups of `row_group` rows (`sink.rs`). `skip`: tables not written; `columns`: per table,
/// the columns kept, in that order. Fed by `Simulation.drain_into`/`finish_into`; the files
/// are complete only when `close` has returned.
#[pyclass(name = "ParquetSink", module = "aqmlab._core", frozen)]
struct PyParquetSink {
    sink: Mutex<sink::Sink>,
}

impl PyParquetSink {
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, sink::Sink>> {
        self.sink
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Parquet sink state poisoned"))
    }

    fn add(&self, py: Python<'_>, tables: Vec<Table>) -> PyResult<()> {
        // Without the GIL: the call waits when the writer thread is behind.
        py.detach(|| self.lock().map(|mut s| s.add(tables)))?
            .map_err(|e| match e {
                sink::SinkError::UnknownColumn(table, column, names) => {
                    UnknownColumn::new_err((table, column, names))
                },
                sink::SinkError::Changed(table) => PyRuntimeError::new_err(format!(
                    "the core changed the columns of table {table} between batches"
                )),
                sink::SinkError::Write(e) => write_error(e),
            })
    }
}

/// `OSError(errno, strerror, filename)` as Python raises it for a failed write (the runner
/// words it), or `OSError(message)` when the cause was not the operating system's.
fn write_error(e: sink::WriteError) -> PyErr {
    match e.errno {
        Some(errno) => {
            let text = std::io::Error::from_raw_os_error(errno).to_string();
            // "File too large (os error 27)": the strerror part, as Python's.
            let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
            PyOSError::new_err((errno, strerror, e.file))
        },
        None if e.file.as_os_str().is_empty() => PyOSError::new_err(e.message),
        None => PyOSError::new_err(format!("{}: {}", e.file.display(), e.message)),
    }
}

#[pymethods]
impl PyParquetSink {
    #[new]
    #[pyo3(signature = (directory, row_group, skip=Vec::new(), columns=HashMap::new()))]
    fn new(
        directory: PathBuf,
        row_group: usize,
        skip: Vec<String>,
        columns: HashMap<String, Vec<String>>,
    ) -> PyResult<Self> {
        if row_group == 0 {
            return Err(PyValueError::new_err(
                "row_group = 0: expected at least 1 row",
            ));
        }
        let skip: HashSet<String> = skip.into_iter().collect();
        let sink =
            sink::Sink::new(directory, row_group, skip, columns).map_err(PyOSError::new_err)?;
        Ok(PyParquetSink {
            sink: Mutex::new(sink),
        })
    }

    /// Rows accepted so far per table, `[(table, rows)]` in the order the tables appeared.
    fn rows(&self) -> PyResult<Vec<(String, u64)>> {
        Ok(self
            .lock()?
            .rows()
            .iter()
            .map(|(n, r)| (n.to_string(), *r))
            .collect())
    }

    /// The columns of each file written, `{table: [(column, kind)]}` in the file's order
    /// (kinds "u64", "i64", "f64", "bool", "str"): what a study's catalog needs to know that
    /// its runs' files of a table share one schema, without reading them.
    fn columns(&self) -> PyResult<HashMap<String, Vec<(String, String)>>> {
        Ok(self
            .lock()?
            .layouts()
            .iter()
            .map(|(table, layout)| {
                let cols = layout
                    .iter()
                    .map(|(c, k)| (c.to_string(), k.name().to_string()))
                    .collect();
                (table.to_string(), cols)
            })
            .collect())
    }

    /// Writes what is left and closes the files (waiting for the writer); `OSError` if any
    /// write failed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.lock().map(|mut s| s.close()))?
            .map_err(write_error)
    }

    /// Stops writing; the files are left incomplete (for the caller to remove).
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.lock().map(|mut s| s.abort()))
    }
}

/// Parameters of a TCP preset, as a dict of `[tcp]` keys.
#[pyfunction]
fn tcp_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let cfg = TcpConfig::preset(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "tcp.preset = \"{name}\": expected one of {}",
            TcpConfig::PRESETS.join(", ")
        ))
    })?;
    let json = serde_json::to_string(&cfg).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    json_to_py(py, &json)
}

/// Every queue kind with its defaults (`aqmlab queues`): a list of (kind, table, required
/// keys), the table with every default filled in and `None` for a required key.
#[pyfunction(name = "queue_kinds")]
fn queue_kinds_py<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    let mut out = Vec::new();
    for kind in queue_kinds::kinds() {
        let (table, required) = queue_kinds::defaults(&kind).map_err(PyRuntimeError::new_err)?;
        out.push(serde_json::json!([kind, table, required]));
    }
    json_to_py(py, &serde_json::Value::Array(out).to_string())
}

/// Names of the TCP presets.
#[pyfunction]
fn tcp_presets<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, TcpConfig::PRESETS)
}

/// What a run of the scenario (JSON) will cost, before running it (`sim::estimate`): events,
/// wall time, peak memory and its parts, as a dict; `ValueError` if the scenario is invalid.
#[pyfunction]
fn estimate<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let sc = parse_scenario(scenario_json).map_err(PyValueError::new_err)?;
    let est = aqmlab::sim::estimate::estimate(&sc);
    let json = serde_json::to_string(&est).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    json_to_py(py, &json)
}

/// Checks a scenario (JSON) without building it; raises `ValueError` with one line.
#[pyfunction]
fn validate_scenario(scenario_json: &str) -> PyResult<()> {
    parse_scenario(scenario_json)
        .map(|_| ())
        .map_err(PyValueError::new_err)
}

/// The discipline of a scenario's `[queue]` table (JSON) for a link of `rate_bps`.
fn replay_aqm(
    queue_json: &str,
    rate_bps: f64,
    mean_pkt_size: u32,
    link_delay_s: f64,
) -> PyResult<(aqmlab::aqm::Aqm, aqmlab::units::BitsPerSec)> {
    use aqmlab::aqm::config::AqmConfig;
    let cfg: AqmConfig = parse_json(queue_json).map_err(PyValueError::new_err)?;
    cfg.validate("queue")
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if !(rate_bps.is_finite() && rate_bps >= 1.0) {
        return Err(PyValueError::new_err(format!(
            "rate_bps = {rate_bps}: expected a rate ≥ 1 bit/s"
        )));
    }
    if !(link_delay_s.is_finite() && link_delay_s >= 0.0) || mean_pkt_size == 0 {
        return Err(PyValueError::new_err(format!(
            "link_delay_s = {link_delay_s}, mean_pkt_size = {mean_pkt_size}: expected a delay ≥ 0 and a size ≥ 1"
        )));
    }
    let rate = aqmlab::units::BitsPerSec(rate_bps.round() as u64);
    let aqm = guard("building a queue", || {
        cfg.build_for_link(rate, mean_pkt_size, secs(link_delay_s))
    })?;
    Ok((aqm, rate))
}

/// Arrivals from parallel lists (times in seconds), checked.
fn replay_arrivals(
    times_s: &[f64],
    sizes: &[u32],
    ect: &[bool],
) -> PyResult<Vec<aqmlab::aqm::replay::Arrival>> {
    if sizes.len() != times_s.len() || ect.len() != times_s.len() {
        return Err(PyValueError::new_err(
            "times_s, sizes and ect: expected lists of the same length",
        ));
    }
    let mut last = 0.0;
    let mut out = Vec::with_capacity(times_s.len());
    for ((&t, &size), &ect) in times_s.iter().zip(sizes).zip(ect) {
        if !(t.is_finite() && t >= last) {
            return Err(PyValueError::new_err(format!(
                "times_s: {t} after {last}: expected finite times ≥ 0, in order"
            )));
        }
        last = t;
        out.push(aqmlab::aqm::replay::Arrival {
            t: secs(t),
            size,
            ect,
        });
    }
    Ok(out)
}

/// Replays arrivals at one queue (times in seconds, sizes in bytes, ECN capability) through the
/// discipline `queue_json` (a scenario's `[queue]` table as JSON) in front of a link of
/// `rate_bps`, its random decisions drawn from stream `seed` (`aqm::replay`, free mode).
/// Returns `{"arrivals": {...}, "departures": {...}, "ticks": {...}}` of column lists.
#[pyfunction]
#[pyo3(signature = (queue_json, rate_bps, mean_pkt_size, link_delay_s, times_s, sizes, ect, seed=1))]
#[allow(clippy::too_many_arguments)]
fn replay_queue<'py>(
    py: Python<'py>,
    queue_json: &str,
    rate_bps: f64,
    mean_pkt_size: u32,
    link_delay_s: f64,
    times_s: Vec<f64>,
    sizes: Vec<u32>,
    ect: Vec<bool>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use aqmlab::aqm::replay::{replay, Mode};
    let (aqm, rate) = replay_aqm(queue_json, rate_bps, mean_pkt_size, link_delay_s)?;
    let arrivals = replay_arrivals(&times_s, &sizes, &ect)?;
    let tables = guard("a queue replay", || {
        let rng = aqmlab::rng::Rng::stream(seed, aqmlab::rng::StreamKind::Queue, 0);
        replay(aqm, rate, &arrivals, Mode::Free(rng)).tables()
    })?;
    tables_to_py(py, tables, false)
}

/// Replays a reference's log at its queue (`aqm::replay::replay_log`): `events` are "arrival"
/// (with its size, ECN capability and the reference's outcome: "accepted", "marked" or
/// "dropped"), "dequeue" or "idle", at `times_s`; the other lists' entries are ignored for
/// non-arrivals. Returns the same tables as `replay_queue`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn replay_queue_log<'py>(
    py: Python<'py>,
    queue_json: &str,
    rate_bps: f64,
    mean_pkt_size: u32,
    link_delay_s: f64,
    events: Vec<String>,
    times_s: Vec<f64>,
    sizes: Vec<u32>,
    ect: Vec<bool>,
    outcomes: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    use aqmlab::aqm::replay::{replay_log, Event, Outcome};
    let (aqm, _) = replay_aqm(queue_json, rate_bps, mean_pkt_size, link_delay_s)?;
    if events.len() != times_s.len() || outcomes.len() != times_s.len() {
        return Err(PyValueError::new_err(
            "events, times_s and outcomes: expected lists of the same length",
        ));
    }
    let arrivals = replay_arrivals(&times_s, &sizes, &ect)?;
    let mut log = Vec::with_capacity(events.len());
    for ((kind, a), outcome) in events.iter().zip(arrivals).zip(&outcomes) {
        log.push(match kind.as_str() {
            "arrival" => Event::Arrival(
                a,
                match outcome.as_str() {
                    "accepted" => Outcome::Accepted,
                    "marked" => Outcome::Marked,
                    "dropped" => Outcome::Dropped,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "outcomes: \"{other}\": expected accepted, marked or dropped"
                        )))
                    },
                },
            ),
            "dequeue" => Event::Dequeue(a.t),
            "idle" => Event::Idle(a.t),
            other => {
                return Err(PyValueError::new_err(format!(
                    "events: \"{other}\": expected arrival, dequeue or idle"
                )))
            },
        });
    }
    let tables = guard("a queue log replay", || replay_log(aqm, &log).tables())?;
    tables_to_py(py, tables, false)
}

/// Replays a schedule of queue events (`aqm::schedule_replay`) through the discipline
/// `queue_json` (built for a link of `rate_bps`): `kinds` has one letter per step, `E` an
/// arrival (with its size, DS byte and flow hash from the lists), `D` a dequeue, `T` the
/// periodic update, at `times_ns`; the other lists' entries are ignored for non-arrivals.
/// `words` is the recorded random stream, consumed as `draw` says (`u32` or `u64_top56`).
/// Returns the log, one line per step, in the kernel harness's format.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn replay_schedule(
    queue_json: &str,
    rate_bps: f64,
    mean_pkt_size: u32,
    kinds: &str,
    times_ns: Vec<u64>,
    sizes: Vec<u32>,
    ds: Vec<u8>,
    hashes: Vec<u32>,
    words: Vec<u32>,
    draw: &str,
) -> PyResult<Vec<String>> {
    use aqmlab::aqm::schedule_replay::{replay_schedule, Draw, Step};
    let (aqm, _) = replay_aqm(queue_json, rate_bps, mean_pkt_size, 0.0)?;
    let n = times_ns.len();
    if kinds.len() != n || sizes.len() != n || ds.len() != n || hashes.len() != n {
        return Err(PyValueError::new_err(
            "kinds, times_ns, sizes, ds and hashes: expected the same length",
        ));
    }
    let draw = match draw {
        "u32" => Draw::U32,
        "u64_top56" => Draw::U64Top56,
        other => {
            return Err(PyValueError::new_err(format!(
                "draw = \"{other}\": expected u32 or u64_top56"
            )))
        },
    };
    let mut steps = Vec::with_capacity(n);
    for (i, k) in kinds.bytes().enumerate() {
        if i > 0 && times_ns[i] < times_ns[i - 1] {
            return Err(PyValueError::new_err(format!(
                "times_ns[{i}]: {} before {}: expected times in order",
                times_ns[i],
                times_ns[i - 1]
            )));
        }
        let t = times_ns[i];
        steps.push(match k {
            b'E' => Step::Arrive {
                t,
                size: sizes[i],
                ds: ds[i],
                hash: hashes[i],
            },
            b'D' => Step::Dequeue(t),
            b'T' => Step::Tick(t),
            other => {
                return Err(PyValueError::new_err(format!(
                    "kinds[{i}] = {:?}: expected E, D or T",
                    other as char
                )))
            },
        });
    }
    guard("a schedule replay", || {
        replay_schedule(aqm, &steps, &words, draw)
    })
}

/// The parameters in force of the discipline `queue_json` built for a link of `rate_bps`
/// (`Aqm::params_json`: `{"kind": ..., "params": {...}}`), e.g. what tc would send the kernel
/// for `red_linux`; `ValueError` if the table is invalid.
#[pyfunction]
fn queue_params<'py>(
    py: Python<'py>,
    queue_json: &str,
    rate_bps: f64,
    mean_pkt_size: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let (aqm, _) = replay_aqm(queue_json, rate_bps, mean_pkt_size, 0.0)?;
    json_to_py(py, &aqm.params_json().to_string())
}

/// The connections PackMime-HTTP/1.0 source `source` of a run with `seed` opens in its first
/// `duration_s` seconds at `rate` connections/s, with its own RTTs (`sim::packmime_draws`):
/// `{"start_s": [...], "request_bytes": [...], ...}`, the columns of a replay file.
#[pyfunction]
#[pyo3(signature = (rate, duration_s, seed=1, source=0))]
fn packmime_draws<'py>(
    py: Python<'py>,
    rate: f64,
    duration_s: f64,
    seed: u64,
    source: u32,
) -> PyResult<Bound<'py, PyDict>> {
    if !(rate.is_finite() && rate > 0.0 && rate <= 1e5) {
        return Err(PyValueError::new_err(format!(
            "rate = {rate}: expected a number of connections/s in (0, 100000]"
        )));
    }
    if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= 1e5) {
        return Err(PyValueError::new_err(format!(
            "duration_s = {duration_s}: expected seconds in (0, 100000]"
        )));
    }
    let until = aqmlab::units::secs(duration_s);
    let table = guard("PackMime draws", || {
        aqmlab::sim::packmime_draws::packmime_draws(seed, source, rate, until)
    })?;
    let tables = tables_to_py(py, vec![table], false)?;
    Ok(tables
        .get_item("packmime_draws")?
        .expect("the table")
        .downcast_into::<PyDict>()?)
}

/// Panics inside the same guard as every simulation call (for the tests of panic handling).
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    guard("a test", || panic!("deliberate panic\nsecond line"))
}

/// Version of the core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_class::<PySimulation>()?;
    m.add_class::<PyParquetSink>()?;
    m.add("UnknownColumn", m.py().get_type::<UnknownColumn>())?;
    m.add_function(wrap_pyfunction!(tcp_preset, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_presets, m)?)?;
    m.add_function(wrap_pyfunction!(queue_kinds_py, m)?)?;
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(replay_queue, m)?)?;
    m.add_function(wrap_pyfunction!(replay_queue_log, m)?)?;
    m.add_function(wrap_pyfunction!(replay_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(queue_params, m)?)?;
    m.add_function(wrap_pyfunction!(packmime_draws, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
