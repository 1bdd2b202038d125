//! Logical calls: the host's `execute_tool`, the MCP client span and the MCP server span(s) of one
//! tool call are one `Call`, so a rule sees each call once with every fact any of its spans saw.
//!
//! Why group: a tool result's `isError` may be visible only on the server span (MCP Python SDK),
//! its `structuredContent` only in the host's opt-in content (or Traceloop's server transport span),
//! its arguments only on the host. Rules ask the call, not a particular span.

use schemas::mcp_methods;

use super::roles::McpRole;
use super::span::{SpanRow, Sym};

/// What a call is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// A tool call (`execute_tool` and/or MCP `tools/call`).
    Tool,
    /// Any other MCP request (`resources/read`, `prompts/get`, `tools/list`, ...).
    Request(String),
}

/// One logical call with the facts merged over its spans.
#[derive(Clone, Debug)]
pub struct Call {
    pub kind: CallKind,
    /// The span that represents the call: the host `execute_tool` span if there is one, else the
    /// MCP client span, else the MCP server span.
    pub anchor: usize,
    /// Every span of the call (anchor, MCP client/server spans of the same method), in-trace or
    /// stitched.
    pub members: Vec<usize>,
    pub tool: Option<Sym>,
    pub tool_call_id: Option<String>,
    pub arguments_digest: Option<String>,
    /// `isError` as observed (None = no span carried the result or an error classification).
    pub is_error: Option<bool>,
    /// `structuredContent` present (None = not observable).
    pub has_structured_content: Option<bool>,
    /// The result is exactly one text block holding a JSON object.
    pub text_is_json_object: Option<bool>,
    /// `input_required` seen on the result.
    pub input_required: bool,
    /// The MCP session (2025-11-25 and earlier); stateless revisions (2026-07-28) have none, and
    /// nothing groups by it: calls are grouped by conversation, then agent run, then trace
    /// ([`super::Model::call_scope`]).
    pub session_id: Option<Sym>,
    pub request_id: Option<Sym>,
    /// The JSON-RPC error code the call failed with (`rpc.response.status_code`, or an integer
    /// `error.type`), if a span recorded one: a protocol error, not a tool error (`isError`).
    pub jsonrpc_error: Option<String>,
    pub start_ns: i64,
    pub end_ns: i64,
}

impl Call {
    pub fn is_tool(&self) -> bool {
        self.kind == CallKind::Tool
    }
    pub fn method(&self) -> &str {
        match &self.kind {
            CallKind::Tool => "tools/call",
            CallKind::Request(m) => m,
        }
    }
    /// The method's place in the protocol revisions (new in 2026-07-28, deprecated by it, or in
    /// both); None for a method the registry does not list.
    pub fn method_status(&self) -> Option<mcp_methods::Status> {
        mcp_methods::method(self.method()).map(|m| m.status)
    }
}

/// Whether a span takes part in a call, and of which kind.
pub fn call_kind_of(s: &SpanRow) -> Option<CallKind> {
    if s.is_execute_tool() || s.method_is("tools/call") {
        return Some(CallKind::Tool);
    }
    // Notifications are answered by nothing and carry no context: never calls. Both revisions'
    // requests are (2025-11-25's `initialize`, `ping`; 2026-07-28's `server/discover`, the
    // long-lived `subscriptions/listen`), classified by `schemas::mcp_methods`.
    match s.mcp_method.as_deref() {
        Some(m) if !mcp_methods::is_notification(m) => Some(CallKind::Request(m.to_string())),
        _ => None,
    }
}

/// Finds the anchor of span `i` (which takes part in a call of kind `kind`): walking up the
/// in-trace parents, the nearest `execute_tool` for tool calls, else the topmost span of the same
/// call kind within a contiguous chain of call spans and transport spans.
pub fn anchor_of(
    spans: &[SpanRow],
    parent: &[Option<usize>],
    roles: &[Option<McpRole>],
    i: usize,
    kind: &CallKind,
) -> usize {
    if spans[i].is_execute_tool() || spans[i].is_execute_tool_with_mcp() {
        return i;
    }
    let mut best = i;
    let mut cur = parent[i];
    let mut steps = 0;
    while let Some(p) = cur {
        steps += 1;
        if steps > 64 {
            break;
        }
        let ps = &spans[p];
        if *kind == CallKind::Tool && (ps.is_execute_tool() || ps.is_execute_tool_with_mcp()) {
            return p;
        }
        match call_kind_of(ps) {
            Some(k) if &k == kind => {
                // A client span above a server span of the same request is its caller; the same
                // applies to nested spans of one side (Traceloop's `mcp.server` > `{tool}.tool`).
                if same_tool(ps, &spans[i]) {
                    best = p;
                }
            }
            Some(_) => break,
            None => {
                // Transport spans (no method) between client and server: keep walking, but not
                // past the agent / model spans that own the call.
                if ps.is_agent_run() || ps.is_model_call() || roles[p].is_some() {
                    break;
                }
            }
        }
        cur = parent[p];
    }
    best
}

