//! The acknowledged spans (and log records) that are only in the WAL: records above the checkpoint, minus the rows
//! a committed part file already holds.
//!
//! Why: the collector acknowledges a span once it is in the WAL and commits Parquet files up to
//! `--max-file-age` later (60 s by default). Without this, a query right after an export sees
//! nothing and says so with confidence. The exactly-once rule is the collector's own (see
//! `collector::store::committed_records`): the rows of WAL record `seq` in partition P are committed when a part
//! file of P from the same WAL epoch has `first_seq <= seq <= last_seq`. Coverage is decided
//! against the snapshot's files only, so a file committed after the snapshot (and not scanned)
//! leaves its rows counted from the WAL, never twice and never not at all.

use std::collections::HashMap;

use arrow::array::{ArrayRef, BooleanArray, StringArray};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use collector::store::batcher::row_partitions;
use collector::store::verify::{scan_wal, WalRange};
use collector::store::wal::record;
use schemas::layout::Table;

use super::{PartInfo, Unreadable};

/// WAL records above the checkpoint, decoded.
#[derive(Debug, Default)]
pub struct WalTail {
    /// The WAL's epoch (None without a checkpoint).
    pub epoch: Option<String>,
    /// `(seq, batch)` in sequence order, canonical schema.
    pub records: Vec<(u64, RecordBatch)>,
    /// Damage found while reading (named by segment), and records that cannot be decoded.
    pub problems: Vec<Unreadable>,
}

impl WalTail {
    /// Reads the WAL of `data_dir` (read-only; safe next to a running collector).
    pub fn read(data_dir: &std::path::Path) -> WalTail {
        let mut records = Vec::new();
        let mut problems = Vec::new();
        let scan = scan_wal(data_dir, |seq, payload| match record::decode(&payload) {
            Ok(batches) if batches.len() == 1 => {
                records.extend(batches.into_iter().map(|b| (seq, b)));
            }
            Ok(batches) => {
                // Zero batches: an empty record, nothing to show.
                if let Some(schema) = batches.first().map(RecordBatch::schema) {
                    match arrow::compute::concat_batches(&schema, &batches) {
                        Ok(b) => records.push((seq, b)),
                        Err(e) => problems.push(undecodable(data_dir, seq, &e.to_string())),
                    }
                }
            }
            Err(e) => problems.push(undecodable(data_dir, seq, &e.to_string())),
        });
        for d in scan.damage {
            problems.push(Unreadable {
                path: d.segment.display().to_string(),
                error: format!(
                    "WAL damaged at byte {}: {}; acknowledged spans after it are not shown (run `tripline verify`)",
                    d.offset, d.reason
                ),
            });
        }
        WalTail {
            epoch: scan.checkpoint.map(|c| c.epoch),
            records,
            problems,
        }
    }

    /// The rows of `table` (span or log records; the WAL holds both) no file of `files` (that
    /// table's part files) holds yet, as batches of `schema` (the table's columns plus the
    /// `date` / `hour` partition columns, filled from each row's partition).
    pub fn uncommitted(
        &self,
        files: &[PartInfo],
        schema: &SchemaRef,
        table: Table,
    ) -> (Vec<RecordBatch>, Vec<Unreadable>) {
        let mut ranges: HashMap<(&str, &str), Vec<&WalRange>> = HashMap::new();
        for f in files {
            if let (Some((date, hour)), Some(w)) = (&f.partition, &f.wal) {
                ranges
                    .entry((date.as_str(), hour.as_str()))
                    .or_default()
                    .push(w);
            }
        }
        let epoch = self.epoch.as_deref().unwrap_or("");
        let mut out = Vec::new();
        let mut problems = Vec::new();
        for (seq, batch) in &self.records {
            let is_logs = schemas::logs::is_log_schema(&batch.schema());
            if is_logs != (table == Table::Logs) {
                continue;
            }
            let keys: Vec<(String, String)> = row_partitions(batch)
                .iter()
                .map(|p| {
                    (
                        format!("{:04}-{:02}-{:02}", p.year, p.month, p.day),
                        p.hour.to_string(),
                    )
                })
                .collect();
            let keep: Vec<bool> = keys
                .iter()
                .map(|(d, h)| {
                    !ranges
                        .get(&(d.as_str(), h.as_str()))
                        .is_some_and(|rs| rs.iter().any(|r| r.covers(epoch, *seq)))
                })
                .collect();
            if !keep.iter().any(|k| *k) {
                continue;
            }
            let built = with_partitions(batch, &keys, schema).and_then(|b| {
                if keep.iter().all(|k| *k) {
                    Ok(b)
                } else {
                    arrow::compute::filter_record_batch(&b, &BooleanArray::from(keep))
                }
            });
            match built {
                Ok(b) => out.push(b),
                Err(e) => problems.push(Unreadable {
                    path: format!("WAL record {seq}"),
                    error: format!("does not match the store's schema: {e}; not shown"),
                }),
            }
        }
        (out, problems)
    }
}

fn undecodable(data_dir: &std::path::Path, seq: u64, e: &str) -> Unreadable {
    Unreadable {
        path: data_dir
            .join(schemas::layout::WAL_DIR)
            .display()
            .to_string(),
        error: format!("WAL record {seq} is not a readable Arrow batch: {e}; not shown"),
    }
}

/// `batch` with the partition columns appended, as `schema`.
fn with_partitions(
    batch: &RecordBatch,
    keys: &[(String, String)],
    schema: &SchemaRef,
) -> Result<RecordBatch, arrow::error::ArrowError> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let col = match field.name().as_str() {
            "date" => std::sync::Arc::new(StringArray::from_iter_values(
                keys.iter().map(|(d, _)| d.as_str()),
            )) as ArrayRef,
            "hour" => std::sync::Arc::new(arrow::array::Int32Array::from_iter_values(
                keys.iter().map(|(_, h)| h.parse::<i32>().unwrap_or(0)),
            )) as ArrayRef,
            name => match batch.column_by_name(name) {
                Some(c) => c.clone(),
                // A column added to the schema after the record was written.
                None if field.is_nullable() => {
                    arrow::array::new_null_array(field.data_type(), batch.num_rows())
                }
                None => {
                    return Err(arrow::error::ArrowError::SchemaError(format!(
                        "column {name} missing"
                    )))
                }
            },
        };
        columns.push(col);
    }
    RecordBatch::try_new(schema.clone(), columns)
}
