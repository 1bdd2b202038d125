//! The local file system as DataFusion reads the store, with ranged reads that fill their buffer
//! from the file alone.
//!
//! Why: `object_store`'s `LocalFileSystem::get_ranges` zero-fills each range's buffer before it
//! reads into it, and a Parquet scan reads every column chunk it decodes through that call. In
//! the release profile `object_store` is built for size, where the fill is a byte loop: 4.6% of
//! a 1M-span `check`'s instructions (callgrind, session 24). Reading with `read_to_end` into an
//! empty buffer of the range's capacity writes each byte once, from the file. The store the
//! scans register ([`super::allowlist::AllowListed`] over the local file system) reads ranges
//! here; everything else (listing, metadata, whole-object reads) is `LocalFileSystem`'s own.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::PathBuf;

use bytes::Bytes;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path;
use datafusion::object_store::{Error, Result};

const STORE: &str = "LocalFileSystem";

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

/// `fs`'s ranged read of `location`
/// ([`ObjectStore::get_ranges`](datafusion::object_store::ObjectStore::get_ranges)), each range read into a buffer
/// of exactly its length, on a blocking thread as `LocalFileSystem` reads.
pub async fn get_ranges(
    fs: &LocalFileSystem,
    location: &Path,
    ranges: &[Range<u64>],
) -> Result<Vec<Bytes>> {
    let path: PathBuf = fs.path_to_filesystem(location)?;
    let ranges = ranges.to_vec();
    tokio::task::spawn_blocking(move || read_ranges(&path, &ranges))
        .await
        .map_err(|e| Error::Generic {
            store: STORE,
            source: Box::new(e),
        })?
}

#[cfg(test)]
mod tests {
    use datafusion::object_store::ObjectStore;

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
        let ours = get_ranges(&LocalFileSystem::new(), &location, &ranges)
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
        let e = get_ranges(&LocalFileSystem::new(), &location, &[5..20, 0..1])
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("short.bin") && e.contains("past the end"), "{e}");
        let missing = Path::from_absolute_path(dir.path().join("gone.bin")).unwrap();
        let e = get_ranges(&LocalFileSystem::new(), &missing, &[0..1, 1..2])
            .await
            .unwrap_err();
        assert!(matches!(e, Error::NotFound { .. }), "{e}");
    }
}
