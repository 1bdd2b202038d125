//! Why a scan read no span. An empty result is never reported as "no findings": the store may be
//! missing, one directory too deep, empty, unreadable, or the filter may match nothing, and each
//! has a different fix.

use std::path::{Path, PathBuf};

use schemas::layout;

use super::Snapshot;

/// The likely cause of a scan that read nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoSpans {
    /// `<data_dir>/spans` does not exist and nothing is in the WAL.
    #[error("no spans/ directory in {data_dir}: this is not a tripline store{hint}")]
    NoSpansDir { data_dir: PathBuf, hint: String },
    /// The store exists (`spans/` or `wal/`) but holds no span.
    #[error("the store in {data_dir} is empty: no part files under spans/ and no acknowledged spans in the WAL{wal}; ingest or collect some first (`tripline ingest FILE`, `tripline collect`)")]
    Empty { data_dir: PathBuf, wal: String },
    /// Every part file is unreadable.
    #[error("none of the {files} part file(s) in {data_dir} could be read (see the warnings above){}; run `tripline verify --data-dir {data_dir}` for details", if *wal_spans > 0 { format!(", only {wal_spans} span(s) still in the WAL are readable") } else { String::new() })]
    AllUnreadable {
        data_dir: PathBuf,
        files: usize,
        wal_spans: u64,
    },
    /// The filter excluded every span.
    #[error("no span matches {filter}; the store holds {total} span(s) without {}{}", if filter.contains(" --") { "these filters" } else { "this filter" }, if filter.contains("--trace") { "; list trace ids with `tripline query \"SELECT DISTINCT encode(trace_id, 'hex') FROM spans\"`" } else { "" })]
    FilterMatchedNothing { filter: String, total: u64 },
}

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
