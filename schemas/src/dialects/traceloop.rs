//! # `traceloop` — Traceloop OpenLLMetry (`opentelemetry-instrumentation-mcp`)
//!
//! All spans INTERNAL, scope `opentelemetry.instrumentation.mcp.instrumentation`, no
//! semantic-convention MCP attributes. What it records (verified in 0.62.4 source and in the
//! `traceloop-mcp1` recordings):
//! - client `tools/call` -> span `{tool}.tool` with `traceloop.span.kind=tool`,
//!   `traceloop.entity.name={tool}`, `traceloop.entity.input = {"tool_name","arguments"}`,
//!   `traceloop.entity.output = {"result": <first text block>, "is_error"?}` — so `isError` is
//!   observable there but `structuredContent` is not (the fact stays NULL);
//! - other methods -> `{method}.mcp` with the serialized request / result as entity input/output
//!   (a `tools/list` output holds the full tool list: schemas, annotations);
//! - `ResponseStreamWriter` spans with `mcp.request.id` and, server side, `mcp.response.value` =
//!   the full serialized result (with `structuredContent` and `isError`);
//! - FastMCP server wrapper `mcp.server` whose `mcp.response.value` is a content block list.
//!
//! Tool errors show as status ERROR plus `error.type`, which the semconv entry lifts.

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

pub(super) static TRACELOOP: Dialect = Dialect {
    id: "traceloop",
    description:
        "Traceloop OpenLLMetry instrumentations (opentelemetry-instrumentation-mcp and friends)",
    detect: Detect {
        scope_prefixes: &["opentelemetry.instrumentation.mcp"],
        markers: &["traceloop.*", "mcp.response.value"],
    },
    mappings: &[
        Mapping {
            source: Source::Attr("traceloop.entity.name"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Identity,
            when: Some(Condition::AttrEquals("traceloop.span.kind", "tool")),
        },
        Mapping {
            source: Source::SpanName("{tool}.tool"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("{tool}.tool"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Constant("tools/call"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("{method}.mcp"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
        Mapping::attr("mcp.request.id", col::JSONRPC_REQUEST_ID),
    ],
    content: &[
        ContentSource {
            attr: "traceloop.entity.input",
            role: ContentRole::Request,
        },
        ContentSource {
            attr: "traceloop.entity.output",
            role: ContentRole::Response,
        },
        ContentSource {
            attr: "mcp.response.value",
            role: ContentRole::Response,
        },
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn tool_and_method_spans_by_name() {
        let got = lifted(
            "@traceloop/instrumentation-mcp",
            "adjust_stock.tool",
            &[
                ("traceloop.span.kind", "tool"),
                ("traceloop.entity.name", "adjust_stock"),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("adjust_stock")),
            ],
        );
        let got = lifted(
            "@traceloop/instrumentation-mcp",
            "tools/list.mcp",
            &[("traceloop.entity.output", "{}")],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/list")),
                (col::GEN_AI_TOOL_NAME, None),
            ],
        );
    }
}
