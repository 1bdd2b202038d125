//! `tripline verify`: is this store intact? Every committed part file is decoded in full and its
//! metadata checked, the WAL is read frame by frame against its checkpoint, and leftover
//! temporary files are listed, so a damaged store is found before a query silently skips data.
//!
//! The building blocks ([`part_files`], [`read_footer`], [`scan_wal`], [`crate::store::lock::is_held`]) are
//! also how the analyzer takes its snapshot of a store: it validates footers before a scan and
//! reads the acknowledged rows that are still only in the WAL. They only ever read: nothing here
//! opens a file for writing, truncates a torn tail or removes a temporary file (the collector does
//! that on start), so they are safe to run next to a running collector.

use std::fs::File;

use std::path::{Path, PathBuf};

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::FileMetaData;
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde::Serialize;

use crate::store::part_file::{META_WAL_EPOCH, META_WAL_FIRST_SEQ, META_WAL_LAST_SEQ};
use crate::store::wal::checkpoint::Checkpoint;

use schemas::layout::{self, Table, SPANS_DIR, WAL_DIR};

/// The committed part files under `<data_dir>/spans`: every `*.parquet` file that is not hidden,
/// sorted by path. Empty when there is no `spans/` directory.
pub fn part_files(data_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    table_part_files(data_dir, Table::Spans)
}

/// The committed part files of `table` (`spans/` or `logs/`), as [`part_files`].
pub fn table_part_files(data_dir: &Path, table: Table) -> std::io::Result<Vec<PathBuf>> {
    let root = table.dir(data_dir);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            // A partition directory removed while we walk: nothing to read there.
            Err(e)
                if e.io_error().map(std::io::Error::kind) == Some(std::io::ErrorKind::NotFound) =>
            {
                continue
            }
            Err(e) => return Err(std::io::Error::other(e)),
        };
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file()
            && !name.starts_with('.')
            && name.ends_with(layout::PARQUET_SUFFIX)
        {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// Leftover (or in-progress) temporary part files under `<data_dir>/spans` and `<data_dir>/logs`.
pub fn tmp_files(data_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for table in Table::ALL {
        let root = table.dir(data_dir);
        if root.is_dir() {
            tmp_files_under(&root, &mut out);
        }
    }
    Ok(out)
}

fn tmp_files_under(root: &Path, out: &mut Vec<PathBuf>) {
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy();
        let being_written = name
            .strip_suffix(layout::TMP_SUFFIX)
            .is_some_and(|n| n.ends_with(layout::PARQUET_SUFFIX));
        if entry.file_type().is_file() && being_written {
            out.push(entry.into_path());
        }
    }
}

/// The WAL records a part file holds for its partition (see [`crate::store::committed_records`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalRange {
    pub epoch: String,
    pub first_seq: u64,
    pub last_seq: u64,
}

impl WalRange {
    /// The range a part file's footer records (`tripline.wal.*` key-value metadata), or `None`
    /// for a file written by hand or one whose range is incomplete. The local footer check
    /// ([`read_footer`]) and the analyzer's listing of a store on object storage both read it
    /// here.
    pub fn of_footer(fm: &FileMetaData) -> Option<WalRange> {
        Some(WalRange {
            epoch: footer_value(fm, META_WAL_EPOCH)?,
            first_seq: footer_value(fm, META_WAL_FIRST_SEQ)?.parse().ok()?,
            last_seq: footer_value(fm, META_WAL_LAST_SEQ)?.parse().ok()?,
        })
    }

    /// Whether this file holds the rows of WAL record `seq` of `epoch` (for its partition).
    pub fn covers(&self, epoch: &str, seq: u64) -> bool {
        self.epoch == epoch && self.first_seq <= seq && seq <= self.last_seq
    }
}

/// What a part file's footer says.
#[derive(Debug, Clone)]
pub struct Footer {
    /// Rows according to the file metadata.
    pub rows: u64,
    /// Sum of the row groups' row counts.
    pub row_group_rows: u64,
    pub row_groups: usize,
    /// `tripline.schema_version`, when present.
    pub schema_version: Option<String>,
    /// The WAL range, for files written by the collector (not for files written by hand).
    pub wal: Option<WalRange>,
}

/// Reads the footer of one Parquet file (cheap: the metadata at its end, no data pages).
pub fn read_footer(path: &Path) -> Result<Footer, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = SerializedFileReader::new(file).map_err(|e| e.to_string())?;
    let meta = reader.metadata();
    let fm = meta.file_metadata();
    Ok(Footer {
        rows: u64::try_from(fm.num_rows()).unwrap_or(0),
        row_group_rows: meta
            .row_groups()
            .iter()
            .map(|rg| u64::try_from(rg.num_rows()).unwrap_or(0))
            .sum(),
        row_groups: meta.num_row_groups(),
        schema_version: footer_value(fm, schemas::SCHEMA_VERSION_KEY),
        wal: WalRange::of_footer(fm),
    })
}

