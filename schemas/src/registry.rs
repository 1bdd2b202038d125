//! The attribute registry: the semantic-convention (and seed-custom) attribute names tripline
//! knows, their value type, the column each lifts into, and the deprecated aliases with their
//! replacements.
//!
//! The analyzer's TL007 (deprecated-attribute) reads [`deprecated_aliases`] and TL015
//! (semconv-violation) reads [`attributes`]; the semconv dialect's mappings are checked against
//! this table by a test, so the two cannot drift apart.

use crate::schema::col;

/// The value type an attribute is specified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrType {
    String,
    Int,
    Bool,
    StringArray,
    /// A string holding JSON (content attributes).
    Json,
}

/// Where an attribute comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// OpenTelemetry semantic conventions (GenAI / MCP / RPC / general).
    Semconv,
    /// Custom names used by the seed scenarios (no convention exists).
    Custom,
}

/// One known attribute.
#[derive(Debug, Clone, Copy)]
pub struct AttributeDef {
    /// Attribute name.
    pub name: &'static str,
    /// Specified value type.
    pub ty: AttrType,
    /// Column it lifts (or, for content, moves) into.
    pub column: Option<&'static str>,
    /// Content (opt-in, possibly sensitive, stored in its own column).
    pub content: bool,
    /// Semconv or custom.
    pub origin: Origin,
}

/// A deprecated attribute name and the name that replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeprecatedAlias {
    /// The deprecated name (a trailing `.*` / `.N.*` marks an indexed family).
    pub name: &'static str,
    /// The replacement.
    pub replacement: &'static str,
    /// Column the deprecated name is still lifted into, if any.
    pub column: Option<&'static str>,
    /// True for names that were only ever drafts of the MCP conventions (`mcp.tool.name`,
    /// `mcp.request.id`, `mcp.transport`), still emitted by Traceloop and Sentry; a rule may treat
    /// them more leniently than names a released convention deprecated.
    pub draft: bool,
}

const fn a(name: &'static str, ty: AttrType, column: &'static str) -> AttributeDef {
    AttributeDef {
        name,
        ty,
        column: Some(column),
        content: false,
        origin: Origin::Semconv,
    }
}
const fn content(name: &'static str, column: &'static str) -> AttributeDef {
    AttributeDef {
        name,
        ty: AttrType::Json,
        column: Some(column),
        content: true,
        origin: Origin::Semconv,
    }
}
const fn custom(name: &'static str, column: &'static str) -> AttributeDef {
    AttributeDef {
        name,
        ty: AttrType::String,
        column: Some(column),
        content: false,
        origin: Origin::Custom,
    }
}

use AttrType::{Int, String as Str, StringArray};

static ATTRIBUTES: &[AttributeDef] = &[
    a("gen_ai.operation.name", Str, col::GEN_AI_OPERATION_NAME),
    a("gen_ai.provider.name", Str, col::GEN_AI_PROVIDER_NAME),
    a("gen_ai.request.model", Str, col::GEN_AI_REQUEST_MODEL),
    a("gen_ai.response.model", Str, col::GEN_AI_RESPONSE_MODEL),
    a("gen_ai.response.id", Str, col::GEN_AI_RESPONSE_ID),
    a(
        "gen_ai.response.finish_reasons",
        StringArray,
        col::GEN_AI_RESPONSE_FINISH_REASONS,
    ),
    a(
        "gen_ai.usage.input_tokens",
        Int,
        col::GEN_AI_USAGE_INPUT_TOKENS,
    ),
    a(
        "gen_ai.usage.output_tokens",
        Int,
        col::GEN_AI_USAGE_OUTPUT_TOKENS,
    ),
    a(
        "gen_ai.usage.cache_read.input_tokens",
        Int,
        col::GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    ),
    a(
        "gen_ai.usage.cache_creation.input_tokens",
        Int,
        col::GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    ),
    a(
        "gen_ai.usage.reasoning.output_tokens",
        Int,
        col::GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    ),
    a("gen_ai.conversation.id", Str, col::GEN_AI_CONVERSATION_ID),
    a("gen_ai.agent.name", Str, col::GEN_AI_AGENT_NAME),
    a("gen_ai.agent.id", Str, col::GEN_AI_AGENT_ID),
    a("gen_ai.tool.name", Str, col::GEN_AI_TOOL_NAME),
    a("gen_ai.tool.call.id", Str, col::GEN_AI_TOOL_CALL_ID),
    a("gen_ai.tool.type", Str, col::GEN_AI_TOOL_TYPE),
    a("gen_ai.tool.description", Str, col::GEN_AI_TOOL_DESCRIPTION),
    a("gen_ai.prompt.name", Str, col::GEN_AI_PROMPT_NAME),
    a("mcp.method.name", Str, col::MCP_METHOD_NAME),
    a("mcp.session.id", Str, col::MCP_SESSION_ID),
    a("mcp.protocol.version", Str, col::MCP_PROTOCOL_VERSION),
    a("mcp.resource.uri", Str, col::MCP_RESOURCE_URI),
    a("jsonrpc.request.id", Str, col::JSONRPC_REQUEST_ID),
    a(
        "rpc.response.status_code",
        Str,
        col::RPC_RESPONSE_STATUS_CODE,
    ),
    a("network.transport", Str, col::NETWORK_TRANSPORT),
    a("error.type", Str, col::ERROR_TYPE),
    content(
        "gen_ai.tool.call.arguments",
        col::GEN_AI_TOOL_CALL_ARGUMENTS,
    ),
    content("gen_ai.tool.call.result", col::GEN_AI_TOOL_CALL_RESULT),
    content("gen_ai.tool.definitions", col::GEN_AI_TOOL_DEFINITIONS),
    content("gen_ai.input.messages", col::GEN_AI_INPUT_MESSAGES),
    content("gen_ai.output.messages", col::GEN_AI_OUTPUT_MESSAGES),
    content(
        "gen_ai.system_instructions",
        col::GEN_AI_SYSTEM_INSTRUCTIONS,
    ),
    custom("skill.name", col::SKILL_NAME),
    custom("skill.version", col::SKILL_VERSION),
    custom("skill.invocation_source", col::SKILL_INVOCATION_SOURCE),
    custom("guardrail.name", col::GUARDRAIL_NAME),
    custom("guardrail.decision", col::GUARDRAIL_DECISION),
    custom("atlas.mcp.transport", col::MCP_TRANSPORT),
];

