//! Schema 2 moved the resource's and the scope's attributes from maps to JSON text
//! (`resource_attributes_json`, `scope_attributes_json`); schema-1 files keep them in the maps.
//! Both must come back whole: a schema-2 row through Parquet, and a schema-1 row (the map set,
//! no JSON column) as a store written before the change holds it.

mod common;

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{Field, Schema};
use opentelemetry_proto::tonic::common::v1::{any_value::Value, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use schemas::schema::col;
use schemas::{
    batch_to_request, convert_request, span_schema, writer_properties, ExportTraceServiceRequest,
};

use common::{ctx, kv};

/// Attributes of every scalar type, none of them lifted into a column.
fn attributes() -> Vec<KeyValue> {
    vec![
        kv(
            "deployment.environment.name",
            Value::StringValue("ci".into()),
        ),
        kv("host.cpu.count", Value::IntValue(8)),
        kv("sampling.ratio", Value::DoubleValue(0.25)),
        kv("feature.enabled", Value::BoolValue(true)),
        kv("build.digest", Value::BytesValue(vec![0xde, 0xad])),
    ]
}

fn request() -> ExportTraceServiceRequest {
    let mut resource = vec![kv("service.name", Value::StringValue("crm".into()))];
    resource.extend(attributes());
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: resource,
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: None,
                spans: vec![Span {
                    trace_id: vec![1; 16],
                    span_id: vec![2; 8],
                    name: "tools/call".into(),
                    kind: 3,
                    start_time_unix_nano: 1_764_576_000_000_000_000,
                    end_time_unix_nano: 1_764_576_000_100_000_000,
                    attributes: {
                        let mut a = vec![kv("service.name", Value::StringValue("crm".into()))];
                        a.extend(attributes());
                        a
                    },
                    ..Default::default()
                }],
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

fn resource_attributes(req: &ExportTraceServiceRequest) -> Vec<KeyValue> {
    req.resource_spans[0]
        .resource
        .as_ref()
        .expect("a resource")
        .attributes
        .clone()
}

#[test]
fn schema_two_rows_keep_the_resource_as_json_text_through_parquet() {
    let sent = request();
    let converted = convert_request(&sent, &ctx());
    assert_eq!(converted.accepted, 1);
    let batch = converted.batch;
    assert!(batch
        .column_by_name(col::RESOURCE_ATTRIBUTES)
        .expect("map")
        .is_null(0));
    let json = batch
        .column_by_name(col::RESOURCE_ATTRIBUTES_JSON)
        .expect("json column")
        .as_string::<i32>()
        .value(0)
        .to_string();
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("JSON text");
    assert_eq!(
        parsed["host.cpu.count"],
        serde_json::json!({"intValue": "8"})
    );
    assert_eq!(
        parsed["build.digest"],
        serde_json::json!({"bytesValue": "3q0="})
    );

    let file = tempfile::tempfile().expect("temp file");
    let mut writer = ArrowWriter::try_new(
        file.try_clone().expect("clone"),
        span_schema(),
        Some(writer_properties()),
    )
    .expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    let read: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("reader")
        .build()
        .expect("build")
        .collect::<Result<_, _>>()
        .expect("read");
    let back = batch_to_request(&read[0]).expect("round trip");
    assert_eq!(resource_attributes(&back), resource_attributes(&sent));
}

#[test]
fn schema_one_rows_keep_the_resource_in_the_map() {
    let sent = request();
    let batch = convert_request(&sent, &ctx()).batch;
    // A schema-1 row: the resource in the map (here the span's own attribute map, which holds
    // the same entries), and no JSON columns at all.
    let schema = batch.schema();
    let mut fields: Vec<Arc<Field>> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        match field.name().as_str() {
            col::RESOURCE_ATTRIBUTES_JSON | col::SCOPE_ATTRIBUTES_JSON => continue,
            col::RESOURCE_ATTRIBUTES => columns.push(Arc::clone(
                batch.column_by_name(col::ATTRIBUTES).expect("map"),
            )),
            _ => columns.push(Arc::clone(column)),
        }
        fields.push(Arc::clone(field));
    }
    let v1 = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("v1 batch");
    let back = batch_to_request(&v1).expect("round trip");
    assert_eq!(resource_attributes(&back), resource_attributes(&sent));
    let scope = back.resource_spans[0].scope_spans[0].scope.as_ref();
    assert!(scope.is_none_or(|s| s.attributes.is_empty()));
}
