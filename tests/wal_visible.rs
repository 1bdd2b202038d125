//! Acknowledged spans are visible before the collector commits them to Parquet: `query` and
//! `check` read the WAL tail (records above the checkpoint), minus the rows a committed part file
//! already holds, so a span is counted exactly once whatever point the collector stopped at.
//! The write side is the real `collector::Pipeline`, stopped with `abort()` as a crash would stop
//! it; the read side is the real binary.

use std::path::Path;
use std::sync::Arc;

use collector::{Pipeline, PipelineConfig, Stats};
use serde_json::Value;

mod common;

use common::{repo, tripline};
use schemas::layout;
use testkit::store::copy_dir;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn converted(sample: &str) -> schemas::Converted {
    let body = std::fs::read(repo().join(sample)).expect("sample");
    let req = schemas::decode_json(&body).expect("OTLP/JSON");
    let c = schemas::convert_request(
        &req,
        &schemas::IngestContext {
            received_at_unix_nano: 1_796_000_000_000_000_000,
            source: sample.to_string(),
            redact_content: false,
        },
    );
    assert_eq!(c.rejected, 0, "{:?}", c.rejection_reasons);
    c
}

/// Submits `sample` (acknowledged: in the WAL), then stops the pipeline as a crash would.
fn acknowledge_then_crash(dir: &Path, sample: &str) -> u64 {
    let c = converted(sample);
    let pipeline =
        Pipeline::start(PipelineConfig::new(dir), Arc::new(Stats::default())).expect("start");
    pipeline.submit(&c).expect("acknowledged");
    pipeline.abort();
    c.batch.num_rows() as u64
}

/// Starts a pipeline (which replays the WAL and commits it) and stops it cleanly.
fn restart_and_commit(dir: &Path) {
    let pipeline =
        Pipeline::start(PipelineConfig::new(dir), Arc::new(Stats::default())).expect("start");
    pipeline.shutdown().expect("shutdown");
}

/// (rows per `query`, `scanned` of `check --format json`).
fn read(dir: &Path) -> (u64, Value) {
    let q = tripline(
        dir,
        &[
            "query",
            "SELECT count(*) AS n FROM spans",
            "--format",
            "json",
        ],
    );
    assert_eq!(q.status.code(), Some(0), "{}", text(&q.stderr));
    let rows: Value = serde_json::from_slice(&q.stdout).expect("query JSON");
    let c = tripline(dir, &["check", "--format", "json", "--fail-on", "critical"]);
    assert_eq!(c.status.code(), Some(0), "{}", text(&c.stderr));
    let v: Value = serde_json::from_slice(&c.stdout).expect("check JSON");
    (rows[0]["n"].as_u64().expect("n"), v["scanned"].clone())
}

#[test]
fn acknowledged_spans_in_the_wal_are_read_exactly_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = acknowledge_then_crash(dir.path(), "samples/traces/atlas-healthy.json");
    assert!(n > 0);

    // Only in the WAL: visible, and said so.
    let (rows, scanned) = read(dir.path());
    assert_eq!(rows, n);
    assert_eq!(scanned["spans"], n);
    assert_eq!(scanned["wal_spans"], n);
    assert_eq!(scanned["files"], 0);
    let q = tripline(dir.path(), &["query", "SELECT 1"]);
    assert!(
        text(&q.stderr).contains(&format!(
            "scanned {n} span(s) in 0 part file(s), {n} of them acknowledged but still in the WAL"
        )),
        "{}",
        text(&q.stderr)
    );

    // Committed, WAL released: the same spans, now from Parquet.
    let old_wal = dir.path().join("wal-before-commit");
    copy_dir(&layout::wal_dir(dir.path()), &old_wal);
    restart_and_commit(dir.path());
    let (rows, scanned) = read(dir.path());
    assert_eq!((rows, scanned["wal_spans"].as_u64()), (n, Some(0)));
    assert!(scanned["files"].as_u64() >= Some(1), "{scanned}");

    // A crash between the commit and the checkpoint: the WAL still holds records a committed
    // file covers. They are not counted twice.
    std::fs::remove_dir_all(layout::wal_dir(dir.path())).expect("rm wal");
    copy_dir(&old_wal, &layout::wal_dir(dir.path()));
    std::fs::remove_dir_all(&old_wal).expect("rm copy");
    let (rows, scanned) = read(dir.path());
    assert_eq!((rows, scanned["wal_spans"].as_u64()), (n, Some(0)));

    // New acknowledged spans on top of committed ones: both, each once.
    restart_and_commit(dir.path());
    let m = acknowledge_then_crash(dir.path(), "samples/traces/crm-healthy.json");
    let (rows, scanned) = read(dir.path());
    assert_eq!(rows, n + m);
    assert_eq!(scanned["wal_spans"], m);
}

#[test]
fn spans_are_visible_while_the_collector_runs_and_has_not_committed_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let c = converted("samples/traces/support-healthy.json");
    let n = c.batch.num_rows() as u64;
    // A running pipeline with the default --max-file-age (60 s): nothing is committed while the
    // binary reads.
    let pipeline = Pipeline::start(PipelineConfig::new(dir.path()), Arc::new(Stats::default()))
        .expect("start");
    pipeline.submit(&c).expect("acknowledged");
    let (rows, scanned) = read(dir.path());
    assert_eq!((rows, scanned["wal_spans"].as_u64()), (n, Some(n)));
    pipeline.shutdown().expect("shutdown");
    let (rows, scanned) = read(dir.path());
    assert_eq!((rows, scanned["wal_spans"].as_u64()), (n, Some(0)));
}
