//! The protocol-independent request path shared by OTLP/HTTP and OTLP/gRPC, for traces and
//! logs alike ([`Signal`]):
//! early admission ([`admit`], before the body is read) -> processing slot -> decompress
//! (capped) -> decode -> validate -> pipeline (queue reservation, WAL append of the request as
//! received, conversion straight to Arrow on this thread, fsync) -> outcome. Log requests and
//! `--redact-content` convert before the WAL instead. Runs in place on the worker thread that
//! read the request ([`crate::receive::on_worker`]), so a client that goes away cannot cancel a
//! WAL append halfway. The processing slot is held only while the decode runs, not while the
//! request is converted or the WAL fsync is awaited, so group commit still batches many requests
//! and the conversion overlaps the fsync (ADR 0004).

use std::sync::Arc;
use std::time::Instant;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use schemas::convert::{
    convert_request_bounded, convert_request_for_store, converted_size_estimate,
    converted_size_estimate_encoded, converted_size_floor_encoded, validate_request, ConvertError,
    Converted, IngestContext, Validation,
};
use schemas::decode::recycling::count_spans;

use crate::ack_latency::AckStage;
use crate::receive::decompress::{decompress_capped, BodyError, Encoding};
use crate::receive::early_admission::{BodyPermit, EarlyAdmission};
use crate::receive::otlp_wire::Format;
use crate::receive::request_pool::PooledRequest;
use crate::store::pipeline::{Pipeline, SubmitError};
use crate::store::wal::record::RequestRecord;
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
    /// 413 / RESOURCE_EXHAUSTED without RetryInfo: over the body cap, or the request would
    /// expand past `--max-converted-bytes` once converted. Resending cannot help.
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
    /// In-flight body budget and processing slots, shared by both receivers.
    pub admission: Arc<EarlyAdmission>,
    pub redact_content: bool,
    /// A request whose rows would take more than this is refused whole (413) before conversion.
    pub max_converted_bytes: u64,
    /// `ingest_source` of the rows: `otlp-http` / `otlp-grpc`.
    pub source: &'static str,
}

/// Early admission, before the body is read: refused (429 / RESOURCE_EXHAUSTED) when the queue
/// to the Parquet writer is full or the in-flight body budget is spent. `declared_bytes` is the
/// body size when known up front (0 otherwise; see [`BodyPermit::try_resize`]).
pub fn admit(ctx: &Context, declared_bytes: usize) -> Result<BodyPermit, Refusal> {
    if ctx.pipeline.is_full() {
        return Err(queue_full(ctx));
    }
    if ctx.pipeline.is_degraded() {
        return Err(Refusal::Unavailable(
            "the collector cannot write parquet files right now (see its log: disk full or an i/o error); nothing was accepted, retry after the Retry-After delay".to_string(),
        ));
    }
    ctx.admission.try_admit(declared_bytes).ok_or_else(|| {
        Refusal::Overloaded(format!(
            "the collector is overloaded ({} request bytes in flight, budget {}); retry after the Retry-After delay",
            ctx.admission.inflight_bytes(),
            ctx.admission.max_inflight_bytes()
        ))
    })
}

/// Refused (429 / RESOURCE_EXHAUSTED) when the queue to the Parquet writer has no room for a
/// protobuf trace body of `plain_len` decompressed bytes holding at least `spans` spans: its
/// queue charge is at least [`converted_size_floor_encoded`] of those, so the reservation after
/// the decode would refuse it anyway. Asked before the body is read (HTTP, identity encoding,
/// declared length, spans unknown: 0) and again before it is decoded (spans counted from the
/// framing, [`count_spans`]): under overload most requests are refused, and a refusal must not
/// cost a decode. It did: beyond the peak of 16 connections x 1,000-span requests, every refused
/// request was decoded first (BENCHMARKS.md, session 25).
pub fn check_room(ctx: &Context, plain_len: usize, spans: u64) -> Result<(), Refusal> {
    let floor = converted_size_floor_encoded(plain_len as u64, spans);
    if ctx
        .pipeline
        .has_room_for(usize::try_from(floor).unwrap_or(usize::MAX))
    {
        Ok(())
    } else {
        Err(queue_full(ctx))
    }
}

fn queue_full(ctx: &Context) -> Refusal {
    Refusal::Overloaded(format!(
        "the collector is overloaded ({} batches waiting to be written); retry after the Retry-After delay",
        ctx.pipeline.queued_batches()
    ))
}

/// The OTLP signal a request carries: both go through the same path into the same WAL, to
/// their own table (`spans/`, `logs/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `/v1/traces`, TraceService.
    Traces,
    /// `/v1/logs`, LogsService.
    Logs,
}

/// An OTLP/HTTP `/v1/traces` body as received (admitted by [`admit`]).
pub fn process_body(
    ctx: &Context,
    body: &[u8],
    encoding: Encoding,
    format: Format,
) -> Result<Accepted, Refusal> {
    process_signal_body(ctx, Signal::Traces, body, encoding, format)
}

