//! Every column the column table declares is wired into the converter: a declared column the
//! converter never fills fails here, whatever its kind.
//!
//! - `every_column_is_filled_from_the_fixture`: one span (`fixtures/every_column.json`, plus the
//!   registry attribute of every lifted column, added here so a new lifted column needs no fixture
//!   edit) that carries every fact the row can hold converts into a row where no column is null
//!   or empty;
//! - `every_lifted_column_is_filled_from_its_registry_attribute`: for each lifted column, a span
//!   carrying only its registry attribute (and a marker of its dialect) fills it, so the table,
//!   the slots, the registry and the dialects agree without a fixture to update.

mod common;

use arrow::array::{Array, ListArray, MapArray};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use schemas::columns::{ColumnType, Fill, Origin, COLUMNS};
use schemas::{convert_request, decode_json, IngestContext};

use common::kv;

fn ctx() -> IngestContext {
    IngestContext {
        received_at_unix_nano: 1_764_576_001_000_000_000,
        source: "test".into(),
        redact_content: false,
    }
}

/// Null, or an empty list / map, at `row`.
fn empty_at(array: &dyn Array, row: usize) -> bool {
    if array.is_null(row) {
        return true;
    }
    if let Some(l) = array.as_any().downcast_ref::<ListArray>() {
        return l.value_length(row) == 0;
    }
    if let Some(m) = array.as_any().downcast_ref::<MapArray>() {
        return m.value_length(row) == 0;
    }
    false
}

#[test]
fn every_column_is_filled_from_the_fixture() {
    let converted = convert_request(&every_column_request(), &ctx());
    assert_eq!(converted.accepted, 1, "{:?}", converted.rejection_reasons);
    let batch = converted.batch;
    let mut unfilled = Vec::new();
    let mut filled_retired = Vec::new();
    for c in COLUMNS {
        let array = batch
            .column_by_name(c.name)
            .expect("declared column in batch");
        match (c.fill, empty_at(array.as_ref(), 0)) {
            (Fill::Retired { by, .. }, true) => {
                let successor = batch.column_by_name(by).expect("successor in batch");
                assert!(
                    !empty_at(successor.as_ref(), 0),
                    "{by}, which took over from {}, is empty",
                    c.name
                );
            }
            (Fill::Retired { .. }, false) => filled_retired.push(c.name),
            (_, true) => unfilled.push(c.name),
            (_, false) => {}
        }
    }
    assert!(
        filled_retired.is_empty(),
        "retired columns the converter still fills: {filled_retired:?}"
    );
    assert!(
        unfilled.is_empty(),
        "declared but not filled by the converter from a span that carries them: {unfilled:?}"
    );
}

/// The fixture's span with the registry attribute of every lifted column it lacks.
fn every_column_request() -> ExportTraceServiceRequest {
    let body = include_bytes!("fixtures/every_column.json");
    let mut req = decode_json(body).expect("fixture decodes");
    let span = &mut req.resource_spans[0].scope_spans[0].spans[0];
    for c in COLUMNS {
        if let Some(attribute) = c.lifted_from() {
            if !span.attributes.iter().any(|kv| kv.key == attribute.name) {
                span.attributes.push(kv(attribute.name, sample_value(c.ty)));
            }
        }
    }
    req
}

/// A value of the attribute type a lifted column of type `ty` takes.
fn sample_value(ty: ColumnType) -> Value {
    match ty {
        ColumnType::Int64 => Value::IntValue(7),
        _ => Value::StringValue("v".into()),
    }
}

fn one_span(attributes: Vec<KeyValue>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![Span {
                    trace_id: vec![1; 16],
                    span_id: vec![2; 8],
                    name: "s".into(),
                    start_time_unix_nano: 1,
                    end_time_unix_nano: 2,
                    attributes,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

#[test]
fn every_lifted_column_is_filled_from_its_registry_attribute() {
    let mut checked = 0;
    for c in COLUMNS {
        let Some(attribute) = c.lifted_from() else {
            continue;
        };
        let value = sample_value(c.ty);
        // the attribute, plus a marker that makes its dialect apply
        let marker = match attribute.origin {
            Origin::Semconv => kv("gen_ai.operation.name", Value::StringValue("chat".into())),
            Origin::Custom => kv("atlas.marker", Value::BoolValue(true)),
        };
        let req = one_span(vec![kv(attribute.name, value), marker]);
        let batch = convert_request(&req, &ctx()).batch;
        let array = batch
            .column_by_name(c.name)
            .expect("declared column in batch");
        assert!(
            !empty_at(array.as_ref(), 0),
            "{} is declared lifted from {} but the converter left it empty",
            c.name,
            attribute.name
        );
        // the registry lists the attribute with this column
        let def = schemas::registry::attribute(attribute.name).expect("registry attribute");
        assert_eq!(def.column, Some(c.name));
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} lifted columns");
}
