//! # `openlit` — OpenLIT's MCP instrumentation
//!
//! Uses its own names: `mcp.operation.name` (`tools_call`, `tools_list`, ...: the method with `_`
//! for `/`), `mcp.tool.name`, `mcp.message_id` (JSON-RPC id), `mcp.transport.type`. Its
//! `mcp.method` is not the method: the JS SDK instrumentation (`openlit` 1.15) puts the tool name
//! there for a `tools/call` and `unknown` for a `tools/list`, so the operation name is mapped
//! first. Payloads: `mcp.tool.arguments`, `mcp.tool.result` (the content blocks), `mcp.result`,
//! and the whole JSON-RPC result in `mcp.response.payload` (a `CallToolResult` with
//! `structuredContent` and `isError`; a `tools/list` result with annotations and outputSchema),
//! the request in `mcp.request.payload`. A tool error leaves the status UNSET: `isError` is only
//! seen in the response payload.
//!
//! The Python SDK instrumentation (`openlit` 1.45) wraps the MCP SDK's functions: its `mcp.method`
//! is the function's name (`call_tool`, `list_tools`, `send_request`, `run`), so `mcp.method` is
//! mapped only when it is an MCP method: `transport_request`, `server_run` and `session_init`
//! spans are transport, not requests. At start-up it records FastMCP's registration of each
//! handler as a parentless SERVER `mcp tools/call` span whose request payload is only
//! `{"method": "call_tool"}`: not a request (it would be an orphaned server span to TL004). The
//! tool of a Python `tools_call` is the first of the function's recorded arguments
//! (`mcp.request.payload` `{"params": {"args": [tool, {…}]}}`; `mcp.tool.name` is set only when
//! the tool is passed by keyword). The server's executions of a tool are CLIENT spans
//! under a session-long `server/run`: the analyzer takes them for the server's side by their
//! process (`analyze/src/model/roles.rs`) and their session span for no request's entry
//! (`stitch.rs`).

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

/// `mcp.operation.name` value -> MCP method.
const fn operation(value: &'static str, method: &'static str) -> Mapping {
    Mapping::when_equals(
        "mcp.operation.name",
        value,
        col::MCP_METHOD_NAME,
        Transform::Constant(method),
    )
}

/// What OpenLIT's Python instrumentation records for `call_tool` when FastMCP registers a
/// tool's handler at start-up (a SERVER span, no arguments, response `{}`): not a request.
const PY_REGISTRATION: &str = r#"{"method": "call_tool"}"#;

pub(super) static OPENLIT: Dialect = Dialect {
    id: "openlit",
    description: "OpenLIT MCP instrumentation",
    detect: Detect {
        scope_prefixes: &["openlit"],
        markers: &[
            "mcp.method",
            "mcp.message_id",
            "mcp.transport.type",
            "mcp.tool.arguments",
            "mcp.operation.name",
        ],
    },
    mappings: &[
        Mapping {
            source: Source::Attr("mcp.operation.name"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Constant("tools/call"),
            when: Some(Condition::All(&[
                Condition::AttrEquals("mcp.operation.name", "tools_call"),
                Condition::AttrNotEquals("mcp.request.payload", PY_REGISTRATION),
            ])),
        },
        operation("tools_list", "tools/list"),
        operation("resources_read", "resources/read"),
        operation("resources_list", "resources/list"),
        operation("prompts_get", "prompts/get"),
        operation("prompts_list", "prompts/list"),
        operation("initialize", "initialize"),
        Mapping {
            source: Source::Attr("mcp.method"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Identity,
            when: Some(Condition::AttrIsMcpMethod("mcp.method")),
        },
        Mapping::attr("mcp.tool.name", col::GEN_AI_TOOL_NAME),
        // Python: `session.call_tool(name, arguments)` recorded as the function's arguments.
        Mapping {
            source: Source::Attr("mcp.request.payload"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::JsonPointer("/params/args/0"),
            when: Some(Condition::AttrEquals("mcp.operation.name", "tools_call")),
        },
        Mapping::attr("mcp.message_id", col::JSONRPC_REQUEST_ID),
        Mapping::attr("mcp.transport.type", col::MCP_TRANSPORT),
    ],
    content: &[
        ContentSource {
            attr: "mcp.tool.arguments",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "mcp.response.payload",
            role: ContentRole::Response,
        },
        ContentSource {
            attr: "mcp.request.payload",
            role: ContentRole::Request,
        },
        ContentSource {
            attr: "mcp.tool.result",
            role: ContentRole::ToolResult,
        },
        ContentSource {
            attr: "mcp.result",
            role: ContentRole::Response,
        },
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn operation_name_wins_over_its_mcp_method() {
        let got = lifted(
            "openlit",
            "mcp tools/call",
            &[
                ("mcp.operation.name", "tools_call"),
                ("mcp.method", "lookup_supplier"),
                ("mcp.tool.name", "lookup_supplier"),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("lookup_supplier")),
            ],
        );
        let got = lifted(
            "openlit",
            "mcp tools/list",
            &[
                ("mcp.operation.name", "tools_list"),
                ("mcp.method", "unknown"),
            ],
        );
        assert_lifted(&got, &[(col::MCP_METHOD_NAME, Some("tools/list"))]);
        // an older span with only `mcp.method`
        let got = lifted("openlit", "x", &[("mcp.method", "tools/call")]);
        assert_lifted(&got, &[(col::MCP_METHOD_NAME, Some("tools/call"))]);
    }

    #[test]
    fn python_sdk_function_names_are_not_methods() {
        let got = lifted(
            "openlit.instrumentation.mcp",
            "mcp tools/call",
            &[
                ("mcp.operation.name", "tools_call"),
                ("mcp.method", "call_tool"),
                (
                    "mcp.request.payload",
                    r#"{"method": "call_tool", "params": {"args": ["lookup_supplier", {"sku": "SKU-404"}]}}"#,
                ),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("lookup_supplier")),
            ],
        );
        // a handler's registration at start-up: no request
        let got = lifted(
            "openlit.instrumentation.mcp",
            "mcp tools/call",
            &[
                ("mcp.operation.name", "tools_call"),
                ("mcp.method", "call_tool"),
                ("mcp.request.payload", r#"{"method": "call_tool"}"#),
                ("mcp.response.payload", "{}"),
            ],
        );
        assert_lifted(&got, &[(col::MCP_METHOD_NAME, None)]);
        // the transport span below it: no method, so not a request of its own
        let got = lifted(
            "openlit.instrumentation.mcp",
            "mcp transport/request",
            &[
                ("mcp.operation.name", "transport_request"),
                ("mcp.method", "send_request"),
            ],
        );
        assert_lifted(
            &got,
            &[(col::MCP_METHOD_NAME, None), (col::GEN_AI_TOOL_NAME, None)],
        );
    }
}
