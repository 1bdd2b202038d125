//! Arrow `RecordBatch` (canonical schema, possibly projected) -> `SpanRow`s.
//!
//! One code path for everything: the DataFusion scan of the store and the direct loader used by
//! tests and fixtures (OTLP/JSON -> `schemas` convert -> batch) both end here. Columns absent from a
//! projected batch simply leave the field empty; string columns are cast to `Utf8` first because
//! DataFusion may hand them back as `Utf8View` / dictionaries.

use std::collections::HashSet;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Int64Array, ListArray, MapArray,
    StringArray,
};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use schemas::schema::col;

use super::span::{
    SpanContent, SpanId, SpanKind, SpanKindField, SpanRow, StatusCode, StatusField, Sym, ToolDef,
    TraceId,
};
use crate::error::LoadError;

/// Converts batches into `SpanRow`s, sharing one [`Interner`] across every batch of a load so a
/// value repeated on a million spans is allocated once.
#[derive(Default)]
pub struct RowReader {
    interner: Interner,
}

impl RowReader {
    /// Converts every row of `batch` into a `SpanRow`, appending to `out`. Rows whose ids have the
    /// wrong length (impossible for data written by the collector) are skipped and counted.
    pub fn append<T: From<SpanRow>>(
        &mut self,
        batch: &RecordBatch,
        out: &mut Vec<T>,
    ) -> Result<usize, LoadError> {
        let n = batch.num_rows();
        let cols = Columns::new(batch)?;
        let mut skipped = 0;
        out.reserve(n);
        for i in 0..n {
            match cols.row(i, &mut self.interner) {
                Some(row) => out.push(row.into()),
                None => skipped += 1,
            }
        }
        Ok(skipped)
    }
}

/// Converts every row of one batch (see [`RowReader::append`]).
pub fn append_rows(batch: &RecordBatch, out: &mut Vec<SpanRow>) -> Result<usize, LoadError> {
    RowReader::default().append(batch, out)
}

/// One `Arc<str>` per distinct string. Only for low-cardinality values (names, services, tools,
/// methods, attribute keys, dialects, event names...): ids stay plain `String`s, interning them
/// would only grow the set.
#[derive(Default)]
struct Interner {
    set: HashSet<Sym, foldhash::fast::RandomState>,
}

impl Interner {
    fn get(&mut self, s: &str) -> Sym {
        if let Some(v) = self.set.get(s) {
            return v.clone();
        }
        let v: Sym = Sym::from(s);
        self.set.insert(v.clone());
        v
    }
}

/// Typed handles on the columns present in one batch.
struct Columns {
    trace_id: BinaryArray,
    span_id: BinaryArray,
    parent: Option<BinaryArray>,
    name: Option<StringArray>,
    kind: Option<StringArray>,
    start: Option<Int64Array>,
    end: Option<Int64Array>,
    status: Option<StringArray>,
    status_message: Option<StringArray>,
    strings: Vec<(StrField, StringArray)>,
    bools: Vec<(BoolField, BooleanArray)>,
    result_content_types: Option<StrList>,
    tool_definitions: Option<StructList>,
    dialects: Option<StrList>,
    events: Option<StructList>,
    attributes: Option<StrMap>,
    content: Vec<(ContentField, StringArray)>,
    content_attributes: Option<StrMap>,
}

#[derive(Clone, Copy)]
enum StrField {
    Service,
    Scope,
    Operation,
    Provider,
    RequestModel,
    Conversation,
    AgentName,
    AgentId,
    Tool,
    ToolCallId,
    Prompt,
    Method,
    Session,
    ResourceUri,
    RequestId,
    RpcStatus,
    ErrorType,
    Skill,
    GuardrailName,
    GuardrailDecision,
    ResultType,
    ArgsDigest,
    Traceparent,
}

