//! One open Parquet part file: a long-lived `ArrowWriter` (one footer per file, row groups
//! flushed when they reach the row *or* byte bound), written under a hidden temporary name and
//! committed by fsync + rename + directory fsync, so a reader never sees a half file.
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

use crate::layout::{fsync_dir, new_part_paths, Partition};

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
    #[error("parquet writer failed on {path}: {source}; the rows stay in the WAL and are written on the next start")]
    Parquet {
        path: String,
        source: parquet::errors::ParquetError,
    },
    #[error("cannot split a batch by partition: {0}; this is a bug in tripline, please report it")]
    Arrow(#[from] arrow::error::ArrowError),
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
        let writer = ArrowWriter::try_new(
            file,
            schemas::span_schema(),
            Some(schemas::parquet_props::writer_properties()),
        )
        .map_err(|e| StoreError::parquet(&tmp_path, e))?;
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
        })
    }

    /// Append the rows of WAL record `seq` (all of this partition).
    pub fn write(
        &mut self,
        batch: &RecordBatch,
        seq: u64,
        limits: RowGroupLimits,
    ) -> Result<(), StoreError> {
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
    pub fn commit(mut self, epoch: &str) -> Result<PathBuf, StoreError> {
        for (k, v) in [
            (META_WAL_EPOCH, epoch.to_string()),
            (META_WAL_FIRST_SEQ, self.first_seq.to_string()),
            (META_WAL_LAST_SEQ, self.last_seq.to_string()),
        ] {
            self.writer
                .append_key_value_metadata(KeyValue::new(k.to_string(), v));
        }
        let file = self
            .writer
            .into_inner()
            .map_err(|e| StoreError::parquet(&self.tmp_path, e))?;
        file.sync_all()
            .map_err(|e| StoreError::io(&self.tmp_path, e))?;
        drop(file);
        std::fs::rename(&self.tmp_path, &self.final_path)
            .map_err(|e| StoreError::io(&self.final_path, e))?;
        if let Some(dir) = self.final_path.parent() {
            fsync_dir(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        Ok(self.final_path)
    }

    /// Give up on this file (after a write error): remove the temporary file.
    pub fn discard(self) {
        let path = self.tmp_path.clone();
        drop(self.writer);
        let _ = std::fs::remove_file(path);
    }
}
