//! The page is self-contained and data from spans cannot break out of the JSON block.

use super::*;
use crate::check::check_spans;
use crate::model::span::{SpanKindField, SpanRare, SpanRow};
use crate::model::{SpanId, SpanKind, TraceId};
use crate::policy::Policy;
use crate::rules::RULES;

const HOSTILE: &str = "</script><script>alert(1)</script><!-- & \u{2028}";

fn span(trace: u8, id: u8, parent: Option<u8>, start_ms: i64, name: &str) -> SpanRow {
    SpanRow {
        trace_id: TraceId([trace; 16]),
        span_id: SpanId([id; 8]),
        parent_span_id: parent.map(|p| SpanId([p; 8])),
        name: name.into(),
        start_ns: 1_700_000_000_000_000_000 + start_ms * 1_000_000,
        end_ns: 1_700_000_000_000_000_000 + (start_ms + 50) * 1_000_000,
        service_name: Some("host".into()),
        ..SpanRow::default()
    }
}

/// A host trace (agent > execute_tool > MCP client) and the server's half of the same
/// `tools/call` as the root of another trace: TL004. The server span carries [`HOSTILE`].
fn broken_call() -> Vec<SpanRow> {
    let agent = SpanRow {
        operation_name: Some("invoke_agent".into()),
        agent_name: Some("support".into()),
        conversation_id: Some(format!("conv {HOSTILE}").as_str().into()),
        end_ns: span(1, 1, None, 500, "").end_ns,
        ..span(1, 1, None, 0, "invoke_agent support")
    };
    let exec = SpanRow {
        operation_name: Some("execute_tool".into()),
        tool_name: Some("search".into()),
        ..span(1, 2, Some(1), 10, "execute_tool search")
    };
    let client = SpanRow {
        kind: SpanKindField(SpanKind::Client),
        mcp_method: Some("tools/call".into()),
        tool_name: Some("search".into()),
        jsonrpc_request_id: Some("2".into()),
        ..span(1, 3, Some(2), 11, "tools/call search")
    };
    let server = SpanRow {
        kind: SpanKindField(SpanKind::Server),
        mcp_method: Some("tools/call".into()),
        tool_name: Some("search".into()),
        jsonrpc_request_id: Some("2".into()),
        service_name: Some("mcp-server".into()),
        rare: Some(Box::new(SpanRare {
            status_message: Some(HOSTILE.into()),
            mcp_resource_uri: Some("https://tools.example/search".into()),
            ..SpanRare::default()
        })),
        ..span(2, 4, None, 12, "tools/call search")
    };
    vec![agent, exec, client, server]
}

fn page() -> (String, Report) {
    let (model, report) = check_spans(broken_call(), &Policy::default(), RULES);
    let ctx = PageContext {
        generated: "2026-01-01T00:00:00Z".into(),
        data_dir: format!("/data/{HOSTILE}"),
        ..PageContext::default()
    };
    (
        render_html(&model, &report, None, &ctx, &PageLimits::default()).expect("renders"),
        report,
    )
}

/// The JSON block's text.
fn data_block(page: &str) -> &str {
    let open = "<script type=\"application/json\" id=\"tripline-data\">";
    let start = page.find(open).expect("data block") + open.len();
    let len = page[start..].find("</script>").expect("block closed");
    &page[start..start + len]
}

#[test]
fn the_fixture_has_a_broken_edge_finding() {
    let (_, report) = page();
    assert!(
        report.findings.iter().any(|f| f.rule == "TL004"),
        "{:?}",
        report.findings
    );
}

#[test]
fn span_data_cannot_close_the_script_block() {
    let (page, _) = page();
    // Exactly the two script elements of the page close, none opened by the data.
    assert_eq!(page.matches("</script>").count(), 2, "{page}");
    assert_eq!(page.matches("<script").count(), 2);
    assert!(!page.contains("alert(1)</script>"));
    assert!(!page.contains("<!--"));
    let block = data_block(&page);
    assert!(!block.contains('<') && !block.contains('>') && !block.contains('&'));
    assert!(!block.contains('\u{2028}'));
    // ... and the escaped JSON reads back to the very same strings.
    let doc: serde_json::Value = serde_json::from_str(block).expect("valid JSON");
    assert_eq!(doc["context"]["data_dir"], format!("/data/{HOSTILE}"));
    let view = &doc["views"][0];
    let server = view["spans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "0404040404040404")
        .expect("server span in the waterfall");
    assert_eq!(server["b"], true, "broken edge marked: {server}");
    assert!(
        server["e"].is_number(),
        "edge from the client row: {server}"
    );
    let attrs = server["a"].as_array().unwrap();
    assert!(attrs
        .iter()
        .any(|kv| kv[0] == "status_message" && kv[1] == HOSTILE));
}

#[test]
fn the_page_loads_nothing_from_elsewhere() {
    let (page, _) = page();
    // The data block may quote URLs from spans (it is never markup); the page itself has none.
    let block = data_block(&page);
    assert!(
        block.contains("https://tools.example"),
        "fixture URL in the data"
    );
    let lower = page.replace(block, "").to_ascii_lowercase();
    for needle in [
        "http://",
        "https://",
        "<link",
        "<script src",
        "@import",
        "url(",
        "<iframe",
        "<img",
    ] {
        assert!(!lower.contains(needle), "page contains {needle:?}");
    }
    assert!(lower.contains("content-security-policy"));
}

#[test]
fn every_finding_is_in_the_data_with_its_view() {
    let (page, report) = page();
    let doc: serde_json::Value = serde_json::from_str(data_block(&page)).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), report.findings.len());
    for (f, j) in report.findings.iter().zip(findings) {
        assert_eq!(j["rule"], f.rule);
        assert_eq!(j["trace_id"], f.trace_id.to_string());
        assert_eq!(j["span_id"], f.span_id.to_string());
        assert!(j["view"].is_number(), "{j}");
    }
    let conv = &doc["conversations"][0];
    assert_eq!(conv["runs"][0]["agent"], "support");
    assert_eq!(conv["runs"][0]["tool_calls"], 1);
}

#[test]
fn script_json_escapes_only_inside_strings() {
    let v = serde_json::json!({"a": "<b>&</b>", "n": 1});
    let s = script_json(&v).unwrap();
    assert_eq!(s, r#"{"a":"\u003cb\u003e\u0026\u003c/b\u003e","n":1}"#);
    let back: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(back, v);
}

#[test]
fn capped_counts_are_written_with_thousands_separators() {
    use super::data::thousands;
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(18_034), "18,034");
    assert_eq!(thousands(1_000_000), "1,000,000");
}
