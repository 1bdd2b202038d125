//! OTLP/HTTP receiver: `POST /v1/traces` and `POST /v1/logs` with protobuf or JSON bodies, plain,
//! gzip or zstd (both through the same checks and request path, [`Signal`]);
//! plus `GET /health` (no token) and `GET /metrics` (Prometheus text; bearer token required
//! when one is configured), see [`router`].
//!
//! Checks run cheapest first (auth, content type, encoding, declared length, then admission:
//! queue full or in-flight body budget spent -> 429 with `Retry-After`) so a refused request
//! costs almost nothing and its body is never kept (the rest of an HTTP/1.x body is read and
//! dropped before the answer, so the client reads it instead of a reset: [`unread_body`]); the
//! body is read under the cap and the body
//! deadline, charged to the in-flight budget frame by frame as it arrives, then
//! processed ([`crate::receive::request`]) on the worker thread that read it
//! ([`crate::receive::on_worker`]), a call that cannot be cancelled halfway: if the client
//! disconnects, its WAL append still finishes, and nobody's data is cancelled halfway.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;

use crate::ack_latency::AckStage;
use crate::receive::auth::authorized;
use crate::receive::decompress::Encoding;
use crate::receive::early_admission::{BodyLimitError, ChargedBody};
use crate::receive::on_worker;
use crate::receive::otlp_wire::{
    code, encode_logs_response, encode_response, encode_status, export_logs_response,
    export_response, Format,
};
use crate::receive::request::{admit, check_room, process_signal_body, Context, Refusal, Signal};
use crate::receive::unread_body;
use crate::telemetry::cut;

/// Shared state of the HTTP receiver.
pub struct HttpState {
    pub ctx: Context,
    pub auth_token: Option<String>,
    pub retry_after_secs: u32,
    /// The whole body must arrive within this time, else 408.
    pub body_timeout: Duration,
}

/// The router serving `POST /v1/traces`, `POST /v1/logs`, `GET /health` and `GET /metrics`.
///
/// `/health` needs no token (a load balancer or an orchestrator probes it): 200
/// `{"status":"ready"}` once the WAL is replayed (the listeners open only after replay), 503
/// `{"status":"unavailable","reason":...}` while the queue to the Parquet writer is full.
/// `/metrics` (Prometheus text) requires the bearer token when one is configured: it reveals
/// traffic volumes.
pub fn router(state: Arc<HttpState>) -> Router {
    Router::new()
        .route("/v1/traces", post(export_traces))
        .route("/v1/logs", post(export_logs))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(state)
}

async fn health(State(state): State<Arc<HttpState>>) -> Response {
    let pipeline = &state.ctx.pipeline;
    let trouble = if let Some(why) = pipeline.degraded() {
        Some(format!(
            "parquet writes are failing ({}): new data is refused until the writer recovers",
            crate::telemetry::cut(&why)
        ))
    } else if let Some(why) = pipeline.wal_failure() {
        Some(format!(
            "the last write to the WAL failed ({}): requests are refused until a write succeeds",
            crate::telemetry::cut(&why)
        ))
    } else if pipeline.is_full() {
        Some(format!(
            "the queue to the Parquet writer is full ({} batches): storage is not keeping up",
            pipeline.queued_batches()
        ))
    } else {
        None
    };
    if let Some(reason) = trouble {
        let body = serde_json::json!({"status": "unavailable", "reason": reason}).to_string();
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"ready"}"#,
    )
        .into_response()
}

