//! `tripline diff` (TL011 catalog-drift): two stores written from the seed 002 fixtures
//! (`tests/fixtures/diff/{baseline,candidate}.json`, made by `make_fixtures.py`), diffed through
//! the store loader exactly as the CLI does.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};

use analyze::check::{diff_stores, DiffError};
use analyze::model::{SpanId, SpanRow, ToolDef, TraceId};
use analyze::render::{render_diff, Format, Style};
use analyze::rules::tl011_catalog_drift::{
    self as diff, diff_catalogs, DiffReport, DriftKind, RunCatalog,
};
use analyze::rules::Severity;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/diff/{name}.json"))
}

fn write_parquet(dir: &Path, batch: &RecordBatch) {
    let part = dir.join("spans").join("date=2026-11-02/hour=8");
    std::fs::create_dir_all(&part).unwrap();
    let file = File::create(part.join("part-0.parquet")).unwrap();
    let mut w =
        ArrowWriter::try_new(file, batch.schema(), Some(schemas::writer_properties())).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A store holding one fixture's spans.
fn store(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_parquet(dir.path(), &common::batch_from_json(&fixture(name)));
    dir
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn run(baseline: &Path, candidate: &Path) -> Result<DiffReport, DiffError> {
    rt().block_on(diff_stores(baseline, candidate))
}

/// (kind, tool, message) of every finding.
fn summary(d: &DiffReport) -> Vec<(&'static str, String, String)> {
    d.report
        .findings
        .iter()
        .zip(d.kinds.as_slice())
        .map(|(f, k)| {
            (
                k.as_str(),
                f.tool.clone().unwrap_or_default(),
                f.message.clone(),
            )
        })
        .collect()
}

const OLD_VALIDATE: &str = "\"Run the deterministic model validators and return the findings.\"";
const NEW_VALIDATE: &str =
    "\"Run every model validator and return the findings; call after each edit.\"";

#[test]
fn seed_002_candidate_adds_a_tool_and_rewords_a_description() {
    let (b, c) = (store("baseline"), store("candidate"));
    let d = run(b.path(), c.path()).unwrap();
    assert_eq!(
        summary(&d),
        vec![
            (
                "added",
                "add_cs_interface".to_string(),
                "tool add_cs_interface added; now seen by swcraft-modeller".to_string()
            ),
            (
                "changed",
                "validate_model".to_string(),
                format!(
                    "tool validate_model changed: description {OLD_VALIDATE} -> {NEW_VALIDATE}; \
                     seen by swcraft-modeller, swcraft-reviewer"
                )
            ),
        ]
    );
    // Evidence: the last candidate model call of the modeller that was offered the tool.
    for f in &d.report.findings {
        assert_eq!(
            (f.rule, f.name, f.severity),
            ("TL011", "catalog-drift", Severity::Warning)
        );
        assert_eq!(f.trace_id.to_string(), "ffffffffffffffff1111111111111111");
        assert_eq!(f.span_id.to_string(), "a1a1a1a1a1a1a103");
        assert_eq!(f.conversation_id.as_deref(), Some("conv-modeller"));
    }
    let cov = &d.report.coverage;
    assert_eq!(cov.len(), 1);
    assert_eq!(
        (cov[0].rule, cov[0].examined, cov[0].not_observable),
        ("TL011", 8, 2)
    );
    assert_eq!(
        cov[0].reasons,
        vec![
            "gen_ai.tool.definitions not captured on 1 of 4 baseline and 1 of 4 candidate model calls",
            "baseline: 3 tools in 2 decision scopes; candidate: 4 tools in 2 decision scopes",
        ]
    );
    assert_eq!(diff::exit_code(&d, Severity::Warning), 1);
    assert_eq!(diff::exit_code(&d, Severity::Error), 0);
}

/// The repo's SWCraft samples (the `tripline demo` inputs), through the same converter the
/// collector's `ingest` uses.
#[test]
fn swcraft_samples_report_the_added_tool_only() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/traces");
    let side = |name: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = samples.join(format!("swcraft-{name}.json"));
        write_parquet(dir.path(), &common::batch_from_json(&path));
        dir
    };
    let (b, c) = (side("baseline"), side("candidate"));
    let d = run(b.path(), c.path()).unwrap();
    assert_eq!(
        summary(&d),
        vec![(
            "added",
            "add_cs_interface".to_string(),
            "tool add_cs_interface added; now seen by swcraft-modeller".to_string()
        )]
    );
    let f = &d.report.findings[0];
    assert_eq!(f.trace_id.to_string(), "a41281be49d43e45ff30a9acf4262381");
    assert_eq!(f.span_id.to_string(), "6cb257888daef1fd");
    assert_eq!(f.conversation_id.as_deref(), Some("conv-0f526b39290046b3"));
    assert_eq!(
        (
            d.report.coverage[0].examined,
            d.report.coverage[0].not_observable
        ),
        (8, 0)
    );
}

