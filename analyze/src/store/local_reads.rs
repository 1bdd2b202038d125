//! The local file system as DataFusion reads the store, with ranged reads that fill their buffer
//! from the file alone.
//!
//! Why: `object_store`'s `LocalFileSystem::get_ranges` zero-fills each range's buffer before it
//! reads into it, and a Parquet scan reads every column chunk it decodes through that call. In
//! the release profile `object_store` is built for size, where the fill is a byte loop: 4.6% of
//! a 1M-span `check`'s instructions (callgrind, session 24). Reading with `read_to_end` into an
//! empty buffer of the range's capacity writes each byte once, from the file. Everything else
//! (listing, metadata, whole-object reads, writes) is `LocalFileSystem`'s own.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, Error, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use futures::stream::BoxStream;

const STORE: &str = "LocalFileSystem";

/// `LocalFileSystem` rooted at `/`, whose [`ObjectStore::get_ranges`] reads without a zero fill.
#[derive(Debug, Default)]
pub struct LocalReads {
    inner: Arc<LocalFileSystem>,
}

impl LocalReads {
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Display for LocalReads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LocalReads({})", self.inner)
    }
}

/// Reads `ranges` of the file at `path`, each into a buffer of exactly its length; a range past
/// the end of the file is an error naming the file, as `LocalFileSystem`'s own.
fn read_ranges(path: &std::path::Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
    let io_error = |e: std::io::Error| Error::Generic {
        store: STORE,
        source: format!("reading {}: {e}", path.display()).into(),
    };
    let mut file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.display().to_string(),
            source: Box::new(e),
        },
        _ => io_error(e),
    })?;
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let len = r.end.saturating_sub(r.start);
        let cap = usize::try_from(len).map_err(|_| Error::Generic {
            store: STORE,
            source: format!("range {r:?} of {} is too large to read", path.display()).into(),
        })?;
        file.seek(SeekFrom::Start(r.start)).map_err(io_error)?;
        let mut buf = Vec::with_capacity(cap);
        (&mut file)
            .take(len)
            .read_to_end(&mut buf)
            .map_err(io_error)?;
        if buf.len() != cap {
            return Err(Error::Generic {
                store: STORE,
                source: format!(
                    "range {r:?} of {} ends past the end of the file ({} bytes read)",
                    path.display(),
                    buf.len()
                )
                .into(),
            });
        }
        out.push(Bytes::from(buf));
    }
    Ok(out)
}

#[async_trait]
impl ObjectStore for LocalReads {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let path: PathBuf = self.inner.path_to_filesystem(location)?;
        let ranges = ranges.to_vec();
        tokio::task::spawn_blocking(move || read_ranges(&path, &ranges))
            .await
            .map_err(|e| Error::Generic {
                store: STORE,
                source: Box::new(e),
            })?
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ranges_read_as_the_local_file_system_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("part=1").join("data.bin");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&file, &bytes).unwrap();
        let location = Path::from_absolute_path(&file).unwrap();
        let ranges = [0..0, 0..10, 4_000..9_000, 9_990..10_000, 17..18];
        let ours = LocalReads::new()
            .get_ranges(&location, &ranges)
            .await
            .unwrap();
        let theirs = LocalFileSystem::new()
            .get_ranges(&location, &ranges)
            .await
            .unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(&ours[2][..], &bytes[4_000..9_000]);
    }

    #[tokio::test]
    async fn a_range_past_the_end_or_a_missing_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("short.bin");
        std::fs::write(&file, b"0123456789").unwrap();
        let location = Path::from_absolute_path(&file).unwrap();
        let e = LocalReads::new()
            .get_ranges(&location, &[5..20, 0..1])
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("short.bin") && e.contains("past the end"), "{e}");
        let missing = Path::from_absolute_path(dir.path().join("gone.bin")).unwrap();
        let e = LocalReads::new()
            .get_ranges(&missing, &[0..1, 1..2])
            .await
            .unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e}");
    }
}
