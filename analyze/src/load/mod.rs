//! Loading spans: DataFusion over the Hive-partitioned Parquet store, or record batches directly.
//!
//! The store is read with the EXPLICIT canonical schema (`schemas::span_schema()`), never one
//! inferred from whichever file DataFusion opens first (DataFusion issues 14755 / 17517), with the
//! partition columns `date` declared as text and `hour` as an integer (the collector writes
//! `hour=7`, not `07`).
//! Time, service and trace filters are pushed into the scan so whole partitions are pruned and
//! only the columns the selected rules need are read: content columns stay on disk unless a rule
//! asks for them.
//!
//! [`rows`] turns the scanned batches into `SpanRow`s: loading ends there, the model starts from
//! the rows. [`log_join`] first joins OTLP log records (GenAI events, table `logs`) to the rows of
//! their spans, so content sent as events feeds the same derived facts as span attributes.

pub mod log_join;
pub mod rows;

use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use chrono::{DateTime, Datelike, Timelike, Utc};
use datafusion::datasource::MemTable;
use datafusion::prelude::{cast, col, lit, Expr, SessionContext};
use datafusion::scalar::ScalarValue;
use futures::StreamExt;
use schemas::schema::col as c;

use crate::error::LoadError;
use crate::model::span::{SpanRow, TraceId};
use crate::store::{Scanned, Snapshot};
pub use rows::RowReader;

/// Name of the table registered for SQL (`tripline query`).
pub const TABLE: &str = "spans";
/// Hive partition columns of the store (types: [`partition_type`]).
pub const PARTITION_COLUMNS: [&str; 2] = ["date", "hour"];

/// The type of a partition column as the analyzer's table declares it: `date` text
/// (`YYYY-MM-DD`), `hour` an integer, so `ORDER BY hour` sorts 9 before 10.
pub fn partition_type(name: &str) -> arrow::datatypes::DataType {
    match name {
        "hour" => arrow::datatypes::DataType::Int32,
        _ => arrow::datatypes::DataType::Utf8,
    }
}

/// Columns every rule can rely on (the column table's analyzer base set, see
/// [`schemas::columns`]). Content columns are NOT in here.
pub const BASE_COLUMNS: &[&str] = schemas::columns::ANALYZER_BASE;

/// Which columns to read: the base set plus whatever the selected rules declared.
#[derive(Clone, Debug, Default)]
pub struct Projection {
    extra: Vec<&'static str>,
}

impl Projection {
    pub fn base() -> Self {
        Self::default()
    }
    /// Adds columns (e.g. content columns for a rule that scans content).
    pub fn with(mut self, cols: &[&'static str]) -> Self {
        for col in cols {
            if !BASE_COLUMNS.contains(col) && !self.extra.contains(col) {
                self.extra.push(col);
            }
        }
        self
    }
    pub fn columns(&self) -> Vec<&'static str> {
        BASE_COLUMNS
            .iter()
            .copied()
            .chain(self.extra.iter().copied())
            .collect()
    }
}

/// Scan filters from the command line (`--since/--until/--service/--trace`).
#[derive(Clone, Debug, Default)]
pub struct ScanFilter {
    /// Inclusive lower bound on `start_time`, in ns since the epoch.
    pub since_ns: Option<i64>,
    /// Inclusive upper bound on `start_time`, in ns since the epoch.
    pub until_ns: Option<i64>,
    pub service: Option<String>,
    pub trace: Option<TraceId>,
}

