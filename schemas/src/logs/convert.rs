//! OTLP `ExportLogsServiceRequest` -> canonical log record `RecordBatch` ([`super::log_schema`]).
//!
//! One pass over the records: validate the ids, name the event, write body and attributes as JSON
//! text, redact content if asked. Never panics on any input: a record that cannot be stored is
//! counted in `rejected` with a reason, and the accepted ones go through the same WAL and Parquet
//! path as spans ([`crate::convert::Converted`] is the same type).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow::record_batch::RecordBatch;
use base64::Engine as _;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use prost::Message as _;
use serde_json::{Map, Value as Json};

use super::schema::log_schema;
use crate::columns::CONTENT_COLUMNS;
use crate::convert::{dedup_attributes, ConvertError, Converted, IngestContext, REDACTED};

/// Log attributes that carry captured content besides the span content attributes
/// ([`CONTENT_COLUMNS`]): the pre-1.37 GenAI event payloads and the generic `content` key some
/// instrumentations put on message events. Redacted like the body.
const EXTRA_CONTENT_ATTRIBUTES: &[&str] = &[
    "content",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.event.content",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.arguments",
];

/// Attribute older SDKs carry the event name in (before `LogRecord.event_name`).
pub const EVENT_NAME_ATTRIBUTE: &str = "event.name";

/// Whether the value of log attribute `key` is captured content (redacted under
/// `--redact-content`).
pub fn is_content_attribute(key: &str) -> bool {
    CONTENT_COLUMNS.iter().any(|(a, _)| *a == key) || EXTRA_CONTENT_ATTRIBUTES.contains(&key)
}

/// Log records in a request.
pub fn log_record_count(req: &ExportLogsServiceRequest) -> usize {
    req.resource_logs
        .iter()
        .flat_map(|rl| &rl.scope_logs)
        .map(|sl| sl.log_records.len())
        .sum()
}

/// Estimated bytes of the converted rows: each record's own bytes (JSON text is about the size
/// of the protobuf) plus its resource's, which every row repeats.
pub fn converted_logs_size_estimate(req: &ExportLogsServiceRequest) -> u64 {
    let mut total = 0u64;
    for rl in &req.resource_logs {
        let resource = rl.resource.as_ref().map_or(0, |r| r.encoded_len()) as u64;
        for sl in &rl.scope_logs {
            let scope = sl.scope.as_ref().map_or(0, |s| s.encoded_len()) as u64;
            for r in &sl.log_records {
                total = total.saturating_add(2 * r.encoded_len() as u64 + resource + scope + 128);
            }
        }
    }
    total
}

/// Converts a log request whose estimated converted size is at most `max_converted_bytes`;
/// refuses it whole otherwise (413), like spans.
pub fn convert_logs_request_bounded(
    req: &ExportLogsServiceRequest,
    ctx: &IngestContext,
    max_converted_bytes: u64,
) -> Result<Converted, ConvertError> {
    let estimated = converted_logs_size_estimate(req);
    if estimated > max_converted_bytes {
        return Err(ConvertError::TooLarge {
            estimated,
            limit: max_converted_bytes,
        });
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| convert_logs(req, ctx)))
        .map_err(|_| ConvertError::Builder("the log column builders failed".to_string()))?
}

/// Converts a log request with the default size bound; a refused request comes back with every
/// record rejected and the reason.
pub fn convert_logs_request(req: &ExportLogsServiceRequest, ctx: &IngestContext) -> Converted {
    match convert_logs_request_bounded(req, ctx, crate::convert::DEFAULT_MAX_CONVERTED_BYTES) {
        Ok(c) => c,
        Err(e) => Converted {
            batch: RecordBatch::new_empty(log_schema()),
            accepted: 0,
            rejected: log_record_count(req),
            rejection_reasons: vec![e.to_string()],
        },
    }
}

