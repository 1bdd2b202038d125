//! One open Parquet part file: a long-lived `ArrowWriter` (one footer per file, row groups
//! flushed when they reach the row *or* byte bound), written under a hidden temporary name and
//! committed by fsync + rename + directory fsync, so a reader never sees a half file.
//!
//! With a store on object storage the finished file is uploaded instead of renamed
//! ([`crate::store::remote`]): one PUT, then the local file is removed.
//!
//! Each file records in its key/value metadata which WAL records it holds for its partition
//! (epoch plus first and last sequence number): on restart, a WAL record whose rows for this
//! partition are already in a committed file is not written a second time.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;

use crate::store::durable_files::{fsync_dir, new_part_paths};
use crate::store::remote::{RemoteError, RemoteSink};
use schemas::layout::{self, Partition, Table};

/// Metadata key: the WAL epoch of the records in this file.
pub const META_WAL_EPOCH: &str = "tripline.wal.epoch";
/// Metadata key: the first WAL sequence number with rows in this file.
pub const META_WAL_FIRST_SEQ: &str = "tripline.wal.first_seq";
/// Metadata key: the last WAL sequence number with rows in this file.
pub const META_WAL_LAST_SEQ: &str = "tripline.wal.last_seq";

/// A failure writing the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write {path}: {source}; check the data directory is writable and has space")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("parquet writer failed on {path}: {source}; check the data directory is writable and has space (the rows stay in the WAL)")]
    Parquet {
        path: String,
        source: parquet::errors::ParquetError,
    },
    #[error("cannot split a batch by partition: {0}; this is a bug in tripline, please report it")]
    Arrow(#[from] arrow::error::ArrowError),
    #[error("cannot upload a part file: {0}; the rows stay in the WAL and the upload is retried")]
    Upload(#[from] RemoteError),
    /// Rewriting failed rows from the WAL failed again (the message says why).
    #[error("{0}")]
    Retry(String),
}

impl StoreError {
    fn io(path: &Path, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.display().to_string(),
            source,
        }
    }
    fn parquet(path: &Path, source: parquet::errors::ParquetError) -> StoreError {
        StoreError::Parquet {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Bounds of one file's row groups.
#[derive(Debug, Clone, Copy)]
pub struct RowGroupLimits {
    pub rows: usize,
    pub bytes: usize,
}

/// An open part file of one partition.
pub struct PartFile {
    pub partition: Partition,
    tmp_path: PathBuf,
    final_path: PathBuf,
    writer: ArrowWriter<File>,
    pub opened: Instant,
    /// When the oldest row in this file was received (for the flush-lag metric).
    pub oldest_row: Instant,
    pub first_seq: u64,
    pub last_seq: u64,
    pub rows: u64,
    /// When this file was last written to, in the batcher's write counter (least recently
    /// written is committed first when too many files are open).
    pub last_write: u64,
}

impl PartFile {
    /// Create the temporary file for `partition`; `seq` is the first WAL record it will hold.
    pub fn create(
        data_dir: &Path,
        partition: Partition,
        seq: u64,
        received: Instant,
    ) -> Result<PartFile, StoreError> {
        let dir = partition.dir(data_dir);
        if !dir.exists() {
            std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
            // Make the new directories themselves durable.
            let mut d = dir.as_path();
            while let Some(parent) = d.parent() {
                fsync_dir(parent).map_err(|e| StoreError::io(parent, e))?;
                if parent == data_dir {
                    break;
                }
                d = parent;
            }
        }
        let (tmp_path, final_path) = new_part_paths(&dir);
        let file = File::create(&tmp_path).map_err(|e| StoreError::io(&tmp_path, e))?;
        let (schema, props) = match partition.table {
            Table::Spans => (
                schemas::span_schema(),
                schemas::parquet_props::writer_properties(),
            ),
            Table::Logs => (
                schemas::logs::log_schema(),
                schemas::logs::log_writer_properties(),
            ),
        };
        let writer = match ArrowWriter::try_new(file, schema, Some(props)) {
            Ok(w) => w,
            Err(e) => {
                remove_quietly(&tmp_path);
                return Err(StoreError::parquet(&tmp_path, e));
            }
        };
        Ok(PartFile {
            partition,
            tmp_path,
            final_path,
            writer,
            opened: Instant::now(),
            oldest_row: received,
            first_seq: seq,
            last_seq: seq,
            rows: 0,
            last_write: 0,
        })
    }

    /// Append the rows of WAL record `seq` (all of this partition).
    pub fn write(
        &mut self,
        batch: &RecordBatch,
        seq: u64,
        limits: RowGroupLimits,
    ) -> Result<(), StoreError> {
        #[cfg(feature = "failpoints")]
        fail::fail_point!("parquet::write", |_| Err(StoreError::io(
            &self.tmp_path,
            crate::store::wal::injected("parquet::write")
        )));
        self.writer
            .write(batch)
            .map_err(|e| StoreError::parquet(&self.tmp_path, e))?;
        self.last_seq = seq;
        self.rows += batch.num_rows() as u64;
        if self.writer.in_progress_rows() >= limits.rows
            || self.writer.in_progress_size() >= limits.bytes
        {
            self.writer
                .flush()
                .map_err(|e| StoreError::parquet(&self.tmp_path, e))?;
        }
        Ok(())
    }

    /// Bytes written plus bytes buffered for the current row group.
    pub fn size_estimate(&self) -> u64 {
        (self.writer.bytes_written() + self.writer.in_progress_size()) as u64
    }

    /// Write the footer, fsync, rename into place, fsync the directory. Returns the final path.
    /// On failure nothing is left behind: the temporary file (or, when only the directory fsync
    /// failed, the renamed file, whose rows are still in the WAL) is removed.
    ///
    /// With `remote`, the finished file is uploaded instead (one PUT, named by `epoch` and the
    /// WAL range, see [`layout::uploaded_part_id`]) and the local file removed either way; the
    /// returned path is the object's URL.
    pub fn commit(
        mut self,
        epoch: &str,
        remote: Option<&RemoteSink>,
    ) -> Result<PathBuf, StoreError> {
        for (k, v) in [
            (META_WAL_EPOCH, epoch.to_string()),
            (META_WAL_FIRST_SEQ, self.first_seq.to_string()),
            (META_WAL_LAST_SEQ, self.last_seq.to_string()),
        ] {
            self.writer
                .append_key_value_metadata(KeyValue::new(k.to_string(), v));
        }
        let tmp_path = self.tmp_path;
        let final_path = self.final_path;
        if let Some(sink) = remote {
            let partition = self.partition;
            let name = layout::part_file_name(&layout::uploaded_part_id(
                epoch,
                self.first_seq,
                self.last_seq,
            ));
            // No local fsync: the rows are in the WAL until the upload has succeeded.
            let uploaded = self
                .writer
                .into_inner()
                .map_err(|e| StoreError::parquet(&tmp_path, e))
                .and_then(|file| {
                    drop(file);
                    upload(sink, &tmp_path, partition, &name).map_err(StoreError::from)
                });
            remove_quietly(&tmp_path);
            return uploaded.map(PathBuf::from);
        }
        let written = self
            .writer
            .into_inner()
            .map_err(|e| StoreError::parquet(&tmp_path, e))
            .and_then(|file| sync_file(&file).map_err(|e| StoreError::io(&tmp_path, e)))
            .and_then(|()| {
                rename(&tmp_path, &final_path).map_err(|e| StoreError::io(&final_path, e))
            });
        if let Err(e) = written {
            remove_quietly(&tmp_path);
            return Err(e);
        }
        if let Some(dir) = final_path.parent() {
            if let Err(e) = fsync_dir_checked(dir) {
                // The rename may not survive a crash: take the file back; its rows are rewritten
                // from the WAL (and a copy that reappears after a crash is covered by its range).
                remove_quietly(&final_path);
                return Err(StoreError::io(dir, e));
            }
        }
        Ok(final_path)
    }

    /// Give up on this file (after a write error): remove the temporary file.
    pub fn discard(self) {
        let path = self.tmp_path.clone();
        drop(self.writer);
        remove_quietly(&path);
    }
}

fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(file = %path.display(), error = %e, "cannot remove an abandoned parquet file; it is removed on the next start");
        }
    }
}

fn upload(
    sink: &RemoteSink,
    local: &Path,
    partition: Partition,
    name: &str,
) -> Result<String, RemoteError> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("remote::upload", |_| Err(RemoteError::Read {
        path: local.display().to_string(),
        source: crate::store::wal::injected("remote::upload")
    }));
    sink.upload(local, partition, name)
}

fn sync_file(file: &File) -> std::io::Result<()> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("parquet::fsync", |_| Err(crate::store::wal::injected(
        "parquet::fsync"
    )));
    file.sync_all()
}

fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("parquet::rename", |_| Err(crate::store::wal::injected(
        "parquet::rename"
    )));
    std::fs::rename(from, to)
}

fn fsync_dir_checked(dir: &Path) -> std::io::Result<()> {
    #[cfg(feature = "failpoints")]
    fail::fail_point!("parquet::dir_fsync", |_| Err(crate::store::wal::injected(
        "parquet::dir_fsync"
    )));
    fsync_dir(dir)
}
