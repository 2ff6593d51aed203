//! One record table written to one Parquet file, straight from the core's columns.
//!
//! The file has the types pyarrow gave these columns when Python wrote them (readers see the
//! same schema): u64 as INT64 annotated unsigned, i64 as INT64, f64 as DOUBLE, bool as
//! BOOLEAN, str as BYTE_ARRAY annotated UTF-8; every column OPTIONAL (Arrow fields are
//! nullable; no value is ever null), zstd level 1 (pyarrow's default level), dictionary
//! pages for the strings only.
//!
//! Rows are written in row groups of exactly `row_group` rows, the last one shorter, whatever
//! sizes the batches came in: the file depends on the rows alone, not on how the run was cut
//! into chunks, and memory holds at most one row group of the table.
//!
//! Each column chunk is encoded by the parquet crate's column writer into a buffer, its pages
//! compressed with the writer thread's one zstd context (`zstd_pages`: a context per column
//! chunk, as the crate makes them, costs more than encoding a short run's chunk), then
//! appended to the row group.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use aqmlab::measure::Column;
use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::column::writer::{get_column_writer, ColumnWriter};
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, Type};
use zstd::bulk::Compressor;

use crate::zstd_pages::ZstdPages;

/// zstd's level: pyarrow's default, which wrote these files before.
pub const ZSTD_LEVEL: i32 = 1;

/// A zstd context for `TableFile`'s pages (one per writer thread).
pub fn compressor() -> Result<Compressor<'static>, ParquetError> {
    Compressor::new(ZSTD_LEVEL).map_err(|e| ParquetError::External(Box::new(e)))
}

/// The type of a column, without its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    U64,
    I64,
    F64,
    Bool,
    Str,
}

impl Kind {
    pub fn of(c: &Column) -> Kind {
        match c {
            Column::U64(_) => Kind::U64,
            Column::I64(_) => Kind::I64,
            Column::F64(_) => Kind::F64,
            Column::Bool(_) => Kind::Bool,
            Column::Str(_) => Kind::Str,
        }
    }

    /// The kind's name, as the Python side sees it (`ParquetSink.columns`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::U64 => "u64",
            Kind::I64 => "i64",
            Kind::F64 => "f64",
            Kind::Bool => "bool",
            Kind::Str => "str",
        }
    }

    fn empty(self) -> Column {
        match self {
            Kind::U64 => Column::U64(Vec::new()),
            Kind::I64 => Column::I64(Vec::new()),
            Kind::F64 => Column::F64(Vec::new()),
            Kind::Bool => Column::Bool(Vec::new()),
            Kind::Str => Column::Str(Vec::new()),
        }
    }

    fn field(self, name: &str) -> Result<Arc<Type>, ParquetError> {
        let (physical, logical) = match self {
            Kind::U64 => (PhysicalType::INT64, Some(LogicalType::integer(64, false))),
            Kind::I64 => (PhysicalType::INT64, None),
            Kind::F64 => (PhysicalType::DOUBLE, None),
            Kind::Bool => (PhysicalType::BOOLEAN, None),
            Kind::Str => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        };
        Ok(Arc::new(
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()?,
        ))
    }
}

