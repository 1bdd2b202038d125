//! The state of `check --since last` / `check --follow`: which committed part files were checked
//! (this JSON file) and which findings were reported (sorted key files beside it,
//! [`super::reported`]), so the next run scans only what is new and never repeats a finding.
//!
//! Why it is not kept in the data dir by default: a store can be read-only to the checker (a
//! mounted volume, another user's collector), shared by several checkers with different rules or
//! policies (each needs its own record of what *it* reported), and `tripline verify` treats the
//! data dir as the writer's. So the default lives in the checker's own state directory
//! (`$XDG_STATE_HOME/tripline/check/`, else `~/.local/state/tripline/check/`), one file per data
//! dir; `--state FILE` puts it anywhere (a CI cache, a cron job's working directory).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::reported::ReportedKeys;
use crate::model::{SpanId, TraceId};
use crate::rules::Finding;

/// Version of the state file's format. Format 1 held the reported findings' keys in the JSON
/// (`reported`); a state of format 1 is read and its keys moved to the key files.
pub const STATE_VERSION: u32 = 2;

/// What a state file is about: the store, the rules and the filters it was made with. A state
/// is only valid for the same scope: findings of other rules or filters were never judged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// The data dir, canonical.
    pub data_dir: String,
    /// Rule codes run, in order.
    pub rules: Vec<String>,
    /// The scan filters other than `--since` (`--until`, `--service`, `--trace`), as flags.
    pub filters: String,
}

/// What earlier runs checked and reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckState {
    pub version: u32,
    pub scope: Scope,
    /// RFC 3339 time of the last run that saved this state (`None`: no run yet).
    pub checked_at: Option<String>,
    /// Committed part files already checked, relative to the data dir
    /// (`spans/date=…/hour=…/part-….parquet`). Files gone from the store are dropped.
    pub checked_files: BTreeSet<String>,
    /// How many findings were reported, all runs together (their keys are in the key files
    /// beside this file, `<state>.reported/`).
    #[serde(default)]
    pub reported_keys: u64,
    /// Format 1's keys of the reported findings, moved to the key files when read.
    #[serde(default, rename = "reported", skip_serializing)]
    legacy_reported: BTreeSet<String>,
}

/// Why the state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the check state {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the check state {path} is not a tripline check state ({source}); delete it to check everything again, or pass another --state FILE")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("the check state {path} has format version {found}, this tripline reads {STATE_VERSION}; delete it to check everything again, or pass another --state FILE")]
    Version { path: PathBuf, found: u32 },
    #[error("the check state {path} was made for {was}, not for {now}; pass another --state FILE (one per store, rule set and filter)")]
    OtherScope {
        path: PathBuf,
        was: String,
        now: String,
    },
    #[error("cannot write the check state {path}: {source}; pass --state FILE in a directory you can write")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no place for the check state: neither XDG_STATE_HOME nor HOME is set; pass --state FILE"
    )]
    NoStateDir,
}

impl Scope {
    fn describe(&self) -> String {
        let filters = if self.filters.is_empty() {
            String::new()
        } else {
            format!(" with {}", self.filters)
        };
        format!(
            "data dir {} and rules {}{filters}",
            self.data_dir,
            self.rules.join(",")
        )
    }
}

impl CheckState {
    /// The state in `path` for `scope`, or a fresh state (check everything) when the file does
    /// not exist. A state made for another scope is an error, never silently reused.
    pub fn load(path: &Path, scope: Scope) -> Result<Self, StateError> {
        let state: CheckState = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| StateError::Parse {
                path: path.to_path_buf(),
                source,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    version: STATE_VERSION,
                    scope,
                    ..Self::default()
                })
            }
            Err(source) => {
                return Err(StateError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let mut state = state;
        if state.version == 1 {
            state.migrate(path)?;
        }
        if state.version != STATE_VERSION {
            return Err(StateError::Version {
                path: path.to_path_buf(),
                found: state.version,
            });
        }
        if state.scope != scope {
            return Err(StateError::OtherScope {
                path: path.to_path_buf(),
                was: state.scope.describe(),
                now: scope.describe(),
            });
        }
        Ok(state)
    }

    /// Replaces `path` atomically (temporary file, fsync, rename), so a crash leaves the old or
    /// the new state, never half of one. Creates the parent directory.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let err = |source| StateError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| err(e.into()))?;
        let mut f = std::fs::File::create(&tmp).map_err(err)?;
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }

    /// Format 1 to 2: the keys in the JSON go to the key files beside it (written now; the JSON
    /// says format 2 once the next run saves it).
    fn migrate(&mut self, path: &Path) -> Result<(), StateError> {
        let keys = ReportedKeys::beside(path);
        let mut by_rule: BTreeMap<&str, Vec<(TraceId, SpanId)>> = BTreeMap::new();
        let mut moved = 0;
        for k in &self.legacy_reported {
            let mut parts = k.split('/');
            let (Some(rule), Some(t), Some(s), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            // A rule code names a file: nothing else is taken from the JSON.
            if rule.is_empty() || !rule.chars().all(|c| c.is_ascii_alphanumeric()) {
                continue;
            }
            if let (Some(t), Some(s)) = (TraceId::parse_hex(t), SpanId::parse_hex(s)) {
                by_rule.entry(rule).or_default().push((t, s));
                moved += 1;
            }
        }
        for (rule, ids) in by_rule {
            keys.write_rule(rule, ids)?;
        }
        self.reported_keys = moved;
        self.legacy_reported.clear();
        self.version = STATE_VERSION;
        Ok(())
    }

    /// Whether no run has been recorded yet.
    pub fn is_first_run(&self) -> bool {
        self.checked_at.is_none()
    }
}