/// The value of `key` in a Parquet file's key-value metadata.
pub fn footer_value(fm: &FileMetaData, key: &str) -> Option<String> {
    fm.key_value_metadata()?
        .iter()
        .find(|e| e.key == key)
        .and_then(|e| e.value.clone())
}

/// Decodes every row group of a Parquet file; returns the rows decoded.
pub fn decode_all(path: &Path) -> Result<u64, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(8192).build())
        .map_err(|e| e.to_string())?;
    let mut rows = 0u64;
    for batch in reader {
        rows += batch.map_err(|e| e.to_string())?.num_rows() as u64;
    }
    Ok(rows)
}

/// Whether a schema version written in a file is one this build can read.
pub fn known_schema_version(v: &str) -> bool {
    if v == schemas::logs::schema::LOG_SCHEMA_VERSION {
        return true;
    }
    let current: u32 = schemas::SCHEMA_VERSION.parse().unwrap_or(1);
    v.parse::<u32>().is_ok_and(|n| (1..=current).contains(&n))
}

/// A damaged spot in the WAL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalDamage {
    pub segment: PathBuf,
    pub offset: u64,
    pub reason: String,
}

/// What a read of the WAL found.
#[derive(Debug, Clone, Default)]
pub struct WalScan {
    /// `None` when there is no checkpoint (no WAL yet).
    pub checkpoint: Option<Checkpoint>,
    /// Segments read, in sequence order.
    pub segments: Vec<PathBuf>,
    /// Intact records at or above the checkpoint.
    pub records_above_checkpoint: u64,
    /// One past the highest sequence number seen (the checkpoint's value when there is none).
    pub next_seq: u64,
    /// An incomplete last record at the very end of the last segment: a write in progress or a
    /// crash mid-append (never acknowledged). Normal, not damage.
    pub torn_tail: Option<WalDamage>,
    /// Frames that cannot be read with data after them, sequence numbers out of order, a segment
    /// or checkpoint that cannot be read: acknowledged records may be lost.
    pub damage: Vec<WalDamage>,
}

/// Reads `<data_dir>/wal` without changing it, calling `record(seq, payload)` for every intact
/// record at or above the checkpoint, in sequence order. Safe while a collector appends: a
/// partial record at the end of the last segment is reported as [`WalScan::torn_tail`], and a
/// segment deleted while we read (released by the collector) is skipped.
pub fn scan_wal(data_dir: &Path, mut record: impl FnMut(u64, Vec<u8>)) -> WalScan {
    let dir = data_dir.join(WAL_DIR);
    let mut scan = WalScan::default();
    if !dir.is_dir() {
        return scan;
    }
    match Checkpoint::load(&dir) {
        Ok(c) => scan.checkpoint = c,
        Err(e) => scan.damage.push(WalDamage {
            segment: dir.join(layout::CHECKPOINT_FILE),
            offset: 0,
            reason: e.to_string(),
        }),
    }
    let durable_below = scan.checkpoint.as_ref().map_or(0, |c| c.durable_below);
    scan.next_seq = durable_below;
    let mut names: Vec<(u64, PathBuf)> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                let first = layout::wal_segment_first_seq(path.file_name()?.to_str()?)?;
                Some((first, path))
            })
            .collect(),
        Err(e) => {
            scan.damage.push(WalDamage {
                segment: dir.clone(),
                offset: 0,
                reason: format!("cannot list the WAL directory: {e}"),
            });
            return scan;
        }
    };
    names.sort();
    let count = names.len();
    let mut last_seq: Option<u64> = None;
    for (i, (first, path)) in names.into_iter().enumerate() {
        let is_last = i + 1 == count;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            // Released (deleted) by the collector after we listed it: its rows are in Parquet.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                scan.damage.push(WalDamage {
                    segment: path.clone(),
                    offset: 0,
                    reason: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        scan.segments.push(path.clone());
        // The collector's own scanner: the same resynchronisation the replay does, so verify
        // reports exactly what a restart would lose.
        let frames = crate::store::wal::scan_frames(&bytes, first, last_seq, |seq, payload| {
            scan.next_seq = scan.next_seq.max(seq + 1);
            if seq >= durable_below {
                scan.records_above_checkpoint += 1;
                record(seq, payload.to_vec());
            }
        });
        last_seq = frames.last_seq.or(last_seq);
        for skipped in &frames.skipped {
            scan.damage.push(WalDamage {
                segment: path.clone(),
                offset: skipped.offset as u64,
                reason: format!(
                    "{} ({} bytes skipped up to the next intact record)",
                    skipped.reason, skipped.len
                ),
            });
        }
        if let Some((offset, reason)) = frames.tail {
            let damage = WalDamage {
                segment: path.clone(),
                offset: offset as u64,
                reason: reason.to_string(),
            };
            // A bad frame with no intact frame after it, at the end of the last segment, is an
            // append in progress (or cut by a crash): never acknowledged. Anywhere else it hides
            // records that were.
            if is_last {
                scan.torn_tail = Some(damage);
            } else {
                scan.damage.push(damage);
            }
        }
    }
    scan
}

