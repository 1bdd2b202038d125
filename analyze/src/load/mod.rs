//! Loading spans: DataFusion over the Hive-partitioned Parquet store, or record batches directly.
//!
//! The store is read with the EXPLICIT canonical schema (`schemas::span_schema()`), never one
//! inferred from whichever file DataFusion opens first (DataFusion issues 14755 / 17517), with the
//! partition columns `date` declared as text and `hour` as an integer (the collector writes
//! `hour=7`, not `07`).
//! Time, service and trace filters ([`ScanFilter`], declared in `store::filter` because the
//! snapshot uses them too) are pushed into the scan so whole partitions are pruned and
//! only the columns the selected rules need are read: content columns stay on disk unless a rule
//! asks for them.
//!
//! [`rows`] turns the scanned batches into `SpanRow`s: loading ends there, the model starts from
//! the rows. [`log_join`] first joins OTLP log records (GenAI events, table `logs`) to the rows of
//! their spans, so content sent as events feeds the same derived facts as span attributes.

mod extent_runs;
pub mod id_col;
pub mod index;
pub mod log_join;
pub mod rows;
pub mod str_col;
pub mod trace_filter;

use std::path::Path;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::{Expr, SessionContext};
use futures::StreamExt;

use crate::error::LoadError;
use crate::model::span::SpanRow;
pub use crate::store::filter::{parse_time, ScanFilter};
pub use crate::store::table::{partition_type, PARTITION_COLUMNS, TABLE};
use crate::store::{Scanned, Snapshot};
pub use rows::RowReader;

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
            // the map's keys are the span's keys only with those kept in typed columns
            let with: &[&'static str] = if *col == schemas::schema::col::ATTRIBUTES {
                &[
                    schemas::schema::col::ATTRIBUTES,
                    schemas::schema::col::ATTRIBUTES_IN_COLUMNS,
                ]
            } else {
                std::slice::from_ref(col)
            };
            for col in with {
                if !BASE_COLUMNS.contains(col) && !self.extra.contains(col) {
                    self.extra.push(col);
                }
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
        log_join::join_logs(&ctx, filter, projection, &mut parts, &|_| true).await?
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
    let (parts, _) = scan_rows(&ctx, snapshot, data_dir, filter.exprs(), projection).await?;
    Ok((ctx, parts))
}

/// Registers `snapshot`'s table on `ctx` unless it is there already: a session scanning window
/// after window registers it once, before the first window.
pub async fn register_once(ctx: &SessionContext, snapshot: &Snapshot) -> Result<(), LoadError> {
    if !ctx.table_exist(TABLE).unwrap_or(false) {
        snapshot.register_for_rows(ctx).await?;
    }
    Ok(())
}

/// Scans one window of a windowed `check` (pass 2): the spans passing `filters` whose trace is
/// in `keep`, from the snapshot registered on `ctx` ([`register_once`]) as pass 1 indexed it,
/// on `ctx`'s memory pool; and how many rows the scan handed over. Owns what it reads, so it can
/// run as a task while the previous window is judged.
///
/// The trace set is one more filter of the scan ([`trace_filter::in_traces`]): the Parquet
/// reader drops other traces' rows on `trace_id` alone, before their other columns are decoded,
/// and what comes out has passed it. (A second membership test of every row after the scan was
/// 0.8% of a 1M-span `check`'s instructions and found nothing to drop, session 55.)
pub async fn scan_window(
    ctx: SessionContext,
    data_dir: std::path::PathBuf,
    mut filters: Vec<Expr>,
    projection: Projection,
    keep: index::SharedTraces,
) -> Result<(Vec<Vec<Option<SpanRow>>>, u64), LoadError> {
    filters.push(trace_filter::in_traces(&keep));
    scan_registered(&ctx, &data_dir, filters, &projection).await
}

async fn scan_rows(
    ctx: &SessionContext,
    snapshot: &Snapshot,
    data_dir: &Path,
    filters: Vec<Expr>,
    projection: &Projection,
) -> Result<(Vec<Vec<Option<SpanRow>>>, u64), LoadError> {
    register_once(ctx, snapshot).await?;
    scan_registered(ctx, data_dir, filters, projection).await
}

async fn scan_registered(
    ctx: &SessionContext,
    data_dir: &Path,
    filters: Vec<Expr>,
    projection: &Projection,
) -> Result<(Vec<Vec<Option<SpanRow>>>, u64), LoadError> {
    let path = data_dir.join("spans").display().to_string();
    let scan_err = |cause| LoadError::Scan {
        path: path.clone(),
        cause,
    };
    let mut df = ctx.table(TABLE).await.map_err(scan_err)?;
    for e in filters {
        df = df.filter(e).map_err(scan_err)?;
    }
    let df = df.select_columns(&projection.columns()).map_err(scan_err)?;
    // Streamed, not collected, one task per partition: each runtime thread decodes its share of
    // the files and turns every batch into rows as it arrives, so decoding and conversion use all
    // cores and only a few batches of Arrow data are alive at once. Row order does not matter:
    // the model sorts by start time.
    let plan = df.create_physical_plan().await.map_err(scan_err)?;
    let streams = datafusion::physical_plan::execute_stream_partitioned(
        std::sync::Arc::clone(&plan),
        ctx.task_ctx(),
    )
    .map_err(scan_err)?;
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            let path = path.clone();
            tokio::spawn(async move {
                let mut reader = RowReader::default();
                // One exactly-sized chunk per batch: a growing vector would copy every row at
                // each doubling and touch twice the memory (fresh pages are costly here).
                let mut chunks: Vec<Vec<Option<SpanRow>>> = Vec::new();
                let mut decoded = 0u64;
                while let Some(batch) = stream.next().await {
                    let scan_err = |cause| LoadError::Scan {
                        path: path.clone(),
                        cause,
                    };
                    let batch = batch.map_err(scan_err)?;
                    decoded += batch.num_rows() as u64;
                    let mut chunk = Vec::with_capacity(batch.num_rows());
                    reader.append(&batch, &mut chunk)?;
                    chunks.push(chunk);
                }
                Ok::<_, LoadError>((chunks, decoded))
            })
        })
        .collect();
    let mut parts = Vec::with_capacity(tasks.len());
    let mut decoded = 0;
    for task in tasks {
        let (part, rows) = task.await.map_err(|e| LoadError::Scan {
            path: path.clone(),
            cause: datafusion::error::DataFusionError::External(Box::new(e)),
        })??;
        parts.extend(part);
        decoded += rows;
    }
    // The scan's plan with DataFusion's metrics (rows pruned by statistics, by the page index
    // and by the filters evaluated in the Parquet reader; decode time), for profiling.
    if std::env::var_os("TRIPLINE_SCAN_METRICS").is_some() {
        eprintln!(
            "{}",
            datafusion::physical_plan::display::DisplayableExecutionPlan::with_metrics(
                plan.as_ref()
            )
            .indent(true)
        );
    }
    Ok((parts, decoded))
}

/// How many of the WAL tail's spans pass `filter`.
pub(crate) async fn wal_spans_matching(
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
    use schemas::schema::col as c;

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
