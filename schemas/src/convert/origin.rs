//! The columns that say where a span came from (its resource, its scope, the ingest source):
//! built once per scope of a request, as dictionaries, instead of copied into every row.
//!
//! Why: their values are the same for every span of a scope, and long. In the benchmark load
//! `resource_attributes_json` alone is 356 bytes a span, the ten columns together about 480:
//! copying them into string builders row by row was most of the conversion's `memmove`
//! (BENCHMARKS.md, session 43). Here each scope appends its values once and each row one
//! dictionary key, shared by the ten columns.
//!
//! The dictionary arrays never reach a reader: parquet-rs writes a dictionary array into a plain
//! string column value by value, so the files are the same bytes as before (a test writes both),
//! and [`super::convert_request_bounded`] casts them back to strings for every caller that wants
//! the canonical [`crate::schema::span_schema`] batch.

use std::sync::{Arc, OnceLock};

use arrow::array::{Array, ArrayRef, DictionaryArray, Int32Array, StringBuilder};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::builder::{non_empty, Origin};
use crate::error::SchemaError;
use crate::schema::{col, span_schema};

/// The origin columns, in the order [`OriginColumns::finish`] returns them.
pub const ORIGIN_COLUMNS: [&str; 10] = [
    col::SERVICE_NAME,
    col::SERVICE_VERSION,
    col::SERVICE_INSTANCE_ID,
    col::RESOURCE_ATTRIBUTES_JSON,
    col::RESOURCE_SCHEMA_URL,
    col::SCOPE_NAME,
    col::SCOPE_VERSION,
    col::SCOPE_ATTRIBUTES_JSON,
    col::SCOPE_SCHEMA_URL,
    col::INGEST_SOURCE,
];

/// One dictionary value per scope ([`OriginColumns::begin`]) and one key per row, shared.
pub(super) struct OriginColumns {
    keys: Vec<i32>,
    /// Scopes begun; the current one is `begun - 1`.
    begun: i32,
    values: [StringBuilder; ORIGIN_COLUMNS.len()],
}

impl OriginColumns {
    pub(super) fn with_capacity(rows: usize) -> Self {
        OriginColumns {
            keys: Vec::with_capacity(rows),
            begun: 0,
            values: std::array::from_fn(|_| StringBuilder::new()),
        }
    }

    /// The values of a new scope's rows, null where the row held null: an absent service name,
    /// version or instance id, and an empty schema URL, scope name or scope version.
    pub(super) fn begin(&mut self, origin: &Origin<'_>, ingest_source: &str) {
        let values: [Option<&str>; ORIGIN_COLUMNS.len()] = [
            origin.service_name,
            origin.service_version,
            origin.service_instance_id,
            Some(origin.resource_attributes_json),
            non_empty(origin.resource_schema_url),
            non_empty(origin.scope_name),
            non_empty(origin.scope_version),
            Some(origin.scope_attributes_json),
            non_empty(origin.scope_schema_url),
            Some(ingest_source),
        ];
        for (builder, value) in self.values.iter_mut().zip(values) {
            builder.append_option(value);
        }
        self.begun += 1;
    }

    /// One row of the scope begun last.
    pub(super) fn row(&mut self) {
        debug_assert!(self.begun > 0, "a row before its scope");
        self.keys.push(self.begun - 1);
    }

    /// The ten columns as `Dictionary(Int32, Utf8)` arrays over the same keys, in
    /// [`ORIGIN_COLUMNS`] order; the builder is empty again afterwards.
    pub(super) fn finish(&mut self) -> Result<[ArrayRef; ORIGIN_COLUMNS.len()], SchemaError> {
        let keys = Int32Array::from(std::mem::take(&mut self.keys));
        self.begun = 0;
        let mut out: Vec<ArrayRef> = Vec::with_capacity(ORIGIN_COLUMNS.len());
        for builder in &mut self.values {
            let dict =
                DictionaryArray::<Int32Type>::try_new(keys.clone(), Arc::new(builder.finish()))?;
            out.push(Arc::new(dict));
        }
        Ok(out.try_into().expect("one array per origin column"))
    }
}

