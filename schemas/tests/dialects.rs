//! One test per dialect: the Traceloop and MCP-SDK dialects on real recordings, the dialects
//! added for agent frameworks on the lab's own recordings (lab/recordings), the others on the
//! fixtures in tests/fixtures/dialects (see its README).

mod common;

use common::cells::{
    boolean, int, map_keys, map_str, row_named, rows_named, str, str_list, tool_defs,
};
use common::{convert_fixture, convert_lab_recording, convert_recording};
use schemas::derived::digest::json_digest;
use serde_json::json;

fn dialects(b: &arrow::record_batch::RecordBatch, row: usize) -> Vec<String> {
    str_list(b, "dialects", row).expect("dialects never null")
}

#[test]
fn traceloop_on_a_real_recording() {
    let b = convert_recording("traceloop-mcp1/S1c-structured-good-hostcontent");
    let scope = "opentelemetry.instrumentation.mcp.instrumentation";
    // client tool span: `{tool}.tool` without traceloop.workflow.name
    let client = rows_named(&b, "find_contact_by_email.tool")
        .into_iter()
        .find(|r| {
            map_keys(&b, "attributes", *r)
                .is_some_and(|k| !k.iter().any(|k| k == "traceloop.workflow.name"))
        })
        .expect("client tool span");
    assert_eq!(dialects(&b, client), ["traceloop"]);
    assert_eq!(
        str(&b, "gen_ai_tool_name", client).as_deref(),
        Some("find_contact_by_email")
    );
    assert_eq!(
        str(&b, "mcp_method_name", client).as_deref(),
        Some("tools/call")
    );
    // entity.output = {"result": first text}: isError observable, structuredContent not
    assert_eq!(boolean(&b, "result_has_structured_content", client), None);
    assert_eq!(boolean(&b, "result_is_error", client), Some(false));
    assert_eq!(str(&b, "result_type", client).as_deref(), Some("complete"));
    assert_eq!(boolean(&b, "result_text_is_json_object", client), None);
    // content moved out of attributes, kept raw
    let content = map_keys(&b, "content_attributes", client).expect("content attributes");
    assert_eq!(
        content,
        ["traceloop.entity.input", "traceloop.entity.output"]
    );
    let attrs = map_keys(&b, "attributes", client).expect("attributes");
    assert_eq!(attrs, ["traceloop.span.kind", "traceloop.entity.name"]);
    // the arguments digest equals the host's semconv execute_tool digest
    let host = row_named(&b, "execute_tool find_contact_by_email", None);
    let expected = json_digest(&json!({"email": "dana.lee@example.com"}));
    assert_eq!(
        str(&b, "tool_call_arguments_digest", host).as_deref(),
        Some(expected.as_str())
    );
    assert_eq!(
        str(&b, "tool_call_arguments_digest", client).as_deref(),
        Some(expected.as_str())
    );

    // server ResponseStreamWriter with the full CallToolResult
    let writer = rows_named(&b, "ResponseStreamWriter")
        .into_iter()
        .find(|r| boolean(&b, "result_has_structured_content", *r).is_some())
        .expect("server writer with a tool result");
    assert_eq!(
        boolean(&b, "result_has_structured_content", writer),
        Some(true)
    );
    assert_eq!(boolean(&b, "result_is_error", writer), Some(false));
    assert_eq!(
        str_list(&b, "result_content_types", writer),
        Some(vec!["text".to_string()])
    );
    assert_eq!(
        boolean(&b, "result_text_is_json_object", writer),
        Some(true)
    );
    assert_eq!(str(&b, "jsonrpc_request_id", writer).as_deref(), Some("2"));
    assert_eq!(dialects(&b, writer), ["semconv-deprecated", "traceloop"]);

    // fastmcp wrapper: a content block list, no structuredContent to observe
    let server = row_named(&b, "mcp.server", Some(scope));
    assert_eq!(
        str_list(&b, "result_content_types", server),
        Some(vec!["text".to_string()])
    );
    assert_eq!(boolean(&b, "result_has_structured_content", server), None);
    assert_eq!(
        boolean(&b, "result_text_is_json_object", server),
        Some(true)
    );

    // tools/list.mcp output holds the catalog with output schemas and annotations
    let list = row_named(&b, "tools/list.mcp", Some(scope));
    assert_eq!(
        str(&b, "mcp_method_name", list).as_deref(),
        Some("tools/list")
    );
    let defs = tool_defs(&b, list).expect("tool definitions");
    let find = defs
        .iter()
        .find(|d| d.0.as_deref() == Some("find_contact_by_email"))
        .expect("tool");
    assert_eq!(find.1, Some(true));
}

