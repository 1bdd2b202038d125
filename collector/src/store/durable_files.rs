//! The filesystem steps that make a store file appear whole and survive a crash: a new file is
//! written under a temporary name, fsynced, renamed into place and its directory fsynced, so a
//! reader sees the old file or the whole new one, never half of it. Where the files go and how
//! they are named is the store layout ([`schemas::layout`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use schemas::layout;

/// Temporary and final path of a new part file in the partition directory `dir`.
pub fn new_part_paths(dir: &Path) -> (PathBuf, PathBuf) {
    let id = ulid::Ulid::new().to_string();
    (
        dir.join(layout::tmp_part_file_name(&id)),
        dir.join(layout::part_file_name(&id)),
    )
}

/// Delete leftover temporary part files under `<data>/spans` and `<data>/logs` (a crash
/// mid-write); their rows are still in the WAL and will be written again. Returns how many were
/// removed.
pub fn remove_leftover_tmp_files(data_dir: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for table in layout::Table::ALL {
        let root = table.dir(data_dir);
        if !root.exists() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&root) {
            let entry = entry.map_err(std::io::Error::other)?;
            let name = entry.file_name().to_string_lossy();
            if entry.file_type().is_file() && layout::is_tmp_part_file(&name) {
                std::fs::remove_file(entry.path())?;
                removed += 1;
            }
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
    tmp.push(layout::TMP_SUFFIX);
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
    use chrono::{DateTime, Datelike, Timelike, Utc};
    use schemas::layout::Partition;

    #[test]
    fn tmp_files_are_hidden_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let pdir = Partition::of_unix_nanos(0).dir(dir.path());
        std::fs::create_dir_all(&pdir).unwrap();
        let (tmp, fin) = new_part_paths(&pdir);
        let tmp_name = tmp.file_name().unwrap().to_str().unwrap();
        assert!(tmp_name.starts_with(".part-") && tmp_name.ends_with(".parquet.tmp"));
        assert!(layout::is_part_file(
            fin.file_name().unwrap().to_str().unwrap()
        ));
        assert!(!layout::is_part_file(tmp_name));
        std::fs::write(&tmp, b"half").unwrap();
        std::fs::write(&fin, b"whole").unwrap();
        assert_eq!(remove_leftover_tmp_files(dir.path()).unwrap(), 1);
        assert!(!tmp.exists() && fin.exists());
    }

    /// The layout's own date arithmetic agrees with chrono (which the collector used before)
    /// over four centuries of hours, so no span changes partition.
    #[test]
    fn partitions_agree_with_chrono() {
        let hour: i64 = 3_600_000_000_000;
        let mut t: i64 = -200 * 365 * 24 * hour;
        while t < 200 * 365 * 24 * hour {
            for nanos in [t, t + hour - 1] {
                let c: DateTime<Utc> = DateTime::from_timestamp_nanos(nanos);
                let p = Partition::of_unix_nanos(nanos);
                assert_eq!(
                    (p.year, p.month, p.day, p.hour),
                    (c.year(), c.month(), c.day(), c.hour()),
                    "{nanos}"
                );
            }
            t += 37 * hour + 11;
        }
    }
}
