//! OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export` on tonic,
//! gzip (and zstd) accepted, messages capped at the body limit. Same request path as HTTP
//! ([`crate::request`]), same detached processing, answers mapped to gRPC codes: bad input
//! INVALID_ARGUMENT, full queue RESOURCE_EXHAUSTED with RetryInfo, no token UNAUTHENTICATED.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tonic::codec::CompressionEncoding;
use tonic::{Code, Request, Response, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::auth::authorized;
use crate::otlp_response::export_response;
use crate::request::{admit, process_request, Context, Refusal};

/// The gRPC trace service.
pub struct GrpcReceiver {
    pub ctx: Context,
    pub auth_token: Option<String>,
    pub retry_after_secs: u32,
}

impl GrpcReceiver {
    /// Wrap in the generated server with compression and the message cap configured.
    pub fn into_service(self) -> TraceServiceServer<GrpcReceiver> {
        let cap = self.ctx.max_body_bytes;
        TraceServiceServer::new(self)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Zstd)
            .send_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(cap)
    }

    fn refuse(&self, status: Status, http_equivalent: u16) -> Status {
        tracing::warn!(protocol = "grpc", code = ?status.code(), reason = %status.message(), "request refused");
        self.ctx.stats.request("grpc", http_equivalent);
        status
    }
}

#[tonic::async_trait]
impl TraceService for GrpcReceiver {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
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
        // tonic has decoded the message already; refusing here still saves its conversion.
        let outcome = match admit(&self.ctx, 0) {
            Ok(permit) => {
                let message = request.into_inner();
                let ctx = self.ctx.clone();
                let task = tokio::spawn(async move {
                    tokio::task::spawn_blocking(move || {
                        let outcome = process_request(&ctx, message);
                        drop(permit);
                        outcome
                    })
                    .await
                });
                match task.await {
                    Ok(Ok(o)) => o,
                    Ok(Err(e)) | Err(e) => Err(Refusal::Unavailable(format!(
                        "internal error while storing the request: {e}; retry, and report it if it persists"
                    ))),
                }
            }
            Err(refusal) => Err(refusal),
        };
        match outcome {
            Ok(accepted) => {
                self.ctx.stats.request("grpc", 200);
                Ok(Response::new(export_response(
                    accepted.rejected,
                    &accepted.message,
                )))
            }
            Err(Refusal::BadRequest(m)) => Err(self.refuse(Status::invalid_argument(m), 400)),
            Err(Refusal::TooLarge(m)) => Err(self.refuse(Status::resource_exhausted(m), 413)),
            Err(Refusal::Overloaded(m)) => {
                let details = ErrorDetails::with_retry_info(Some(Duration::from_secs(u64::from(
                    self.retry_after_secs,
                ))));
                let status = Status::with_error_details(Code::ResourceExhausted, m, details);
                Err(self.refuse(status, 429))
            }
            Err(Refusal::Unavailable(m)) => Err(self.refuse(Status::unavailable(m), 503)),
        }
    }
}
