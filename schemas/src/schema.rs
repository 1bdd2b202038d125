//! The canonical span row: the one place that declares every Parquet column tripline writes.
//!
//! Why a single declaration: the collector writes it, the analyzer reads it with this exact schema
//! (never inferring it from whichever file comes first), and DuckDB / Spark / DataFusion / pyarrow
//! users query it by these names. Columns are only ever *added* (nullable) in a new
//! [`SCHEMA_VERSION`]; a rename is a breaking change and shows up in the layout snapshot test.
//!
//! Encoding choices (see docs/adr/0001-parquet-layout.md):
//! - ids are `Binary` (16 / 8 bytes, length checked at ingest): fixed-size binary reads everywhere
//!   but Spark never prunes on it, and a UUID-annotated one makes Spark reject the table;
//! - `start_time` / `end_time` are `Timestamp(Microsecond, UTC)` because Spark rejects nanosecond
//!   timestamps; the exact values live in `Int64` `*_unix_nano` columns (not `UInt64`, which Spark
//!   turns into a decimal); `duration_ns` is `Int64` (DataFusion will not compare `Duration` with
//!   integers);
//! - attributes are a `Map<Utf8, Struct>` with unique keys and a typed value struct, so nothing the
//!   sender sent is lost and DuckDB (which refuses repeated map keys) reads it;
//! - every column is nullable except the span identity, so a file of one schema version always
//!   carries every column and engines that do not merge schemas read a whole store without options.

use std::sync::{Arc, OnceLock};

use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

/// Version of the canonical row, stamped into every Parquet file's key/value metadata under
/// [`SCHEMA_VERSION_KEY`]. Bump when columns are added.
pub const SCHEMA_VERSION: &str = "1";
/// Parquet / Arrow metadata key holding [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "tripline.schema_version";

