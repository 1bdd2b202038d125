//! Parquet files roll by size and by age, row groups are bounded by rows, and every span of a
//! batch lands in the partition of its own start hour.

mod common;

use std::sync::Arc;
use std::time::Duration;

use collector::{Pipeline, PipelineConfig, Stats};
use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use schemas::{convert_request, IngestContext};

fn ctx() -> IngestContext {
    IngestContext {
        received_at_unix_nano: T0 as i64,
        source: "test".into(),
        redact_content: false,
    }
}

fn submit(pipeline: &Pipeline, n: u64, start: u64) {
    let converted = convert_request(&request("roll-svc", tool_call_spans(n, start)), &ctx());
    assert_eq!(converted.accepted, 2);
    pipeline.submit(&converted).expect("accepted");
}

fn row_groups(path: &std::path::Path) -> Vec<i64> {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    r.metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect()
}

#[test]
fn files_roll_by_size_and_row_groups_are_bounded_by_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = PipelineConfig::new(dir.path());
    config.row_group_rows = 4;
    config.max_file_bytes = 1; // every batch fills a file
    let pipeline = Pipeline::start(config, Arc::new(Stats::default())).unwrap();
    for n in 0..3 {
        submit(&pipeline, n, T0);
    }
    pipeline.shutdown().unwrap();
    let files = part_files(dir.path());
    assert_eq!(files.len(), 3, "one file per batch at a 1-byte size bound");

    let dir = tempfile::tempdir().unwrap();
    let mut config = PipelineConfig::new(dir.path());
    config.row_group_rows = 4;
    let pipeline = Pipeline::start(config, Arc::new(Stats::default())).unwrap();
    for n in 0..5 {
        submit(&pipeline, n, T0);
    }
    pipeline.shutdown().unwrap();
    let files = part_files(dir.path());
    assert_eq!(files.len(), 1);
    // 10 rows in batches of 2 with a 4-row bound: flushed at 4, 8, then the rest at close.
    assert_eq!(row_groups(&files[0]), vec![4, 4, 2]);
}

#[test]
fn files_roll_by_age_without_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = PipelineConfig::new(dir.path());
    config.max_file_age = Duration::from_millis(200);
    let pipeline = Pipeline::start(config, Arc::new(Stats::default())).unwrap();
    submit(&pipeline, 0, T0);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while part_files(dir.path()).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        part_files(dir.path()).len(),
        1,
        "the aged file was committed while running"
    );
    // And the commit was accounted for: the counter is bumped after the rename (and the WAL
    // checkpoint), so wait for it instead of racing the writer thread.
    let committed = || {
        pipeline
            .stats()
            .rows_committed
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    while committed() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(committed(), 2);
    pipeline.shutdown().unwrap();
}

#[test]
fn one_batch_spanning_hours_is_split_into_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline =
        Pipeline::start(PipelineConfig::new(dir.path()), Arc::new(Stats::default())).unwrap();
    let mut spans = tool_call_spans(0, T0); // 10:00
    spans.extend(tool_call_spans(1, T0 - 10 * 3_600_000_000_000)); // 00:00 same day
    let converted = convert_request(&request("split-svc", spans), &ctx());
    pipeline.submit(&converted).unwrap();
    pipeline.shutdown().unwrap();
    let dirs = testkit::store::partition_dirs(dir.path());
    assert_eq!(
        dirs,
        vec![
            "spans/date=2026-11-30/hour=0",
            "spans/date=2026-11-30/hour=10"
        ]
    );
    assert_eq!(stored_span_ids(dir.path()).len(), 4);
}
