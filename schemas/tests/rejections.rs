//! Invalid spans are counted and explained, never silently dropped, and never panic.

mod common;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::trace::v1::{span::Event, ResourceSpans, ScopeSpans, Span};
use schemas::convert_request;

fn good() -> Span {
    Span {
        trace_id: vec![1; 16],
        span_id: vec![2; 8],
        name: "ok".into(),
        start_time_unix_nano: 1_000,
        end_time_unix_nano: 2_000,
        ..Default::default()
    }
}

fn request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "x".into(),
                    ..Default::default()
                }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

#[test]
fn bad_ids_and_times_are_rejected_with_exact_reasons() {
    let spans = vec![
        good(),
        Span {
            trace_id: vec![1; 8],
            ..good()
        },
        Span {
            trace_id: vec![0; 16],
            ..good()
        },
        Span {
            span_id: vec![2; 16],
            ..good()
        },
        Span {
            span_id: vec![0; 8],
            ..good()
        },
        Span {
            parent_span_id: vec![0; 8],
            ..good()
        },
        Span {
            parent_span_id: vec![3; 4],
            ..good()
        },
        Span {
            start_time_unix_nano: u64::MAX,
            ..good()
        },
        Span {
            events: vec![Event {
                time_unix_nano: 1 << 63,
                ..Default::default()
            }],
            ..good()
        },
        Span {
            parent_span_id: vec![3; 8],
            name: String::new(),
            ..good()
        },
    ];
    let converted = convert_request(&request(spans), &common::ctx());
    assert_eq!(converted.accepted, 2);
    assert_eq!(converted.rejected, 8);
    assert_eq!(converted.batch.num_rows(), 2);
    assert_eq!(
        converted.rejection_reasons,
        vec![
            "span 1 of scope x: trace_id is 8 bytes, expected 16",
            "span 2 of scope x: trace_id is all zeros, which W3C trace context forbids",
            "span 3 of scope x: span_id is 16 bytes, expected 8",
            "span 4 of scope x: span_id is all zeros, which W3C trace context forbids",
            "span 5 of scope x: parent_span_id is all zeros; send an empty parent_span_id for a root span",
            "span 6 of scope x: parent_span_id is 4 bytes, expected 8 (or empty for a root span)",
            "span 7 of scope x: start_time_unix_nano 18446744073709551615 is beyond year 2262 (exceeds int64 nanoseconds)",
            "span 8 of scope x: event 0 time_unix_nano 9223372036854775808 is beyond year 2262 (exceeds int64 nanoseconds)",
        ]
    );
}

#[test]
fn reasons_are_capped_with_a_summary() {
    let spans: Vec<Span> = (0..25)
        .map(|_| Span {
            trace_id: vec![],
            ..good()
        })
        .collect();
    let converted = convert_request(&request(spans), &common::ctx());
    assert_eq!(converted.rejected, 25);
    assert_eq!(converted.accepted, 0);
    assert_eq!(converted.batch.num_rows(), 0);
    assert_eq!(converted.rejection_reasons.len(), 11);
    assert_eq!(
        converted.rejection_reasons[0],
        "span 0 of scope x: trace_id is 0 bytes, expected 16"
    );
    assert_eq!(
        converted.rejection_reasons[10],
        "15 more rejected spans not listed"
    );
}

#[test]
fn empty_request_gives_an_empty_batch_of_the_canonical_schema() {
    let converted = convert_request(&ExportTraceServiceRequest::default(), &common::ctx());
    assert_eq!((converted.accepted, converted.rejected), (0, 0));
    assert_eq!(converted.batch.schema(), schemas::span_schema());
}
