//! Column-oriented record batches, the unit in which results stream out of the core.
//!
//! The simulator appends rows to named tables as things happen; the caller drains them in
//! chunks (e.g. every few simulated seconds) and writes them out, so memory does not grow with
//! simulated time.

/// One column of values.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Labels from a fixed set (sides, directions, scopes): no allocation per row.
    Str(Vec<&'static str>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A column from the vector of its values (`Column::from(v)`): a record table names each
/// column's type once and the variant follows from it (`sim::row_buffer`).
macro_rules! column_from_values {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<Vec<$ty>> for Column {
                fn from(values: Vec<$ty>) -> Self {
                    Column::$variant(values)
                }
            }
        )*
    };
}

column_from_values! {
    u64 => U64,
    i64 => I64,
    f64 => F64,
    bool => Bool,
    &'static str => Str,
}

/// A batch of rows of one table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c)
    }
}
