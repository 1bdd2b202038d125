//! A snapshot of the store, taken before every scan: which part files are readable (footer
//! checked), which are not (named, skipped), and which acknowledged spans are still only in the
//! WAL. Every command that reads the store goes through it, so each can say what it scanned and
//! none reports health it did not see: a scan of nothing is an error with its likely cause
//! ([`NoSpans`]), never an empty, clean report.
//!
//! The snapshot registers table `spans` for DataFusion: the Hive-partitioned Parquet files with
//! the explicit canonical schema (listing only the validated files, see [`allowlist`]), plus the
//! WAL tail ([`wal_tail`]) with the same columns, as one table; and table `logs` the same way
//! from `<data>/logs/` (OTLP log records, `schemas::logs`), empty when the store has none (and,
//! for now, on object storage). A store on object storage (`--data-dir s3://bucket/prefix`) is
//! listed and validated the same way through DataFusion's object store ([`object_listing`]); its
//! WAL is on the collectors' disks.

mod allowlist;
pub mod clip;
mod clip_memo;
mod empty;
pub mod filter;
mod local_reads;
pub mod object_listing;
pub mod table;
pub mod wal_tail;

pub use empty::NoSpans;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::{MemTable, TableProvider};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::object_store::ObjectStore;
use datafusion::prelude::SessionContext;
use schemas::layout;
use serde::Serialize;

use crate::error::LoadError;
use collector::store::remote::RemoteLocation;
use filter::ScanFilter;
use object_listing::RemoteSource;
use table::{partition_type, PARTITION_COLUMNS, TABLE};
use wal_tail::WalTail;

/// Name of the log record table for SQL (`tripline query`).
pub const LOGS_TABLE: &str = schemas::logs::LOGS_TABLE;
/// The span table with the full attribute maps, registered beside the analyzer's clipped
/// [`TABLE`] when the log join needs whole rows ([`Snapshot::register_for_rows`]).
pub const FULL_TABLE: &str = "spans_full_rows";

/// A file that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub path: String,
    pub error: String,
}

/// What a command scanned (`"scanned"` in JSON output, a summary line on stderr otherwise).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Scanned {
    /// Readable part files the scan covered (those in partitions the time filter selects).
    pub files: usize,
    /// Spans read (after the filters), including `wal_spans`.
    pub spans: u64,
    /// Of those, acknowledged spans read from the WAL (not yet in a committed part file).
    pub wal_spans: u64,
    /// Part files (and WAL segments) that could not be read and were skipped.
    pub unreadable_files: Vec<Unreadable>,
    /// OTLP log records with a span id read for the join to their spans (table `logs`; absent
    /// from JSON when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub log_records: u64,
    /// Scanned spans whose content came (in part) from their log records (GenAI events).
    #[serde(skip_serializing_if = "is_zero")]
    pub spans_with_event_content: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Scanned {
    /// One line for stderr: `scanned 120 spans in 3 part files (+ 7 from the WAL)`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "scanned {} span(s) in {} part file(s)",
            self.spans, self.files
        );
        if self.wal_spans > 0 {
            s.push_str(&format!(
                ", {} of them acknowledged but still in the WAL (a running collector commits them to Parquet within --max-file-age-secs)",
                self.wal_spans
            ));
        }
        if self.log_records > 0 {
            s.push_str(&format!(
                "; {} log record(s) joined, content from events on {} span(s)",
                self.log_records, self.spans_with_event_content
            ));
        }
        if !self.unreadable_files.is_empty() {
            s.push_str(&format!(
                "; {} file(s) could not be read and were skipped",
                self.unreadable_files.len()
            ));
        }
        s
    }

    /// One `warning:` line per unreadable file, for stderr.
    pub fn warnings(&self) -> String {
        self.unreadable_files
            .iter()
            .map(|u| format!("warning: skipped {}: {}\n", u.path, u.error))
            .collect()
    }
}

