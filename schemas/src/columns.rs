//! The column table: every column of the canonical span row, declared once with every fact the
//! rest of the workspace needs about it.
//!
//! Why one table: a column used to be named in nine places (the Arrow schema, the liftable slots,
//! the attribute registry, the semconv dialect, the Parquet encoding lists, the analyzer's
//! projection, its row reader's enum, column table and match arm). Now [`COLUMNS`] says, per
//! column, its name, Arrow shape, nullability, how the converter fills it (from the span, lifted
//! from an attribute, a content payload, or derived), its Parquet encoding and whether the
//! analyzer reads it; everything else is derived from it:
//!
//! - the Arrow schema ([`crate::schema::span_schema`]);
//! - the liftable slots ([`crate::lift::SLOTS`]) and the semconv dialect's mappings and content
//!   sources (`crate::dialects`);
//! - the attribute registry's current attributes ([`crate::registry::attributes`]);
//! - the content attribute -> column table ([`CONTENT_COLUMNS`]);
//! - the Parquet dictionary and bloom filter settings ([`crate::parquet_props`]);
//! - the analyzer's base projection ([`ANALYZER_BASE`]); its row reader is checked against
//!   [`ANALYZER_COLUMNS`] by a test.
//!
//! Tests fail when a column is declared but not wired: not produced by the converter
//! (`schemas/tests/columns_wired.rs`), analyzer-visible but not read by the row reader
//! (`analyze/src/load/rows.rs`), or a registry or dialect link that names no column.
//!
//! Columns are only ever added (nullable) in a new [`crate::schema::SCHEMA_VERSION`]; the layout
//! snapshot (`schemas/tests/schema_layout.txt`) shows every change in review.

/// The Arrow shape of a column (the exact `DataType` is built by [`crate::schema`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// `Binary` (ids).
    Binary,
    /// `Utf8`.
    Utf8,
    /// `Int64`.
    Int64,
    /// `Boolean`.
    Boolean,
    /// `Timestamp(Microsecond, "UTC")`.
    Timestamp,
    /// `List<Utf8>`.
    Utf8List,
    /// `Map<Utf8, AnyValue struct>` ([`crate::schema::attribute_map_type`]).
    AttributeMap,
    /// `Utf8`: a whole attribute list as one JSON object, keys in the order sent, each value in
    /// OTLP/JSON `AnyValue` form (`{"service.name":{"stringValue":"crm"}}`;
    /// [`crate::encode::attributes_json`]). For lists that repeat on every row of a request (the
    /// resource's and the scope's): one dictionary-encoded value per row instead of seven Parquet
    /// leaves per attribute per row.
    AttributesJson,
    /// `List<event struct>` ([`crate::schema::event_type`]).
    Events,
    /// `List<link struct>` ([`crate::schema::link_type`]).
    Links,
    /// `List<tool definition struct>` ([`crate::tool_def`]).
    ToolDefinitions,
}

/// Where an attribute name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// OpenTelemetry semantic conventions (GenAI / MCP / RPC / general).
    Semconv,
    /// Custom names used by the seed scenarios (no convention exists).
    Custom,
}

/// An attribute the registry lists for a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute {
    /// Attribute name (`gen_ai.tool.name`).
    pub name: &'static str,
    /// Semconv or custom.
    pub origin: Origin,
}

/// The role a content payload plays, which decides what is derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentRole {
    /// Tool call arguments (a JSON object) -> `tool_call_arguments_digest`.
    ToolArguments,
    /// A tool result (a `CallToolResult`, a content block list, or a vendor wrapper of one) ->
    /// `result_*` facts.
    ToolResult,
    /// A list of tool definitions (`gen_ai.tool.definitions` form) -> `tool_definitions`.
    ToolDefinitions,
    /// A JSON-RPC request or a vendor wrapper of one (`{"method","params"}`,
    /// `{"tool_name","arguments"}`) -> arguments digest, `mcp_meta_traceparent`.
    Request,
    /// A JSON-RPC result or a vendor wrapper of one: whatever it holds (tool result, tool list) is
    /// recognised by shape.
    Response,
    /// Messages, instructions and other payloads: stored, nothing derived.
    Opaque,
}

