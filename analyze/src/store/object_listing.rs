//! The part files of a store on object storage (`--data-dir s3://bucket/prefix`): every object
//! named `part-*.parquet` under `<prefix>/spans/`, its footer read with ranged GETs (several at
//! once), exactly as the local snapshot validates local files.
//!
//! Why no WAL tail here: the WAL of a store on object storage is on each collector's own disk
//! (`--wal-dir`); readers see what has been uploaded. A running collector uploads within
//! `--max-file-age-secs`, and its SIGTERM uploads everything.

use std::path::PathBuf;
use std::sync::Arc;

use collector::store::remote::{RemoteError, RemoteLocation};
use collector::store::verify::WalRange;
use datafusion::object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use datafusion::parquet::file::metadata::ParquetMetaDataReader;
use futures::{StreamExt, TryStreamExt};
use schemas::layout;

use super::{partition_of_path, PartInfo, Unreadable};
use crate::error::LoadError;

/// Footers read at once.
const CONCURRENT_FOOTERS: usize = 16;

/// A store on object storage and its client.
#[derive(Clone, Debug)]
pub struct RemoteSource {
    pub location: RemoteLocation,
    pub store: Arc<dyn ObjectStore>,
}

impl RemoteSource {
    /// A client for `location` from the AWS environment variables.
    pub fn connect(location: RemoteLocation) -> Result<RemoteSource, LoadError> {
        let store = location
            .connect()
            .map_err(|e| LoadError::Remote(Box::new(e)))?;
        Ok(RemoteSource { location, store })
    }

    /// The part file objects under `<prefix>/spans/`, by listing only (no footer read): what an
    /// idle `check --since last` poll costs.
    pub async fn part_objects(&self) -> Result<Vec<ObjectMeta>, LoadError> {
        let spans = self.location.spans_path();
        self.store
            .list(Some(&spans))
            .try_filter(|m| {
                let keep = m.location.filename().is_some_and(layout::is_part_file);
                std::future::ready(keep)
            })
            .try_collect()
            .await
            .map_err(|source| {
                LoadError::Remote(Box::new(RemoteError::Request {
                    op: "listing",
                    path: self.location.object_url(&spans),
                    source,
                }))
            })
    }

    /// The readable part files (footer checked) and the unreadable ones, named by URL.
    pub async fn part_files(&self) -> Result<(Vec<PartInfo>, Vec<Unreadable>), LoadError> {
        let objects = self.part_objects().await?;
        let footers: Vec<(ObjectMeta, Result<PartInfo, String>)> = futures::stream::iter(objects)
            .map(|meta| async move {
                let info = self.footer(&meta).await;
                (meta, info)
            })
            .buffered(CONCURRENT_FOOTERS)
            .collect()
            .await;
        let mut files = Vec::with_capacity(footers.len());
        let mut unreadable = Vec::new();
        for (meta, info) in footers {
            match info {
                Ok(f) => files.push(f),
                Err(e) => unreadable.push(Unreadable {
                    path: self.location.object_url(&meta.location),
                    error: format!("not a readable Parquet file ({e})"),
                }),
            }
        }
        Ok((files, unreadable))
    }

    /// The footer with two ranged GETs: the last 8 bytes (footer length and `PAR1`), then the
    /// footer itself.
    async fn footer(&self, meta: &ObjectMeta) -> Result<PartInfo, String> {
        let size = meta.size;
        if size < 12 {
            return Err(format!("{size} bytes is too short for a Parquet file"));
        }
        let tail = self
            .store
            .get_range(&meta.location, size - 8..size)
            .await
            .map_err(|e| e.to_string())?;
        if tail.len() != 8 || &tail[4..8] != b"PAR1" {
            return Err("no Parquet magic at the end (PAR1)".into());
        }
        let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
        if len + 8 > size {
            return Err(format!("footer length {len} exceeds the file size {size}"));
        }
        let footer = self
            .store
            .get_range(&meta.location, size - 8 - len..size - 8)
            .await
            .map_err(|e| e.to_string())?;
        let md = ParquetMetaDataReader::decode_metadata(&footer).map_err(|e| e.to_string())?;
        let fm = md.file_metadata();
        let path = PathBuf::from(meta.location.as_ref());
        Ok(PartInfo {
            partition: partition_of_path(&path),
            rows: u64::try_from(fm.num_rows()).unwrap_or(0),
            wal: WalRange::of_footer(fm),
            object: Some(meta.clone()),
            path,
        })
    }
}