#[derive(Default)]
struct Builders {
    trace_id: BinaryBuilder,
    span_id: BinaryBuilder,
    time: TimestampMicrosecondBuilder,
    time_unix_nano: Int64Builder,
    observed: Int64Builder,
    event_name: StringBuilder,
    severity_number: Int64Builder,
    severity_text: StringBuilder,
    body: StringBuilder,
    attributes: StringBuilder,
    flags: Int64Builder,
    dropped: Int64Builder,
    service_name: StringBuilder,
    resource_attributes: StringBuilder,
    scope_name: StringBuilder,
    scope_version: StringBuilder,
    redacted: BooleanBuilder,
    received_at: TimestampMicrosecondBuilder,
    ingest_source: StringBuilder,
}

fn convert_logs(
    req: &ExportLogsServiceRequest,
    ctx: &IngestContext,
) -> Result<Converted, ConvertError> {
    let mut b = Builders::default();
    let mut accepted = 0usize;
    let mut rejected = 0usize;
    let mut reasons: Vec<String> = Vec::new();
    let received_us = ctx.received_at_unix_nano.div_euclid(1000);
    for rl in &req.resource_logs {
        let resource_attrs = rl
            .resource
            .as_ref()
            .map(|r| r.attributes.as_slice())
            .unwrap_or_default();
        let resource_json = attributes_json(resource_attrs, false).0;
        let service = resource_attrs
            .iter()
            .rev()
            .find(|kv| kv.key == "service.name")
            .and_then(
                |kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    Some(Value::StringValue(s)) => Some(s.clone()),
                    _ => None,
                },
            );
        for sl in &rl.scope_logs {
            let scope = sl.scope.as_ref();
            for r in &sl.log_records {
                let trace_id = match id(&r.trace_id, 16) {
                    Ok(v) => v,
                    Err(len) => {
                        rejected += 1;
                        push_reason(
                            &mut reasons,
                            format!("log record trace_id has {len} bytes, expected 16 (or none)"),
                        );
                        continue;
                    }
                };
                let span_id = match id(&r.span_id, 8) {
                    Ok(v) => v,
                    Err(len) => {
                        rejected += 1;
                        push_reason(
                            &mut reasons,
                            format!("log record span_id has {len} bytes, expected 8 (or none)"),
                        );
                        continue;
                    }
                };
                let time = i64::try_from(r.time_unix_nano).ok().filter(|t| *t > 0);
                let observed = i64::try_from(r.observed_time_unix_nano)
                    .ok()
                    .filter(|t| *t > 0);
                let when = time.or(observed).unwrap_or(ctx.received_at_unix_nano);
                let (attrs_json, attrs_redacted) =
                    attributes_json(&r.attributes, ctx.redact_content);
                let event_name = if r.event_name.is_empty() {
                    r.attributes
                        .iter()
                        .rev()
                        .find(|kv| kv.key == EVENT_NAME_ATTRIBUTE)
                        .and_then(
                            |kv| match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                                Some(Value::StringValue(s)) => Some(s.as_str()),
                                _ => None,
                            },
                        )
                } else {
                    Some(r.event_name.as_str())
                };
                // An empty `AnyValue` (what SDKs send for "no body") is no body.
                let present = r.body.as_ref().filter(|v| v.value.is_some());
                let body_redacted = ctx.redact_content && present.is_some();
                let body = present.map(|v| {
                    if body_redacted {
                        Json::String(REDACTED.to_string()).to_string()
                    } else {
                        any_value_json(v).to_string()
                    }
                });

                b.trace_id.append_option(trace_id);
                b.span_id.append_option(span_id);
                b.time.append_value(when.div_euclid(1000));
                b.time_unix_nano.append_option(time);
                b.observed.append_option(observed);
                b.event_name.append_option(event_name);
                b.severity_number
                    .append_option((r.severity_number > 0).then_some(i64::from(r.severity_number)));
                b.severity_text
                    .append_option((!r.severity_text.is_empty()).then_some(&r.severity_text));
                b.body.append_option(body);
                b.attributes.append_value(attrs_json.to_string());
                b.flags.append_value(i64::from(r.flags));
                b.dropped
                    .append_value(i64::from(r.dropped_attributes_count));
                b.service_name.append_option(service.as_deref());
                b.resource_attributes
                    .append_value(resource_json.to_string());
                b.scope_name
                    .append_option(scope.map(|s| s.name.as_str()).filter(|s| !s.is_empty()));
                b.scope_version
                    .append_option(scope.map(|s| s.version.as_str()).filter(|s| !s.is_empty()));
                b.redacted.append_value(body_redacted || attrs_redacted);
                b.received_at.append_value(received_us);
                b.ingest_source.append_value(&ctx.source);
                accepted += 1;
            }
        }
    }
    let utc = || Some::<Arc<str>>("UTC".into());
    let columns: Vec<ArrayRef> = vec![
        Arc::new(b.trace_id.finish()),
        Arc::new(b.span_id.finish()),
        Arc::new(b.time.finish().with_timezone_opt(utc())),
        Arc::new(b.time_unix_nano.finish()),
        Arc::new(b.observed.finish()),
        Arc::new(b.event_name.finish()),
        Arc::new(b.severity_number.finish()),
        Arc::new(b.severity_text.finish()),
        Arc::new(b.body.finish()),
        Arc::new(b.attributes.finish()),
        Arc::new(b.flags.finish()),
        Arc::new(b.dropped.finish()),
        Arc::new(b.service_name.finish()),
        Arc::new(b.resource_attributes.finish()),
        Arc::new(b.scope_name.finish()),
        Arc::new(b.scope_version.finish()),
        Arc::new(b.redacted.finish()),
        Arc::new(b.received_at.finish().with_timezone_opt(utc())),
        Arc::new(b.ingest_source.finish()),
    ];
    let batch = RecordBatch::try_new(log_schema(), columns)
        .map_err(|e| ConvertError::Builder(e.to_string()))?;
    Ok(Converted {
        batch,
        accepted,
        rejected,
        rejection_reasons: reasons,
    })
}

