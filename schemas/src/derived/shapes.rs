//! Recognising MCP payloads by shape, whichever instrumentation wrapped them.

use serde_json::{Map, Value};

use super::{tool_defs, Derived};

/// Reads a result-ish payload. Returns true when a tool result or a tool list was recognised.
pub(super) fn observe_response(d: &mut Derived, v: &Value) -> bool {
    let mut v = v;
    // Unwrap JSON-RPC envelopes and `{"result": {...}}` wrappers (at most twice), and
    // LlamaIndex's `ToolOutput`, whose `raw_output` is the tool's own return value (for an MCP
    // tool the `CallToolResult`, dumped with the Python SDK's field names).
    for _ in 0..2 {
        let inner = v.as_object().and_then(|o| {
            o.get("result")
                .or_else(|| o.get("raw_output").filter(|r| r.get("content").is_some()))
        });
        match inner {
            Some(inner @ (Value::Object(_) | Value::Array(_))) => v = inner,
            _ => break,
        }
    }
    match v {
        Value::Array(items)
            if !items.is_empty()
                && items
                    .iter()
                    .all(|i| i.get("type").is_some_and(Value::is_string)) =>
        {
            observe_blocks(d, items);
            d.result_type.get_or_insert("complete");
            true
        }
        Value::Object(o) => {
            if let Some(Value::Array(tools)) = o.get("tools") {
                // An MCP `tools/list` result lists MCP `Tool`s; a model API's request or
                // response (OpenAI's Responses API `Response`, as OpenInference records an LLM
                // span's output) lists function-calling tools, which are not a server's catalog.
                if tools.iter().any(is_function_calling_tool) {
                    return false;
                }
                d.add_tool_defs(tool_defs::tool_defs_from_list(tools));
                return true;
            }
            if let Some(message) = mcp_tool_message(o) {
                observe_tool_message(d, message);
                return true;
            }
            if is_call_tool_result(o) {
                observe_call_tool_result(d, o);
                return true;
            }
            if let Some(Value::String(_)) = o.get("result") {
                // Traceloop's client output: the first text block only, plus `is_error` on error.
                let is_error = o
                    .get("is_error")
                    .or_else(|| o.get("isError"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                d.result_is_error.get_or_insert(is_error);
                d.result_type.get_or_insert("complete");
                return true;
            }
            false
        }
        _ => false,
    }
}

/// A tool in a model API's function-calling form (`{"type": "function", ...}`, or with
/// `parameters` and no `inputSchema`), never an MCP `Tool` (which has no `type` and always an
/// `inputSchema`).
fn is_function_calling_tool(tool: &Value) -> bool {
    tool.get("type").and_then(Value::as_str) == Some("function")
        || tool.get("function").is_some_and(Value::is_object)
        || (tool.get("parameters").is_some() && tool.get("inputSchema").is_none())
}

/// The `data` of a LangChain `ToolMessage` (`{"type": "tool", "data": {...}}`, as OpenInference
/// records a tool's output) that holds an MCP tool's result: content as a list of MCP content
/// blocks, as `langchain-mcp-adapters` returns it. A message whose content is plain text is a
/// framework tool's, which has no `structuredContent` to miss.
fn mcp_tool_message(o: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if o.get("type").and_then(Value::as_str) != Some("tool") {
        return None;
    }
    let data = o.get("data")?.as_object()?;
    let blocks = data.get("content")?.as_array()?;
    let typed = !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.get("type").is_some_and(Value::is_string));
    typed.then_some(data)
}

/// Reads an MCP result from a LangChain `ToolMessage`: `langchain-mcp-adapters` keeps the
/// result's `structuredContent` in `artifact.structured_content` (no artifact: none was sent),
/// and marks an `isError` result `status: "error"`.
fn observe_tool_message(d: &mut Derived, data: &Map<String, Value>) {
    let structured = data
        .get("artifact")
        .and_then(|a| a.get("structured_content"))
        .is_some_and(|s| !s.is_null());
    d.result_has_structured_content.get_or_insert(structured);
    let is_error = data.get("status").and_then(Value::as_str) == Some("error");
    d.result_is_error.get_or_insert(is_error);
    d.result_type.get_or_insert("complete");
    if let Some(Value::Array(blocks)) = data.get("content") {
        observe_blocks(d, blocks);
    }
}

fn is_call_tool_result(o: &Map<String, Value>) -> bool {
    matches!(o.get("content"), Some(Value::Array(_)))
        || o.contains_key("structuredContent")
        || o.contains_key("isError")
        || o.contains_key("inputRequests")
        || o.get("resultType").is_some_and(|t| t == "input_required")
}

/// A `CallToolResult` field by its wire name, or by the Python SDK's attribute name
/// (`structured_content`, `is_error`, `result_type`) when a library dumped the model without
/// aliases (mcp 2 under LlamaIndex's `ToolOutput.raw_output`).
fn field<'a>(o: &'a Map<String, Value>, wire: &str, python: &str) -> Option<&'a Value> {
    o.get(wire).or_else(|| o.get(python))
}