const STRING_COLUMNS: &[(&str, StrField)] = &[
    (col::SERVICE_NAME, StrField::Service),
    (col::SCOPE_NAME, StrField::Scope),
    (col::GEN_AI_OPERATION_NAME, StrField::Operation),
    (col::GEN_AI_PROVIDER_NAME, StrField::Provider),
    (col::GEN_AI_REQUEST_MODEL, StrField::RequestModel),
    (col::GEN_AI_CONVERSATION_ID, StrField::Conversation),
    (col::GEN_AI_AGENT_NAME, StrField::AgentName),
    (col::GEN_AI_AGENT_ID, StrField::AgentId),
    (col::GEN_AI_TOOL_NAME, StrField::Tool),
    (col::GEN_AI_TOOL_CALL_ID, StrField::ToolCallId),
    (col::GEN_AI_PROMPT_NAME, StrField::Prompt),
    (col::MCP_METHOD_NAME, StrField::Method),
    (col::MCP_SESSION_ID, StrField::Session),
    (col::MCP_RESOURCE_URI, StrField::ResourceUri),
    (col::JSONRPC_REQUEST_ID, StrField::RequestId),
    (col::RPC_RESPONSE_STATUS_CODE, StrField::RpcStatus),
    (col::ERROR_TYPE, StrField::ErrorType),
    (col::SKILL_NAME, StrField::Skill),
    (col::GUARDRAIL_NAME, StrField::GuardrailName),
    (col::GUARDRAIL_DECISION, StrField::GuardrailDecision),
    (col::RESULT_TYPE, StrField::ResultType),
    (col::TOOL_CALL_ARGUMENTS_DIGEST, StrField::ArgsDigest),
    (col::MCP_META_TRACEPARENT, StrField::Traceparent),
];

#[derive(Clone, Copy)]
enum BoolField {
    HasStructured,
    IsError,
    TextIsJsonObject,
}

const BOOL_COLUMNS: &[(&str, BoolField)] = &[
    (col::RESULT_HAS_STRUCTURED_CONTENT, BoolField::HasStructured),
    (col::RESULT_IS_ERROR, BoolField::IsError),
    (col::RESULT_TEXT_IS_JSON_OBJECT, BoolField::TextIsJsonObject),
];

#[derive(Clone, Copy)]
enum ContentField {
    Arguments,
    Result,
    Input,
    Output,
    System,
}

const CONTENT_COLUMNS: &[(&str, ContentField)] = &[
    (col::GEN_AI_TOOL_CALL_ARGUMENTS, ContentField::Arguments),
    (col::GEN_AI_TOOL_CALL_RESULT, ContentField::Result),
    (col::GEN_AI_INPUT_MESSAGES, ContentField::Input),
    (col::GEN_AI_OUTPUT_MESSAGES, ContentField::Output),
    (col::GEN_AI_SYSTEM_INSTRUCTIONS, ContentField::System),
];

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a ArrayRef> {
    batch.schema().index_of(name).ok().map(|i| batch.column(i))
}

fn strings(batch: &RecordBatch, name: &str) -> Result<Option<StringArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    let a = if a.data_type() == &DataType::Utf8 {
        a.clone()
    } else {
        cast(a, &DataType::Utf8).map_err(|_| type_error(name, a.data_type(), "Utf8"))?
    };
    Ok(Some(a.as_string::<i32>().clone()))
}

fn binary(batch: &RecordBatch, name: &str) -> Result<Option<BinaryArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    let a = if a.data_type() == &DataType::Binary {
        a.clone()
    } else {
        cast(a, &DataType::Binary).map_err(|_| type_error(name, a.data_type(), "Binary"))?
    };
    Ok(Some(a.as_binary::<i32>().clone()))
}

fn int64(batch: &RecordBatch, name: &str) -> Result<Option<Int64Array>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_primitive_opt::<arrow::datatypes::Int64Type>()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Int64"))
}

fn boolean(batch: &RecordBatch, name: &str) -> Result<Option<BooleanArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_boolean_opt()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Boolean"))
}

fn list(batch: &RecordBatch, name: &str) -> Result<Option<ListArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_list_opt::<i32>()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "List"))
}

fn map(batch: &RecordBatch, name: &str) -> Result<Option<MapArray>, LoadError> {
    let Some(a) = column(batch, name) else {
        return Ok(None);
    };
    a.as_map_opt()
        .cloned()
        .map(Some)
        .ok_or_else(|| type_error(name, a.data_type(), "Map"))
}