/// One thing wrong with a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

/// The outcome of [`verify`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    pub data_dir: PathBuf,
    /// Committed part files checked.
    pub part_files: usize,
    /// Rows decoded from them.
    pub rows: u64,
    /// WAL segments read.
    pub wal_segments: usize,
    /// WAL records not yet in committed Parquet files.
    pub wal_records_above_checkpoint: u64,
    /// Whether a writer held `<data>/LOCK` when we looked.
    pub writer_running: bool,
    /// Temporary files a running writer is still writing (not problems).
    pub in_progress: Vec<PathBuf>,
    /// Observations that are not damage (a torn WAL tail: a record that was never acknowledged).
    pub notes: Vec<String>,
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Why [`verify`] could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("data dir {0} does not exist; pass --data-dir (or TRIPLINE_DATA_DIR) pointing at a store written by `tripline collect` or `tripline ingest`")]
    Missing(PathBuf),
    #[error("{0} is not a tripline store (no spans/ or wal/ directory in it); pass --data-dir pointing at the directory given to `tripline collect` or `tripline ingest`")]
    NotAStore(PathBuf),
    #[error("cannot list the files of {path}: {source}; check its permissions")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Checks the store at `data_dir`: every part file decoded in full, of a known schema version,
/// with as many rows as its metadata says; the WAL readable and consistent with its checkpoint;
/// no leftover temporary files (unless a writer holds the lock, then they are in progress).
pub fn verify(data_dir: &Path) -> Result<VerifyReport, VerifyError> {
    if !data_dir.is_dir() {
        return Err(VerifyError::Missing(data_dir.to_path_buf()));
    }
    if !data_dir.join(SPANS_DIR).is_dir() && !data_dir.join(WAL_DIR).is_dir() {
        return Err(VerifyError::NotAStore(data_dir.to_path_buf()));
    }
    let io = |source| VerifyError::Io {
        path: data_dir.to_path_buf(),
        source,
    };
    let mut report = VerifyReport {
        data_dir: data_dir.to_path_buf(),
        writer_running: crate::store::lock::is_held(data_dir).map_err(io)?,
        ..VerifyReport::default()
    };
    let mut problems: Vec<Problem> = Vec::new();
    let mut problem = |path: &Path, problem: String| {
        problems.push(Problem {
            path: path.to_path_buf(),
            problem,
        })
    };
    let files = part_files(data_dir).map_err(io)?;
    let log_files = table_part_files(data_dir, Table::Logs).map_err(io)?;
    let mut rows = 0u64;
    for path in files.iter().chain(&log_files) {
        let is_span_file = !log_files.contains(path);
        let footer = match read_footer(path) {
            Ok(f) => f,
            Err(e) => {
                problem(path, format!("footer unreadable: {e}"));
                continue;
            }
        };
        match footer.schema_version.as_deref() {
            None => problem(
                path,
                format!(
                    "no {} in the file metadata: not written by tripline",
                    schemas::SCHEMA_VERSION_KEY
                ),
            ),
            Some(v) if !known_schema_version(v) => problem(
                path,
                format!(
                    "schema version {v} is not known to this build (it reads 1 to {}); upgrade tripline",
                    schemas::SCHEMA_VERSION
                ),
            ),
            Some(_) => {}
        }
        if footer.row_group_rows != footer.rows {
            problem(
                path,
                format!(
                    "file metadata says {} rows, its {} row groups hold {}",
                    footer.rows, footer.row_groups, footer.row_group_rows
                ),
            );
        }
        match decode_all(path) {
            Ok(n) if n == footer.rows => rows += if is_span_file { n } else { 0 },
            Ok(n) => problem(
                path,
                format!("decoded {n} rows, the file metadata says {}", footer.rows),
            ),
            Err(e) => problem(path, format!("data unreadable: {e}")),
        }
    }
    for tmp in tmp_files(data_dir).map_err(io)? {
        if report.writer_running {
            report.in_progress.push(tmp);
        } else {
            problem(
                &tmp,
                "leftover temporary file (a writer stopped mid-file); its rows are replayed from the WAL and the file removed on the next `tripline collect` or `tripline ingest`".to_string(),
            );
        }
    }
    let wal_dir = data_dir.join(WAL_DIR);
    let mut undecodable = Vec::new();
    let wal = scan_wal(data_dir, |seq, payload| {
        if let Err(e) = crate::store::wal::record::decode(&payload) {
            undecodable.push((seq, e.to_string()));
        }
    });
    for (seq, e) in undecodable {
        problem(
            &wal_dir,
            format!("WAL record {seq} cannot be turned into rows ({e}); it cannot be replayed"),
        );
    }
    for d in &wal.damage {
        problem(
            &d.segment,
            format!(
                "WAL damaged at byte {}: {}; records after it cannot be replayed",
                d.offset, d.reason
            ),
        );
    }
    if let Some(c) = &wal.checkpoint {
        if c.durable_below > wal.next_seq {
            problem(
                &wal_dir.join(layout::CHECKPOINT_FILE),
                format!(
                    "checkpoint says records below {} are durable, but the WAL's next sequence number is {}",
                    c.durable_below, wal.next_seq
                ),
            );
        }
    }
    if let Some(t) = &wal.torn_tail {
        report.notes.push(format!(
            "{} ends with an incomplete record at byte {} ({}): {}",
            t.segment.display(),
            t.offset,
            t.reason,
            if report.writer_running {
                "a write in progress"
            } else {
                "cut by a crash, never acknowledged; removed on the next start"
            }
        ));
    }
    report.problems = problems;
    report.part_files = files.len();
    report.rows = rows;
    report.wal_segments = wal.segments.len();
    report.wal_records_above_checkpoint = wal.records_above_checkpoint;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FsyncPolicy;
    use crate::store::wal::frame;
    use crate::store::wal::Wal;
    use schemas::layout::LOCK_FILE;

    fn wal_with(dir: &Path, records: usize) {
        let wal = Wal::open(&dir.join(WAL_DIR), FsyncPolicy::Never, 1 << 20, |_, _| {}).unwrap();
        for i in 0..records {
            wal.append(&[i as u8; 32], |_| ()).unwrap();
        }
    }

    #[test]
    fn a_torn_tail_is_not_damage_but_a_bad_frame_with_data_after_it_is() {
        let dir = tempfile::tempdir().unwrap();
        wal_with(dir.path(), 2);
        let seg = dir.path().join(WAL_DIR).join(layout::wal_segment_name(0));
        let mut bytes = std::fs::read(&seg).unwrap();
        let mut seen = Vec::new();
        let scan = scan_wal(dir.path(), |s, _| seen.push(s));
        assert_eq!((seen, scan.next_seq), (vec![0, 1], 2));
        assert!(scan.damage.is_empty() && scan.torn_tail.is_none());

        // An append cut short at the end: a torn tail.
        std::fs::write(&seg, &bytes[..bytes.len() - 5]).unwrap();
        let scan = scan_wal(dir.path(), |_, _| {});
        assert_eq!(scan.records_above_checkpoint, 1);
        assert!(scan.damage.is_empty());
        assert_eq!(scan.torn_tail.unwrap().reason, "partial payload");

        // The first record's payload flipped, the second intact after it: damage.
        bytes[frame::HEADER_LEN + 3] ^= 0xff;
        std::fs::write(&seg, &bytes).unwrap();
        let scan = scan_wal(dir.path(), |_, _| {});
        assert_eq!(scan.damage.len(), 1, "{:?}", scan.damage);
        assert_eq!(scan.damage[0].offset, 0);
        assert!(
            scan.damage[0].reason.starts_with("checksum mismatch"),
            "{}",
            scan.damage[0].reason
        );
    }

    #[test]
    fn the_lock_is_seen_held_only_while_someone_holds_it() {
        use crate::store::lock::is_held;
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_held(dir.path()).unwrap(), "no lock file");
        let f = File::create(dir.path().join(LOCK_FILE)).unwrap();
        assert!(!is_held(dir.path()).unwrap());
        // SAFETY: flock on a descriptor we own.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        assert!(is_held(dir.path()).unwrap());
        drop(f);
        assert!(!is_held(dir.path()).unwrap(), "released with the fd");
    }
}