#[test]
fn reversed_direction_reports_the_tool_as_removed() {
    let (b, c) = (store("baseline"), store("candidate"));
    let d = run(c.path(), b.path()).unwrap();
    assert_eq!(
        summary(&d),
        vec![
            (
                "removed",
                "add_cs_interface".to_string(),
                "tool add_cs_interface removed; was seen by swcraft-modeller".to_string()
            ),
            (
                "changed",
                "validate_model".to_string(),
                format!(
                    "tool validate_model changed: description {NEW_VALIDATE} -> {OLD_VALIDATE}; \
                     seen by swcraft-modeller, swcraft-reviewer"
                )
            ),
        ]
    );
    // A removed tool's evidence is the baseline model call that last offered it.
    assert_eq!(
        d.report.findings[0].trace_id.to_string(),
        "ffffffffffffffff1111111111111111"
    );
}

#[test]
fn identical_runs_have_no_drift_and_exit_0() {
    let (b, c) = (store("baseline"), store("baseline"));
    let d = run(b.path(), c.path()).unwrap();
    assert!(d.report.findings.is_empty());
    assert_eq!(diff::exit_code(&d, Severity::Info), 0);
    let table = render_diff(&d, Format::Table, &Style::default());
    assert!(table.starts_with("no catalog drift\n"), "{table}");
}

#[test]
fn json_has_the_check_contract_shape() {
    let (b, c) = (store("baseline"), store("candidate"));
    let d = run(b.path(), c.path()).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&render_diff(&d, Format::Json, &Style::default())).unwrap();
    let first = &v["findings"][0];
    let mut keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "conversation_id",
            "message",
            "name",
            "related",
            "rule",
            "severity",
            "span_id",
            "tool",
            "trace_id"
        ]
    );
    assert_eq!(first["rule"], "TL011");
    assert_eq!(first["name"], "catalog-drift");
    assert_eq!(first["severity"], "warning");
    assert_eq!(first["tool"], "add_cs_interface");
    assert_eq!(v["findings"].as_array().unwrap().len(), 2);
    assert_eq!(v["coverage"][0]["rule"], "TL011");
    // What each side's scan read (added with the scan diagnostics).
    for side in ["baseline", "candidate"] {
        assert_eq!(v["scanned"][side]["files"], 1, "{v}");
        assert!(v["scanned"][side]["spans"].as_u64() > Some(0), "{v}");
    }
}

#[test]
fn table_lists_each_drifted_tool() {
    let (b, c) = (store("baseline"), store("candidate"));
    let d = run(b.path(), c.path()).unwrap();
    let t = render_diff(&d, Format::Table, &Style::default());
    assert!(t.starts_with("2 catalog-drift finding(s)\n"), "{t}");
    assert!(t.contains("add_cs_interface"), "{t}");
    assert!(t.contains("validate_model"), "{t}");
    // The decision scopes cell lists both agents (wrapped to the table's width).
    let catalogs = t.split("catalogs\n").nth(1).expect("catalogs table");
    assert!(
        catalogs.contains("swcraft-modeller,") && catalogs.contains("swcraft-reviewer"),
        "{t}"
    );
}