fn type_error(name: &str, found: &DataType, expected: &'static str) -> LoadError {
    LoadError::ColumnType {
        column: name.to_string(),
        found: found.to_string(),
        expected,
    }
}

fn opt_str(a: &StringArray, i: usize) -> Option<String> {
    (!a.is_null(i)).then(|| a.value(i).to_string())
}

/// A `List<Utf8>` column with its child values cast to `Utf8` once (not once per row).
struct StrList {
    list: ListArray,
    values: StringArray,
}

impl StrList {
    fn new(list: ListArray) -> Option<Self> {
        let values = cast(list.values(), &DataType::Utf8).ok()?;
        let values = values.as_string::<i32>().clone();
        Some(Self { list, values })
    }

    /// Strings of row `i`, interned.
    fn row(&self, i: usize, interner: &mut Interner) -> Vec<Sym> {
        if self.list.is_null(i) {
            return Vec::new();
        }
        let offsets = self.list.value_offsets();
        let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
        (lo..hi)
            .filter(|&j| !self.values.is_null(j))
            .map(|j| interner.get(self.values.value(j)))
            .collect()
    }
}

/// A `List<Struct>` column whose string fields are cast once.
struct StructList {
    list: ListArray,
    strings: Vec<(String, StringArray)>,
    bools: Vec<(String, BooleanArray)>,
}

impl StructList {
    fn new(list: ListArray) -> Option<Self> {
        let values = list.values().as_struct_opt()?.clone();
        let mut strings = Vec::new();
        let mut bools = Vec::new();
        for (field, col) in values.fields().iter().zip(values.columns()) {
            match col.data_type() {
                DataType::Boolean => {
                    bools.push((field.name().clone(), col.as_boolean().clone()));
                }
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    if let Ok(c) = cast(col, &DataType::Utf8) {
                        strings.push((field.name().clone(), c.as_string::<i32>().clone()));
                    }
                }
                _ => {}
            }
        }
        Some(Self {
            list,
            strings,
            bools,
        })
    }

    fn range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        if self.list.is_null(i) {
            return None;
        }
        let offsets = self.list.value_offsets();
        Some(offsets[i] as usize..offsets[i + 1] as usize)
    }

    fn str_ref(&self, field: &str, j: usize) -> Option<&str> {
        let (_, c) = self.strings.iter().find(|(n, _)| n == field)?;
        (!c.is_null(j)).then(|| c.value(j))
    }

    fn bool(&self, field: &str, j: usize) -> Option<bool> {
        let (_, c) = self.bools.iter().find(|(n, _)| n == field)?;
        (!c.is_null(j)).then(|| c.value(j))
    }
}

fn tool_defs(a: &StructList, i: usize, interner: &mut Interner) -> Option<Vec<ToolDef>> {
    let range = a.range(i)?;
    let mut sym = |field: &str, j: usize| a.str_ref(field, j).map(|v| interner.get(v));
    Some(
        range
            .map(|j| ToolDef {
                name: sym("name", j).unwrap_or_default(),
                description: sym("description", j),
                has_output_schema: a.bool("has_output_schema", j),
                read_only_hint: a.bool("read_only_hint", j),
                destructive_hint: a.bool("destructive_hint", j),
                idempotent_hint: a.bool("idempotent_hint", j),
                open_world_hint: a.bool("open_world_hint", j),
                input_schema_digest: sym("input_schema_digest", j),
                output_schema_digest: sym("output_schema_digest", j),
            })
            .collect(),
    )
}

fn event_names(a: &StructList, i: usize, interner: &mut Interner) -> Vec<Sym> {
    a.range(i)
        .into_iter()
        .flatten()
        .filter_map(|j| a.str_ref("name", j).map(|n| interner.get(n)))
        .collect()
}

/// A `Map<Utf8, AnyValue>` column with keys and string values cast once.
struct StrMap {
    map: MapArray,
    keys: StringArray,
    values: Option<StringArray>,
}

