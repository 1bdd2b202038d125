//! Exactly-once replay: which WAL records are already in committed Parquet files.
//!
//! The checkpoint is advanced only after files are committed, so a crash between a file's rename
//! and the checkpoint update leaves WAL records whose rows are already in Parquet. Every part file
//! says which WAL records it holds for its partition (see [`crate::store::part_file`]): for a
//! partition, all rows of every record in `[first_seq, last_seq]` went to that one file. Replay
//! drops a record's rows of a partition when a committed file of that partition covers it.
//! A partition may have several files of one epoch (rolled by size, age or the open-file cap):
//! their ranges are disjoint, because a record's rows of one partition are written in one piece.
//!
//! On object storage the range is in the object's name ([`schemas::layout::uploaded_part_id`]),
//! so a listing of the partition is enough: no footer is downloaded.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{Array, BinaryArray};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::config::PipelineConfig;
use crate::store::batcher::row_partitions;
use crate::store::remote::RemoteSink;

use crate::store::part_file::{META_WAL_EPOCH, META_WAL_FIRST_SEQ, META_WAL_LAST_SEQ};
use schemas::layout::{is_part_file, Partition, Table};

/// Sequence ranges per partition, loaded lazily (only partitions replay touches are read).
pub struct CommittedRecords {
    data_dir: PathBuf,
    /// The store on object storage, when it is there (then `data_dir` is not consulted).
    remote: Option<RemoteSink>,
    epoch: String,
    ranges: HashMap<Partition, Vec<(u64, u64, PathBuf)>>,
}

impl CommittedRecords {
    pub fn new(data_dir: &Path, epoch: &str) -> CommittedRecords {
        CommittedRecords {
            data_dir: data_dir.to_path_buf(),
            remote: None,
            epoch: epoch.to_string(),
            ranges: HashMap::new(),
        }
    }

    /// The committed records of the store `config` writes: its local part files, or its
    /// uploaded objects when the store is on object storage.
    pub fn for_store(config: &PipelineConfig, epoch: &str) -> CommittedRecords {
        let mut c = CommittedRecords::new(&config.data_dir, epoch);
        c.remote = config.remote.clone();
        c
    }

    /// Whether the rows of WAL record `seq` in `partition` are already committed.
    pub fn covers(&mut self, partition: Partition, seq: u64) -> bool {
        self.covering_file(partition, seq).is_some()
    }

    /// The committed file holding the rows of WAL record `seq` in `partition`, if any.
    pub fn covering_file(&mut self, partition: Partition, seq: u64) -> Option<&Path> {
        let data_dir = &self.data_dir;
        let epoch = &self.epoch;
        let remote = self.remote.as_ref();
        let ranges = self
            .ranges
            .entry(partition)
            .or_insert_with(|| match remote {
                Some(sink) => load_uploaded_ranges(sink, partition, epoch),
                None => load_ranges(&partition.dir(data_dir), epoch),
            });
        ranges
            .iter()
            .find(|(a, b, _)| *a <= seq && seq <= *b)
            .map(|(_, _, p)| p.as_path())
    }
}

/// Whether the part files of `epoch` really hold the WAL records they claim: the first WAL
/// record under `wal_dir` that a file of `epoch` covers must have its span ids in that file.
/// Guards a rebuilt checkpoint against taking an older WAL's epoch (sequence numbers restart
/// with a new WAL), which would skip rows that were never written. True when no record is
/// covered (then the epoch skips nothing).
pub fn epoch_matches_wal(wal_dir: &Path, data_dir: &Path, epoch: &str) -> bool {
    let mut committed = CommittedRecords::new(data_dir, epoch);
    let mut verdict = None;
    let scanned = crate::store::wal::for_each_record(wal_dir, |seq, payload| {
        let Ok(Some(batch)) = crate::store::wal::record::decode_one(payload) else {
            return true;
        };
        // Log records may have no span id: the check looks at span records only.
        if schemas::logs::is_log_schema(&batch.schema()) {
            return true;
        }
        let Some(ids) = batch
            .column_by_name(schemas::schema::col::SPAN_ID)
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
        else {
            return true;
        };
        for (row, partition) in row_partitions(&batch).into_iter().enumerate() {
            if let Some(file) = committed.covering_file(partition, seq) {
                let held = span_ids_in(file);
                verdict = Some(held.is_ok_and(|h| h.iter().any(|id| id == ids.value(row))));
                return false;
            }
        }
        true
    });
    if let Err(e) = scanned {
        tracing::warn!(error = %e, "cannot read the WAL to check the recovered epoch");
        return false;
    }
    verdict.unwrap_or(true)
}

