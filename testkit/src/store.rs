//! Looking inside a store on disk, by the layout the collector writes ([`schemas::layout`]).

use std::path::{Path, PathBuf};

use schemas::layout;

/// Every committed part file under `<data_dir>/spans`, sorted (none when there is no store).
pub fn part_files(data_dir: &Path) -> Vec<PathBuf> {
    files_under(&layout::spans_dir(data_dir), layout::is_part_file)
}

/// The partition directory of each part file, relative to `data_dir`
/// (`spans/date=YYYY-MM-DD/hour=H`), in part file order.
pub fn partition_dirs(data_dir: &Path) -> Vec<String> {
    part_files(data_dir)
        .iter()
        .filter_map(|p| p.parent()?.strip_prefix(data_dir).ok())
        .map(|p| p.display().to_string())
        .collect()
}

/// Every file under `dir` whose name ends in `.tmp` (temporary files a writer left), sorted.
pub fn tmp_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir, |name| name.ends_with(layout::TMP_SUFFIX))
}

/// The WAL segment files of the store at `data_dir`, sorted (so by first sequence number).
pub fn wal_segments(data_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(layout::wal_dir(data_dir))
        .expect("read the WAL directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(layout::wal_segment_first_seq)
                .is_some()
        })
        .collect();
    out.sort();
    out
}

/// Copy the files of directory `from` (not its subdirectories) into `to`, created if needed.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    for e in std::fs::read_dir(from)
        .expect("read the directory to copy")
        .flatten()
    {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy a file");
        }
    }
}

/// Regular files below `dir` (recursively) whose name passes `keep`, sorted.
fn files_under(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&e.file_name().to_string_lossy()) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
