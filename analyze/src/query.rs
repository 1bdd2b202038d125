//! `tripline query "SQL"`: DataFusion SQL over the store, registered as table `spans` with the
//! explicit canonical schema (plus the `date` / `hour` partition columns).

use std::path::Path;

use arrow::array::Array;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::Table;
use datafusion::prelude::SessionContext;

use crate::cli::QueryFormat;
use crate::load::TABLE;
use crate::store::{Scanned, Snapshot};

/// Running a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Load(#[from] crate::error::LoadError),
    #[error("query failed: {0}; the table is `spans`, see `tripline query 'DESCRIBE spans'`")]
    Sql(datafusion::error::DataFusionError),
    #[error("cannot format the result: {0}")]
    Format(#[from] arrow::error::ArrowError),
}

impl From<datafusion::error::DataFusionError> for QueryError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        Self::Sql(e)
    }
}

/// Runs `sql` and renders the result; also says what table `spans` held (every readable part
/// file plus the acknowledged spans still in the WAL). A store with no span is an error with its
/// cause; a query that selects no row from a non-empty store is not.
pub async fn run_query(
    data_dir: &Path,
    sql: &str,
    format: QueryFormat,
) -> Result<(String, Scanned), QueryError> {
    let mut snapshot = Snapshot::take(data_dir)?;
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
    };
    Ok((render_batches(&batches, format)?, scanned))
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

/// Renders batches as a table, JSON (array of objects) or CSV.
pub fn render_batches(batches: &[RecordBatch], format: QueryFormat) -> Result<String, QueryError> {
    match format {
        QueryFormat::Json => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::json::ArrayWriter::new(&mut buf);
                let refs: Vec<&RecordBatch> = batches.iter().collect();
                w.write_batches(&refs)?;
                w.finish()?;
            }
            let mut s = String::from_utf8_lossy(&buf).into_owned();
            if s.is_empty() {
                s.push_str("[]");
            }
            s.push('\n');
            Ok(s)
        }
        QueryFormat::Csv => {
            let mut out = String::new();
            if let Some(b) = batches.first() {
                let names: Vec<String> = b
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| csv_cell(f.name()))
                    .collect();
                out.push_str(&names.join(","));
                out.push('\n');
            }
            for_each_row(batches, |cells| {
                let row: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
                out.push_str(&row.join(","));
                out.push('\n');
            })?;
            Ok(out)
        }
        QueryFormat::Table => {
            let mut t = Table::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            if let Some(b) = batches.first() {
                t.set_header(
                    b.schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect::<Vec<_>>(),
                );
            }
            let mut rows = 0usize;
            for_each_row(batches, |cells| {
                rows += 1;
                t.add_row(cells);
            })?;
            Ok(format!("{t}\n{rows} row(s)\n"))
        }
    }
}

fn for_each_row(batches: &[RecordBatch], mut f: impl FnMut(Vec<String>)) -> Result<(), QueryError> {
    let opts = FormatOptions::default().with_null("");
    for b in batches {
        let fmts = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..b.num_rows() {
            let cells = fmts
                .iter()
                .zip(b.columns())
                .map(|(fm, col)| {
                    if col.is_null(row) {
                        String::new()
                    } else {
                        fm.value(row).to_string()
                    }
                })
                .collect();
            f(cells);
        }
    }
    Ok(())
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table name, for docs and help text.
pub const QUERY_TABLE: &str = TABLE;