impl StrMap {
    fn new(map: MapArray) -> Option<Self> {
        let keys = cast(map.keys(), &DataType::Utf8).ok()?;
        let keys = keys.as_string::<i32>().clone();
        let values = map
            .values()
            .as_struct_opt()
            .and_then(|v| v.column_by_name(schemas::schema::value::STR))
            .and_then(|c| cast(c, &DataType::Utf8).ok())
            .map(|c| c.as_string::<i32>().clone());
        Some(Self { map, keys, values })
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        if self.map.is_null(i) {
            return 0..0;
        }
        let offsets = self.map.value_offsets();
        offsets[i] as usize..offsets[i + 1] as usize
    }

    fn keys(&self, i: usize, interner: &mut Interner) -> Vec<Sym> {
        self.range(i)
            .filter(|&j| !self.keys.is_null(j))
            .map(|j| interner.get(self.keys.value(j)))
            .collect()
    }

    /// (key, string value) pairs of row `i` (entries without a string value are skipped).
    fn string_values(&self, i: usize) -> Vec<(String, String)> {
        let Some(values) = &self.values else {
            return Vec::new();
        };
        self.range(i)
            .filter(|&j| !self.keys.is_null(j) && !values.is_null(j))
            .map(|j| (self.keys.value(j).to_string(), values.value(j).to_string()))
            .collect()
    }
}

impl Columns {
    fn new(batch: &RecordBatch) -> Result<Self, LoadError> {
        let trace_id = binary(batch, col::TRACE_ID)?.ok_or_else(|| LoadError::ColumnType {
            column: col::TRACE_ID.into(),
            found: "nothing".into(),
            expected: "Binary",
        })?;
        let span_id = binary(batch, col::SPAN_ID)?.ok_or_else(|| LoadError::ColumnType {
            column: col::SPAN_ID.into(),
            found: "nothing".into(),
            expected: "Binary",
        })?;
        let mut string_cols = Vec::new();
        for (name, field) in STRING_COLUMNS {
            if let Some(a) = strings(batch, name)? {
                string_cols.push((*field, a));
            }
        }
        let mut bool_cols = Vec::new();
        for (name, field) in BOOL_COLUMNS {
            if let Some(a) = boolean(batch, name)? {
                bool_cols.push((*field, a));
            }
        }
        let mut content = Vec::new();
        for (name, field) in CONTENT_COLUMNS {
            if let Some(a) = strings(batch, name)? {
                content.push((*field, a));
            }
        }
        Ok(Self {
            trace_id,
            span_id,
            parent: binary(batch, col::PARENT_SPAN_ID)?,
            name: strings(batch, col::NAME)?,
            kind: strings(batch, col::KIND)?,
            start: int64(batch, col::START_TIME_UNIX_NANO)?,
            end: int64(batch, col::END_TIME_UNIX_NANO)?,
            status: strings(batch, col::STATUS_CODE)?,
            status_message: strings(batch, col::STATUS_MESSAGE)?,
            strings: string_cols,
            bools: bool_cols,
            result_content_types: list(batch, col::RESULT_CONTENT_TYPES)?.and_then(StrList::new),
            tool_definitions: list(batch, col::TOOL_DEFINITIONS)?.and_then(StructList::new),
            dialects: list(batch, col::DIALECTS)?.and_then(StrList::new),
            events: list(batch, col::EVENTS)?.and_then(StructList::new),
            attributes: map(batch, col::ATTRIBUTES)?.and_then(StrMap::new),
            content,
            content_attributes: map(batch, col::CONTENT_ATTRIBUTES)?.and_then(StrMap::new),
        })
    }

