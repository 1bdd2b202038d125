//! The dialect registry: how each instrumentation names the facts the canonical row holds.
//!
//! Instrumentations disagree on names: the tool is `gen_ai.tool.name` in the semantic conventions, `traceloop.entity.name` (or the span name `{tool}.tool`) in Traceloop,
//! `mcp.tool.name` in OpenLIT and Sentry, `tool.name` in OpenInference. Rather than `if` chains in
//! the converter, every dialect is *data*: a [`Dialect`] says how to recognise it (scope name
//! prefixes, marker attributes) and lists [`Mapping`]s (source -> target column + transform) and
//! [`ContentSource`]s (which attributes hold payloads, and what role they play). Adding a dialect
//! is one file plus one line in [`DIALECTS`].
//!
//! Precedence: dialects are applied in [`DIALECTS`] order and a column keeps the first value it
//! receives, so the canonical semantic-convention names (first entry) always win over a dialect's
//! name for the same fact. The exception is [`Transform::Correct`]: a dialect's correction of a
//! value its own library put in a canonical attribute.

mod atlas;
mod docs;
mod engine;
mod google_adk;
mod logfire;
mod mastra;
mod mcp_http;
mod mcp_sdk;
mod mcpcat;
mod openinference;
mod openlit;
mod pydantic_ai;
mod semconv;
mod semconv_deprecated;
mod sentry;
mod strands;
mod traceloop;
mod vercel_ai;

pub use docs::registry_markdown;
pub(crate) use engine::{DialectEngine, KeyCache, KeyFacts, SpanView};

/// One instrumentation's naming of the canonical facts.
#[derive(Debug)]
pub struct Dialect {
    /// Stable id, recorded in the `dialects` column (e.g. `"traceloop"`).
    pub id: &'static str,
    /// What instrumentation this is, for docs and `tripline rules`-style listings.
    pub description: &'static str,
    /// How a span is recognised as written by this instrumentation.
    pub detect: Detect,
    /// Typed-column mappings.
    pub mappings: &'static [Mapping],
    /// Attributes that hold content payloads (moved out of `attributes`, used for derived facts).
    pub content: &'static [ContentSource],
}

/// Recognition rule: the dialect matches a span if its scope name starts with one of
/// `scope_prefixes`, or it carries one of the `markers` (an exact attribute name, or a prefix when
/// the marker ends with `*`).
#[derive(Debug)]
pub struct Detect {
    /// Instrumentation scope name prefixes.
    pub scope_prefixes: &'static [&'static str],
    /// Marker attribute names (`name` exact, `prefix*` prefix).
    pub markers: &'static [&'static str],
}

