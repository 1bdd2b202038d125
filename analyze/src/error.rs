//! Errors of the analyzer library, one enum per operation boundary (loading, policy, output), so
//! the CLI edge can map each to a message and exit code 2 without string matching.

use std::path::PathBuf;

/// Loading spans from the store or from record batches failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The data directory given on the command line does not exist.
    #[error("data dir {0} does not exist; pass --data-dir (or TRIPLINE_DATA_DIR) pointing at a store written by `tripline collect` or `tripline ingest`")]
    MissingDataDir(PathBuf),
    /// A `--since` / `--until` value is neither RFC 3339 nor a relative duration.
    #[error("invalid time {value:?}: expected RFC 3339 (2026-11-30T08:00:00Z) or a relative duration like 30m, 24h, 7d")]
    BadTime { value: String },
    /// A `--trace` value is not 32 hex digits.
    #[error("invalid trace id {0:?}: expected 32 hex digits")]
    BadTraceId(String),
    /// A column the analyzer needs is missing or has an unexpected type.
    #[error("column {column} has type {found}, expected {expected}; is the store written with schema version {}?", schemas::SCHEMA_VERSION)]
    ColumnType {
        column: String,
        found: String,
        expected: &'static str,
    },
    /// DataFusion failed to plan or scan.
    #[error("scan of {path} failed: {cause}")]
    Scan {
        path: String,
        cause: datafusion::error::DataFusionError,
    },
    /// Arrow failed while reading a batch.
    #[error("reading spans failed: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
}
