//! The attribute registry: the semantic-convention (and seed-custom) attribute names tripline
//! knows, their value type, the column each lifts into, and the deprecated aliases with their
//! replacements.
//!
//! The current attributes are not listed here: they are derived from the column table
//! ([`crate::columns`]), which names the attribute each lifted or content column is filled from.
//!
//! GenAI names resolve against the GenAI conventions' own registry, pinned in
//! [`crate::genai_registry`] (tests check the two agree), not core semconv's deprecation of the
//! `gen_ai.*` names it handed over.
//!
//! The analyzer's TL007 (deprecated-attribute) reads [`deprecated_aliases`] and TL015
//! (semconv-violation) reads [`attributes`]; the semconv dialect's mappings are checked against
//! this table by a test, so the two cannot drift apart.

use crate::columns::{select_columns, ColumnDef, ColumnType};
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

/// Where an attribute comes from (declared with the column table).
pub use crate::columns::Origin;

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

impl AttributeDef {
    /// The attribute a column of the column table is filled from, if any.
    const fn of(c: &ColumnDef) -> Option<AttributeDef> {
        if let Some(attribute) = c.lifted_from() {
            let ty = match c.ty {
                ColumnType::Int64 => AttrType::Int,
                ColumnType::Utf8List => AttrType::StringArray,
                _ => AttrType::String,
            };
            return Some(AttributeDef {
                name: attribute.name,
                ty,
                column: Some(c.name),
                content: false,
                origin: attribute.origin,
            });
        }
        match c.content() {
            Some((name, _)) => Some(AttributeDef {
                name,
                ty: AttrType::Json,
                column: Some(c.name),
                content: true,
                origin: Origin::Semconv,
            }),
            None => None,
        }
    }
}

/// Every attribute a column is filled from, in column order (derived from the column table).
static ATTRIBUTES: &[AttributeDef] = select_columns!(
    AttributeDef,
    AttributeDef {
        name: "",
        ty: AttrType::String,
        column: None,
        content: false,
        origin: Origin::Semconv,
    },
    |c| AttributeDef::of(c)
);

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
    // Renamed in the GenAI conventions' own registry (semantic-conventions-genai #440; see
    // `crate::genai_registry` for the pinned sources).
    DeprecatedAlias {
        name: "gen_ai.usage.cache_creation.input_tokens",
        replacement: "gen_ai.usage.cache_write.input_tokens",
        column: Some(col::GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
        draft: false,
    },
    // Renamed by core semconv's GenAI registry before the move (core
    // `model/gen-ai/deprecated/registry-deprecated.yaml`); no column holds them.
    DeprecatedAlias {
        name: "gen_ai.openai.request.seed",
        replacement: "gen_ai.request.seed",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.openai.request.response_format",
        replacement: "gen_ai.output.type",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.openai.request.service_tier",
        replacement: "openai.request.service_tier",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.openai.response.service_tier",
        replacement: "openai.response.service_tier",
        column: None,
        draft: false,
    },
    DeprecatedAlias {
        name: "gen_ai.openai.response.system_fingerprint",
        replacement: "openai.response.system_fingerprint",
        column: None,
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
    fn every_registry_link_names_a_filled_column() {
        use crate::columns::{column, Fill};
        for def in ATTRIBUTES {
            let c = def.column.and_then(column);
            assert!(c.is_some(), "{} links to no column", def.name);
        }
        for alias in DEPRECATED {
            if let Some(name) = alias.column {
                let c = column(name).unwrap_or_else(|| panic!("{} -> {name}", alias.name));
                assert!(matches!(c.fill, Fill::Lifted(_)), "{name} is not liftable");
            }
            assert!(
                attribute(alias.replacement).is_some()
                    || crate::genai_registry::is_current(alias.replacement),
                "{} is replaced by {}, which neither registry lists",
                alias.name,
                alias.replacement
            );
        }
    }

    #[test]
    fn gen_ai_names_resolve_against_the_genai_registry() {
        use crate::genai_registry::{is_current, CURRENT};
        // Core semconv 1.42+ marks the in-core gen_ai.* names deprecated because they moved: none
        // of the GenAI registry's current names may be reported as deprecated.
        for name in CURRENT {
            assert_eq!(deprecated_alias(name), None, "{name} is current");
        }
        // Every gen_ai.* attribute a column is filled from is current in the GenAI registry.
        for def in ATTRIBUTES.iter().filter(|d| d.name.starts_with("gen_ai.")) {
            assert!(
                is_current(def.name),
                "{} is not in the GenAI registry",
                def.name
            );
        }
        // Every gen_ai.* deprecated name is unknown to it.
        for alias in DEPRECATED.iter().filter(|d| d.name.starts_with("gen_ai.")) {
            let plain = alias.name.trim_end_matches(".N.*");
            assert!(!is_current(plain), "{} is current", alias.name);
        }
        assert_eq!(
            deprecated_alias("gen_ai.usage.cache_creation.input_tokens").map(|d| d.replacement),
            Some("gen_ai.usage.cache_write.input_tokens")
        );
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
