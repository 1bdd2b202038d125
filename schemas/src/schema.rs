//! The canonical span row as Arrow: the schema every Parquet file is written with, built from the
//! column table ([`crate::columns`]).
//!
//! Why a single declaration: the collector writes it, the analyzer reads it with this exact schema
//! (never inferring it from whichever file comes first), and DuckDB / Spark / DataFusion / pyarrow
//! users query it by these names. Columns are only ever *added* (nullable) in a new
//! [`SCHEMA_VERSION`]; a rename is a breaking change and shows up in the layout snapshot test.
//!
//! Encoding choices (see docs/adr/0001-parquet-layout.md):
//! - ids are `Binary` (16 / 8 bytes, length checked at ingest): fixed-size binary reads everywhere
//!   but Spark never prunes on it, and a UUID-annotated one makes Spark reject the table;
//! - `start_time` / `end_time` are `Timestamp(Microsecond, UTC)` because Spark rejects nanosecond
//!   timestamps; the exact values live in `Int64` `*_unix_nano` columns (not `UInt64`, which Spark
//!   turns into a decimal); `duration_ns` is `Int64` (DataFusion will not compare `Duration` with
//!   integers);
//! - attributes are a `Map<Utf8, Struct>` with unique keys and a typed value struct, so nothing the
//!   sender sent is lost and DuckDB (which refuses repeated map keys) reads it;
//! - every column is nullable except the span identity, so a file of one schema version always
//!   carries every column and engines that do not merge schemas read a whole store without options.

use std::sync::{Arc, OnceLock};

use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use crate::columns::{ColumnType, COLUMNS};

/// Version of the canonical row, stamped into every Parquet file's key/value metadata under
/// [`SCHEMA_VERSION_KEY`]. Bump when columns are added.
///
/// - `1`: the first row.
/// - `2`: `resource_attributes_json` and `scope_attributes_json` hold the resource's and the
///   scope's attributes as JSON text, written once per request and dictionary-encoded; the maps
///   `resource_attributes` and `scope_attributes` stay in the schema (schema-1 files fill them)
///   and are written null. Readers take the JSON column where it is set, the map otherwise.
pub const SCHEMA_VERSION: &str = "2";
/// Parquet / Arrow metadata key holding [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "tripline.schema_version";

/// Column names (declared with the rest of each column's facts in [`crate::columns`]).
pub use crate::columns::col;

/// Names of the fields of the typed attribute value struct ([`any_value_type`]).
pub mod value {
    /// `string` | `bool` | `int` | `double` | `bytes` | `array` | `kvlist` | `empty`.
    pub const TYPE: &str = "type";
    /// The string value; for `array` / `kvlist` the value in OTLP/JSON `AnyValue` form.
    pub const STR: &str = "str";
    pub const INT: &str = "int";
    pub const DOUBLE: &str = "double";
    pub const BOOL: &str = "bool";
    pub const BYTES: &str = "bytes";
}

/// The typed value of one attribute: exactly one of the value fields is set, named by `type`.
/// Arrays and key/value lists keep their full OTLP/JSON `AnyValue` form in `str`, so they survive
/// a round trip exactly while the common scalar cases stay directly queryable
/// (`attributes['gen_ai.tool.name'].str`).
pub fn any_value_type() -> DataType {
    DataType::Struct(any_value_fields())
}

fn any_value_fields() -> Fields {
    Fields::from(vec![
        Field::new(value::TYPE, DataType::Utf8, false),
        Field::new(value::STR, DataType::Utf8, true),
        Field::new(value::INT, DataType::Int64, true),
        Field::new(value::DOUBLE, DataType::Float64, true),
        Field::new(value::BOOL, DataType::Boolean, true),
        Field::new(value::BYTES, DataType::Binary, true),
    ])
}

/// `Map<Utf8, AnyValue>` with the child names the Parquet spec uses (`key_value`, `key`, `value`),
/// keys unique per row (enforced by the converter).
pub fn attribute_map_type() -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", any_value_type(), true),
            ])),
            false,
        )),
        false,
    )
}

/// One span event: `List<Struct<time_unix_nano, name, attributes, dropped_attributes_count>>`.
pub fn event_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("time_unix_nano", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("attributes", attribute_map_type(), true),
        Field::new("dropped_attributes_count", DataType::Int64, true),
    ]))
}

/// One span link: the linked context, its trace state and flags, and attributes.
pub fn link_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("trace_id", DataType::Binary, true),
        Field::new("span_id", DataType::Binary, true),
        Field::new("trace_state", DataType::Utf8, true),
        Field::new("flags", DataType::Int64, true),
        Field::new("attributes", attribute_map_type(), true),
        Field::new("dropped_attributes_count", DataType::Int64, true),
    ]))
}

/// One tool definition the model (or an MCP `tools/list` result) showed, with what rules need
/// (fields declared by [`crate::tool_def`]).
pub fn tool_definition_type() -> DataType {
    DataType::Struct(crate::tool_def::arrow_fields())
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("element", item, true)))
}

fn ts_us() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The canonical span schema (cached; cheap to clone).
pub fn span_schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA.get_or_init(|| Arc::new(build_schema())).clone()
}

/// The exact Arrow type of a column shape.
pub fn data_type(ty: ColumnType) -> DataType {
    match ty {
        ColumnType::Binary => DataType::Binary,
        ColumnType::Utf8 => DataType::Utf8,
        ColumnType::Int64 => DataType::Int64,
        ColumnType::Boolean => DataType::Boolean,
        ColumnType::Timestamp => ts_us(),
        ColumnType::Utf8List => list_of(DataType::Utf8),
        ColumnType::AttributeMap => attribute_map_type(),
        ColumnType::AttributesJson => DataType::Utf8,
        ColumnType::Events => list_of(event_type()),
        ColumnType::Links => list_of(link_type()),
        ColumnType::ToolDefinitions => list_of(tool_definition_type()),
    }
}

fn build_schema() -> Schema {
    let fields: Vec<Field> = COLUMNS
        .iter()
        .map(|c| Field::new(c.name, data_type(c.ty), c.nullable))
        .collect();
    let metadata = [(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]
        .into_iter()
        .collect();
    Schema::new_with_metadata(fields, metadata)
}
