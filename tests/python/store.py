"""Reading a tripline data directory with DuckDB, the independent reader of the end-to-end tests.

Why DuckDB and not the tripline binary: the store's promise is that any engine reads it with
nothing but hive partitioning, so the tests check what a user's own tools see, not what our own
reader (which shares the schema crate with the writer) believes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb


def spans_glob(data_dir: Path) -> str:
    return f"{Path(data_dir)}/spans/**/*.parquet"


def parquet_files(data_dir: Path) -> list[Path]:
    return sorted((Path(data_dir) / "spans").glob("**/*.parquet"))


def read_spans_sql(data_dir: Path) -> str:
    return f"read_parquet('{spans_glob(data_dir)}', hive_partitioning=true)"


def query(data_dir: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Run `sql` with the table `spans` bound to the store; rows as dicts (ids stay bytes)."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW spans AS SELECT * FROM {read_spans_sql(data_dir)}")
        return con.sql(sql, params=params or None).to_arrow_table().to_pylist()
    finally:
        con.close()


def rows_by_span_id(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every row of the store keyed by lowercase hex span id."""
    rows = query(data_dir, "SELECT * FROM spans")
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = row["span_id"].hex()
        assert key not in out, f"span id {key} stored twice"
        out[key] = row
    return out


def attr(row_map: list[tuple[str, Any]] | None, key: str) -> Any:
    """The typed value struct of `key` in an attribute map column (None when absent)."""
    for k, v in row_map or []:
        if k == key:
            return v
    return None


def attr_keys(row_map: list[tuple[str, Any]] | None) -> set[str]:
    return {k for k, _ in row_map or []}
