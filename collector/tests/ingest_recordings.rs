//! `tripline ingest` over the real recordings (`testkit::recordings`; skipped when they are
//! absent): every span ingests, none is rejected, and each recording stores exactly
//! the span count its MANIFEST states. Also: bad files are reported and skipped.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use collector::{ingest_paths, IngestOptions, Pipeline, PipelineConfig, Stats};
use common::*;

#[test]
fn every_recording_ingests_with_its_manifest_span_count() {
    let Some(dir) = testkit::recordings::dir() else {
        eprintln!("skipped: the recordings are not present (set TRIPLINE_RECORDINGS)");
        return;
    };
    let expected = testkit::recordings::manifest_span_counts(&dir);
    assert!(
        expected.len() >= 40,
        "manifest table parsed: {} recordings",
        expected.len()
    );
    let store = tempfile::tempdir().unwrap();
    let pipeline = Pipeline::start(
        PipelineConfig::new(store.path()),
        Arc::new(Stats::default()),
    )
    .unwrap();
    let summary = ingest_paths(
        &pipeline,
        std::slice::from_ref(&dir),
        &IngestOptions::default(),
    );
    pipeline.shutdown().unwrap();

    assert_eq!(summary.failed, vec![], "no file failed");
    assert_eq!(summary.spans_rejected, 0, "{:?}", summary.rejection_reasons);
    let total: usize = expected.values().sum();
    assert_eq!(summary.spans_accepted, total);
    let trace_files = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("-traces."))
        .count();
    assert_eq!(summary.files_ingested, trace_files);
    assert!(summary
        .skipped
        .iter()
        .all(|(p, _)| !p.to_string_lossy().contains("-traces.")));

    // Per recording, from the rows' provenance (`file:<path>`).
    let rows = store_rows(store.path(), &[]);
    let mut per_recording: BTreeMap<String, usize> = BTreeMap::new();
    let prefix = format!("file:{}/", dir.display());
    for source in strings(&rows, "ingest_source") {
        let source = source.expect("ingest_source set");
        let rel = source.strip_prefix(&prefix).expect("source names the file");
        let recording = rel.rsplit_once('/').map(|(d, _)| d).unwrap_or(rel);
        *per_recording.entry(recording.to_string()).or_insert(0) += 1;
    }
    assert_eq!(per_recording, expected);
}

#[test]
fn bad_files_are_reported_and_skipped_without_aborting() {
    let input = tempfile::tempdir().unwrap();
    let good = request("ingest-svc", tool_call_spans(1, T0));
    std::fs::write(
        input.path().join("a-traces.json"),
        serde_json::to_vec(&good).unwrap(),
    )
    .unwrap();
    std::fs::write(
        input.path().join("b-traces.json"),
        b"{\"resourceSpans\": 5}",
    )
    .unwrap();
    std::fs::write(input.path().join("notes.json"), b"{\"hello\": 1}").unwrap();
    let lines = [
        serde_json::to_string(&request("l1", tool_call_spans(2, T0))).unwrap(),
        serde_json::to_string(&request("l2", tool_call_spans(3, T0))).unwrap(),
    ]
    .join("\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, lines.as_bytes()).unwrap();
    std::fs::write(input.path().join("c.jsonl.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(
        input.path().join("d.pb"),
        prost::Message::encode_to_vec(&good),
    )
    .unwrap();
    std::fs::write(input.path().join("README.txt"), b"not traces").unwrap();

    let store = tempfile::tempdir().unwrap();
    let pipeline = Pipeline::start(
        PipelineConfig::new(store.path()),
        Arc::new(Stats::default()),
    )
    .unwrap();
    let summary = ingest_paths(
        &pipeline,
        &[input.path().to_path_buf()],
        &IngestOptions::default(),
    );
    pipeline.shutdown().unwrap();

    assert_eq!(summary.files_ingested, 3);
    assert_eq!(summary.requests, 4);
    assert_eq!(summary.spans_accepted, 8);
    assert_eq!(summary.failed.len(), 1);
    assert_eq!(summary.failed[0].0, input.path().join("b-traces.json"));
    let skipped: Vec<String> = summary
        .skipped
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        skipped,
        vec!["README.txt".to_string(), "notes.json".to_string()]
    );
    assert_eq!(stored_span_ids(store.path()).len(), 8);
    let rendered = summary.render();
    assert!(
        rendered.starts_with(
            "ingested 3 files (4 requests): 8 spans accepted, 0 rejected, 1 files failed"
        ),
        "{rendered}"
    );
}
