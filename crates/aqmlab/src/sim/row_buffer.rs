//! `row_buffer!`: declares the row buffer of one record table from its column list, so that
//! each column's name, type and place in the table are written once (issue 34: the tables'
//! structs and their drains repeated every list).
//!
//! A row buffer holds one `Vec` per column. Rows are pushed column by column where they are
//! made (`rows.conn_id.push(..)`: no row struct, no boxing, no dispatch per value), and
//! `take` drains the buffer into a `measure::Table` batch, the columns in the order listed.
//!
//! ```ignore
//! row_buffer! {
//!     /// One row per reporting interval and bottleneck direction.
//!     pub struct BottleneckRows => "bottleneck" {
//!         t_s: f64,
//!         direction: &'static str,
//!         /// Only in a chain of bottlenecks.
//!         hop: u64 where chained,
//!         arrivals: u64,
//!     }
//! }
//! ```
//!
//! A column's type is one that `measure::Column` wraps (`u64`, `i64`, `f64`, `bool`,
//! `&'static str`: `Column::from`). A column marked `where flag` is in the batches only when
//! the buffer's `flag` (a `bool` field the macro adds, false by default) is set; it is set
//! once, before the first row, so that every batch has the same columns and batches stack.
//! A flag serves one column: the chain's `hop` (`net::topology::Chain`), which a dumbbell's
//! tables do not have.

/// The vector's rows, leaving it empty with as many rows reserved: the next batch is usually
/// about as long, so it grows without reallocating.
pub(super) fn take_sized<T>(v: &mut Vec<T>) -> Vec<T> {
    let n = v.len();
    std::mem::replace(v, Vec::with_capacity(n))
}

macro_rules! row_buffer {
    // One column's rows into the batch (`take`); a flagged column only when its flag is set.
    (@column $self:ident, $columns:ident, $column:ident) => {
        $columns.push((
            stringify!($column),
            $crate::measure::Column::from($crate::sim::row_buffer::take_sized(
                &mut $self.$column,
            )),
        ));
    };
    (@column $self:ident, $columns:ident, $column:ident where $flag:ident) => {
        if $self.$flag {
            $crate::sim::row_buffer::row_buffer!(@column $self, $columns, $column);
        }
    };
    // The buffer and its `take`.
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident => $table:literal {
            $(
                $(#[$column_attr:meta])*
                $column:ident : $ty:ty $(where $flag:ident)?
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Default)]
        $vis struct $name {
            $(
                $(#[$column_attr])*
                pub $column: Vec<$ty>,
                $(
                    #[doc = concat!("Whether the batches have the `", stringify!($column), "` column.")]
                    pub $flag: bool,
                )?
            )*
        }

        impl $name {
            /// The rows pushed since the last `take`, as a batch of the table.
            pub fn take(&mut self) -> $crate::measure::Table {
                let mut columns = Vec::with_capacity([$(stringify!($column)),*].len());
                $(
                    $crate::sim::row_buffer::row_buffer!(
                        @column self, columns, $column $(where $flag)?
                    );
                )*
                $crate::measure::Table { name: $table, columns }
            }
        }
    };
}

pub(super) use row_buffer;

#[cfg(test)]
mod tests {
    use crate::measure::Column;

    row_buffer! {
        /// A table for the tests.
        struct SampleRows => "sample" {
            t_s: f64,
            direction: &'static str,
            hop: u64 where chained,
            count: u64,
            ok: bool,
            flow: i64,
        }
    }

    fn names(rows: &mut SampleRows) -> Vec<&'static str> {
        rows.take().columns.iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn the_columns_come_in_their_order_with_their_types() {
        let mut rows = SampleRows::default();
        rows.t_s.push(1.5);
        rows.direction.push("forward");
        rows.count.push(7);
        rows.ok.push(true);
        rows.flow.push(-1);
        let t = rows.take();
        assert_eq!(t.name, "sample");
        assert_eq!(t.rows(), 1);
        assert_eq!(t.column("t_s"), Some(&Column::F64(vec![1.5])));
        assert_eq!(t.column("direction"), Some(&Column::Str(vec!["forward"])));
        assert_eq!(t.column("count"), Some(&Column::U64(vec![7])));
        assert_eq!(t.column("ok"), Some(&Column::Bool(vec![true])));
        assert_eq!(t.column("flow"), Some(&Column::I64(vec![-1])));
        assert_eq!(
            t.columns.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["t_s", "direction", "count", "ok", "flow"]
        );
    }

    #[test]
    fn a_flagged_column_is_there_only_with_its_flag_even_in_an_empty_batch() {
        let mut rows = SampleRows::default();
        assert!(!names(&mut rows).contains(&"hop"));
        rows.chained = true;
        assert_eq!(
            names(&mut rows),
            ["t_s", "direction", "hop", "count", "ok", "flow"]
        );
    }

    #[test]
    fn take_empties_the_buffer_and_keeps_room_for_as_many_rows() {
        let mut rows = SampleRows::default();
        rows.count.extend([1, 2, 3]);
        assert_eq!(
            rows.take().column("count"),
            Some(&Column::U64(vec![1, 2, 3]))
        );
        assert!(rows.count.is_empty());
        assert!(rows.count.capacity() >= 3);
        assert_eq!(rows.take().column("count"), Some(&Column::U64(vec![])));
    }
}
