//! A scan that reads nothing is never "no findings": every command that scans the store exits 2
//! with the likely cause (no store, one directory too deep, an empty store, a filter that matched
//! nothing), and a normal scan says how many spans and part files it read (stderr for tables, a
//! `scanned` object in JSON). Through the real binary.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod common;

use common::tripline;
use schemas::layout;

const SAMPLE: &str = "samples/traces/atlas-healthy.json";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ingested() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tripline(dir.path(), &["ingest", SAMPLE]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    dir
}

fn assert_exit_2(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains(needle),
        "expected {needle:?} in stderr: {stderr}"
    );
    assert!(
        !text(&out.stdout).contains("no findings"),
        "a scan of nothing must not print a clean report"
    );
}

/// Every scanning command over `dir`.
fn every_command(dir: &Path) -> Vec<Output> {
    vec![
        tripline(dir, &["check"]),
        tripline(dir, &["check", "--format", "json"]),
        tripline(dir, &["report", "tools"]),
        tripline(dir, &["query", "SELECT count(*) FROM spans"]),
        tripline(dir, &["trace", "00000000000000000000000000000001"]),
    ]
}

#[test]
fn an_unrelated_directory_is_not_a_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.txt"), "hello").expect("write");
    for out in every_command(dir.path()) {
        assert_exit_2(&out, "no spans/ directory in");
        assert_exit_2(&out, "not a tripline store");
    }
    let other = tempfile::tempdir().expect("temp dir");
    let out = tripline(
        dir.path(),
        &[
            "diff",
            &dir.path().display().to_string(),
            &other.path().display().to_string(),
        ],
    );
    assert_exit_2(&out, "baseline data dir");
}

#[test]
fn an_empty_store_says_it_is_empty() {
    // With an empty spans/ directory, and as a collector that received nothing leaves it.
    for collector_ran in [false, true] {
        let dir = tempfile::tempdir().expect("temp dir");
        if collector_ran {
            let config = collector::PipelineConfig::new(dir.path());
            let stats = std::sync::Arc::new(collector::Stats::default());
            let pipeline = collector::Pipeline::start(config, stats).expect("start");
            pipeline.shutdown().expect("stop");
        } else {
            std::fs::create_dir(layout::spans_dir(dir.path())).expect("mkdir");
        }
        for out in every_command(dir.path()) {
            assert_exit_2(
                &out,
                "is empty: no part files under spans/ and no acknowledged spans in the WAL",
            );
        }
    }
}

#[test]
fn one_level_too_deep_suggests_the_parent() {
    let dir = ingested();
    let root = dir.path().canonicalize().expect("canonical");
    let spans = layout::spans_dir(&root);
    let out = tripline(&spans, &["check"]);
    assert_exit_2(
        &out,
        &format!(
            "looks like the spans/ directory of a store: did you mean --data-dir {}?",
            root.display()
        ),
    );
    let date = std::fs::read_dir(&spans)
        .expect("spans")
        .flatten()
        .next()
        .expect("a date= partition")
        .path();
    let out = tripline(&date, &["query", "SELECT 1"]);
    assert_exit_2(
        &out,
        &format!(
            "looks like a partition directory of a store: did you mean --data-dir {}?",
            root.display()
        ),
    );
}

#[test]
fn a_filter_that_matches_nothing_names_itself_and_the_store_size() {
    let dir = ingested();
    let json = tripline(
        dir.path(),
        &["check", "--format", "json", "--fail-on", "critical"],
    );
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
    let v: Value = serde_json::from_slice(&json.stdout).expect("check JSON");
    let total = v["scanned"]["spans"].as_u64().expect("scanned.spans");
    assert!(total > 0);
    let out = tripline(dir.path(), &["check", "--service", "nosuch"]);
    assert_exit_2(
        &out,
        &format!(
            "no span matches --service nosuch; the store holds {total} span(s) without this filter"
        ),
    );
    let out = tripline(dir.path(), &["report", "tools", "--service", "nosuch"]);
    assert_exit_2(&out, "no span matches --service nosuch");
    let out = tripline(dir.path(), &["trace", "00000000000000000000000000000001"]);
    assert_exit_2(
        &out,
        &format!("no span matches --trace 00000000000000000000000000000001; the store holds {total} span(s)"),
    );
}

#[test]
fn a_normal_scan_reports_what_it_read() {
    let dir = ingested();
    let count = tripline(
        dir.path(),
        &[
            "query",
            "SELECT count(*) AS n FROM spans",
            "--format",
            "json",
        ],
    );
    assert_eq!(count.status.code(), Some(0), "{}", text(&count.stderr));
    let rows: Value = serde_json::from_slice(&count.stdout).expect("query JSON");
    let n = rows[0]["n"].as_u64().expect("n");
    let files = std::fs::read_dir(layout::spans_dir(dir.path()))
        .expect("spans")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).expect("date").flatten())
        .flat_map(|h| std::fs::read_dir(h.path()).expect("hour").flatten())
        .filter(|f| {
            f.file_name()
                .to_string_lossy()
                .ends_with(layout::PARQUET_SUFFIX)
        })
        .count();
    assert!(files >= 1);
    let summary = format!("scanned {n} span(s) in {files} part file(s)");
    assert!(
        text(&count.stderr).contains(&summary),
        "{}",
        text(&count.stderr)
    );

    let json = tripline(
        dir.path(),
        &["check", "--format", "json", "--fail-on", "critical"],
    );
    let v: Value = serde_json::from_slice(&json.stdout).expect("check JSON");
    assert_eq!(v["scanned"]["spans"], n);
    assert_eq!(v["scanned"]["files"], files);
    assert_eq!(v["scanned"]["wal_spans"], 0);
    assert_eq!(v["scanned"]["unreadable_files"], serde_json::json!([]));
    assert!(v["findings"].is_array() && v["coverage"].is_array(), "{v}");

    let table = tripline(dir.path(), &["check", "--fail-on", "critical"]);
    assert_eq!(table.status.code(), Some(0));
    assert!(
        text(&table.stderr).contains(&summary),
        "{}",
        text(&table.stderr)
    );

    let sarif = tripline(
        dir.path(),
        &["check", "--format", "sarif", "--fail-on", "critical"],
    );
    let v: Value = serde_json::from_slice(&sarif.stdout).expect("SARIF");
    assert_eq!(v["runs"][0]["properties"]["scanned"]["spans"], n);
    let md = tripline(
        dir.path(),
        &["check", "--format", "markdown", "--fail-on", "critical"],
    );
    assert!(
        text(&md.stdout).contains(&format!("Scanned {n} span(s) in {files} part file(s).")),
        "{}",
        text(&md.stdout)
    );

    let report = tripline(dir.path(), &["report", "tools", "--format", "json"]);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    let r: Value = serde_json::from_slice(&report.stdout).expect("report JSON");
    assert_eq!(r["scanned"]["spans"], n);
    assert!(r["rows"].is_array());

    // SQL that selects no row from a non-empty store is a valid answer, not an error.
    let none = tripline(dir.path(), &["query", "SELECT * FROM spans WHERE 1 = 0"]);
    assert_eq!(none.status.code(), Some(0), "{}", text(&none.stderr));
    assert!(text(&none.stdout).contains("0 row(s)"));
}