/// An OTLP/HTTP body of `signal` as received (admitted by [`admit`]).
pub fn process_signal_body(
    ctx: &Context,
    signal: Signal,
    body: &[u8],
    encoding: Encoding,
    format: Format,
) -> Result<Accepted, Refusal> {
    process(ctx, signal, || {
        let plain = decompress_capped(body, encoding, ctx.max_body_bytes).map_err(|e| match e {
            BodyError::TooLarge { .. } => Refusal::TooLarge(e.to_string()),
            BodyError::Corrupt { .. } => Refusal::BadRequest(e.to_string()),
        })?;
        let bad = |e: schemas::DecodeError| Refusal::BadRequest(e.to_string());
        match signal {
            Signal::Traces => {
                if format == Format::Protobuf {
                    // A body whose framing does not parse is left to the decode's error.
                    let spans = count_spans(&plain).unwrap_or(0);
                    if let Err(refused) = check_room(ctx, plain.len(), spans) {
                        Stats::add(&ctx.stats.spans_refused, spans);
                        return Err(refused);
                    }
                }
                Stats::add(&ctx.stats.requests_decoded, 1);
                let request = match format {
                    Format::Protobuf => PooledRequest::decode_protobuf(&plain),
                    Format::Json => {
                        schemas::decode::decode_json(&plain).map(PooledRequest::not_kept)
                    }
                }
                .map_err(bad)?;
                let plain_len = plain.len();
                drop(plain);
                let stored = Stored {
                    body,
                    encoding,
                    format,
                    plain_len,
                };
                prepare_traces(ctx, request, stored)
            }
            Signal::Logs => {
                Stats::add(&ctx.stats.requests_decoded, 1);
                let request = match format {
                    Format::Protobuf => schemas::decode::decode_logs_protobuf(&plain),
                    Format::Json => schemas::decode::decode_logs_json(&plain),
                }
                .map_err(bad)?;
                drop(plain);
                convert_logs(ctx, request).map(Prepared::Converted)
            }
        }
    })
}

/// An OTLP/gRPC `TraceService/Export` message as received (tonic removed the framing and the
/// compression): the same path as an OTLP/HTTP protobuf body.
pub fn process_grpc_traces(ctx: &Context, message: &[u8]) -> Result<Accepted, Refusal> {
    process_signal_body(
        ctx,
        Signal::Traces,
        message,
        Encoding::Identity,
        Format::Protobuf,
    )
}

/// A log request decoded by the gRPC layer.
pub fn process_logs_request(
    ctx: &Context,
    request: ExportLogsServiceRequest,
) -> Result<Accepted, Refusal> {
    process(ctx, Signal::Logs, || {
        Stats::add(&ctx.stats.requests_decoded, 1);
        convert_logs(ctx, request).map(Prepared::Converted)
    })
}

/// What the CPU-heavy steps leave for submission.
enum Prepared<'a> {
    /// Converted before the answer: log requests, and trace requests under `--redact-content`
    /// (unredacted content never reaches the disk).
    Converted(Converted),
    /// A trace request validated and sized, converted once it is in the WAL (see
    /// [`crate::store::wal::record`]).
    Validated(Validated<'a>),
}

/// A validated trace request and the bytes its WAL record stores.
struct Validated<'a> {
    request: PooledRequest,
    validation: Validation,
    estimated_bytes: u64,
    stored: Stored<'a>,
}

/// The bytes a request record stores: an OTLP/HTTP body as received (still compressed if it
/// came so), or an OTLP/gRPC message as tonic hands it over.
struct Stored<'a> {
    body: &'a [u8],
    encoding: Encoding,
    format: Format,
    plain_len: usize,
}

/// A decoded trace request, ready to submit: validated (converted once in the WAL), or
/// converted now under `--redact-content`. Refused whole with 413 when it would expand past
/// `--max-converted-bytes`.
fn prepare_traces<'a>(
    ctx: &Context,
    request: PooledRequest,
    stored: Stored<'a>,
) -> Result<Prepared<'a>, Refusal> {
    if ctx.redact_content {
        return convert(ctx, request).map(Prepared::Converted);
    }
    // A protobuf body's length bounds its spans' encodings: no second walk over them. A JSON
    // body's does not (its text is several times the encoding): those are walked.
    let estimated_bytes = match stored.format {
        Format::Protobuf => converted_size_estimate_encoded(&request, stored.plain_len as u64),
        Format::Json => converted_size_estimate(&request),
    };
    if estimated_bytes > ctx.max_converted_bytes {
        return Err(too_large(ConvertError::TooLarge {
            estimated: estimated_bytes,
            limit: ctx.max_converted_bytes,
        }));
    }
    let validation = validate_request(&request);
    Ok(Prepared::Validated(Validated {
        request,
        validation,
        estimated_bytes,
        stored,
    }))
}