fn same_tool(a: &SpanRow, b: &SpanRow) -> bool {
    match (&a.tool_name, &b.tool_name) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// Folds one span's facts into the call.
pub fn absorb(call: &mut Call, s: &SpanRow) {
    if call.tool.is_none() {
        call.tool.clone_from(&s.tool_name);
    }
    if call.tool_call_id.is_none() {
        call.tool_call_id.clone_from(&s.tool_call_id);
    }
    if call.arguments_digest.is_none() {
        call.arguments_digest.clone_from(&s.arguments_digest);
    }
    if call.session_id.is_none() {
        if let Some(id) = s.mcp_session_id() {
            call.session_id = Some(id.clone());
        }
    }
    if call.request_id.is_none() {
        call.request_id.clone_from(&s.jsonrpc_request_id);
    }
    let protocol_error = s.protocol_error();
    if call.jsonrpc_error.is_none() {
        call.jsonrpc_error = protocol_error.map(str::to_string);
    }
    // An MCP tools/call span with status ERROR and no other classification (no error.type, no
    // JSON-RPC error code) is how a library that records no result shows a tool error (mcpcat).
    // A JSON-RPC error is the other side of the split: the request failed as a protocol error,
    // so there is no result and no `isError: true` (an observed "not a tool error").
    // A host's `execute_tool` that ended in ERROR with an exception class for `error.type` (as the
    // GenAI conventions allow: AutoGen records `Exception` for an `isError` result it raised) is
    // a failed call too, unless the class names a transport failure (a timeout, a lost
    // connection), which is not the tool's answer.
    let failed = s
        .reports_tool_error()
        .or_else(|| {
            (s.method_is("tools/call")
                && s.status() == super::span::StatusCode::Error
                && s.error_type.is_none()
                && s.rpc_response_status_code().is_none())
            .then_some(true)
        })
        .or_else(|| {
            (s.is_execute_tool()
                && s.status() == super::span::StatusCode::Error
                && protocol_error.is_none()
                && s.error_type
                    .as_deref()
                    .is_some_and(|e| !is_transport_error(e)))
            .then_some(true)
        })
        .or_else(|| protocol_error.map(|_| false));
    call.is_error = merge_true_wins(call.is_error, failed);
    call.has_structured_content =
        merge_true_wins(call.has_structured_content, s.result_has_structured_content);
    call.text_is_json_object =
        merge_true_wins(call.text_is_json_object, s.result_text_is_json_object);
    if s.result_type.as_deref() == Some("input_required") {
        call.input_required = true;
    }
}

/// An `error.type` that names a transport failure rather than the tool's answer.
fn is_transport_error(error_type: &str) -> bool {
    let e = error_type.to_ascii_lowercase();
    [
        "timeout",
        "connect",
        "network",
        "unavailable",
        "transport",
        "cancel",
    ]
    .iter()
    .any(|w| e.contains(w))
}

/// Observed `true` anywhere wins; otherwise an observed `false`; otherwise not observed.
pub fn merge_true_wins(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), _) | (_, Some(false)) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::span::{SpanId, StatusCode, StatusField, TraceId};
    use super::super::{Model, SpanRow};

    /// A host `execute_tool` that ended in ERROR: failed when `error.type` is the exception class
    /// of the tool's answer, unknown when it names a transport failure or is absent.
    #[test]
    fn an_execute_tool_error_with_an_exception_class_is_a_failed_call() {
        let call = |error_type: Option<&str>| {
            let span = SpanRow {
                trace_id: TraceId([1; 16]),
                span_id: SpanId([2; 8]),
                operation_name: Some("execute_tool".into()),
                tool_name: Some("lookup_supplier".into()),
                status: StatusField(StatusCode::Error),
                error_type: error_type.map(Into::into),
                end_ns: 10,
                ..SpanRow::default()
            };
            let model = Model::build(vec![span]);
            let (_, c) = model.tool_calls().next().expect("one call");
            c.is_error
        };
        assert_eq!(call(Some("Exception")), Some(true));
        assert_eq!(call(Some("MCP_TOOL_ERROR")), Some(true));
        assert_eq!(call(Some("tool_error")), Some(true));
        assert_eq!(call(Some("httpx.ReadTimeout")), None);
        assert_eq!(call(Some("ConnectionResetError")), None);
        assert_eq!(call(None), None);
    }
}
