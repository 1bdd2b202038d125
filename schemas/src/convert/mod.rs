//! OTLP `ExportTraceServiceRequest` -> canonical span `RecordBatch`.
//!
//! One pass over the spans: validate, deduplicate attributes, apply the dialect registry (typed
//! columns), split content from generic attributes, derive facts from content payloads, redact if
//! asked, append to column builders. Never panics on any input: a span that cannot be stored is
//! counted in `rejected` with a reason.
//!
//! Duplicate attribute keys: the last value wins (OTLP requires unique keys; DuckDB refuses
//! duplicate map keys), so a round trip of such a span returns one entry per key.

mod attrs;
mod builder;
mod content;
pub(crate) mod lift;
mod nested;
mod validate;

use arrow::record_batch::RecordBatch;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};

use crate::derived::Derived;
use crate::dialects::{DialectEngine, SpanView};
use crate::schema::span_schema;
pub(crate) use attrs::dedup_attributes;
pub use attrs::{value_type, REDACTED};
pub use builder::{kind_name, status_name};
use builder::{Origin, RowParts, SpanBatchBuilder};
pub use content::CONTENT_COLUMNS;

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
    /// Accepted spans; schema is exactly [`span_schema`].
    pub batch: RecordBatch,
    /// Number of spans in `batch`.
    pub accepted: usize,
    /// Number of spans rejected.
    pub rejected: usize,
    /// Why spans were rejected: distinct reasons, at most [`MAX_REASONS`] plus one summary line.
    pub rejection_reasons: Vec<String>,
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
pub fn convert_request(req: &ExportTraceServiceRequest, ctx: &IngestContext) -> Converted {
    let engine = DialectEngine::get();
    let mut builder = SpanBatchBuilder::new();
    let mut rejected = 0usize;
    let mut reasons: Vec<String> = Vec::new();
    let mut unlisted = 0usize;
    let empty: Vec<KeyValue> = Vec::new();

    for rs in &req.resource_spans {
        let resource_attrs = rs.resource.as_ref().map_or(&empty, |r| &r.attributes);
        for ss in &rs.scope_spans {
            let scope = ss.scope.as_ref();
            let origin = Origin {
                service_name: string_attr(resource_attrs, SERVICE_NAME),
                service_version: string_attr(resource_attrs, SERVICE_VERSION),
                service_instance_id: string_attr(resource_attrs, SERVICE_INSTANCE_ID),
                resource_attributes: resource_attrs,
                resource_dropped: rs
                    .resource
                    .as_ref()
                    .map_or(0, |r| r.dropped_attributes_count),
                resource_schema_url: &rs.schema_url,
                scope_name: scope.map_or("", |s| s.name.as_str()),
                scope_version: scope.map_or("", |s| s.version.as_str()),
                scope_attributes: scope.map_or(&empty, |s| &s.attributes),
                scope_dropped: scope.map_or(0, |s| s.dropped_attributes_count),
                scope_schema_url: &ss.schema_url,
            };
            for (index, span) in ss.spans.iter().enumerate() {
                if let Some(reason) = validate::rejection_reason(span) {
                    rejected += 1;
                    let scope_label = if origin.scope_name.is_empty() {
                        "(unnamed)"
                    } else {
                        origin.scope_name
                    };
                    let line = format!("span {index} of scope {scope_label}: {reason}");
                    if reasons.len() < MAX_REASONS {
                        if !reasons.contains(&line) {
                            reasons.push(line);
                        }
                    } else {
                        unlisted += 1;
                    }
                    continue;
                }
                let attrs = dedup_attributes(&span.attributes);
                let present: Vec<(&str, &AnyValue)> = attrs
                    .iter()
                    .filter_map(|(k, v)| v.map(|v| (*k, v)))
                    .collect();
                let view = SpanView {
                    scope_name: origin.scope_name,
                    name: &span.name,
                    attrs: &present,
                };
                let outcome = engine.apply(&view);
                let mut derived = Derived {
                    result_is_error: outcome.result_is_error,
                    ..Derived::default()
                };
                let split = content::split(&attrs, outcome.matched, engine, &mut derived);
                let dialects: Vec<&'static str> = outcome.dialect_ids().collect();
                let parts = RowParts {
                    split,
                    lifted: &outcome.lifted,
                    derived: &derived,
                    dialects: &dialects,
                    redact: ctx.redact_content,
                };
                builder.append(
                    span,
                    &origin,
                    &parts,
                    ctx.received_at_unix_nano,
                    &ctx.source,
                );
            }
        }
    }
    if unlisted > 0 {
        reasons.push(format!("{unlisted} more rejected spans not listed"));
    }
    let accepted = builder.len();
    match builder.finish() {
        Ok(batch) => Converted {
            batch,
            accepted,
            rejected,
            rejection_reasons: reasons,
        },
        Err(e) => Converted {
            batch: RecordBatch::new_empty(span_schema()),
            accepted: 0,
            rejected: rejected + accepted,
            rejection_reasons: vec![format!(
                "internal error while building the batch: {e}; please report it with the request"
            )],
        },
    }
}
