//! Parquet writer settings every tripline file is written with.
//!
//! Chosen so that Spark, DuckDB, pyarrow and DataFusion all read the files and prune well
//! (docs/adr/0001-parquet-layout.md):
//! - zstd level 3: a good ratio for JSON-heavy content columns at low CPU cost;
//! - `set_coerce_types(true)`: list and map children carry the names the Parquet spec uses
//!   (`element`, `key_value`), which Spark and pyarrow expect;
//! - row groups of at most 65 536 rows and 128 MiB (the collector also cuts files by bytes);
//! - bloom filters on `trace_id` and `span_id`: `tripline trace ID` and the stitching of broken
//!   traces look spans up by id, and every engine uses bloom filters for binary equality;
//! - dictionary encoding on low-cardinality strings (service, scope, kind, status, method, tool,
//!   model...), plain encoding for ids and payloads where a dictionary only costs memory;
//! - page-level statistics, so time-range scans skip pages;
//! - `tripline.schema_version` in the file's key/value metadata.

use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use crate::schema::{col, SCHEMA_VERSION, SCHEMA_VERSION_KEY};

/// Maximum rows per row group.
pub const MAX_ROW_GROUP_ROWS: usize = 64 * 1024;
/// Maximum (estimated, uncompressed) bytes per row group: content-heavy spans are large, so a row
/// group is also cut by size to keep readers' memory bounded.
pub const MAX_ROW_GROUP_BYTES: usize = 128 * 1024 * 1024;

/// Columns with few distinct values, dictionary-encoded.
const DICTIONARY_COLUMNS: &[&str] = &[
    col::NAME,
    col::KIND,
    col::STATUS_CODE,
    col::SERVICE_NAME,
    col::SERVICE_VERSION,
    col::SERVICE_INSTANCE_ID,
    col::SCOPE_NAME,
    col::SCOPE_VERSION,
    col::GEN_AI_OPERATION_NAME,
    col::GEN_AI_PROVIDER_NAME,
    col::GEN_AI_REQUEST_MODEL,
    col::GEN_AI_RESPONSE_MODEL,
    col::GEN_AI_AGENT_NAME,
    col::GEN_AI_TOOL_NAME,
    col::GEN_AI_TOOL_TYPE,
    col::MCP_METHOD_NAME,
    col::MCP_PROTOCOL_VERSION,
    col::MCP_TRANSPORT,
    col::NETWORK_TRANSPORT,
    col::ERROR_TYPE,
    col::RESULT_TYPE,
    col::INGEST_SOURCE,
];

/// Columns never dictionary-encoded: unique ids and large payloads.
const PLAIN_COLUMNS: &[&str] = &[
    col::TRACE_ID,
    col::SPAN_ID,
    col::PARENT_SPAN_ID,
    col::GEN_AI_TOOL_CALL_ARGUMENTS,
    col::GEN_AI_TOOL_CALL_RESULT,
    col::GEN_AI_TOOL_DEFINITIONS,
    col::GEN_AI_INPUT_MESSAGES,
    col::GEN_AI_OUTPUT_MESSAGES,
    col::GEN_AI_SYSTEM_INSTRUCTIONS,
];

/// The writer properties for canonical span files.
pub fn writer_properties() -> WriterProperties {
    let zstd =
        ZstdLevel::try_new(3).map_or(Compression::ZSTD(ZstdLevel::default()), Compression::ZSTD);
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(zstd)
        .set_coerce_types(true)
        .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_dictionary_enabled(false)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            SCHEMA_VERSION_KEY.to_string(),
            SCHEMA_VERSION.to_string(),
        )]));
    for name in DICTIONARY_COLUMNS {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*name), true);
    }
    for name in PLAIN_COLUMNS {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*name), false);
    }
    for name in [col::TRACE_ID, col::SPAN_ID] {
        b = b
            .set_column_bloom_filter_enabled(ColumnPath::from(name), true)
            .set_column_bloom_filter_fpp(ColumnPath::from(name), 0.01);
    }
    b.build()
}
