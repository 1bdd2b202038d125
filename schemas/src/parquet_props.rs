//! Parquet writer settings every tripline file is written with.
//!
//! Chosen so that Spark, DuckDB, pyarrow and DataFusion all read the files and prune well
//! (docs/adr/0001-parquet-layout.md):
//! - zstd level 1: on the collector's load it costs 24% fewer zstd instructions than level 3 for
//!   3% more bytes (BENCHMARKS.md, session 7), a good ratio for JSON-heavy content columns;
//! - data page v2 with PLAIN values where no dictionary is used: a v2 page keeps its repetition
//!   and definition levels uncompressed and apart from the values, so the writer neither copies
//!   levels and values into one buffer nor compresses the levels, and readers decode the levels
//!   without decompressing them (BENCHMARKS.md, sessions 10 and 27, for the instructions saved
//!   and the bytes it costs). PLAIN is set explicitly because parquet-rs otherwise picks DELTA
//!   encodings for v2 files, dearer to write and read;
//! - `set_coerce_types(true)`: list and map children carry the names the Parquet spec uses
//!   (`element`, `key_value`), which Spark and pyarrow expect;
//! - row groups of at most 65 536 rows and 32 MiB ([`MAX_ROW_GROUP_ROWS`],
//!   [`MAX_ROW_GROUP_BYTES`]: the one statement of these bounds; the collector's settings start
//!   from them and cannot exceed them);
//! - bloom filters on `trace_id` and `span_id`: `tripline trace ID` and the stitching of broken
//!   traces look spans up by id, and every engine uses bloom filters for binary equality;
//! - dictionary encoding on low-cardinality strings (span name, kind, operation, method, tool,
//!   model...), plain encoding for ids and payloads where a dictionary only costs memory,
//!   and for the values that repeat on every row of a request (service, scope, versions) and the
//!   status, where zstd finds the repeats for less than the dictionary's per-row hashing
//!   (sessions 38, 39 and 42); which column is which, and which has a bloom filter, is said in
//!   the column table ([`crate::columns`]);
//! - page-level statistics on the columns readers filter on (times, counts, flags and the
//!   scalar strings: service, tool, model, method...), so time-range scans skip pages and row
//!   groups; **no** statistics on the payload columns ([`statistics`]: content payloads, the
//!   attribute maps, events, links, tool definitions). Nothing filters those by range, their
//!   min/max are truncated to 64 bytes of JSON that prune nothing, and computing them (a full
//!   byte comparison of every value, plus level histograms for the nested ones) was the largest
//!   single cost of the byte-array encoder (BENCHMARKS.md, session 8). None on the random ids
//!   either: their min/max prune nothing and their bloom filters serve lookups (session 32);
//!   nor on the rest of the `unranged` text (random text ids since session 41; per-request
//!   versions and URLs, `ingest_source`, `dialects`, free text since session 42), which nobody
//!   selects by range;
//! - the times (`start_time`, `end_time`, their `_unix_nano` twins, `duration_ns`,
//!   `received_at`: the columns marked `delta` in [`crate::columns`]) DELTA_BINARY_PACKED and
//!   not compressed. Neighbouring times differ little, so their deltas pack into a few bits; zstd
//!   on the PLAIN 8-byte values had been the dearest compression of the file, 8.8% of the
//!   collector's Parquet write for six columns. Delta-packed and uncompressed they cost 6.7% less
//!   of the whole write than PLAIN + zstd, for 6.7% more bytes on the benchmark's spans
//!   (BENCHMARKS.md, session 39). DELTA_BINARY_PACKED is a Parquet 1 encoding every engine reads;
//! - no zstd on the leaves it finds nothing in ([`leaf_compression`]: the `raw` columns of the
//!   column table, a tool definition's flags, the retired maps): parquet-rs creates a compressor
//!   and a decompressor for every zstd column chunk it writes or reads, and on a virtual machine
//!   creating one costs tens of microseconds (BENCHMARKS.md, session 41);
//! - `tripline.schema_version` in the file's key/value metadata.

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{
    EnabledStatistics, WriterProperties, WriterPropertiesBuilder, WriterVersion,
};
use parquet::schema::types::ColumnPath;

use crate::columns::{ColumnDef, ColumnType, Fill, COLUMNS};
use crate::schema::{SCHEMA_VERSION, SCHEMA_VERSION_KEY};