async fn metrics(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    let auth = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if !authorized(state.auth_token.as_deref(), auth) {
        state.ctx.stats.request("http", 401);
        crate::telemetry::log_refusal("http", 401, "/metrics without a valid bearer token");
        return (
            StatusCode::UNAUTHORIZED,
            "missing or invalid bearer token; send `Authorization: Bearer <token>`\n",
        )
            .into_response();
    }
    let ctx = &state.ctx;
    let gauges = [
        (
            "queue_batches",
            "Converted batches waiting for the Parquet writer.",
            ctx.pipeline.queued_batches() as f64,
        ),
        (
            "inflight_bytes",
            "Request body bytes received and not yet answered.",
            ctx.admission.inflight_bytes() as f64,
        ),
        (
            "inflight_budget_bytes",
            "The in-flight body budget (--max-inflight-bytes).",
            ctx.admission.max_inflight_bytes() as f64,
        ),
        (
            "ready",
            "1 when /health answers ready (WAL replayed, queue not full).",
            if ctx.pipeline.is_full() || ctx.pipeline.is_degraded() {
                0.0
            } else {
                1.0
            },
        ),
    ];
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        ctx.stats.prometheus_text(&gauges),
    )
        .into_response()
}

async fn export_traces(
    State(state): State<Arc<HttpState>>,
    version: Version,
    headers: HeaderMap,
    body: Body,
) -> Response {
    export(state, version, headers, body, Signal::Traces).await
}

async fn export_logs(
    State(state): State<Arc<HttpState>>,
    version: Version,
    headers: HeaderMap,
    body: Body,
) -> Response {
    export(state, version, headers, body, Signal::Logs).await
}

async fn export(
    state: Arc<HttpState>,
    version: Version,
    headers: HeaderMap,
    body: Body,
    signal: Signal,
) -> Response {
    let cap = state.ctx.max_body_bytes;
    // A refusal answered before the body is read: the rest of an HTTP/1.x body is read and
    // dropped first, so the client reads the answer instead of a reset (`unread_body`).
    let drain = unread_body::drain_before_reading(version, &headers);
    let unread = |response: Response, body: Body| {
        unread_body::answer_after(response, body, drain, cap, state.body_timeout)
    };
    let format = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(Format::from_content_type);
    let auth = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if !authorized(state.auth_token.as_deref(), auth) {
        let why = if auth.is_some() {
            "the bearer token is not valid; send the token from --auth-token-file as `Authorization: Bearer <token>`"
        } else {
            "missing bearer token; send `Authorization: Bearer <token>` (the collector runs with --auth-token-file)"
        };
        return refuse(
            &state,
            format.unwrap_or(Format::Json),
            StatusCode::UNAUTHORIZED,
            code::UNAUTHENTICATED,
            why,
        );
    }
    let Some(format) = format else {
        let got = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_else(|| "none".to_string());
        let msg = format!(
            "unsupported content type `{}`; send application/x-protobuf or application/json",
            cut(&got)
        );
        let response = refuse(
            &state,
            Format::Json,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_ARGUMENT,
            &msg,
        );
        return unread(response, body).await;
    };
    let encoding_header = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let Some(encoding) = Encoding::parse(encoding_header.as_deref()) else {
        let msg = format!(
            "unsupported content encoding `{}`; send the body plain, gzip or zstd",
            cut(&encoding_header.unwrap_or_default())
        );
        let response = refuse(
            &state,
            format,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_ARGUMENT,
            &msg,
        );
        return unread(response, body).await;
    };
    let too_large = || {
        format!("request body exceeds the limit of {cap} bytes; send smaller batches (or raise --max-body-bytes)")
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap as u64) {
        return refuse(
            &state,
            format,
            StatusCode::PAYLOAD_TOO_LARGE,
            code::RESOURCE_EXHAUSTED,
            &too_large(),
        );
    }
    // A plain protobuf trace body of a declared length the writer queue has no room for is
    // refused before it is read (its decode would be wasted: the reservation would refuse it).
    if let (Signal::Traces, Format::Protobuf, Encoding::Identity, Some(n)) =
        (signal, format, encoding, declared)
    {
        if let Err(refusal) = check_room(&state.ctx, usize::try_from(n).unwrap_or(usize::MAX), 0) {
            return unread(refusal_response(&state, format, refusal), body).await;
        }
    }
    // Admission before the body is read: under overload a refusal costs a header check. The
    // permit starts empty and grows with the bytes actually received, whatever was declared.
    let permit = match admit(&state.ctx, 0) {
        Ok(p) => Arc::new(Mutex::new(p)),
        Err(refusal) => return unread(refusal_response(&state, format, refusal), body).await,
    };
    let mut charged = ChargedBody::new(body, Arc::clone(&permit), cap, state.body_timeout);
    let reading = Instant::now();
    let collected = (&mut charged).collect().await;
    state
        .ctx
        .stats
        .ack
        .record(AckStage::BodyRead, reading.elapsed());
    let bytes = match collected {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            let (status, rpc_code) = match e {
                BodyLimitError::TooLarge { .. } => {
                    (StatusCode::PAYLOAD_TOO_LARGE, code::RESOURCE_EXHAUSTED)
                }
                BodyLimitError::Overloaded { .. } => {
                    (StatusCode::TOO_MANY_REQUESTS, code::RESOURCE_EXHAUSTED)
                }
                BodyLimitError::TimedOut { .. } => {
                    (StatusCode::REQUEST_TIMEOUT, code::DEADLINE_EXCEEDED)
                }
                BodyLimitError::Read(_) => (StatusCode::BAD_REQUEST, code::INVALID_ARGUMENT),
            };
            let response = refuse(&state, format, status, rpc_code, &e.to_string());
            // Only a refusal for lack of room reads the rest: the others are about the body
            // itself (too large, too slow, unreadable). The budget is given back first.
            let drain = matches!(e, BodyLimitError::Overloaded { .. })
                && unread_body::drain_after_reading(version);
            drop(permit);
            return unread_body::answer_after(
                response,
                charged.into_inner(),
                drain,
                cap,
                state.body_timeout,
            )
            .await;
        }
    };
    let ctx = state.ctx.clone();
    let stats = Arc::clone(&ctx.stats);
    let outcome = on_worker::run_request(stats, Instant::now(), permit, move || {
        process_signal_body(&ctx, signal, &bytes, encoding, format)
    })
    .await;
    match outcome {
        Ok(accepted) => {
            state.ctx.stats.request("http", 200);
            if accepted.rejected > 0 {
                tracing::info!(protocol = "http", accepted = accepted.accepted, rejected = accepted.rejected, reason = %cut(&accepted.message), "partial success");
            }
            let body = match signal {
                Signal::Traces => encode_response(
                    format,
                    &export_response(accepted.rejected, &accepted.message),
                ),
                Signal::Logs => encode_logs_response(
                    format,
                    &export_logs_response(accepted.rejected, &accepted.message),
                ),
            };
            ([(header::CONTENT_TYPE, format.content_type())], body).into_response()
        }
        Err(refusal) => refusal_response(&state, format, refusal),
    }
}