fn push_reason(reasons: &mut Vec<String>, reason: String) {
    if reasons.len() < crate::convert::MAX_REASONS && !reasons.contains(&reason) {
        reasons.push(reason);
    }
}

/// `Ok(None)` for an absent (empty or all-zero) id, `Ok(Some)` for one of the right length,
/// `Err(len)` otherwise.
fn id(bytes: &[u8], len: usize) -> Result<Option<&[u8]>, usize> {
    if bytes.is_empty() || (bytes.len() == len && bytes.iter().all(|b| *b == 0)) {
        return Ok(None);
    }
    if bytes.len() != len {
        return Err(bytes.len());
    }
    Ok(Some(bytes))
}

/// The attributes as one JSON object (last value of a repeated key wins); with `redact`, content
/// attributes become `"[redacted]"`. Returns whether anything was redacted.
fn attributes_json(attrs: &[KeyValue], redact: bool) -> (Json, bool) {
    let mut out = Map::new();
    let mut redacted = false;
    for (key, value) in dedup_attributes(attrs) {
        let v = if redact && is_content_attribute(key) {
            redacted = true;
            Json::String(REDACTED.to_string())
        } else {
            value.map_or(Json::Null, any_value_json)
        };
        out.insert(key.to_string(), v);
    }
    (Json::Object(out), redacted)
}

