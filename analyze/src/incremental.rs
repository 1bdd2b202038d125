//! Incremental checking: `check --since last` and `check --follow` (docs/incremental.md).
//!
//! Why a separate path: a cron job, CI or an alerting pipeline that follows a running collector
//! wants each problem once, and wants a run to cost what was committed since the last one, not
//! the whole store. The state ([`CheckState`]) records which committed part files were checked
//! and which findings were already reported (by [`finding_key`]); a run scans the time window of
//! the new part files (and of the WAL tail), widened so the traces that got new spans are checked
//! with their context, and keeps only findings whose key is not in the state.
//!
//! The WAL tail is checked but never recorded as checked: its spans are scanned again once they
//! are committed, and the finding keys keep them from being reported twice.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use arrow::array::AsArray as _;
use arrow::datatypes::Int64Type;
use chrono::{NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use crate::check::check_store;
use crate::error::LoadError;
use crate::load::ScanFilter;
use crate::model::stitch::SKEW_NS;
use crate::policy::Policy;
use crate::rules::{Finding, Report, Rule};
use crate::store::{Scanned, Snapshot};

/// The state file's name, at the data dir's root, when `--state` is not given.
pub const DEFAULT_STATE_FILE: &str = ".tripline-check-state.json";

/// Version of the state file's format.
const STATE_VERSION: u32 = 1;

/// What earlier runs checked and reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckState {
    pub version: u32,
    /// RFC 3339 time of the last run that saved this state.
    pub checked_at: Option<String>,
    /// Committed part files already checked, relative to the data dir (`spans/date=…/hour=…/part-….parquet`).
    pub checked_files: BTreeSet<String>,
    /// Findings already reported, by [`finding_key`].
    pub reported: BTreeSet<String>,
}

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the check state {path}: {source}; delete it to check everything again")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the check state {path} is not a tripline check state ({source}); delete it to check everything again, or pass another --state FILE")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write the check state {path}: {source}; pass --state FILE in a directory you can write")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl CheckState {
    /// The state in `path`, or an empty state (check everything) when the file does not exist.
    pub fn load(path: &Path) -> Result<Self, StateError> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| StateError::Parse {
                path: path.to_path_buf(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self {
                version: STATE_VERSION,
                ..Self::default()
            }),
            Err(source) => Err(StateError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Replaces `path` atomically (temporary file, fsync, rename), so a crash leaves the old or
    /// the new state, never half of one.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let err = |source| StateError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| err(e.into()))?;
        let mut f = std::fs::File::create(&tmp).map_err(err)?;
        f.write_all(&bytes).and_then(|()| f.sync_all()).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }

    /// Whether no run has been recorded yet.
    pub fn is_first_run(&self) -> bool {
        self.checked_files.is_empty() && self.checked_at.is_none()
    }
}

/// The stable identity of a finding: rule, trace id, span id and a digest of the message
/// (64-bit FNV-1a, hex). A finding whose message changes (e.g. a loop that grew) is new.
pub fn finding_key(f: &Finding) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in f.message.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}/{}/{}/{h:016x}", f.rule, f.trace_id, f.span_id)
}

/// The result of one incremental run.
#[derive(Debug)]
pub enum Increment {
    /// No committed part file and no WAL span appeared since the state was saved.
    NothingNew { since: Option<String> },
    /// The window was checked: `report.findings` holds only findings not reported before.
    Checked {
        report: Report,
        scanned: Scanned,
        /// Part files newly recorded as checked.
        new_files: usize,
    },
}

/// A part file's path relative to the data dir, as the state records it.
fn relative(data_dir: &Path, path: &Path) -> String {
    path.strip_prefix(data_dir)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Nanoseconds since the epoch of the start of partition `date`/`hour`.
fn partition_start_ns(date: &str, hour: &str) -> Option<i64> {
    let d = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let h: u32 = hour.parse().ok()?;
    d.and_hms_opt(h, 0, 0)?.and_utc().timestamp_nanos_opt()
}

/// Checks what was committed since `state` (plus the WAL tail), updates `state` with the files
/// checked and the findings reported, and returns the new findings. `wal_seen` is the WAL span
/// count of the previous call (for `--follow`; `None` on a one-shot run): an unchanged WAL tail
/// and no new file is nothing new.
pub async fn check_since(
    data_dir: &Path,
    state: &mut CheckState,
    filter: &ScanFilter,
    policy: &Policy,
    rules: &[&dyn Rule],
    wal_seen: &mut Option<u64>,
) -> Result<Increment, LoadError> {
    let snapshot = Snapshot::take(data_dir)?;
    let new: Vec<_> = snapshot
        .files
        .iter()
        .filter(|f| !state.checked_files.contains(&relative(data_dir, &f.path)))
        .collect();
    let wal_spans = snapshot.wal_spans();
    let wal_changed = wal_spans > 0 && *wal_seen != Some(wal_spans);
    *wal_seen = Some(wal_spans);
    if new.is_empty() && !wal_changed && !state.is_first_run() {
        return Ok(Increment::NothingNew {
            since: state.checked_at.clone(),
        });
    }
    let mut window = filter.clone();
    if !state.is_first_run() {
        // A part file's partition hour starts at or before every span in it; the WAL tail's
        // spans carry their own start times. Widened by the stitching tolerance, as `trace` does.
        let files_lo = new
            .iter()
            .filter_map(|f| f.partition.as_ref())
            .filter_map(|(d, h)| partition_start_ns(d, h));
        let wal_lo = snapshot.wal_batches.iter().filter_map(|b| {
            let col = b.column_by_name(schemas::schema::col::START_TIME_UNIX_NANO)?;
            arrow::compute::min(col.as_primitive_opt::<Int64Type>()?)
        });
        let unpartitioned = new.iter().any(|f| f.partition.is_none());
        if let (false, Some(lo)) = (unpartitioned, files_lo.chain(wal_lo).min()) {
            let lo = lo.saturating_sub(SKEW_NS);
            window.since_ns = Some(window.since_ns.map_or(lo, |s| s.max(lo)));
        }
    }
    let new_files: Vec<String> = new
        .iter()
        .map(|f| relative(data_dir, &f.path))
        .collect();
    let (model, mut report, scanned) = check_store(data_dir, &window, policy, rules).await?;
    drop(model);
    report
        .findings
        .retain(|f| state.reported.insert(finding_key(f)));
    state.checked_files.extend(new_files.iter().cloned());
    state.version = STATE_VERSION;
    state.checked_at = Some(Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    Ok(Increment::Checked {
        report,
        scanned,
        new_files: new_files.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_start_is_the_hour_in_utc() {
        assert_eq!(
            partition_start_ns("1970-01-01", "1"),
            Some(3_600_000_000_000)
        );
        assert_eq!(partition_start_ns("x", "1"), None);
    }

    #[test]
    fn state_round_trips_and_a_missing_file_is_a_first_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.json");
        let mut s = CheckState::load(&path).expect("missing is empty");
        assert!(s.is_first_run());
        s.checked_files.insert("spans/a.parquet".into());
        s.reported.insert("TL004/x/y/0".into());
        s.save(&path).expect("save");
        assert_eq!(CheckState::load(&path).expect("load"), s);
        std::fs::write(&path, b"not json").expect("write");
        assert!(matches!(
            CheckState::load(&path),
            Err(StateError::Parse { .. })
        ));
    }
}
