//! The store path: fixture spans written as Hive-partitioned Parquet (with the schema crate's
//! writer properties, as the collector writes them), read back through DataFusion with the
//! explicit schema, filters pushed down, and the same findings as the in-memory path.

mod common;

use std::fs::File;
use std::path::Path;

use analyze::check::{check_spans, check_store};
use analyze::load::{load_batches, load_store, Projection, ScanFilter};
use analyze::model::TraceId;
use analyze::policy::Policy;
use analyze::rules::RULES;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;

fn write_parquet(dir: &Path, partition: &str, name: &str, batch: &RecordBatch) {
    let part = dir.join("spans").join(partition);
    std::fs::create_dir_all(&part).unwrap();
    let file = File::create(part.join(name)).unwrap();
    let mut w =
        ArrowWriter::try_new(file, batch.schema(), Some(schemas::writer_properties())).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn fixture(code: &str) -> RecordBatch {
    common::batch_from_json(&common::fixtures_dir().join(format!("{code}.json")))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A store with TL004's spans in their true partition (2026-11-30, hour 0) and TL010's spans
/// filed under the previous day, so a time filter can only drop them by partition pruning.
fn store() -> (tempfile::TempDir, RecordBatch, RecordBatch) {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture("TL004");
    let b = fixture("TL010");
    write_parquet(dir.path(), "date=2026-11-30/hour=0", "part-a.parquet", &a);
    write_parquet(dir.path(), "date=2026-11-29/hour=23", "part-b.parquet", &b);
    (dir, a, b)
}

fn count(dir: &Path, filter: ScanFilter) -> usize {
    rt().block_on(load_store(dir, &filter, &Projection::base()))
        .unwrap()
        .len()
}

/// The error of a scan that reads nothing.
fn no_spans(dir: &Path, filter: ScanFilter) -> String {
    let e = rt()
        .block_on(load_store(dir, &filter, &Projection::base()))
        .unwrap_err();
    assert!(matches!(e, analyze::error::LoadError::NoSpans(_)), "{e}");
    e.to_string()
}

#[test]
fn filters_are_pushed_down_and_partitions_pruned() {
    let (dir, a, b) = store();
    let (na, nb) = (a.num_rows(), b.num_rows());
    assert_eq!((na, nb), (15, 13));
    assert_eq!(count(dir.path(), ScanFilter::default()), na + nb);
    // All spans start at 2026-11-30T00:53:20Z: the previous day's partition is pruned although
    // its rows would pass the start_time bound.
    let since = ScanFilter::parse(
        Some("2026-11-30T00:00:00Z"),
        None,
        None,
        None,
        chrono::Utc::now(),
    )
    .unwrap();
    assert_eq!(count(dir.path(), since.clone()), na);
    let scan = rt()
        .block_on(analyze::load::scan_store(
            dir.path(),
            &since,
            &Projection::base(),
        ))
        .unwrap();
    assert_eq!(
        (scan.scanned.files, scan.scanned.spans),
        (1, na as u64),
        "only the file in the selected partition counts as scanned"
    );
    let until = ScanFilter::parse(
        None,
        Some("2026-11-30T00:53:00Z"),
        None,
        None,
        chrono::Utc::now(),
    )
    .unwrap();
    // A filter that excludes everything is an error naming it, not an empty result.
    assert_eq!(
        no_spans(dir.path(), until),
        format!(
            "no span matches --until 2026-11-30T00:53:00+00:00; the store holds {} span(s) without this filter",
            na + nb
        )
    );
    let in_memory = load_batches(&[a.clone(), b.clone()]).unwrap();
    let servers = in_memory
        .iter()
        .filter(|s| s.service_name.as_deref() == Some("acme-mcp-server"))
        .count();
    assert_eq!(servers, 6);
    let service = ScanFilter {
        service: Some("acme-mcp-server".into()),
        ..ScanFilter::default()
    };
    assert_eq!(count(dir.path(), service), servers);
    let trace = TraceId::parse_hex("00040000000000000000000000000002").unwrap();
    let in_trace = in_memory.iter().filter(|s| s.trace_id == trace).count();
    assert_eq!(in_trace, 3);
    let only = ScanFilter {
        trace: Some(trace),
        ..ScanFilter::default()
    };
    assert_eq!(count(dir.path(), only), in_trace);
}

#[test]
fn store_and_in_memory_paths_report_the_same() {
    let (dir, a, b) = store();
    let policy = Policy::load(&common::fixtures_dir().join("policy.toml")).unwrap();
    let (_, from_store, scanned) = rt()
        .block_on(check_store(
            dir.path(),
            &ScanFilter::default(),
            &policy,
            RULES,
        ))
        .unwrap();
    assert_eq!(
        (scanned.files, scanned.spans),
        (2, (a.num_rows() + b.num_rows()) as u64)
    );
    assert_eq!(scanned.wal_spans, 0);
    assert!(scanned.unreadable_files.is_empty());
    let (_, in_memory) = check_spans(load_batches(&[a, b]).unwrap(), &policy, RULES);
    assert_eq!(from_store.findings, in_memory.findings);
    assert_eq!(from_store.coverage, in_memory.coverage);
    let codes: Vec<&str> = from_store.findings.iter().map(|f| f.rule).collect();
    assert!(
        codes.contains(&"TL004") && codes.contains(&"TL010"),
        "{codes:?}"
    );
}

/// Changed deliberately with the scan diagnostics: an empty store used to load zero rows (and
/// `check` printed "no findings"); now a scan that reads nothing is an error with its cause.
#[test]
fn an_empty_store_and_a_missing_one_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        no_spans(dir.path(), ScanFilter::default()).starts_with(&format!(
            "no spans/ directory in {}: this is not a tripline store",
            dir.path().display()
        ))
    );
    std::fs::create_dir(dir.path().join("spans")).unwrap();
    assert!(no_spans(dir.path(), ScanFilter::default())
        .starts_with(&format!("the store in {} is empty", dir.path().display())));
    let missing = dir.path().join("nope");
    let err = rt()
        .block_on(load_store(
            &missing,
            &ScanFilter::default(),
            &Projection::base(),
        ))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "data dir {} does not exist; pass --data-dir (or TRIPLINE_DATA_DIR) pointing at a store written by `tripline collect` or `tripline ingest`",
            missing.display()
        )
    );
}
