//! The OTLP/gRPC `TraceService/Export` method, served with a codec that hands over the message
//! bytes as received instead of a decoded request.
//!
//! Why: the generated `TraceServiceServer` decodes each message with prost before `export` sees
//! it, and the request path then had to encode it again for its WAL record (a request record
//! stores the message, ADR 0003). With the bytes, gRPC takes the same path as an OTLP/HTTP
//! protobuf body: decoded into a pooled request by the recycling decoder, validated, and the
//! bytes themselves written to the WAL. tonic still does the framing, decompression (gzip,
//! zstd) and the message cap; this module only replaces the generated service and its codec.

use std::convert::Infallible;
use std::task::{Context as TaskContext, Poll};

use bytes::{Buf as _, Bytes};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use prost::Message as _;
use tonic::body::Body;
use tonic::codec::{Codec, CompressionEncoding, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::{Request, Response, Status};

use crate::receive::grpc::GrpcReceiver;
use crate::receive::otlp_wire::export_response;
use crate::receive::request::process_grpc_traces;

/// The method's path, as in the OTLP protobuf service definition.
const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// Messages in: their bytes; answers out: `ExportTraceServiceResponse` encoded with prost.
#[derive(Debug, Default, Clone, Copy)]
pub struct RawTraceCodec;

/// Hands over a message's bytes (tonic has already removed the framing and decompressed them).
#[derive(Debug, Default)]
pub struct BytesDecoder;

/// Encodes the answer.
#[derive(Debug, Default)]
pub struct ResponseEncoder;

impl Codec for RawTraceCodec {
    type Encode = ExportTraceServiceResponse;
    type Decode = Bytes;
    type Encoder = ResponseEncoder;
    type Decoder = BytesDecoder;

    fn encoder(&mut self) -> ResponseEncoder {
        ResponseEncoder
    }

    fn decoder(&mut self) -> BytesDecoder {
        BytesDecoder
    }
}

impl Decoder for BytesDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

impl Encoder for ResponseEncoder {
    type Item = ExportTraceServiceResponse;
    type Error = Status;

    fn encode(&mut self, item: Self::Item, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding the answer: {e}")))
    }
}

/// The trace service: `Export` only, compression and the message cap as the logs service has
/// them ([`GrpcReceiver::into_logs_service`]).
#[derive(Clone)]
pub struct TraceExportService {
    receiver: GrpcReceiver,
}

impl TraceExportService {
    pub fn new(receiver: GrpcReceiver) -> Self {
        Self { receiver }
    }
}

impl NamedService for TraceExportService {
    const NAME: &'static str = "opentelemetry.proto.collector.trace.v1.TraceService";
}

/// One `Export` call.
struct Export(GrpcReceiver);

impl UnaryService<Bytes> for Export {
    type Response = ExportTraceServiceResponse;
    type Future = futures::future::BoxFuture<'static, Result<Response<Self::Response>, Status>>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        let receiver = self.0.clone();
        Box::pin(async move {
            let accepted = receiver
                .export_with(request, |ctx, body: Bytes| process_grpc_traces(ctx, &body))
                .await?;
            Ok(Response::new(export_response(
                accepted.rejected,
                &accepted.message,
            )))
        })
    }
}

impl<B> tower::Service<axum::http::Request<B>> for TraceExportService
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = axum::http::Response<Body>;
    type Error = Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        let receiver = self.receiver.clone();
        Box::pin(async move {
            if req.uri().path() != EXPORT_PATH {
                return Ok(Status::unimplemented(format!(
                    "{} is not a method of the trace service; use {EXPORT_PATH}",
                    req.uri().path()
                ))
                .into_http());
            }
            let cap = receiver.ctx.max_body_bytes;
            let mut grpc = Grpc::new(RawTraceCodec)
                .accept_compressed(CompressionEncoding::Gzip)
                .accept_compressed(CompressionEncoding::Zstd)
                .send_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(cap);
            Ok(grpc.unary(Export(receiver), req).await)
        })
    }
}
