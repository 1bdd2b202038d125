//! `tripline-collector`, the collector alone, through the real binary: it receives OTLP over
//! HTTP and stores every acknowledged span (read back from the Parquet files), imports a
//! recorded export with `ingest`, and carries no analyzer command.

#![cfg(unix)]

mod common;

use std::process::Command;

use common::*;
use testkit::collector::RunningCollector;

const BIN: &str = env!("CARGO_BIN_EXE_tripline-collector");

#[test]
fn collect_acknowledges_and_stores_every_span() {
    let store = tempfile::tempdir().unwrap();
    let collector = RunningCollector::start(BIN, store.path(), &[]);
    let http = collector.http;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for i in 0..3 {
            export_ok(http, &request("crm-agent", tool_call_spans(4, i * 4))).await;
        }
    });
    // SIGTERM: a clean stop flushes the WAL into Parquet files.
    let status = collector.stop();
    assert!(status.success(), "clean stop: {status}");

    let mut ids = stored_span_ids(store.path());
    ids.sort();
    let mut sent: Vec<String> = (0..3)
        .flat_map(|i| tool_call_spans(4, i * 4))
        .map(|s| hex(&s.span_id))
        .collect();
    sent.sort();
    assert_eq!(
        ids, sent,
        "every acknowledged span is in the Parquet files, once"
    );
    let services = stored_services(store.path());
    assert_eq!(services.len(), sent.len());
    assert!(services.iter().all(|s| s == "crm-agent"), "{services:?}");
}

#[test]
fn ingest_imports_a_recorded_export() {
    let input = tempfile::tempdir().unwrap();
    let spans = tool_call_spans(5, 0);
    let body = serde_json::to_vec(&request("field-service", spans.clone())).unwrap();
    std::fs::write(input.path().join("export.json"), body).unwrap();
    let store = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .env("TRIPLINE_LOG", "warn")
        .arg("ingest")
        .arg("--data-dir")
        .arg(store.path())
        .arg(input.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored_span_ids(store.path()).len(), spans.len());
}

#[test]
fn the_analyzer_commands_are_not_in_it() {
    let out = Command::new(BIN).arg("check").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown subcommand is a usage error"
    );
    let help = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("collect") && help.contains("ingest"),
        "{help}"
    );
    assert!(!help.contains("check"), "{help}");
}
