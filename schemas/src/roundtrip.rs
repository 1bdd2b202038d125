//! Canonical rows back to OTLP: the proof that nothing the sender sent is lost.
//!
//! Consecutive rows with the same resource and scope are grouped into one `ResourceSpans` /
//! `ScopeSpans`, so a batch converted from a request (and possibly read back from Parquet) yields
//! that request again, up to attribute order: content attributes come back from their columns
//! after the generic ones. Typed columns and derived facts are copies and are not re-emitted.
//!
//! Not representable, hence not restored: resource `entity_refs` (profiling-era addition), and the
//! difference between an absent and an empty `status` / `resource` / `scope` message.

use arrow::array::{Array, BinaryArray, Int64Array, ListArray, MapArray, StringArray, StructArray};
use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value, AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};

use crate::columns::CONTENT_COLUMNS;
use crate::convert::value_type;
use crate::decode::{decode_any_value_json, decode_attributes_json};
use crate::error::SchemaError;
use crate::kind_status::{SpanKind, StatusCode};
use crate::lift::{attributes_in_columns, SlotKind};
use crate::schema::col;

/// Rebuilds the OTLP request a batch of canonical rows came from.
pub fn batch_to_request(batch: &RecordBatch) -> Result<ExportTraceServiceRequest, SchemaError> {
    let c = Columns::new(batch)?;
    let mut out: Vec<ResourceSpans> = Vec::new();
    for row in 0..batch.num_rows() {
        let resource = Resource {
            attributes: c.attributes_row(
                row,
                (col::RESOURCE_ATTRIBUTES_JSON, c.resource_attributes_json),
                (col::RESOURCE_ATTRIBUTES, c.resource_attributes),
            )?,
            dropped_attributes_count: c.u32(
                row,
                col::RESOURCE_DROPPED_ATTRIBUTES_COUNT,
                c.resource_dropped,
            )?,
            ..Default::default()
        };
        let resource_schema_url = opt_str(c.resource_schema_url, row);
        let scope = InstrumentationScope {
            name: opt_str(c.scope_name, row),
            version: opt_str(c.scope_version, row),
            attributes: c.attributes_row(
                row,
                (col::SCOPE_ATTRIBUTES_JSON, c.scope_attributes_json),
                (col::SCOPE_ATTRIBUTES, c.scope_attributes),
            )?,
            dropped_attributes_count: c.u32(
                row,
                col::SCOPE_DROPPED_ATTRIBUTES_COUNT,
                c.scope_dropped,
            )?,
        };
        let scope_schema_url = opt_str(c.scope_schema_url, row);
        let span = c.span(row)?;

        let same_resource = out.last().is_some_and(|rs| {
            rs.resource.as_ref() == Some(&resource) && rs.schema_url == resource_schema_url
        });
        if !same_resource {
            out.push(ResourceSpans {
                resource: Some(resource),
                scope_spans: Vec::new(),
                schema_url: resource_schema_url,
            });
        }
        let Some(rs) = out.last_mut() else { continue };
        let same_scope = rs.scope_spans.last().is_some_and(|ss| {
            ss.scope.as_ref() == Some(&scope) && ss.schema_url == scope_schema_url
        });
        if !same_scope {
            rs.scope_spans.push(ScopeSpans {
                scope: Some(scope),
                spans: Vec::new(),
                schema_url: scope_schema_url,
            });
        }
        if let Some(ss) = rs.scope_spans.last_mut() {
            ss.spans.push(span);
        }
    }
    Ok(ExportTraceServiceRequest {
        resource_spans: out,
    })
}

fn opt_str(a: &StringArray, row: usize) -> String {
    if a.is_null(row) {
        String::new()
    } else {
        a.value(row).to_string()
    }
}

/// A column added in a later schema version: `None` when the batch predates it.
fn optional_column<'a, T: 'static>(
    batch: &'a RecordBatch,
    name: &'static str,
) -> Result<Option<&'a T>, SchemaError> {
    match batch.column_by_name(name) {
        Some(_) => column(batch, name).map(Some),
        None => Ok(None),
    }
}

