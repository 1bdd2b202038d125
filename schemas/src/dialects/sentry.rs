//! # `sentry` — Sentry's MCP server integration
//!
//! Mostly semantic-convention names (`mcp.method.name`, `mcp.session.id`) plus the drafts
//! `mcp.tool.name`, `mcp.request.id`, `mcp.transport`; arguments one attribute per key
//! (`mcp.request.argument.<key>`), the result content in `mcp.tool.result.content`, and the tool
//! error flag as its own attribute `mcp.tool.result.is_error` (lifted into `result_is_error`).

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::schema::col;

pub(super) static SENTRY: Dialect = Dialect {
    id: "sentry",
    description: "Sentry MCP server instrumentation",
    detect: Detect {
        scope_prefixes: &["@sentry/", "sentry"],
        markers: &[
            "sentry.*",
            "mcp.tool.result.is_error",
            "mcp.request.argument.*",
            "mcp.tool.result.content",
        ],
    },
    mappings: &[
        Mapping::attr("mcp.tool.name", col::GEN_AI_TOOL_NAME),
        Mapping::attr("mcp.request.id", col::JSONRPC_REQUEST_ID),
        Mapping::attr("mcp.transport", col::MCP_TRANSPORT),
        Mapping::attr("mcp.tool.result.is_error", col::RESULT_IS_ERROR),
    ],
    content: &[
        ContentSource {
            attr: "mcp.request.argument.*",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "mcp.tool.result.content",
            role: ContentRole::ToolResult,
        },
    ],
};
