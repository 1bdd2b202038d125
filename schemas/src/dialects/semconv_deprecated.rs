//! # `semconv-deprecated` — names the conventions replaced
//!
//! Still emitted by many instrumentations (Traceloop packages, older OpenLIT, hand-written hosts):
//! `gen_ai.system` (now `gen_ai.provider.name`), `gen_ai.usage.prompt_tokens` /
//! `completion_tokens` (now `input_tokens` / `output_tokens`),
//! `gen_ai.usage.cache_creation.input_tokens` (now `cache_write`, semantic-conventions-genai #440),
//! the MCP drafts `mcp.tool.name`,
//! `mcp.request.id`, `mcp.transport`, and the indexed content attributes `gen_ai.prompt.N.*` /
//! `gen_ai.completion.N.*` (now `gen_ai.input.messages` / `gen_ai.output.messages`), kept raw in
//! `content_attributes`. The replacement table the analyzer's TL007 reads is
//! [`crate::registry::deprecated_aliases`].

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::schema::col;

pub(super) static SEMCONV_DEPRECATED: Dialect = Dialect {
    id: "semconv-deprecated",
    description: "deprecated semantic-convention names (gen_ai.system, prompt/completion tokens, MCP drafts, indexed prompts)",
    detect: Detect {
        scope_prefixes: &[],
        markers: &[
            "gen_ai.system",
            "gen_ai.usage.prompt_tokens",
            "gen_ai.usage.completion_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
            "mcp.tool.name",
            "mcp.request.id",
            "mcp.transport",
            "gen_ai.prompt.#*",
            "gen_ai.completion.#*",
            "gen_ai.prompt",
            "gen_ai.completion",
        ],
    },
    mappings: &[
        Mapping::attr("gen_ai.system", col::GEN_AI_PROVIDER_NAME),
        Mapping::attr("gen_ai.usage.prompt_tokens", col::GEN_AI_USAGE_INPUT_TOKENS),
        Mapping::attr("gen_ai.usage.completion_tokens", col::GEN_AI_USAGE_OUTPUT_TOKENS),
        Mapping::attr(
            "gen_ai.usage.cache_creation.input_tokens",
            col::GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        ),
        Mapping::attr("mcp.tool.name", col::GEN_AI_TOOL_NAME),
        Mapping::attr("mcp.request.id", col::JSONRPC_REQUEST_ID),
        Mapping::attr("mcp.transport", col::MCP_TRANSPORT),
    ],
    content: &[
        ContentSource { attr: "gen_ai.prompt.#*", role: ContentRole::Opaque },
        ContentSource { attr: "gen_ai.completion.#*", role: ContentRole::Opaque },
        ContentSource { attr: "gen_ai.prompt", role: ContentRole::Opaque },
        ContentSource { attr: "gen_ai.completion", role: ContentRole::Opaque },
    ],
};
