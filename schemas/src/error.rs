//! Error types of the schema crate, one enum per operation boundary.
//!
//! Decoding errors travel back to OTLP clients (the collector answers them with a 400), so their
//! messages say where in the body the problem is and what to do about it. Schema errors come from
//! reading a `RecordBatch` that does not have the canonical layout.

use thiserror::Error;

/// Why a request body could not be decoded into an `ExportTraceServiceRequest`.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// The body is not a valid protobuf `ExportTraceServiceRequest`.
    #[error("invalid OTLP protobuf body: {0}; send a serialized ExportTraceServiceRequest (Content-Type: application/x-protobuf)")]
    Protobuf(String),
    /// The body is not valid OTLP/JSON; `path` is the JSON path of the offending value.
    #[error("invalid OTLP/JSON at {path} (line {line}, column {column}): {message}; send an ExportTraceServiceRequest in OTLP/JSON (hex ids, lowerCamelCase keys)")]
    Json {
        /// JSON path of the value that failed, e.g. `resourceSpans[0].scopeSpans[0].spans[2].traceId`.
        path: String,
        /// 1-based line in the body (of the line itself for JSON lines).
        line: usize,
        /// 1-based column in that line.
        column: usize,
        /// What was wrong with it.
        message: String,
    },
    /// The body is not a valid protobuf `ExportLogsServiceRequest`.
    #[error("invalid OTLP protobuf logs body: {0}; send a serialized ExportLogsServiceRequest (Content-Type: application/x-protobuf)")]
    LogsProtobuf(String),
    /// The body is not valid OTLP/JSON logs; fields as in [`DecodeError::Json`].
    #[error("invalid OTLP/JSON at {path} (line {line}, column {column}): {message}; send an ExportLogsServiceRequest in OTLP/JSON (hex ids, lowerCamelCase keys)")]
    LogsJson {
        /// JSON path of the value that failed, e.g. `resourceLogs[0].scopeLogs[0].logRecords[2].spanId`.
        path: String,
        /// 1-based line in the body.
        line: usize,
        /// 1-based column in that line.
        column: usize,
        /// What was wrong with it.
        message: String,
    },
    /// One line of a JSON-lines body failed; `line` is 1-based.
    #[error("line {line} of the JSON lines body: {source}")]
    JsonLine {
        /// 1-based line number of the failing request.
        line: usize,
        /// The error in that line.
        #[source]
        source: Box<DecodeError>,
    },
}

/// Why a `RecordBatch` could not be read as (or built into) canonical span rows.
#[derive(Debug, Error)]
pub enum SchemaError {
    /// A column the canonical schema declares is absent from the batch.
    #[error("column `{0}` is missing from the batch; build batches with schemas::span_schema()")]
    MissingColumn(String),
    /// A column has another Arrow type than the canonical schema declares.
    #[error("column `{column}` has type {found}, expected {expected}; build batches with schemas::span_schema()")]
    ColumnType {
        /// Column name.
        column: &'static str,
        /// Type the canonical schema declares.
        expected: String,
        /// Type found in the batch.
        found: String,
    },
    /// A value in a row cannot be turned back into OTLP.
    #[error("row {row}, column `{column}`: {message}; the batch was not written by tripline's converter")]
    InvalidValue {
        /// 0-based row index.
        row: usize,
        /// Column name.
        column: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Arrow refused to assemble the batch.
    #[error("arrow error: {0}; this is a bug in the converter, please report it with the input")]
    Arrow(#[from] arrow::error::ArrowError),
}
