//! OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export` and
//! `opentelemetry.proto.collector.logs.v1.LogsService/Export` on tonic, one port, gzip (and zstd)
//! accepted, messages capped at the body limit. Same request path as HTTP
//! ([`crate::receive::request`]), run the same way ([`crate::receive::on_worker`]).
//!
//! In front of tonic ([`GrpcReceiver::into_handler`]), before a byte of the message is read: the
//! bearer token is checked from the headers (UNAUTHENTICATED), admission is checked, and the body
//! is wrapped in a [`ChargedBody`] that charges the shared in-flight budget as frames arrive and
//! enforces the body cap and deadline. Answers use the codes OTLP exporters act on correctly:
//! malformed -> INVALID_ARGUMENT (tonic's INTERNAL for an undecodable message is rewritten),
//! over the cap -> RESOURCE_EXHAUSTED *without* RetryInfo (tonic's OUT_OF_RANGE is rewritten; a
//! resend cannot help), queue full or budget spent -> RESOURCE_EXHAUSTED *with* RetryInfo,
//! storage unavailable -> UNAVAILABLE.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::BodyExt as _;
use tower::ServiceExt as _;

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{
    LogsService, LogsServiceServer,
};
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use tonic::codec::CompressionEncoding;
use tonic::{Code, Request, Response, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::receive::auth::authorized;
use crate::receive::early_admission::{BodyLimitError, ChargedBody, SharedPermit};
use crate::receive::grpc_traces::TraceExportService;
use crate::receive::on_worker;
use crate::receive::otlp_wire::export_logs_response;
use crate::receive::request::{admit, process_logs_request, Accepted, Context, Refusal};
use crate::server::Handler;

/// The gRPC trace service.
#[derive(Clone)]
pub struct GrpcReceiver {
    pub ctx: Context,
    pub auth_token: Option<String>,
    pub retry_after_secs: u32,
    /// The whole message must arrive within this time.
    pub body_timeout: Duration,
}

/// Put in the request's extensions by the handler in front of tonic: the body's in-flight
/// charge (held until the request is answered) and whether `export` counted the answer.
#[derive(Clone)]
struct Ticket {
    permit: SharedPermit,
    counted: Arc<AtomicBool>,
}

impl GrpcReceiver {
    /// The connection handler: auth, admission and body charging in front of tonic, then the
    /// status rewrite and the counting of answers tonic gave without calling `export`.
    pub fn into_handler(self) -> Handler {
        let receiver = self.clone();
        let routes = tonic::service::Routes::new(self.clone().into_service())
            .add_service(self.into_logs_service())
            .prepare();
        Arc::new(move |req: hyper::Request<hyper::body::Incoming>| {
            let routes = routes.clone();
            let receiver = receiver.clone();
            Box::pin(async move {
                let auth = req.headers().get("authorization").map(|v| v.as_bytes());
                if !authorized(receiver.auth_token.as_deref(), auth) {
                    let status = receiver.refuse(
                        Status::unauthenticated(
                            "missing or invalid bearer token; send `authorization: Bearer <token>` metadata",
                        ),
                        401,
                    );
                    return status
                        .into_http::<tonic::body::Body>()
                        .map(axum::body::Body::new);
                }
                let permit = match admit(&receiver.ctx, 0) {
                    Ok(p) => Arc::new(Mutex::new(p)),
                    Err(refusal) => {
                        let status = receiver.refusal_status(refusal);
                        return status
                            .into_http::<tonic::body::Body>()
                            .map(axum::body::Body::new);
                    }
                };
                let ticket = Ticket {
                    permit: Arc::clone(&permit),
                    counted: Arc::new(AtomicBool::new(false)),
                };
                let (mut parts, body) = req.into_parts();
                parts.extensions.insert(ticket.clone());
                let retry_after = receiver.retry_after_secs;
                let body = ChargedBody::new(
                    body,
                    permit,
                    receiver.ctx.max_body_bytes,
                    receiver.body_timeout,
                )
                .map_err(move |e| body_status(e, retry_after));
                let request = hyper::Request::from_parts(parts, tonic::body::Body::new(body));
                let mut response = match routes.oneshot(request).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                receiver.finish(&mut response, &ticket);
                response.map(axum::body::Body::new)
            })
        })
    }

    /// Rewrite the codes tonic gives for bad input, and count (and log) the answers `export`
    /// did not give itself: refused while the message was read or decoded.
    fn finish(&self, response: &mut hyper::Response<tonic::body::Body>, ticket: &Ticket) {
        let code = response
            .headers()
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i32>().ok());
        let rewritten = match code {
            Some(c) if c == Code::Internal as i32 => Some(Code::InvalidArgument),
            Some(c) if c == Code::OutOfRange as i32 => Some(Code::ResourceExhausted),
            _ => None,
        };
        if let Some(new) = rewritten {
            response
                .headers_mut()
                .insert("grpc-status", axum::http::HeaderValue::from(new as i32));
        }
        if ticket.counted.load(Ordering::Relaxed) {
            return;
        }
        let Some(code) = rewritten.map(|c| c as i32).or(code) else {
            return;
        };
        let retryable = response.headers().contains_key("grpc-status-details-bin");
        let http_equivalent = match Code::from_i32(code) {
            Code::Ok => 200,
            Code::InvalidArgument => 400,
            Code::Unauthenticated => 401,
            Code::DeadlineExceeded => 408,
            Code::ResourceExhausted if retryable => 429,
            Code::ResourceExhausted => 413,
            Code::Unavailable => 503,
            _ => 500,
        };
        if http_equivalent != 200 {
            let message = response
                .headers()
                .get("grpc-message")
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            crate::telemetry::log_refusal("grpc", http_equivalent, &message);
        }
        self.ctx.stats.request("grpc", http_equivalent);
    }

    /// The status of a request refused by the request path.
    fn refusal_status(&self, refusal: Refusal) -> Status {
        match refusal {
            Refusal::BadRequest(m) => self.refuse(Status::invalid_argument(m), 400),
            Refusal::TooLarge(m) => self.refuse(Status::resource_exhausted(m), 413),
            Refusal::Overloaded(m) => {
                let status = overloaded_status(m, self.retry_after_secs);
                self.refuse(status, 429)
            }
            Refusal::Unavailable(m) => self.refuse(Status::unavailable(m), 503),
        }
    }

    /// The trace service (`Export` on the message bytes, [`crate::receive::grpc_traces`]),
    /// with compression and the message cap configured.
    pub fn into_service(self) -> TraceExportService {
        TraceExportService::new(self)
    }

    /// The logs service, configured like [`GrpcReceiver::into_service`].
    pub fn into_logs_service(self) -> LogsServiceServer<GrpcReceiver> {
        let cap = self.ctx.max_body_bytes;
        LogsServiceServer::new(self)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Zstd)
            .send_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(cap)
    }

    /// Both services' `export`: the token (when the request did not come through the handler),
    /// the body permit, `work` run to completion ([`on_worker::run_request`]), the answer counted.
    pub(crate) async fn export_with<T: Send + 'static>(
        &self,
        request: Request<T>,
        work: fn(&Context, T) -> Result<Accepted, Refusal>,
    ) -> Result<Accepted, Status> {
        // The handler in front of tonic checked the token and charged the body; a request that
        // did not pass through it (the service used on its own) is checked here.
        let ticket = request.extensions().get::<Ticket>().cloned();
        if let Some(t) = &ticket {
            t.counted.store(true, Ordering::Relaxed);
        } else {
            let auth = request
                .metadata()
                .get("authorization")
                .map(|v| v.as_bytes());
            if !authorized(self.auth_token.as_deref(), auth) {
                return Err(self.refuse(
                    Status::unauthenticated(
                        "missing or invalid bearer token; send `authorization: Bearer <token>` metadata",
                    ),
                    401,
                ));
            }
        }
        let permit = match ticket {
            Some(t) => Ok(t.permit),
            None => admit(&self.ctx, 0).map(|p| Arc::new(Mutex::new(p))),
        };
        let outcome = match permit {
            Ok(permit) => {
                let message = request.into_inner();
                let ctx = self.ctx.clone();
                let stats = Arc::clone(&ctx.stats);
                on_worker::run_request(stats, Instant::now(), permit, move || work(&ctx, message))
                    .await
            }
            Err(refusal) => Err(refusal),
        };
        match outcome {
            Ok(accepted) => {
                self.ctx.stats.request("grpc", 200);
                Ok(accepted)
            }
            Err(refusal) => Err(self.refusal_status(refusal)),
        }
    }

    fn refuse(&self, status: Status, http_equivalent: u16) -> Status {
        crate::telemetry::log_refusal("grpc", http_equivalent, status.message());
        self.ctx.stats.request("grpc", http_equivalent);
        let message = crate::telemetry::cut(status.message()).into_owned();
        if message.len() == status.message().len() {
            return status;
        }
        Status::with_details_and_metadata(
            status.code(),
            message,
            status.details().to_vec().into(),
            status.metadata().clone(),
        )
    }
}

