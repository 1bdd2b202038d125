//! What the newly committed part files touch: their traces, their span ids and the earliest start
//! time, read from four small columns of those files only (not from the whole store). The
//! incremental check widens its scan from that start time and reports only findings on what
//! these files touch.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray as _};
use arrow::datatypes::Int64Type;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::ProjectionMask;
use schemas::schema::col;

use crate::model::{SpanId, TraceId};

/// The traces, spans and time range of a set of part files.
#[derive(Debug, Default)]
pub struct NewData {
    pub traces: HashSet<TraceId>,
    pub spans: HashSet<SpanId>,
    /// Earliest span start, ns since the epoch.
    pub min_start_ns: Option<i64>,
    /// Latest span end (or start, when later), ns since the epoch.
    pub max_end_ns: Option<i64>,
    /// Rows read.
    pub rows: u64,
}

/// A new part file could not be read (it was readable a moment before, in the snapshot).
#[derive(Debug, thiserror::Error)]
#[error("cannot read the new part file {path}: {error}")]
pub struct NewPartError {
    pub path: PathBuf,
    pub error: String,
}

impl NewData {
    /// Reads `trace_id`, `span_id` and the two times of each file.
    pub fn read<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<Self, NewPartError> {
        let mut out = Self::default();
        for path in paths {
            out.add_file(path).map_err(|error| NewPartError {
                path: path.to_path_buf(),
                error,
            })?;
        }
        Ok(out)
    }

    fn add_file(&mut self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
        let mask = ProjectionMask::columns(
            builder.parquet_schema(),
            [
                col::TRACE_ID,
                col::SPAN_ID,
                col::START_TIME_UNIX_NANO,
                col::END_TIME_UNIX_NANO,
            ],
        );
        let reader = builder
            .with_projection(mask)
            .build()
            .map_err(|e| e.to_string())?;
        for batch in reader {
            let batch = batch.map_err(|e| e.to_string())?;
            let column = |name: &str| {
                batch
                    .column_by_name(name)
                    .ok_or_else(|| format!("no column {name}"))
            };
            let traces = column(col::TRACE_ID)?
                .as_binary_opt::<i32>()
                .ok_or("trace_id is not binary")?;
            let spans = column(col::SPAN_ID)?
                .as_binary_opt::<i32>()
                .ok_or("span_id is not binary")?;
            let starts = column(col::START_TIME_UNIX_NANO)?
                .as_primitive_opt::<Int64Type>()
                .ok_or("start_time_unix_nano is not an int64")?;
            let ends = column(col::END_TIME_UNIX_NANO)?
                .as_primitive_opt::<Int64Type>()
                .ok_or("end_time_unix_nano is not an int64")?;
            for i in 0..batch.num_rows() {
                if let Some(t) = TraceId::from_slice(traces.value(i)) {
                    self.traces.insert(t);
                }
                if let Some(s) = SpanId::from_slice(spans.value(i)) {
                    self.spans.insert(s);
                }
                if starts.is_valid(i) {
                    let start = starts.value(i);
                    let end = if ends.is_valid(i) {
                        ends.value(i).max(start)
                    } else {
                        start
                    };
                    self.min_start_ns = Some(self.min_start_ns.map_or(start, |m| m.min(start)));
                    self.max_end_ns = Some(self.max_end_ns.map_or(end, |m| m.max(end)));
                }
            }
            self.rows += batch.num_rows() as u64;
        }
        Ok(())
    }
}
