//! OTLP/HTTP on the wire: the request's encoding ([`Format`], from its `Content-Type`: protobuf or
//! JSON) and the answers the OTLP specification asks for, in that same encoding: an
//! `ExportTraceServiceResponse` / `ExportLogsServiceResponse` (with `partial_success` when
//! validation rejected spans or log records) on
//! success, a `google.rpc.Status` ([`RpcStatus`], [`code`]) on error.

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceResponse,
};
use prost::Message;

/// Encoding of an OTLP/HTTP request and of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Protobuf,
    Json,
}

impl Format {
    /// From a `Content-Type` header value; `None` for anything but OTLP's two encodings.
    pub fn from_content_type(value: &str) -> Option<Format> {
        let media = value
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/x-protobuf" | "application/protobuf" => Some(Format::Protobuf),
            "application/json" => Some(Format::Json),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Protobuf => "application/x-protobuf",
            Format::Json => "application/json",
        }
    }
}

/// `google.rpc.Status` (details are never sent).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
}

/// gRPC status codes used in error bodies.
pub mod code {
    pub const INVALID_ARGUMENT: i32 = 3;
    pub const DEADLINE_EXCEEDED: i32 = 4;
    pub const RESOURCE_EXHAUSTED: i32 = 8;
    pub const UNAVAILABLE: i32 = 14;
    pub const UNAUTHENTICATED: i32 = 16;
}

/// The success answer: `partial_success` only when spans were rejected.
pub fn export_response(rejected: usize, message: &str) -> ExportTraceServiceResponse {
    ExportTraceServiceResponse {
        partial_success: (rejected > 0).then(|| ExportTracePartialSuccess {
            rejected_spans: rejected as i64,
            error_message: message.to_string(),
        }),
    }
}

/// Serialise the success answer in `format` (JSON per the protobuf JSON mapping: lowerCamelCase
/// keys, int64 as a decimal string).
pub fn encode_response(format: Format, response: &ExportTraceServiceResponse) -> Vec<u8> {
    match format {
        Format::Protobuf => response.encode_to_vec(),
        Format::Json => {
            let value = match &response.partial_success {
                Some(p) => serde_json::json!({
                    "partialSuccess": {
                        "rejectedSpans": p.rejected_spans.to_string(),
                        "errorMessage": p.error_message,
                    }
                }),
                None => serde_json::json!({}),
            };
            value.to_string().into_bytes()
        }
    }
}

/// The success answer to a logs request: `partial_success` only when records were rejected.
pub fn export_logs_response(rejected: usize, message: &str) -> ExportLogsServiceResponse {
    ExportLogsServiceResponse {
        partial_success: (rejected > 0).then(|| ExportLogsPartialSuccess {
            rejected_log_records: rejected as i64,
            error_message: message.to_string(),
        }),
    }
}

/// Serialise a logs success answer in `format` (as [`encode_response`]).
pub fn encode_logs_response(format: Format, response: &ExportLogsServiceResponse) -> Vec<u8> {
    match format {
        Format::Protobuf => response.encode_to_vec(),
        Format::Json => {
            let value = match &response.partial_success {
                Some(p) => serde_json::json!({
                    "partialSuccess": {
                        "rejectedLogRecords": p.rejected_log_records.to_string(),
                        "errorMessage": p.error_message,
                    }
                }),
                None => serde_json::json!({}),
            };
            value.to_string().into_bytes()
        }
    }
}

/// Serialise an error answer in `format`.
pub fn encode_status(format: Format, code: i32, message: &str) -> Vec<u8> {
    match format {
        Format::Protobuf => RpcStatus {
            code,
            message: message.to_string(),
        }
        .encode_to_vec(),
        Format::Json => serde_json::json!({ "code": code, "message": message })
            .to_string()
            .into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_recognised_with_parameters() {
        assert_eq!(
            Format::from_content_type("application/x-protobuf"),
            Some(Format::Protobuf)
        );
        assert_eq!(
            Format::from_content_type("Application/JSON; charset=utf-8"),
            Some(Format::Json)
        );
        assert_eq!(Format::from_content_type("text/plain"), None);
    }

    #[test]
    fn partial_success_is_encoded_in_both_formats() {
        let r = export_response(2, "bad trace id");
        let pb = encode_response(Format::Protobuf, &r);
        let back = ExportTraceServiceResponse::decode(&pb[..]).unwrap();
        assert_eq!(back.partial_success.unwrap().rejected_spans, 2);
        let js: serde_json::Value =
            serde_json::from_slice(&encode_response(Format::Json, &r)).unwrap();
        assert_eq!(
            js,
            serde_json::json!({"partialSuccess": {"rejectedSpans": "2", "errorMessage": "bad trace id"}})
        );
        assert_eq!(
            encode_response(Format::Json, &export_response(0, "")),
            b"{}"
        );
    }

    #[test]
    fn status_round_trips() {
        let pb = encode_status(Format::Protobuf, code::INVALID_ARGUMENT, "nope");
        let s = RpcStatus::decode(&pb[..]).unwrap();
        assert_eq!((s.code, s.message.as_str()), (3, "nope"));
    }
}