fn column<'a, T: 'static>(
    batch: &'a RecordBatch,
    name: &'static str,
) -> Result<&'a T, SchemaError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| SchemaError::MissingColumn(name.to_string()))?;
    downcast(array, name)
}

fn downcast<'a, T: 'static>(
    array: &'a arrow::array::ArrayRef,
    name: &'static str,
) -> Result<&'a T, SchemaError> {
    array
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| SchemaError::ColumnType {
            column: name,
            expected: std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("array")
                .to_string(),
            found: array.data_type().to_string(),
        })
}

struct Columns<'a> {
    trace_id: &'a BinaryArray,
    span_id: &'a BinaryArray,
    parent_span_id: &'a BinaryArray,
    trace_state: &'a StringArray,
    flags: &'a Int64Array,
    name: &'a StringArray,
    kind: &'a StringArray,
    start: &'a Int64Array,
    end: &'a Int64Array,
    status_code: &'a StringArray,
    status_message: &'a StringArray,
    resource_attributes: &'a MapArray,
    /// Absent from a schema-1 batch read as written.
    resource_attributes_json: Option<&'a StringArray>,
    resource_dropped: &'a Int64Array,
    resource_schema_url: &'a StringArray,
    scope_name: &'a StringArray,
    scope_version: &'a StringArray,
    scope_attributes: &'a MapArray,
    scope_attributes_json: Option<&'a StringArray>,
    scope_dropped: &'a Int64Array,
    /// Absent from a schema-1 batch read as written.
    attributes_in_columns: Option<&'a Int64Array>,
    batch: &'a RecordBatch,
    scope_schema_url: &'a StringArray,
    content: Vec<(&'static str, &'a StringArray)>,
    content_attributes: &'a MapArray,
    attributes: &'a MapArray,
    dropped_attributes: &'a Int64Array,
    events: &'a ListArray,
    dropped_events: &'a Int64Array,
    links: &'a ListArray,
    dropped_links: &'a Int64Array,
}

impl<'a> Columns<'a> {
    fn new(b: &'a RecordBatch) -> Result<Self, SchemaError> {
        let mut content = Vec::with_capacity(CONTENT_COLUMNS.len());
        for &(key, name) in CONTENT_COLUMNS {
            content.push((key, column::<StringArray>(b, name)?));
        }
        Ok(Columns {
            trace_id: column(b, col::TRACE_ID)?,
            span_id: column(b, col::SPAN_ID)?,
            parent_span_id: column(b, col::PARENT_SPAN_ID)?,
            trace_state: column(b, col::TRACE_STATE)?,
            flags: column(b, col::FLAGS)?,
            name: column(b, col::NAME)?,
            kind: column(b, col::KIND)?,
            start: column(b, col::START_TIME_UNIX_NANO)?,
            end: column(b, col::END_TIME_UNIX_NANO)?,
            status_code: column(b, col::STATUS_CODE)?,
            status_message: column(b, col::STATUS_MESSAGE)?,
            resource_attributes: column(b, col::RESOURCE_ATTRIBUTES)?,
            resource_attributes_json: optional_column(b, col::RESOURCE_ATTRIBUTES_JSON)?,
            resource_dropped: column(b, col::RESOURCE_DROPPED_ATTRIBUTES_COUNT)?,
            resource_schema_url: column(b, col::RESOURCE_SCHEMA_URL)?,
            scope_name: column(b, col::SCOPE_NAME)?,
            scope_version: column(b, col::SCOPE_VERSION)?,
            scope_attributes: column(b, col::SCOPE_ATTRIBUTES)?,
            scope_attributes_json: optional_column(b, col::SCOPE_ATTRIBUTES_JSON)?,
            attributes_in_columns: optional_column(b, col::ATTRIBUTES_IN_COLUMNS)?,
            batch: b,
            scope_dropped: column(b, col::SCOPE_DROPPED_ATTRIBUTES_COUNT)?,
            scope_schema_url: column(b, col::SCOPE_SCHEMA_URL)?,
            content,
            content_attributes: column(b, col::CONTENT_ATTRIBUTES)?,
            attributes: column(b, col::ATTRIBUTES)?,
            dropped_attributes: column(b, col::DROPPED_ATTRIBUTES_COUNT)?,
            events: column(b, col::EVENTS)?,
            dropped_events: column(b, col::DROPPED_EVENTS_COUNT)?,
            links: column(b, col::LINKS)?,
            dropped_links: column(b, col::DROPPED_LINKS_COUNT)?,
        })
    }

