//! Where a run's drained records go when the run has a directory: one Parquet file per table,
//! written on a thread of its own (`TableFile`).
//!
//! Why not in Python: the records used to cross into Python as lists of Python numbers, become
//! Arrow arrays and be written by pyarrow. For the ns-2 anchor run that cost 0.35 s of CPU
//! beside the core's 0.9 s, and `import pyarrow.parquet` alone is about 100 MB of resident
//! memory, more than the whole run may use. Here the core's columns go to the encoder
//! without a copy into Python, and encoding overlaps with the simulation.
//!
//! The Python side still decides the layout: the (temporary) directory, the tables left out,
//! the columns kept and their order, the row-group size; it renames the directory into place
//! only after `close` returned.
//!
//! Memory: batches wait in a channel of `QUEUED` batches (the simulation blocks when the
//! writer is that far behind), and each table holds at most one row group of rows.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use aqmlab::measure::{Column, Table};
use parquet::errors::ParquetError;

use crate::table_file::{compressor, layout, Layout, TableFile};

/// Batches (one drain each) that may wait for the writer.
const QUEUED: usize = 4;

/// Why a batch was refused.
#[derive(Debug)]
pub enum SinkError {
    /// `columns` names a column the table does not have: (table, column, its columns).
    UnknownColumn(String, String, Vec<String>),
    /// A table's columns differ from its first batch's (a core bug).
    Changed(String),
    /// Writing failed (disk full, directory removed).
    Write(WriteError),
}

/// A file the writer could not write, and why.
#[derive(Debug)]
pub struct WriteError {
    pub file: PathBuf,
    /// The operating system's error number, when the cause was one (ENOSPC, EFBIG...).
    pub errno: Option<i32>,
    pub message: String,
}

impl WriteError {
    fn new(file: PathBuf, e: &ParquetError) -> Self {
        let io = match e {
            ParquetError::External(inner) => inner.downcast_ref::<std::io::Error>(),
            _ => None,
        };
        WriteError {
            file,
            errno: io.and_then(std::io::Error::raw_os_error),
            message: io.map_or_else(|| e.to_string(), ToString::to_string),
        }
    }

    fn other(message: &str) -> Self {
        WriteError {
            file: PathBuf::new(),
            errno: None,
            message: message.to_string(),
        }
    }
}

pub struct Sink {
    skip: HashSet<String>,
    columns: HashMap<String, Vec<String>>,
    layouts: HashMap<&'static str, Layout>,
    rows: Vec<(&'static str, u64)>,
    tx: Option<SyncSender<Vec<Table>>>,
    writer: Option<JoinHandle<Result<(), WriteError>>>,
    abort: Arc<AtomicBool>,
}

impl Sink {
    /// A sink writing into `directory` (which exists); `skip`: tables not written; `columns`:
    /// the columns kept, in this order, per table (other tables keep all theirs).
    pub fn new(
        directory: PathBuf,
        row_group: usize,
        skip: HashSet<String>,
        columns: HashMap<String, Vec<String>>,
    ) -> Result<Self, String> {
        let (tx, rx) = sync_channel(QUEUED);
        let abort = Arc::new(AtomicBool::new(false));
        let stop = abort.clone();
        let writer = std::thread::Builder::new()
            .name("aqmlab-parquet".into())
            .spawn(move || write_all(&directory, row_group, &rx, &stop))
            .map_err(|e| format!("cannot start the Parquet writer: {e}"))?;
        Ok(Sink {
            skip,
            columns,
            layouts: HashMap::new(),
            rows: Vec::new(),
            tx: Some(tx),
            writer: Some(writer),
            abort,
        })
    }

    /// Rows accepted per table, in the order the tables first appeared.
    pub fn rows(&self) -> &[(&'static str, u64)] {
        &self.rows
    }

    /// The columns (names and kinds, in order) of each table's file.
    pub fn layouts(&self) -> &HashMap<&'static str, Layout> {
        &self.layouts
    }

