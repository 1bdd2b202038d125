//! The protocol-independent request path shared by OTLP/HTTP and OTLP/gRPC:
//! decompress (capped) -> decode -> convert (once, straight to Arrow) -> pipeline (admission,
//! WAL, fsync) -> outcome. Runs on a blocking thread inside a detached task, so a client that
//! goes away cannot cancel a WAL append halfway.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use schemas::convert::{convert_request, IngestContext};

use crate::limits::{decompress_capped, BodyError, Encoding};
use crate::otlp_response::Format;
use crate::pipeline::{Pipeline, SubmitError};
use crate::telemetry::Stats;

/// At most this many distinct rejection reasons are listed in `partial_success.error_message`.
const MAX_REASONS: usize = 5;

/// A request that was acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub accepted: usize,
    pub rejected: usize,
    /// Why spans were rejected (empty when none were).
    pub message: String,
}

/// A request that was not acknowledged, by the answer it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 400 / INVALID_ARGUMENT: the body is not what it claims to be.
    BadRequest(String),
    /// 413 / RESOURCE_EXHAUSTED: over the body cap.
    TooLarge(String),
    /// 429 / RESOURCE_EXHAUSTED with Retry-After: the queue is full.
    Overloaded(String),
    /// 503 / UNAVAILABLE: the collector cannot store data right now (disk, shutdown).
    Unavailable(String),
}

/// What a request needs besides its body.
#[derive(Clone)]
pub struct Context {
    pub pipeline: Arc<Pipeline>,
    pub stats: Arc<Stats>,
    pub max_body_bytes: usize,
    pub redact_content: bool,
    /// `ingest_source` of the rows: `otlp-http` / `otlp-grpc`.
    pub source: &'static str,
}

/// An OTLP/HTTP body as received.
pub fn process_body(
    ctx: &Context,
    body: &[u8],
    encoding: Encoding,
    format: Format,
) -> Result<Accepted, Refusal> {
    let plain = decompress_capped(body, encoding, ctx.max_body_bytes).map_err(|e| match e {
        BodyError::TooLarge { .. } => Refusal::TooLarge(e.to_string()),
        BodyError::Corrupt { .. } => Refusal::BadRequest(e.to_string()),
    })?;
    let request = match format {
        Format::Protobuf => schemas::decode::decode_protobuf(&plain),
        Format::Json => schemas::decode::decode_json(&plain),
    }
    .map_err(|e| Refusal::BadRequest(e.to_string()))?;
    process_request(ctx, &request)
}

/// A decoded request (gRPC, or after [`process_body`]).
pub fn process_request(
    ctx: &Context,
    request: &ExportTraceServiceRequest,
) -> Result<Accepted, Refusal> {
    let converted = convert_request(
        request,
        &IngestContext {
            received_at_unix_nano: now_unix_nanos(),
            source: ctx.source.to_string(),
            redact_content: ctx.redact_content,
        },
    );
    match ctx.pipeline.submit(&converted) {
        Ok(()) => {}
        Err(SubmitError::Overloaded { queued }) => {
            Stats::add(&ctx.stats.spans_refused, converted.accepted as u64);
            return Err(Refusal::Overloaded(format!(
                "the collector is overloaded ({queued} batches waiting to be written); retry after the Retry-After delay"
            )));
        }
        Err(e) => {
            return Err(Refusal::Unavailable(e.to_string()));
        }
    }
    Stats::add(&ctx.stats.spans_accepted, converted.accepted as u64);
    Stats::add(&ctx.stats.spans_rejected, converted.rejected as u64);
    Ok(Accepted {
        accepted: converted.accepted,
        rejected: converted.rejected,
        message: summarize_reasons(&converted.rejection_reasons),
    })
}

/// Distinct reasons in first-seen order, at most [`MAX_REASONS`], with a count of the rest.
pub fn summarize_reasons(reasons: &[String]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for r in reasons {
        if !distinct.contains(&r.as_str()) {
            distinct.push(r);
        }
    }
    let mut out = distinct
        .iter()
        .take(MAX_REASONS)
        .copied()
        .collect::<Vec<_>>()
        .join("; ");
    if distinct.len() > MAX_REASONS {
        out.push_str(&format!("; and {} more", distinct.len() - MAX_REASONS));
    }
    out
}

pub fn now_unix_nanos() -> i64 {
    chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_deduplicated_and_capped() {
        let rs: Vec<String> = ["a", "b", "a", "c", "d", "e", "f", "g"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(summarize_reasons(&rs), "a; b; c; d; e; and 2 more");
        assert_eq!(summarize_reasons(&[]), "");
    }
}