#[test]
fn missing_dir_is_an_error_naming_it() {
    let b = store("baseline");
    let missing = Path::new("/nonexistent/tripline-candidate");
    let e = run(b.path(), missing).unwrap_err();
    assert!(matches!(
        e,
        DiffError::MissingDir {
            side: "candidate",
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "candidate data dir /nonexistent/tripline-candidate does not exist; pass a directory \
         written by `tripline collect` or `tripline ingest`"
    );
    let e = run(missing, b.path()).unwrap_err();
    assert!(e.to_string().starts_with("baseline data dir /nonexistent"));
}

#[test]
fn a_store_without_tool_definitions_is_an_error_not_no_drift() {
    let b = store("baseline");
    // Spans, but no model call captured tool definitions (the TL004 rule fixture).
    let blind = tempfile::tempdir().unwrap();
    write_parquet(
        blind.path(),
        &common::batch_from_json(&common::fixtures_dir().join("TL004.json")),
    );
    let e = run(b.path(), blind.path()).unwrap_err();
    assert!(
        matches!(
            e,
            DiffError::NoCatalog {
                side: "candidate",
                model_calls: 0,
                spans: 15,
                ..
            }
        ),
        "{e}"
    );
    assert!(e
        .to_string()
        .contains("has no model call with gen_ai.tool.definitions (0 model calls, 15 spans)"));
}

/// Changed deliberately with the scan diagnostics: a directory that is not a store used to be
/// reported as "no tool definitions (0 spans)"; now the scan itself fails and says why.
#[test]
fn a_directory_that_is_not_a_store_is_an_error_saying_so() {
    let b = store("baseline");
    let empty = tempfile::tempdir().unwrap();
    let e = run(b.path(), empty.path()).unwrap_err();
    assert!(
        matches!(
            e,
            DiffError::Load {
                side: "candidate",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("no spans/ directory in")
            && e.to_string().contains("not a tripline store"),
        "{e}"
    );
}

// In-memory catalogs: every kind of definition change, scope changes, fallbacks.

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: Some(format!("{name} does one thing.").as_str().into()),
        has_output_schema: Some(true),
        read_only_hint: Some(true),
        input_schema_digest: Some("in1".into()),
        output_schema_digest: Some("out1".into()),
        ..ToolDef::default()
    }
}

/// One model call of `agent` offered `defs`.
fn chat(span: u8, agent: &str, defs: Vec<ToolDef>) -> SpanRow {
    SpanRow {
        trace_id: TraceId([span; 16]),
        span_id: SpanId([span; 8]),
        start_ns: i64::from(span),
        operation_name: Some("chat".into()),
        agent_name: Some(agent.into()),
        tool_definitions: Some(defs.into()),
        ..SpanRow::default()
    }
}

fn messages(d: &DiffReport) -> Vec<&str> {
    d.report
        .findings
        .iter()
        .map(|f| f.message.as_str())
        .collect()
}

#[test]
fn schema_annotation_and_scope_changes_are_named() {
    let mut changed = def("export");
    changed.read_only_hint = Some(false);
    changed.destructive_hint = Some(true);
    changed.input_schema_digest = Some("in2".into());
    changed.has_output_schema = Some(false);
    changed.output_schema_digest = None;
    let baseline = RunCatalog::collect(vec![
        chat(1, "a", vec![def("export"), def("gone")]),
        chat(2, "b", vec![def("search")]),
    ]);
    let candidate = RunCatalog::collect(vec![
        chat(3, "a", vec![changed]),
        chat(4, "b", vec![def("search"), def("export")]),
        chat(5, "c", vec![def("search")]),
    ]);
    let d = diff_catalogs(baseline, candidate);
    assert_eq!(
        messages(&d),
        [
            "tool export changed: input schema digest in1 -> in2; output schema digest out1 -> (none); \
             annotation readOnlyHint true -> false; annotation destructiveHint (unset) -> true; \
             seen by a, b; now also seen by b",
            "tool gone removed; was seen by a",
            "tool search changed scope; now also seen by c",
        ]
    );
    assert_eq!(
        d.kinds,
        [DriftKind::Changed, DriftKind::Removed, DriftKind::Changed]
    );
    // Evidence of a definition change is the candidate call in a scope both runs share.
    assert_eq!(d.report.findings[0].span_id, SpanId([3; 8]));
    assert_eq!(d.report.findings[1].span_id, SpanId([1; 8]));
    assert_eq!(d.report.findings[2].span_id, SpanId([5; 8]));
}

#[test]
fn later_definitions_win_and_scope_falls_back_to_service() {
    let mut first = chat(1, "a", vec![def("t")]);
    first.agent_name = None;
    first.service_name = Some("host".into());
    let mut reworded = def("t");
    reworded.description = Some("x".repeat(100).as_str().into());
    let mut second = chat(2, "a", vec![reworded]);
    second.agent_name = None;
    second.service_name = Some("host".into());
    let baseline = RunCatalog::collect(vec![first.clone()]);
    let candidate = RunCatalog::collect(vec![first, second]);
    let d = diff_catalogs(baseline, candidate);
    let long = format!("{}…", "x".repeat(80));
    assert_eq!(
        messages(&d),
        [format!(
            "tool t changed: description \"t does one thing.\" -> \"{long}\"; seen by service host"
        )
        .as_str()]
    );
}