fn span_ids_in(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
    let mask = ProjectionMask::columns(builder.parquet_schema(), [schemas::schema::col::SPAN_ID]);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        if let Some(ids) = batch.column(0).as_any().downcast_ref::<BinaryArray>() {
            out.extend(ids.iter().flatten().map(<[u8]>::to_vec));
        }
    }
    Ok(out)
}

/// The WAL epoch recorded by the newest committed part file under `data_dir` (spans or logs; part file names
/// are ULIDs, which sort by creation time): the epoch of the WAL that wrote last, used to rebuild
/// a lost checkpoint.
pub fn latest_epoch(data_dir: &Path) -> Option<String> {
    let mut files: Vec<(String, PathBuf)> = Table::ALL
        .iter()
        .flat_map(|t| walkdir::WalkDir::new(t.dir(data_dir)))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            is_part_file(&name).then(|| (name, e.into_path()))
        })
        .collect();
    files.sort();
    files
        .iter()
        .rev()
        .find_map(|(_, path)| match read_meta(path) {
            Ok(Some((epoch, _))) => Some(epoch),
            Ok(None) => None,
            Err(reason) => {
                tracing::warn!(file = %path.display(), %reason, "cannot read part file footer");
                None
            }
        })
}

/// Remove the rows of record `seq` whose partition already has a committed file covering it;
/// returns the rows left and how many were dropped.
pub fn drop_covered_rows(
    batch: &RecordBatch,
    seq: u64,
    committed: &mut CommittedRecords,
) -> Result<(RecordBatch, usize), ArrowError> {
    let parts = row_partitions(batch);
    let keep: Vec<bool> = parts.iter().map(|p| !committed.covers(*p, seq)).collect();
    let skipped = keep.iter().filter(|k| !**k).count();
    if skipped == 0 {
        return Ok((batch.clone(), 0));
    }
    let mask = arrow::array::BooleanArray::from(keep);
    Ok((arrow::compute::filter_record_batch(batch, &mask)?, skipped))
}

fn load_ranges(dir: &Path, epoch: &str) -> Vec<(u64, u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !is_part_file(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        match read_range(&path, epoch) {
            Ok(Some((a, b))) => out.push((a, b, path)),
            Ok(None) => {}
            Err(reason) => {
                tracing::warn!(file = %path.display(), %reason, "replay: cannot read part file footer; not used for de-duplication")
            }
        }
    }
    out
}

/// The WAL ranges of our epoch's objects in `partition`, from their names. A listing that fails
/// (after the client's retries) de-duplicates nothing: the rows are uploaded again rather than
/// lost, and the error is logged.
fn load_uploaded_ranges(
    sink: &RemoteSink,
    partition: Partition,
    epoch: &str,
) -> Vec<(u64, u64, PathBuf)> {
    match sink.part_names(partition) {
        Ok(names) => names
            .into_iter()
            .filter_map(|n| {
                schemas::layout::uploaded_part_range(&n, epoch).map(|(a, b)| (a, b, n.into()))
            })
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "replay: cannot list the uploaded part files; rows of this partition may be uploaded twice");
            Vec::new()
        }
    }
}

fn read_range(path: &Path, epoch: &str) -> Result<Option<(u64, u64)>, String> {
    Ok(read_meta(path)?.and_then(|(e, range)| (e == epoch).then_some(range).flatten()))
}

/// The WAL epoch and sequence range a part file records.
type PartMeta = (String, Option<(u64, u64)>);

fn read_meta(path: &Path) -> Result<Option<PartMeta>, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = SerializedFileReader::new(file).map_err(|e| e.to_string())?;
    let Some(kv) = reader.metadata().file_metadata().key_value_metadata() else {
        return Ok(None);
    };
    let get = |k: &str| {
        kv.iter()
            .find(|e| e.key == k)
            .and_then(|e| e.value.as_deref())
    };
    let Some(epoch) = get(META_WAL_EPOCH) else {
        return Ok(None);
    };
    let first = get(META_WAL_FIRST_SEQ).and_then(|v| v.parse().ok());
    let last = get(META_WAL_LAST_SEQ).and_then(|v| v.parse().ok());
    Ok(Some((epoch.to_string(), first.zip(last))))
}
