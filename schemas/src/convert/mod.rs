//! OTLP `ExportTraceServiceRequest` -> canonical span `RecordBatch`.
//!
//! One pass over the spans: validate, deduplicate attributes, apply the dialect registry (typed
//! columns), split content from generic attributes, derive facts from content payloads, redact if
//! asked, append to column builders. Never panics on any input: a span that cannot be stored is
//! counted in `rejected` with a reason.
//!
//! Size: resource and scope attributes are stored in every span's row, so a small request can
//! expand a thousandfold. [`convert_request_bounded`] refuses a request whose
//! [`converted_size_estimate`] is over a limit before building anything.
//!
//! Duplicate attribute keys: the last value wins (OTLP requires unique keys; DuckDB refuses
//! duplicate map keys), so a round trip of such a span returns one entry per key.

mod attrs;
mod builder;
mod content;
pub(crate) mod moved;
mod nested;
mod null_runs;
mod origin;
mod rejections;
mod shape_order;
mod validate;

use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use prost::Message as _;

use crate::derived::Derived;
use crate::dialects::{DialectEngine, KeyCache, KeyFacts, SpanView};
use crate::encode::attributes_json;
use crate::schema::span_schema;
pub(crate) use attrs::{dedup_attributes, dedup_attributes_into};
pub use attrs::{value_type, REDACTED};
use builder::{Capacity, Origin, RowParts, SpanBatchBuilder};
pub use origin::{store_batch_schema, to_span_schema, ORIGIN_COLUMNS};
use rejections::Rejections;
use shape_order::ShapeOrder;

/// Where and when a request was received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestContext {
    /// Receive time, Unix nanoseconds (stored as `received_at`).
    pub received_at_unix_nano: i64,
    /// Where the spans came from (`otlp-grpc`, `otlp-http`, `file:<path>`...), stored as
    /// `ingest_source`.
    pub source: String,
    /// Replace content (content columns and `content_attributes` values) by `"[redacted]"` after
    /// the derived facts were computed.
    pub redact_content: bool,
}

/// The result of converting one request.
#[derive(Debug, Clone)]
pub struct Converted {
    /// Accepted spans; schema is exactly [`span_schema`] ([`store_batch_schema`] from
    /// [`convert_request_for_store`]).
    pub batch: RecordBatch,
    /// Number of spans in `batch`.
    pub accepted: usize,
    /// Number of spans rejected.
    pub rejected: usize,
    /// Why spans were rejected: distinct reasons, at most [`MAX_REASONS`] plus one summary line.
    pub rejection_reasons: Vec<String>,
}

/// Default of `--max-converted-bytes`: the most a request may expand to once converted.
pub const DEFAULT_MAX_CONVERTED_BYTES: u64 = 256 * 1024 * 1024;

/// Why a request was not converted at all (the whole request is refused, not single spans).
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The estimated converted size is over the limit: resource and scope attributes are copied
    /// into every span's row, so a small request can expand into gigabytes of rows.
    #[error("the request would expand to about {estimated} bytes of rows, over the limit of {limit} bytes (--max-converted-bytes); resource and scope attributes are copied into every span's row: send fewer spans per request or smaller resource/scope attributes")]
    TooLarge {
        /// Estimated bytes of the converted rows ([`converted_size_estimate`]).
        estimated: u64,
        /// The configured limit.
        limit: u64,
    },
    /// The column builders could not hold the request (e.g. a string column over 2 GiB).
    #[error("the request is too large to convert: {0}; send fewer or smaller spans per request")]
    Builder(String),
}

/// Most rejection reasons listed individually.
pub const MAX_REASONS: usize = 10;

const SERVICE_NAME: &str = "service.name";
const SERVICE_VERSION: &str = "service.version";
const SERVICE_INSTANCE_ID: &str = "service.instance.id";

fn string_attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs.iter().rev().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

