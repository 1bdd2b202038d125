//! Column builders for the canonical span row: one builder per column, appended in one pass over
//! the spans, finished into a `RecordBatch` of [`store_batch_schema`]: the canonical span schema
//! with the origin columns as dictionaries ([`super::origin`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::trace::v1::Span;

pub(super) use super::attrs::AttrMapBuilder;
use super::attrs::REDACTED;
use super::content::Split;
use super::nested::{EventsBuilder, LinksBuilder, StrListBuilder, ToolDefsBuilder};
use super::null_runs::NullRuns;
use super::origin::store_batch_schema;
use super::origin::{OriginColumns, ORIGIN_COLUMNS};
use crate::columns::{CONTENT_COLUMNS, N_CONTENT_COLUMNS};
use crate::derived::Derived;
use crate::error::SchemaError;
use crate::kind_status::{kind_name, status_name};
use crate::lift::{SlotKind, SlotValue, N_SLOTS, SLOTS};
use crate::schema::col;

/// The resource and scope a span was sent under.
pub struct Origin<'a> {
    pub service_name: Option<&'a str>,
    pub service_version: Option<&'a str>,
    pub service_instance_id: Option<&'a str>,
    /// The resource's attributes as JSON text, built once per resource
    /// ([`crate::encode::attributes_json`] of its unique keys) and stored in every row.
    pub resource_attributes_json: &'a str,
    pub resource_dropped: u32,
    pub resource_schema_url: &'a str,
    pub scope_name: &'a str,
    pub scope_version: &'a str,
    /// The scope's attributes as JSON text, built once per scope.
    pub scope_attributes_json: &'a str,
    pub scope_dropped: u32,
    pub scope_schema_url: &'a str,
}

/// Everything computed for one span besides the span itself.
pub struct RowParts<'a> {
    pub split: &'a Split<'a>,
    pub lifted: &'a [Option<SlotValue<'a>>; N_SLOTS],
    /// Which registry attributes were removed from `split.attributes` because their lifted
    /// column holds them whole ([`super::moved`]).
    pub attributes_in_columns: i64,
    pub derived: &'a Derived,
    pub dialects: &'a [&'static str],
    pub redact: bool,
}

enum SlotBuilder {
    Str(SparseStr),
    Int(SparseInt),
    List(StrListBuilder),
}

/// A string column that is NULL in most rows ([`NullRuns`]).
type SparseStr = NullRuns<StringBuilder>;
/// An integer column that is NULL in most rows.
type SparseInt = NullRuns<Int64Builder>;
/// A boolean column that is NULL in most rows.
type SparseBool = NullRuns<BooleanBuilder>;

/// Builders for every column.
pub struct SpanBatchBuilder {
    trace_id: BinaryBuilder,
    span_id: BinaryBuilder,
    parent_span_id: BinaryBuilder,
    trace_state: SparseStr,
    flags: Int64Builder,
    parent_is_remote: SparseBool,
    name: StringBuilder,
    kind: StringBuilder,
    start_time: TimestampMicrosecondBuilder,
    end_time: TimestampMicrosecondBuilder,
    start_ns: Int64Builder,
    end_ns: Int64Builder,
    duration_ns: Int64Builder,
    status_code: StringBuilder,
    status_message: SparseStr,
    /// The resource's and the scope's columns and `ingest_source`: one value per scope.
    origin: OriginColumns,
    /// Null in every row since schema 2 (the JSON column holds the resource's attributes).
    resource_attributes: AttrMapBuilder,
    resource_dropped: Int64Builder,
    /// Null in every row since schema 2.
    scope_attributes: AttrMapBuilder,
    attributes_in_columns: Int64Builder,
    scope_dropped: Int64Builder,
    slots: Vec<SlotBuilder>,
    content: [SparseStr; N_CONTENT_COLUMNS],
    content_attributes: AttrMapBuilder,
    content_truncated: SparseBool,
    result_has_structured_content: SparseBool,
    result_is_error: SparseBool,
    result_content_types: StrListBuilder,
    result_type: SparseStr,
    result_text_is_json_object: SparseBool,
    tool_call_arguments_digest: SparseStr,
    tool_definitions: ToolDefsBuilder,
    mcp_meta_traceparent: SparseStr,
    attributes: AttrMapBuilder,
    dropped_attributes: Int64Builder,
    events: EventsBuilder,
    dropped_events: Int64Builder,
    links: LinksBuilder,
    dropped_links: Int64Builder,
    dialects: StrListBuilder,
    received_at: TimestampMicrosecondBuilder,
    rows: usize,
}