/// A readable part file.
#[derive(Clone, Debug)]
pub struct PartInfo {
    pub path: PathBuf,
    pub rows: u64,
    /// `(date, hour)` from its `date=…/hour=…` directories.
    pub partition: Option<(String, String)>,
    pub wal: Option<collector::store::verify::WalRange>,
    /// The object's listing entry (key, size, `Last-Modified`) for a store on object storage;
    /// `None` for a local file, whose metadata is read when needed.
    pub object: Option<datafusion::object_store::ObjectMeta>,
}

/// The store as it was when the snapshot was taken.
#[derive(Debug)]
pub struct Snapshot {
    pub data_dir: PathBuf,
    /// `<data_dir>/spans`, canonical.
    spans_dir: Option<PathBuf>,
    pub files: Vec<PartInfo>,
    /// Part files whose footer cannot be read.
    pub unreadable: Vec<Unreadable>,
    /// WAL rows no snapshot file holds, with the partition columns.
    pub wal_batches: Vec<RecordBatch>,
    /// WAL segments or records that cannot be read.
    pub wal_problems: Vec<Unreadable>,
    /// Readable `logs/` part files (local stores only).
    pub log_files: Vec<PartInfo>,
    /// WAL log records no snapshot file holds, with the partition columns.
    pub log_wal_batches: Vec<RecordBatch>,
    /// The store on object storage (then `files` hold object keys), or `None` for a local one.
    pub remote: Option<RemoteSource>,
}

impl Snapshot {
    /// Reads the WAL tail, then lists and validates the part files (in that order, so a file
    /// committed in between is de-duplicated against the WAL and nothing falls between the two).
    /// A `s3://bucket/prefix` data dir is listed on object storage (no WAL there).
    pub async fn take(data_dir: &Path) -> Result<Snapshot, LoadError> {
        if let Some(location) = RemoteLocation::of(data_dir) {
            let source =
                RemoteSource::connect(location.map_err(|e| LoadError::Remote(Box::new(e)))?)?;
            let (files, unreadable) = source.part_files().await?;
            return Ok(Snapshot {
                data_dir: data_dir.to_path_buf(),
                spans_dir: None,
                files,
                unreadable,
                wal_batches: Vec::new(),
                wal_problems: Vec::new(),
                log_files: Vec::new(),
                log_wal_batches: Vec::new(),
                remote: Some(source),
            });
        }
        if !data_dir.is_dir() {
            return Err(LoadError::MissingDataDir(data_dir.to_path_buf()));
        }
        let tail = WalTail::read(data_dir);
        let paths =
            collector::store::verify::part_files(data_dir).map_err(|e| LoadError::List {
                path: layout::spans_dir(data_dir),
                source: e,
            })?;
        let spans_dir = layout::spans_dir(data_dir).canonicalize().ok();
        let log_paths = collector::store::verify::table_part_files(data_dir, layout::Table::Logs)
            .map_err(|e| LoadError::List {
            path: layout::logs_dir(data_dir),
            source: e,
        })?;
        // Part files of both tables, by their footers; the unreadable ones named.
        let mut unreadable = Vec::new();
        let mut read_parts = |paths: Vec<PathBuf>| -> Vec<PartInfo> {
            let mut parts = Vec::with_capacity(paths.len());
            for path in paths {
                match collector::store::verify::read_footer(&path) {
                    Ok(footer) => parts.push(PartInfo {
                        partition: partition_of_path(&path),
                        rows: footer.rows,
                        wal: footer.wal,
                        object: None,
                        path,
                    }),
                    Err(e) => unreadable.push(Unreadable {
                        path: path.display().to_string(),
                        error: format!("not a readable Parquet file ({e})"),
                    }),
                }
            }
            parts
        };
        let log_files = read_parts(log_paths);
        let files = read_parts(paths);
        let (wal_batches, mut wal_problems) =
            tail.uncommitted(&files, &table_schema(), layout::Table::Spans);
        let (log_wal_batches, log_problems) =
            tail.uncommitted(&log_files, &log_table_schema(), layout::Table::Logs);
        wal_problems.extend(log_problems);
        wal_problems.splice(0..0, tail.problems);
        Ok(Snapshot {
            data_dir: data_dir.to_path_buf(),
            spans_dir,
            files,
            unreadable,
            wal_batches,
            wal_problems,
            log_files,
            log_wal_batches,
            remote: None,
        })
    }

