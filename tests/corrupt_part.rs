//! One damaged part file does not take the store down, and is never skipped silently: `check`,
//! `report` and `query` name it (stderr warning, `scanned.unreadable_files` in JSON), read the
//! rest, and exit per their findings; a store where every part file is damaged is exit 2.
//! Through the real binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::tripline;
use testkit::store::part_files;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Spans in the store per `query`.
fn span_count(dir: &Path) -> u64 {
    let out = tripline(
        dir,
        &[
            "query",
            "SELECT count(*) AS n FROM spans",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v[0]["n"].as_u64().expect("n")
}

/// Truncates `path` to half its size: its footer is gone.
fn truncate(path: &Path) {
    let len = std::fs::metadata(path).expect("metadata").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    f.set_len(len / 2).expect("truncate");
}

#[test]
fn a_corrupt_part_file_is_named_and_skipped_and_the_rest_is_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ingest = |sample: &str| {
        let out = tripline(dir.path(), &["ingest", sample]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        span_count(dir.path())
    };
    let first = ingest("samples/traces/atlas-healthy.json");
    let before: Vec<PathBuf> = part_files(dir.path());
    let both = ingest("samples/traces/crm-healthy.json");
    let files = part_files(dir.path());
    let damaged = files
        .iter()
        .find(|f| !before.contains(f))
        .expect("the second ingest wrote a new part file")
        .clone();
    truncate(&damaged);
    let name = damaged.display().to_string();

    let check = tripline(
        dir.path(),
        &["check", "--format", "json", "--fail-on", "critical"],
    );
    let stderr = text(&check.stderr);
    assert_eq!(check.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: skipped {name}: not a readable Parquet file"
        )),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&check.stdout).expect("check JSON");
    assert_eq!(v["scanned"]["spans"], first, "the other files are read");
    assert_eq!(v["scanned"]["files"], files.len() - 1);
    assert_eq!(v["scanned"]["unreadable_files"][0]["path"], name.as_str());
    assert!(both > first);

    let table = tripline(dir.path(), &["check", "--fail-on", "critical"]);
    assert!(
        text(&table.stderr).contains("1 file(s) could not be read and were skipped"),
        "{}",
        text(&table.stderr)
    );
    let report = tripline(dir.path(), &["report", "tools"]);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    assert!(text(&report.stderr).contains(&name));
    assert_eq!(span_count(dir.path()), first);

    // Every part file damaged: nothing to read is an error, not an empty report.
    for f in &files {
        if f != &damaged {
            truncate(f);
        }
    }
    let out = tripline(dir.path(), &["check"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "none of the {} part file(s) in {} could be read",
            files.len(),
            dir.path().display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_part_file_with_a_valid_footer_and_damaged_data_is_named_and_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["ingest", "samples/traces/atlas-healthy.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = part_files(dir.path());
    let first = span_count(dir.path());
    let out = tripline(dir.path(), &["ingest", "samples/traces/crm-healthy.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let damaged = part_files(dir.path())
        .into_iter()
        .find(|f| !before.contains(f))
        .expect("a new part file");
    // Garble the first column chunks; the footer at the end stays intact.
    let mut bytes = std::fs::read(&damaged).expect("read");
    for b in &mut bytes[8..2000] {
        *b ^= 0xa5;
    }
    std::fs::write(&damaged, &bytes).expect("write");
    let name = damaged.display().to_string();

    let check = tripline(
        dir.path(),
        &["check", "--format", "json", "--fail-on", "critical"],
    );
    let stderr = text(&check.stderr);
    assert_eq!(check.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("warning: skipped {name}: data unreadable")),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&check.stdout).expect("check JSON");
    assert_eq!(v["scanned"]["spans"], first);
    assert_eq!(v["scanned"]["unreadable_files"][0]["path"], name.as_str());

    let q = tripline(
        dir.path(),
        // Reads the first columns (where the damage is), not just the row counts in the footers.
        &[
            "query",
            "SELECT count(DISTINCT span_id) AS n FROM spans",
            "--format",
            "json",
        ],
    );
    assert_eq!(q.status.code(), Some(0), "{}", text(&q.stderr));
    let rows: Value = serde_json::from_slice(&q.stdout).expect("JSON");
    assert_eq!(rows[0]["n"], first);
    assert!(text(&q.stderr).contains(&name), "{}", text(&q.stderr));
}