/// RESOURCE_EXHAUSTED with RetryInfo: a retry after the delay can succeed.
fn overloaded_status(message: String, retry_after_secs: u32) -> Status {
    let details =
        ErrorDetails::with_retry_info(Some(Duration::from_secs(u64::from(retry_after_secs))));
    Status::with_error_details(Code::ResourceExhausted, message, details)
}

/// The status a body refused while it was read turns into (tonic finds it in the error).
fn body_status(e: BodyLimitError, retry_after_secs: u32) -> Status {
    let message = e.to_string();
    match e {
        BodyLimitError::Overloaded { .. } => overloaded_status(message, retry_after_secs),
        BodyLimitError::TooLarge { .. } => Status::resource_exhausted(message),
        BodyLimitError::TimedOut { .. } => Status::deadline_exceeded(message),
        BodyLimitError::Read(_) => Status::invalid_argument(message),
    }
}

#[tonic::async_trait]
impl LogsService for GrpcReceiver {
    async fn export(
        &self,
        request: Request<ExportLogsServiceRequest>,
    ) -> Result<Response<ExportLogsServiceResponse>, Status> {
        let accepted = self.export_with(request, process_logs_request).await?;
        Ok(Response::new(export_logs_response(
            accepted.rejected,
            &accepted.message,
        )))
    }
}
