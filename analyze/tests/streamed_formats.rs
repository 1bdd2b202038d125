//! `check --format sarif`, `--format markdown` and the table are written as the findings are read
//! (from memory and spilled runs; the table tallies one row per rule), like `--format json`: the
//! bytes must be those of the renderers that take the whole report (`render_check`), over the samples (with and without a policy file, so
//! both SARIF artifacts), every rule fixture, and a check with no finding, with the findings
//! spilled to disk two at a time.

mod common;

use std::path::Path;

use analyze::check::{check_store_bounded, check_store_streamed};
use analyze::load::ScanFilter;
use analyze::policy::Policy;
use analyze::render::{render_check, write_check_streamed, Format, SarifArtifact, Style};
use analyze::rules::spill::SpillOptions;
use analyze::rules::RULES;
use analyze::window::WindowOptions;
use common::stores::{ingest, rt};

const FORMATS: [Format; 4] = [Format::Sarif, Format::Markdown, Format::Json, Format::Table];

fn options() -> WindowOptions {
    WindowOptions {
        window_spans: 5,
        memory_limit: None,
        spill_dir: None,
    }
}

/// `format` from the whole report, as the CLI printed it before.
fn collected(dir: &Path, policy: &Policy, format: Format, artifact: SarifArtifact) -> String {
    let (report, scanned, _) = rt()
        .block_on(check_store_bounded(
            dir,
            &ScanFilter::default(),
            policy,
            RULES,
            &options(),
        ))
        .unwrap();
    render_check(
        &report,
        Some(&scanned),
        format,
        &Style::for_stdout(false, false),
        false,
        artifact,
    )
}

/// `format` written as the findings are read, two held at a time; and the spilled runs.
fn streamed(
    dir: &Path,
    policy: &Policy,
    format: Format,
    artifact: SarifArtifact,
) -> (String, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let spill = SpillOptions {
        max_held: 2,
        dir: Some(tmp.path().to_path_buf()),
    };
    let (report, scanned, _) = rt()
        .block_on(check_store_streamed(
            dir,
            &ScanFilter::default(),
            policy,
            RULES,
            &options(),
            spill,
        ))
        .unwrap();
    let runs = report.findings.spilled_runs();
    let mut findings = report.findings;
    let mut out = Vec::new();
    write_check_streamed(
        &mut out,
        &mut findings,
        &report.coverage,
        Some(&scanned),
        format,
        &Style::for_stdout(false, false),
        false,
        artifact,
    )
    .unwrap();
    (String::from_utf8(out).unwrap(), runs)
}

fn assert_same(dir: &Path, policy: &Policy, artifact: SarifArtifact) -> usize {
    let mut spilled = 0;
    for format in FORMATS {
        let want = collected(dir, policy, format, artifact);
        let (got, runs) = streamed(dir, policy, format, artifact);
        if got != want {
            let diff: Vec<String> = want
                .lines()
                .zip(got.lines())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .take(8)
                .map(|(i, (a, b))| format!("line {}: collected {a} | streamed {b}", i + 1))
                .collect();
            panic!(
                "{format:?} streamed ({runs} spilled runs) differs from the collected report ({} vs {} lines):\n{}",
                want.lines().count(),
                got.lines().count(),
                diff.join("\n")
            );
        }
        spilled = spilled.max(runs);
    }
    spilled
}

#[test]
fn samples_streamed_formats_match_the_collected_report() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let runs = assert_same(
        store.path(),
        &policy,
        SarifArtifact::Policy("samples/policy.toml"),
    );
    assert!(runs > 1, "findings spilled in runs: {runs}");
    assert_same(
        store.path(),
        &Policy::default(),
        SarifArtifact::DataDir("store dir"),
    );
    let (sarif, _) = streamed(
        store.path(),
        &policy,
        Format::Sarif,
        SarifArtifact::DataDir("d"),
    );
    let doc: serde_json::Value = serde_json::from_str(&sarif).expect("valid JSON");
    assert!(doc["runs"][0]["results"].as_array().unwrap().len() > 10);
}

#[test]
fn rule_fixtures_streamed_formats_match_the_collected_report() {
    let dir = common::fixtures_dir();
    let codes = common::rule_fixture_codes();
    assert!(codes.len() > 10, "{codes:?}");
    for code in &codes {
        let store = ingest(&[dir.join(format!("{code}.json"))]);
        let policy = Policy::load(&common::fixture_policy_path(code)).unwrap();
        assert_same(store.path(), &policy, SarifArtifact::DataDir("fixture"));
    }
}

/// No finding: an empty results array and "No findings." as before.
#[test]
fn a_check_without_findings_streams_the_same_empty_documents() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let store = ingest(&[samples.join("traces/atlas-healthy.json")]);
    let policy = Policy::load(&samples.join("policy.toml")).unwrap();
    let want = collected(
        store.path(),
        &policy,
        Format::Markdown,
        SarifArtifact::DataDir("d"),
    );
    assert!(want.contains("No findings."), "{want}");
    assert_same(store.path(), &policy, SarifArtifact::DataDir("d"));
}