impl ScanFilter {
    /// Builds a filter from the raw flag values, `now` anchoring relative times.
    pub fn parse(
        since: Option<&str>,
        until: Option<&str>,
        service: Option<&str>,
        trace: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Self, LoadError> {
        Ok(Self {
            since_ns: since.map(|s| parse_time(s, now)).transpose()?,
            until_ns: until.map(|s| parse_time(s, now)).transpose()?,
            service: service.map(str::to_string),
            trace: trace
                .map(|t| TraceId::parse_hex(t).ok_or_else(|| LoadError::BadTraceId(t.into())))
                .transpose()?,
        })
    }

    /// The filter as DataFusion expressions: bounds on `start_time_unix_nano` plus the same bounds
    /// on the partition columns, which DataFusion evaluates against directory names to prune.
    pub fn exprs(&self) -> Vec<Expr> {
        let mut out = Vec::new();
        let hour = || cast(col("hour"), DataType::Int32);
        if let Some(ns) = self.since_ns {
            out.push(col(c::START_TIME_UNIX_NANO).gt_eq(lit(ns)));
            if let Some((date, h)) = partition_of(ns) {
                out.push(
                    col("date")
                        .gt(lit(date.clone()))
                        .or(col("date").eq(lit(date)).and(hour().gt_eq(lit(h)))),
                );
            }
        }
        if let Some(ns) = self.until_ns {
            out.push(col(c::START_TIME_UNIX_NANO).lt_eq(lit(ns)));
            if let Some((date, h)) = partition_of(ns) {
                out.push(
                    col("date")
                        .lt(lit(date.clone()))
                        .or(col("date").eq(lit(date)).and(hour().lt_eq(lit(h)))),
                );
            }
        }
        if let Some(s) = &self.service {
            out.push(col(c::SERVICE_NAME).eq(lit(s.clone())));
        }
        if let Some(t) = self.trace {
            out.push(col(c::TRACE_ID).eq(lit(ScalarValue::Binary(Some(t.0.to_vec())))));
        }
        out
    }
}

impl ScanFilter {
    /// Whether a `date=` / `hour=` partition can hold spans within the time bounds.
    pub fn admits_partition(&self, date: &str, hour: &str) -> bool {
        let Ok(hour) = hour.parse::<i32>() else {
            return true;
        };
        let after = |ns: i64| {
            partition_of(ns).is_none_or(|(d, h)| date > d.as_str() || (date == d && hour >= h))
        };
        let before = |ns: i64| {
            partition_of(ns).is_none_or(|(d, h)| date < d.as_str() || (date == d && hour <= h))
        };
        self.since_ns.is_none_or(after) && self.until_ns.is_none_or(before)
    }

    /// The filter as the flags that express it (`--since 2026-11-30T00:00:00Z --service x`).
    pub fn describe(&self) -> String {
        let time = |ns: i64| DateTime::<Utc>::from_timestamp_nanos(ns).to_rfc3339();
        let mut parts = Vec::new();
        if let Some(ns) = self.since_ns {
            parts.push(format!("--since {}", time(ns)));
        }
        if let Some(ns) = self.until_ns {
            parts.push(format!("--until {}", time(ns)));
        }
        if let Some(s) = &self.service {
            parts.push(format!("--service {s}"));
        }
        if let Some(t) = &self.trace {
            parts.push(format!("--trace {t}"));
        }
        if parts.is_empty() {
            "the scan".to_string()
        } else {
            parts.join(" ")
        }
    }
}

/// The `date=` / `hour=` partition a timestamp falls in (UTC, hour not zero-padded).
fn partition_of(ns: i64) -> Option<(String, i32)> {
    let t = DateTime::<Utc>::from_timestamp_nanos(ns);
    let date = format!("{:04}-{:02}-{:02}", t.year(), t.month(), t.day());
    i32::try_from(t.hour()).ok().map(|h| (date, h))
}

/// RFC 3339, or a relative duration before `now` (`90s`, `30m`, `24h`, `7d`, `2w`).
pub fn parse_time(s: &str, now: DateTime<Utc>) -> Result<i64, LoadError> {
    let bad = || LoadError::BadTime { value: s.into() };
    let t = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return dt.with_timezone(&Utc).timestamp_nanos_opt().ok_or_else(bad);
    }
    let split = t.find(|ch: char| !ch.is_ascii_digit()).ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" => n.checked_mul(60).ok_or_else(bad)?,
        "h" => n.checked_mul(3600).ok_or_else(bad)?,
        "d" => n.checked_mul(86_400).ok_or_else(bad)?,
        "w" => n.checked_mul(7 * 86_400).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    let now_ns = now.timestamp_nanos_opt().ok_or_else(bad)?;
    secs.checked_mul(1_000_000_000)
        .and_then(|d| now_ns.checked_sub(d))
        .ok_or_else(bad)
}

