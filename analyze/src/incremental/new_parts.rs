//! What the newly committed part files touch: their traces, their span ids and the earliest start
//! time, read from four small columns of those files only (not from the whole store). The
//! incremental check widens its scan from that start time and reports only findings on what
//! these files touch. Local files are read in place; objects of a store on object storage with
//! ranged GETs of those four column chunks ([`NewData::read_remote`]).

use std::collections::HashSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray as _};
use arrow::datatypes::Int64Type;
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use datafusion::object_store::path::Path as ObjectPath;
use datafusion::object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use datafusion::parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use futures::future::BoxFuture;
use futures::{FutureExt as _, TryStreamExt as _};
use schemas::schema::col;

use crate::model::{SpanId, TraceId};
use crate::store::object_listing::RemoteSource;

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
    /// Whether `traces` and `spans` are filled (not on a first run, which judges everything).
    ids: bool,
}

/// A new part file could not be read (it was readable a moment before, in the snapshot).
#[derive(Debug, thiserror::Error)]
#[error("cannot read the new part file {path}: {error}")]
pub struct NewPartError {
    pub path: PathBuf,
    pub error: String,
}

/// The four columns an increment reads of a new file.
const COLUMNS: [&str; 4] = [
    col::TRACE_ID,
    col::SPAN_ID,
    col::START_TIME_UNIX_NANO,
    col::END_TIME_UNIX_NANO,
];

impl NewData {
    /// Reads `trace_id`, `span_id` and the two times of each file; keeps the ids only when
    /// `ids`.
    pub fn read<'a>(
        paths: impl IntoIterator<Item = &'a Path>,
        ids: bool,
    ) -> Result<Self, NewPartError> {
        let mut out = Self {
            ids,
            ..Self::default()
        };
        for path in paths {
            out.add_file(path).map_err(|error| NewPartError {
                path: path.to_path_buf(),
                error,
            })?;
        }
        Ok(out)
    }

    /// The same for objects of a store on object storage (as the snapshot listed them), one
    /// object at a time, each with ranged GETs of its footer and the four column chunks.
    pub async fn read_remote<'a>(
        source: &RemoteSource,
        objects: impl IntoIterator<Item = &'a ObjectMeta>,
        ids: bool,
    ) -> Result<Self, NewPartError> {
        let mut out = Self {
            ids,
            ..Self::default()
        };
        for object in objects {
            let error = |error: String| NewPartError {
                path: PathBuf::from(source.location.object_url(&object.location)),
                error,
            };
            let reader = ObjectReader {
                store: source.store.clone(),
                path: object.location.clone(),
                size: object.size,
            };
            let builder = ParquetRecordBatchStreamBuilder::new_with_options(
                reader,
                ArrowReaderOptions::new(),
            )
            .await
            .map_err(|e| error(e.to_string()))?;
            let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
            let mut stream = builder
                .with_projection(mask)
                .build()
                .map_err(|e| error(e.to_string()))?;
            while let Some(batch) = stream.try_next().await.map_err(|e| error(e.to_string()))? {
                out.add_batch(&batch).map_err(error)?;
            }
        }
        Ok(out)
    }

    fn add_file(&mut self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
        let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
        let reader = builder
            .with_projection(mask)
            .build()
            .map_err(|e| e.to_string())?;
        for batch in reader {
            self.add_batch(&batch.map_err(|e| e.to_string())?)?;
        }
        Ok(())
    }

    fn add_batch(&mut self, batch: &RecordBatch) -> Result<(), String> {
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
            if self.ids {
                if let Some(t) = TraceId::from_slice(traces.value(i)) {
                    self.traces.insert(t);
                }
                if let Some(s) = SpanId::from_slice(spans.value(i)) {
                    self.spans.insert(s);
                }
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
        Ok(())
    }
}

/// One object read with ranged GETs (parquet's own object-store reader is deprecated in favour
/// of implementing [`AsyncFileReader`]; this is its documented shape).
struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    size: u64,
}

fn external(e: datafusion::object_store::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl AsyncFileReader for ObjectReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes, ParquetError>> {
        async move {
            self.store
                .get_range(&self.path, range)
                .await
                .map_err(external)
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, Result<Vec<Bytes>, ParquetError>> {
        async move {
            self.store
                .get_ranges(&self.path, &ranges)
                .await
                .map_err(external)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>, ParquetError>> {
        async move {
            let size = self.size;
            let metadata = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .load_and_finish(self, size)
                .await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}