/// Converts a request into canonical rows. Never panics; invalid spans are rejected with a reason.
/// A request over [`DEFAULT_MAX_CONVERTED_BYTES`] (see [`convert_request_bounded`]) or one the
/// column builders cannot hold has all its spans rejected with the reason.
pub fn convert_request(req: &ExportTraceServiceRequest, ctx: &IngestContext) -> Converted {
    match convert_request_bounded(req, ctx, DEFAULT_MAX_CONVERTED_BYTES) {
        Ok(converted) => converted,
        Err(e) => Converted {
            batch: RecordBatch::new_empty(span_schema()),
            accepted: 0,
            rejected: span_count(req),
            rejection_reasons: vec![e.to_string()],
        },
    }
}

/// Converts a request whose [estimated converted size](converted_size_estimate) is at most
/// `max_converted_bytes`; refuses it whole otherwise, before any row is built. A builder failure
/// (or, as a last line of defence, a panic inside the builders) is an error too, never a panic.
/// With `u64::MAX` (a request admitted earlier, converted after its answer) nothing is
/// estimated.
pub fn convert_request_bounded(
    req: &ExportTraceServiceRequest,
    ctx: &IngestContext,
    max_converted_bytes: u64,
) -> Result<Converted, ConvertError> {
    let mut converted = convert_request_for_store(req, ctx, max_converted_bytes)?;
    converted.batch =
        to_span_schema(converted.batch).map_err(|e| ConvertError::Builder(e.to_string()))?;
    Ok(converted)
}

/// [`convert_request_bounded`] for the store's Parquet writer: the batch keeps the origin
/// columns as dictionaries, one value per scope ([`store_batch_schema`]). parquet-rs writes them
/// into the plain string columns of [`span_schema`] value by value, so the files are the same; the
/// copy of every resource's and scope's text into every row is saved.
pub fn convert_request_for_store(
    req: &ExportTraceServiceRequest,
    ctx: &IngestContext,
    max_converted_bytes: u64,
) -> Result<Converted, ConvertError> {
    if max_converted_bytes != u64::MAX {
        let estimated = converted_size_estimate(req);
        if estimated > max_converted_bytes {
            return Err(ConvertError::TooLarge {
                estimated,
                limit: max_converted_bytes,
            });
        }
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| convert_unbounded(req, ctx))).map_err(
        |panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the column builders failed".to_string());
            ConvertError::Builder(what)
        },
    )?
}

/// What converting a request would accept and reject, without converting it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// Spans that would be stored.
    pub accepted: usize,
    /// Spans that would be rejected.
    pub rejected: usize,
    /// The reasons, exactly as [`Converted::rejection_reasons`] would list them.
    pub rejection_reasons: Vec<String>,
}

/// The accepted and rejected spans of a request, exactly as [`convert_request_bounded`] counts
/// and explains them, from the same checks but without building a row: the collector answers a
/// request with this and converts it after the answer (see the collector's WAL records).
pub fn validate_request(req: &ExportTraceServiceRequest) -> Validation {
    let mut rejections = Rejections::default();
    let mut accepted = 0usize;
    for rs in &req.resource_spans {
        for ss in &rs.scope_spans {
            let scope_name = ss.scope.as_ref().map_or("", |s| s.name.as_str());
            for (index, span) in ss.spans.iter().enumerate() {
                match validate::rejection_reason(span) {
                    Some(reason) => rejections.note(index, scope_name, &reason),
                    None => accepted += 1,
                }
            }
        }
    }
    let (rejected, rejection_reasons) = rejections.finish();
    Validation {
        accepted,
        rejected,
        rejection_reasons,
    }
}

/// Spans in a request.
fn span_count(req: &ExportTraceServiceRequest) -> usize {
    req.resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .map(|ss| ss.spans.len())
        .sum()
}

/// Rows and attribute entries of a request, for sizing the column builders once.
fn capacity(req: &ExportTraceServiceRequest) -> Capacity {
    let mut cap = Capacity::default();
    for rs in &req.resource_spans {
        for ss in &rs.scope_spans {
            let spans = ss.spans.len();
            cap.rows += spans;
            cap.span_entries += ss.spans.iter().map(|s| s.attributes.len()).sum::<usize>();
        }
    }
    cap
}