/// A scan of the store: the rows (one part per scanned batch, every slot `Some`, unordered;
/// [`crate::model::Model::from_parts`] takes this shape without moving rows twice) and what was
/// scanned.
#[derive(Debug)]
pub struct StoreScan {
    pub parts: Vec<Vec<Option<SpanRow>>>,
    pub scanned: Scanned,
}

/// Scans the store with `filter`, reading only `projection`'s columns: the readable part files
/// plus the acknowledged spans still in the WAL. Unreadable files are skipped and listed in
/// [`Scanned::unreadable_files`]. A scan that reads no span is [`LoadError::NoSpans`] with its
/// likely cause.
pub async fn scan_store(
    data_dir: &Path,
    filter: &ScanFilter,
    projection: &Projection,
) -> Result<StoreScan, LoadError> {
    let mut snapshot = Snapshot::take(data_dir).await?;
    snapshot.require_data()?;
    let (ctx, mut parts) = match scan_once(&snapshot, data_dir, filter, projection).await {
        Ok(done) => done,
        // A file whose footer is fine but whose data is not: find it by decoding the files,
        // name it, skip it and scan the rest once more.
        Err(e @ LoadError::Scan { .. }) => {
            if snapshot.skip_undecodable() == 0 {
                return Err(e);
            }
            snapshot.require_data()?;
            scan_once(&snapshot, data_dir, filter, projection).await?
        }
        Err(e) => return Err(e),
    };
    let path = data_dir.join("spans").display().to_string();
    let scan_err = |cause| LoadError::Scan {
        path: path.clone(),
        cause,
    };
    let spans: u64 = parts.iter().map(|p| p.len() as u64).sum();
    if spans == 0 {
        return Err(LoadError::NoSpans(snapshot.diagnose(filter)));
    }
    let wal_spans = wal_spans_matching(&ctx, &snapshot, filter)
        .await
        .map_err(scan_err)?;
    let joined = if snapshot.total_log_records() > 0 {
        log_join::join_logs(&ctx, filter, projection, &mut parts).await?
    } else {
        log_join::Joined::default()
    };
    Ok(StoreScan {
        parts,
        scanned: Scanned {
            files: snapshot.files_selected(filter),
            spans,
            wal_spans,
            unreadable_files: snapshot.all_unreadable(),
            log_records: joined.log_records,
            spans_with_event_content: joined.spans,
        },
    })
}

/// One scan of the snapshot's table with `filter` and `projection`.
async fn scan_once(
    snapshot: &Snapshot,
    data_dir: &Path,
    filter: &ScanFilter,
    projection: &Projection,
) -> Result<(SessionContext, Vec<Vec<Option<SpanRow>>>), LoadError> {
    let ctx = SessionContext::new();
    snapshot.register(&ctx).await?;
    let path = data_dir.join("spans").display().to_string();
    let scan_err = |cause| LoadError::Scan {
        path: path.clone(),
        cause,
    };
    let mut df = ctx.table(TABLE).await.map_err(scan_err)?;
    for e in filter.exprs() {
        df = df.filter(e).map_err(scan_err)?;
    }
    let df = df.select_columns(&projection.columns()).map_err(scan_err)?;
    // Streamed, not collected, one task per partition: each runtime thread decodes its share of
    // the files and turns every batch into rows as it arrives, so decoding and conversion use all
    // cores and only a few batches of Arrow data are alive at once. Row order does not matter:
    // the model sorts by start time.
    let streams = df.execute_stream_partitioned().await.map_err(scan_err)?;
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            let path = path.clone();
            tokio::spawn(async move {
                let mut reader = RowReader::default();
                // One exactly-sized chunk per batch: a growing vector would copy every row at
                // each doubling and touch twice the memory (fresh pages are costly here).
                let mut chunks: Vec<Vec<Option<SpanRow>>> = Vec::new();
                while let Some(batch) = stream.next().await {
                    let batch = batch.map_err(|cause| LoadError::Scan {
                        path: path.clone(),
                        cause,
                    })?;
                    let mut chunk = Vec::with_capacity(batch.num_rows());
                    reader.append(&batch, &mut chunk)?;
                    chunks.push(chunk);
                }
                Ok::<_, LoadError>(chunks)
            })
        })
        .collect();
    let mut parts = Vec::with_capacity(tasks.len());
    for task in tasks {
        let part = task.await.map_err(|e| LoadError::Scan {
            path: path.clone(),
            cause: datafusion::error::DataFusionError::External(Box::new(e)),
        })??;
        parts.extend(part);
    }
    Ok((ctx, parts))
}

