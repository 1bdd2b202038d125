//! `tripline query "SQL"`: DataFusion SQL over the store, registered as table `spans` with the
//! explicit canonical schema (plus the `date` / `hour` partition columns), and table `logs`
//! (OTLP log records, GenAI events: `schemas::logs`) the same way.

use std::path::Path;

use arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;

use crate::store::{Scanned, Snapshot};

/// Running a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Load(#[from] crate::error::LoadError),
    #[error("query failed: {0}; the tables are `spans` and `logs`, see `tripline query 'DESCRIBE spans'`")]
    Sql(datafusion::error::DataFusionError),
}

impl From<datafusion::error::DataFusionError> for QueryError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        Self::Sql(e)
    }
}

/// Runs `sql` and returns the result (printed by `render::render_batches`); also says what table
/// `spans` held (every readable part file plus the acknowledged spans still in the WAL). A store
/// with no span is an error with its cause; a query that selects no row from a non-empty store is
/// not.
pub async fn run_query(
    data_dir: &Path,
    sql: &str,
) -> Result<(Vec<RecordBatch>, Scanned), QueryError> {
    let mut snapshot = Snapshot::take(data_dir).await?;
    snapshot.require_data()?;
    let batches = match run_sql(&snapshot, sql).await {
        // Data behind a valid footer that cannot be read: name and skip that file, run again.
        Err(QueryError::Sql(e)) if is_read_error(&e) && snapshot.skip_undecodable() > 0 => {
            snapshot.require_data()?;
            run_sql(&snapshot, sql).await?
        }
        other => other?,
    };
    let scanned = Scanned {
        files: snapshot.files.len(),
        spans: snapshot.total_spans(),
        wal_spans: snapshot.wal_spans(),
        unreadable_files: snapshot.all_unreadable(),
        ..Scanned::default()
    };
    Ok((batches, scanned))
}

async fn run_sql(snapshot: &Snapshot, sql: &str) -> Result<Vec<RecordBatch>, QueryError> {
    let ctx = SessionContext::new();
    snapshot.register(&ctx).await?;
    let df = ctx.sql(sql).await?;
    Ok(df.collect().await?)
}

/// Whether a failed query may have hit a damaged file (rather than a mistake in the SQL).
fn is_read_error(e: &datafusion::error::DataFusionError) -> bool {
    use datafusion::error::DataFusionError as E;
    matches!(
        e.find_root(),
        E::ParquetError(_) | E::ArrowError(..) | E::External(_) | E::IoError(_) | E::ObjectStore(_)
    )
}