/// [`span_schema`] with the [`ORIGIN_COLUMNS`] as `Dictionary(Int32, Utf8)`: the batches the
/// converter builds ([`super::convert_request_for_store`] hands them on as they are).
pub fn store_batch_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let fields: Vec<Field> = span_schema()
                .fields()
                .iter()
                .map(|f| {
                    if ORIGIN_COLUMNS.contains(&f.name().as_str()) {
                        f.as_ref().clone().with_data_type(origin_type())
                    } else {
                        f.as_ref().clone()
                    }
                })
                .collect();
            Arc::new(Schema::new_with_metadata(
                fields,
                span_schema().metadata().clone(),
            ))
        })
        .clone()
}

fn origin_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// A [`store_batch_schema`] batch as the canonical [`span_schema`] one: the origin columns cast
/// to strings (each row's value copied out of its dictionary).
pub fn to_span_schema(batch: RecordBatch) -> Result<RecordBatch, SchemaError> {
    if batch.schema() == span_schema() {
        return Ok(batch);
    }
    let schema = span_schema();
    let columns = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, array)| {
            if array.data_type() == field.data_type() {
                Ok(Arc::clone(array))
            } else {
                arrow::compute::cast(array, field.data_type())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordBatch::try_new(schema, columns)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{convert_request_bounded, convert_request_for_store, IngestContext};
    use arrow::array::{AsArray, StringArray};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{
        any_value::Value, AnyValue, InstrumentationScope, KeyValue,
    };
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    fn kv(key: &str, value: &str) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue {
                value: Some(Value::StringValue(value.into())),
            }),
            ..Default::default()
        }
    }

    fn spans(n: u8) -> Vec<Span> {
        (0..n)
            .map(|i| Span {
                trace_id: vec![7; 16],
                span_id: vec![i + 1; 8],
                name: format!("s{i}"),
                start_time_unix_nano: 1_700_000_000_000_000_000,
                end_time_unix_nano: 1_700_000_000_000_000_001,
                ..Default::default()
            })
            .collect()
    }

    /// Two resources, three scopes: a named and versioned scope, a scope without name, and a
    /// resource without service name or schema URL; one span rejected (no trace id).
    fn request() -> ExportTraceServiceRequest {
        let mut rejected = spans(1);
        rejected[0].trace_id.clear();
        ExportTraceServiceRequest {
            resource_spans: vec![
                ResourceSpans {
                    resource: Some(Resource {
                        attributes: vec![
                            kv("service.name", "crm"),
                            kv("service.version", "1.2"),
                            kv("host.name", "a"),
                        ],
                        ..Default::default()
                    }),
                    scope_spans: vec![
                        ScopeSpans {
                            scope: Some(InstrumentationScope {
                                name: "mcp.client".into(),
                                version: "0.3".into(),
                                ..Default::default()
                            }),
                            spans: spans(3),
                            schema_url: "https://opentelemetry.io/schemas/1.30.0".into(),
                        },
                        ScopeSpans {
                            spans: [spans(2), rejected].concat(),
                            ..Default::default()
                        },
                    ],
                    schema_url: "https://example.com/r".into(),
                },
                ResourceSpans {
                    resource: Some(Resource {
                        attributes: vec![kv("host.name", "b")],
                        ..Default::default()
                    }),
                    scope_spans: vec![ScopeSpans {
                        scope: Some(InstrumentationScope {
                            name: "agent".into(),
                            ..Default::default()
                        }),
                        spans: spans(1),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
            ],
        }
    }

    fn ctx() -> IngestContext {
        IngestContext {
            received_at_unix_nano: 0,
            source: "otlp-http".into(),
            redact_content: false,
        }
    }

    fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
        let column = batch.column_by_name(name).expect(name);
        let column: &StringArray = column.as_string();
        column.iter().map(|v| v.map(str::to_string)).collect()
    }

    #[test]
    fn one_dictionary_value_per_scope_and_one_key_per_row() {
        let store = convert_request_for_store(&request(), &ctx(), u64::MAX).unwrap();
        assert_eq!(store.accepted, 6);
        assert_eq!(store.rejected, 1);
        assert_eq!(store.batch.schema(), store_batch_schema());
        for name in ORIGIN_COLUMNS {
            let column = store.batch.column_by_name(name).unwrap();
            let dict = column.as_dictionary::<Int32Type>();
            assert_eq!(dict.values().len(), 3, "{name}: one value per scope");
            assert_eq!(dict.keys().values().as_ref(), &[0, 0, 0, 1, 1, 2], "{name}");
        }
    }

    #[test]
    fn the_canonical_rows_hold_each_scope_value_in_every_row() {
        let canonical = convert_request_bounded(&request(), &ctx(), u64::MAX).unwrap();
        let batch = &canonical.batch;
        assert_eq!(batch.schema(), span_schema());
        let s = |v: &str| Some(v.to_string());
        let rows = |a: Option<String>, b: Option<String>, c: Option<String>| {
            vec![a.clone(), a.clone(), a, b.clone(), b, c]
        };
        assert_eq!(
            strings(batch, col::SERVICE_NAME),
            rows(s("crm"), s("crm"), None)
        );
        assert_eq!(
            strings(batch, col::SERVICE_VERSION),
            rows(s("1.2"), s("1.2"), None)
        );
        assert_eq!(strings(batch, col::SERVICE_INSTANCE_ID), vec![None; 6]);
        assert_eq!(
            strings(batch, col::RESOURCE_SCHEMA_URL),
            rows(s("https://example.com/r"), s("https://example.com/r"), None)
        );
        assert_eq!(
            strings(batch, col::SCOPE_NAME),
            rows(s("mcp.client"), None, s("agent"))
        );
        assert_eq!(
            strings(batch, col::SCOPE_VERSION),
            rows(s("0.3"), None, None)
        );
        assert_eq!(
            strings(batch, col::SCOPE_SCHEMA_URL),
            rows(s("https://opentelemetry.io/schemas/1.30.0"), None, None)
        );
        assert_eq!(strings(batch, col::INGEST_SOURCE), vec![s("otlp-http"); 6]);
        let resource_json = strings(batch, col::RESOURCE_ATTRIBUTES_JSON);
        assert!(resource_json[..5]
            .iter()
            .all(|j| j.as_deref().is_some_and(|j| j.contains("\"crm\""))));
        assert!(resource_json[5]
            .as_deref()
            .is_some_and(|j| j.contains("\"b\"")));
        assert_eq!(strings(batch, col::SCOPE_ATTRIBUTES_JSON), vec![s("{}"); 6]);
    }

    /// What the collector relies on: a part file written from the dictionaries is the file the
    /// canonical rows make, byte for byte.
    #[test]
    fn parquet_from_the_dictionaries_is_the_same_bytes() {
        let store = convert_request_for_store(&request(), &ctx(), u64::MAX).unwrap();
        let canonical = convert_request_bounded(&request(), &ctx(), u64::MAX).unwrap();
        let write = |batch: &RecordBatch| {
            let mut out = Vec::new();
            let props = crate::parquet_props::writer_properties();
            let mut w =
                parquet::arrow::ArrowWriter::try_new(&mut out, span_schema(), Some(props)).unwrap();
            w.write(batch).unwrap();
            w.close().unwrap();
            out
        };
        let from_dictionaries = write(&store.batch);
        assert!(!from_dictionaries.is_empty());
        assert_eq!(from_dictionaries, write(&canonical.batch));
    }
}