pub(super) fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// How many rows and attribute-map entries a batch will hold, counted from the request before
/// converting it: the builders are allocated once at their final size instead of growing by
/// doubling (realloc + copy of every buffer, several times per request).
#[derive(Debug, Clone, Copy, Default)]
pub struct Capacity {
    /// Spans.
    pub rows: usize,
    /// The spans' own attributes.
    pub span_entries: usize,
}

/// The most bytes a guessed string-buffer size asks for up front (the guess only saves regrowth;
/// an exact count is not known before converting).
const MAX_GUESSED_BYTES: usize = 4 << 20;

/// A first buffer size for `items` values of about `bytes_each` bytes, capped at
/// [`MAX_GUESSED_BYTES`] so a hostile request cannot make the guess allocate more than its rows.
pub(super) fn guessed_bytes(items: usize, bytes_each: usize) -> usize {
    items.saturating_mul(bytes_each).min(MAX_GUESSED_BYTES)
}

impl SpanBatchBuilder {
    /// Builders sized for `cap` (an estimate: more rows or entries still fit, by growing).
    pub fn with_capacity(cap: Capacity) -> Self {
        let n = cap.rows;
        // Bytes per row of the small string columns (names, kinds, codes, versions): a guess
        // that only sets the first allocation.
        let short =
            |bytes_per_row: usize| StringBuilder::with_capacity(n, guessed_bytes(n, bytes_per_row));
        let ints = || Int64Builder::with_capacity(n);
        let bools = || BooleanBuilder::with_capacity(n);
        let sparse_str = |bytes_per_row: usize| NullRuns::new(short(bytes_per_row));
        let sparse_bool = || NullRuns::new(bools());
        let micros = || TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
        SpanBatchBuilder {
            trace_id: BinaryBuilder::with_capacity(n, n.saturating_mul(16)),
            span_id: BinaryBuilder::with_capacity(n, n.saturating_mul(8)),
            parent_span_id: BinaryBuilder::with_capacity(n, n.saturating_mul(8)),
            trace_state: sparse_str(0),
            flags: ints(),
            parent_is_remote: sparse_bool(),
            name: short(24),
            kind: short(8),
            start_time: micros(),
            end_time: micros(),
            start_ns: ints(),
            end_ns: ints(),
            duration_ns: ints(),
            status_code: short(5),
            status_message: sparse_str(0),
            origin: OriginColumns::with_capacity(n),
            resource_attributes: AttrMapBuilder::with_capacity(n, 0),
            resource_dropped: ints(),
            scope_attributes: AttrMapBuilder::with_capacity(n, 0),
            attributes_in_columns: ints(),
            scope_dropped: ints(),
            slots: SLOTS
                .iter()
                .map(|s| match s.kind {
                    SlotKind::Str => SlotBuilder::Str(sparse_str(0)),
                    SlotKind::Int => SlotBuilder::Int(NullRuns::new(ints())),
                    SlotKind::StrList => SlotBuilder::List(StrListBuilder::with_capacity(n)),
                })
                .collect(),
            content: std::array::from_fn(|_| sparse_str(0)),
            content_attributes: AttrMapBuilder::with_capacity(n, 0),
            content_truncated: sparse_bool(),
            result_has_structured_content: sparse_bool(),
            result_is_error: sparse_bool(),
            result_content_types: StrListBuilder::with_capacity(n),
            result_type: sparse_str(0),
            result_text_is_json_object: sparse_bool(),
            tool_call_arguments_digest: sparse_str(0),
            tool_definitions: ToolDefsBuilder::new(),
            mcp_meta_traceparent: sparse_str(0),
            attributes: AttrMapBuilder::with_capacity(n, cap.span_entries),
            dropped_attributes: ints(),
            events: EventsBuilder::new(),
            dropped_events: ints(),
            links: LinksBuilder::new(),
            dropped_links: ints(),
            dialects: StrListBuilder::with_capacity(n),
            received_at: micros(),
            rows: 0,
        }
    }

    /// Number of rows appended.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// The spans appended next were sent under `origin` (one call per scope of a request).
    pub fn begin_origin(&mut self, origin: &Origin<'_>, ingest_source: &str) {
        self.origin.begin(origin, ingest_source);
    }

