//! Why a scan read no span. An empty result is never reported as "no findings": the store may be
//! missing, one directory too deep, empty, unreadable, or the filter may match nothing, and each
//! has a different fix.

use std::path::Path;

use schemas::layout;

use super::Snapshot;
pub use crate::error::NoSpans;

/// The cause when the snapshot holds no span at all.
pub(super) fn diagnose_empty(s: &Snapshot) -> NoSpans {
    let spans = layout::spans_dir(&s.data_dir);
    let wal = if s.wal_problems.is_empty() {
        String::new()
    } else {
        format!(
            " that could be read ({} WAL problem(s), see the warnings above)",
            s.wal_problems.len()
        )
    };
    // On object storage there is no directory to look at and no WAL: the prefix holds no part.
    if s.remote.is_some() {
        return NoSpans::Empty {
            data_dir: s.data_dir.clone(),
            wal: " (spans a collector acknowledged but has not uploaded yet are in its --wal-dir)"
                .to_string(),
        };
    }
    // A collector that has received nothing yet leaves `wal/` and no `spans/`: a store, empty.
    if !spans.is_dir() && !layout::wal_dir(&s.data_dir).is_dir() {
        return NoSpans::NoSpansDir {
            data_dir: s.data_dir.clone(),
            hint: hint_for(&s.data_dir),
        };
    }
    NoSpans::Empty {
        data_dir: s.data_dir.clone(),
        wal,
    }
}

/// A suggestion when `dir` looks like a part of a store (its `spans/` directory or a partition)
/// rather than a store.
fn hint_for(dir: &Path) -> String {
    let abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // `…/spans`, `…/spans/date=…`, `…/spans/date=…/hour=…`: the store is above `spans`.
    for a in abs.ancestors().take(3) {
        if a.file_name().is_some_and(|n| n == layout::SPANS_DIR) {
            if let Some(parent) = a.parent() {
                let what = if a == abs {
                    "the spans/ directory of a store"
                } else {
                    "a partition directory of a store"
                };
                return format!(
                    "; {} looks like {what}: did you mean --data-dir {}?",
                    dir.display(),
                    parent.display()
                );
            }
        }
    }
    let has_partitions = std::fs::read_dir(&abs).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| layout::date_of_dir_name(&e.file_name().to_string_lossy()).is_some())
    });
    if has_partitions {
        return format!(
            "; {} holds date=… partitions directly, but a store keeps them in <data-dir>/spans/",
            dir.display()
        );
    }
    "; pass --data-dir (or TRIPLINE_DATA_DIR) pointing at the directory given to `tripline collect` or `tripline ingest`".to_string()
}