static DEPRECATED: &[DeprecatedAlias] = &[
    DeprecatedAlias {
        name: "gen_ai.system",
        replacement: "gen_ai.provider.name",
        column: Some(col::GEN_AI_PROVIDER_NAME),
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.usage.prompt_tokens",
        replacement: "gen_ai.usage.input_tokens",
        column: Some(col::GEN_AI_USAGE_INPUT_TOKENS),
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.usage.completion_tokens",
        replacement: "gen_ai.usage.output_tokens",
        column: Some(col::GEN_AI_USAGE_OUTPUT_TOKENS),
        draft: false,
    },
    DeprecatedAlias {
        name: "mcp.tool.name",
        replacement: "gen_ai.tool.name",
        column: Some(col::GEN_AI_TOOL_NAME),
        draft: true,
    },
    DeprecatedAlias {
        name: "mcp.request.id",
        replacement: "jsonrpc.request.id",
        column: Some(col::JSONRPC_REQUEST_ID),
        draft: true,
    },
    DeprecatedAlias {
        name: "mcp.transport",
        replacement: "network.transport",
        column: Some(col::MCP_TRANSPORT),
        draft: true,
    },
    DeprecatedAlias {
        name: "gen_ai.prompt.N.*",
        replacement: "gen_ai.input.messages",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.completion.N.*",
        replacement: "gen_ai.output.messages",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.prompt",
        replacement: "gen_ai.input.messages",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.completion",
        replacement: "gen_ai.output.messages",
        column: None,
        draft: false,
    },
];

/// Every known (current) attribute.
pub fn attributes() -> &'static [AttributeDef] {
    ATTRIBUTES
}

/// Looks up a known attribute by name.
pub fn attribute(name: &str) -> Option<&'static AttributeDef> {
    ATTRIBUTES.iter().find(|d| d.name == name)
}

/// Deprecated attribute names and their replacements.
pub fn deprecated_aliases() -> &'static [DeprecatedAlias] {
    DEPRECATED
}

/// The deprecated alias `name` falls under, if any (`gen_ai.prompt.0.content` ->
/// `gen_ai.prompt.N.*`).
pub fn deprecated_alias(name: &str) -> Option<&'static DeprecatedAlias> {
    DEPRECATED
        .iter()
        .find(|d| match d.name.strip_suffix(".N.*") {
            Some(prefix) => name
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| {
                    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                    digits > 0 && rest[digits..].starts_with('.')
                }),
            None => d.name == name,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::{dialect, Source, Transform};

    #[test]
    fn registry_agrees_with_the_dialects() {
        // every non-content semconv attribute is mapped by the semconv dialect to its column
        let semconv = dialect("semconv").expect("semconv dialect");
        for def in ATTRIBUTES
            .iter()
            .filter(|d| !d.content && d.origin == Origin::Semconv)
        {
            let mapped = semconv.mappings.iter().any(|m| {
                matches!(m.source, Source::Attr(n) if n == def.name)
                    && matches!(m.transform, Transform::Identity)
                    && Some(m.target) == def.column
            });
            assert!(mapped, "{} is not mapped by the semconv dialect", def.name);
        }
        for m in semconv.mappings {
            if let Source::Attr(n) = m.source {
                assert!(
                    attribute(n).is_some(),
                    "semconv maps {n}, which the registry lacks"
                );
            }
        }
        // content attributes are the semconv dialect's content sources
        for def in ATTRIBUTES.iter().filter(|d| d.content) {
            assert!(
                semconv.content.iter().any(|c| c.attr == def.name),
                "{}",
                def.name
            );
        }
        // every deprecated alias with a column is mapped by the deprecated dialect
        let deprecated = dialect("semconv-deprecated").expect("deprecated dialect");
        for alias in DEPRECATED.iter().filter(|d| d.column.is_some()) {
            assert!(
                deprecated
                    .mappings
                    .iter()
                    .any(|m| matches!(m.source, Source::Attr(n) if n == alias.name)
                        && Some(m.target) == alias.column),
                "{}",
                alias.name
            );
        }
    }

    #[test]
    fn deprecated_lookup() {
        assert_eq!(
            deprecated_alias("gen_ai.system").map(|d| d.replacement),
            Some("gen_ai.provider.name")
        );
        assert_eq!(
            deprecated_alias("gen_ai.prompt.0.content").map(|d| d.replacement),
            Some("gen_ai.input.messages")
        );
        assert_eq!(deprecated_alias("gen_ai.prompt.name"), None);
        assert_eq!(deprecated_alias("gen_ai.provider.name"), None);
    }
}