/// How many of the WAL tail's spans pass `filter`.
async fn wal_spans_matching(
    ctx: &SessionContext,
    snapshot: &Snapshot,
    filter: &ScanFilter,
) -> datafusion::error::Result<u64> {
    let exprs = filter.exprs();
    if snapshot.wal_batches.is_empty() || exprs.is_empty() {
        return Ok(snapshot.wal_spans());
    }
    let schema = snapshot.wal_batches[0].schema();
    let mem = MemTable::try_new(schema, vec![snapshot.wal_batches.clone()])?;
    let mut df = ctx.read_table(Arc::new(mem))?;
    for e in exprs {
        df = df.filter(e)?;
    }
    Ok(df.count().await? as u64)
}

/// Scans the store with `filter`, reading only `projection`'s columns (see [`scan_store`]).
pub async fn load_store(
    data_dir: &Path,
    filter: &ScanFilter,
    projection: &Projection,
) -> Result<Vec<SpanRow>, LoadError> {
    let scan = scan_store(data_dir, filter, projection).await?;
    Ok(scan.parts.into_iter().flatten().flatten().collect())
}

/// Converts record batches (canonical schema, possibly projected) into span rows; the same code
/// path the store scan ends in, used directly by tests and fixtures.
pub fn load_batches(batches: &[RecordBatch]) -> Result<Vec<SpanRow>, LoadError> {
    let mut out = Vec::with_capacity(batches.iter().map(RecordBatch::num_rows).sum());
    let mut reader = RowReader::default();
    for b in batches {
        reader.append(b, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 8, 0, 0).unwrap()
    }

    #[test]
    fn parses_relative_and_absolute_times() {
        let now_ns = now().timestamp_nanos_opt().unwrap();
        assert_eq!(
            parse_time("24h", now()).unwrap(),
            now_ns - 86_400 * 1_000_000_000
        );
        assert_eq!(
            parse_time("30m", now()).unwrap(),
            now_ns - 1_800 * 1_000_000_000
        );
        assert_eq!(
            parse_time("2026-11-29T07:00:00Z", now()).unwrap(),
            now_ns - 25 * 3_600 * 1_000_000_000
        );
        assert!(matches!(
            parse_time("yesterday", now()),
            Err(LoadError::BadTime { value }) if value == "yesterday"
        ));
        assert!(parse_time("5y", now()).is_err());
        assert!(parse_time("h", now()).is_err());
    }

    #[test]
    fn partition_of_is_not_zero_padded() {
        let ns = parse_time("2026-11-30T07:59:59Z", now()).unwrap();
        assert_eq!(partition_of(ns), Some(("2026-11-30".to_string(), 7)));
    }

    #[test]
    fn bad_trace_id_is_an_error_naming_it() {
        let e = ScanFilter::parse(None, None, None, Some("abc"), now()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid trace id \"abc\": expected 32 hex digits"
        );
    }

    #[test]
    fn projection_never_duplicates_and_keeps_content_out_by_default() {
        let p = Projection::base().with(&[c::GEN_AI_TOOL_CALL_RESULT, c::TRACE_ID]);
        let cols = p.columns();
        assert_eq!(cols.len(), BASE_COLUMNS.len() + 1);
        assert!(!Projection::base()
            .columns()
            .contains(&c::GEN_AI_TOOL_CALL_RESULT));
    }

    #[tokio::test]
    async fn missing_data_dir_names_it() {
        let e = load_store(
            Path::new("/nonexistent/tripline-data"),
            &ScanFilter::default(),
            &Projection::base(),
        )
        .await
        .unwrap_err();
        assert!(e
            .to_string()
            .starts_with("data dir /nonexistent/tripline-data does not exist"));
    }
}
