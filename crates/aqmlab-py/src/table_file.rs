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

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use aqmlab::measure::Column;
use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

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
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            // Statistics per column chunk (what readers prune row groups with); none per page:
            // they cost CPU on every page and nothing here reads them.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            // Dictionary pages for the string labels only. Numbers (times, byte counts, ids)
            // are mostly distinct: a dictionary costs a hash per value and zstd packs the plain
            // values better (ns-2 anchor: files 21 % smaller, 3 % less CPU for the whole run;
            // pyarrow, which used dictionaries for every column, wrote the same values).
            .set_dictionary_enabled(false);
        for (name, kind) in &layout {
            if *kind == Kind::Str {
                props = props.set_column_dictionary_enabled((*name).into(), true);
            }
        }
        let props = props.build();
        let file = File::create(path)?;
        let writer =
            SerializedFileWriter::new(BufWriter::new(file), Arc::new(schema), Arc::new(props))?;
        let pending = layout.iter().map(|(_, k)| k.empty()).collect();
        Ok(TableFile {
            writer,
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
    /// every full row group they complete.
    pub fn append(&mut self, columns: Vec<Column>) -> Result<(), ParquetError> {
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
            self.write_group(group)?;
        }
        Ok(())
    }

    /// Writes the rows left (a shorter last row group) and the file's footer.
    pub fn finish(mut self) -> Result<(), ParquetError> {
        if self.pending_rows() > 0 {
            let group = std::mem::take(&mut self.pending);
            self.write_group(group)?;
        }
        let mut inner = self.writer.into_inner()?;
        std::io::Write::flush(&mut inner)?;
        Ok(())
    }

    fn write_group(&mut self, group: Vec<Column>) -> Result<(), ParquetError> {
        let n = group.first().map_or(0, Column::len);
        if self.present.len() < n {
            self.present.resize(n, 1);
        }
        let def = Some(&self.present[..n]);
        let mut rg = self.writer.next_row_group()?;
        for col in group {
            let mut cw = rg
                .next_column()?
                .ok_or_else(|| ParquetError::General("more columns than the schema".into()))?;
            match col {
                Column::U64(v) => {
                    // UINT_64 is stored as the INT64 of the same bits (as pyarrow stores it).
                    let v: Vec<i64> = v.into_iter().map(|x| x as i64).collect();
                    cw.typed::<Int64Type>().write_batch(&v, def, None)?;
                },
                Column::I64(v) => {
                    cw.typed::<Int64Type>().write_batch(&v, def, None)?;
                },
                Column::F64(v) => {
                    cw.typed::<DoubleType>().write_batch(&v, def, None)?;
                },
                Column::Bool(v) => {
                    cw.typed::<BoolType>().write_batch(&v, def, None)?;
                },
                Column::Str(v) => {
                    // The labels are 'static: each value points at them, no copy.
                    let v: Vec<ByteArray> = v
                        .into_iter()
                        .map(|s| ByteArray::from(Bytes::from_static(s.as_bytes())))
                        .collect();
                    cw.typed::<ByteArrayType>().write_batch(&v, def, None)?;
                },
            }
            cw.close()?;
        }
        rg.close()?;
        Ok(())
    }
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