/// An upper estimate of the bytes a request's rows take once converted, computed from encoded
/// sizes without building anything: the resource and scope (attributes, names, schema URLs) of a
/// group are stored again in every span's row, and a span's own values can be stored twice
/// (typed column and attribute map). Cost: one pass over the request's encoded lengths.
pub fn converted_size_estimate(req: &ExportTraceServiceRequest) -> u64 {
    let own: u64 = req
        .resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .flat_map(|ss| &ss.spans)
        .map(|s| s.encoded_len() as u64)
        .sum();
    per_row_estimate(req).saturating_add(own.saturating_mul(2))
}

/// [`converted_size_estimate`] of a request decoded from a protobuf body of `encoded_len`
/// bytes, without walking its spans: the body holds every span's encoding, so its length bounds
/// their sum from above (by the few bytes of resource, scope and framing) and the estimate stays
/// an upper one. Walking the spans' encoded lengths again was a sixth of the acknowledgement
/// path's instructions (BENCHMARKS.md, session 15).
pub fn converted_size_estimate_encoded(req: &ExportTraceServiceRequest, encoded_len: u64) -> u64 {
    per_row_estimate(req).saturating_add(encoded_len.saturating_mul(2))
}

/// The least [`converted_size_estimate_encoded`] a protobuf body of `encoded_len` bytes holding
/// `spans` spans can get ([`crate::decode::recycling::count_spans`] reads that count from the
/// framing): everything but the resource and scope each row stores. Known before the body is
/// decoded, so the collector refuses a request the writer queue has no room for before paying
/// for its decode.
pub fn converted_size_floor_encoded(encoded_len: u64, spans: u64) -> u64 {
    ROW_OVERHEAD
        .saturating_mul(spans)
        .saturating_add(encoded_len.saturating_mul(2))
}

/// Fixed columns of a row (ids, timestamps, kinds, codes, source), generously.
const ROW_OVERHEAD: u64 = 512;

/// The part of the estimate every row pays: its resource and scope, stored again in every row,
/// and the fixed columns.
fn per_row_estimate(req: &ExportTraceServiceRequest) -> u64 {
    let mut total: u64 = 0;
    for rs in &req.resource_spans {
        let resource = rs.resource.as_ref().map_or(0, |r| r.encoded_len()) + rs.schema_url.len();
        for ss in &rs.scope_spans {
            let scope = ss.scope.as_ref().map_or(0, |s| s.encoded_len()) + ss.schema_url.len();
            let per_row = (resource + scope) as u64 + ROW_OVERHEAD;
            total = total.saturating_add(per_row.saturating_mul(ss.spans.len() as u64));
        }
    }
    total
}

