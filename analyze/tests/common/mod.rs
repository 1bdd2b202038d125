//! Shared test helpers: OTLP bodies -> `schemas` decode + convert -> record batches, the same path
//! the collector takes before writing Parquet.

#![allow(dead_code)]

pub mod stores;

use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use schemas::{convert_request, decode_json, decode_protobuf, IngestContext};

pub fn ctx(source: &str) -> IngestContext {
    IngestContext {
        received_at_unix_nano: 1_796_000_000_000_000_000,
        source: source.to_string(),
        redact_content: false,
    }
}

/// Decodes and converts one OTLP/JSON body; panics with the file name on any rejection.
pub fn batch_from_json(path: &Path) -> RecordBatch {
    let body = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let req = decode_json(&body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let c = convert_request(&req, &ctx(&path.display().to_string()));
    assert_eq!(
        c.rejected,
        0,
        "{}: {:?}",
        path.display(),
        c.rejection_reasons
    );
    c.batch
}

/// Decodes and converts one protobuf body (`*.pb`, `*.grpc.pb`, gzip'd `*.pb.gz` not handled).
pub fn batch_from_protobuf(path: &Path) -> RecordBatch {
    let body = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let req = decode_protobuf(&body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let c = convert_request(&req, &ctx(&path.display().to_string()));
    assert_eq!(
        c.rejected,
        0,
        "{}: {:?}",
        path.display(),
        c.rejection_reasons
    );
    c.batch
}

/// Every export body of a recording directory (`*.pb`, `*.grpc.pb`, `*-traces.json`), in name
/// order.
pub fn recording_batches(dir: &Path) -> Vec<RecordBatch> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name.ends_with(".pb") {
            out.push(batch_from_protobuf(&f));
        } else if name.ends_with("-traces.json") {
            out.push(batch_from_json(&f));
        }
    }
    out
}

/// `analyze/tests/fixtures/rules`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules")
}

/// The codes of the rule fixtures (`TLnnn.json` in [`fixtures_dir`], not their variants), sorted.
pub fn rule_fixture_codes() -> Vec<String> {
    let mut codes: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let code = name.strip_suffix(".json")?;
            (code.starts_with("TL") && !code.contains('.')).then(|| code.to_string())
        })
        .collect();
    codes.sort();
    codes
}

/// The policy a rule fixture runs with: its own `TLnnn.policy.toml`, else the shared one.
pub fn fixture_policy_path(code: &str) -> PathBuf {
    let own = fixtures_dir().join(format!("{code}.policy.toml"));
    if own.exists() {
        own
    } else {
        fixtures_dir().join("policy.toml")
    }
}

/// `../shared/recordings` relative to the workspace (present on dev machines and in CI).
pub fn recordings_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/recordings")
}