/// Column names, so no crate spells a column as a string literal of its own.
pub mod col {
    // identity and timing
    pub const TRACE_ID: &str = "trace_id";
    pub const SPAN_ID: &str = "span_id";
    pub const PARENT_SPAN_ID: &str = "parent_span_id";
    pub const TRACE_STATE: &str = "trace_state";
    pub const FLAGS: &str = "flags";
    pub const PARENT_IS_REMOTE: &str = "parent_is_remote";
    pub const NAME: &str = "name";
    pub const KIND: &str = "kind";
    pub const START_TIME: &str = "start_time";
    pub const END_TIME: &str = "end_time";
    pub const START_TIME_UNIX_NANO: &str = "start_time_unix_nano";
    pub const END_TIME_UNIX_NANO: &str = "end_time_unix_nano";
    pub const DURATION_NS: &str = "duration_ns";
    pub const STATUS_CODE: &str = "status_code";
    pub const STATUS_MESSAGE: &str = "status_message";
    // resource and scope
    pub const SERVICE_NAME: &str = "service_name";
    pub const SERVICE_VERSION: &str = "service_version";
    pub const SERVICE_INSTANCE_ID: &str = "service_instance_id";
    pub const RESOURCE_ATTRIBUTES: &str = "resource_attributes";
    pub const RESOURCE_DROPPED_ATTRIBUTES_COUNT: &str = "resource_dropped_attributes_count";
    pub const RESOURCE_SCHEMA_URL: &str = "resource_schema_url";
    pub const SCOPE_NAME: &str = "scope_name";
    pub const SCOPE_VERSION: &str = "scope_version";
    pub const SCOPE_ATTRIBUTES: &str = "scope_attributes";
    pub const SCOPE_DROPPED_ATTRIBUTES_COUNT: &str = "scope_dropped_attributes_count";
    pub const SCOPE_SCHEMA_URL: &str = "scope_schema_url";
    // GenAI
    pub const GEN_AI_OPERATION_NAME: &str = "gen_ai_operation_name";
    pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai_provider_name";
    pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai_request_model";
    pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai_response_model";
    pub const GEN_AI_RESPONSE_ID: &str = "gen_ai_response_id";
    pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai_response_finish_reasons";
    pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai_usage_input_tokens";
    pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai_usage_output_tokens";
    pub const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai_usage_cache_read_input_tokens";
    pub const GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: &str =
        "gen_ai_usage_cache_creation_input_tokens";
    pub const GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai_usage_reasoning_output_tokens";
    pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai_conversation_id";
    pub const GEN_AI_AGENT_NAME: &str = "gen_ai_agent_name";
    pub const GEN_AI_AGENT_ID: &str = "gen_ai_agent_id";
    pub const GEN_AI_TOOL_NAME: &str = "gen_ai_tool_name";
    pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai_tool_call_id";
    pub const GEN_AI_TOOL_TYPE: &str = "gen_ai_tool_type";
    pub const GEN_AI_TOOL_DESCRIPTION: &str = "gen_ai_tool_description";
    pub const GEN_AI_PROMPT_NAME: &str = "gen_ai_prompt_name";
    // MCP and JSON-RPC
    pub const MCP_METHOD_NAME: &str = "mcp_method_name";
    pub const MCP_SESSION_ID: &str = "mcp_session_id";
    pub const MCP_PROTOCOL_VERSION: &str = "mcp_protocol_version";
    pub const MCP_RESOURCE_URI: &str = "mcp_resource_uri";
    pub const MCP_TRANSPORT: &str = "mcp_transport";
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc_request_id";
    pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc_response_status_code";
    pub const NETWORK_TRANSPORT: &str = "network_transport";
    pub const ERROR_TYPE: &str = "error_type";
    // custom, from the seeds
    pub const SKILL_NAME: &str = "skill_name";
    pub const SKILL_VERSION: &str = "skill_version";
    pub const SKILL_INVOCATION_SOURCE: &str = "skill_invocation_source";
    pub const GUARDRAIL_NAME: &str = "guardrail_name";
    pub const GUARDRAIL_DECISION: &str = "guardrail_decision";
    // content (opt-in, large: own columns so scans that do not need them never read them)
    pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai_tool_call_arguments";
    pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai_tool_call_result";
    pub const GEN_AI_TOOL_DEFINITIONS: &str = "gen_ai_tool_definitions";
    pub const GEN_AI_INPUT_MESSAGES: &str = "gen_ai_input_messages";
    pub const GEN_AI_OUTPUT_MESSAGES: &str = "gen_ai_output_messages";
    pub const GEN_AI_SYSTEM_INSTRUCTIONS: &str = "gen_ai_system_instructions";
    pub const CONTENT_ATTRIBUTES: &str = "content_attributes";
    pub const CONTENT_TRUNCATED: &str = "content_truncated";
    // facts derived at ingest
    pub const RESULT_HAS_STRUCTURED_CONTENT: &str = "result_has_structured_content";
    pub const RESULT_IS_ERROR: &str = "result_is_error";
    pub const RESULT_CONTENT_TYPES: &str = "result_content_types";
    pub const RESULT_TYPE: &str = "result_type";
    pub const RESULT_TEXT_IS_JSON_OBJECT: &str = "result_text_is_json_object";
    pub const TOOL_CALL_ARGUMENTS_DIGEST: &str = "tool_call_arguments_digest";
    pub const TOOL_DEFINITIONS: &str = "tool_definitions";
    pub const MCP_META_TRACEPARENT: &str = "mcp_meta_traceparent";
    // everything else, losslessly
    pub const ATTRIBUTES: &str = "attributes";
    pub const DROPPED_ATTRIBUTES_COUNT: &str = "dropped_attributes_count";
    pub const EVENTS: &str = "events";
    pub const DROPPED_EVENTS_COUNT: &str = "dropped_events_count";
    pub const LINKS: &str = "links";
    pub const DROPPED_LINKS_COUNT: &str = "dropped_links_count";
    // provenance
    pub const DIALECTS: &str = "dialects";
    pub const RECEIVED_AT: &str = "received_at";
    pub const INGEST_SOURCE: &str = "ingest_source";
}

/// Names of the fields of the typed attribute value struct ([`any_value_type`]).
pub mod value {
    /// `string` | `bool` | `int` | `double` | `bytes` | `array` | `kvlist` | `empty`.
    pub const TYPE: &str = "type";
    /// The string value; for `array` / `kvlist` the value in OTLP/JSON `AnyValue` form.
    pub const STR: &str = "str";
    pub const INT: &str = "int";
    pub const DOUBLE: &str = "double";
    pub const BOOL: &str = "bool";
    pub const BYTES: &str = "bytes";
}