/// The default state file of the store at `data_dir` (canonical):
/// `<state dir>/tripline/check/<dir name>-<16 hex digits of its path's hash>.json`, where the
/// state dir is `$XDG_STATE_HOME`, else `$HOME/.local/state`.
pub fn default_state_path(canonical_data_dir: &Path) -> Result<PathBuf, StateError> {
    let env = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = env("XDG_STATE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".local").join("state")))
        .ok_or(StateError::NoStateDir)?;
    let name: String = canonical_data_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = fnv1a(canonical_data_dir.as_os_str().as_encoded_bytes());
    Ok(base
        .join("tripline")
        .join("check")
        .join(format!("{name}-{hash:016x}.json")))
}

/// The stable identity of a finding: rule, trace id and span id (`TL004/<trace>/<span>`). The
/// message is left out on purpose: it can change as more of the same problem is seen (a loop
/// that grew, a server span whose host call arrived later), and that is the same problem, not a
/// new one.
pub fn finding_key(f: &Finding) -> String {
    format!("{}/{}/{}", f.rule, f.trace_id, f.span_id)
}

/// 64-bit FNV-1a: a stable hash (the std hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope {
            data_dir: "/d".into(),
            rules: vec!["TL004".into()],
            filters: String::new(),
        }
    }

    #[test]
    fn state_round_trips_and_a_missing_file_is_a_first_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub").join("state.json");
        let mut s = CheckState::load(&path, scope()).expect("missing is empty");
        assert!(s.is_first_run());
        s.checked_at = Some("2026-12-01T00:00:00Z".into());
        s.checked_files.insert("spans/a.parquet".into());
        s.reported_keys = 3;
        s.save(&path).expect("save");
        assert_eq!(CheckState::load(&path, scope()).expect("load"), s);
        std::fs::write(&path, b"not json").expect("write");
        assert!(matches!(
            CheckState::load(&path, scope()),
            Err(StateError::Parse { .. })
        ));
    }

    #[test]
    fn a_format_1_state_moves_its_keys_to_the_key_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.json");
        let (t, s) = ("ab".repeat(16), "cd".repeat(8));
        let v1 = serde_json::json!({
            "version": 1,
            "scope": scope(),
            "checked_at": "2026-12-01T00:00:00Z",
            "checked_files": ["spans/a.parquet"],
            "reported": [format!("TL004/{t}/{s}"), "../evil/x/y", "TL009/not-hex/y"],
        });
        std::fs::write(&path, v1.to_string()).expect("write");
        let state = CheckState::load(&path, scope()).expect("format 1 is read");
        assert_eq!(state.version, STATE_VERSION);
        assert_eq!(state.reported_keys, 1);
        let keys = ReportedKeys::beside(&path);
        let want = (
            TraceId::parse_hex(&t).expect("hex"),
            SpanId::parse_hex(&s).expect("hex"),
        );
        assert_eq!(keys.read_rule("TL004").expect("keys"), vec![want]);
        // Nothing but the one valid rule's file: no path taken from the JSON.
        let files: Vec<_> = std::fs::read_dir(keys.dir()).expect("dir").collect();
        assert_eq!(files.len(), 1);
        // Saved as format 2: no keys in the JSON.
        state.save(&path).expect("save");
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        assert_eq!(saved["version"], STATE_VERSION);
        assert!(saved.get("reported").is_none(), "{saved}");
    }

    #[test]
    fn a_state_of_another_scope_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("state.json");
        CheckState::load(&path, scope())
            .expect("fresh")
            .save(&path)
            .expect("save");
        let other = Scope {
            rules: vec!["TL002".into()],
            ..scope()
        };
        let e = CheckState::load(&path, other).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the check state {} was made for data dir /d and rules TL004, not for data dir /d and rules TL002; pass another --state FILE (one per store, rule set and filter)",
                path.display()
            )
        );
    }

    #[test]
    fn default_path_is_per_store_and_outside_it() {
        let a = default_state_path(Path::new("/srv/tripline-data")).expect("path");
        let b = default_state_path(Path::new("/other/tripline-data")).expect("path");
        assert_ne!(a, b);
        assert!(!a.starts_with("/srv/tripline-data"));
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("tripline-data-") && name.ends_with(".json"),
            "{name}"
        );
    }
}