    /// Takes one drain's tables: leaves out the skipped ones, keeps the chosen columns,
    /// counts the rows and queues the batch for the writer (waiting while it is `QUEUED`
    /// batches behind).
    pub fn add(&mut self, tables: Vec<Table>) -> Result<(), SinkError> {
        let mut batch = Vec::with_capacity(tables.len());
        for mut t in tables {
            if self.skip.contains(t.name) {
                continue;
            }
            if let Some(wanted) = self.columns.get(t.name) {
                t.columns = select(t.name, t.columns, wanted)?;
            }
            let shape = layout(&t.columns);
            match self.layouts.get(t.name) {
                Some(first) if *first != shape => return Err(SinkError::Changed(t.name.into())),
                Some(_) => {},
                None => {
                    self.layouts.insert(t.name, shape);
                },
            }
            let n = t.rows() as u64;
            match self.rows.iter_mut().find(|(name, _)| *name == t.name) {
                Some((_, rows)) => *rows += n,
                None => self.rows.push((t.name, n)),
            }
            batch.push(t);
        }
        let sent = match &self.tx {
            Some(tx) => tx.send(batch).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            // The writer stopped: its error says why.
            Err(SinkError::Write(self.join().err().unwrap_or_else(|| {
                WriteError::other("the Parquet writer stopped early")
            })))
        }
    }

    /// Writes what is left and closes every file; the files are complete when it returns Ok.
    pub fn close(&mut self) -> Result<(), WriteError> {
        self.tx = None; // the writer finishes when the channel is empty and closed
        self.join()
    }

    /// Stops the writer without finishing the files (the caller removes them).
    pub fn abort(&mut self) {
        self.abort.store(true, Ordering::Relaxed);
        self.tx = None;
        let _ = self.join();
    }

    fn join(&mut self) -> Result<(), WriteError> {
        self.tx = None;
        match self.writer.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(WriteError::other("the Parquet writer panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if self.writer.is_some() {
            self.abort();
        }
    }
}

/// The columns `wanted`, in that order.
fn select(
    table: &str,
    columns: Vec<(&'static str, Column)>,
    wanted: &[String],
) -> Result<Vec<(&'static str, Column)>, SinkError> {
    if let Some(w) = wanted.iter().find(|w| !columns.iter().any(|(n, _)| n == w)) {
        let names = columns.iter().map(|(n, _)| n.to_string()).collect();
        return Err(SinkError::UnknownColumn(table.into(), w.clone(), names));
    }
    let mut slots: Vec<Option<(&'static str, Column)>> = columns.into_iter().map(Some).collect();
    Ok(wanted
        .iter()
        .filter_map(|w| {
            let i = slots
                .iter()
                .position(|s| s.as_ref().is_some_and(|(n, _)| n == w))?;
            slots[i].take()
        })
        .collect())
}

/// The writer thread: every batch into its table's file, then the files closed once the
/// channel is closed; nothing more once `abort` is set.
fn write_all(
    directory: &Path,
    row_group: usize,
    rx: &Receiver<Vec<Table>>,
    abort: &AtomicBool,
) -> Result<(), WriteError> {
    let path = |name: &str| directory.join(format!("{name}.parquet"));
    let mut files: Vec<(&'static str, TableFile)> = Vec::new();
    // One zstd context for every page of the run's files (`zstd_pages`).
    let mut zstd = compressor().map_err(|e| WriteError::new(directory.to_path_buf(), &e))?;
    for batch in rx {
        if abort.load(Ordering::Relaxed) {
            return Ok(());
        }
        for t in batch {
            let name = t.name;
            let i = match files.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    let f = TableFile::create(&path(name), layout(&t.columns), row_group)
                        .map_err(|e| WriteError::new(path(name), &e))?;
                    files.push((name, f));
                    files.len() - 1
                },
            };
            let (_, f) = &mut files[i];
            debug_assert_eq!(*f.layout(), layout(&t.columns));
            f.append(t.columns.into_iter().map(|(_, c)| c).collect(), &mut zstd)
                .map_err(|e| WriteError::new(path(name), &e))?;
        }
    }
    if abort.load(Ordering::Relaxed) {
        return Ok(());
    }
    for (name, f) in files {
        f.finish(&mut zstd)
            .map_err(|e| WriteError::new(path(name), &e))?;
    }
    Ok(())
}
