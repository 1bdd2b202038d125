//! The WAL checkpoint: which WAL epoch this is and below which sequence number every record is
//! durable in committed Parquet files. Written atomically (temp file, fsync, rename, fsync dir)
//! *before* segments are deleted, so a crash at any point leaves either the old or the new value.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::WalError;
use crate::store::durable_files::{fsync_dir, write_atomically};
use schemas::layout::CHECKPOINT_FILE as FILE_NAME;

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

    /// Read it; when it is missing or unreadable, rebuild it from what the committed Parquet
    /// files under `data_dir` record (see [`crate::store::committed_records::latest_epoch`]) and store it. A
    /// corrupt file is moved aside to `checkpoint.json.corrupt-<unix seconds>`, never deleted.
    ///
    /// The rebuilt checkpoint keeps the WAL's epoch (that of the newest part file) whenever WAL
    /// segments exist, with `durable_below` at the oldest segment: every record still in the WAL
    /// is replayed, and the per-partition coverage of the part files drops the rows already
    /// written, so nothing is lost and nothing is written twice. Without segments there is
    /// nothing to replay and a new epoch is minted.
    pub fn load_or_rebuild(dir: &Path, data_dir: &Path) -> Result<Checkpoint, WalError> {
        std::fs::create_dir_all(dir).map_err(|e| WalError::io(dir, e))?;
        let why = match Checkpoint::load(dir) {
            Ok(Some(c)) => return Ok(c),
            Ok(None) => "missing",
            Err(WalError::Checkpoint { reason, .. }) => {
                let path = dir.join(FILE_NAME);
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                let aside = dir.join(format!("{FILE_NAME}.corrupt-{secs}"));
                std::fs::rename(&path, &aside).map_err(|e| WalError::io(&path, e))?;
                tracing::error!(checkpoint = %path.display(), moved_to = %aside.display(), %reason, "wal: checkpoint unreadable; moved aside and rebuilt from the parquet files");
                "corrupt"
            }
            Err(e) => return Err(e),
        };
        let first_segment = super::first_segment_seq(dir)?;
        let c = match first_segment {
            None => Checkpoint {
                epoch: ulid::Ulid::new().to_string(),
                durable_below: 0,
            },
            Some(first) => {
                let epoch = crate::store::committed_records::latest_epoch(data_dir).filter(|e| {
                    let ok = crate::store::committed_records::epoch_matches_wal(dir, data_dir, e);
                    if !ok {
                        tracing::warn!(epoch = %e, "wal: the newest part files belong to an older WAL (their rows do not match these WAL records); a new epoch is used: nothing is skipped on replay, rows already written may be written again");
                    }
                    ok
                });
                if epoch.is_none() {
                    tracing::info!("wal: no committed parquet file names an epoch; every WAL record is replayed");
                }
                Checkpoint {
                    epoch: epoch.unwrap_or_else(|| ulid::Ulid::new().to_string()),
                    durable_below: first,
                }
            }
        };
        if why == "corrupt" || first_segment.is_some() {
            tracing::warn!(checkpoint = why, epoch = %c.epoch, durable_below = c.durable_below, "wal: checkpoint rebuilt: records from durable_below on are replayed, rows already in parquet files of this epoch are skipped");
        }
        c.store(dir)?;
        Ok(c)
    }

    /// Replace it atomically.
    pub fn store(&self, dir: &Path) -> Result<(), WalError> {
        let path = dir.join(FILE_NAME);
        #[cfg(feature = "failpoints")]
        fail::fail_point!("checkpoint::write", |_| Err(WalError::io(
            &path,
            super::injected("checkpoint::write")
        )));
        let bytes = serde_json::to_vec(self).map_err(|e| WalError::Checkpoint {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        write_atomically(&path, &bytes).map_err(|e| WalError::io(&path, e))?;
        fsync_dir(dir).map_err(|e| WalError::io(dir, e))
    }
}