/// The CPU-heavy steps (decode, then conversion) under a processing slot, then the submission
/// without it. The queue is checked again first: it may have filled while the request waited
/// for its slot.
fn process<'a>(
    ctx: &Context,
    signal: Signal,
    decode_and_convert: impl FnOnce() -> Result<Prepared<'a>, Refusal>,
) -> Result<Accepted, Refusal> {
    let prepared = {
        let asked = Instant::now();
        let _slot = ctx.admission.processing_slot();
        let slotted = Instant::now();
        ctx.stats.ack.record(AckStage::SlotWait, slotted - asked);
        if ctx.pipeline.is_full() {
            return Err(queue_full(ctx));
        }
        let prepared = decode_and_convert();
        ctx.stats.ack.record(AckStage::Decode, slotted.elapsed());
        prepared?
    };
    match prepared {
        Prepared::Converted(converted) => submit(ctx, signal, converted),
        Prepared::Validated(validated) => submit_validated(ctx, validated),
    }
}

fn ingest_context(ctx: &Context) -> IngestContext {
    IngestContext {
        received_at_unix_nano: now_unix_nanos(),
        source: ctx.source.to_string(),
        redact_content: ctx.redact_content,
    }
}

/// A refused conversion's answer: 413, resending cannot help.
fn too_large(e: ConvertError) -> Refusal {
    match e {
        ConvertError::TooLarge { .. } | ConvertError::Builder(_) => {
            Refusal::TooLarge(e.to_string())
        }
    }
}

/// Convert, and free the decoded request while the processing slot is still held. A request
/// that would expand past `--max-converted-bytes` (or that the builders cannot hold) is refused
/// whole with 413: resending it cannot help.
fn convert(ctx: &Context, request: PooledRequest) -> Result<Converted, Refusal> {
    let converted =
        convert_request_bounded(&request, &ingest_context(ctx), ctx.max_converted_bytes);
    drop(request);
    converted.map_err(too_large)
}

/// [`convert`] for a log request.
fn convert_logs(ctx: &Context, request: ExportLogsServiceRequest) -> Result<Converted, Refusal> {
    let converted = schemas::logs::convert_logs_request_bounded(
        &request,
        &ingest_context(ctx),
        ctx.max_converted_bytes,
    );
    drop(request);
    converted.map_err(too_large)
}

/// A validated trace request: queue reservation, WAL append of the request as received, its
/// conversion on this thread while the WAL is synced, then the fsync; the answer to the client.
fn submit_validated(ctx: &Context, validated: Validated<'_>) -> Result<Accepted, Refusal> {
    let Validated {
        request,
        validation,
        estimated_bytes,
        stored,
    } = validated;
    if validation.accepted > 0 {
        let Stored {
            body,
            encoding,
            format,
            plain_len,
        } = stored;
        let ingest = ingest_context(ctx);
        let record = RequestRecord {
            format,
            encoding,
            plain_len: plain_len as u64,
            ctx: ingest.clone(),
            body,
        };
        let reserve = usize::try_from(estimated_bytes).unwrap_or(usize::MAX);
        // Converted and dropped on this thread, while its decode is still in the cache: back to
        // the pool for the next request.
        let submitted = ctx.pipeline.submit_request(&record, reserve, move || {
            convert_request_for_store(&request, &ingest, u64::MAX)
                .map(|c| c.batch)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = submitted {
            return Err(submit_refusal(ctx, Signal::Traces, validation.accepted, e));
        }
    }
    Ok(answer(
        ctx,
        Signal::Traces,
        validation.accepted,
        validation.rejected,
        &validation.rejection_reasons,
    ))
}

/// The refusal for a failed submission (`accepted` spans were refused).
fn submit_refusal(ctx: &Context, signal: Signal, accepted: usize, e: SubmitError) -> Refusal {
    match e {
        SubmitError::Overloaded { queued } => {
            if signal == Signal::Traces {
                Stats::add(&ctx.stats.spans_refused, accepted as u64);
            }
            Refusal::Overloaded(format!(
                "the collector is overloaded ({queued} batches waiting to be written); retry after the Retry-After delay"
            ))
        }
        e => Refusal::Unavailable(e.to_string()),
    }
}

/// Queue reservation, WAL append and fsync; the answer to the client.
fn submit(ctx: &Context, signal: Signal, converted: Converted) -> Result<Accepted, Refusal> {
    if let Err(e) = ctx.pipeline.submit(&converted) {
        return Err(submit_refusal(ctx, signal, converted.accepted, e));
    }
    Ok(answer(
        ctx,
        signal,
        converted.accepted,
        converted.rejected,
        &converted.rejection_reasons,
    ))
}

/// Count an acknowledged request and build its answer.
fn answer(
    ctx: &Context,
    signal: Signal,
    accepted_spans: usize,
    rejected_spans: usize,
    reasons: &[String],
) -> Accepted {
    let (accepted, rejected) = match signal {
        Signal::Traces => (&ctx.stats.spans_accepted, &ctx.stats.spans_rejected),
        Signal::Logs => (
            &ctx.stats.log_records_accepted,
            &ctx.stats.log_records_rejected,
        ),
    };
    Stats::add(accepted, accepted_spans as u64);
    Stats::add(rejected, rejected_spans as u64);
    Accepted {
        accepted: accepted_spans,
        rejected: rejected_spans,
        message: summarize_reasons(reasons),
    }
}

/// Distinct reasons in first-seen order, at most `MAX_REASONS`, with a count of the rest.
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
        .map(|r| crate::telemetry::cut(r))
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