fn observe_call_tool_result(d: &mut Derived, o: &Map<String, Value>) {
    let structured =
        field(o, "structuredContent", "structured_content").is_some_and(|s| !s.is_null());
    d.result_has_structured_content.get_or_insert(structured);
    let is_error = field(o, "isError", "is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    d.result_is_error.get_or_insert(is_error);
    let input_required = field(o, "resultType", "result_type")
        .is_some_and(|t| t == "input_required")
        || o.get("inputRequests").is_some_and(|r| !r.is_null());
    d.result_type.get_or_insert(if input_required {
        "input_required"
    } else {
        "complete"
    });
    match o.get("content") {
        Some(Value::Array(items)) => observe_blocks(d, items),
        _ => {
            d.result_content_types.get_or_insert_with(Vec::new);
            d.result_text_is_json_object.get_or_insert(false);
        }
    }
}

fn observe_blocks(d: &mut Derived, items: &[Value]) {
    // OpenLIT's Python instrumentation writes each block as the pydantic `str()` of the SDK's
    // model (`type='text' text='...' annotations=None meta=None`): read as the object it shows.
    let converted: Vec<Value>;
    let items = if items.iter().any(Value::is_string) {
        converted = items
            .iter()
            .map(|b| match b {
                Value::String(text) => super::python_repr::pydantic_fields(text)
                    .map_or_else(|| b.clone(), Value::Object),
                _ => b.clone(),
            })
            .collect();
        &converted[..]
    } else {
        items
    };
    let types: Vec<String> = items
        .iter()
        .map(|b| {
            b.get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string()
        })
        .collect();
    let texts: Vec<&Value> = items
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .collect();
    let json_object = texts.len() == 1
        && texts[0]
            .get("text")
            .or_else(|| texts[0].get("content"))
            .and_then(Value::as_str)
            .is_some_and(|t| {
                // A whole JSON text that starts with `{` is an object: checked for syntax only
                // (`IgnoredAny` builds nothing), not parsed into a tree that is thrown away.
                let t = t.trim_start();
                t.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok()
            });
    d.result_content_types.get_or_insert(types);
    d.result_text_is_json_object.get_or_insert(json_object);
}

/// The `traceparent` in an object's `_meta` (or `meta`), if any.
pub(super) fn observe_meta(d: &mut Derived, holder: &Map<String, Value>) {
    if d.mcp_meta_traceparent.is_none() {
        d.mcp_meta_traceparent = ["_meta", "meta"]
            .iter()
            .find_map(|k| holder.get(*k))
            .and_then(|m| m.get("traceparent"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
}

/// A server tool handler's recorded input `[arguments, extra]`, where `extra` is the MCP SDK's
/// request-handler context (it has a `requestId`): returns the arguments and the `extra`.
pub(crate) fn handler_call(v: &Value) -> Option<(&Value, &Map<String, Value>)> {
    match v.as_array()?.as_slice() {
        [args, Value::Object(extra)] if extra.contains_key("requestId") => Some((args, extra)),
        _ => None,
    }
}

/// Reads a request-ish payload: a JSON-RPC request (`{"method","params"}`), Traceloop's tool input
/// (`{"tool_name","arguments"}`), or bare params.
pub(super) fn observe_request(d: &mut Derived, v: &Value) {
    let Some(o) = v.as_object() else { return };
    let params = o.get("params").and_then(Value::as_object);
    observe_meta(d, params.unwrap_or(o));
    if let Some(p) = params {
        let is_call = o.get("method").and_then(Value::as_str) == Some("tools/call");
        if is_call || (p.contains_key("name") && o.get("method").is_none()) {
            if let Some(args) = p.get("arguments") {
                d.set_arguments(args);
            }
        }
    } else if o.contains_key("tool_name") {
        if let Some(args) = o.get("arguments") {
            d.set_arguments(args);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Derived;
    use crate::dialects::ContentRole;

    fn observe(role: ContentRole, text: &str) -> Derived {
        let mut d = Derived::default();
        d.observe(role, text);
        d
    }

    /// OpenInference records an OpenAI Responses API `Response` as an LLM span's output: its
    /// `tools` are the function tools the model was offered, not a `tools/list` result.
    #[test]
    fn a_model_response_listing_function_tools_is_not_a_tools_list() {
        let response = r#"{"id":"resp_1","object":"response","output":[],
            "tools":[{"name":"get_stock_level","parameters":{"type":"object"},"strict":false,"type":"function"}]}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, response).tool_definitions,
            None
        );
        let chat_form =
            r#"{"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}"#;
        assert_eq!(
            observe(ContentRole::Response, chat_form).tool_definitions,
            None
        );
        let listing = r#"{"result":{"tools":[{"name":"get_stock_level","inputSchema":{"type":"object"}},{"name":"summary_only"}]}}"#;
        let defs = observe(ContentRole::Response, listing)
            .tool_definitions
            .unwrap();
        assert_eq!(defs.len(), 2);
    }

    /// An MCP tool's result as `langchain-mcp-adapters` hands it to LangChain, recorded by
    /// OpenInference as a `ToolMessage`.
    #[test]
    fn a_langchain_tool_message_of_an_mcp_tool() {
        let text_only = r#"{"type":"tool","data":{"content":[{"type":"text","text":"{\"sku\":\"SKU-1\"}","id":"lc_1"}],"artifact":null,"status":"success","tool_call_id":"call_0_0"}}"#;
        let d = observe(ContentRole::ToolResult, text_only);
        assert_eq!(d.result_has_structured_content, Some(false));
        assert_eq!(d.result_is_error, Some(false));
        assert_eq!(d.result_text_is_json_object, Some(true));
        let structured = r#"{"type":"tool","data":{"content":[{"type":"text","text":"x"}],"artifact":{"structured_content":{"sku":"SKU-1"}},"status":"success"}}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, structured).result_has_structured_content,
            Some(true)
        );
        let error = r#"{"type":"tool","data":{"content":[{"type":"text","text":"Error executing tool"}],"artifact":null,"status":"error"}}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, error).result_is_error,
            Some(true)
        );
        // a framework tool's plain-text message says nothing about structuredContent
        let plain = r#"{"type":"tool","data":{"content":"42","status":"success"}}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, plain).result_has_structured_content,
            None
        );
    }

    /// LlamaIndex's `ToolOutput` of an MCP tool: `raw_output` is the `CallToolResult` as mcp 2's
    /// pydantic dump writes it (Python field names, `structured_content` absent when none).
    #[test]
    fn a_llamaindex_tool_output_holds_the_call_tool_result() {
        let text_only = r#"{"blocks":[{"block_type":"text","text":"meta=None content=[...]"}],"tool_name":"get_stock_level","raw_input":{"kwargs":{}},"raw_output":{"content":[{"type":"text","text":"{\"sku\": \"SKU-1\"}"}],"is_error":false},"is_error":false}"#;
        let d = observe(ContentRole::ToolResult, text_only);
        assert_eq!(d.result_has_structured_content, Some(false));
        assert_eq!(d.result_is_error, Some(false));
        assert_eq!(d.result_text_is_json_object, Some(true));
        let error = r#"{"blocks":[],"raw_output":{"content":[{"type":"text","text":"Unknown SKU"}],"is_error":true},"is_error":false}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, error).result_is_error,
            Some(true)
        );
        let structured = r#"{"raw_output":{"content":[{"type":"text","text":"x"}],"structured_content":{"sku":"SKU-1"},"is_error":false}}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, structured).result_has_structured_content,
            Some(true)
        );
        // a ToolOutput of a plain function (raw_output is the function's value) is not a result
        let plain = r#"{"blocks":[],"raw_output":{"sku":"SKU-1"},"is_error":false}"#;
        assert_eq!(
            observe(ContentRole::ToolResult, plain).result_has_structured_content,
            None
        );
    }

    #[test]
    fn call_tool_result_with_structured_content() {
        let d = observe(
            ContentRole::ToolResult,
            r#"{"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true},"isError":false}"#,
        );
        assert_eq!(d.result_has_structured_content, Some(true));
        assert_eq!(d.result_is_error, Some(false));
        assert_eq!(d.result_content_types, Some(vec!["text".to_string()]));
        assert_eq!(d.result_type, Some("complete"));
        assert_eq!(d.result_text_is_json_object, Some(true));
    }

    #[test]
    fn jsonrpc_envelope_and_input_required() {
        let d = observe(
            ContentRole::Response,
            r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":[{}],"content":[]}}"#,
        );
        assert_eq!(d.result_type, Some("input_required"));
        assert_eq!(d.result_has_structured_content, Some(false));
        assert_eq!(d.result_text_is_json_object, Some(false));
    }

    #[test]
    fn traceloop_first_text_form_leaves_structured_unknown() {
        let d = observe(
            ContentRole::Response,
            r#"{"result": "Unknown ticket", "is_error": true}"#,
        );
        assert_eq!(d.result_has_structured_content, None);
        assert_eq!(d.result_is_error, Some(true));
        assert_eq!(d.result_content_types, None);
        assert_eq!(d.result_text_is_json_object, None);
        assert_eq!(d.result_type, Some("complete"));
    }

    #[test]
    fn block_list_and_non_results() {
        let d = observe(
            ContentRole::Response,
            r#"[{"type":"text","content":"plain"},{"type":"image"}]"#,
        );
        assert_eq!(
            d.result_content_types,
            Some(vec!["text".into(), "image".into()])
        );
        assert_eq!(d.result_text_is_json_object, Some(false));
        assert_eq!(d.result_has_structured_content, None);
        assert_eq!(d.result_is_error, None);
        // an initialize result is not a tool result
        let d = observe(
            ContentRole::Response,
            r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#,
        );
        assert_eq!(d, Derived::default());
        // an opaque tool result still counts as a result seen
        let d = observe(ContentRole::ToolResult, "42 degrees");
        assert_eq!(d.result_type, Some("complete"));
        assert_eq!(d.result_has_structured_content, None);
    }

    #[test]
    fn requests_give_arguments_and_traceparent() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let d = observe(
            ContentRole::Request,
            &format!(
                r#"{{"method":"tools/call","params":{{"name":"t","arguments":{{"b":2,"a":1}},"_meta":{{"traceparent":"{tp}"}}}}}}"#
            ),
        );
        assert_eq!(d.mcp_meta_traceparent.as_deref(), Some(tp));
        let e = observe(
            ContentRole::Request,
            r#"{"tool_name":"t","arguments":{"a":1,"b":2}}"#,
        );
        assert_eq!(d.tool_call_arguments_digest, e.tool_call_arguments_digest);
        let f = observe(ContentRole::ToolArguments, r#"{"a": 1, "b": 2}"#);
        assert_eq!(e.tool_call_arguments_digest, f.tool_call_arguments_digest);
        assert!(f.tool_call_arguments_digest.is_some());
        // an MCP server handler's `[arguments, extra]`: the arguments only, `_meta` read
        let h = observe(
            ContentRole::ToolArguments,
            &format!(
                r#"[{{"a":1,"b":2}},{{"signal":{{}},"_meta":{{"traceparent":"{tp}"}},"requestId":7}}]"#
            ),
        );
        assert_eq!(h.tool_call_arguments_digest, f.tool_call_arguments_digest);
        assert_eq!(h.mcp_meta_traceparent.as_deref(), Some(tp));
        let g = observe(
            ContentRole::Request,
            r#"{"method":"tools/list","params":null}"#,
        );
        assert_eq!(g, Derived::default());
    }
}
