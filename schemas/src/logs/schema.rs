//! The canonical log record row as Arrow: the schema every `logs/` Parquet file is written with.
//!
//! Why a second, separate table rather than more span columns: a log record is not a span (no
//! duration, no parent, its own time), many records can belong to one span, and most log records
//! belong to no GenAI span at all. The analyzer joins them to their span by `(trace_id, span_id)`.
//!
//! Encoding choices follow the span schema (docs/adr/0001-parquet-layout.md): ids are `Binary`,
//! times are `Timestamp(Microsecond, UTC)` next to exact `Int64` nanoseconds, every column is
//! nullable except the partition-choosing time. Unlike spans, `body`, `attributes` and
//! `resource_attributes` are plain JSON text (an `AnyValue` written as the JSON value it stands
//! for: strings, numbers, booleans, arrays, objects; bytes as base64): GenAI event bodies are
//! nested structures, and JSON text is what DuckDB's `->>` / `json_extract`, pyarrow and the
//! analyzer all read without help. Columns are only ever added (nullable) in a new
//! [`LOG_SCHEMA_VERSION`].

use std::sync::{Arc, OnceLock};

use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::parquet_props::base_writer_properties;
use crate::schema::SCHEMA_VERSION_KEY;

/// Version of the log record row, stamped into every `logs/` file under
/// [`crate::SCHEMA_VERSION_KEY`]. Bump when columns are added.
pub const LOG_SCHEMA_VERSION: &str = "logs-1";

/// Arrow schema metadata key naming the table a batch belongs to. Set on log batches only (value
/// [`LOGS_TABLE`]), so a WAL record of log rows is told apart from one of span rows by its schema.
pub const TABLE_KEY: &str = "tripline.table";
/// The value of [`TABLE_KEY`] on log record batches (and the SQL table name in `tripline query`).
pub const LOGS_TABLE: &str = "logs";

/// Column names of the log record row.
pub mod col {
    /// The trace the record was emitted in (16 bytes), null outside a trace.
    pub const TRACE_ID: &str = "trace_id";
    /// The span the record was emitted in (8 bytes), null outside a span.
    pub const SPAN_ID: &str = "span_id";
    /// `time_unix_nano` as a timestamp (the observed time when the sender set no time).
    pub const TIME: &str = "time";
    /// When the event happened, exact (0 / null when the sender did not say).
    pub const TIME_UNIX_NANO: &str = "time_unix_nano";
    /// When the SDK observed the record.
    pub const OBSERVED_TIME_UNIX_NANO: &str = "observed_time_unix_nano";
    /// The event name: `LogRecord.event_name`, else the `event.name` attribute (older SDKs).
    pub const EVENT_NAME: &str = "event_name";
    /// OTLP severity number (1-24), null when unspecified.
    pub const SEVERITY_NUMBER: &str = "severity_number";
    /// Severity text as sent.
    pub const SEVERITY_TEXT: &str = "severity_text";
    /// The body as JSON text (a string body is a JSON string).
    pub const BODY: &str = "body";
    /// The attributes as one JSON object (keys unique, the last value wins).
    pub const ATTRIBUTES: &str = "attributes";
    /// `LogRecord.flags` (W3C trace flags).
    pub const FLAGS: &str = "flags";
    /// `LogRecord.dropped_attributes_count`.
    pub const DROPPED_ATTRIBUTES_COUNT: &str = "dropped_attributes_count";
    /// Resource `service.name`.
    pub const SERVICE_NAME: &str = "service_name";
    /// Every resource attribute as one JSON object.
    pub const RESOURCE_ATTRIBUTES: &str = "resource_attributes";
    /// Instrumentation scope name.
    pub const SCOPE_NAME: &str = "scope_name";
    /// Instrumentation scope version.
    pub const SCOPE_VERSION: &str = "scope_version";
    /// True when the collector replaced the body or content attributes by `"[redacted]"`.
    pub const CONTENT_REDACTED: &str = "content_redacted";
    /// When the collector received the record.
    pub const RECEIVED_AT: &str = "received_at";
    /// `otlp-http`, `otlp-grpc`, `file:<path>`.
    pub const INGEST_SOURCE: &str = "ingest_source";
}