    /// Decodes every readable part file in full and moves those that fail to `unreadable`
    /// (after a scan failed on data behind a valid footer). Returns how many were moved.
    /// On object storage nothing is moved (a file would have to be downloaded whole): the scan
    /// error names the store and `tripline verify` is the tool.
    pub fn skip_undecodable(&mut self) -> usize {
        if self.remote.is_some() {
            return 0;
        }
        let (good, bad): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files)
            .into_iter()
            .map(|f| {
                let r = collector::store::verify::decode_all(&f.path);
                (f, r)
            })
            .partition(|(_, r)| r.is_ok());
        self.files = good.into_iter().map(|(f, _)| f).collect();
        for (f, r) in &bad {
            self.unreadable.push(Unreadable {
                path: f.path.display().to_string(),
                error: format!(
                    "data unreadable ({})",
                    r.as_ref().err().map_or("", String::as_str)
                ),
            });
        }
        bad.len()
    }

    /// Spans in the readable part files.
    pub fn file_spans(&self) -> u64 {
        self.files.iter().map(|f| f.rows).sum()
    }

    /// Acknowledged spans only in the WAL.
    pub fn wal_spans(&self) -> u64 {
        self.wal_batches.iter().map(|b| b.num_rows() as u64).sum()
    }

    /// Every span in table `spans`, unfiltered.
    pub fn total_spans(&self) -> u64 {
        self.file_spans() + self.wal_spans()
    }

    /// Unreadable part files and WAL damage, for output.
    pub fn all_unreadable(&self) -> Vec<Unreadable> {
        self.unreadable
            .iter()
            .chain(&self.wal_problems)
            .cloned()
            .collect()
    }

    /// Readable part files in the partitions `filter`'s time bounds select.
    pub fn files_selected(&self, filter: &ScanFilter) -> usize {
        self.files
            .iter()
            .filter(|f| match &f.partition {
                Some((date, hour)) => filter.admits_partition(date, hour),
                None => true,
            })
            .count()
    }

    /// Fails when there is nothing readable to scan: no spans at all, or every part file
    /// unreadable. Call before scanning; [`Snapshot::diagnose`] explains a scan that read nothing.
    pub fn require_data(&self) -> Result<(), LoadError> {
        if self.files.is_empty() && !self.unreadable.is_empty() {
            return Err(LoadError::NoSpans(NoSpans::AllUnreadable {
                data_dir: self.data_dir.clone(),
                files: self.unreadable.len(),
                wal_spans: self.wal_spans(),
            }));
        }
        if self.total_spans() == 0 {
            return Err(LoadError::NoSpans(empty::diagnose_empty(self)));
        }
        Ok(())
    }

    /// Why a scan with `filter` read no span.
    pub fn diagnose(&self, filter: &ScanFilter) -> NoSpans {
        if let Err(LoadError::NoSpans(cause)) = self.require_data() {
            return cause;
        }
        NoSpans::FilterMatchedNothing {
            filter: filter.describe(),
            total: self.total_spans(),
        }
    }

    /// Log records in the snapshot (part files plus WAL tail).
    pub fn total_log_records(&self) -> u64 {
        self.log_files.iter().map(|f| f.rows).sum::<u64>()
            + self
                .log_wal_batches
                .iter()
                .map(|b| b.num_rows() as u64)
                .sum::<u64>()
    }

    /// Registers table [`TABLE`]: the validated part files plus the WAL tail; and table
    /// [`LOGS_TABLE`] the same way over `logs/`. The full schema, as SQL users see it.
    pub async fn register(&self, ctx: &SessionContext) -> Result<(), LoadError> {
        self.register_as(ctx, Shape::Full).await
    }

    /// [`register`](Self::register) for the analyzer's row scans: the attribute maps' values
    /// carry only their `str` field, the one the rows keep ([`clip`]).
    /// The log join rebuilds whole spans from their stored rows, so when the snapshot has log
    /// records the full table is registered beside it as [`FULL_TABLE`].
    pub async fn register_for_rows(&self, ctx: &SessionContext) -> Result<(), LoadError> {
        self.register_as(ctx, Shape::Rows).await?;
        if self.total_log_records() > 0 {
            let full = self.span_table(ctx, Shape::Full)?;
            ctx.register_table(FULL_TABLE, full)
                .map_err(|cause| LoadError::Scan {
                    path: self.data_dir.display().to_string(),
                    cause,
                })?;
        }
        Ok(())
    }

    async fn register_as(&self, ctx: &SessionContext, shape: Shape) -> Result<(), LoadError> {
        let table = self.span_table(ctx, shape)?;
        self.register_logs(ctx)?;
        ctx.register_table(TABLE, table)
            .map_err(|cause| LoadError::Scan {
                path: self.data_dir.display().to_string(),
                cause,
            })?;
        Ok(())
    }

    /// The span table in `shape`: the validated part files plus the WAL tail.
    fn span_table(
        &self,
        ctx: &SessionContext,
        shape: Shape,
    ) -> Result<Arc<dyn TableProvider>, LoadError> {
        let parquet = match (&self.remote, &self.spans_dir) {
            (_, _) if self.files.is_empty() => None,
            (Some(remote), _) => Some(self.remote_listing_table(ctx, remote, shape)?),
            (None, Some(dir)) => Some(self.listing_table(ctx, dir, shape)?),
            (None, None) => None,
        };
        let scan_err = |cause| LoadError::Scan {
            path: self.data_dir.display().to_string(),
            cause,
        };
        let wal: Option<Arc<dyn TableProvider>> = if self.wal_batches.is_empty() {
            None
        } else {
            let schema = parquet
                .as_ref()
                .map_or_else(|| shape.table_schema(), |p| p.schema());
            let batches = match shape {
                Shape::Full => self.wal_batches.clone(),
                Shape::Rows => self
                    .wal_batches
                    .iter()
                    .map(clip::clip_batch)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| scan_err(e.into()))?,
            };
            let mem = MemTable::try_new(schema, vec![batches]).map_err(scan_err)?;
            Some(Arc::new(mem))
        };
        let table: Arc<dyn TableProvider> = match (parquet, wal) {
            (Some(p), None) => p,
            (None, Some(w)) => w,
            (Some(p), Some(w)) => {
                let df = ctx
                    .read_table(p)
                    .and_then(|p| ctx.read_table(w).and_then(|w| p.union(w)))
                    .map_err(scan_err)?;
                df.into_view()
            }
            (None, None) => MemTable::try_new(shape.table_schema(), vec![vec![]])
                .map(|m| Arc::new(m) as Arc<dyn TableProvider>)
                .map_err(scan_err)?,
        };
        Ok(table)
    }

    /// Table [`LOGS_TABLE`]: the validated `logs/` part files plus the WAL tail's log records
    /// (an empty table of the log schema when there are none). The listing goes through the
    /// allow-listed local store [`Snapshot::listing_table`] registers, which lists the validated
    /// log files too.
    fn register_logs(&self, ctx: &SessionContext) -> Result<(), LoadError> {
        let logs_dir = layout::logs_dir(&self.data_dir);
        let scan_err = |cause| LoadError::Scan {
            path: logs_dir.display().to_string(),
            cause,
        };
        let parquet = match (&self.remote, logs_dir.canonicalize()) {
            (None, Ok(dir)) if !self.log_files.is_empty() => {
                if self.files.is_empty() {
                    // No span listing registered the local store: register it for the logs.
                    self.register_local_store(ctx, None);
                }
                Some(listing_table_at(
                    &format!("{}/", dir.display()),
                    schemas::logs::log_schema(),
                    Arc::new(ParquetFormat::default()),
                )?)
            }
            _ => None,
        };
        let wal: Option<Arc<dyn TableProvider>> = if self.log_wal_batches.is_empty() {
            None
        } else {
            let mem = MemTable::try_new(log_table_schema(), vec![self.log_wal_batches.clone()])
                .map_err(scan_err)?;
            Some(Arc::new(mem))
        };
        let table: Arc<dyn TableProvider> = match (parquet, wal) {
            (Some(p), None) => p,
            (None, Some(w)) => w,
            (Some(p), Some(w)) => ctx
                .read_table(p)
                .and_then(|p| ctx.read_table(w).and_then(|w| p.union(w)))
                .map_err(scan_err)?
                .into_view(),
            (None, None) => MemTable::try_new(log_table_schema(), vec![vec![]])
                .map(|m| Arc::new(m) as Arc<dyn TableProvider>)
                .map_err(scan_err)?,
        };
        ctx.register_table(LOGS_TABLE, table).map_err(scan_err)?;
        Ok(())
    }

    /// Registers the local filesystem store for DataFusion, listing only the validated span
    /// part files below `spans/` and the validated log part files below `logs/`.
    fn register_local_store(&self, ctx: &SessionContext, spans_dir: Option<&Path>) {
        let mut allowed: HashSet<datafusion::object_store::path::Path> = HashSet::new();
        let mut scope_dir = spans_dir.map(Path::to_path_buf);
        if let Some(spans_dir) = spans_dir {
            allowed.extend(self.files.iter().filter_map(|f| {
                let rel = f.path.strip_prefix(&self.data_dir).ok()?;
                let rel = rel.strip_prefix(layout::SPANS_DIR).ok()?;
                datafusion::object_store::path::Path::from_absolute_path(spans_dir.join(rel)).ok()
            }));
        }
        if let Ok(logs_dir) = layout::logs_dir(&self.data_dir).canonicalize() {
            allowed.extend(self.log_files.iter().filter_map(|f| {
                let rel = f.path.strip_prefix(&self.data_dir).ok()?;
                let rel = rel.strip_prefix(layout::LOGS_DIR).ok()?;
                datafusion::object_store::path::Path::from_absolute_path(logs_dir.join(rel)).ok()
            }));
            // Both tables below one scope: their common parent, the data dir.
            scope_dir = logs_dir.parent().map(Path::to_path_buf).or(scope_dir);
        }
        let Some(scope) = scope_dir
            .and_then(|d| datafusion::object_store::path::Path::from_absolute_path(d).ok())
        else {
            return;
        };
        let store = allowlist::AllowListed::local(scope, allowed);
        ctx.register_object_store(ObjectStoreUrl::local_filesystem().as_ref(), Arc::new(store));
    }

    fn listing_table(
        &self,
        ctx: &SessionContext,
        spans_dir: &Path,
        shape: Shape,
    ) -> Result<Arc<dyn TableProvider>, LoadError> {
        let path = format!("{}/", spans_dir.display());
        let scan_err = |cause| LoadError::Scan {
            path: path.clone(),
            cause,
        };
        // Only the files validated above are listed (see `allowlist`).
        datafusion::object_store::path::Path::from_absolute_path(spans_dir)
            .map_err(|e| scan_err(datafusion::error::DataFusionError::External(Box::new(e))))?;
        self.register_local_store(ctx, Some(spans_dir));
        shape.listing_table(&path)
    }

    /// The listing table over `s3://bucket/prefix/spans/`, through the bucket's object store
    /// registered for `s3://bucket` (listing only the validated objects, see `allowlist`).
    fn remote_listing_table(
        &self,
        ctx: &SessionContext,
        remote: &RemoteSource,
        shape: Shape,
    ) -> Result<Arc<dyn TableProvider>, LoadError> {
        let spans = remote.location.spans_path();
        let path = format!("{}/", remote.location.object_url(&spans));
        let scan_err = |cause| LoadError::Scan {
            path: path.clone(),
            cause,
        };
        let allowed: HashSet<_> = self
            .files
            .iter()
            .filter_map(|f| datafusion::object_store::path::Path::parse(f.path.to_str()?).ok())
            .collect();
        let store = allowlist::AllowListed::new(Arc::clone(&remote.store), spans, allowed);
        let url = ObjectStoreUrl::parse(remote.location.bucket_url()).map_err(scan_err)?;
        ctx.register_object_store(url.as_ref(), Arc::new(store) as Arc<dyn ObjectStore>);
        shape.listing_table(&path)
    }
}