    fn row(&self, i: usize, interner: &mut Interner) -> Option<SpanRow> {
        let trace_id = TraceId::from_slice(self.trace_id.value(i))?;
        let span_id = SpanId::from_slice(self.span_id.value(i))?;
        let parent_span_id = self
            .parent
            .as_ref()
            .filter(|p| !p.is_null(i) && !p.value(i).is_empty())
            .and_then(|p| SpanId::from_slice(p.value(i)));
        let mut row = SpanRow {
            trace_id,
            span_id,
            parent_span_id,
            name: self
                .name
                .as_ref()
                .filter(|a| !a.is_null(i))
                .map(|a| interner.get(a.value(i)))
                .unwrap_or_default(),
            kind: SpanKindField(
                self.kind
                    .as_ref()
                    .filter(|a| !a.is_null(i))
                    .map_or(SpanKind::Unspecified, |a| SpanKind::parse(a.value(i))),
            ),
            start_ns: self
                .start
                .as_ref()
                .filter(|a| !a.is_null(i))
                .map_or(0, |a| a.value(i)),
            end_ns: self
                .end
                .as_ref()
                .filter(|a| !a.is_null(i))
                .map_or(0, |a| a.value(i)),
            status: StatusField(
                self.status
                    .as_ref()
                    .filter(|a| !a.is_null(i))
                    .map_or(StatusCode::Unset, |a| StatusCode::parse(a.value(i))),
            ),
            status_message: self
                .status_message
                .as_ref()
                .filter(|a| !a.is_null(i) && !a.value(i).is_empty())
                .map(|a| interner.get(a.value(i))),
            ..SpanRow::default()
        };
        for (field, a) in &self.strings {
            if a.is_null(i) {
                continue;
            }
            let v = a.value(i);
            let mut sym = || Some(interner.get(v));
            match field {
                StrField::Service => row.service_name = sym(),
                StrField::Scope => row.scope_name = sym(),
                StrField::Operation => row.operation_name = sym(),
                StrField::Provider => row.provider_name = sym(),
                StrField::RequestModel => row.request_model = sym(),
                StrField::Conversation => row.conversation_id = Some(v.to_string()),
                StrField::AgentName => row.agent_name = sym(),
                StrField::AgentId => row.agent_id = sym(),
                StrField::Tool => row.tool_name = sym(),
                StrField::ToolCallId => row.tool_call_id = Some(v.to_string()),
                StrField::Prompt => row.prompt_name = sym(),
                StrField::Method => row.mcp_method = sym(),
                StrField::Session => row.mcp_session_id = Some(v.to_string()),
                StrField::ResourceUri => row.mcp_resource_uri = sym(),
                StrField::RequestId => row.jsonrpc_request_id = Some(v.to_string()),
                StrField::RpcStatus => row.rpc_response_status_code = sym(),
                StrField::ErrorType => row.error_type = sym(),
                StrField::Skill => row.skill_name = sym(),
                StrField::GuardrailName => row.guardrail_name = sym(),
                StrField::GuardrailDecision => row.guardrail_decision = sym(),
                StrField::ResultType => row.result_type = sym(),
                StrField::ArgsDigest => row.arguments_digest = Some(v.to_string()),
                StrField::Traceparent => row.mcp_meta_traceparent = Some(v.to_string()),
            }
        }
        for (field, a) in &self.bools {
            let v = (!a.is_null(i)).then(|| a.value(i));
            match field {
                BoolField::HasStructured => row.result_has_structured_content = v,
                BoolField::IsError => row.result_is_error = v,
                BoolField::TextIsJsonObject => row.result_text_is_json_object = v,
            }
        }
        if let Some(a) = &self.result_content_types {
            row.result_content_types = a.row(i, interner);
        }
        if let Some(a) = &self.tool_definitions {
            row.tool_definitions = tool_defs(a, i, interner);
        }
        if let Some(a) = &self.dialects {
            row.dialects = a.row(i, interner);
        }
        if let Some(a) = &self.events {
            row.event_names = event_names(a, i, interner);
        }
        if let Some(a) = &self.attributes {
            row.attribute_keys = a.keys(i, interner);
        }
        if !self.content.is_empty() || self.content_attributes.is_some() {
            let mut c = SpanContent::default();
            for (field, a) in &self.content {
                let v = opt_str(a, i);
                match field {
                    ContentField::Arguments => c.tool_call_arguments = v,
                    ContentField::Result => c.tool_call_result = v,
                    ContentField::Input => c.input_messages = v,
                    ContentField::Output => c.output_messages = v,
                    ContentField::System => c.system_instructions = v,
                }
            }
            if let Some(a) = &self.content_attributes {
                c.other = a.string_values(i);
            }
            row.content = Some(Box::new(c));
        }
        Some(row)
    }
}