fn convert_unbounded(
    req: &ExportTraceServiceRequest,
    ctx: &IngestContext,
) -> Result<Converted, ConvertError> {
    let engine = DialectEngine::get();
    let mut builder = SpanBatchBuilder::with_capacity(capacity(req));
    let mut rejections = Rejections::default();
    let empty: Vec<KeyValue> = Vec::new();
    let mut keys = KeyCache::new();
    // Per-span scratch, cleared for every span instead of allocated and freed per span.
    let mut attrs: Vec<(&str, Option<&AnyValue>)> = Vec::new();
    let mut facts: Vec<KeyFacts> = Vec::new();
    let mut present: Vec<(&str, &AnyValue)> = Vec::new();
    let mut present_facts: Vec<KeyFacts> = Vec::new();
    let mut dialects: Vec<&'static str> = Vec::new();
    let mut split = content::Split::new();
    let mut shape_order = ShapeOrder::default();

    for rs in &req.resource_spans {
        let resource_attrs = rs.resource.as_ref().map_or(&empty, |r| &r.attributes);
        let resource_json = attributes_json(&dedup_attributes(resource_attrs));
        for ss in &rs.scope_spans {
            let scope = ss.scope.as_ref();
            let scope_json =
                attributes_json(&dedup_attributes(scope.map_or(&empty, |s| &s.attributes)));
            let origin = Origin {
                service_name: string_attr(resource_attrs, SERVICE_NAME),
                service_version: string_attr(resource_attrs, SERVICE_VERSION),
                service_instance_id: string_attr(resource_attrs, SERVICE_INSTANCE_ID),
                resource_attributes_json: &resource_json,
                resource_dropped: rs
                    .resource
                    .as_ref()
                    .map_or(0, |r| r.dropped_attributes_count),
                resource_schema_url: &rs.schema_url,
                scope_name: scope.map_or("", |s| s.name.as_str()),
                scope_version: scope.map_or("", |s| s.version.as_str()),
                scope_attributes_json: &scope_json,
                scope_dropped: scope.map_or(0, |s| s.dropped_attributes_count),
                scope_schema_url: &ss.schema_url,
            };
            builder.begin_origin(&origin, &ctx.source);
            let scope_markers = engine.scope_markers(origin.scope_name);
            let order = shape_order.arrange(&ss.spans, |index, span| {
                let reason = validate::rejection_reason(span);
                if let Some(reason) = &reason {
                    rejections.note(index, origin.scope_name, reason);
                }
                reason.is_some()
            });
            for span in order.iter().map(|&i| &ss.spans[i as usize]) {
                dedup_attributes_into(&span.attributes, &mut attrs);
                facts.clear();
                facts.extend(attrs.iter().map(|(k, _)| keys.get(engine, k)));
                present.clear();
                present_facts.clear();
                for (&(k, v), f) in attrs.iter().zip(&facts) {
                    if let Some(v) = v {
                        present.push((k, v));
                        present_facts.push(*f);
                    }
                }
                let view = SpanView {
                    scope_name: origin.scope_name,
                    name: &span.name,
                    attrs: &present,
                    facts: &present_facts,
                    scope_markers: Some(scope_markers),
                };
                let outcome = engine.apply(&view);
                let mut derived = Derived {
                    result_is_error: outcome.result_is_error,
                    result_type: outcome.result_type.or_else(|| {
                        crate::derived::input_waits::waits_for_input(&span.events)
                            .then_some("input_required")
                    }),
                    ..Derived::default()
                };
                content::split(
                    &mut split,
                    &attrs,
                    &facts,
                    outcome.matched,
                    engine,
                    &mut derived,
                );
                let attributes_in_columns = moved::move_into_columns(
                    &mut split.attributes,
                    &split.attribute_facts,
                    &outcome.lifted,
                );
                dialects.clear();
                dialects.extend(outcome.dialect_ids());
                let parts = RowParts {
                    split: &split,
                    lifted: &outcome.lifted,
                    attributes_in_columns,
                    derived: &derived,
                    dialects: &dialects,
                    redact: ctx.redact_content,
                };
                builder.append(span, &origin, &parts, ctx.received_at_unix_nano);
            }
        }
    }
    let (rejected, reasons) = rejections.finish();
    let accepted = builder.len();
    let batch = builder
        .finish()
        .map_err(|e| ConvertError::Builder(e.to_string()))?;
    Ok(Converted {
        batch,
        accepted,
        rejected,
        rejection_reasons: reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    /// One resource attribute of `attr_bytes` shared by `spans` tiny spans.
    fn amplifying(attr_bytes: usize, spans: usize) -> ExportTraceServiceRequest {
        let span = |i: usize| Span {
            trace_id: vec![1; 16],
            span_id: (i as u64 + 1).to_be_bytes().to_vec(),
            name: "s".into(),
            start_time_unix_nano: 1,
            end_time_unix_nano: 2,
            ..Default::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![KeyValue {
                        key: "big".into(),
                        value: Some(AnyValue {
                            value: Some(Value::StringValue("x".repeat(attr_bytes))),
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                scope_spans: vec![ScopeSpans {
                    spans: (0..spans).map(span).collect(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }

    fn ctx() -> IngestContext {
        IngestContext {
            received_at_unix_nano: 0,
            source: "test".into(),
            redact_content: false,
        }
    }

    #[test]
    fn estimate_counts_the_resource_once_per_span() {
        let one = converted_size_estimate(&amplifying(1 << 20, 1));
        let many = converted_size_estimate(&amplifying(1 << 20, 2100));
        assert!(one > 1 << 20, "one copy of the attribute: {one}");
        assert!(many > 2100 * (1 << 20), "2,100 copies: {many}");
    }

    #[test]
    fn the_estimate_from_the_body_length_is_never_below_the_walked_one() {
        use prost::Message as _;
        for req in [
            amplifying(1 << 20, 1),
            amplifying(10, 2100),
            amplifying(0, 0),
            ExportTraceServiceRequest::default(),
        ] {
            let walked = converted_size_estimate(&req);
            let body = req.encode_to_vec().len() as u64;
            let from_body = converted_size_estimate_encoded(&req, body);
            assert!(from_body >= walked, "{from_body} < {walked}");
            // Above it by twice the bytes that are not spans: resource, scope, framing.
            let not_spans = body
                - req
                    .resource_spans
                    .iter()
                    .flat_map(|rs| &rs.scope_spans)
                    .flat_map(|ss| &ss.spans)
                    .map(|s| s.encoded_len() as u64)
                    .sum::<u64>();
            assert_eq!(from_body - walked, 2 * not_spans);
        }
    }

    #[test]
    fn a_request_over_the_limit_is_refused_before_building() {
        let req = amplifying(1 << 20, 2100);
        let err = convert_request_bounded(&req, &ctx(), DEFAULT_MAX_CONVERTED_BYTES).unwrap_err();
        assert!(
            matches!(err, ConvertError::TooLarge { limit, .. } if limit == DEFAULT_MAX_CONVERTED_BYTES)
        );
        assert!(err.to_string().contains("--max-converted-bytes"), "{err}");
        // The unbounded entry point (file import) rejects every span with that reason.
        let converted = convert_request(&req, &ctx());
        assert_eq!((converted.accepted, converted.rejected), (0, 2100));
        assert_eq!(converted.batch.num_rows(), 0);
        assert!(converted.rejection_reasons[0].contains("--max-converted-bytes"));
    }

    #[test]
    fn validation_answers_exactly_as_conversion_does() {
        let mut req = amplifying(10, 30);
        let spans = &mut req.resource_spans[0].scope_spans[0].spans;
        spans[1].trace_id = vec![0; 16];
        spans[2].span_id = vec![1; 3];
        spans[3].parent_span_id = vec![0; 8];
        spans[4].end_time_unix_nano = u64::MAX;
        // More distinct reasons than are listed: the closing line must match too.
        for (i, span) in spans.iter_mut().enumerate().skip(5).take(11) {
            span.trace_id = vec![1; i];
        }
        let converted = convert_request(&req, &ctx());
        let validated = validate_request(&req);
        assert_eq!(validated.accepted, converted.accepted);
        assert_eq!(validated.rejected, converted.rejected);
        assert_eq!(validated.rejection_reasons, converted.rejection_reasons);
        assert_eq!((validated.accepted, validated.rejected), (15, 15));
        assert!(validated
            .rejection_reasons
            .last()
            .is_some_and(|r| r.ends_with("more rejected spans not listed")));
    }

    #[test]
    fn a_request_under_the_limit_converts() {
        let req = amplifying(1000, 10);
        let converted = convert_request_bounded(&req, &ctx(), 1 << 20).unwrap();
        assert_eq!((converted.accepted, converted.batch.num_rows()), (10, 10));
        assert!(convert_request_bounded(&req, &ctx(), 1000).is_err());
    }
}