/// Low-cardinality columns, dictionary-encoded in Parquet.
const DICTIONARY: &[&str] = &[
    col::EVENT_NAME,
    col::SEVERITY_TEXT,
    col::SERVICE_NAME,
    col::SCOPE_NAME,
    col::SCOPE_VERSION,
    col::INGEST_SOURCE,
];

fn ts_us() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The canonical log record schema (cached; cheap to clone).
pub fn log_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            use DataType::{Binary, Boolean, Int64, Utf8};
            let fields = vec![
                Field::new(col::TRACE_ID, Binary, true),
                Field::new(col::SPAN_ID, Binary, true),
                Field::new(col::TIME, ts_us(), true),
                Field::new(col::TIME_UNIX_NANO, Int64, true),
                Field::new(col::OBSERVED_TIME_UNIX_NANO, Int64, true),
                Field::new(col::EVENT_NAME, Utf8, true),
                Field::new(col::SEVERITY_NUMBER, Int64, true),
                Field::new(col::SEVERITY_TEXT, Utf8, true),
                Field::new(col::BODY, Utf8, true),
                Field::new(col::ATTRIBUTES, Utf8, true),
                Field::new(col::FLAGS, Int64, true),
                Field::new(col::DROPPED_ATTRIBUTES_COUNT, Int64, true),
                Field::new(col::SERVICE_NAME, Utf8, true),
                Field::new(col::RESOURCE_ATTRIBUTES, Utf8, true),
                Field::new(col::SCOPE_NAME, Utf8, true),
                Field::new(col::SCOPE_VERSION, Utf8, true),
                Field::new(col::CONTENT_REDACTED, Boolean, true),
                Field::new(col::RECEIVED_AT, ts_us(), true),
                Field::new(col::INGEST_SOURCE, Utf8, true),
            ];
            let metadata = [
                (
                    SCHEMA_VERSION_KEY.to_string(),
                    LOG_SCHEMA_VERSION.to_string(),
                ),
                (TABLE_KEY.to_string(), LOGS_TABLE.to_string()),
            ]
            .into_iter()
            .collect();
            Arc::new(Schema::new_with_metadata(fields, metadata))
        })
        .clone()
}

/// Whether `schema` is the log record schema (by its [`TABLE_KEY`] metadata).
pub fn is_log_schema(schema: &Schema) -> bool {
    schema.metadata().get(TABLE_KEY).map(String::as_str) == Some(LOGS_TABLE)
}

/// The Parquet writer settings of `logs/` files: those of span files (zstd 1, row groups bounded
/// by rows and bytes, page statistics), with the log row's dictionary columns, bloom filters on
/// the two ids (the analyzer's join looks records up by span) and the log schema version.
pub fn log_writer_properties() -> WriterProperties {
    let mut b = base_writer_properties(vec![
        KeyValue::new(
            SCHEMA_VERSION_KEY.to_string(),
            LOG_SCHEMA_VERSION.to_string(),
        ),
        KeyValue::new(TABLE_KEY.to_string(), LOGS_TABLE.to_string()),
    ]);
    for name in DICTIONARY {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*name), true);
    }
    for name in [col::TRACE_ID, col::SPAN_ID] {
        b = b
            .set_column_bloom_filter_enabled(ColumnPath::from(name), true)
            .set_column_bloom_filter_fpp(ColumnPath::from(name), 0.01);
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_schema_is_marked_and_the_span_schema_is_not() {
        assert!(is_log_schema(&log_schema()));
        assert!(!is_log_schema(&crate::span_schema()));
        for name in DICTIONARY {
            assert!(log_schema().field_with_name(name).is_ok(), "{name}");
        }
    }
}
