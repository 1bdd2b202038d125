//! Request body decoding: OTLP protobuf, OTLP/JSON and JSON lines into `ExportTraceServiceRequest`.
//!
//! Why our own JSON reader instead of the `with-serde` derive of `opentelemetry-proto`: senders
//! disagree on the details the OTLP/JSON spec leaves to the protobuf JSON mapping. The derive
//! rejects enum names (`"kind": "SPAN_KIND_SERVER"`), snake_case keys and `null` fields, all of
//! which real exporters emit. `otlp_json` mirrors the message tree with lenient field readers and
//! converts to the prost types, and every error carries the JSON path plus line/column, because the
//! collector returns it verbatim to the client in a 400.

mod otlp_json;
mod otlp_json_logs;
pub mod recycling;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use prost::Message;

use crate::error::DecodeError;

/// Decodes a serialized protobuf `ExportTraceServiceRequest` (OTLP/HTTP protobuf body or the
/// message carried by OTLP/gRPC).
pub fn decode_protobuf(body: &[u8]) -> Result<ExportTraceServiceRequest, DecodeError> {
    let mut request = ExportTraceServiceRequest::default();
    decode_protobuf_into(&mut request, body)?;
    Ok(request)
}

/// [`decode_protobuf`] into an existing request, reusing its allocations
/// ([`recycling`]): the collector refills the requests it has converted instead of allocating
/// every string again. The result is exactly prost's; bodies the recycling decoder does not
/// handle (malformed ones included, for prost's error text) are decoded by prost. On `Err`,
/// `request` is left empty.
pub fn decode_protobuf_into(
    request: &mut ExportTraceServiceRequest,
    body: &[u8],
) -> Result<(), DecodeError> {
    decode_protobuf_into_with(request, &mut recycling::Spare::default(), body)
}

/// [`decode_protobuf_into`], keeping the attribute slots the request lets go in `spare` for
/// the next decode ([`recycling::Spare`]).
pub fn decode_protobuf_into_with(
    request: &mut ExportTraceServiceRequest,
    spare: &mut recycling::Spare,
    body: &[u8],
) -> Result<(), DecodeError> {
    if recycling::decode_into_with(request, spare, body).is_ok() {
        return Ok(());
    }
    match ExportTraceServiceRequest::decode(body) {
        Ok(decoded) => {
            *request = decoded;
            Ok(())
        }
        Err(e) => {
            request.resource_spans.clear();
            Err(DecodeError::Protobuf(e.to_string()))
        }
    }
}

/// prost's own decode, without the recycling decoder: the reference the recycling decoder is
/// tested against (tests, fuzz targets, benchmarks).
pub fn decode_protobuf_with_prost(body: &[u8]) -> Result<ExportTraceServiceRequest, DecodeError> {
    ExportTraceServiceRequest::decode(body).map_err(|e| DecodeError::Protobuf(e.to_string()))
}

/// Decodes an OTLP/JSON `ExportTraceServiceRequest`.
///
/// Accepts lowerCamelCase keys (the spec) and snake_case keys, hex (or base64) trace/span ids,
/// 64-bit integers as numbers or strings, enums as integers or names (`SPAN_KIND_SERVER`,
/// `SERVER`, `STATUS_CODE_ERROR`), and `null` for any field. Unknown keys are ignored, as the spec
/// requires.
pub fn decode_json(body: &[u8]) -> Result<ExportTraceServiceRequest, DecodeError> {
    otlp_json::decode_request(body, 0)
}

/// Decodes a body holding one OTLP/JSON `ExportTraceServiceRequest` per line (the file exporter's
/// format). Blank lines are skipped; an error names the failing line.
pub fn decode_json_lines(body: &[u8]) -> Result<Vec<ExportTraceServiceRequest>, DecodeError> {
    let mut out = Vec::new();
    for (index, line) in body.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let request =
            otlp_json::decode_request(line, index).map_err(|e| DecodeError::JsonLine {
                line: index + 1,
                source: Box::new(e),
            })?;
        out.push(request);
    }
    Ok(out)
}

/// Decodes line `index` (0-based) of a JSON lines body, for readers that stream a file line by
/// line instead of holding it whole; errors name the line like [`decode_json_lines`].
pub fn decode_json_line(
    line: &[u8],
    index: usize,
) -> Result<ExportTraceServiceRequest, DecodeError> {
    otlp_json::decode_request(line, index).map_err(|e| DecodeError::JsonLine {
        line: index + 1,
        source: Box::new(e),
    })
}

/// Decodes a serialized protobuf `ExportLogsServiceRequest` (OTLP/HTTP `/v1/logs` body or the
/// message carried by the gRPC LogsService).
pub fn decode_logs_protobuf(body: &[u8]) -> Result<ExportLogsServiceRequest, DecodeError> {
    ExportLogsServiceRequest::decode(body).map_err(|e| DecodeError::LogsProtobuf(e.to_string()))
}

/// Decodes an OTLP/JSON `ExportLogsServiceRequest`, as leniently as [`decode_json`].
pub fn decode_logs_json(body: &[u8]) -> Result<ExportLogsServiceRequest, DecodeError> {
    otlp_json_logs::decode_logs_request(body, 0).map_err(|e| match e {
        DecodeError::Json {
            path,
            line,
            column,
            message,
        } => DecodeError::LogsJson {
            path,
            line,
            column,
            message,
        },
        other => other,
    })
}

/// Decodes line `index` (0-based) of a recorded file that may carry `resourceSpans`,
/// `resourceLogs` or both (the OpenTelemetry Collector's file exporter writes either per line);
/// either request may come back empty. Errors name the line like [`decode_json_lines`].
pub fn decode_json_line_signals(
    line: &[u8],
    index: usize,
) -> Result<(ExportTraceServiceRequest, ExportLogsServiceRequest), DecodeError> {
    otlp_json_logs::decode_signals(line, index).map_err(|e| DecodeError::JsonLine {
        line: index + 1,
        source: Box::new(e),
    })
}

/// Parses one `AnyValue` in OTLP/JSON form (as stored in the `str` field of array / kvlist
/// attribute values).
pub(crate) fn decode_any_value_json(text: &str) -> Result<AnyValue, DecodeError> {
    otlp_json::decode_any_value(text.as_bytes())
}

/// Parses an attribute list stored as one JSON object (`resource_attributes_json`,
/// `scope_attributes_json`: [`crate::encode::attributes_json`]), in the order it was written.
pub fn decode_attributes_json(text: &str) -> Result<Vec<KeyValue>, DecodeError> {
    otlp_json::decode_attributes_object(text.as_bytes())
}
