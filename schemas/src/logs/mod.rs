//! OTLP logs: the log record table stored next to spans (`<data>/logs/`).
//!
//! Why: several GenAI instrumentations send prompts, completions, tool definitions and tool
//! payloads as log records ("events": `gen_ai.client.inference.operation.details`, and the older
//! `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`)
//! instead of span attributes. The collector accepts them on `/v1/logs`, the gRPC LogsService and
//! `tripline ingest`, through the same WAL and Parquet path as spans; the analyzer joins them to
//! their span by `(trace_id, span_id)` and derives the same content facts from them
//! ([`events`]).
//!
//! - [`schema`]: the log record row as Arrow, its Parquet writer settings;
//! - [`convert`]: `ExportLogsServiceRequest` into a log record `RecordBatch`;
//! - [`events`]: GenAI events into the span content attributes they stand for.

pub mod convert;
pub mod events;
pub mod schema;

pub use convert::{convert_logs_request, convert_logs_request_bounded, log_record_count};
pub use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
pub use schema::{is_log_schema, log_schema, log_writer_properties, LOGS_TABLE, TABLE_KEY};
