//! OTLP/JSON in the spec's encoding and in the alternatives real senders write decodes to the same
//! request; malformed bodies give errors that say where and what.

use opentelemetry_proto::tonic::common::v1::any_value::Value;
use schemas::{decode_json, decode_json_lines, decode_protobuf, DecodeError};

const SPEC: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},
 "scopeSpans":[{"scope":{"name":"s","version":"1"},"spans":[{
   "traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","parentSpanId":"eee19b7ec3c1b173",
   "name":"tools/call get_ticket","kind":2,"flags":768,
   "startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000",
   "attributes":[{"key":"n","value":{"intValue":"42"}},{"key":"d","value":{"doubleValue":1.5}},
                 {"key":"b","value":{"boolValue":true}},{"key":"y","value":{"bytesValue":"AQI="}},
                 {"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x"},{"intValue":"1"}]}}}],
   "events":[{"timeUnixNano":"1544712660500000000","name":"e"}],
   "status":{"code":2,"message":"boom"}}]}]}]}"#;

const ALTERNATIVE: &str = r#"{"resource_spans":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"svc"}}],"dropped_attributes_count":null},
 "scope_spans":[{"scope":{"name":"s","version":"1"},"spans":[{
   "trace_id":"5B8EFFF798038103D269B633813FC60C","span_id":"eee19b7ec3c1b174","parent_span_id":"eee19b7ec3c1b173",
   "name":"tools/call get_ticket","kind":"SPAN_KIND_SERVER","flags":"768","trace_state":null,
   "start_time_unix_nano":1544712660000000000,"end_time_unix_nano":"1544712661000000000",
   "attributes":[{"key":"n","value":{"int_value":42}},{"key":"d","value":{"double_value":"1.5"}},
                 {"key":"b","value":{"bool_value":true}},{"key":"y","value":{"bytes_value":"AQI="}},
                 {"key":"a","value":{"array_value":{"values":[{"string_value":"x"},{"int_value":1}]}}}],
   "events":[{"time_unix_nano":1544712660500000000,"name":"e"}],
   "links":null,
   "status":{"code":"STATUS_CODE_ERROR","message":"boom"}, "unknownField": {"ignored": true}}]}]}]}"#;

#[test]
fn spec_and_alternative_encodings_decode_identically() {
    let a = decode_json(SPEC.as_bytes()).expect("spec form");
    let b = decode_json(ALTERNATIVE.as_bytes()).expect("alternative form");
    assert_eq!(a, b);
    let span = &a.resource_spans[0].scope_spans[0].spans[0];
    assert_eq!(
        hex::encode(&span.trace_id),
        "5b8efff798038103d269b633813fc60c"
    );
    assert_eq!(span.kind, 2);
    assert_eq!(span.flags, 768);
    assert_eq!(span.start_time_unix_nano, 1_544_712_660_000_000_000);
    assert_eq!(span.status.as_ref().map(|s| s.code), Some(2));
    let values: Vec<_> = span
        .attributes
        .iter()
        .map(|kv| kv.value.clone().and_then(|v| v.value))
        .collect();
    assert_eq!(values[0], Some(Value::IntValue(42)));
    assert_eq!(values[1], Some(Value::DoubleValue(1.5)));
    assert_eq!(values[2], Some(Value::BoolValue(true)));
    assert_eq!(values[3], Some(Value::BytesValue(vec![1, 2])));
    assert!(matches!(&values[4], Some(Value::ArrayValue(arr)) if arr.values.len() == 2));
}

#[test]
fn short_enum_names_and_base64_ids_are_accepted() {
    let body = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AQEBAQEBAQEBAQEBAQEBAQ==","spanId":"AgICAgICAgI=","kind":"CLIENT","status":{"code":"OK"}}]}]}]}"#;
    let req = decode_json(body.as_bytes()).expect("decode");
    let span = &req.resource_spans[0].scope_spans[0].spans[0];
    assert_eq!(span.trace_id, vec![1; 16]);
    assert_eq!(span.span_id, vec![2; 8]);
    assert_eq!(span.kind, 3);
    assert_eq!(span.status.as_ref().map(|s| s.code), Some(1));
}

#[test]
fn errors_carry_path_line_and_column() {
    let body =
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n{\"traceId\":\"zz\",\"kind\":1}]}]}]}";
    let err = decode_json(body.as_bytes()).expect_err("bad id");
    match &err {
        DecodeError::Json { path, line, .. } => {
            assert_eq!(path, "resourceSpans[0].scopeSpans[0].spans[0].traceId");
            assert_eq!(*line, 2);
        }
        other => panic!("unexpected {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with(
            "invalid OTLP/JSON at resourceSpans[0].scopeSpans[0].spans[0].traceId (line 2, column "
        ),
        "{text}"
    );
    assert!(text.contains("id `zz` is neither hex nor base64"), "{text}");

    let err =
        decode_json(br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SIDEWAYS"}]}]}]}"#)
            .expect_err("bad kind");
    assert!(
        err.to_string()
            .contains("unknown span kind `SIDEWAYS`; expected one of SPAN_KIND_UNSPECIFIED"),
        "{err}"
    );

    let err = decode_json(b"{\"resourceSpans\": [").expect_err("truncated");
    assert!(matches!(err, DecodeError::Json { line: 1, .. }), "{err:?}");
    let err = decode_json(b"{} trailing").expect_err("trailing");
    assert!(err.to_string().contains("trailing characters"), "{err}");
}

#[test]
fn json_lines_decode_per_line_and_name_the_failing_line() {
    let spec_line = SPEC.replace('\n', " ");
    let body = format!("{spec_line}\n\n{spec_line}\n");
    let reqs = decode_json_lines(body.as_bytes()).expect("two requests");
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0], reqs[1]);
    let body = format!("{spec_line}\n{{\"resourceSpans\": 5}}\n");
    let err = decode_json_lines(body.as_bytes()).expect_err("line 2 bad");
    assert!(
        err.to_string().starts_with(
            "line 2 of the JSON lines body: invalid OTLP/JSON at resourceSpans (line 2,"
        ),
        "{err}"
    );
}

#[test]
fn protobuf_garbage_is_an_error_not_a_panic() {
    let err = decode_protobuf(&[0xff, 0xff, 0xff, 0x01]).expect_err("garbage");
    assert!(
        err.to_string().starts_with("invalid OTLP protobuf body: "),
        "{err}"
    );
    assert_eq!(
        decode_protobuf(&[])
            .expect("empty body is an empty request")
            .resource_spans
            .len(),
        0
    );
}
