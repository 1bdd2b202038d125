//! The committed samples report exactly the rule codes `samples/expected.json` lists: each sample
//! is ingested by the real `tripline` binary into its own data dir and checked with the samples'
//! policy (`check --format json`, the stable contract).

use std::collections::BTreeSet;

use serde_json::Value;

mod common;

use common::{repo, tripline};

fn reported_codes(sample: &str, policy: &str) -> BTreeSet<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let ingest = tripline(dir.path(), &["ingest", sample]);
    assert!(
        ingest.status.success(),
        "ingest {sample} failed: {}",
        String::from_utf8_lossy(&ingest.stderr)
    );
    let check = tripline(
        dir.path(),
        &["check", "--policy", policy, "--format", "json"],
    );
    // 0: clean, 1: findings at or over the threshold; 2 would be an error.
    assert!(
        matches!(check.status.code(), Some(0 | 1)),
        "check {sample} failed ({:?}): {}",
        check.status.code(),
        String::from_utf8_lossy(&check.stderr)
    );
    let report: Value = serde_json::from_slice(&check.stdout).unwrap_or_else(|e| {
        panic!(
            "check --format json of {sample} is not JSON ({e}): {}",
            String::from_utf8_lossy(&check.stdout)
        )
    });
    report["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array for {sample}: {report}"))
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn every_sample_reports_exactly_its_expected_rule_codes() {
    let text = std::fs::read_to_string(repo().join("samples/expected.json"))
        .expect("read samples/expected.json");
    let expected: Value = serde_json::from_str(&text).expect("samples/expected.json is JSON");
    let policy = expected["policy"].as_str().expect("policy path");
    let samples = expected["samples"].as_object().expect("samples object");
    assert!(
        samples.len() >= 15,
        "expected at least 15 samples, got {}",
        samples.len()
    );
    let mut mismatches = Vec::new();
    for (file, codes) in samples {
        let want: BTreeSet<String> = codes
            .as_array()
            .expect("codes array")
            .iter()
            .map(|c| c.as_str().unwrap_or_default().to_string())
            .collect();
        let got = reported_codes(file, policy);
        if got != want {
            mismatches.push(format!("{file}: expected {want:?}, check reported {got:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "samples whose findings differ:\n{}",
        mismatches.join("\n")
    );
}