    fn u32(&self, row: usize, name: &'static str, a: &Int64Array) -> Result<u32, SchemaError> {
        if a.is_null(row) {
            return Ok(0);
        }
        u32::try_from(a.value(row)).map_err(|_| SchemaError::InvalidValue {
            row,
            column: name,
            message: format!("{} does not fit an OTLP uint32 count", a.value(row)),
        })
    }

    fn map_row(
        &self,
        row: usize,
        name: &'static str,
        m: &MapArray,
    ) -> Result<Vec<KeyValue>, SchemaError> {
        if m.is_null(row) {
            return Ok(Vec::new());
        }
        map_entries(&m.value(row), row, name)
    }

    /// A resource's or scope's attributes: from the JSON column where it is set (schema 2), from
    /// the map otherwise (schema-1 files, which have no JSON column).
    fn attributes_row(
        &self,
        row: usize,
        (json_name, json): (&'static str, Option<&StringArray>),
        (map_name, map): (&'static str, &MapArray),
    ) -> Result<Vec<KeyValue>, SchemaError> {
        match json.filter(|j| !j.is_null(row)) {
            Some(j) => {
                decode_attributes_json(j.value(row)).map_err(|e| SchemaError::InvalidValue {
                    row,
                    column: json_name,
                    message: e.to_string(),
                })
            }
            None => self.map_row(row, map_name, map),
        }
    }

    /// The registry attributes kept only in their typed columns (`attributes_in_columns`, schema
    /// 2), rebuilt with the name and value type they were sent with.
    fn in_columns(&self, row: usize, out: &mut Vec<KeyValue>) -> Result<(), SchemaError> {
        let Some(mask) = self
            .attributes_in_columns
            .filter(|m| !m.is_null(row))
            .map(|m| m.value(row))
            .filter(|&m| m != 0)
        else {
            return Ok(());
        };
        for slot in attributes_in_columns(mask) {
            let missing = || SchemaError::InvalidValue {
                row,
                column: col::ATTRIBUTES_IN_COLUMNS,
                message: format!(
                    "says `{}` is kept in `{}`, which is null",
                    slot.attribute, slot.column
                ),
            };
            let array = self
                .batch
                .column_by_name(slot.column)
                .ok_or_else(|| SchemaError::MissingColumn(slot.column.to_string()))?;
            if array.is_null(row) {
                return Err(missing());
            }
            let value = match slot.kind {
                SlotKind::Str => Value::StringValue(
                    downcast::<StringArray>(array, slot.column)?
                        .value(row)
                        .to_string(),
                ),
                SlotKind::Int => {
                    Value::IntValue(downcast::<Int64Array>(array, slot.column)?.value(row))
                }
                SlotKind::StrList => {
                    let items = downcast::<ListArray>(array, slot.column)?.value(row);
                    let items = downcast::<StringArray>(&items, slot.column)?;
                    Value::ArrayValue(ArrayValue {
                        values: (0..items.len())
                            .map(|i| AnyValue {
                                value: Some(Value::StringValue(items.value(i).to_string())),
                            })
                            .collect(),
                    })
                }
            };
            out.push(KeyValue {
                key: slot.attribute.to_string(),
                value: Some(AnyValue { value: Some(value) }),
                ..Default::default()
            });
        }
        Ok(())
    }

    fn span(&self, row: usize) -> Result<Span, SchemaError> {
        let mut attributes = self.map_row(row, col::ATTRIBUTES, self.attributes)?;
        self.in_columns(row, &mut attributes)?;
        attributes.extend(self.map_row(row, col::CONTENT_ATTRIBUTES, self.content_attributes)?);
        for (key, array) in &self.content {
            if !array.is_null(row) {
                attributes.push(KeyValue {
                    key: (*key).to_string(),
                    value: Some(AnyValue {
                        value: Some(Value::StringValue(array.value(row).to_string())),
                    }),
                    ..Default::default()
                });
            }
        }
        let kind_text = self.kind.value(row);
        let kind =
            parse_enum(kind_text, &SpanKind::NAMES).ok_or_else(|| SchemaError::InvalidValue {
                row,
                column: col::KIND,
                message: format!("unknown span kind `{kind_text}`"),
            })?;
        let code_text = self.status_code.value(row);
        let code =
            parse_enum(code_text, &StatusCode::NAMES).ok_or_else(|| SchemaError::InvalidValue {
                row,
                column: col::STATUS_CODE,
                message: format!("unknown status code `{code_text}`"),
            })?;
        Ok(Span {
            trace_id: self.trace_id.value(row).to_vec(),
            span_id: self.span_id.value(row).to_vec(),
            trace_state: opt_str(self.trace_state, row),
            parent_span_id: if self.parent_span_id.is_null(row) {
                Vec::new()
            } else {
                self.parent_span_id.value(row).to_vec()
            },
            flags: self.u32(row, col::FLAGS, self.flags)?,
            name: self.name.value(row).to_string(),
            kind,
            start_time_unix_nano: nanos(self.start, row, col::START_TIME_UNIX_NANO)?,
            end_time_unix_nano: nanos(self.end, row, col::END_TIME_UNIX_NANO)?,
            attributes,
            dropped_attributes_count: self.u32(
                row,
                col::DROPPED_ATTRIBUTES_COUNT,
                self.dropped_attributes,
            )?,
            events: self.events(row)?,
            dropped_events_count: self.u32(row, col::DROPPED_EVENTS_COUNT, self.dropped_events)?,
            links: self.links(row)?,
            dropped_links_count: self.u32(row, col::DROPPED_LINKS_COUNT, self.dropped_links)?,
            status: Some(Status {
                message: opt_str(self.status_message, row),
                code,
            }),
        })
    }

    fn events(&self, row: usize) -> Result<Vec<span::Event>, SchemaError> {
        if self.events.is_null(row) {
            return Ok(Vec::new());
        }
        let items = self.events.value(row);
        let s = struct_of(&items, row, col::EVENTS)?;
        let time = child::<Int64Array>(s, 0, row, col::EVENTS)?;
        let name = child::<StringArray>(s, 1, row, col::EVENTS)?;
        let attrs = child::<MapArray>(s, 2, row, col::EVENTS)?;
        let dropped = child::<Int64Array>(s, 3, row, col::EVENTS)?;
        (0..s.len())
            .map(|i| {
                Ok(span::Event {
                    time_unix_nano: nanos(time, i, col::EVENTS)?,
                    name: opt_str(name, i),
                    attributes: self.map_row(i, col::EVENTS, attrs)?,
                    dropped_attributes_count: self.u32(i, col::EVENTS, dropped)?,
                })
            })
            .collect()
    }

    fn links(&self, row: usize) -> Result<Vec<span::Link>, SchemaError> {
        if self.links.is_null(row) {
            return Ok(Vec::new());
        }
        let items = self.links.value(row);
        let s = struct_of(&items, row, col::LINKS)?;
        let trace_id = child::<BinaryArray>(s, 0, row, col::LINKS)?;
        let span_id = child::<BinaryArray>(s, 1, row, col::LINKS)?;
        let trace_state = child::<StringArray>(s, 2, row, col::LINKS)?;
        let flags = child::<Int64Array>(s, 3, row, col::LINKS)?;
        let attrs = child::<MapArray>(s, 4, row, col::LINKS)?;
        let dropped = child::<Int64Array>(s, 5, row, col::LINKS)?;
        (0..s.len())
            .map(|i| {
                Ok(span::Link {
                    trace_id: trace_id.value(i).to_vec(),
                    span_id: span_id.value(i).to_vec(),
                    trace_state: opt_str(trace_state, i),
                    attributes: self.map_row(i, col::LINKS, attrs)?,
                    dropped_attributes_count: self.u32(i, col::LINKS, dropped)?,
                    flags: self.u32(i, col::LINKS, flags)?,
                })
            })
            .collect()
    }
}

fn nanos(a: &Int64Array, row: usize, name: &'static str) -> Result<u64, SchemaError> {
    if a.is_null(row) {
        return Ok(0);
    }
    u64::try_from(a.value(row)).map_err(|_| SchemaError::InvalidValue {
        row,
        column: name,
        message: format!(
            "negative time {} cannot be sent as OTLP fixed64",
            a.value(row)
        ),
    })
}

fn parse_enum(text: &str, names: &[&str]) -> Option<i32> {
    names
        .iter()
        .position(|n| *n == text)
        .and_then(|i| i32::try_from(i).ok())
        .or_else(|| text.parse().ok())
}

fn struct_of<'a>(
    a: &'a dyn Array,
    row: usize,
    name: &'static str,
) -> Result<&'a StructArray, SchemaError> {
    a.as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| SchemaError::InvalidValue {
            row,
            column: name,
            message: format!("expected a struct, found {}", a.data_type()),
        })
}

