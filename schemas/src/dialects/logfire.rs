//! # `logfire` — Pydantic Logfire's `instrument_mcp()`
//!
//! JSON-RPC style: `rpc.system=jsonrpc`, the method in `rpc.method`, and the whole request and
//! response objects as JSON in the `request` / `response` attributes (the tool name and the request
//! id live inside `request`; span names look like `MCP request: tools/call {tool}`). Tool errors
//! are not mapped to span status, so `isError` is only seen inside `response`.

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

pub(super) static LOGFIRE: Dialect = Dialect {
    id: "logfire",
    description: "Pydantic Logfire MCP instrumentation",
    detect: Detect {
        scope_prefixes: &["logfire"],
        markers: &["logfire.*"],
    },
    mappings: &[
        Mapping {
            source: Source::Attr("rpc.method"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Identity,
            when: Some(Condition::AttrEquals("rpc.system", "jsonrpc")),
        },
        Mapping {
            source: Source::Attr("request"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::JsonPointer("/method"),
            when: None,
        },
        Mapping {
            source: Source::Attr("request"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::JsonPointer("/params/name"),
            when: Some(Condition::AttrEquals("rpc.method", "tools/call")),
        },
        Mapping {
            source: Source::Attr("request"),
            target: col::JSONRPC_REQUEST_ID,
            transform: Transform::JsonPointer("/id"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP request: tools/call {tool}"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP request: {method}"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP request: {method} {name}"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
    ],
    content: &[
        ContentSource {
            attr: "request",
            role: ContentRole::Request,
        },
        ContentSource {
            attr: "response",
            role: ContentRole::Response,
        },
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn method_tool_and_id_from_the_request_json() {
        let got = lifted(
            "logfire.mcp",
            "MCP server handle request: tools/call",
            &[
                ("rpc.system", "jsonrpc"),
                ("rpc.method", "tools/call"),
                ("logfire.span_type", "span"),
                (
                    "request",
                    r#"{"method":"tools/call","params":{"name":"lookup_supplier","arguments":{}},"jsonrpc":"2.0","id":2}"#,
                ),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("lookup_supplier")),
                (col::JSONRPC_REQUEST_ID, Some("2")),
            ],
        );
    }
}