    /// Appends one validated span (ids and times were checked by the caller).
    pub fn append(
        &mut self,
        span: &Span,
        origin: &Origin<'_>,
        parts: &RowParts<'_>,
        received_at_unix_nano: i64,
    ) {
        self.rows += 1;
        self.trace_id.append_value(&span.trace_id);
        self.span_id.append_value(&span.span_id);
        if span.parent_span_id.is_empty() {
            self.parent_span_id.append_null();
        } else {
            self.parent_span_id.append_value(&span.parent_span_id);
        }
        self.trace_state.append_option(non_empty(&span.trace_state));
        self.flags.append_value(i64::from(span.flags));
        self.parent_is_remote
            .append_option((span.flags & 0x100 != 0).then_some(span.flags & 0x200 != 0));
        self.name.append_value(&span.name);
        self.kind.append_value(kind_name(span.kind));
        let start = span.start_time_unix_nano as i64;
        let end = span.end_time_unix_nano as i64;
        self.start_time.append_value(start.div_euclid(1000));
        self.end_time.append_value(end.div_euclid(1000));
        self.start_ns.append_value(start);
        self.end_ns.append_value(end);
        self.duration_ns.append_value(end.wrapping_sub(start));
        let status = span.status.as_ref();
        self.status_code
            .append_value(status_name(status.map_or(0, |s| s.code)));
        self.status_message
            .append_option(status.and_then(|s| non_empty(&s.message)));

        self.origin.row();
        self.resource_attributes.null_row();
        self.resource_dropped
            .append_value(i64::from(origin.resource_dropped));
        self.scope_attributes.null_row();
        self.scope_dropped
            .append_value(i64::from(origin.scope_dropped));

        for (builder, value) in self.slots.iter_mut().zip(parts.lifted.iter()) {
            match (builder, value) {
                (SlotBuilder::Str(b), Some(SlotValue::Str(s))) => b.append_option(Some(s.as_ref())),
                (SlotBuilder::Str(b), _) => b.null(),
                (SlotBuilder::Int(b), Some(SlotValue::Int(i))) => b.append_option(Some(*i)),
                (SlotBuilder::Int(b), _) => b.null(),
                (SlotBuilder::List(b), Some(SlotValue::List(l))) => b.row(Some(l.as_slice())),
                (SlotBuilder::List(b), _) => b.row::<&str>(None),
            }
        }

        let split = parts.split;
        for (builder, value) in self.content.iter_mut().zip(split.columns.iter()) {
            builder.append_option(value.map(|v| if parts.redact { REDACTED } else { v }));
        }
        if split.content_attributes.is_empty() {
            self.content_attributes.null_row();
        } else {
            for (key, value) in &split.content_attributes {
                if parts.redact {
                    self.content_attributes.entry_str(key, REDACTED);
                } else {
                    self.content_attributes.entry(key, *value);
                }
            }
            self.content_attributes.end_row();
        }
        self.content_truncated.append_option(split.truncated);

        let d = parts.derived;
        self.result_has_structured_content
            .append_option(d.result_has_structured_content);
        self.result_is_error.append_option(d.result_is_error);
        self.result_content_types
            .row(d.result_content_types.as_deref());
        self.result_type.append_option(d.result_type);
        self.result_text_is_json_object
            .append_option(d.result_text_is_json_object);
        self.tool_call_arguments_digest
            .append_option(d.tool_call_arguments_digest.as_deref());
        self.tool_definitions.row(d.tool_definitions.as_deref());
        self.mcp_meta_traceparent
            .append_option(d.mcp_meta_traceparent.as_deref());

        for (key, value) in &split.attributes {
            self.attributes.entry(key, *value);
        }
        self.attributes.end_row();
        self.attributes_in_columns
            .append_value(parts.attributes_in_columns);
        self.dropped_attributes
            .append_value(i64::from(span.dropped_attributes_count));
        self.events.row(&span.events);
        self.dropped_events
            .append_value(i64::from(span.dropped_events_count));
        self.links.row(&span.links);
        self.dropped_links
            .append_value(i64::from(span.dropped_links_count));
        self.dialects.row(Some(parts.dialects));
        self.received_at
            .append_value(received_at_unix_nano.div_euclid(1000));
    }