fn child<'a, T: 'static>(
    s: &'a StructArray,
    i: usize,
    row: usize,
    name: &'static str,
) -> Result<&'a T, SchemaError> {
    s.columns()
        .get(i)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| SchemaError::InvalidValue {
            row,
            column: name,
            message: format!("child {i} has an unexpected type"),
        })
}

fn map_entries(
    entries: &StructArray,
    row: usize,
    name: &'static str,
) -> Result<Vec<KeyValue>, SchemaError> {
    let keys = child::<StringArray>(entries, 0, row, name)?;
    let values = child::<StructArray>(entries, 1, row, name)?;
    let ty = child::<StringArray>(values, 0, row, name)?;
    let s = child::<StringArray>(values, 1, row, name)?;
    let int = child::<Int64Array>(values, 2, row, name)?;
    let dbl = child::<arrow::array::Float64Array>(values, 3, row, name)?;
    let b = child::<arrow::array::BooleanArray>(values, 4, row, name)?;
    let bytes = child::<BinaryArray>(values, 5, row, name)?;
    let mut out = Vec::with_capacity(entries.len());
    for i in 0..entries.len() {
        let invalid = |what: &str| SchemaError::InvalidValue {
            row,
            column: name,
            message: format!("attribute `{}`: {what}", keys.value(i)),
        };
        let value = if values.is_null(i) {
            None
        } else {
            match ty.value(i) {
                value_type::STRING => Some(Value::StringValue(s.value(i).to_string())),
                value_type::BOOL => Some(Value::BoolValue(b.value(i))),
                value_type::INT => Some(Value::IntValue(int.value(i))),
                value_type::DOUBLE => Some(Value::DoubleValue(dbl.value(i))),
                value_type::BYTES => Some(Value::BytesValue(bytes.value(i).to_vec())),
                value_type::ARRAY | value_type::KVLIST => {
                    decode_any_value_json(s.value(i))
                        .map_err(|e| invalid(&e.to_string()))?
                        .value
                }
                value_type::EMPTY => None,
                other => return Err(invalid(&format!("unknown value type `{other}`"))),
            }
        };
        out.push(KeyValue {
            key: keys.value(i).to_string(),
            value: Some(AnyValue { value }),
            ..Default::default()
        });
    }
    Ok(out)
}