/// How the converter fills a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// From the span itself, its resource or scope, or the ingest context (ids, times, status,
    /// generic attributes, provenance).
    Span,
    /// Lifted (copied) out of attributes by the dialect registry; the attribute is the one the
    /// attribute registry lists for the column (the semconv dialect maps every semconv one).
    Lifted(Attribute),
    /// The string payload of a canonical content attribute, moved out of `attributes`.
    Content {
        /// The content attribute (`gen_ai.tool.call.result`).
        attribute: &'static str,
        /// What is derived from it.
        role: ContentRole,
    },
    /// Derived at ingest from content payloads ([`crate::derived`]); `result_is_error` may also
    /// be mapped by a dialect.
    Derived,
    /// Kept so that files of an older schema version read with the same schema, written null
    /// since the version named (its facts moved to another column, which readers take first).
    Retired {
        /// The schema version that stopped filling it.
        since: &'static str,
        /// The column that holds its facts now.
        by: &'static str,
    },
}

/// Whether and when the analyzer reads a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Analyzer {
    /// Not read by the analyzer (SQL users and the round trip read it).
    Hidden,
    /// Read by every analyzer scan (the base projection).
    Base,
    /// Read only when a selected rule asks for it (content, generic attribute maps).
    OnRequest,
}

/// One column of the canonical span row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name (snake_case, stable: a rename is a breaking change).
    pub name: &'static str,
    /// Arrow shape.
    pub ty: ColumnType,
    /// False only for the span identity (ids, name, kind, status).
    pub nullable: bool,
    /// How the converter fills it.
    pub fill: Fill,
    /// Dictionary-encoded in Parquet (few distinct values); every other column is plain.
    pub dictionary: bool,
    /// Integer values close to their neighbours (the times): DELTA_BINARY_PACKED and not
    /// compressed ([`crate::parquet_props`]).
    pub delta: bool,
    /// Parquet bloom filter (looked up by equality: ids).
    pub bloom_filter: bool,
    /// Not compressed: the encoding already packs the values (dictionary indices of a few
    /// values, bit-packed flags) and zstd finds nothing more in them ([`crate::parquet_props`]).
    pub raw: bool,
    /// Text that no reader selects by range and whose min/max prune nothing: unique or random
    /// values (ids, digests, `traceparent`), what describes the sender and repeats on every row
    /// of a request (versions, schema URLs, `ingest_source`, `dialects`) and free text (status
    /// message, tool description). Written without page statistics
    /// ([`crate::parquet_props::statistics`]).
    pub unranged: bool,
    /// Whether the analyzer reads it.
    pub analyzer: Analyzer,
}