#[test]
fn traceloop_tool_error_is_observed() {
    let b = convert_recording("traceloop-mcp1/S7-tool-error-retry");
    let errors: Vec<usize> = rows_named(&b, "get_ticket.tool")
        .into_iter()
        .filter(|r| boolean(&b, "result_is_error", *r) == Some(true))
        .collect();
    assert!(!errors.is_empty());
    for r in errors {
        assert_eq!(str(&b, "status_code", r).as_deref(), Some("ERROR"));
    }
}

#[test]
fn mcp_sdk_on_a_real_recording() {
    let b = convert_recording("mcp2-native/S1c-structured-good-hostcontent");
    let client = row_named(&b, "MCP send tools/call find_contact_by_email", None);
    assert_eq!(dialects(&b, client), ["semconv", "mcp-sdk"]);
    assert_eq!(
        str(&b, "mcp_method_name", client).as_deref(),
        Some("tools/call")
    );
    // lifted from the span name: the SDK's client span carries no tool attribute
    assert_eq!(
        str(&b, "gen_ai_tool_name", client).as_deref(),
        Some("find_contact_by_email")
    );
    assert!(str(&b, "jsonrpc_request_id", client).is_some());
    assert_eq!(str(&b, "kind", client).as_deref(), Some("CLIENT"));
    let server = row_named(&b, "tools/call find_contact_by_email", None);
    assert_eq!(
        str(&b, "gen_ai_operation_name", server).as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        str(&b, "mcp_protocol_version", server).as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(
        str(&b, "service_name", server).as_deref(),
        Some("acme-mcp-server")
    );
    assert_eq!(boolean(&b, "parent_is_remote", server), Some(true));
    let list = row_named(&b, "MCP send tools/list", None);
    assert_eq!(
        str(&b, "mcp_method_name", list).as_deref(),
        Some("tools/list")
    );
    assert_eq!(str(&b, "gen_ai_tool_name", list), None);
}

#[test]
fn semconv_fixture() {
    let b = convert_fixture("dialects/semconv.json");
    assert_eq!(dialects(&b, 0), ["semconv"]);
    assert_eq!(str(&b, "gen_ai_operation_name", 0).as_deref(), Some("chat"));
    assert_eq!(
        str(&b, "gen_ai_provider_name", 0).as_deref(),
        Some("openai")
    );
    assert_eq!(
        str(&b, "gen_ai_response_model", 0).as_deref(),
        Some("gpt-4o-2024-08-06")
    );
    assert_eq!(
        str_list(&b, "gen_ai_response_finish_reasons", 0),
        Some(vec!["tool_calls".to_string()])
    );
    assert_eq!(int(&b, "gen_ai_usage_input_tokens", 0), Some(100));
    assert_eq!(int(&b, "gen_ai_usage_output_tokens", 0), Some(20));
    assert_eq!(int(&b, "gen_ai_usage_cache_read_input_tokens", 0), Some(64));
    assert_eq!(
        int(&b, "gen_ai_usage_cache_creation_input_tokens", 0),
        Some(8)
    );
    assert_eq!(int(&b, "gen_ai_usage_reasoning_output_tokens", 0), Some(4));
    assert_eq!(str(&b, "gen_ai_agent_id", 0).as_deref(), Some("agent-1"));
    assert_eq!(
        str(&b, "gen_ai_system_instructions", 0).as_deref(),
        Some(r#"[{"type":"text","content":"be brief"}]"#)
    );
    assert!(str(&b, "gen_ai_input_messages", 0).is_some());
    let defs = tool_defs(&b, 0).expect("definitions");
    assert_eq!(
        defs,
        vec![(Some("get_ticket".to_string()), Some(false), None, None)]
    );
    // canonical content left `attributes`, and so did the registry attributes their typed
    // columns hold exactly (schema 2: `attributes_in_columns` names them)
    let keys = map_keys(&b, "attributes", 0).unwrap_or_default();
    assert!(!keys
        .iter()
        .any(|k| k == "gen_ai.tool.definitions" || k == "gen_ai.input.messages"));
    assert!(!keys.iter().any(|k| k == "gen_ai.provider.name"));
    let mask = b
        .column_by_name("attributes_in_columns")
        .expect("mask column")
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .expect("Int64")
        .value(0);
    let in_columns: Vec<&str> = schemas::lift::attributes_in_columns(mask)
        .map(|s| s.attribute)
        .collect();
    assert!(
        in_columns.contains(&"gen_ai.provider.name"),
        "{in_columns:?}"
    );
    assert!(
        in_columns.contains(&"gen_ai.usage.input_tokens"),
        "{in_columns:?}"
    );
    assert_eq!(map_keys(&b, "content_attributes", 0), None);

    assert_eq!(str(&b, "mcp_session_id", 1).as_deref(), Some("sess-9"));
    assert_eq!(str(&b, "jsonrpc_request_id", 1).as_deref(), Some("3"));
    assert_eq!(str(&b, "network_transport", 1).as_deref(), Some("pipe"));
    assert_eq!(
        str(&b, "rpc_response_status_code", 1).as_deref(),
        Some("-32602")
    );
    assert_eq!(str(&b, "error_type", 1).as_deref(), Some("tool_error"));
    assert_eq!(str(&b, "gen_ai_tool_call_id", 1).as_deref(), Some("call_1"));
    assert_eq!(str(&b, "gen_ai_prompt_name", 1).as_deref(), Some("p"));
    assert_eq!(str(&b, "mcp_resource_uri", 1).as_deref(), Some("file:///x"));
    assert_eq!(str(&b, "status_code", 1).as_deref(), Some("ERROR"));
    assert_eq!(str(&b, "status_message", 1).as_deref(), Some("boom"));
    assert_eq!(str(&b, "kind", 1).as_deref(), Some("SERVER"));
    assert_eq!(str(&b, "result_type", 1).as_deref(), Some("input_required"));
    assert_eq!(
        str(&b, "gen_ai_tool_call_arguments", 1).as_deref(),
        Some(r#"{"ticket_id":"T-1"}"#)
    );
    assert_eq!(
        str(&b, "tool_call_arguments_digest", 1),
        Some(json_digest(&json!({"ticket_id": "T-1"})))
    );
}

#[test]
fn semconv_deprecated_fixture() {
    let b = convert_fixture("dialects/semconv-deprecated.json");
    assert_eq!(dialects(&b, 0), ["semconv-deprecated"]);
    assert_eq!(
        str(&b, "gen_ai_provider_name", 0).as_deref(),
        Some("openai")
    );
    assert_eq!(int(&b, "gen_ai_usage_input_tokens", 0), Some(10));
    assert_eq!(int(&b, "gen_ai_usage_output_tokens", 0), Some(5));
    // renamed to gen_ai.usage.cache_write.input_tokens (semantic-conventions-genai #440)
    assert_eq!(
        int(&b, "gen_ai_usage_cache_creation_input_tokens", 0),
        Some(7)
    );
    assert_eq!(str(&b, "mcp_transport", 0).as_deref(), Some("stdio"));
    assert_eq!(str(&b, "gen_ai_tool_name", 0).as_deref(), Some("lookup"));
    assert_eq!(str(&b, "jsonrpc_request_id", 0).as_deref(), Some("12"));
    assert_eq!(
        map_keys(&b, "content_attributes", 0),
        Some(vec![
            "gen_ai.prompt.0.role".to_string(),
            "gen_ai.prompt.0.content".to_string(),
            "gen_ai.completion.0.content".to_string()
        ])
    );
    assert_eq!(
        map_str(&b, "content_attributes", 0, "gen_ai.prompt.0.content"),
        Some(("string".to_string(), Some("hi".to_string())))
    );
    // the deprecated name stays in attributes (TL007 reads it there)
    assert!(map_keys(&b, "attributes", 0).is_some_and(|k| k.iter().any(|k| k == "gen_ai.system")));
    // canonical names win over deprecated ones
    assert_eq!(dialects(&b, 1), ["semconv", "semconv-deprecated"]);
    assert_eq!(
        str(&b, "gen_ai_provider_name", 1).as_deref(),
        Some("anthropic")
    );
    assert_eq!(int(&b, "gen_ai_usage_input_tokens", 1), Some(7));
}

#[test]
fn openlit_fixture() {
    let b = convert_fixture("dialects/openlit.json");
    assert_eq!(dialects(&b, 0), ["semconv-deprecated", "openlit"]);
    assert_eq!(str(&b, "mcp_method_name", 0).as_deref(), Some("tools/call"));
    assert_eq!(
        str(&b, "gen_ai_tool_name", 0).as_deref(),
        Some("get_weather")
    );
    assert_eq!(str(&b, "jsonrpc_request_id", 0).as_deref(), Some("7"));
    assert_eq!(str(&b, "mcp_transport", 0).as_deref(), Some("stdio"));
    assert_eq!(
        str(&b, "tool_call_arguments_digest", 0),
        Some(json_digest(&json!({"city": "Paris"})))
    );
    assert_eq!(boolean(&b, "result_has_structured_content", 0), Some(false));
    assert_eq!(boolean(&b, "result_is_error", 0), Some(false));
    assert_eq!(boolean(&b, "result_text_is_json_object", 0), Some(true));
    assert_eq!(
        map_keys(&b, "content_attributes", 0),
        Some(vec![
            "mcp.tool.arguments".to_string(),
            "mcp.tool.result".to_string()
        ])
    );
    assert_eq!(
        str(&b, "gen_ai_tool_call_result", 0),
        None,
        "vendor content is not duplicated"
    );
}

#[test]
fn logfire_fixture() {
    let b = convert_fixture("dialects/logfire.json");
    assert_eq!(dialects(&b, 0), ["logfire"]);
    assert_eq!(str(&b, "mcp_method_name", 0).as_deref(), Some("tools/call"));
    assert_eq!(str(&b, "gen_ai_tool_name", 0).as_deref(), Some("add"));
    assert_eq!(
        str(&b, "mcp_meta_traceparent", 0).as_deref(),
        Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    );
    assert_eq!(
        str(&b, "tool_call_arguments_digest", 0),
        Some(json_digest(&json!({"a": 1, "b": 2})))
    );
    assert_eq!(boolean(&b, "result_has_structured_content", 0), Some(true));
    assert_eq!(boolean(&b, "result_text_is_json_object", 0), Some(false));
    assert_eq!(str(&b, "mcp_method_name", 1).as_deref(), Some("tools/list"));
    assert_eq!(str(&b, "gen_ai_tool_name", 1), None);
    assert_eq!(
        tool_defs(&b, 1),
        Some(vec![
            (Some("add".to_string()), Some(true), Some(true), Some(false)),
            (Some("wipe".to_string()), Some(false), None, None),
        ])
    );
}

#[test]
fn sentry_fixture() {
    let b = convert_fixture("dialects/sentry.json");
    assert_eq!(dialects(&b, 0), ["semconv", "semconv-deprecated", "sentry"]);
    assert_eq!(str(&b, "mcp_method_name", 0).as_deref(), Some("tools/call"));
    assert_eq!(
        str(&b, "gen_ai_tool_name", 0).as_deref(),
        Some("get_weather")
    );
    assert_eq!(str(&b, "jsonrpc_request_id", 0).as_deref(), Some("5"));
    assert_eq!(str(&b, "mcp_transport", 0).as_deref(), Some("stdio"));
    assert_eq!(str(&b, "mcp_session_id", 0).as_deref(), Some("sess-1"));
    assert_eq!(boolean(&b, "result_is_error", 0), Some(true));
    assert_eq!(
        str_list(&b, "result_content_types", 0),
        Some(vec!["text".to_string()])
    );
    assert_eq!(boolean(&b, "result_has_structured_content", 0), None);
    assert_eq!(
        str(&b, "tool_call_arguments_digest", 0),
        Some(json_digest(&json!({"city": "Paris", "days": 3})))
    );
    let content = map_keys(&b, "content_attributes", 0).expect("content");
    assert_eq!(
        content,
        [
            "mcp.request.argument.city",
            "mcp.request.argument.days",
            "mcp.tool.result.content"
        ]
    );
}

#[test]
fn openinference_fixture() {
    let b = convert_fixture("dialects/openinference.json");
    assert_eq!(dialects(&b, 0), ["openinference"]);
    assert_eq!(
        str(&b, "gen_ai_tool_name", 0).as_deref(),
        Some("get_weather")
    );
    assert_eq!(
        str(&b, "tool_call_arguments_digest", 0),
        Some(json_digest(&json!({"days": 3, "city": "Paris"})))
    );
    // a non-MCP result: seen, shape unknown
    assert_eq!(str(&b, "result_type", 0).as_deref(), Some("complete"));
    assert_eq!(boolean(&b, "result_has_structured_content", 0), None);
    assert_eq!(boolean(&b, "result_is_error", 0), None);
}

#[test]
fn atlas_fixture() {
    let b = convert_fixture("dialects/atlas.json");
    assert_eq!(dialects(&b, 0), ["atlas"]);
    assert_eq!(str(&b, "skill_name", 0).as_deref(), Some("triage"));
    assert_eq!(str(&b, "skill_version", 0).as_deref(), Some("1.2.0"));
    assert_eq!(
        str(&b, "skill_invocation_source", 0).as_deref(),
        Some("model")
    );
    assert_eq!(
        str(&b, "guardrail_name", 1).as_deref(),
        Some("write-approval")
    );
    assert_eq!(
        str(&b, "guardrail_decision", 1).as_deref(),
        Some("require_approval")
    );
    assert_eq!(str(&b, "mcp_transport", 1).as_deref(), Some("inproc"));
}

/// The names of a row's tool definitions.
fn def_names(b: &arrow::record_batch::RecordBatch, row: usize) -> Vec<String> {
    tool_defs(b, row)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|d| d.0)
        .collect()
}

#[test]
fn google_adk_on_lab_recordings() {
    let b = convert_lab_recording("google-adk-py/W3-write-confirmed");
    let writes = rows_named(&b, "execute_tool adjust_stock");
    assert_eq!(
        writes.len(),
        2,
        "the confirmation request, then the confirmed call"
    );
    assert!(dialects(&b, writes[0]).iter().any(|d| d == "google-adk"));
    let types: Vec<_> = writes.iter().map(|r| str(&b, "result_type", *r)).collect();
    assert_eq!(
        types,
        [
            Some("input_required".to_string()),
            Some("complete".to_string())
        ]
    );
    // schema 1: call_llm is the model call, its request's declarations the tools shown
    let b = convert_lab_recording("google-adk-py/W7-hidden-tool-adk-schema1");
    let call = row_named(&b, "call_llm", None);
    assert_eq!(
        str(&b, "gen_ai_operation_name", call).as_deref(),
        Some("chat")
    );
    assert_eq!(def_names(&b, call), ["get_stock_level", "lookup_supplier"]);
}

#[test]
fn vercel_ai_on_a_lab_recording() {
    let b = convert_lab_recording("vercel-ai-js/W2-text-only");
    let tool = row_named(&b, "ai.toolCall", None);
    assert_eq!(dialects(&b, tool), ["vercel-ai"]);
    assert_eq!(
        str(&b, "gen_ai_operation_name", tool).as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        str(&b, "gen_ai_tool_name", tool).as_deref(),
        Some("get_stock_level")
    );
    assert_eq!(
        boolean(&b, "result_has_structured_content", tool),
        Some(false)
    );
    let model = row_named(&b, "ai.generateText.doGenerate", None);
    assert_eq!(
        str(&b, "gen_ai_operation_name", model).as_deref(),
        Some("chat")
    );
    assert!(def_names(&b, model).contains(&"get_stock_level".to_string()));
    let run = row_named(&b, "ai.generateText", None);
    assert_eq!(
        str(&b, "gen_ai_operation_name", run).as_deref(),
        Some("invoke_agent")
    );
}

#[test]
fn strands_on_a_lab_recording() {
    let b = convert_lab_recording("strands-py/W7-hidden-tool");
    let run = row_named(&b, "invoke_agent warehouse-assistant", None);
    assert!(dialects(&b, run).iter().any(|d| d == "strands"));
    assert_eq!(def_names(&b, run), ["get_stock_level", "lookup_supplier"]);
}

#[test]
fn mastra_on_a_lab_recording() {
    let b = convert_lab_recording("mastra-js/W5-error-retry");
    let calls = rows_named(&b, "tool.execute lookup_supplier");
    assert_eq!(calls.len(), 3);
    for r in calls {
        assert!(dialects(&b, r).iter().any(|d| d == "mastra"));
        assert_eq!(
            str(&b, "gen_ai_operation_name", r).as_deref(),
            Some("execute_tool")
        );
        assert_eq!(boolean(&b, "result_is_error", r), Some(true));
        assert!(str(&b, "tool_call_arguments_digest", r).is_some());
    }
}

#[test]
fn openinference_agent_frameworks_on_lab_recordings() {
    // LangGraph: the host's TOOL span is the call, its ToolMessage the MCP result
    let b = convert_lab_recording("langgraph-openinference-py/W2-text-only");
    let tool = row_named(
        &b,
        "get_stock_level",
        Some("openinference.instrumentation.langchain"),
    );
    assert_eq!(
        str(&b, "gen_ai_operation_name", tool).as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        boolean(&b, "result_has_structured_content", tool),
        Some(false)
    );
    let model = rows_named(&b, "ScriptedChatModel")[0];
    assert_eq!(
        str(&b, "gen_ai_operation_name", model).as_deref(),
        Some("chat")
    );
    assert_eq!(def_names(&b, model), ["get_stock_level", "lookup_supplier"]);
    assert_eq!(
        str(&b, "gen_ai_conversation_id", model).as_deref(),
        Some("lab-thread-1")
    );
    // LlamaIndex: ToolOutput.raw_output is the CallToolResult; a paused step is an input round
    let b = convert_lab_recording("llamaindex-openinference-py/W2-text-only");
    let tool = row_named(&b, "FunctionTool.acall", None);
    assert_eq!(
        boolean(&b, "result_has_structured_content", tool),
        Some(false)
    );
    let b = convert_lab_recording("llamaindex-openinference-py/W3-write-confirmed");
    let types: Vec<_> = rows_named(&b, "FunctionTool.acall")
        .into_iter()
        .filter_map(|r| str(&b, "result_type", r))
        .collect();
    assert!(types.iter().any(|t| t == "input_required"), "{types:?}");
}