/// The most rows a row group holds, and the default of `--row-group-rows`: the writer cuts row
/// groups here whatever the collector asks, so a larger `--row-group-rows` is refused
/// ([`check_row_group_rows`]) rather than silently capped. Also the bloom filters' expected
/// number of distinct values.
pub const MAX_ROW_GROUP_ROWS: usize = 64 * 1024;
/// Default of the collector's row-group row bound.
pub const DEFAULT_ROW_GROUP_ROWS: usize = MAX_ROW_GROUP_ROWS;
const _: () = assert!(DEFAULT_ROW_GROUP_ROWS <= MAX_ROW_GROUP_ROWS);
/// The most (estimated, uncompressed) bytes a row group holds: content-heavy spans are large, so
/// a row group is also cut by size to keep readers' memory bounded. The collector flushes at this
/// size after a write and the writer cuts a single large write here too.
pub const MAX_ROW_GROUP_BYTES: usize = 32 * 1024 * 1024;

/// A row-group bound the writer cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowGroupBoundError {
    /// More rows than [`MAX_ROW_GROUP_ROWS`].
    #[error("a row group of {requested} rows is over the {max} rows the Parquet writer puts in one row group; use at most {max}")]
    TooManyRows {
        /// The bound asked for.
        requested: usize,
        /// [`MAX_ROW_GROUP_ROWS`].
        max: usize,
    },
    /// Not a number.
    #[error("`{0}` is not a row count; use a whole number up to {max}", max = MAX_ROW_GROUP_ROWS)]
    NotANumber(String),
}

/// `rows` if the writer honours it as a row-group bound (at most [`MAX_ROW_GROUP_ROWS`]).
pub fn check_row_group_rows(rows: usize) -> Result<usize, RowGroupBoundError> {
    if rows > MAX_ROW_GROUP_ROWS {
        return Err(RowGroupBoundError::TooManyRows {
            requested: rows,
            max: MAX_ROW_GROUP_ROWS,
        });
    }
    Ok(rows)
}

/// Parses a `--row-group-rows` value and [checks](check_row_group_rows) it (a clap value parser).
pub fn parse_row_group_rows(text: &str) -> Result<usize, RowGroupBoundError> {
    let rows = text
        .trim()
        .parse::<usize>()
        .map_err(|_| RowGroupBoundError::NotANumber(text.to_string()))?;
    check_row_group_rows(rows)
}

/// The settings every file of the store is written with (span and log files alike): zstd 1,
/// row groups bounded by rows and bytes, page statistics, dictionaries only where a column asks,
/// and `metadata` as the file's key-value metadata.
pub fn base_writer_properties(metadata: Vec<KeyValue>) -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_encoding(Encoding::PLAIN)
        .set_compression(zstd1())
        .set_coerce_types(true)
        .set_max_row_group_row_count(Some(MAX_ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(MAX_ROW_GROUP_BYTES))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_dictionary_enabled(false)
        .set_key_value_metadata(Some(metadata))
}

/// The statistics a span column is written with: none for payloads nobody prunes by range
/// (content payloads, attribute maps, events, links, tool definitions) and for the random ids
/// (`trace_id`, `span_id`, `parent_span_id`: a page of random ids spans nearly the whole range,
/// so its min/max prune nothing; lookups by id go through the bloom filters, and the analyzer's
/// trace filter through the values) and for the `unranged` text: the random text ids
/// (conversation, tool call, response, session and JSON-RPC ids, digests, `traceparent`), the
/// versions, schema URLs, `ingest_source` and `dialects` repeated on every row of a request, and
/// the free-text status message and tool description (nobody selects them by range, and rows of
/// many requests share a page); page-level for the rest.
/// Each min/max costs two byte comparisons per value, a whole-value comparison when the value
/// equals the page's min or max, as a per-request value nearly always does: on the ids, 0.8% of
/// the collector's instructions per span (BENCHMARKS.md, session 32).
pub fn statistics(c: &ColumnDef) -> EnabledStatistics {
    let payload = matches!(c.fill, Fill::Content { .. })
        || matches!(
            c.ty,
            ColumnType::AttributeMap
                | ColumnType::AttributesJson
                | ColumnType::Events
                | ColumnType::Links
                | ColumnType::ToolDefinitions
        );
    // `Binary` columns are the ids (`columns.rs`); `unranged` marks the text ones.
    let binary_ids = c.ty == ColumnType::Binary;
    if payload || binary_ids || c.unranged {
        EnabledStatistics::None
    } else {
        EnabledStatistics::Page
    }
}

