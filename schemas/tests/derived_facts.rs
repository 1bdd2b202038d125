//! Facts derived at ingest, on the real recordings, and redaction keeping them.

mod common;

use common::cells::{boolean, map_str, row_named, rows_named, str, str_list};
use common::{convert_recording, decode_file, recordings_dir, request_files};
use schemas::{convert_request, IngestContext};

#[test]
fn host_result_of_a_dict_tool_has_no_structured_content_but_json_text() {
    // S2c: the server's `-> dict` tool returns its data as one JSON text block only.
    let b = convert_recording("mcp2-native/S2c-structured-broken-hostcontent");
    let row = rows_named(&b, "execute_tool find_contact_by_email")
        .into_iter()
        .next()
        .expect("host execute_tool span");
    assert_eq!(
        boolean(&b, "result_has_structured_content", row),
        Some(false)
    );
    assert_eq!(boolean(&b, "result_text_is_json_object", row), Some(true));
    assert_eq!(boolean(&b, "result_is_error", row), Some(false));
    assert_eq!(
        str_list(&b, "result_content_types", row),
        Some(vec!["text".to_string()])
    );
    assert_eq!(str(&b, "result_type", row).as_deref(), Some("complete"));
}

#[test]
fn host_result_of_a_structured_tool_has_structured_content() {
    let b = convert_recording("mcp2-native/S1c-structured-good-hostcontent");
    let row = row_named(&b, "execute_tool find_contact_by_email", None);
    assert_eq!(
        boolean(&b, "result_has_structured_content", row),
        Some(true)
    );
    assert_eq!(boolean(&b, "result_text_is_json_object", row), Some(true));
    // the chat span's gen_ai.tool.definitions became tool_definitions
    let chat = row_named(&b, "chat scripted-agent-model-1", None);
    let defs = common::cells::tool_defs(&b, chat).expect("definitions");
    assert!(defs
        .iter()
        .any(|d| d.0.as_deref() == Some("find_contact_by_email")));
}

#[test]
fn without_content_capture_nothing_is_derived() {
    // S2 without `c`: no span carries the result, so the facts stay NULL (not observable).
    let b = convert_recording("mcp2-native/S2-structured-broken");
    for row in 0..b.num_rows() {
        assert_eq!(boolean(&b, "result_has_structured_content", row), None);
        assert_eq!(str(&b, "result_type", row), None);
    }
}

#[test]
fn traceloop_entity_output_only_spans_leave_structured_content_null() {
    for rec in [
        "traceloop-mcp1/S1c-structured-good-hostcontent",
        "traceloop-mcp1/S2c-structured-broken-hostcontent",
    ] {
        let b = convert_recording(rec);
        let tool_spans: Vec<usize> = (0..b.num_rows())
            .filter(|r| str(&b, "name", *r).is_some_and(|n| n.ends_with(".tool")))
            .filter(|r| map_str(&b, "content_attributes", *r, "traceloop.entity.output").is_some())
            .collect();
        assert!(!tool_spans.is_empty(), "{rec}");
        for r in tool_spans {
            assert_eq!(
                boolean(&b, "result_has_structured_content", r),
                None,
                "{rec} row {r}"
            );
        }
    }
}

#[test]
fn redaction_replaces_content_after_deriving_facts() {
    let dir = recordings_dir().join("mcp2-native/S2c-structured-broken-hostcontent");
    let ctx = IngestContext {
        redact_content: true,
        ..common::ctx()
    };
    let mut checked = 0;
    for file in request_files(&dir) {
        let c = convert_request(&decode_file(&file), &ctx);
        let b = &c.batch;
        for row in rows_named(b, "execute_tool find_contact_by_email") {
            assert_eq!(
                str(b, "gen_ai_tool_call_result", row).as_deref(),
                Some("[redacted]")
            );
            assert_eq!(
                str(b, "gen_ai_tool_call_arguments", row).as_deref(),
                Some("[redacted]")
            );
            assert_eq!(
                boolean(b, "result_has_structured_content", row),
                Some(false)
            );
            assert_eq!(boolean(b, "result_text_is_json_object", row), Some(true));
            assert!(str(b, "tool_call_arguments_digest", row).is_some());
            checked += 1;
        }
    }
    assert_eq!(checked, 1);
    let dir = recordings_dir().join("traceloop-mcp1/S1c-structured-good-hostcontent");
    for file in request_files(&dir) {
        let c = convert_request(&decode_file(&file), &ctx);
        for row in 0..c.batch.num_rows() {
            if let Some((ty, text)) =
                map_str(&c.batch, "content_attributes", row, "mcp.response.value")
            {
                assert_eq!(
                    (ty.as_str(), text.as_deref()),
                    ("string", Some("[redacted]"))
                );
            }
        }
    }
}
