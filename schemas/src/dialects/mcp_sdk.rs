//! # `mcp-sdk` — the official MCP SDKs' built-in tracing (Python SDK v2, C# SDK) and FastMCP
//!
//! These emit the semantic-convention attributes (`mcp.method.name`, `jsonrpc.request.id`,
//! `gen_ai.tool.name` on the server's `tools/call` span), which the `semconv` entry maps. The
//! Python SDK's *client* span carries no tool name, only the name `MCP send tools/call {tool}`;
//! this dialect lifts the method and tool (or prompt) from that name so a client span can be
//! matched with its server span.

use super::{Condition, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

pub(super) static MCP_SDK: Dialect = Dialect {
    id: "mcp-sdk",
    description: "official MCP SDK tracing (Python SDK v2 `mcp-python-sdk`, C# SDK, FastMCP)",
    detect: Detect {
        scope_prefixes: &[
            "mcp-python-sdk",
            "ModelContextProtocol",
            "fastmcp",
            "FastMCP",
        ],
        markers: &[],
    },
    mappings: &[
        Mapping {
            source: Source::SpanName("MCP send {method}"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP send {method} {name}"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Capture("method"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP send tools/call {tool}"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: None,
        },
        Mapping {
            source: Source::SpanName("MCP send prompts/get {prompt}"),
            target: col::GEN_AI_PROMPT_NAME,
            transform: Transform::Capture("prompt"),
            when: None,
        },
        // The server span is named `tools/call {tool}`; the SDK also sets gen_ai.tool.name, this
        // only covers SDK versions that do not.
        Mapping {
            source: Source::SpanName("tools/call {tool}"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: Some(Condition::AttrEquals("mcp.method.name", "tools/call")),
        },
    ],
    content: &[],
};
