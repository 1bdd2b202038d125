//! The join of OTLP log records (GenAI events) to their spans: a store written as the collector
//! writes it (span rows in `spans/`, log rows in `logs/`, each with its writer properties), read
//! through the normal scan. A span whose content only came as events gets the content columns and
//! the derived facts; a span's own attribute wins over an event's; a record of another span, or
//! without content, changes nothing; a store without `logs/` scans as before.

use std::fs::File;
use std::path::Path;

use analyze::load::{load_store, Projection, ScanFilter};
use analyze::model::span::SpanRow;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use schemas::convert::IngestContext;
use schemas::schema::col;

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const RESULT_FROM_EVENT: &str =
    r#"{"content":[{"type":"text","text":"{\"status\":\"shipped\"}"}],"isError":false}"#;
const RESULT_ON_SPAN: &str =
    r#"{"content":[{"type":"text","text":"plain"}],"structuredContent":{"ok":true}}"#;

fn ctx() -> IngestContext {
    IngestContext {
        received_at_unix_nano: 1_796_032_800_000_000_000,
        source: "test".into(),
        redact_content: false,
    }
}

/// Three execute_tool spans: `…01` has no result, `…02` has its own, `…03` has none and no event.
fn spans() -> RecordBatch {
    let span = |id: &str, result: Option<&str>| {
        let mut attrs = vec![
            serde_json::json!({"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}),
            serde_json::json!({"key": "gen_ai.tool.name", "value": {"stringValue": "lookup_order"}}),
        ];
        if let Some(r) = result {
            attrs.push(
                serde_json::json!({"key": "gen_ai.tool.call.result", "value": {"stringValue": r}}),
            );
        }
        serde_json::json!({
            "traceId": TRACE, "spanId": id, "name": "execute_tool lookup_order", "kind": 1,
            "startTimeUnixNano": "1796032800000000000", "endTimeUnixNano": "1796032801000000000",
            "attributes": attrs,
        })
    };
    let body = serde_json::json!({"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "join-svc"}}]},
    "scopeSpans": [{"spans": [
        span("00000000000000a1", None),
        span("00000000000000a2", Some(RESULT_ON_SPAN)),
        span("00000000000000a3", None),
    ]}]}]});
    let req = schemas::decode_json(&serde_json::to_vec(&body).unwrap()).unwrap();
    let converted = schemas::convert_request(&req, &ctx());
    assert_eq!(converted.accepted, 3);
    converted.batch
}

/// Events: a result for `…a1`, another result for `…a2` (the span's own wins), and a
/// content-free event for `…a3`.
fn logs() -> RecordBatch {
    let record = |span: &str, attrs: serde_json::Value| {
        serde_json::json!({"timeUnixNano": "1796032800500000000", "traceId": TRACE, "spanId": span,
            "eventName": "gen_ai.tool.call.details", "attributes": attrs})
    };
    let result = |r: &str| serde_json::json!([{"key": "gen_ai.tool.call.result", "value": {"stringValue": r}}]);
    let body = serde_json::json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        record("00000000000000a1", result(RESULT_FROM_EVENT)),
        record("00000000000000a2", result(RESULT_FROM_EVENT)),
        record("00000000000000a3", serde_json::json!([{"key": "note", "value": {"stringValue": "x"}}])),
    ]}]}]});
    let req = schemas::decode::decode_logs_json(&serde_json::to_vec(&body).unwrap()).unwrap();
    let converted = schemas::logs::convert_logs_request(&req, &ctx());
    assert_eq!(converted.accepted, 3);
    converted.batch
}

fn write(
    dir: &Path,
    table: &str,
    batch: &RecordBatch,
    props: parquet::file::properties::WriterProperties,
) {
    let part = dir.join(table).join("date=2026-11-30/hour=10");
    std::fs::create_dir_all(&part).unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(part.join("part-a.parquet")).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn load(dir: &Path) -> Vec<SpanRow> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let projection = Projection::base().with(&[col::GEN_AI_TOOL_CALL_RESULT]);
    let mut rows = rt
        .block_on(load_store(dir, &ScanFilter::default(), &projection))
        .unwrap();
    rows.sort_by_key(|r| r.span_id);
    rows
}

fn result_of(r: &SpanRow) -> Option<&str> {
    r.content
        .as_ref()
        .and_then(|c| c.tool_call_result.as_deref())
}

#[test]
fn event_content_fills_what_the_span_lacks_and_the_span_wins() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spans", &spans(), schemas::writer_properties());
    let before = load(dir.path());
    assert_eq!(before.len(), 3);
    assert_eq!(result_of(&before[0]), None);
    assert_eq!(
        before[0].result_has_structured_content, None,
        "not observable without events"
    );

    write(
        dir.path(),
        "logs",
        &logs(),
        schemas::logs::log_writer_properties(),
    );
    let after = load(dir.path());
    assert_eq!(after.len(), 3);
    // a1: the result only an event carried, with the facts derived from it
    assert_eq!(result_of(&after[0]), Some(RESULT_FROM_EVENT));
    assert_eq!(after[0].result_has_structured_content, Some(false));
    assert_eq!(after[0].result_is_error, Some(false));
    assert_eq!(after[0].result_text_is_json_object, Some(true));
    assert_eq!(after[0].name, before[0].name);
    assert_eq!(after[0].start_ns, before[0].start_ns);
    // a2: its own result wins over the event's
    assert_eq!(result_of(&after[1]), Some(RESULT_ON_SPAN));
    assert_eq!(after[1].result_has_structured_content, Some(true));
    assert_eq!(result_of(&after[1]), result_of(&before[1]));
    // a3: an event without content changes nothing
    assert_eq!(result_of(&after[2]), None);
    assert_eq!(after[2].result_has_structured_content, None);
}

#[test]
fn a_check_counts_the_joined_records_and_examines_the_call() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spans", &spans(), schemas::writer_properties());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let policy = analyze::policy::Policy::default();
    let run = |dir: &Path| {
        rt.block_on(analyze::check::check_store(
            dir,
            &ScanFilter::default(),
            &policy,
            analyze::rules::RULES,
        ))
        .unwrap()
    };
    let (_, without, scanned) = run(dir.path());
    assert_eq!(scanned.log_records, 0);
    write(
        dir.path(),
        "logs",
        &logs(),
        schemas::logs::log_writer_properties(),
    );
    let (_, with, scanned) = run(dir.path());
    assert_eq!(
        (scanned.log_records, scanned.spans_with_event_content),
        (3, 1)
    );
    let tl001 = |r: &analyze::rules::Report| {
        r.coverage
            .iter()
            .find(|c| c.rule == "TL001")
            .map(|c| (c.examined, c.not_observable))
            .unwrap()
    };
    let (examined_before, blind_before) = tl001(&without);
    let (examined_after, blind_after) = tl001(&with);
    assert_eq!(examined_after, examined_before);
    assert_eq!(
        blind_after + 1,
        blind_before,
        "the call whose result came as an event is observable"
    );
}
