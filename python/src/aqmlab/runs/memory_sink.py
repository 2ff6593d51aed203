"""The tables of a run kept in memory (`aqmlab.run` without `out`), as Arrow tables.

The only part of a run that imports pyarrow: a run with a directory sends its tables from the
core straight to Parquet files (`_core.ParquetSink`). Same interface and the same error for a
`measure.columns` entry naming no column (`_core.UnknownColumn`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa

import aqmlab._core as _core

__all__ = ["MemorySink"]

_ARROW_TYPES = {
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "f64": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
}


def _to_arrow(columns: Mapping[str, tuple[str, list]]) -> pa.Table:
    arrays, fields = [], []
    for name, (dtype, values) in columns.items():
        t = _ARROW_TYPES.get(dtype)
        if t is None:
            raise RuntimeError(f"core returned column {name} of unknown type {dtype}")
        arrays.append(pa.array(values, type=t))
        fields.append(pa.field(name, t))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


class MemorySink:
    """Drained batches as Arrow tables, per table; `skip`: tables not kept; `columns`: the
    columns kept per table, in that order (`measure.columns`)."""

    def __init__(
        self, skip: Iterable[str] = (), columns: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.skip = set(skip)
        self.columns = {k: list(v) for k, v in (columns or {}).items()}
        self.parts: dict[str, list[pa.Table]] = {}
        self.schemas: dict[str, pa.Schema] = {}
        self.rows: dict[str, int] = {}

    def drain(self, sim: _core.Simulation) -> None:
        self.add(sim.drain_typed())

    def finish(self, sim: _core.Simulation) -> None:
        self.add(sim.finish_typed())

    def add(self, batches: Mapping[str, Mapping[str, tuple[str, list]]]) -> None:
        for name, columns in batches.items():
            if name in self.skip:
                continue
            table = _to_arrow(columns)
            if name in self.columns:
                wanted = self.columns[name]
                unknown = [c for c in wanted if c not in table.column_names]
                if unknown:
                    raise _core.UnknownColumn(name, unknown[0], table.column_names)
                table = table.select(wanted)
            schema = self.schemas.setdefault(name, table.schema)
            if table.schema != schema:
                table = table.select(schema.names).cast(schema)
            self.rows[name] = self.rows.get(name, 0) + table.num_rows
            if table.num_rows or name not in self.parts:
                self.parts.setdefault(name, []).append(table)

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def tables(self) -> dict[str, pa.Table]:
        return {name: pa.concat_tables(parts) for name, parts in self.parts.items()}