/// Which schema table [`TABLE`] is registered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The canonical span schema (`tripline query`, the MCP server).
    Full,
    /// The canonical schema with the attribute maps' values clipped to `str`
    /// ([`clip::analysis_schema`]): what the analyzer's rows are built from.
    Rows,
}

impl Shape {
    fn span_schema(self) -> SchemaRef {
        match self {
            Shape::Full => schemas::span_schema(),
            Shape::Rows => clip::analysis_schema(&schemas::span_schema()),
        }
    }

    /// The span schema plus the partition columns.
    fn table_schema(self) -> SchemaRef {
        with_partition_columns(self.span_schema())
    }

    fn listing_table(self, path: &str) -> Result<Arc<dyn TableProvider>, LoadError> {
        let format: Arc<dyn FileFormat> = match self {
            Shape::Full => Arc::new(ParquetFormat::default()),
            Shape::Rows => Arc::new(clip::AnalysisFormat::default()),
        };
        listing_table_at(path, self.span_schema(), format)
    }
}

/// The Hive-partitioned listing table at the URL `path` (ending in `/`), with the explicit
/// `schema` (the canonical span or log record schema).
fn listing_table_at(
    path: &str,
    schema: SchemaRef,
    format: Arc<dyn FileFormat>,
) -> Result<Arc<dyn TableProvider>, LoadError> {
    let scan_err = |cause| LoadError::Scan {
        path: path.to_string(),
        cause,
    };
    let url = ListingTableUrl::parse(path).map_err(scan_err)?;
    let options = ListingOptions::new(format)
        .with_file_extension(layout::PARQUET_SUFFIX)
        .with_table_partition_cols(
            PARTITION_COLUMNS
                .iter()
                .map(|p| (p.to_string(), partition_type(p)))
                .collect(),
        );
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(schema);
    Ok(Arc::new(ListingTable::try_new(config).map_err(scan_err)?))
}

