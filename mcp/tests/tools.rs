//! Every tool through the library API on a real store (the sample traces written by the real
//! ingest pipeline): each result validates against its tool's declared output schema, bad input
//! is a `ToolError` of the right kind, and `query`'s row, time and size limits hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use collector::{ingest_paths, IngestOptions, Pipeline, PipelineConfig, Stats};
use mcp::error::ToolError;
use mcp::tools::{self, Settings, ToolOutput, TOOLS};
use serde_json::{json, Map, Value};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A store holding `samples/traces`, written by the collector's ingest pipeline.
fn sample_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pipeline =
        Pipeline::start(PipelineConfig::new(dir.path()), Arc::new(Stats::default())).unwrap();
    let summary = ingest_paths(
        &pipeline,
        &[repo_root().join("samples/traces")],
        &IngestOptions::default(),
    );
    pipeline.shutdown().unwrap();
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!(summary.spans_accepted, 278);
    dir
}

fn settings(data_dir: &Path) -> Settings {
    Settings {
        data_dir: data_dir.to_path_buf(),
        policy: None,
        policy_roots: vec![repo_root().canonicalize().unwrap()],
        query_timeout: Duration::from_secs(10),
        query_memory_bytes: 256 * 1024 * 1024,
        response_bytes: 8 * 1024 * 1024,
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, not {other}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn call(settings: &Settings, name: &str, a: Value) -> Result<ToolOutput, ToolError> {
    tools::call(settings, name, args(a)).await
}

/// Calls `name` and checks its output against the tool's own output schema.
async fn call_valid(settings: &Settings, name: &str, a: Value) -> Value {
    let out = call(settings, name, a.clone())
        .await
        .unwrap_or_else(|e| panic!("{name}({a}) failed: {e}"));
    let schema = (tools::spec(name).unwrap().output)();
    mcp::validate::validate(&schema, &out.structured)
        .unwrap_or_else(|e| panic!("{name}({a}) does not match its outputSchema: {e}"));
    assert!(!out.text.trim().is_empty(), "{name} has no text block");
    out.structured
}

#[test]
fn every_tool_is_read_only_with_object_schemas() {
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names, ["check", "query", "trace", "report", "explain"]);
    for spec in TOOLS {
        let tool = serde_json::to_value(tools::definition(spec).unwrap()).unwrap();
        assert_eq!(
            tool["annotations"]["readOnlyHint"],
            json!(true),
            "{}",
            spec.name
        );
        assert_eq!(
            tool["annotations"]["openWorldHint"],
            json!(false),
            "{}",
            spec.name
        );
        assert_eq!(
            tool["outputSchema"]["type"],
            json!("object"),
            "{}",
            spec.name
        );
        assert_eq!(
            tool["inputSchema"]["type"],
            json!("object"),
            "{}",
            spec.name
        );
        assert_eq!(
            tool["inputSchema"]["additionalProperties"],
            json!(false),
            "{}",
            spec.name
        );
    }
}

#[test]
fn every_result_on_the_sample_store_matches_its_schema() {
    let store = sample_store();
    let s = settings(store.path());
    runtime().block_on(async {
        let check = call_valid(&s, "check", json!({})).await;
        assert_eq!(check["scanned"]["spans"], json!(278));
        let findings = check["findings"].as_array().unwrap();
        assert!(!findings.is_empty());
        let tl004 = findings
            .iter()
            .find(|f| f["rule"] == "TL004")
            .expect("the samples hold a broken propagation");

        let filtered = call_valid(
            &s,
            "check",
            json!({"rules": ["tl004"], "trace": tl004["trace_id"], "since": "3650d"}),
        )
        .await;
        assert_eq!(filtered["coverage"].as_array().unwrap().len(), 1);
        assert!(filtered["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] == "TL004" && f["trace_id"] == tl004["trace_id"]));

        let q = call_valid(
            &s,
            "query",
            json!({"sql": "SELECT service_name, count(*) AS n FROM spans GROUP BY 1 ORDER BY 2 DESC, 1", "limit": 3}),
        )
        .await;
        assert_eq!(q["row_count"], json!(3));
        assert_eq!(q["truncated"], json!(true));
        assert_eq!(q["columns"][1], json!({"name": "n", "type": "Int64"}));

        let tree = call_valid(&s, "trace", json!({"trace_id": tl004["trace_id"]})).await;
        assert_eq!(tree["shown_spans"], tree["span_count"]);
        assert!(!tree["stitched_traces"].as_array().unwrap().is_empty());
        assert!(tree["text"].as_str().unwrap().contains("broken edge"));

        for kind in mcp::schema::REPORT_KINDS {
            let r = call_valid(&s, "report", json!({"kind": kind})).await;
            assert_eq!(r["kind"], json!(kind));
            assert_eq!(r["truncated"], json!(false));
            assert_eq!(r["total_rows"], json!(r["rows"].as_array().unwrap().len()));
        }
        for code in mcp::engine::rule_codes() {
            let doc = call_valid(&s, "explain", json!({"code": code})).await;
            assert_eq!(doc["code"], json!(code));
        }
    });
}

/// `report` reads the store window by window, as `tripline report` does: its rows are those of
/// one model of the whole store, and `max_rows` keeps the first rows in report order, saying how
/// many it left out.
#[test]
fn report_is_windowed_and_capped_by_max_rows() {
    let store = sample_store();
    let s = settings(store.path());
    runtime().block_on(async {
        // The CLI's rows: one window of the whole store.
        let whole = analyze::window::WindowOptions {
            window_spans: u64::MAX,
            memory_limit: None,
            spill_dir: None,
        };
        let mut want = Vec::new();
        analyze::check::conversations_store_streamed(
            store.path(),
            &Default::default(),
            &whole,
            &mut want,
        )
        .await
        .unwrap();
        assert!(want.len() > 3, "{}", want.len());
        let want: Vec<Value> = want.iter().map(|r| serde_json::to_value(r).unwrap()).collect();

        let all = call_valid(&s, "report", json!({"kind": "conversations"})).await;
        assert_eq!(all["rows"].as_array().unwrap(), &want);
        assert_eq!(all["total_rows"], json!(want.len()));

        let out = call(&s, "report", json!({"kind": "conversations", "max_rows": 2}))
            .await
            .unwrap();
        let schema = (tools::spec("report").unwrap().output)();
        mcp::validate::validate(&schema, &out.structured).unwrap();
        let cut = out.structured;
        assert_eq!(cut["rows"].as_array().unwrap(), &want[..2]);
        assert_eq!(cut["truncated"], json!(true));
        assert_eq!(cut["total_rows"], json!(want.len()));
        assert_eq!(
            cut["notes"][0],
            json!(format!(
                "showing the first 2 of {} rows (max_rows); narrow with since/until/service/trace, or raise max_rows (at most 10000), to see the others",
                want.len()
            ))
        );
        assert!(
            out.text.contains(&format!("the first 2 of {} row(s)", want.len())),
            "{}",
            out.text
        );
        // The tools report: the CLI's rows, whatever the cap when it is not reached.
        let (built, _, _) = analyze::check::report_store_bounded(
            store.path(),
            &Default::default(),
            analyze::reports::ReportKind::Tools,
            &whole,
        )
        .await
        .unwrap();
        let cli: Value = serde_json::from_str(
            &analyze::render::render_built(
                &built,
                analyze::render::Format::Json,
                &analyze::render::Style::for_stdout(false, false),
                None,
            )
            .unwrap(),
        )
        .unwrap();
        let tools_doc = call_valid(&s, "report", json!({"kind": "tools"})).await;
        assert_eq!(tools_doc["rows"], cli["rows"]);
        let e = call(&s, "report", json!({"kind": "tools", "max_rows": 0})).await;
        assert_eq!(kind_of(e).0, "bad_argument");
    });
}

/// `check` runs as `tripline check` does (windows, findings spilled past a bound): its findings
/// are the CLI's, and `max_findings` keeps the first in report order, with the total.
#[test]
fn check_is_windowed_and_capped_by_max_findings() {
    let store = sample_store();
    let s = settings(store.path());
    runtime().block_on(async {
        let (report, _, _) = analyze::check::check_store_bounded(
            store.path(),
            &Default::default(),
            &analyze::policy::Policy::default(),
            analyze::rules::RULES,
            &Default::default(),
        )
        .await
        .unwrap();
        let want: Vec<Value> = report
            .findings
            .iter()
            .map(|f| serde_json::to_value(f).unwrap())
            .collect();
        assert!(want.len() > 3, "{}", want.len());
        let all = call_valid(&s, "check", json!({})).await;
        assert_eq!(all["findings"].as_array().unwrap(), &want);
        assert_eq!(all["truncated"], json!(false));
        assert_eq!(all["total_findings"], json!(want.len()));
        let out = call(&s, "check", json!({"max_findings": 2})).await.unwrap();
        let schema = (tools::spec("check").unwrap().output)();
        mcp::validate::validate(&schema, &out.structured).unwrap();
        let cut = out.structured;
        assert_eq!(cut["findings"].as_array().unwrap(), &want[..2]);
        assert_eq!(cut["truncated"], json!(true));
        assert_eq!(cut["total_findings"], json!(want.len()));
        assert_eq!(cut["coverage"], all["coverage"]);
        assert!(
            out.text
                .starts_with(&format!("{} finding(s), the first 2 here", want.len())),
            "{}",
            out.text
        );
        let e = call(&s, "check", json!({"max_findings": 0})).await;
        assert_eq!(kind_of(e).0, "bad_argument");
    });
}

fn kind_of(r: Result<ToolOutput, ToolError>) -> (&'static str, String) {
    match r {
        Ok(out) => panic!("expected an error, got {}", out.text),
        Err(e) => (e.kind(), e.to_string()),
    }
}

#[test]
fn bad_input_is_a_tool_error_naming_the_problem() {
    let store = sample_store();
    let s = settings(store.path());
    runtime().block_on(async {
        let cases = [
            (
                "query",
                json!({"sql": "SELEC 1"}),
                "query",
                "cannot parse the SQL",
            ),
            (
                "query",
                json!({"sql": "SELECT nope FROM spans"}),
                "query",
                "DESCRIBE spans",
            ),
            (
                "query",
                json!({"sql": "DELETE FROM spans"}),
                "not_read_only",
                "read-only",
            ),
            (
                "query",
                json!({"sql": "SELECT * INTO t FROM spans"}),
                "not_read_only",
                "read-only",
            ),
            (
                "query",
                json!({"sql": "SELECT 1", "limit": 0}),
                "bad_argument",
                "between 1 and 10000",
            ),
            (
                "query",
                json!({"limit": 5}),
                "bad_argument",
                "missing field `sql`",
            ),
            (
                "check",
                json!({"rules": ["TL999"]}),
                "not_found",
                "unknown rule \"TL999\"",
            ),
            (
                "check",
                json!({"max_model_turns": 0}),
                "bad_argument",
                "at least 1",
            ),
            (
                "check",
                json!({"until": "soon"}),
                "bad_argument",
                "invalid time",
            ),
            (
                "check",
                json!({"service": "nobody"}),
                "store",
                "no span matches",
            ),
            (
                "check",
                json!({"policy": "../../etc/passwd"}),
                "bad_argument",
                "policy roots",
            ),
            (
                "explain",
                json!({"code": "TL000"}),
                "not_found",
                "known rules",
            ),
            (
                "trace",
                json!({"trace_id": "ab"}),
                "bad_argument",
                "32 hex digits",
            ),
            (
                "trace",
                json!({"trace_id": "0123456789abcdef0123456789abcdef"}),
                "not_found",
                "not in the store (it holds 278 span(s))",
            ),
            (
                "report",
                json!({"kind": "costs"}),
                "bad_argument",
                "unknown report kind",
            ),
        ];
        for (tool, a, kind, phrase) in cases {
            let (k, message) = kind_of(call(&s, tool, a.clone()).await);
            assert_eq!(k, kind, "{tool}({a}): {message}");
            assert!(
                message.contains(phrase),
                "{tool}({a}): {message:?} lacks {phrase:?}"
            );
        }
    });
}

#[test]
fn a_missing_store_is_an_error_for_every_store_tool() {
    let s = settings(Path::new("/nonexistent/tripline-data"));
    runtime().block_on(async {
        for (tool, a) in [
            ("check", json!({})),
            ("query", json!({"sql": "SELECT 1"})),
            (
                "trace",
                json!({"trace_id": "0123456789abcdef0123456789abcdef"}),
            ),
            ("report", json!({"kind": "tools"})),
        ] {
            let (k, message) = kind_of(call(&s, tool, a).await);
            assert_eq!(k, "store", "{tool}: {message}");
            assert!(message.contains("does not exist"), "{tool}: {message}");
        }
    });
}

#[test]
fn a_runaway_query_is_stopped_at_its_time_limit() {
    let store = sample_store();
    let mut s = settings(store.path());
    s.query_timeout = Duration::from_secs(1);
    runtime().block_on(async {
        // 278^4 ≈ 6e9 rows to sum (a plain count(*) is answered from statistics): minutes of
        // work without the limit.
        let started = Instant::now();
        let r = call(
            &s,
            "query",
            json!({"sql": "SELECT sum(a.start_time_unix_nano % 7 + b.start_time_unix_nano % 3 + c.start_time_unix_nano % 5 + d.start_time_unix_nano % 11) FROM spans a, spans b, spans c, spans d"}),
        )
        .await;
        let (k, message) = kind_of(r);
        assert_eq!(k, "timeout", "{message}");
        assert!(message.contains("within 1 s"), "{message}");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "stopped after {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn the_response_size_cap_truncates_rows_and_says_why() {
    let store = sample_store();
    let mut s = settings(store.path());
    s.response_bytes = 4_000;
    runtime().block_on(async {
        let q = call_valid(
            &s,
            "query",
            json!({"sql": "SELECT * FROM spans", "limit": 10000}),
        )
        .await;
        assert_eq!(q["truncated"], json!(true));
        let n = q["row_count"].as_u64().unwrap();
        assert!(n < 278, "{n} rows");
        assert_eq!(q["rows"].as_array().unwrap().len() as u64, n);
        assert!(q["truncated_reason"]
            .as_str()
            .unwrap()
            .contains("response cap of 4000 bytes"));
    });
}
