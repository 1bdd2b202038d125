//! # `mcp-http` — MCP's standard HTTP headers, captured on HTTP spans
//!
//! The Streamable HTTP transport mirrors the JSON-RPC method and the tool, prompt or resource it
//! names into request headers (`Mcp-Method`, `Mcp-Name`; SEP-2243, MCP 2026-07-28) so that
//! gateways and observability tools can see them without parsing the body. An HTTP
//! instrumentation told to capture them records them as `http.request.header.<name>`: a string
//! array, the name lower-cased, with `-` kept (current HTTP conventions, OpenTelemetry JS) or
//! turned into `_` (OpenTelemetry Python's `OTEL_INSTRUMENTATION_HTTP_CAPTURE_HEADERS_*`). A
//! value that is not plain printable ASCII arrives wrapped as `=?base64?…?=` and is decoded.
//!
//! Why read them: an MCP server with only HTTP instrumentation (no MCP spans of its own) is then
//! still seen as an MCP server, so broken propagation into it is reported instead of unobserved.
//! When the same process also has an MCP span of that request, the HTTP span is only the
//! request's transport: the analyzer's model drops the header facts from it
//! (`analyze::model::transport`), so one request never counts twice. Listed last: a name any
//! MCP instrumentation put on the same span wins.

use super::{Condition, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

/// `http.request.header.<name>` in both spellings of the header name.
macro_rules! header_mappings {
    ($($dash:literal / $underscore:literal => $target:expr, $when:expr;)*) => {
        &[$(
            Mapping {
                source: Source::Attr(concat!("http.request.header.", $dash)),
                target: $target,
                transform: Transform::HttpHeader,
                when: $when,
            },
            Mapping {
                source: Source::Attr(concat!("http.request.header.", $underscore)),
                target: $target,
                transform: Transform::HttpHeader,
                when: $when,
            },
        )*]
    };
}

const fn method_is(method: &'static str) -> Option<Condition> {
    Some(Condition::HttpHeaderEquals("mcp-method", method))
}

pub(super) static MCP_HTTP: Dialect = Dialect {
    id: "mcp-http",
    description: "MCP standard HTTP headers (`Mcp-Method`, `Mcp-Name`) captured on HTTP spans",
    detect: Detect {
        scope_prefixes: &[],
        markers: &[
            "http.request.header.mcp-method",
            "http.request.header.mcp_method",
        ],
    },
    mappings: header_mappings! {
        "mcp-method" / "mcp_method" => col::MCP_METHOD_NAME, None;
        "mcp-name" / "mcp_name" => col::GEN_AI_TOOL_NAME, method_is("tools/call");
        "mcp-name" / "mcp_name" => col::GEN_AI_PROMPT_NAME, method_is("prompts/get");
        "mcp-name" / "mcp_name" => col::MCP_RESOURCE_URI, method_is("resources/read");
        "mcp-name" / "mcp_name" => col::MCP_RESOURCE_URI, method_is("resources/subscribe");
        "mcp-name" / "mcp_name" => col::MCP_RESOURCE_URI, method_is("resources/unsubscribe");
        "mcp-session-id" / "mcp_session_id" => col::MCP_SESSION_ID, None;
        "mcp-protocol-version" / "mcp_protocol_version" => col::MCP_PROTOCOL_VERSION, None;
    },
    content: &[],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::lifted;
    use crate::schema::col;

    #[test]
    fn method_and_tool_from_headers_in_either_spelling() {
        let got = lifted(
            "opentelemetry.instrumentation.asgi",
            "POST /mcp",
            &[
                ("http.request.method", "POST"),
                ("http.request.header.mcp_method", "tools/call"),
                ("http.request.header.mcp_name", "adjust_stock"),
            ],
        );
        assert_eq!(got[col::MCP_METHOD_NAME], "tools/call");
        assert_eq!(got[col::GEN_AI_TOOL_NAME], "adjust_stock");
        assert!(!got.contains_key(col::GEN_AI_PROMPT_NAME));

        let got = lifted(
            "@opentelemetry/instrumentation-http",
            "POST",
            &[
                ("http.request.header.mcp-method", "resources/read"),
                ("http.request.header.mcp-name", "inventory://sku/A-1"),
            ],
        );
        assert_eq!(got[col::MCP_METHOD_NAME], "resources/read");
        assert_eq!(got[col::MCP_RESOURCE_URI], "inventory://sku/A-1");
        assert!(!got.contains_key(col::GEN_AI_TOOL_NAME));
    }

    #[test]
    fn base64_wrapped_names_are_decoded() {
        // SEP-2243: non-ASCII values travel as =?base64?<base64 of the UTF-8 bytes>?=
        let got = lifted(
            "x",
            "POST",
            &[
                ("http.request.header.mcp-method", "prompts/get"),
                ("http.request.header.mcp-name", "=?base64?Y2Fmw6k=?="),
            ],
        );
        assert_eq!(got[col::GEN_AI_PROMPT_NAME], "café");
    }

    #[test]
    fn mcp_attributes_on_the_same_span_win() {
        let got = lifted(
            "x",
            "tools/call get_stock_level",
            &[
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "get_stock_level"),
                ("http.request.header.mcp-method", "tools/call"),
                ("http.request.header.mcp-name", "other"),
            ],
        );
        assert_eq!(got[col::GEN_AI_TOOL_NAME], "get_stock_level");
    }
}
