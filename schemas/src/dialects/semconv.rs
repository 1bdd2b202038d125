//! # `semconv` — the OpenTelemetry semantic conventions (the target names)
//!
//! GenAI (`gen_ai.*`, development status), MCP (`mcp.*`) and JSON-RPC / RPC / network / error
//! attributes exactly as the conventions name them. Also what the official MCP SDKs (Python v2,
//! C#) and FastMCP emit, so those dialects only add span-name fallbacks. Listed first in the
//! registry, so these names win whenever a span carries both them and a dialect's name.
//!
//! Content attributes (`gen_ai.tool.call.arguments`, `.result`, `gen_ai.tool.definitions`,
//! `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`) go to their
//! own columns; they are declared in [`crate::registry`], not here.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::schema::col;

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
    mappings: &[
        Mapping::attr("gen_ai.operation.name", col::GEN_AI_OPERATION_NAME),
        Mapping::attr("gen_ai.provider.name", col::GEN_AI_PROVIDER_NAME),
        Mapping::attr("gen_ai.request.model", col::GEN_AI_REQUEST_MODEL),
        Mapping::attr("gen_ai.response.model", col::GEN_AI_RESPONSE_MODEL),
        Mapping::attr("gen_ai.response.id", col::GEN_AI_RESPONSE_ID),
        Mapping::attr(
            "gen_ai.response.finish_reasons",
            col::GEN_AI_RESPONSE_FINISH_REASONS,
        ),
        Mapping::attr("gen_ai.usage.input_tokens", col::GEN_AI_USAGE_INPUT_TOKENS),
        Mapping::attr(
            "gen_ai.usage.output_tokens",
            col::GEN_AI_USAGE_OUTPUT_TOKENS,
        ),
        Mapping::attr(
            "gen_ai.usage.cache_read.input_tokens",
            col::GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
        ),
        Mapping::attr(
            "gen_ai.usage.cache_creation.input_tokens",
            col::GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        ),
        Mapping::attr(
            "gen_ai.usage.reasoning.output_tokens",
            col::GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
        ),
        Mapping::attr("gen_ai.conversation.id", col::GEN_AI_CONVERSATION_ID),
        Mapping::attr("gen_ai.agent.name", col::GEN_AI_AGENT_NAME),
        Mapping::attr("gen_ai.agent.id", col::GEN_AI_AGENT_ID),
        Mapping::attr("gen_ai.tool.name", col::GEN_AI_TOOL_NAME),
        Mapping::attr("gen_ai.tool.call.id", col::GEN_AI_TOOL_CALL_ID),
        Mapping::attr("gen_ai.tool.type", col::GEN_AI_TOOL_TYPE),
        Mapping::attr("gen_ai.tool.description", col::GEN_AI_TOOL_DESCRIPTION),
        Mapping::attr("gen_ai.prompt.name", col::GEN_AI_PROMPT_NAME),
        Mapping::attr("mcp.method.name", col::MCP_METHOD_NAME),
        Mapping::attr("mcp.session.id", col::MCP_SESSION_ID),
        Mapping::attr("mcp.protocol.version", col::MCP_PROTOCOL_VERSION),
        Mapping::attr("mcp.resource.uri", col::MCP_RESOURCE_URI),
        Mapping::attr("jsonrpc.request.id", col::JSONRPC_REQUEST_ID),
        Mapping::attr("rpc.response.status_code", col::RPC_RESPONSE_STATUS_CODE),
        Mapping::attr("network.transport", col::NETWORK_TRANSPORT),
        Mapping::attr("error.type", col::ERROR_TYPE),
    ],
    content: &[
        ContentSource {
            attr: "gen_ai.tool.call.arguments",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "gen_ai.tool.call.result",
            role: ContentRole::ToolResult,
        },
        ContentSource {
            attr: "gen_ai.tool.definitions",
            role: ContentRole::ToolDefinitions,
        },
        ContentSource {
            attr: "gen_ai.input.messages",
            role: ContentRole::Opaque,
        },
        ContentSource {
            attr: "gen_ai.output.messages",
            role: ContentRole::Opaque,
        },
        ContentSource {
            attr: "gen_ai.system_instructions",
            role: ContentRole::Opaque,
        },
    ],
};
