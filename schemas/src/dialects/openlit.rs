//! # `openlit` — OpenLIT's MCP instrumentation
//!
//! Uses its own names: `mcp.method` (method), `mcp.tool.name`, `mcp.message_id` (JSON-RPC id),
//! `mcp.transport.type`; payloads in `mcp.tool.arguments`, `mcp.tool.result` and `mcp.result`.
//! Tool errors are only visible as status ERROR.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::schema::col;

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
        ],
    },
    mappings: &[
        Mapping::attr("mcp.method", col::MCP_METHOD_NAME),
        Mapping::attr("mcp.tool.name", col::GEN_AI_TOOL_NAME),
        Mapping::attr("mcp.message_id", col::JSONRPC_REQUEST_ID),
        Mapping::attr("mcp.transport.type", col::MCP_TRANSPORT),
    ],
    content: &[
        ContentSource {
            attr: "mcp.tool.arguments",
            role: ContentRole::ToolArguments,
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