    /// Finishes every column into a batch of [`store_batch_schema`].
    pub fn finish(&mut self) -> Result<RecordBatch, SchemaError> {
        let mut cols: HashMap<&'static str, ArrayRef> = HashMap::with_capacity(96);
        let mut put = |name: &'static str, a: ArrayRef| {
            cols.insert(name, a);
        };
        put(col::TRACE_ID, Arc::new(self.trace_id.finish()));
        put(col::SPAN_ID, Arc::new(self.span_id.finish()));
        put(col::PARENT_SPAN_ID, Arc::new(self.parent_span_id.finish()));
        put(
            col::TRACE_STATE,
            Arc::new(self.trace_state.flushed().finish()),
        );
        put(col::FLAGS, Arc::new(self.flags.finish()));
        put(
            col::PARENT_IS_REMOTE,
            Arc::new(self.parent_is_remote.flushed().finish()),
        );
        put(col::NAME, Arc::new(self.name.finish()));
        put(col::KIND, Arc::new(self.kind.finish()));
        put(col::START_TIME, Arc::new(self.start_time.finish()));
        put(col::END_TIME, Arc::new(self.end_time.finish()));
        put(col::START_TIME_UNIX_NANO, Arc::new(self.start_ns.finish()));
        put(col::END_TIME_UNIX_NANO, Arc::new(self.end_ns.finish()));
        put(col::DURATION_NS, Arc::new(self.duration_ns.finish()));
        put(col::STATUS_CODE, Arc::new(self.status_code.finish()));
        put(
            col::STATUS_MESSAGE,
            Arc::new(self.status_message.flushed().finish()),
        );
        for (name, array) in ORIGIN_COLUMNS.into_iter().zip(self.origin.finish()?) {
            put(name, array);
        }
        put(col::RESOURCE_ATTRIBUTES, self.resource_attributes.finish()?);
        put(
            col::RESOURCE_DROPPED_ATTRIBUTES_COUNT,
            Arc::new(self.resource_dropped.finish()),
        );
        put(col::SCOPE_ATTRIBUTES, self.scope_attributes.finish()?);
        put(
            col::ATTRIBUTES_IN_COLUMNS,
            Arc::new(self.attributes_in_columns.finish()),
        );
        put(
            col::SCOPE_DROPPED_ATTRIBUTES_COUNT,
            Arc::new(self.scope_dropped.finish()),
        );
        for (slot, builder) in SLOTS.iter().zip(self.slots.iter_mut()) {
            let array: ArrayRef = match builder {
                SlotBuilder::Str(b) => Arc::new(b.flushed().finish()),
                SlotBuilder::Int(b) => Arc::new(b.flushed().finish()),
                SlotBuilder::List(b) => b.finish(slot.column)?,
            };
            put(slot.column, array);
        }
        for ((_, column), builder) in CONTENT_COLUMNS.iter().zip(self.content.iter_mut()) {
            put(column, Arc::new(builder.flushed().finish()));
        }
        put(col::CONTENT_ATTRIBUTES, self.content_attributes.finish()?);
        put(
            col::CONTENT_TRUNCATED,
            Arc::new(self.content_truncated.flushed().finish()),
        );
        put(
            col::RESULT_HAS_STRUCTURED_CONTENT,
            Arc::new(self.result_has_structured_content.flushed().finish()),
        );
        put(
            col::RESULT_IS_ERROR,
            Arc::new(self.result_is_error.flushed().finish()),
        );
        put(
            col::RESULT_CONTENT_TYPES,
            self.result_content_types
                .finish(col::RESULT_CONTENT_TYPES)?,
        );
        put(
            col::RESULT_TYPE,
            Arc::new(self.result_type.flushed().finish()),
        );
        put(
            col::RESULT_TEXT_IS_JSON_OBJECT,
            Arc::new(self.result_text_is_json_object.flushed().finish()),
        );
        put(
            col::TOOL_CALL_ARGUMENTS_DIGEST,
            Arc::new(self.tool_call_arguments_digest.flushed().finish()),
        );
        put(
            col::TOOL_DEFINITIONS,
            self.tool_definitions.finish(col::TOOL_DEFINITIONS)?,
        );
        put(
            col::MCP_META_TRACEPARENT,
            Arc::new(self.mcp_meta_traceparent.flushed().finish()),
        );
        put(col::ATTRIBUTES, self.attributes.finish()?);
        put(
            col::DROPPED_ATTRIBUTES_COUNT,
            Arc::new(self.dropped_attributes.finish()),
        );
        put(col::EVENTS, self.events.finish(col::EVENTS)?);
        put(
            col::DROPPED_EVENTS_COUNT,
            Arc::new(self.dropped_events.finish()),
        );
        put(col::LINKS, self.links.finish(col::LINKS)?);
        put(
            col::DROPPED_LINKS_COUNT,
            Arc::new(self.dropped_links.finish()),
        );
        put(col::DIALECTS, self.dialects.finish(col::DIALECTS)?);
        put(col::RECEIVED_AT, Arc::new(self.received_at.finish()));
        self.rows = 0;

        let schema = store_batch_schema();
        let mut arrays = Vec::with_capacity(schema.fields().len());
        for field in schema.fields() {
            let name = field.name().as_str();
            let column = cols
                .remove(name)
                .ok_or_else(|| SchemaError::MissingColumn(name.to_string()))?;
            arrays.push(column);
        }
        Ok(RecordBatch::try_new(schema, arrays)?)
    }
}