/// The names and kinds of a table's columns, in order.
pub type Layout = Vec<(&'static str, Kind)>;

pub fn layout(columns: &[(&'static str, Column)]) -> Layout {
    columns.iter().map(|(n, c)| (*n, Kind::of(c))).collect()
}

/// An open Parquet file of one table and the rows not written yet.
pub struct TableFile {
    writer: SerializedFileWriter<BufWriter<File>>,
    /// The columns' descriptors, in order.
    columns: Vec<ColumnDescPtr>,
    /// The file's properties with compression left to `ZstdPages`.
    chunk_props: WriterPropertiesPtr,
    layout: Layout,
    pending: Vec<Column>,
    row_group: usize,
    /// Definition levels of a full row group: every value present.
    present: Vec<i16>,
}

impl TableFile {
    /// Creates `path` (replacing a file there) for a table of these columns.
    pub fn create(path: &Path, layout: Layout, row_group: usize) -> Result<Self, ParquetError> {
        let fields = layout
            .iter()
            .map(|(name, kind)| kind.field(name))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?;
        let props = properties(&layout, Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?));
        let chunk_props = Arc::new(properties(&layout, Compression::UNCOMPRESSED));
        let file = File::create(path)?;
        let writer =
            SerializedFileWriter::new(BufWriter::new(file), Arc::new(schema), Arc::new(props))?;
        let columns = writer.schema_descr().columns().to_vec();
        let pending = layout.iter().map(|(_, k)| k.empty()).collect();
        Ok(TableFile {
            writer,
            columns,
            chunk_props,
            layout,
            pending,
            row_group: row_group.max(1),
            present: Vec::new(),
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn pending_rows(&self) -> usize {
        self.pending.first().map_or(0, Column::len)
    }

    /// Adds rows (columns in the file's order and kinds, checked by the caller) and writes
    /// every full row group they complete, its pages compressed with `zstd`.
    pub fn append(
        &mut self,
        columns: Vec<Column>,
        zstd: &mut Compressor<'static>,
    ) -> Result<(), ParquetError> {
        for (into, from) in self.pending.iter_mut().zip(columns) {
            match (into, from) {
                (Column::U64(a), Column::U64(b)) => a.extend(b),
                (Column::I64(a), Column::I64(b)) => a.extend(b),
                (Column::F64(a), Column::F64(b)) => a.extend(b),
                (Column::Bool(a), Column::Bool(b)) => a.extend(b),
                (Column::Str(a), Column::Str(b)) => a.extend(b),
                _ => return Err(ParquetError::General("a column changed type".into())),
            }
        }
        while self.pending_rows() >= self.row_group {
            let rest: Vec<Column> = self
                .pending
                .iter_mut()
                .map(|c| split_off(c, self.row_group))
                .collect();
            let group = std::mem::replace(&mut self.pending, rest);
            self.write_group(group, zstd)?;
        }
        Ok(())
    }

    /// Writes the rows left (a shorter last row group) and the file's footer.
    pub fn finish(mut self, zstd: &mut Compressor<'static>) -> Result<(), ParquetError> {
        if self.pending_rows() > 0 {
            let group = std::mem::take(&mut self.pending);
            self.write_group(group, zstd)?;
        }
        let mut inner = self.writer.into_inner()?;
        std::io::Write::flush(&mut inner)?;
        Ok(())
    }

    fn write_group(
        &mut self,
        group: Vec<Column>,
        zstd: &mut Compressor<'static>,
    ) -> Result<(), ParquetError> {
        let n = group.first().map_or(0, Column::len);
        if self.present.len() < n {
            self.present.resize(n, 1);
        }
        let def = Some(&self.present[..n]);
        let mut rg = self.writer.next_row_group()?;
        if group.len() != self.columns.len() {
            return Err(ParquetError::General("more columns than the schema".into()));
        }
        for (col, descr) in group.into_iter().zip(&self.columns) {
            // The chunk is encoded into `chunk` (offsets from its start), then appended to the
            // row group, which moves its offsets to the file's.
            let mut chunk = TrackedWrite::new(Vec::new());
            let mut close = {
                let pages = ZstdPages::new(SerializedPageWriter::new(&mut chunk), zstd);
                let mut cw =
                    get_column_writer(descr.clone(), self.chunk_props.clone(), Box::new(pages));
                write_values(&mut cw, col, def)?;
                cw.close()?
            };
            close.metadata = close
                .metadata
                .into_builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
                .build()?;
            rg.append_column(&Bytes::from(chunk.into_inner()?), close)?;
        }
        rg.close()?;
        Ok(())
    }
}

/// Writes one column's values, every one present (`def`).
fn write_values(
    cw: &mut ColumnWriter<'_>,
    col: Column,
    def: Option<&[i16]>,
) -> Result<(), ParquetError> {
    match (cw, col) {
        // UINT_64 is stored as the INT64 of the same bits (as pyarrow stores it).
        (ColumnWriter::Int64ColumnWriter(w), Column::U64(v)) => {
            let v: Vec<i64> = v.into_iter().map(|x| x as i64).collect();
            w.write_batch(&v, def, None)?;
        },
        (ColumnWriter::Int64ColumnWriter(w), Column::I64(v)) => {
            w.write_batch(&v, def, None)?;
        },
        (ColumnWriter::DoubleColumnWriter(w), Column::F64(v)) => {
            w.write_batch(&v, def, None)?;
        },
        (ColumnWriter::BoolColumnWriter(w), Column::Bool(v)) => {
            w.write_batch(&v, def, None)?;
        },
        (ColumnWriter::ByteArrayColumnWriter(w), Column::Str(v)) => {
            // The labels are 'static: each value points at them, no copy.
            let v: Vec<ByteArray> = v
                .into_iter()
                .map(|s| ByteArray::from(Bytes::from_static(s.as_bytes())))
                .collect();
            w.write_batch(&v, def, None)?;
        },
        _ => {
            return Err(ParquetError::General(
                "a column of another type than its schema's".into(),
            ))
        },
    }
    Ok(())
}

/// The file's writer properties: `compression` for every column, statistics per column chunk
/// only, dictionary pages for the strings only.
fn properties(layout: &Layout, compression: Compression) -> WriterProperties {
    let mut props = WriterProperties::builder()
        .set_compression(compression)
        // Statistics per column chunk (what readers prune row groups with); none per page:
        // they cost CPU on every page and nothing here reads them.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // Dictionary pages for the string labels only. Numbers (times, byte counts, ids)
        // are mostly distinct: a dictionary costs a hash per value and zstd packs the plain
        // values better (ns-2 anchor: files 21 % smaller, 3 % less CPU for the whole run;
        // pyarrow, which used dictionaries for every column, wrote the same values).
        .set_dictionary_enabled(false);
    for (name, kind) in layout {
        if *kind == Kind::Str {
            props = props.set_column_dictionary_enabled((*name).into(), true);
        }
    }
    props.build()
}

/// The first `n` values of `c` stay in `c`; the rest are returned.
fn split_off(c: &mut Column, n: usize) -> Column {
    match c {
        Column::U64(v) => Column::U64(v.split_off(n)),
        Column::I64(v) => Column::I64(v.split_off(n)),
        Column::F64(v) => Column::F64(v.split_off(n)),
        Column::Bool(v) => Column::Bool(v.split_off(n)),
        Column::Str(v) => Column::Str(v.split_off(n)),
    }
}