/// The codec of one Parquet leaf of span column `c`: zstd level 1 unless zstd finds nothing in
/// it, that is
/// - the times (`delta`: their deltas are bit-packed already);
/// - the `raw` columns: dictionary indices of a few values and bit-packed flags;
/// - the flags of a tool definition (boolean leaves of `tool_definitions`);
/// - the columns schema 2 leaves null (`Fill::Retired`).
///
/// Each zstd column chunk costs its writer and every reader a compression context, created for
/// the chunk; creating one asks the CPU for its features (`cpuid`), which traps to the hypervisor
/// on a virtual machine, about 10 µs each on the benchmark machine. On those leaves zstd saved
/// under 0.1 byte per span (BENCHMARKS.md, session 41).
pub fn leaf_compression(
    c: &ColumnDef,
    leaf: &parquet::schema::types::ColumnDescriptor,
) -> Compression {
    let flag_of_a_tool_definition = c.ty == ColumnType::ToolDefinitions
        && leaf.physical_type() == parquet::basic::Type::BOOLEAN;
    if c.delta || c.raw || flag_of_a_tool_definition || matches!(c.fill, Fill::Retired { .. }) {
        Compression::UNCOMPRESSED
    } else {
        zstd1()
    }
}

/// zstd level 1, the codec of every leaf [`leaf_compression`] does not exempt.
fn zstd1() -> Compression {
    ZstdLevel::try_new(1).map_or(Compression::ZSTD(ZstdLevel::default()), Compression::ZSTD)
}

/// What the writer is told about one Parquet leaf of a span column, beyond the file defaults.
struct LeafSettings {
    path: ColumnPath,
    statistics: EnabledStatistics,
    compression: Compression,
}

/// The settings of every Parquet leaf of the span schema: writer properties are per leaf, and a
/// nested column (a map, a list of structs) has several.
fn leaf_settings() -> &'static [LeafSettings] {
    static LEAVES: std::sync::OnceLock<Vec<LeafSettings>> = std::sync::OnceLock::new();
    LEAVES.get_or_init(|| {
        let parquet = parquet::arrow::ArrowSchemaConverter::new()
            .with_coerce_types(true)
            .convert(&crate::schema::span_schema())
            .expect("the span schema converts to Parquet");
        parquet
            .columns()
            .iter()
            .filter_map(|leaf| {
                let root = leaf.path().parts().first()?;
                let c = COLUMNS.iter().find(|c| root.as_str() == c.name)?;
                Some(LeafSettings {
                    path: leaf.path().clone(),
                    statistics: statistics(c),
                    compression: leaf_compression(c, leaf),
                })
            })
            .collect()
    })
}

