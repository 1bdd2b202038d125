//! The WAL checkpoint: which WAL epoch this is and below which sequence number every record is
//! durable in committed Parquet files. Written atomically (temp file, fsync, rename, fsync dir)
//! *before* segments are deleted, so a crash at any point leaves either the old or the new value.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::WalError;
use crate::layout::{fsync_dir, write_atomically};

/// File name inside `<data>/wal/`.
pub const FILE_NAME: &str = "checkpoint.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Identity of this WAL: Parquet files record it next to the sequence range they cover, so
    /// a WAL recreated from scratch (sequence numbers restarting) is never confused with an old one.
    pub epoch: String,
    /// Every record with a smaller sequence number is in committed Parquet files.
    pub durable_below: u64,
}

impl Checkpoint {
    /// Read it, or `None` when the WAL is new.
    pub fn load(dir: &Path) -> Result<Option<Checkpoint>, WalError> {
        let path = dir.join(FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| WalError::Checkpoint {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(WalError::io(&path, e)),
        }
    }

    /// Read it, creating a fresh epoch (nothing durable yet) when the WAL is new.
    pub fn load_or_create(dir: &Path) -> Result<Checkpoint, WalError> {
        std::fs::create_dir_all(dir).map_err(|e| WalError::io(dir, e))?;
        if let Some(c) = Checkpoint::load(dir)? {
            return Ok(c);
        }
        let c = Checkpoint {
            epoch: ulid::Ulid::new().to_string(),
            durable_below: 0,
        };
        c.store(dir)?;
        Ok(c)
    }

    /// Replace it atomically.
    pub fn store(&self, dir: &Path) -> Result<(), WalError> {
        let path = dir.join(FILE_NAME);
        let bytes = serde_json::to_vec(self).map_err(|e| WalError::Checkpoint {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        write_atomically(&path, &bytes).map_err(|e| WalError::io(&path, e))?;
        fsync_dir(dir).map_err(|e| WalError::io(dir, e))
    }
}
