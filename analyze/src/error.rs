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
    /// DataFusion failed to plan or scan (a file whose footer was fine but whose data is not).
    #[error("scan of {path} failed: {cause}; run `tripline verify` to find a damaged file")]
    Scan {
        path: String,
        cause: datafusion::error::DataFusionError,
    },
    /// The scan read no span; the cause says why (missing or empty store, filter, ...).
    #[error(transparent)]
    NoSpans(#[from] NoSpans),
    /// The part files of the store cannot be listed.
    #[error("cannot list the part files under {path}: {source}; check its permissions")]
    List {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A store on object storage cannot be reached or listed.
    #[error("cannot read the store: {0}")]
    Remote(Box<collector::store::remote::RemoteError>),
    /// Arrow failed while reading a batch.
    #[error("reading spans failed: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    /// Joining log records (GenAI events) to their spans failed.
    #[error("joining log records to their spans failed: {0}; this is a bug in tripline, please report it")]
    LogJoin(String),
}

/// Why a scan read no span (diagnosed by `store::Snapshot`). An empty result is never reported
/// as "no findings": the store may be missing, one directory too deep, empty, unreadable, or the
/// filter may match nothing, and each has a different fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoSpans {
    /// `<data_dir>/spans` does not exist and nothing is in the WAL.
    #[error("no spans/ directory in {data_dir}: this is not a tripline store{hint}")]
    NoSpansDir { data_dir: PathBuf, hint: String },
    /// The store exists (`spans/` or `wal/`) but holds no span.
    #[error("the store in {data_dir} is empty: no part files under spans/ and no acknowledged spans in the WAL{wal}; ingest or collect some first (`tripline ingest FILE`, `tripline collect`)")]
    Empty { data_dir: PathBuf, wal: String },
    /// Every part file is unreadable.
    #[error("none of the {files} part file(s) in {data_dir} could be read (see the warnings above){}; run `tripline verify --data-dir {data_dir}` for details", if *wal_spans > 0 { format!(", only {wal_spans} span(s) still in the WAL are readable") } else { String::new() })]
    AllUnreadable {
        data_dir: PathBuf,
        files: usize,
        wal_spans: u64,
    },
    /// The filter excluded every span.
    #[error("no span matches {filter}; the store holds {total} span(s) without {}{}", if filter.contains(" --") { "these filters" } else { "this filter" }, if filter.contains("--trace") { "; list trace ids with `tripline query \"SELECT DISTINCT encode(trace_id, 'hex') FROM spans\"`" } else { "" })]
    FilterMatchedNothing { filter: String, total: u64 },
}
