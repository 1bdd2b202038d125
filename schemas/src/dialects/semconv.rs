//! # `semconv` — the OpenTelemetry semantic conventions (the target names)
//!
//! GenAI (`gen_ai.*`, development status), MCP (`mcp.*`) and JSON-RPC / RPC / network / error
//! attributes exactly as the conventions name them. Also what the official MCP SDKs (Python v2,
//! C#) and FastMCP emit, so those dialects only add span-name fallbacks. Listed first in the
//! registry, so these names win whenever a span carries both them and a dialect's name.
//!
//! The mappings and content sources are not written here: they are derived from the column table
//! ([`crate::columns`]), which names the semconv attribute of every lifted column and the
//! attribute and role of every content column, so adding a column never means editing this file.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::columns::select_columns;

pub(super) static SEMCONV: Dialect = Dialect {
    id: "semconv",
    description:
        "OpenTelemetry semantic conventions for GenAI and MCP (also the official MCP SDKs)",
    detect: Detect {
        scope_prefixes: &[],
        markers: &[
            "gen_ai.operation.name",
            "gen_ai.provider.name",
            "gen_ai.tool.name",
            "gen_ai.tool.call.id",
            "gen_ai.conversation.id",
            "gen_ai.agent.name",
            "gen_ai.request.model",
            "gen_ai.prompt.name",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
            "gen_ai.tool.definitions",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "mcp.method.name",
            "mcp.session.id",
            "mcp.protocol.version",
            "mcp.resource.uri",
            "jsonrpc.request.id",
        ],
    },
    // Every column the column table lifts from a semconv attribute, in column order.
    mappings: select_columns!(
        Mapping,
        Mapping::attr("", ""),
        |c| match c.semconv_attribute() {
            Some(attribute) => Some(Mapping::attr(attribute, c.name)),
            None => None,
        }
    ),
    // Every content column's attribute, in column order.
    content: select_columns!(
        ContentSource,
        ContentSource {
            attr: "",
            role: ContentRole::Opaque
        },
        |c| match c.content() {
            Some((attr, role)) => Some(ContentSource { attr, role }),
            None => None,
        }
    ),
};