/// An `AnyValue` as the plain JSON value it stands for: strings, numbers, booleans, arrays and
/// objects as themselves, bytes as base64, the empty value as `null`.
pub fn any_value_json(v: &AnyValue) -> Json {
    match &v.value {
        None => Json::Null,
        Some(Value::StringValue(s)) => Json::String(s.clone()),
        Some(Value::BoolValue(b)) => Json::Bool(*b),
        Some(Value::IntValue(i)) => Json::from(*i),
        Some(Value::DoubleValue(d)) => serde_json::Number::from_f64(*d)
            .map_or_else(|| Json::String(d.to_string()), Json::Number),
        Some(Value::BytesValue(b)) => {
            Json::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Some(Value::StringValueStrindex(i)) => Json::from(*i),
        Some(Value::ArrayValue(a)) => Json::Array(a.values.iter().map(any_value_json).collect()),
        Some(Value::KvlistValue(l)) => Json::Object(
            l.values
                .iter()
                .map(|kv| {
                    (
                        kv.key.clone(),
                        kv.value.as_ref().map_or(Json::Null, any_value_json),
                    )
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, BinaryArray, BooleanArray, StringArray};

    use super::*;

    fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
        let a = batch
            .column_by_name(name)
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        (0..a.len())
            .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
            .collect()
    }

    fn ctx(redact: bool) -> IngestContext {
        IngestContext {
            received_at_unix_nano: 1_796_032_800_000_000_000,
            source: "test".into(),
            redact_content: redact,
        }
    }

    /// Snake_case keys, enum names, a base64 id, an `event.name` attribute instead of the field,
    /// an empty body, and a record with a bad span id.
    const BODY: &str = r#"{"resource_logs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},
      "scope_logs":[{"scope":{"name":"s","version":"1"},"log_records":[
        {"time_unix_nano":"1796032800000000001","severity_number":"SEVERITY_NUMBER_ERROR","trace_id":"0af7651916cd43dd8448eb211c80319c",
         "span_id":"AAAAAAAAAKE=","attributes":[{"key":"event.name","value":{"stringValue":"gen_ai.user.message"}},
         {"key":"gen_ai.input.messages","value":{"arrayValue":{"values":[{"kvlistValue":{"values":[{"key":"role","value":{"stringValue":"user"}}]}}]}}}],
         "body":{"kvlistValue":{"values":[{"key":"content","value":{"stringValue":"hello"}}]}}},
        {"observedTimeUnixNano":"1796032800000000002","body":{}},
        {"time_unix_nano":"1796032800000000003","span_id":"0102"}
      ]}]}]}"#;

    #[test]
    fn records_are_converted_with_names_bodies_and_rejections() {
        let req = crate::decode::decode_logs_json(BODY.as_bytes()).unwrap();
        let c = convert_logs_request(&req, &ctx(false));
        assert_eq!((c.accepted, c.rejected), (2, 1));
        assert_eq!(
            c.rejection_reasons,
            ["log record span_id has 2 bytes, expected 8 (or none)"]
        );
        let b = &c.batch;
        assert_eq!(b.schema(), log_schema());
        assert_eq!(
            strings(b, super::super::schema::col::EVENT_NAME),
            [Some("gen_ai.user.message".to_string()), None]
        );
        assert_eq!(
            strings(b, super::super::schema::col::BODY),
            [Some(r#"{"content":"hello"}"#.to_string()), None],
            "an empty AnyValue is no body"
        );
        let attrs: Json = serde_json::from_str(
            strings(b, super::super::schema::col::ATTRIBUTES)[0]
                .as_deref()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            attrs["gen_ai.input.messages"],
            serde_json::json!([{"role": "user"}])
        );
        let spans = b
            .column_by_name(super::super::schema::col::SPAN_ID)
            .unwrap()
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        assert_eq!(spans.value(0), [0, 0, 0, 0, 0, 0, 0, 0xa1]);
        assert!(spans.is_null(1), "no span id is null, not empty");
        assert_eq!(
            strings(b, super::super::schema::col::SERVICE_NAME),
            [Some("svc".to_string()), Some("svc".to_string())]
        );
    }

    #[test]
    fn redaction_replaces_bodies_and_content_attributes_only() {
        let req = crate::decode::decode_logs_json(BODY.as_bytes()).unwrap();
        let c = convert_logs_request(&req, &ctx(true));
        let b = &c.batch;
        assert_eq!(
            strings(b, super::super::schema::col::BODY),
            [Some("\"[redacted]\"".to_string()), None]
        );
        let attrs: Json = serde_json::from_str(
            strings(b, super::super::schema::col::ATTRIBUTES)[0]
                .as_deref()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(attrs["gen_ai.input.messages"], "[redacted]");
        assert_eq!(attrs["event.name"], "gen_ai.user.message");
        let redacted = b
            .column_by_name(super::super::schema::col::CONTENT_REDACTED)
            .unwrap()
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap();
        assert_eq!((redacted.value(0), redacted.value(1)), (true, false));
    }

    #[test]
    fn an_oversize_request_is_refused_whole() {
        let req = crate::decode::decode_logs_json(BODY.as_bytes()).unwrap();
        let e = convert_logs_request_bounded(&req, &ctx(false), 10).unwrap_err();
        assert!(matches!(e, ConvertError::TooLarge { limit: 10, .. }), "{e}");
    }
}