/// The canonical schema plus the partition columns, as the listing table declares them.
fn table_schema() -> SchemaRef {
    with_partition_columns(schemas::span_schema())
}

/// The log record schema plus the partition columns, as table `logs` declares them.
pub fn log_table_schema() -> SchemaRef {
    with_partition_columns(schemas::logs::log_schema())
}

fn with_partition_columns(base: SchemaRef) -> SchemaRef {
    let mut fields: Vec<Arc<Field>> = base.fields().iter().cloned().collect();
    for p in PARTITION_COLUMNS {
        fields.push(Arc::new(Field::new(p, partition_type(p), false)));
    }
    Arc::new(Schema::new_with_metadata(fields, base.metadata().clone()))
}

/// `(date, hour)` of a part file from its `date=…/hour=…` parent directories.
fn partition_of_path(path: &Path) -> Option<(String, String)> {
    let hour = path.parent()?;
    let date = hour.parent()?;
    let h = layout::hour_of_dir_name(hour.file_name()?.to_str()?)?;
    let d = layout::date_of_dir_name(date.file_name()?.to_str()?)?;
    Some((d.to_string(), h.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_comes_from_the_two_parent_directories() {
        assert_eq!(
            partition_of_path(Path::new("/d/spans/date=2026-11-30/hour=7/part-x.parquet")),
            Some(("2026-11-30".into(), "7".into()))
        );
        assert_eq!(partition_of_path(Path::new("/d/spans/x.parquet")), None);
    }

    #[test]
    fn summary_names_what_was_read_and_skipped() {
        let s = Scanned {
            files: 3,
            spans: 120,
            wal_spans: 7,
            unreadable_files: vec![Unreadable {
                path: "p".into(),
                error: "bad".into(),
            }],
            ..Scanned::default()
        };
        assert_eq!(
            s.summary(),
            "scanned 120 span(s) in 3 part file(s), 7 of them acknowledged but still in the WAL (a running collector commits them to Parquet within --max-file-age-secs); 1 file(s) could not be read and were skipped"
        );
        assert_eq!(s.warnings(), "warning: skipped p: bad\n");
    }
}