impl ColumnDef {
    const fn of(ty: ColumnType, fill: Fill) -> ColumnDef {
        ColumnDef {
            name: "",
            ty,
            nullable: true,
            fill,
            dictionary: false,
            delta: false,
            bloom_filter: false,
            raw: false,
            unranged: false,
            analyzer: Analyzer::Hidden,
        }
    }
    const fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }
    /// Never null.
    const fn required(mut self) -> Self {
        self.nullable = false;
        self
    }
    /// Dictionary-encoded.
    const fn dict(mut self) -> Self {
        self.dictionary = true;
        self
    }
    /// DELTA_BINARY_PACKED, uncompressed.
    const fn delta(mut self) -> Self {
        self.delta = true;
        self
    }
    /// Not compressed.
    const fn raw(mut self) -> Self {
        self.raw = true;
        self
    }
    /// Text nobody selects by range, written without statistics.
    const fn unranged(mut self) -> Self {
        self.unranged = true;
        self
    }
    /// With a bloom filter.
    const fn bloom(mut self) -> Self {
        self.bloom_filter = true;
        self
    }
    /// Read by every analyzer scan.
    const fn base(mut self) -> Self {
        self.analyzer = Analyzer::Base;
        self
    }
    /// Read by the analyzer when a rule asks for it.
    const fn on_request(mut self) -> Self {
        self.analyzer = Analyzer::OnRequest;
        self
    }

    /// The registry attribute lifted into this column, if it is a liftable column.
    pub const fn lifted_from(&self) -> Option<Attribute> {
        match self.fill {
            Fill::Lifted(a) => Some(a),
            _ => None,
        }
    }

    /// The semantic-convention attribute lifted into this column, if any.
    pub const fn semconv_attribute(&self) -> Option<&'static str> {
        match self.fill {
            Fill::Lifted(Attribute {
                name,
                origin: Origin::Semconv,
            }) => Some(name),
            _ => None,
        }
    }

    /// The canonical content attribute stored in this column, with its role, if any.
    pub const fn content(&self) -> Option<(&'static str, ContentRole)> {
        match self.fill {
            Fill::Content { attribute, role } => Some((attribute, role)),
            _ => None,
        }
    }
}

use ColumnType::{
    AttributeMap, AttributesJson, Binary, Boolean, Events, Int64, Links, Timestamp,
    ToolDefinitions, Utf8, Utf8List,
};

/// A column the converter fills from the span, its resource or scope.
const fn span(ty: ColumnType) -> ColumnDef {
    ColumnDef::of(ty, Fill::Span)
}
/// A column lifted from a semantic-convention attribute.
const fn semconv(ty: ColumnType, attribute: &'static str) -> ColumnDef {
    ColumnDef::of(
        ty,
        Fill::Lifted(Attribute {
            name: attribute,
            origin: Origin::Semconv,
        }),
    )
}
/// A column lifted from a custom (seed) attribute.
const fn custom(ty: ColumnType, attribute: &'static str) -> ColumnDef {
    ColumnDef::of(
        ty,
        Fill::Lifted(Attribute {
            name: attribute,
            origin: Origin::Custom,
        }),
    )
}
/// A content column: the string payload of `attribute`, plain-encoded (large, unique).
const fn content(attribute: &'static str, role: ContentRole) -> ColumnDef {
    ColumnDef::of(Utf8, Fill::Content { attribute, role })
}
/// A column files of schema `since` and later write null; `by` holds its facts.
const fn retired(ty: ColumnType, since: &'static str, by: &'static str) -> ColumnDef {
    ColumnDef::of(ty, Fill::Retired { since, by })
}
/// A fact derived at ingest from content payloads.
const fn derived(ty: ColumnType) -> ColumnDef {
    ColumnDef::of(ty, Fill::Derived)
}

/// Declares the column name constants ([`col`]) and [`COLUMNS`] from one list, so a column name
/// is spelled exactly once.
macro_rules! columns {
    ($($konst:ident: $name:literal = $def:expr,)*) => {
        /// Column names, so no crate spells a column as a string literal of its own.
        pub mod col {
            $(pub const $konst: &str = $name;)*
        }
        /// Every column of the canonical span row, in schema order.
        pub const COLUMNS: &[ColumnDef] = &[$($def.named(col::$konst),)*];
    };
}

