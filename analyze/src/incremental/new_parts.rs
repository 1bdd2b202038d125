//! What the newly committed part files touch: their traces, their span ids and the earliest start
//! time, read from four small columns of those files only (not from the whole store). The
//! incremental check widens its scan from that start time and reports only findings on what
//! these files touch. Local files are read in place; objects of a store on object storage with
//! ranged GETs of those four column chunks ([`NewData::read_remote`]). The ids are held in
//! bounded memory ([`super::id_set`]): past a bound they are looked up in a sorted file.

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

use super::id_set::{self, IdSet, IdSetError};
use crate::model::{SpanId, TraceId};
use crate::store::object_listing::RemoteSource;

/// The traces, spans and time range of a set of part files.
#[derive(Debug)]
pub struct NewData {
    pub traces: IdSet<16>,
    pub spans: IdSet<8>,
    /// Earliest span start, ns since the epoch.
    pub min_start_ns: Option<i64>,
    /// Latest span end (or start, when later), ns since the epoch.
    pub max_end_ns: Option<i64>,
    /// Rows read.
    pub rows: u64,
    /// Whether `traces` and `spans` are filled (not on a first run, which judges everything).
    ids: bool,
}

/// A new part file could not be read (it was readable a moment before, in the snapshot), or
/// its ids could not be spilled.
#[derive(Debug, thiserror::Error)]
pub enum NewPartError {
    #[error("cannot read the new part file {path}: {error}")]
    Read { path: PathBuf, error: String },
    #[error(transparent)]
    Ids(#[from] IdSetError),
}

/// The four columns an increment reads of a new file.
const COLUMNS: [&str; 4] = [
    col::TRACE_ID,
    col::SPAN_ID,
    col::START_TIME_UNIX_NANO,
    col::END_TIME_UNIX_NANO,
];

impl NewData {
    /// Nothing read yet; ids are kept when `ids`, spilling into a temporary directory under
    /// `spill_dir` (`None`: the system temp dir) past [`IdSet`]'s bound (`TRIPLINE_SPILL_IDS`).
    fn empty(ids: bool, spill_dir: Option<&Path>) -> Self {
        let max_held = id_set::max_held_from_env();
        Self {
            traces: IdSet::new(max_held, spill_dir),
            spans: IdSet::new(max_held, spill_dir),
            min_start_ns: None,
            max_end_ns: None,
            rows: 0,
            ids,
        }
    }

    /// Reads `trace_id`, `span_id` and the two times of each file; keeps the ids only when
    /// `ids`.
    pub fn read<'a>(
        paths: impl IntoIterator<Item = &'a Path>,
        ids: bool,
        spill_dir: Option<&Path>,
    ) -> Result<Self, NewPartError> {
        let mut out = Self::empty(ids, spill_dir);
        for path in paths {
            out.add_file(path).map_err(|e| e.in_file(path))?;
        }
        out.finish()?;
        Ok(out)
    }

    /// Ends reading: the id sets are sorted (or merged on disk) for lookups.
    fn finish(&mut self) -> Result<(), IdSetError> {
        self.traces.finish()?;
        self.spans.finish()
    }

    /// Whether `trace` is one of the new spans' traces.
    pub fn has_trace(&self, trace: &TraceId) -> Result<bool, IdSetError> {
        self.traces.contains(&trace.0)
    }

    /// Whether `span` is one of the new spans.
    pub fn has_span(&self, span: &SpanId) -> Result<bool, IdSetError> {
        self.spans.contains(&span.0)
    }

    /// The same for objects of a store on object storage (as the snapshot listed them), one
    /// object at a time, each with ranged GETs of its footer and the four column chunks.
    pub async fn read_remote<'a>(
        source: &RemoteSource,
        objects: impl IntoIterator<Item = &'a ObjectMeta>,
        ids: bool,
        spill_dir: Option<&Path>,
    ) -> Result<Self, NewPartError> {
        let mut out = Self::empty(ids, spill_dir);
        for object in objects {
            let url = || PathBuf::from(source.location.object_url(&object.location));
            let error = |error: String| NewPartError::Read { path: url(), error };
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
                out.add_batch(&batch).map_err(|e| e.in_file(&url()))?;
            }
        }
        out.finish()?;
        Ok(out)
    }

    fn add_file(&mut self, path: &Path) -> Result<(), AddError> {
        let file = std::fs::File::open(path).map_err(AddError::read)?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(AddError::read)?;
        let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
        let reader = builder
            .with_projection(mask)
            .build()
            .map_err(AddError::read)?;
        for batch in reader {
            self.add_batch(&batch.map_err(AddError::read)?)?;
        }
        Ok(())
    }

    fn add_batch(&mut self, batch: &RecordBatch) -> Result<(), AddError> {
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
                    self.traces.insert(t.0)?;
                }
                if let Some(s) = SpanId::from_slice(spans.value(i)) {
                    self.spans.insert(s.0)?;
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

/// Adding a file's rows failed: reading it, or spilling its ids.
enum AddError {
    Read(String),
    Ids(IdSetError),
}

impl AddError {
    fn read(e: impl std::fmt::Display) -> Self {
        AddError::Read(e.to_string())
    }

    fn in_file(self, path: &Path) -> NewPartError {
        match self {
            AddError::Read(error) => NewPartError::Read {
                path: path.to_path_buf(),
                error,
            },
            AddError::Ids(e) => NewPartError::Ids(e),
        }
    }
}

impl From<IdSetError> for AddError {
    fn from(e: IdSetError) -> Self {
        AddError::Ids(e)
    }
}

impl From<&str> for AddError {
    fn from(e: &str) -> Self {
        AddError::Read(e.to_string())
    }
}

impl From<String> for AddError {
    fn from(e: String) -> Self {
        AddError::Read(e)
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
