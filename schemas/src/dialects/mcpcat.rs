//! # `mcpcat` — mcpcat (renamed agentcat), server-side MCP analytics exported as OTLP
//!
//! One SERVER span per MCP event, named `mcp:{method}` (`mcp:tools/call`, `mcp:tools/list`,
//! `mcp:initialize`), with the method again in `mcp.event_type`, the tool in
//! `mcp.resource_name`, its own session id in `mcp.session_id`. It ignores `params._meta` and
//! makes its own trace ids, so its spans are parentless server spans: recognising them as MCP
//! `tools/call` server spans is what lets TL004 count the broken propagation. No arguments and no
//! result are recorded; a tool error shows as status ERROR.

use super::{Condition, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

pub(super) static MCPCAT: Dialect = Dialect {
    id: "mcpcat",
    description: "mcpcat / agentcat server-side MCP event tracking",
    detect: Detect {
        scope_prefixes: &["mcpcat", "agentcat"],
        markers: &["mcp.event_type"],
    },
    mappings: &[
        Mapping {
            source: Source::SpanName("mcp:{method}"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
        Mapping {
            source: Source::Attr("mcp.resource_name"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Identity,
            when: Some(Condition::AttrEquals("mcp.event_type", "mcp:tools/call")),
        },
        Mapping::attr("mcp.session_id", col::MCP_SESSION_ID),
    ],
    content: &[],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn server_spans_by_name_and_attributes() {
        let got = lifted(
            "mcpcat",
            "mcp:tools/call",
            &[
                ("mcp.event_type", "mcp:tools/call"),
                ("mcp.resource_name", "get_stock_level"),
                ("mcp.session_id", "ses_1"),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("get_stock_level")),
                (col::MCP_SESSION_ID, Some("ses_1")),
            ],
        );
        // `initialize` names a placeholder resource, which is not a tool
        let got = lifted(
            "mcpcat",
            "mcp:initialize",
            &[
                ("mcp.event_type", "mcp:initialize"),
                ("mcp.resource_name", "Unknown Tool Name"),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("initialize")),
                (col::GEN_AI_TOOL_NAME, None),
            ],
        );
    }
}