/// The typed value of one attribute: exactly one of the value fields is set, named by `type`.
/// Arrays and key/value lists keep their full OTLP/JSON `AnyValue` form in `str`, so they survive
/// a round trip exactly while the common scalar cases stay directly queryable
/// (`attributes['gen_ai.tool.name'].str`).
pub fn any_value_type() -> DataType {
    DataType::Struct(any_value_fields())
}

fn any_value_fields() -> Fields {
    Fields::from(vec![
        Field::new(value::TYPE, DataType::Utf8, false),
        Field::new(value::STR, DataType::Utf8, true),
        Field::new(value::INT, DataType::Int64, true),
        Field::new(value::DOUBLE, DataType::Float64, true),
        Field::new(value::BOOL, DataType::Boolean, true),
        Field::new(value::BYTES, DataType::Binary, true),
    ])
}

/// `Map<Utf8, AnyValue>` with the child names the Parquet spec uses (`key_value`, `key`, `value`),
/// keys unique per row (enforced by the converter).
pub fn attribute_map_type() -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", any_value_type(), true),
            ])),
            false,
        )),
        false,
    )
}

/// One span event: `List<Struct<time_unix_nano, name, attributes, dropped_attributes_count>>`.
pub fn event_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("time_unix_nano", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("attributes", attribute_map_type(), true),
        Field::new("dropped_attributes_count", DataType::Int64, true),
    ]))
}

/// One span link: the linked context, its trace state and flags, and attributes.
pub fn link_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("trace_id", DataType::Binary, true),
        Field::new("span_id", DataType::Binary, true),
        Field::new("trace_state", DataType::Utf8, true),
        Field::new("flags", DataType::Int64, true),
        Field::new("attributes", attribute_map_type(), true),
        Field::new("dropped_attributes_count", DataType::Int64, true),
    ]))
}

/// One tool definition the model (or an MCP `tools/list` result) showed, with what rules need:
/// whether it declares an `outputSchema` and its annotations (null = not annotated).
pub fn tool_definition_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("description", DataType::Utf8, true),
        Field::new("has_output_schema", DataType::Boolean, true),
        Field::new("read_only_hint", DataType::Boolean, true),
        Field::new("destructive_hint", DataType::Boolean, true),
        Field::new("idempotent_hint", DataType::Boolean, true),
        Field::new("open_world_hint", DataType::Boolean, true),
        Field::new("input_schema_digest", DataType::Utf8, true),
        Field::new("output_schema_digest", DataType::Utf8, true),
    ]))
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("element", item, true)))
}

fn ts_us() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The canonical span schema (cached; cheap to clone).
pub fn span_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA.get_or_init(|| Arc::new(build_schema())).clone()
}

