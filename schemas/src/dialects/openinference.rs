//! # `openinference` — Arize OpenInference
//!
//! The MCP instrumentation only propagates context; tool spans from the framework
//! instrumentations carry `tool.name` and the payloads in `input.value` / `output.value`.
//!
//! An MCP server's tools wrapped with openinference-core's `traceTool` give an INTERNAL span
//! named `{tool}` with `openinference.span.kind=TOOL` whose `input.value` is the handler's
//! arguments *and* the MCP SDK's request-handler `extra` (`[args, {"requestId", "_meta",
//! "signal"}]`). That `extra` is what makes it an MCP `tools/call` handled by a server, so the
//! method, the tool (the span name) and the JSON-RPC request id are lifted only when it is there:
//! a TOOL span of an agent framework in the host stays a plain tool span.

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

/// The MCP request handler's `extra` in a TOOL span's recorded input.
const MCP_HANDLER: Option<Condition> =
    Some(Condition::JsonPointerExists("input.value", "/1/requestId"));

pub(super) static OPENINFERENCE: Dialect = Dialect {
    id: "openinference",
    description: "Arize OpenInference instrumentations",
    detect: Detect {
        scope_prefixes: &["openinference"],
        markers: &["openinference.span.kind", "input.value", "output.value"],
    },
    mappings: &[
        Mapping::attr("tool.name", col::GEN_AI_TOOL_NAME),
        Mapping {
            source: Source::SpanName("{tool}"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: MCP_HANDLER,
        },
        Mapping {
            source: Source::Attr("input.value"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Constant("tools/call"),
            when: MCP_HANDLER,
        },
        Mapping {
            source: Source::Attr("input.value"),
            target: col::JSONRPC_REQUEST_ID,
            transform: Transform::JsonPointer("/1/requestId"),
            when: MCP_HANDLER,
        },
    ],
    content: &[
        ContentSource {
            attr: "input.value",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "output.value",
            role: ContentRole::ToolResult,
        },
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn mcp_server_tool_spans_by_their_handler_extra() {
        let got = lifted(
            "openinference-core",
            "get_stock_level",
            &[
                ("openinference.span.kind", "TOOL"),
                (
                    "input.value",
                    r#"[{"sku":"SKU-1001"},{"signal":{},"_meta":{},"requestId":2}]"#,
                ),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("get_stock_level")),
                (col::JSONRPC_REQUEST_ID, Some("2")),
            ],
        );
        // a framework tool span in the host: no MCP handler, so not an MCP span
        let got = lifted(
            "openinference.instrumentation.langchain",
            "search",
            &[
                ("openinference.span.kind", "TOOL"),
                ("tool.name", "search"),
                ("input.value", r#"{"query":"x"}"#),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, None),
                (col::JSONRPC_REQUEST_ID, None),
                (col::GEN_AI_TOOL_NAME, Some("search")),
            ],
        );
    }
}
