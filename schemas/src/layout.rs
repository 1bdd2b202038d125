//! The store layout: where each file of a tripline data directory lives and how it is named.
//!
//! Why here: the collector writes these paths, the analyzer and `tripline verify` read them, and
//! the tests look inside stores; all of them depend on this crate, so the layout is stated once
//! and cannot drift between writer and readers. What each file is, who writes it and who reads
//! it is described in `docs/store-layout.md`.
//!
//! ```text
//! <data>/LOCK                                        the writer's lock (pid, command, addresses)
//! <data>/wal/<first seq, 20 digits>.wal              WAL segments
//! <data>/wal/checkpoint.json                         WAL epoch + release point
//! <data>/spans/date=YYYY-MM-DD/hour=H/part-<id>.parquet          committed part files
//! <data>/spans/date=YYYY-MM-DD/hour=H/.part-<id>.parquet.tmp     a part file being written
//! <data>/logs/date=YYYY-MM-DD/hour=H/part-<id>.parquet           committed log record files
//! ```
//!
//! `logs/` is the second table ([`Table::Logs`]): OTLP log records (GenAI events), partitioned
//! the same way by the record's time, written by the same batcher from the same WAL.
//!
//! A store on object storage (`s3://bucket/prefix`) has the same `spans/` tree below the
//! prefix; its part files are uploaded whole, one PUT each, named by the uploading collector's
//! WAL epoch and the WAL records they hold ([`uploaded_part_id`]), so many collectors share one
//! prefix without a clash and a retried upload overwrites the same object. The WAL and `LOCK`
//! stay on the collector's local disk (`--wal-dir`).
//!
//! The hour is *not* zero-padded (DuckDB types a partition column as text as soon as one value
//! looks like `00`) and both come from the span's start time in UTC. A part file is written
//! under a hidden temporary name so readers globbing `*.parquet` never see a half file.

use std::path::{Path, PathBuf};

/// The directory holding the span dataset (Hive partitions), below the data dir.
pub const SPANS_DIR: &str = "spans";
/// The directory holding the log record dataset (Hive partitions), below the data dir.
pub const LOGS_DIR: &str = "logs";
/// The write-ahead log directory, below the data dir.
pub const WAL_DIR: &str = "wal";
/// The one-writer lock file, below the data dir.
pub const LOCK_FILE: &str = "LOCK";
/// The WAL checkpoint, below [`WAL_DIR`].
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// Extension of a WAL segment (`<first seq, 20 digits>.wal`).
pub const WAL_SEGMENT_EXTENSION: &str = "wal";
/// Name of the date partition column and directory key (`date=YYYY-MM-DD`).
pub const DATE_KEY: &str = "date";
/// Name of the hour partition column and directory key (`hour=H`, 0 to 23, not zero-padded).
pub const HOUR_KEY: &str = "hour";
/// File name prefix of a committed part file.
pub const PART_PREFIX: &str = "part-";
/// File name prefix of a part file being written (hidden).
pub const TMP_PART_PREFIX: &str = ".part-";
/// Extension of a part file.
pub const PARQUET_SUFFIX: &str = ".parquet";
/// Suffix of any file being written that is renamed into place when whole.
pub const TMP_SUFFIX: &str = ".tmp";

/// Scheme of a data dir on S3-compatible object storage (`s3://bucket/prefix`).
pub const S3_SCHEME: &str = "s3://";

/// Id of an uploaded part file (`part-<id>.parquet` on object storage): the WAL epoch of the
/// collector that wrote it (a ULID, unique per WAL, so per collector) and the first and last WAL
/// sequence numbers whose rows of its partition it holds (20 digits, so names sort by sequence).
/// Within one epoch and partition these ranges never overlap, so the name is unique across
/// collectors, and the same records always get the same name (an upload retried after a crash
/// overwrites the object instead of adding a copy).
pub fn uploaded_part_id(epoch: &str, first_seq: u64, last_seq: u64) -> String {
    format!("{epoch}-{first_seq:020}-{last_seq:020}")
}