fn build_schema() -> Schema {
    use DataType::{Binary, Boolean, Int64, Utf8};
    let s = |name: &str| Field::new(name, Utf8, true);
    let i = |name: &str| Field::new(name, Int64, true);
    let b = |name: &str| Field::new(name, Boolean, true);
    let fields = vec![
        Field::new(col::TRACE_ID, Binary, false),
        Field::new(col::SPAN_ID, Binary, false),
        Field::new(col::PARENT_SPAN_ID, Binary, true),
        s(col::TRACE_STATE),
        i(col::FLAGS),
        b(col::PARENT_IS_REMOTE),
        Field::new(col::NAME, Utf8, false),
        Field::new(col::KIND, Utf8, false),
        Field::new(col::START_TIME, ts_us(), true),
        Field::new(col::END_TIME, ts_us(), true),
        i(col::START_TIME_UNIX_NANO),
        i(col::END_TIME_UNIX_NANO),
        i(col::DURATION_NS),
        Field::new(col::STATUS_CODE, Utf8, false),
        s(col::STATUS_MESSAGE),
        s(col::SERVICE_NAME),
        s(col::SERVICE_VERSION),
        s(col::SERVICE_INSTANCE_ID),
        Field::new(col::RESOURCE_ATTRIBUTES, attribute_map_type(), true),
        i(col::RESOURCE_DROPPED_ATTRIBUTES_COUNT),
        s(col::RESOURCE_SCHEMA_URL),
        s(col::SCOPE_NAME),
        s(col::SCOPE_VERSION),
        Field::new(col::SCOPE_ATTRIBUTES, attribute_map_type(), true),
        i(col::SCOPE_DROPPED_ATTRIBUTES_COUNT),
        s(col::SCOPE_SCHEMA_URL),
        s(col::GEN_AI_OPERATION_NAME),
        s(col::GEN_AI_PROVIDER_NAME),
        s(col::GEN_AI_REQUEST_MODEL),
        s(col::GEN_AI_RESPONSE_MODEL),
        s(col::GEN_AI_RESPONSE_ID),
        Field::new(col::GEN_AI_RESPONSE_FINISH_REASONS, list_of(Utf8), true),
        i(col::GEN_AI_USAGE_INPUT_TOKENS),
        i(col::GEN_AI_USAGE_OUTPUT_TOKENS),
        i(col::GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
        i(col::GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
        i(col::GEN_AI_USAGE_REASONING_OUTPUT_TOKENS),
        s(col::GEN_AI_CONVERSATION_ID),
        s(col::GEN_AI_AGENT_NAME),
        s(col::GEN_AI_AGENT_ID),
        s(col::GEN_AI_TOOL_NAME),
        s(col::GEN_AI_TOOL_CALL_ID),
        s(col::GEN_AI_TOOL_TYPE),
        s(col::GEN_AI_TOOL_DESCRIPTION),
        s(col::GEN_AI_PROMPT_NAME),
        s(col::MCP_METHOD_NAME),
        s(col::MCP_SESSION_ID),
        s(col::MCP_PROTOCOL_VERSION),
        s(col::MCP_RESOURCE_URI),
        s(col::MCP_TRANSPORT),
        s(col::JSONRPC_REQUEST_ID),
        s(col::RPC_RESPONSE_STATUS_CODE),
        s(col::NETWORK_TRANSPORT),
        s(col::ERROR_TYPE),
        s(col::SKILL_NAME),
        s(col::SKILL_VERSION),
        s(col::SKILL_INVOCATION_SOURCE),
        s(col::GUARDRAIL_NAME),
        s(col::GUARDRAIL_DECISION),
        s(col::GEN_AI_TOOL_CALL_ARGUMENTS),
        s(col::GEN_AI_TOOL_CALL_RESULT),
        s(col::GEN_AI_TOOL_DEFINITIONS),
        s(col::GEN_AI_INPUT_MESSAGES),
        s(col::GEN_AI_OUTPUT_MESSAGES),
        s(col::GEN_AI_SYSTEM_INSTRUCTIONS),
        Field::new(col::CONTENT_ATTRIBUTES, attribute_map_type(), true),
        b(col::CONTENT_TRUNCATED),
        b(col::RESULT_HAS_STRUCTURED_CONTENT),
        b(col::RESULT_IS_ERROR),
        Field::new(col::RESULT_CONTENT_TYPES, list_of(Utf8), true),
        s(col::RESULT_TYPE),
        b(col::RESULT_TEXT_IS_JSON_OBJECT),
        s(col::TOOL_CALL_ARGUMENTS_DIGEST),
        Field::new(col::TOOL_DEFINITIONS, list_of(tool_definition_type()), true),
        s(col::MCP_META_TRACEPARENT),
        Field::new(col::ATTRIBUTES, attribute_map_type(), true),
        i(col::DROPPED_ATTRIBUTES_COUNT),
        Field::new(col::EVENTS, list_of(event_type()), true),
        i(col::DROPPED_EVENTS_COUNT),
        Field::new(col::LINKS, list_of(link_type()), true),
        i(col::DROPPED_LINKS_COUNT),
        Field::new(col::DIALECTS, list_of(Utf8), true),
        Field::new(col::RECEIVED_AT, ts_us(), true),
        s(col::INGEST_SOURCE),
    ];
    let metadata = [(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]
        .into_iter()
        .collect();
    Schema::new_with_metadata(fields, metadata)
}