columns! {
    // identity and timing
    TRACE_ID: "trace_id" = span(Binary).required().bloom().base(),
    SPAN_ID: "span_id" = span(Binary).required().bloom().base(),
    PARENT_SPAN_ID: "parent_span_id" = span(Binary).base(),
    TRACE_STATE: "trace_state" = span(Utf8).unranged(),
    FLAGS: "flags" = span(Int64),
    PARENT_IS_REMOTE: "parent_is_remote" = span(Boolean),
    NAME: "name" = span(Utf8).required().dict().base(),
    KIND: "kind" = span(Utf8).required().dict().base(),
    START_TIME: "start_time" = span(Timestamp).delta(),
    END_TIME: "end_time" = span(Timestamp).delta(),
    START_TIME_UNIX_NANO: "start_time_unix_nano" = span(Int64).delta().base(),
    END_TIME_UNIX_NANO: "end_time_unix_nano" = span(Int64).delta().base(),
    DURATION_NS: "duration_ns" = span(Int64).delta(),
    STATUS_CODE: "status_code" = span(Utf8).required().base(),
    STATUS_MESSAGE: "status_message" = span(Utf8).unranged().on_request(),
    // resource and scope
    SERVICE_NAME: "service_name" = span(Utf8).base(),
    // No dictionary on the per-request values (service, version, instance, scope, its version,
    // `ingest_source`): the value repeats on every row of a request, and the dictionary's
    // interner hashed and compared it row by row, about 300 instructions per row each; PLAIN
    // values cost a copy, and zstd finds the repeats (+0.1% bytes; BENCHMARKS.md, sessions 38
    // and 39). `service_name` and `scope_name`, which every analyzer scan reads, followed in
    // session 42 with `status_code`: about 5.1M fewer instructions per 20,000 spans for the
    // three, 0.01 byte per span more on the 10M-span store, and `check` no slower. `kind` keeps
    // its dictionary: its values change from span to span, and PLAIN + zstd cost 0.43 byte per
    // span more there (BENCHMARKS.md, session 42).
    SERVICE_VERSION: "service_version" = span(Utf8).unranged(),
    SERVICE_INSTANCE_ID: "service_instance_id" = span(Utf8).unranged(),
    RESOURCE_ATTRIBUTES: "resource_attributes" =
        retired(AttributeMap, "2", "resource_attributes_json"),
    RESOURCE_DROPPED_ATTRIBUTES_COUNT: "resource_dropped_attributes_count" = span(Int64),
    RESOURCE_SCHEMA_URL: "resource_schema_url" = span(Utf8).unranged(),
    SCOPE_NAME: "scope_name" = span(Utf8).base(),
    SCOPE_VERSION: "scope_version" = span(Utf8).unranged().on_request(),
    SCOPE_ATTRIBUTES: "scope_attributes" = retired(AttributeMap, "2", "scope_attributes_json"),
    SCOPE_DROPPED_ATTRIBUTES_COUNT: "scope_dropped_attributes_count" = span(Int64),
    SCOPE_SCHEMA_URL: "scope_schema_url" = span(Utf8).unranged(),
    // GenAI (lifted; the order here is the semconv dialect's mapping order)
    GEN_AI_OPERATION_NAME: "gen_ai_operation_name" =
        semconv(Utf8, "gen_ai.operation.name").dict().base(),
    GEN_AI_PROVIDER_NAME: "gen_ai_provider_name" =
        semconv(Utf8, "gen_ai.provider.name").dict().raw().on_request(),
    GEN_AI_REQUEST_MODEL: "gen_ai_request_model" =
        semconv(Utf8, "gen_ai.request.model").dict().raw().on_request(),
    GEN_AI_RESPONSE_MODEL: "gen_ai_response_model" =
        semconv(Utf8, "gen_ai.response.model").dict().raw(),
    GEN_AI_RESPONSE_ID: "gen_ai_response_id" = semconv(Utf8, "gen_ai.response.id").unranged(),
    GEN_AI_RESPONSE_FINISH_REASONS: "gen_ai_response_finish_reasons" =
        semconv(Utf8List, "gen_ai.response.finish_reasons"),
    GEN_AI_USAGE_INPUT_TOKENS: "gen_ai_usage_input_tokens" =
        semconv(Int64, "gen_ai.usage.input_tokens"),
    GEN_AI_USAGE_OUTPUT_TOKENS: "gen_ai_usage_output_tokens" =
        semconv(Int64, "gen_ai.usage.output_tokens"),
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: "gen_ai_usage_cache_read_input_tokens" =
        semconv(Int64, "gen_ai.usage.cache_read.input_tokens"),
    // Filled from the current name, `gen_ai.usage.cache_write.input_tokens` (renamed from
    // `cache_creation` by semantic-conventions-genai #440, see `crate::genai_registry`); the old
    // name is lifted by the deprecated dialect. The column keeps its name: a rename breaks stores.
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: "gen_ai_usage_cache_creation_input_tokens" =
        semconv(Int64, "gen_ai.usage.cache_write.input_tokens"),
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: "gen_ai_usage_reasoning_output_tokens" =
        semconv(Int64, "gen_ai.usage.reasoning.output_tokens"),
    GEN_AI_CONVERSATION_ID: "gen_ai_conversation_id" =
        semconv(Utf8, "gen_ai.conversation.id").unranged().base(),
    GEN_AI_AGENT_NAME: "gen_ai_agent_name" = semconv(Utf8, "gen_ai.agent.name").dict().raw().base(),
    GEN_AI_AGENT_ID: "gen_ai_agent_id" = semconv(Utf8, "gen_ai.agent.id").unranged().on_request(),
    GEN_AI_TOOL_NAME: "gen_ai_tool_name" = semconv(Utf8, "gen_ai.tool.name").dict().base(),
    GEN_AI_TOOL_CALL_ID: "gen_ai_tool_call_id" =
        semconv(Utf8, "gen_ai.tool.call.id").unranged().base(),
    GEN_AI_TOOL_TYPE: "gen_ai_tool_type" = semconv(Utf8, "gen_ai.tool.type").dict().raw(),
    GEN_AI_TOOL_DESCRIPTION: "gen_ai_tool_description" =
        semconv(Utf8, "gen_ai.tool.description").unranged(),
    GEN_AI_PROMPT_NAME: "gen_ai_prompt_name" = semconv(Utf8, "gen_ai.prompt.name").base(),
    // MCP and JSON-RPC (lifted)
    MCP_METHOD_NAME: "mcp_method_name" = semconv(Utf8, "mcp.method.name").dict().raw().base(),
    MCP_SESSION_ID: "mcp_session_id" = semconv(Utf8, "mcp.session.id").unranged().base(),
    MCP_PROTOCOL_VERSION: "mcp_protocol_version" =
        semconv(Utf8, "mcp.protocol.version").dict().raw(),
    MCP_RESOURCE_URI: "mcp_resource_uri" = semconv(Utf8, "mcp.resource.uri").base(),
    // no released convention: `mcp.transport` was a draft (see the registry's deprecated names)
    MCP_TRANSPORT: "mcp_transport" = custom(Utf8, "atlas.mcp.transport").dict().raw(),
    JSONRPC_REQUEST_ID: "jsonrpc_request_id" =
        semconv(Utf8, "jsonrpc.request.id").unranged().base(),
    RPC_RESPONSE_STATUS_CODE: "rpc_response_status_code" =
        semconv(Utf8, "rpc.response.status_code").base(),
    NETWORK_TRANSPORT: "network_transport" = semconv(Utf8, "network.transport").dict().raw(),
    ERROR_TYPE: "error_type" = semconv(Utf8, "error.type").dict().raw().base(),
    // custom, from the seeds (lifted)
    SKILL_NAME: "skill_name" = custom(Utf8, "skill.name").base(),
    SKILL_VERSION: "skill_version" = custom(Utf8, "skill.version").unranged(),
    SKILL_INVOCATION_SOURCE: "skill_invocation_source" = custom(Utf8, "skill.invocation_source"),
    GUARDRAIL_NAME: "guardrail_name" = custom(Utf8, "guardrail.name").base(),
    GUARDRAIL_DECISION: "guardrail_decision" = custom(Utf8, "guardrail.decision").base(),
    // content (opt-in, large: own columns so scans that do not need them never read them)
    GEN_AI_TOOL_CALL_ARGUMENTS: "gen_ai_tool_call_arguments" =
        content("gen_ai.tool.call.arguments", ContentRole::ToolArguments).on_request(),
    GEN_AI_TOOL_CALL_RESULT: "gen_ai_tool_call_result" =
        content("gen_ai.tool.call.result", ContentRole::ToolResult).on_request(),
    GEN_AI_TOOL_DEFINITIONS: "gen_ai_tool_definitions" =
        content("gen_ai.tool.definitions", ContentRole::ToolDefinitions),
    GEN_AI_INPUT_MESSAGES: "gen_ai_input_messages" =
        content("gen_ai.input.messages", ContentRole::Opaque).on_request(),
    GEN_AI_OUTPUT_MESSAGES: "gen_ai_output_messages" =
        content("gen_ai.output.messages", ContentRole::Opaque).on_request(),
    GEN_AI_SYSTEM_INSTRUCTIONS: "gen_ai_system_instructions" =
        content("gen_ai.system_instructions", ContentRole::Opaque).on_request(),
    CONTENT_ATTRIBUTES: "content_attributes" = span(AttributeMap).on_request(),
    CONTENT_TRUNCATED: "content_truncated" = span(Boolean),
    // facts derived at ingest
    RESULT_HAS_STRUCTURED_CONTENT: "result_has_structured_content" = derived(Boolean).raw().base(),
    RESULT_IS_ERROR: "result_is_error" = derived(Boolean).raw().base(),
    RESULT_CONTENT_TYPES: "result_content_types" = derived(Utf8List).on_request(),
    RESULT_TYPE: "result_type" = derived(Utf8).dict().raw().base(),
    RESULT_TEXT_IS_JSON_OBJECT: "result_text_is_json_object" = derived(Boolean).raw().base(),
    TOOL_CALL_ARGUMENTS_DIGEST: "tool_call_arguments_digest" = derived(Utf8).unranged().base(),
    TOOL_DEFINITIONS: "tool_definitions" = derived(ToolDefinitions).base(),
    MCP_META_TRACEPARENT: "mcp_meta_traceparent" = derived(Utf8).unranged().base(),
    // everything else, losslessly
    ATTRIBUTES: "attributes" = span(AttributeMap).on_request(),
    DROPPED_ATTRIBUTES_COUNT: "dropped_attributes_count" = span(Int64),
    EVENTS: "events" = span(Events).on_request(),
    DROPPED_EVENTS_COUNT: "dropped_events_count" = span(Int64),
    LINKS: "links" = span(Links),
    DROPPED_LINKS_COUNT: "dropped_links_count" = span(Int64),
    // provenance
    DIALECTS: "dialects" = span(Utf8List).unranged().base(),
    RECEIVED_AT: "received_at" = span(Timestamp).delta(),
    INGEST_SOURCE: "ingest_source" = span(Utf8).unranged(),
    // resource and scope attributes whole, as JSON text (schema 2; schema-1 files hold them in
    // `resource_attributes` / `scope_attributes`, which schema 2 leaves null)
    RESOURCE_ATTRIBUTES_JSON: "resource_attributes_json" = span(AttributesJson).dict(),
    SCOPE_ATTRIBUTES_JSON: "scope_attributes_json" = span(AttributesJson).dict(),
    // which registry attributes are kept only in their typed column (schema 2; bit i is the
    // column `lift::IN_COLUMNS_BITS` names at i; null in schema-1 files, which keep every
    // attribute in `attributes`)
    ATTRIBUTES_IN_COLUMNS: "attributes_in_columns" = span(Int64).on_request(),
}