/// Where a mapped value comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A span attribute, by exact name.
    Attr(&'static str),
    /// The span name matched against a pattern such as `"{tool}.tool"` or
    /// `"MCP send {method} {name}"`. A `{placeholder}` matches one or more characters without
    /// whitespace; the whole name must match.
    SpanName(&'static str),
}

/// How the source value becomes the column value.
#[derive(Debug, Clone, Copy)]
pub enum Transform {
    /// The value as-is, coerced to the column type (ints parsed from strings and so on).
    Identity,
    /// Parse the value as JSON and take the value at this JSON pointer (RFC 6901).
    JsonPointer(&'static str),
    /// This constant, whenever the source is present / the span name matches.
    Constant(&'static str),
    /// This constant, replacing what any dialect assigned (even the canonical one): for a library
    /// that sets a canonical attribute to a value of its own (Mastra's `gen_ai.operation.name`
    /// `tool.execute`), gated by a condition on that library's own attributes. The one exception
    /// to the precedence below.
    Correct(&'static str),
    /// The text a span-name placeholder matched.
    Capture(&'static str),
    /// A captured HTTP header (`http.request.header.*`): the first value of the string array (or
    /// the string), with MCP's `=?base64?…?=` wrapping of non-ASCII values undone.
    HttpHeader,
}

/// A precondition on a mapping.
#[derive(Debug, Clone, Copy)]
pub enum Condition {
    /// The attribute exists and its value (as text) equals the given value.
    AttrEquals(&'static str, &'static str),
    /// The attribute holds JSON with a value at this JSON pointer (RFC 6901), e.g. an MCP request
    /// handler's `extra` (`/1/requestId`) in a tool span's recorded arguments.
    JsonPointerExists(&'static str, &'static str),
    /// The captured request header of this (lower-case, `-`) name, in either spelling
    /// (`http.request.header.mcp-method` or `..mcp_method`), has this value.
    HttpHeaderEquals(&'static str, &'static str),
    /// The attribute's text is an MCP method of either protocol revision
    /// ([`crate::mcp_methods`]): OpenLIT's Python `mcp.method` holds SDK function names
    /// (`call_tool`, `send_request`), its JS one the method or a tool name.
    AttrIsMcpMethod(&'static str),
    /// The attribute is absent, or its text differs from the given value.
    AttrNotEquals(&'static str, &'static str),
    /// Every one of these holds.
    All(&'static [Condition]),
}

/// One source -> column mapping.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    /// Where the value comes from.
    pub source: Source,
    /// Target column (one of `crate::schema::col`, a liftable column or `result_is_error`).
    pub target: &'static str,
    /// How the value is transformed.
    pub transform: Transform,
    /// Only applies when this holds.
    pub when: Option<Condition>,
}

impl Mapping {
    /// An attribute copied as-is into a column.
    pub const fn attr(name: &'static str, target: &'static str) -> Mapping {
        Mapping {
            source: Source::Attr(name),
            target,
            transform: Transform::Identity,
            when: None,
        }
    }

    /// `transform` of the attribute `name` into `target`, only where `name` equals `value` (a
    /// constant for one value of a vendor's own attribute, e.g. an operation or span type).
    pub const fn when_equals(
        name: &'static str,
        value: &'static str,
        target: &'static str,
        transform: Transform,
    ) -> Mapping {
        Mapping {
            source: Source::Attr(name),
            target,
            transform,
            when: Some(Condition::AttrEquals(name, value)),
        }
    }
}

impl ContentSource {
    /// The payload attribute `attr` (a trailing `*`: a prefix) in role `role`.
    pub const fn new(attr: &'static str, role: ContentRole) -> ContentSource {
        ContentSource { attr, role }
    }
}

/// The role a content payload plays (declared with the content columns, which have one each).
pub use crate::columns::ContentRole;

/// An attribute holding a content payload.
#[derive(Debug, Clone, Copy)]
pub struct ContentSource {
    /// Attribute name; a trailing `*` makes it a prefix (`mcp.request.argument.*`).
    pub attr: &'static str,
    /// What the payload is.
    pub role: ContentRole,
}

/// Every known dialect, canonical first (see the module docs on precedence).
pub static DIALECTS: &[&Dialect] = &[
    &semconv::SEMCONV,
    &semconv_deprecated::SEMCONV_DEPRECATED,
    &mcp_sdk::MCP_SDK,
    &traceloop::TRACELOOP,
    &openlit::OPENLIT,
    &logfire::LOGFIRE,
    &sentry::SENTRY,
    &openinference::OPENINFERENCE,
    &pydantic_ai::PYDANTIC_AI,
    &google_adk::GOOGLE_ADK,
    &vercel_ai::VERCEL_AI,
    &strands::STRANDS,
    &mastra::MASTRA,
    &mcpcat::MCPCAT,
    &atlas::ATLAS,
    &mcp_http::MCP_HTTP,
];

/// Looks a dialect up by id.
pub fn dialect(id: &str) -> Option<&'static Dialect> {
    DIALECTS.iter().copied().find(|d| d.id == id)
}

/// Applying the whole registry to one made-up span, for the per-dialect tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use std::collections::BTreeMap;

    use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};

    use super::{DialectEngine, SpanView};
    use crate::lift::{SlotValue, SLOTS};

    /// The columns the registry lifts from a span of scope `scope`, name `name` and string
    /// attributes `attrs`, as text (lists joined with `,`); `result_is_error` as `true`/`false`.
    pub fn lifted(
        scope: &str,
        name: &str,
        attrs: &[(&str, &str)],
    ) -> BTreeMap<&'static str, String> {
        let values: Vec<AnyValue> = attrs
            .iter()
            .map(|(_, v)| AnyValue {
                value: Some(Value::StringValue((*v).to_string())),
            })
            .collect();
        let pairs: Vec<(&str, &AnyValue)> =
            attrs.iter().map(|(k, _)| *k).zip(values.iter()).collect();
        let out = DialectEngine::get().apply(&SpanView {
            scope_name: scope,
            name,
            attrs: &pairs,
            facts: &[],
            scope_markers: None,
        });
        let mut got = BTreeMap::new();
        for (i, v) in out.lifted.iter().enumerate() {
            if let Some(v) = v {
                let text = match v {
                    SlotValue::Str(s) => s.to_string(),
                    SlotValue::Int(n) => n.to_string(),
                    SlotValue::List(l) => l.join(","),
                };
                got.insert(SLOTS[i].column, text);
            }
        }
        if let Some(b) = out.result_is_error {
            got.insert(crate::schema::col::RESULT_IS_ERROR, b.to_string());
        }
        if let Some(t) = out.result_type {
            got.insert(crate::schema::col::RESULT_TYPE, t.to_string());
        }
        got
    }

    /// Asserts what [`lifted`] returned for each column of `want`: the text, or `None` for a
    /// column not lifted.
    #[track_caller]
    pub fn assert_lifted(got: &BTreeMap<&'static str, String>, want: &[(&str, Option<&str>)]) {
        for (column, value) in want {
            assert_eq!(
                got.get(column).map(String::as_str),
                *value,
                "column {column}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lift::slot_index;
    use crate::schema::col;

    #[test]
    fn ids_are_unique_and_targets_exist() {
        let mut ids: Vec<&str> = DIALECTS.iter().map(|d| d.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), DIALECTS.len());
        for d in DIALECTS {
            for m in d.mappings {
                assert!(
                    slot_index(m.target).is_some()
                        || m.target == col::RESULT_IS_ERROR
                        || m.target == col::RESULT_TYPE,
                    "dialect {} maps into unknown column {}",
                    d.id,
                    m.target
                );
                if m.target == col::RESULT_TYPE {
                    assert!(
                        matches!(m.transform, Transform::Constant(_) | Transform::Correct(_)),
                        "{}: result_type takes constants only",
                        d.id
                    );
                }
                if let (Source::SpanName(p), Transform::Capture(name)) = (m.source, m.transform) {
                    assert!(
                        p.contains(&format!("{{{name}}}")),
                        "{}: {p} lacks {{{name}}}",
                        d.id
                    );
                }
            }
        }
        assert_eq!(
            DIALECTS[0].id, "semconv",
            "canonical names must be applied first"
        );
    }
}