/// The WAL range `(first, last)` of an uploaded part file of `epoch`, from its file name; `None`
/// for a file of another epoch (another collector) or any other name.
pub fn uploaded_part_range(name: &str, epoch: &str) -> Option<(u64, u64)> {
    let id = name
        .strip_prefix(PART_PREFIX)?
        .strip_suffix(PARQUET_SUFFIX)?;
    let range = id.strip_prefix(epoch)?.strip_prefix('-')?;
    let (first, last) = range.split_once('-')?;
    if first.len() != 20 || last.len() != 20 {
        return None;
    }
    Some((first.parse().ok()?, last.parse().ok()?))
}

/// `<data_dir>/spans`.
pub fn spans_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(SPANS_DIR)
}

/// `<data_dir>/logs`.
pub fn logs_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(LOGS_DIR)
}

/// `<data_dir>/wal`.
pub fn wal_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(WAL_DIR)
}

/// `<data_dir>/LOCK`.
pub fn lock_file(data_dir: &Path) -> PathBuf {
    data_dir.join(LOCK_FILE)
}

/// File name of the WAL segment whose first record is `first_seq`.
pub fn wal_segment_name(first_seq: u64) -> String {
    format!("{first_seq:020}.{WAL_SEGMENT_EXTENSION}")
}

/// The first sequence number of a WAL segment, from its file name.
pub fn wal_segment_first_seq(name: &str) -> Option<u64> {
    name.strip_suffix(WAL_SEGMENT_EXTENSION)?
        .strip_suffix('.')?
        .parse()
        .ok()
}

/// File name of the committed part file with id `id` (a ULID).
pub fn part_file_name(id: &str) -> String {
    format!("{PART_PREFIX}{id}{PARQUET_SUFFIX}")
}

/// File name of the part file with id `id` while it is being written.
pub fn tmp_part_file_name(id: &str) -> String {
    format!("{TMP_PART_PREFIX}{id}{PARQUET_SUFFIX}{TMP_SUFFIX}")
}

/// Whether a file name is a committed part file (`part-<id>.parquet`).
pub fn is_part_file(name: &str) -> bool {
    name.starts_with(PART_PREFIX) && name.ends_with(PARQUET_SUFFIX)
}

/// Whether a file name is a part file being written (or left by a crash mid-write).
pub fn is_tmp_part_file(name: &str) -> bool {
    name.starts_with(TMP_PART_PREFIX) && name.ends_with(TMP_SUFFIX)
}

/// The value of a `date=…` directory name.
pub fn date_of_dir_name(name: &str) -> Option<&str> {
    name.strip_prefix(DATE_KEY)?.strip_prefix('=')
}

/// The value of an `hour=…` directory name.
pub fn hour_of_dir_name(name: &str) -> Option<&str> {
    name.strip_prefix(HOUR_KEY)?.strip_prefix('=')
}

/// The datasets of a store, one directory each, partitioned alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Table {
    /// `spans/`: the canonical span rows.
    #[default]
    Spans,
    /// `logs/`: OTLP log records ([`crate::logs`]).
    Logs,
}

impl Table {
    /// Every table, in the order readers list them.
    pub const ALL: [Table; 2] = [Table::Spans, Table::Logs];

    /// The table's directory name below the data dir (`spans`, `logs`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Table::Spans => SPANS_DIR,
            Table::Logs => LOGS_DIR,
        }
    }

    /// `<data_dir>/<table>`.
    pub fn dir(self, data_dir: &Path) -> PathBuf {
        data_dir.join(self.dir_name())
    }
}

/// One Hive partition of one table: a UTC date and hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition {
    /// The dataset the partition belongs to (its top directory).
    pub table: Table,
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
}

impl Partition {
    /// The `spans/` partition of a time in nanoseconds since the Unix epoch (UTC; times before
    /// 1970 too); [`Partition::in_table`] moves it to another table.
    pub fn of_unix_nanos(nanos: i64) -> Partition {
        const NANOS_PER_SEC: i64 = 1_000_000_000;
        const SECS_PER_DAY: i64 = 86_400;
        let secs = nanos.div_euclid(NANOS_PER_SEC);
        let (year, month, day) = civil_from_days(secs.div_euclid(SECS_PER_DAY));
        Partition {
            table: Table::Spans,
            year,
            month,
            day,
            hour: (secs.rem_euclid(SECS_PER_DAY) / 3600) as u32,
        }
    }