/// Derives a constant slice from [`COLUMNS`] at compile time: `select!(T, placeholder, |c| expr)`
/// keeps the `Some` values of `expr` (an `Option<T>` computed by `const fn`s from `c: &ColumnDef`),
/// in column order. Used where a `static` needs the slice (dialects, slots).
macro_rules! select_columns {
    ($item:ty, $placeholder:expr, |$c:ident| $map:expr) => {{
        const N: usize = {
            let mut n = 0;
            let mut i = 0;
            while i < $crate::columns::COLUMNS.len() {
                let $c = &$crate::columns::COLUMNS[i];
                if $map.is_some() {
                    n += 1;
                }
                i += 1;
            }
            n
        };
        const OUT: [$item; N] = {
            let mut out = [$placeholder; N];
            let mut i = 0;
            let mut j = 0;
            while i < $crate::columns::COLUMNS.len() {
                let $c = &$crate::columns::COLUMNS[i];
                if let Some(v) = $map {
                    out[j] = v;
                    j += 1;
                }
                i += 1;
            }
            out
        };
        &OUT
    }};
}
pub(crate) use select_columns;

/// Canonical content attribute -> its column, in column order.
pub const CONTENT_COLUMNS: &[(&str, &str)] =
    select_columns!((&str, &str), ("", ""), |c| match c.content() {
        Some((attribute, _)) => Some((attribute, c.name)),
        None => None,
    });

