//! Where files go in the store, and the filesystem steps that make them appear atomically.
//!
//! `spans/date=YYYY-MM-DD/hour=H/part-<ulid>.parquet`, with the hour *not* zero-padded (DuckDB
//! types a partition column as text as soon as one value looks like `00`), taken from the span's
//! start time in UTC. Files are written as `.part-<ulid>.parquet.tmp` (hidden, so readers globbing
//! `*.parquet` never see a half file), fsynced, renamed, and the directory fsynced.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Timelike, Utc};

/// Name of the directory holding the span dataset below the data dir.
pub const SPANS_DIR: &str = "spans";
/// Name of the WAL directory below the data dir.
pub const WAL_DIR: &str = "wal";
const TMP_SUFFIX: &str = ".parquet.tmp";

/// One Hive partition: a UTC date and hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
}

impl Partition {
    /// The partition of a time in nanoseconds since the Unix epoch.
    pub fn of_unix_nanos(nanos: i64) -> Partition {
        let t: DateTime<Utc> = DateTime::from_timestamp_nanos(nanos);
        Partition {
            year: t.year(),
            month: t.month(),
            day: t.day(),
            hour: t.hour(),
        }
    }

    /// `date=YYYY-MM-DD/hour=H` relative to the spans directory.
    pub fn relative_dir(&self) -> PathBuf {
        PathBuf::from(format!(
            "date={:04}-{:02}-{:02}",
            self.year, self.month, self.day
        ))
        .join(format!("hour={}", self.hour))
    }

    /// Absolute directory of this partition in the store rooted at `data_dir`.
    pub fn dir(&self, data_dir: &Path) -> PathBuf {
        data_dir.join(SPANS_DIR).join(self.relative_dir())
    }
}

/// Temporary and final path of a new part file in `dir`.
pub fn new_part_paths(dir: &Path) -> (PathBuf, PathBuf) {
    let id = ulid::Ulid::new().to_string();
    (
        dir.join(format!(".part-{id}{TMP_SUFFIX}")),
        dir.join(format!("part-{id}.parquet")),
    )
}

/// Whether a file name is a committed part file.
pub fn is_part_file(name: &str) -> bool {
    name.starts_with("part-") && name.ends_with(".parquet")
}

/// Delete leftover temporary part files under `<data>/spans` (a crash mid-write); their rows are
/// still in the WAL and will be written again. Returns how many were removed.
pub fn remove_leftover_tmp_files(data_dir: &Path) -> std::io::Result<usize> {
    let root = data_dir.join(SPANS_DIR);
    if !root.exists() {
        return Ok(0);
    }
    let mut removed = 0;
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.map_err(std::io::Error::other)?;
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && name.starts_with(".part-") && name.ends_with(TMP_SUFFIX) {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Fsync a directory so a rename or a new file in it survives a crash.
pub fn fsync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replace `path` with `bytes` atomically: temp file, fsync, rename (the caller fsyncs the dir).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hour_is_not_zero_padded_and_date_is_utc() {
        // 2026-11-30T03:04:05Z
        let p = Partition::of_unix_nanos(1_796_007_845_000_000_000);
        assert_eq!(p.relative_dir(), PathBuf::from("date=2026-11-30/hour=3"));
        let p = Partition::of_unix_nanos(0);
        assert_eq!(p.relative_dir(), PathBuf::from("date=1970-01-01/hour=0"));
    }

    #[test]
    fn tmp_files_are_hidden_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let pdir = Partition::of_unix_nanos(0).dir(dir.path());
        std::fs::create_dir_all(&pdir).unwrap();
        let (tmp, fin) = new_part_paths(&pdir);
        let tmp_name = tmp.file_name().unwrap().to_str().unwrap();
        assert!(tmp_name.starts_with(".part-") && tmp_name.ends_with(".parquet.tmp"));
        assert!(is_part_file(fin.file_name().unwrap().to_str().unwrap()));
        assert!(!is_part_file(tmp_name));
        std::fs::write(&tmp, b"half").unwrap();
        std::fs::write(&fin, b"whole").unwrap();
        assert_eq!(remove_leftover_tmp_files(dir.path()).unwrap(), 1);
        assert!(!tmp.exists() && fin.exists());
    }
}