/// The answer to a request that was not acknowledged.
fn refusal_response(state: &HttpState, format: Format, refusal: Refusal) -> Response {
    match refusal {
        Refusal::BadRequest(m) => refuse(
            state,
            format,
            StatusCode::BAD_REQUEST,
            code::INVALID_ARGUMENT,
            &m,
        ),
        Refusal::TooLarge(m) => refuse(
            state,
            format,
            StatusCode::PAYLOAD_TOO_LARGE,
            code::RESOURCE_EXHAUSTED,
            &m,
        ),
        Refusal::Overloaded(m) => refuse(
            state,
            format,
            StatusCode::TOO_MANY_REQUESTS,
            code::RESOURCE_EXHAUSTED,
            &m,
        ),
        Refusal::Unavailable(m) => refuse(
            state,
            format,
            StatusCode::SERVICE_UNAVAILABLE,
            code::UNAVAILABLE,
            &m,
        ),
    }
}

/// A non-2xx answer: logged with its reason, counted, body a `google.rpc.Status`.
fn refuse(
    state: &HttpState,
    format: Format,
    status: StatusCode,
    rpc_code: i32,
    message: &str,
) -> Response {
    crate::telemetry::log_refusal("http", status.as_u16(), message);
    state.ctx.stats.request("http", status.as_u16());
    let mut response = (
        status,
        [(header::CONTENT_TYPE, format.content_type())],
        encode_status(format, rpc_code, &cut(message)),
    )
        .into_response();
    if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
        if let Ok(v) = HeaderValue::from_str(&state.retry_after_secs.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    response
}