/// Number of content columns.
pub const N_CONTENT_COLUMNS: usize = CONTENT_COLUMNS.len();

/// Columns every analyzer scan reads (content columns are not among them).
pub const ANALYZER_BASE: &[&str] = select_columns!(&str, "", |c| match c.analyzer {
    Analyzer::Base => Some(c.name),
    _ => None,
});

/// Columns the analyzer reads at all: [`ANALYZER_BASE`] plus those read when a rule asks.
pub const ANALYZER_COLUMNS: &[&str] = select_columns!(&str, "", |c| match c.analyzer {
    Analyzer::Base | Analyzer::OnRequest => Some(c.name),
    Analyzer::Hidden => None,
});

/// The declaration of column `name`.
pub fn column(name: &str) -> Option<&'static ColumnDef> {
    COLUMNS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case() {
        let mut names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len());
        for c in COLUMNS {
            assert!(
                c.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn required_columns_are_the_span_identity() {
        let required: Vec<&str> = COLUMNS
            .iter()
            .filter(|c| !c.nullable)
            .map(|c| c.name)
            .collect();
        assert_eq!(
            required,
            [
                col::TRACE_ID,
                col::SPAN_ID,
                col::NAME,
                col::KIND,
                col::STATUS_CODE
            ]
        );
        // the analyzer cannot build a row without the ids
        assert!(ANALYZER_BASE.starts_with(&[col::TRACE_ID, col::SPAN_ID]));
    }

    #[test]
    fn every_source_attribute_is_declared_once() {
        let mut attrs: Vec<&str> = COLUMNS
            .iter()
            .filter_map(|c| {
                c.lifted_from()
                    .map(|a| a.name)
                    .or(c.content().map(|(a, _)| a))
            })
            .collect();
        let n = attrs.len();
        attrs.sort_unstable();
        attrs.dedup();
        assert_eq!(attrs.len(), n, "an attribute feeds two columns");
    }

    #[test]
    fn lifted_and_content_columns_have_liftable_types() {
        for c in COLUMNS {
            match c.fill {
                Fill::Lifted(_) => {
                    assert!(matches!(c.ty, Utf8 | Int64 | Utf8List), "{}", c.name)
                }
                Fill::Content { .. } => assert_eq!(c.ty, Utf8, "{}", c.name),
                Fill::Span | Fill::Derived => {}
                Fill::Retired { by, .. } => {
                    let successor = COLUMNS.iter().find(|s| s.name == by);
                    assert!(
                        successor.is_some_and(|s| s.fill == Fill::Span),
                        "{} is retired in favour of {by}, which the converter must fill",
                        c.name
                    );
                }
            }
        }
        assert_eq!(CONTENT_COLUMNS.len(), 6);
    }
}