    /// The same date and hour in `table`.
    pub fn in_table(self, table: Table) -> Partition {
        Partition { table, ..self }
    }

    /// `date=YYYY-MM-DD`.
    pub fn date_dir_name(&self) -> String {
        format!(
            "{DATE_KEY}={:04}-{:02}-{:02}",
            self.year, self.month, self.day
        )
    }

    /// `hour=H`.
    pub fn hour_dir_name(&self) -> String {
        format!("{HOUR_KEY}={}", self.hour)
    }

    /// `date=YYYY-MM-DD/hour=H` relative to the table's directory.
    pub fn relative_dir(&self) -> PathBuf {
        PathBuf::from(self.date_dir_name()).join(self.hour_dir_name())
    }

    /// Absolute directory of this partition in the store rooted at `data_dir`.
    pub fn dir(&self, data_dir: &Path) -> PathBuf {
        self.table.dir(data_dir).join(self.relative_dir())
    }
}

/// `(year, month, day)` of a day count since 1970-01-01 in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`): the partition must not depend on a date crate's
/// version, and the arithmetic is short.
fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
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
        // One nanosecond before the epoch is the last hour of 1969.
        let p = Partition::of_unix_nanos(-1);
        assert_eq!(p.relative_dir(), PathBuf::from("date=1969-12-31/hour=23"));
        // A leap day.
        let p = Partition::of_unix_nanos(1_709_164_800_000_000_000 + 22 * 3_600_000_000_000);
        assert_eq!(p.relative_dir(), PathBuf::from("date=2024-02-29/hour=22"));
    }

    #[test]
    fn log_partitions_live_under_logs() {
        let p = Partition::of_unix_nanos(1_796_007_845_000_000_000).in_table(Table::Logs);
        assert_eq!(
            p.dir(Path::new("/d")),
            PathBuf::from("/d/logs/date=2026-11-30/hour=3")
        );
        assert_ne!(p, p.in_table(Table::Spans));
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(part_file_name("01J"), "part-01J.parquet");
        assert_eq!(tmp_part_file_name("01J"), ".part-01J.parquet.tmp");
        assert!(is_part_file(&part_file_name("01J")));
        assert!(!is_part_file(&tmp_part_file_name("01J")));
        assert!(is_tmp_part_file(&tmp_part_file_name("01J")));
        assert_eq!(wal_segment_name(7), "00000000000000000007.wal");
        assert_eq!(wal_segment_first_seq(&wal_segment_name(7)), Some(7));
        assert_eq!(wal_segment_first_seq("checkpoint.json"), None);
        assert_eq!(date_of_dir_name("date=2026-11-30"), Some("2026-11-30"));
        assert_eq!(hour_of_dir_name("hour=7"), Some("7"));
        assert_eq!(hour_of_dir_name("hours=7"), None);
    }

    #[test]
    fn uploaded_part_names_carry_epoch_and_range() {
        let epoch = "01JDX4ABCDEFGHJKMNPQRSTVWX";
        let name = part_file_name(&uploaded_part_id(epoch, 7, 12));
        assert_eq!(
            name,
            "part-01JDX4ABCDEFGHJKMNPQRSTVWX-00000000000000000007-00000000000000000012.parquet"
        );
        assert!(is_part_file(&name));
        assert_eq!(uploaded_part_range(&name, epoch), Some((7, 12)));
        // Another collector's file, a local ULID-named file, a hidden file: not ours.
        assert_eq!(
            uploaded_part_range(&name, "01JDX5OTHEREPOCH0000000000"),
            None
        );
        assert_eq!(uploaded_part_range("part-01JDX4Q.parquet", epoch), None);
        assert_eq!(uploaded_part_range(&tmp_part_file_name(epoch), epoch), None);
    }
}