/// The writer properties for canonical span files.
pub fn writer_properties() -> WriterProperties {
    let mut b = base_writer_properties(vec![KeyValue::new(
        SCHEMA_VERSION_KEY.to_string(),
        SCHEMA_VERSION.to_string(),
    )]);
    for leaf in leaf_settings() {
        if leaf.statistics != EnabledStatistics::Page {
            b = b.set_column_statistics_enabled(leaf.path.clone(), leaf.statistics);
        }
        if leaf.compression != zstd1() {
            b = b.set_column_compression(leaf.path.clone(), leaf.compression);
        }
    }
    for c in COLUMNS {
        let path = || ColumnPath::from(c.name);
        b = b.set_column_dictionary_enabled(path(), c.dictionary);
        if c.delta {
            b = b.set_column_encoding(path(), Encoding::DELTA_BINARY_PACKED);
        }
        if c.bloom_filter {
            b = b
                .set_column_bloom_filter_enabled(path(), true)
                .set_column_bloom_filter_fpp(path(), 0.01);
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_group_rows_beyond_the_writer_cap_are_refused() {
        assert_eq!(check_row_group_rows(4), Ok(4));
        assert_eq!(
            parse_row_group_rows("65536"),
            Ok(MAX_ROW_GROUP_ROWS),
            "the cap itself is honoured"
        );
        let e = parse_row_group_rows("65537").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a row group of 65537 rows is over the 65536 rows the Parquet writer puts in one row group; use at most 65536"
        );
        assert!(parse_row_group_rows("many")
            .unwrap_err()
            .to_string()
            .contains("not a row count"));
    }

    #[test]
    fn the_writer_caps_are_the_declared_bounds() {
        let p = writer_properties();
        assert_eq!(p.max_row_group_row_count(), Some(MAX_ROW_GROUP_ROWS));
        assert_eq!(p.max_row_group_bytes(), Some(MAX_ROW_GROUP_BYTES));
    }

    #[test]
    fn statistics_are_kept_where_readers_prune_and_dropped_on_payloads() {
        let p = writer_properties();
        for name in [
            "start_time",
            "end_time",
            "start_time_unix_nano",
            "received_at",
            "service_name",
            "gen_ai_tool_name",
            "mcp_method_name",
            "result_is_error",
        ] {
            let path = ColumnPath::from(name);
            assert_eq!(
                p.statistics_enabled(&path),
                EnabledStatistics::Page,
                "{name}"
            );
        }
        for name in [
            "trace_id",
            "span_id",
            "parent_span_id",
            "gen_ai_tool_call_arguments",
            "gen_ai_tool_call_result",
            "gen_ai_input_messages",
            "gen_ai_system_instructions",
            "gen_ai_conversation_id",
            "gen_ai_tool_call_id",
            "mcp_meta_traceparent",
            "service_version",
            "scope_version",
            "scope_schema_url",
            "ingest_source",
            "status_message",
            "gen_ai_tool_description",
        ] {
            let path = ColumnPath::from(name);
            assert_eq!(
                p.statistics_enabled(&path),
                EnabledStatistics::None,
                "{name}"
            );
        }
        // Nested payloads: every leaf of the attribute maps, events and links.
        let leaves = leaf_settings();
        for root in ["attributes", "resource_attributes", "events", "links"] {
            let of_root: Vec<_> = leaves
                .iter()
                .filter(|leaf| leaf.path.parts()[0] == root)
                .collect();
            assert!(of_root.len() >= 2, "{root}: {} leaves", of_root.len());
            for leaf in of_root {
                assert_eq!(
                    p.statistics_enabled(&leaf.path),
                    EnabledStatistics::None,
                    "{}",
                    leaf.path
                );
            }
        }
        let map_key = ColumnPath::new(vec![
            "attributes".to_string(),
            "key_value".to_string(),
            "key".to_string(),
        ]);
        assert_eq!(p.statistics_enabled(&map_key), EnabledStatistics::None);
        let dialect = ColumnPath::new(vec![
            "dialects".to_string(),
            "list".to_string(),
            "element".to_string(),
        ]);
        assert_eq!(p.statistics_enabled(&dialect), EnabledStatistics::None);
    }

    #[test]
    fn encodings_follow_the_column_table() {
        let p = writer_properties();
        for c in COLUMNS {
            let path = ColumnPath::from(c.name);
            assert_eq!(p.dictionary_enabled(&path), c.dictionary, "{}", c.name);
            assert!(
                !c.delta || matches!(c.ty, ColumnType::Int64 | ColumnType::Timestamp),
                "{}: DELTA_BINARY_PACKED is for integer columns only",
                c.name
            );
            let encoding = if c.delta {
                Encoding::DELTA_BINARY_PACKED
            } else {
                Encoding::PLAIN
            };
            assert_eq!(p.encoding(&path), Some(encoding), "{}", c.name);
            assert!(
                !c.raw || c.dictionary || c.ty == ColumnType::Boolean,
                "{}: only dictionary indices and flags are left uncompressed",
                c.name
            );
            assert_eq!(
                p.bloom_filter_properties(&path).is_some(),
                c.bloom_filter,
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn only_leaves_zstd_finds_nothing_in_are_left_uncompressed() {
        let p = writer_properties();
        let zstd = Compression::ZSTD(ZstdLevel::try_new(1).expect("a zstd level"));
        let codec = |path: &[&str]| {
            p.compression(&ColumnPath::new(
                path.iter().map(|s| s.to_string()).collect(),
            ))
        };
        for raw in [
            &["start_time_unix_nano"][..],
            &["gen_ai_request_model"],
            &["mcp_method_name"],
            &["result_is_error"],
            &["tool_definitions", "list", "element", "read_only_hint"],
            &["resource_attributes", "key_value", "value", "str"],
        ] {
            assert_eq!(codec(raw), Compression::UNCOMPRESSED, "{raw:?}");
        }
        for packed in [
            &["trace_id"][..],
            &["name"],
            &["kind"],
            &["status_code"],
            &["service_name"],
            &["gen_ai_tool_name"],
            &["gen_ai_tool_call_result"],
            &["tool_definitions", "list", "element", "description"],
            &["attributes", "key_value", "value", "str"],
            &["parent_is_remote"],
        ] {
            assert_eq!(codec(packed), zstd, "{packed:?}");
        }
        // Every leaf the writer is told about has the codec `leaf_compression` gives it.
        for leaf in leaf_settings() {
            assert_eq!(p.compression(&leaf.path), leaf.compression, "{}", leaf.path);
        }
    }
}
